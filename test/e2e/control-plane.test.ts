// The real-server harness, proven on a real control plane: kube-apiserver and
// kube-controller-manager v1.34.2 with etcd, claimstep's shipped RBAC, the node agent playing the
// kubelet and the CSI side, and the audit log. Skipped without CLAIMSTEP_KUBE_ASSETS (or
// CLAIMSTEP_E2E_KUBECONFIG: then only what needs no fake driver runs).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN_USER,
  byNodeAgent,
  describeAudit,
  type KubeObject,
  ok,
  storageClass,
  useControlPlane,
  volumeAttributesClass,
  waitFor,
  waitForAudit,
} from "./support/index.js";

const e2e = useControlPlane({ prefix: "harness" });

// Cluster-scoped classes, named after the namespace so that files never share them.
let fast = "";
let offline = "";
let small = "";
let silver = "";
let gold = "";
let broken = "";

const claimTemplate = (name: string, storageClassName: string, size = "1Gi") => ({
  metadata: { name },
  spec: { accessModes: ["ReadWriteOnce"], storageClassName, resources: { requests: { storage: size } } },
});
const statefulSet = (name: string, replicas: number, storageClassName: string): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name },
  spec: {
    replicas,
    serviceName: name,
    updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 0, maxUnavailable: 1 } },
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        terminationGracePeriodSeconds: 30,
        containers: [
          { name: "app", image: "registry.k8s.io/pause:3.10", volumeMounts: [{ name: "data", mountPath: "/data" }] },
        ],
      },
    },
    volumeClaimTemplates: [claimTemplate("data", storageClassName)],
  },
});
const claim = (name: string, storageClassName: string, size: string, vac?: string): KubeObject => ({
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: { name },
  spec: { ...claimTemplate(name, storageClassName, size).spec, ...(vac ? { volumeAttributesClassName: vac } : {}) },
});

async function getClaim(name: string) {
  return ok(await e2e.api.get("persistentvolumeclaims", name), `get claim ${name}`);
}
async function waitBound(name: string) {
  return waitFor(
    async () => {
      const c = await getClaim(name);
      return c.status?.phase === "Bound" ? c : undefined;
    },
    { timeoutMs: 30_000, what: `claim ${name} Bound` },
  );
}
/** Polls a claim every 50 ms until `done`, recording every allocatedResourceStatuses.storage seen. */
async function watchResize(name: string, done: (c: KubeObject) => boolean, timeoutMs = 30_000) {
  const seen: string[] = [];
  const last = await waitFor(
    async () => {
      const c = await getClaim(name);
      const st = c.status?.allocatedResourceStatuses?.storage ?? "(none)";
      if (seen.at(-1) !== st) seen.push(st);
      return done(c) ? c : undefined;
    },
    { timeoutMs, intervalMs: 50, what: `claim ${name}` },
  );
  return { seen, claim: last };
}

beforeAll(async () => {
  if (!e2e.available) return;
  const ns = e2e.namespace;
  fast = `${ns}-fast`;
  offline = `${ns}-offline`;
  small = `${ns}-small`;
  silver = `${ns}-silver`;
  gold = `${ns}-gold`;
  broken = `${ns}-broken`;
  if (!e2e.agent) return;
  for (const sc of [
    storageClass(fast, { resizeLatencyMs: 400 }),
    storageClass(offline, { resizeLatencyMs: 200, nodeExpansion: "offline", nodeResizeLatencyMs: 200 }),
    storageClass(small, { resizeLatencyMs: 200, maxSize: "3Gi" }),
    storageClass(`${ns}-modifiable`, { modifyLatencyMs: 300, infeasibleVac: [broken] }),
  ])
    ok(await e2e.admin.create("storageclasses", null, sc), `create ${sc.metadata.name}`);
  for (const vac of [
    volumeAttributesClass(silver, { iops: "3000" }),
    volumeAttributesClass(gold, { iops: "6000" }),
    volumeAttributesClass(broken, { iops: "1000000" }),
  ]) {
    ok(await e2e.admin.create("volumeattributesclasses", null, vac), `create ${vac.metadata.name}`);
  }
});

afterAll(async () => {
  if (!e2e.agent) return;
  const ns = e2e.namespace;
  for (const name of [fast, offline, small, `${ns}-modifiable`]) await e2e.admin.delete("storageclasses", null, name);
  for (const name of [silver, gold, broken]) await e2e.admin.delete("volumeattributesclasses", null, name);
});

describe("the control plane", () => {
  it("is up, serving the version it was started from", async () => {
    const { info } = e2e;
    const v = ok(await e2e.admin.request<{ gitVersion: string }>("GET", "/version"));
    expect(v.gitVersion).toBe(info.version);
    if (info.mode === "local") {
      expect(info.version).toBe("v1.34.2");
      const s = info.startupMs;
      console.log(
        `control plane ${info.version} up in ${s.etcd + s.apiserver + s.controllerManager} ms (etcd ${s.etcd}, apiserver ${s.apiserver}, controller-manager ${s.controllerManager}; RBAC and token ${s.rbac})`,
      );
    } else {
      console.log(`existing cluster ${info.version} at ${info.server} (no audit log, no node agent)`);
    }
  });

  it("gives claimstep's ServiceAccount exactly the shipped RBAC", async () => {
    const as = e2e.claimstep.in(e2e.namespace);
    // Allowed: get (a 404 is an authorized answer), list.
    expect((await as.get("statefulsets", "nothing-here")).status).toBe(404);
    expect((await as.list("statefulsets")).status).toBe(200);
    expect((await as.list("persistentvolumeclaims")).status).toBe(200);
    // Forbidden: deleting a claim, reading Secrets, updating pods.
    const del = await as.delete("persistentvolumeclaims", "data-web-0");
    expect(del.status).toBe(403);
    expect((del.body as { reason?: string }).reason).toBe("Forbidden");
    expect((await as.list("secrets")).status).toBe(403);
    expect((await as.delete("pods", "web-0")).status).toBe(403);
  });
});

describe("the node agent with the real StatefulSet controller", () => {
  it("runs a StatefulSet: pods Running and Ready, claims Bound", async ({ skip }) => {
    if (!e2e.agent) skip("needs the fake driver");
    ok(await e2e.api.create("statefulsets", statefulSet("web", 2, fast)), "create StatefulSet web");
    const sts = await waitFor(
      async () => {
        const s = ok(await e2e.api.get("statefulsets", "web"));
        return s.status?.readyReplicas === 2 && s.status?.availableReplicas === 2 ? s : undefined;
      },
      { timeoutMs: 60_000, what: "StatefulSet web 2/2 ready" },
    );
    expect(sts.status.currentRevision).toBe(sts.status.updateRevision);
    // MaxUnavailableStatefulSet (alpha in 1.34) is on: the server keeps the field.
    if (e2e.info.featureGates.includes("MaxUnavailableStatefulSet=true"))
      expect(sts.spec.updateStrategy.rollingUpdate.maxUnavailable).toBe(1);
    const pods = ok(await e2e.api.list("pods", { labelSelector: "app=web" })).items;
    expect(pods.map((p) => p.metadata.name).sort()).toEqual(["web-0", "web-1"]);
    for (const p of pods) {
      expect(p.spec.nodeName).toBe(e2e.agent!.nodeName);
      expect(p.status.phase).toBe("Running");
      expect(p.status.conditions.find((c: { type: string }) => c.type === "Ready")?.status).toBe("True");
      expect(p.status.podIP).toMatch(/^10\.244\./);
    }
    for (const name of ["data-web-0", "data-web-1"]) {
      const c = await waitBound(name);
      expect(c.status.capacity.storage).toBe("1Gi");
      expect(c.spec.volumeName).toBe(`pvc-${c.metadata.uid}`);
      const pv = ok(await e2e.admin.get("persistentvolumes", null, c.spec.volumeName));
      expect(pv.status.phase).toBe("Bound");
      expect(pv.spec.claimRef.uid).toBe(c.metadata.uid);
      expect(pv.spec.csi.driver).toBe("e2e.csi.claimstep.io");
    }
  });

  it("expands a claim the admin grew, through ControllerResizeInProgress", async ({ skip }) => {
    if (!e2e.agent) skip("needs the fake driver");
    ok(
      await e2e.api.patch("persistentvolumeclaims", "data-web-1", {
        spec: { resources: { requests: { storage: "2Gi" } } },
      }),
      "grow data-web-1",
    );
    const { seen, claim: c } = await watchResize("data-web-1", (c) => c.status?.capacity?.storage === "2Gi");
    expect(seen).toContain("ControllerResizeInProgress");
    expect(seen.at(-1)).toBe("(none)");
    expect(c.status.allocatedResources.storage).toBe("2Gi");
    expect(c.status.allocatedResourceStatuses?.storage).toBeUndefined();
    expect((c.status.conditions ?? []).map((x: { type: string }) => x.type)).not.toContain("Resizing");
    const pv = ok(await e2e.admin.get("persistentvolumes", null, c.spec.volumeName));
    expect(pv.spec.capacity.storage).toBe("2Gi");
    // The controller manager's expander leaves a CSI volume to the external resizer (v1.34 writes
    // no volume.kubernetes.io/storage-resizer annotation for it: only an event).
    await waitFor(
      async () => {
        const events = ok(
          await e2e.api.list("events", {
            fieldSelector: `involvedObject.name=data-web-1,involvedObject.kind=PersistentVolumeClaim`,
          }),
        ).items;
        return events.some((ev) => ev.reason === "ExternalExpanding" && ev.source?.component === "volume_expand");
      },
      { timeoutMs: 10_000, what: "the ExternalExpanding event of data-web-1" },
    );
  });

  it("ends an expansion above the class's max-size ControllerResizeInfeasible, and recovers when it is lowered", async ({
    skip,
  }) => {
    if (!e2e.agent) skip("needs the fake driver");
    ok(await e2e.api.create("persistentvolumeclaims", claim("big", small, "1Gi")));
    await waitBound("big");
    ok(
      await e2e.api.patch("persistentvolumeclaims", "big", { spec: { resources: { requests: { storage: "5Gi" } } } }),
      "grow big beyond max-size",
    );
    const failed = await watchResize(
      "big",
      (c) => c.status?.allocatedResourceStatuses?.storage === "ControllerResizeInfeasible",
    );
    expect(failed.seen).toContain("ControllerResizeInProgress");
    const error = failed.claim.status.conditions.find((x: { type: string }) => x.type === "ControllerResizeError");
    expect(error?.status).toBe("True");
    expect(error?.message).toMatch(/exceeds the maximum volume size 3Gi/);
    expect(failed.claim.status.capacity.storage).toBe("1Gi");
    expect(failed.claim.status.allocatedResources.storage).toBe("5Gi");

    // Lowering to the capacity is refused by the API server (it must stay above capacity) ...
    const toCapacity = await e2e.api.patch("persistentvolumeclaims", "big", {
      spec: { resources: { requests: { storage: "1Gi" } } },
    });
    expect(toCapacity.status).toBe(422);
    // ... to a feasible size above it is accepted, and the resizer retries with it.
    ok(
      await e2e.api.patch("persistentvolumeclaims", "big", { spec: { resources: { requests: { storage: "2Gi" } } } }),
      "lower big to 2Gi",
    );
    const recovered = await watchResize("big", (c) => c.status?.capacity?.storage === "2Gi");
    expect(recovered.claim.status.allocatedResources.storage).toBe("2Gi");
    expect(recovered.claim.status.allocatedResourceStatuses?.storage).toBeUndefined();
    expect((recovered.claim.status.conditions ?? []).map((x: { type: string }) => x.type)).not.toContain(
      "ControllerResizeError",
    );
  });

  it("finishes an offline expansion only when the pod is restarted (an eviction by claimstep)", async ({ skip }) => {
    if (!e2e.agent) skip("needs the fake driver");
    ok(await e2e.api.create("statefulsets", statefulSet("db", 1, offline)), "create StatefulSet db");
    await waitFor(async () => ok(await e2e.api.get("statefulsets", "db")).status?.readyReplicas === 1, {
      timeoutMs: 60_000,
      what: "StatefulSet db ready",
    });
    ok(
      await e2e.api.patch("persistentvolumeclaims", "data-db-0", {
        spec: { resources: { requests: { storage: "2Gi" } } },
      }),
      "grow data-db-0",
    );
    const pending = await watchResize(
      "data-db-0",
      (c) => c.status?.allocatedResourceStatuses?.storage === "NodeResizePending",
    );
    expect(pending.seen).toContain("ControllerResizeInProgress");
    expect(
      pending.claim.status.conditions.find((x: { type: string }) => x.type === "FileSystemResizePending")?.status,
    ).toBe("True");
    // It stays there while the pod runs.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await getClaim("data-db-0")).status.allocatedResourceStatuses.storage).toBe("NodeResizePending");

    const before = ok(await e2e.api.get("pods", "db-0"));
    const evicted = await e2e.claimstep.sub("eviction").create("pods", e2e.namespace, "db-0", {
      apiVersion: "policy/v1",
      kind: "Eviction",
      metadata: { name: "db-0", namespace: e2e.namespace },
      deleteOptions: { preconditions: { uid: before.metadata.uid } },
    });
    expect(evicted.status).toBe(201);
    const grown = await watchResize("data-db-0", (c) => c.status?.capacity?.storage === "2Gi");
    expect(grown.seen).toContain("NodeResizeInProgress");
    const after = ok(await e2e.api.get("pods", "db-0"));
    expect(after.metadata.uid).not.toBe(before.metadata.uid);
    expect(e2e.agent!.finishedDeletes.map((d) => d.uid)).toContain(before.metadata.uid);
  });

  it("changes a claim's VolumeAttributesClass, and reports an infeasible one", async ({ skip }) => {
    if (!e2e.agent) skip("needs the fake driver");
    const cls = `${e2e.namespace}-modifiable`;
    ok(await e2e.api.create("persistentvolumeclaims", claim("tuned", cls, "1Gi", silver)));
    const bound = await waitBound("tuned");
    expect(bound.status.currentVolumeAttributesClassName).toBe(silver);
    ok(
      await e2e.api.patch("persistentvolumeclaims", "tuned", { spec: { volumeAttributesClassName: gold } }),
      "tuned → gold",
    );
    const statuses: string[] = [];
    const done = await waitFor(
      async () => {
        const c = await getClaim("tuned");
        const s = c.status?.modifyVolumeStatus?.status ?? "(none)";
        if (statuses.at(-1) !== s) statuses.push(s);
        return c.status?.currentVolumeAttributesClassName === gold ? c : undefined;
      },
      { intervalMs: 50, what: "tuned at gold" },
    );
    expect(statuses).toContain("InProgress");
    expect(done.status.modifyVolumeStatus).toBeUndefined();
    expect(
      ok(await e2e.admin.get("persistentvolumes", null, done.spec.volumeName)).spec.volumeAttributesClassName,
    ).toBe(gold);

    ok(
      await e2e.api.patch("persistentvolumeclaims", "tuned", { spec: { volumeAttributesClassName: broken } }),
      "tuned → broken",
    );
    const infeasible = await waitFor(
      async () => {
        const c = await getClaim("tuned");
        return c.status?.modifyVolumeStatus?.status === "Infeasible" ? c : undefined;
      },
      { what: "tuned Infeasible" },
    );
    expect(infeasible.status.modifyVolumeStatus.targetVolumeAttributesClassName).toBe(broken);
    expect(infeasible.status.currentVolumeAttributesClassName).toBe(gold);
    expect(infeasible.status.conditions.map((x: { type: string }) => x.type)).toContain("ModifyVolumeError");
    // Back to the current class: the modifier clears its status.
    ok(
      await e2e.api.patch("persistentvolumeclaims", "tuned", { spec: { volumeAttributesClassName: gold } }),
      "tuned back to gold",
    );
    await waitFor(
      async () => {
        const c = await getClaim("tuned");
        return !c.status?.modifyVolumeStatus && c.status?.currentVolumeAttributesClassName === gold;
      },
      { what: "tuned rolled back to gold" },
    );
  });
});

describe("the audit log", () => {
  it("names the admin's claim patch, and shows no claim deleted and no pod deleted but by the node agent", async ({
    skip,
  }) => {
    if (!e2e.info.auditLogPath) skip("audit log: not available on an existing cluster");
    if (!e2e.agent) skip("needs the scenarios above");
    const [patch] = await waitForAudit(e2e.info.auditLogPath!, {
      namespace: e2e.namespace,
      verb: "patch",
      resource: "persistentvolumeclaims",
      name: "data-web-1",
    });
    expect(patch!.user).toBe(ADMIN_USER);
    expect(patch!.groups).toContain("system:masters");
    expect(patch!.code).toBe(200);

    const check = e2e.checkAudit({
      // The RBAC test's requests (refused, or for a set that does not exist) are the only errors
      // claimstep's user met.
      expectedErrors: (e) =>
        e.userAgent === "claimstep-e2e-as-claimstep" &&
        (e.code === 403 || (e.code === 404 && e.name === "nothing-here")),
    })!;
    expect(check.unexpectedDeletes, describeAudit(check.unexpectedDeletes)).toEqual([]);
    expect(check.unexpectedErrors, describeAudit(check.unexpectedErrors)).toEqual([]);
    // The eviction is claimstep's, a create (not a delete); the pod's final delete is the agent's.
    expect(
      check.claimstepRequests.some(
        (e) => e.verb === "create" && e.resource === "pods" && e.subresource === "eviction" && e.code === 201,
      ),
    ).toBe(true);
    const podDeletes = e2e.audit({ verb: "delete", resource: "pods", where: (e) => e.code === 200 });
    expect(podDeletes.length).toBeGreaterThan(0);
    expect(podDeletes.every(byNodeAgent), describeAudit(podDeletes)).toBe(true);
    expect(e2e.agent!.errors).toEqual([]);
  });
});

describe("after the audit check", () => {
  it("releases and deletes the volume of a claim someone deleted (reclaim policy Delete)", async ({ skip }) => {
    if (!e2e.agent) skip("needs the fake driver");
    const c = await getClaim("big");
    const pvName = c.spec.volumeName;
    ok(await e2e.api.delete("persistentvolumeclaims", "big"), "delete claim big");
    await waitFor(async () => (await e2e.admin.get("persistentvolumes", null, pvName)).status === 404, {
      timeoutMs: 30_000,
      what: `pv ${pvName} deleted`,
    });
    expect(e2e.agent!.counts.volumesReleased).toBeGreaterThanOrEqual(1);
    expect(e2e.agent!.counts.volumesDeleted).toBeGreaterThanOrEqual(1);
    expect(e2e.agent!.errors).toEqual([]);
  });
});
