// deploy/kubernetes/rbac.yaml grants exactly what the direct adapter calls: every request in
// adapters/kube/routes.ts is allowed, and no rule allows anything no route needs.
import { readFileSync } from "node:fs";
import { setupServer } from "msw/node";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { KubeClient } from "../../../adapters/kube/client.js";
import { KubeLease } from "../../../adapters/kube/lease.js";
import { KubeReader } from "../../../adapters/kube/reader.js";
import { LeaseRoutes, RecreateRoutes, Routes, rbacResource } from "../../../adapters/kube/routes.js";
import { kubeWriters } from "../../../adapters/kube/writer.js";
import { SimCluster } from "../../../adapters/sim/cluster.js";
import { DEFAULT_LEASE_NAMESPACE, LEASE_NAME } from "../../../functions/lease/config.js";
import {
  createSimServer,
  type PolicyRule,
  statefulSetObjects,
  storageClassObjects,
  volumeAttributesClass,
} from "../../support/index.js";

const load = (file: string) =>
  parseAllDocuments(readFileSync(new URL(`../../../deploy/kubernetes/${file}`, import.meta.url), "utf8")).map((d) =>
    d.toJS(),
  );
const docs = load("rbac.yaml");
const finalizeDocs = load("rbac-finalize.yaml");
const byKind = (kind: string) => docs.filter((d) => d.kind === kind);
const SA = { kind: "ServiceAccount", name: "claimstep", namespace: "claimstep" };

/** Rules of the roles bound to claimstep's ServiceAccount (`kinds`: cluster-wide, namespaced, or both). */
function grantedRules(kinds: string[] = ["ClusterRoleBinding", "RoleBinding"]): PolicyRule[] {
  const bindings = kinds
    .flatMap(byKind)
    .filter((b) =>
      b.subjects.some((s: any) => s.kind === SA.kind && s.name === SA.name && s.namespace === SA.namespace),
    );
  return bindings.flatMap((b) => {
    // A RoleBinding's Role is in the binding's namespace.
    const role = docs.find(
      (d) =>
        d.kind === b.roleRef.kind &&
        d.metadata.name === b.roleRef.name &&
        (d.kind !== "Role" || d.metadata.namespace === b.metadata.namespace),
    );
    expect(
      role,
      `${b.metadata.name} binds ${b.roleRef.kind} ${b.roleRef.name}, which must be in rbac.yaml`,
    ).toBeDefined();
    return role.rules as PolicyRule[];
  });
}

const triple = (group: string, resource: string, verb: string) => `${verb} ${resource}${group ? `.${group}` : ""}`;

describe("deploy/kubernetes/rbac-finalize.yaml", () => {
  it("grants exactly the re-create's requests, in a Role of its own bound to claimstep", () => {
    const role = finalizeDocs.find((d) => d.kind === "ClusterRole");
    const binding = finalizeDocs.find((d) => d.kind === "ClusterRoleBinding");
    expect(role.metadata.name).toBe("claimstep-finalize");
    expect(binding.roleRef.name).toBe("claimstep-finalize");
    expect(binding.subjects).toEqual([SA]);
    const granted = new Set<string>();
    for (const rule of role.rules as PolicyRule[])
      for (const g of rule.apiGroups)
        for (const r of rule.resources) for (const v of rule.verbs) granted.add(triple(g, r, v));
    const called = new Set(Object.values(RecreateRoutes).map((r) => triple(r.group, rbacResource(r), r.verb)));
    expect([...granted].sort()).toEqual([...called].sort());
  });

  it("is opt-in: kustomization.yaml applies rbac.yaml and names rbac-finalize.yaml commented out (issue 24)", () => {
    const k = load("kustomization.yaml")[0];
    expect(k.resources).toContain("rbac.yaml");
    expect(k.resources).not.toContain("rbac-finalize.yaml");
    expect(readFileSync(new URL("../../../deploy/kubernetes/kustomization.yaml", import.meta.url), "utf8")).toMatch(
      /^\s*# - rbac-finalize\.yaml$/m,
    );
  });
});

describe("deploy/kubernetes/rbac.yaml", () => {
  it("declares the ServiceAccount claimstep/claimstep", () => {
    expect(byKind("ServiceAccount").map((s) => `${s.metadata.namespace}/${s.metadata.name}`)).toEqual([
      "claimstep/claimstep",
    ]);
  });

  it("grants exactly the requests of the adapter's route table, cluster-wide", () => {
    const granted = new Set<string>();
    for (const rule of grantedRules(["ClusterRoleBinding"])) {
      for (const k of [...rule.apiGroups, ...rule.resources, ...rule.verbs]) expect(k, "no wildcards").not.toBe("*");
      for (const g of rule.apiGroups)
        for (const r of rule.resources) for (const v of rule.verbs) granted.add(triple(g, r, v));
    }
    const called = new Set(Object.values(Routes).map((r) => triple(r.group, rbacResource(r), r.verb)));
    expect([...granted].sort()).toEqual([...called].sort());
  });

  it("grants the sweeper's Lease in claimstep's own namespace only: create, and get and patch of that one name", () => {
    const bindings = byKind("RoleBinding");
    expect(
      bindings.map((b) => `${b.metadata.namespace}/${b.metadata.name} → ${b.roleRef.kind} ${b.roleRef.name}`),
    ).toEqual([`${DEFAULT_LEASE_NAMESPACE}/claimstep-lease → Role claimstep-lease`]);
    const rules = grantedRules(["RoleBinding"]);
    const granted = new Set<string>();
    for (const rule of rules) {
      for (const k of [...rule.apiGroups, ...rule.resources, ...rule.verbs]) expect(k, "no wildcards").not.toBe("*");
      for (const g of rule.apiGroups)
        for (const r of rule.resources) for (const v of rule.verbs) granted.add(triple(g, r, v));
      // A create cannot be confined to a name (its object has none when authorized); the rest are.
      if (!rule.verbs.includes("create")) expect(rule.resourceNames).toEqual([LEASE_NAME]);
    }
    const called = new Set(Object.values(LeaseRoutes).map((r) => triple(r.group, rbacResource(r), r.verb)));
    expect([...granted].sort()).toEqual([...called].sort());
  });

  it("is enough for the election, and no more: another Lease is refused", async () => {
    const sim = new SimCluster({
      anonymous: { user: "system:serviceaccount:claimstep:claimstep", rules: grantedRules(["RoleBinding"]) },
    });
    const lease = new KubeLease(sim.newClient(), {
      namespace: DEFAULT_LEASE_NAMESPACE,
      name: LEASE_NAME,
      timeoutMs: 5000,
    });
    const spec = { holderIdentity: "claimstep-a", leaseDurationSeconds: 15, leaseTransitions: 0 };
    expect(await lease.get()).toBeUndefined();
    const created = await lease.create(spec);
    expect(created.kind).toBe("written");
    expect(
      await lease.update({ ...spec, leaseDurationSeconds: 16 }, (await lease.get())!.resourceVersion),
    ).toMatchObject({ kind: "written" });
    const other = new KubeLease(sim.newClient(), {
      namespace: DEFAULT_LEASE_NAMESPACE,
      name: "someone-else",
      timeoutMs: 5000,
    });
    await expect(other.get()).rejects.toThrow(/forbidden/);
    expect(
      sim.http
        .requests()
        .filter((r) => r.resource === "leases")
        .map((r) => r.verb),
    ).toEqual(["get", "create", "get", "patch", "get"]);
  });

  it("is enough for a whole step: a reader and writer under only these rules are never refused", async () => {
    const base = "https://rbac.test";
    const fake = createSimServer({
      baseUrl: base,
      rules: grantedRules(),
      objects: [
        ...statefulSetObjects({
          desired: [{ name: "data", storage: "2Gi", storageClassName: "fast", volumeAttributesClassName: "gold" }],
        }),
        ...storageClassObjects(),
        volumeAttributesClass("gold"),
      ],
    });
    const server = setupServer(...fake.handlers);
    server.listen({ onUnhandledRequest: "error" });
    try {
      const client = new KubeClient({ server: base });
      const snapshot = await new KubeReader(client).load({ namespace: "default", name: "web" });
      const writers = kubeWriters(client);
      await writers.claims.apply({
        type: "PatchClaim",
        namespace: "default",
        claim: "data-web-2",
        template: "data",
        ordinal: 2,
        storage: "2Gi",
        labels: {},
        annotations: {},
      });
      await writers.status.annotateSet(
        { namespace: "default", name: "web" },
        { "claimstep.io/update-revision": "r" },
        snapshot.statefulSet.metadata.resourceVersion,
      );
      await writers.events.recordEvents(
        { namespace: "default", name: "web" },
        [{ type: "Normal", reason: "ClaimUpdated", action: "PatchClaim", note: "n" }],
        new Date(),
      );
      const verbs = new Set(fake.http.requests().map((r) => `${r.verb} ${r.resource}`));
      // The re-create record's GET is the finalize Role's (rbac-finalize.yaml): without it, 403,
      // read as "no record" (such a claimstep never re-creates), and the step goes on.
      const refused = fake.http.requests().filter((r) => `${r.verb} ${r.resource}` === "get configmaps");
      expect(refused).toHaveLength(1);
      expect(snapshot.recreateRecord).toBeUndefined();
      expect(verbs).toEqual(
        new Set([
          "get statefulsets",
          "get configmaps",
          "list pods",
          "list persistentvolumeclaims",
          "list storageclasses",
          "list volumeattributesclasses",
          "patch persistentvolumeclaims",
          "patch statefulsets",
          "patch events",
          "create events",
        ]),
      );
    } finally {
      server.close();
    }
  });
});
