// Claim templates added or removed by an orphan delete and a re-create (issue 27): the simulated
// API server validates a pod template's mounts against the set's volumes and claim templates, and
// its StatefulSet controller creates a pod's claims when it processes that pod, and stops at the
// first pod whose volumes do not match the templates — as the real v1.34 server does
// (measured on a real v1.34 server; test/e2e/conformance.test.ts compares the two).
import { describe, expect, it } from "vitest";
import { SimCluster, statefulSetManifest } from "../../../adapters/sim/cluster.js";
import { SIM_SERVER } from "../../../adapters/sim/http.js";
import type { Json } from "../../../adapters/sim/store.js";
import { Keys } from "../../../core/keys.js";
import { SCENARIOS } from "../../../functions/scenarios.js";
import { runStep } from "../../../functions/step.js";
import { refusal } from "./helpers.js";

const ns = "default";
type Loose = any;

/** Set `web` (3 replicas, class fast) with these claim templates, its container mounting `mounts`. */
function manifest(templates: string[], mounts: string[], policy: "OrderedReady" | "Parallel" = "OrderedReady"): Json {
  const m = statefulSetManifest({
    name: "web",
    replicas: 3,
    podManagementPolicy: policy,
    templates: templates.map((name) => ({ name, storage: "1Gi", storageClassName: "fast" })),
  }) as Loose;
  m.spec.template.spec.containers[0].volumeMounts = mounts.map((name) => ({ name, mountPath: `/${name}` }));
  return m;
}

async function running(policy: "OrderedReady" | "Parallel" = "OrderedReady"): Promise<SimCluster> {
  const c = new SimCluster({ seed: 7 });
  await c.addStorageClass("fast", { allowVolumeExpansion: true });
  await c.createStatefulSet(manifest(["data"], ["data"], policy));
  return c;
}

const names = (c: SimCluster, r: string) =>
  c
    .list(r, ns)
    .map((o) => (o.metadata as { name: string }).name)
    .sort();
const pod = (c: SimCluster, name: string) => c.get("pods", ns, name) as Loose;
const volumesOf = (p: Loose) =>
  (p.spec.volumes as Loose[]).filter((v) => v.persistentVolumeClaim).map((v) => v.persistentVolumeClaim.claimName);
const failedUpdates = (c: SimCluster) =>
  c
    .events(ns)
    .filter((e: Loose) => e.reason === "FailedUpdate")
    .map((e: Loose) => `${e.type} ${e.regarding.kind}/${e.regarding.name}: ${String(e.note).split("\n")[0]}`);
const forbidden = (p: string, set = "web") =>
  `Warning StatefulSet/${set}: update Pod ${p} in StatefulSet ${set} failed error: Pod "${p}" is invalid: spec: Forbidden: pod updates may not change fields other than \`spec.containers[*].image\`,\`spec.initContainers[*].image\`,\`spec.activeDeadlineSeconds\`,\`spec.tolerations\` (only additions to existing tolerations),\`spec.terminationGracePeriodSeconds\` (allow it to be set to 1 if it was previously negative)`;

describe("StatefulSet validation: a mount names a volume of the pod template or a claim template", () => {
  it("refuses a create whose container mounts a volume the set lacks, with the real server's body", async () => {
    const c = await running();
    const bad = manifest(["data"], ["data", "cache"]) as Loose;
    bad.metadata.name = "bad";
    const err = await refusal(c.admin.create("statefulsets", bad, { fieldManager: "kubectl" }));
    expect(err.code).toBe(422);
    // As the real v1.34 server answered (the conformance case "tpl" records the same body).
    expect(err.status).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message:
        'StatefulSet.apps "bad" is invalid: spec.template.spec.containers[0].volumeMounts[1].name: Not found: "cache"',
      reason: "Invalid",
      details: {
        name: "bad",
        group: "apps",
        kind: "StatefulSet",
        causes: [
          {
            reason: "FieldValueNotFound",
            message: 'Not found: "cache"',
            field: "spec.template.spec.containers[0].volumeMounts[1].name",
          },
        ],
      },
      code: 422,
    });
    expect(c.get("statefulsets", ns, "bad")).toBeUndefined();
  });

  it.each(["", "&dryRun=All"])("refuses a server-side apply creating such a set (%s)", async (dryRun) => {
    const c = await running();
    const bad = manifest(["data"], ["data", "cache"]) as Loose;
    bad.metadata.name = "bad";
    const res = await c.http.fetchLike(
      `${SIM_SERVER}/apis/apps/v1/namespaces/${ns}/statefulsets/bad?fieldManager=kubectl${dryRun}`,
      { method: "PATCH", headers: { "Content-Type": "application/apply-patch+yaml" }, body: JSON.stringify(bad) },
    );
    expect(res.status).toBe(422);
    expect(((await res.json()) as Loose).message).toBe(
      'StatefulSet.apps "bad" is invalid: spec.template.spec.containers[0].volumeMounts[1].name: Not found: "cache"',
    );
    expect(c.get("statefulsets", ns, "bad")).toBeUndefined();
  });

  it("accepts a mount of a pod-template volume, and of every claim template", async () => {
    const c = await running();
    const ok = manifest(["data", "logs"], ["data", "logs", "cache"]) as Loose;
    ok.metadata.name = "ok";
    ok.spec.template.spec.volumes = [{ name: "cache", emptyDir: {} }];
    await c.admin.create("statefulsets", ok, { fieldManager: "kubectl" });
    expect(c.get("statefulsets", ns, "ok")).toBeDefined();
  });

  it("refuses an update whose pod template mounts a volume the set lacks, and changes nothing", async () => {
    const c = await running();
    const before = structuredClone(c.get("statefulsets", ns, "web"));
    const template = (manifest(["data"], ["data", "logs"]) as Loose).spec.template;
    const err = await refusal(
      c.admin.mergePatch("statefulsets", ns, "web", { spec: { template } }, { fieldManager: "kubectl" }),
    );
    expect(err.code).toBe(422);
    expect(err.message).toContain(
      'StatefulSet.apps "web" is invalid: spec.template.spec.containers[0].volumeMounts[1].name: Not found: "logs"',
    );
    expect(c.get("statefulsets", ns, "web")).toEqual(before);
  });

  it("lists containers' mounts and devices before init containers', and the forbidden spec change after them (as v1.34)", async () => {
    const c = await running();
    const bad = manifest(["data"], ["data"]) as Loose;
    bad.metadata.name = "bad2";
    bad.spec.template.spec.initContainers = [
      { name: "init", image: "registry.k8s.io/pause:3.9", volumeMounts: [{ name: "cache", mountPath: "/cache" }] },
    ];
    bad.spec.template.spec.containers[0].volumeDevices = [{ name: "raw", devicePath: "/dev/raw" }];
    const created = await refusal(c.admin.create("statefulsets", bad, { fieldManager: "kubectl" }));
    expect(created.message).toBe(
      'StatefulSet.apps "bad2" is invalid: [spec.template.spec.containers[0].volumeDevices[0].name: Not found: "raw", spec.template.spec.initContainers[0].volumeMounts[0].name: Not found: "cache"]',
    );
    const removed = await refusal(
      c.admin.mergePatch(
        "statefulsets",
        ns,
        "web",
        { spec: { volumeClaimTemplates: [] } },
        { fieldManager: "kubectl" },
      ),
    );
    expect((removed.status as Loose).details.causes.map((x: Loose) => `${x.reason} ${x.field}`)).toEqual([
      "FieldValueNotFound spec.template.spec.containers[0].volumeMounts[0].name",
      "FieldValueForbidden spec",
    ]);
  });
});

describe("StatefulSet controller: claims are created with their pod", () => {
  it("OrderedReady: ordinal 1's claims only once pod 0 is Ready", async () => {
    const c = new SimCluster({ seed: 7 });
    await c.addStorageClass("fast", { allowVolumeExpansion: true });
    await c.admin.create("statefulsets", manifest(["data"], ["data"]), { fieldManager: "kubectl" });
    c.advance(1);
    expect(names(c, "persistentvolumeclaims")).toEqual(["data-web-0"]);
    expect(names(c, "pods")).toEqual(["web-0"]);
    c.advance(10 * 60_000);
    expect(names(c, "persistentvolumeclaims")).toEqual(["data-web-0", "data-web-1", "data-web-2"]);
  });
});

describe.each(["OrderedReady", "Parallel"] as const)(
  "a template added by an orphan delete and a re-create (%s)",
  (policy) => {
    async function recreated(): Promise<{ c: SimCluster; uids: Record<string, string> }> {
      const c = await running(policy);
      const uids = Object.fromEntries(
        ["web-0", "web-1", "web-2"].map((p) => [p, (pod(c, p).metadata as { uid: string }).uid]),
      );
      await c.deleteStatefulSet(ns, "web", { propagationPolicy: "Orphan" });
      c.advance(60_000);
      expect(c.get("statefulsets", ns, "web")).toBeUndefined();
      await c.admin.create("statefulsets", manifest(["data", "logs"], ["data", "logs"], policy), {
        fieldManager: "kubectl",
      });
      c.advance(60_000);
      return { c, uids };
    }

    it("creates only pod 0's new claim, replaces no pod and records FailedUpdate", async () => {
      const { c, uids } = await recreated();
      expect(names(c, "persistentvolumeclaims")).toEqual(["data-web-0", "data-web-1", "data-web-2", "logs-web-0"]);
      for (const p of ["web-0", "web-1", "web-2"]) {
        expect(pod(c, p).metadata.uid).toBe(uids[p]);
        expect(volumesOf(pod(c, p))).toEqual([`data-${p}`]);
      }
      expect(failedUpdates(c)).toEqual([forbidden("web-0")]);
      const status = (c.get("statefulsets", ns, "web") as Loose).status;
      // A fresh set: the current revision is the update one at once; the adopted pods are of neither.
      expect(status.currentRevision).toBe(status.updateRevision);
      expect(status).toMatchObject({ replicas: 3, readyReplicas: 3 });
      expect(status.updatedReplicas).toBeUndefined();
    });

    it("does not re-create a pod evicted above the stuck one (status.replicas 2); pod 0 evicted comes back with both volumes, then pod 1 is stuck", async () => {
      const { c, uids } = await recreated();
      await c.evictPod(ns, "web-2");
      c.advance(60_000);
      expect(names(c, "pods")).toEqual(["web-0", "web-1"]);
      expect((c.get("statefulsets", ns, "web") as Loose).status).toMatchObject({ replicas: 2, readyReplicas: 2 });

      await c.evictPod(ns, "web-0");
      c.advance(60_000);
      expect(pod(c, "web-0").metadata.uid).not.toBe(uids["web-0"]);
      expect(volumesOf(pod(c, "web-0"))).toEqual(["data-web-0", "logs-web-0"]);
      expect(pod(c, "web-1").metadata.uid).toBe(uids["web-1"]);
      expect(failedUpdates(c)).toEqual([forbidden("web-0"), forbidden("web-1")]);
      if (policy === "OrderedReady") {
        // One ordinal after another: web-1 is stuck, web-2 is never reached.
        expect(names(c, "pods")).toEqual(["web-0", "web-1"]);
        expect(names(c, "persistentvolumeclaims")).toEqual([
          "data-web-0",
          "data-web-1",
          "data-web-2",
          "logs-web-0",
          "logs-web-1",
        ]);
        expect((c.get("statefulsets", ns, "web") as Loose).status).toMatchObject({
          replicas: 2,
          readyReplicas: 2,
          currentReplicas: 1,
          updatedReplicas: 1,
        });
      } else {
        // slowStartBatch: web-0 (created) alone, then web-1 and web-2 in one batch: web-1 fails,
        // web-2 is created in the same batch, with both volumes.
        expect(names(c, "pods")).toEqual(["web-0", "web-1", "web-2"]);
        expect(volumesOf(pod(c, "web-2"))).toEqual(["data-web-2", "logs-web-2"]);
        expect(names(c, "persistentvolumeclaims")).toEqual([
          "data-web-0",
          "data-web-1",
          "data-web-2",
          "logs-web-0",
          "logs-web-1",
          "logs-web-2",
        ]);
      }
    });

    it("a scale-down waits too: the pods above the new size stay while pod 0 is stuck", async () => {
      const c = await running(policy);
      await c.deleteStatefulSet(ns, "web", { propagationPolicy: "Orphan" });
      c.advance(60_000);
      const m = manifest(["data", "logs"], ["data", "logs"], policy) as Loose;
      m.spec.replicas = 1;
      await c.admin.create("statefulsets", m, { fieldManager: "kubectl" });
      c.advance(60_000);
      expect(names(c, "pods")).toEqual(["web-0", "web-1", "web-2"]);
      expect(failedUpdates(c)).toEqual([forbidden("web-0")]);
      await c.evictPod(ns, "web-0");
      c.advance(60_000);
      expect(names(c, "pods")).toEqual(["web-0"]);
    });

    it("a pod with an extra volume (a removed template) is not stuck", async () => {
      const c = await running(policy);
      await c.deleteStatefulSet(ns, "web", { propagationPolicy: "Orphan" });
      c.advance(60_000);
      const m = manifest([], [], policy) as Loose;
      await c.admin.create("statefulsets", m, { fieldManager: "kubectl" });
      c.advance(60_000);
      expect(failedUpdates(c)).toEqual([]);
      await c.evictPod(ns, "web-2");
      c.advance(60_000);
      expect(names(c, "pods")).toEqual(["web-0", "web-1", "web-2"]);
      expect(volumesOf(pod(c, "web-2"))).toEqual([]);
    });
  },
);

describe("scenarios add-template and remove-template", () => {
  const annotationsOf = (c: SimCluster) =>
    ((c.get("statefulsets", ns, "web") as Loose).metadata.annotations ?? {}) as Record<string, string>;
  const mountsOf = (template: Loose) =>
    (template.spec.containers[0].volumeMounts ?? []).map((m: Loose) => `${m.name}:${m.mountPath}`);

  it("add-template: web runs with data; logs desired, the held pod template mounts it at /logs, finalize Recreate", async () => {
    const c = await SCENARIOS["add-template"]!.build(1);
    const web = c.get("statefulsets", ns, "web") as Loose;
    expect(web.spec.volumeClaimTemplates.map((t: Loose) => t.metadata.name)).toEqual(["data"]);
    expect(mountsOf(web.spec.template)).toEqual(["data:/data"]);
    const a = annotationsOf(c);
    expect(a[Keys.finalize]).toBe("Recreate");
    expect(
      JSON.parse(a[Keys.templates]!).map(
        (t: Loose) => `${t.metadata.name} ${t.spec.resources.requests.storage} ${t.spec.storageClassName}`,
      ),
    ).toEqual(["data 1Gi fast", "logs 1Gi fast"]);
    expect(mountsOf(JSON.parse(a[Keys.podTemplate]!))).toEqual(["data:/data", "logs:/logs"]);
    expect(names(c, "pods")).toEqual(["web-0", "web-1", "web-2"]);
    expect(names(c, "persistentvolumeclaims")).toEqual(["data-web-0", "data-web-1", "data-web-2"]);
    expect(c.list("pods", ns).every((p: Loose) => p.status.phase === "Running")).toBe(true);
  });

  it("remove-template: web runs with data and cache mounted; cache listed for removal, the held pod template without it", async () => {
    const c = await SCENARIOS["remove-template"]!.build(1);
    const web = c.get("statefulsets", ns, "web") as Loose;
    expect(web.spec.volumeClaimTemplates.map((t: Loose) => t.metadata.name)).toEqual(["data", "cache"]);
    expect(mountsOf(web.spec.template)).toEqual(["data:/data", "cache:/cache"]);
    const a = annotationsOf(c);
    expect(a[Keys.finalize]).toBe("Recreate");
    expect(JSON.parse(a[Keys.removeTemplates]!)).toEqual(["cache"]);
    expect(JSON.parse(a[Keys.templates]!).map((t: Loose) => t.metadata.name)).toEqual(["data"]);
    expect(mountsOf(JSON.parse(a[Keys.podTemplate]!))).toEqual(["data:/data"]);
    expect(names(c, "persistentvolumeclaims")).toEqual([
      "cache-web-0",
      "cache-web-1",
      "cache-web-2",
      "data-web-0",
      "data-web-1",
      "data-web-2",
    ]);
  });
});

describe("scenarios add-template and remove-template end Complete (claimstep's step, 10 s apart)", () => {
  async function drive(c: SimCluster): Promise<string[]> {
    const reasons: string[] = [];
    for (let i = 0; i < 100; i++) {
      const { decision } = await runStep({
        reader: c.reader,
        writers: c.writers,
        ref: { namespace: ns, name: "web" },
        now: c.now(),
      });
      reasons.push(`${decision.phase}/${decision.reason}`);
      if (decision.phase === "Complete" && decision.reason === "Converged") break;
      if (decision.phase === "Blocked") break;
      c.advance(10_000);
    }
    return reasons;
  }
  const claimDeletes = (c: SimCluster) =>
    c.audit.filter((a) => a.resource === "persistentvolumeclaims" && a.verb === "delete");

  it("add-template: every pod mounts data and logs, the data claims keep their uids, no claim deleted", async () => {
    const c = await SCENARIOS["add-template"]!.build(1);
    const dataUids = ["data-web-0", "data-web-1", "data-web-2"].map(
      (n) => (c.get("persistentvolumeclaims", ns, n) as Loose).metadata.uid,
    );
    const reasons = await drive(c);
    expect(reasons.at(-1)).toBe("Complete/Converged");
    for (const o of [0, 1, 2]) expect(volumesOf(pod(c, `web-${o}`))).toEqual([`data-web-${o}`, `logs-web-${o}`]);
    expect(
      ["data-web-0", "data-web-1", "data-web-2"].map(
        (n) => (c.get("persistentvolumeclaims", ns, n) as Loose).metadata.uid,
      ),
    ).toEqual(dataUids);
    expect(claimDeletes(c)).toEqual([]);
  });

  it("remove-template: no pod mounts cache; the cache claims remain, labelled orphaned-from=web", async () => {
    const c = await SCENARIOS["remove-template"]!.build(1);
    const reasons = await drive(c);
    expect(reasons.at(-1)).toBe("Complete/Converged");
    for (const o of [0, 1, 2]) {
      expect(volumesOf(pod(c, `web-${o}`))).toEqual([`data-web-${o}`]);
      expect((c.get("persistentvolumeclaims", ns, `cache-web-${o}`) as Loose).metadata.labels).toMatchObject({
        "claimstep.io/orphaned-from": "web",
      });
    }
    expect(claimDeletes(c)).toEqual([]);
  });
});
