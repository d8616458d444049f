// The simulated cluster's pods, as issue 13 needs them, reached over HTTP like claimstep reaches
// them: pod template revisions and the StatefulSet's status (sts-partitioned-after.json,
// pod-list-mixed-revisions.json), RollingUpdate with partition and maxUnavailable, the partition
// patch, the Eviction subresource and PodDisruptionBudgets (pod-evict-*.txt,
// pdb-after-failed-eviction.json), and volumes that finish growing only when their pod restarts.
import { describe, expect, it } from "vitest";
import { type SetSpec, SimCluster, statefulSetManifest } from "../../../adapters/sim/cluster.js";
import type { DriverBehaviour } from "../../../adapters/sim/controllers/context.js";
import { SIM_SERVER } from "../../../adapters/sim/http.js";
import type { SimClusterOptions } from "../../../adapters/sim/options.js";
import { fixtureJson, fixtureStatus } from "../../fixtures/apiserver.js";

const ns = "fx";
const EVICTION = (pod: string, uid?: string, apiVersion = "policy/v1") => ({
  apiVersion,
  kind: "Eviction",
  metadata: { name: pod, namespace: ns },
  ...(uid !== undefined ? { deleteOptions: { preconditions: { uid } } } : {}),
});

async function call(sim: SimCluster, method: string, path: string, body?: unknown, type = "application/json") {
  const res = await sim.http.fetch(
    new Request(`${SIM_SERVER}${path}`, {
      method,
      headers: { "Content-Type": type },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
  );
  return { code: res.status, body: (await res.json()) as any, headers: res.headers };
}
const evict = (sim: SimCluster, pod: string, uid?: string, apiVersion?: string) =>
  call(sim, "POST", `/api/v1/namespaces/${ns}/pods/${pod}/eviction`, EVICTION(pod, uid, apiVersion));
const patchSet = (sim: SimCluster, patch: unknown) =>
  call(sim, "PATCH", `/apis/apps/v1/namespaces/${ns}/statefulsets/web`, patch, "application/merge-patch+json");
const getSet = async (sim: SimCluster) =>
  (await call(sim, "GET", `/apis/apps/v1/namespaces/${ns}/statefulsets/web`)).body;
const listPods = async (sim: SimCluster) =>
  (await call(sim, "GET", `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`)).body.items as any[];
const pod = (sim: SimCluster, name: string) => sim.get("pods", ns, name)!;
const claim = (sim: SimCluster, name: string) => sim.get("persistentvolumeclaims", ns, name)!;
const revisionsOf = async (sim: SimCluster) =>
  Object.fromEntries(
    (await listPods(sim)).map((p) => [p.metadata.name, p.metadata.labels["controller-revision-hash"]]),
  );

/** The fixtures' set: `web` in `fx`, 3 replicas, template `data` 1Gi of class `fast`, pod template as captured. */
async function fixtureSet(
  opts: { spec?: Partial<SetSpec>; driver?: DriverBehaviour; cluster?: SimClusterOptions; template?: boolean } = {},
): Promise<SimCluster> {
  const sim = new SimCluster({ volumeAttributesClasses: false, ...opts.cluster });
  await sim.addStorageClass("fast", { allowVolumeExpansion: true, driver: opts.driver ?? { resize: "online" } });
  const set: any = statefulSetManifest({
    name: "web",
    namespace: ns,
    replicas: 3,
    templates: [{ name: "data", storage: "1Gi", storageClassName: "fast" }],
    ...opts.spec,
  });
  // The pod template as kubectl applied it in the fixtures (container `c`, image busybox).
  if (opts.template !== false)
    set.spec.template = {
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "c", image: "busybox" }] },
    };
  await sim.createStatefulSet(set);
  return sim;
}

describe("pod template revisions and the StatefulSet's status", () => {
  it("a set made as in the fixtures gets the real revision names, stored as ControllerRevisions; every pod carries its revision", async () => {
    const sim = await fixtureSet();
    const set = await getSet(sim);
    expect(set.metadata.generation).toBe(1);
    expect(set.status).toEqual({
      observedGeneration: 1,
      replicas: 3,
      readyReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      currentRevision: "web-6ff65b68cb",
      updateRevision: "web-6ff65b68cb",
      collisionCount: 0,
      availableReplicas: 3,
    });
    // The pod template is defaulted as the API server does (what the hash is computed over).
    expect(set.spec.template).toEqual(fixtureStatus("sts-partition-patch.txt").body.spec.template);
    const pods = await listPods(sim);
    expect(pods.map((p) => [p.metadata.name, p.metadata.labels["controller-revision-hash"], p.status.phase])).toEqual([
      ["web-0", "web-6ff65b68cb", "Running"],
      ["web-1", "web-6ff65b68cb", "Running"],
      ["web-2", "web-6ff65b68cb", "Running"],
    ]);
    expect(
      pods.every((p) => p.metadata.uid && p.metadata.creationTimestamp && p.metadata.generateName === "web-"),
    ).toBe(true);
    const history = (await call(sim, "GET", `/apis/apps/v1/namespaces/${ns}/controllerrevisions`)).body.items as any[];
    expect(
      history.map((r) => [
        r.metadata.name,
        r.revision,
        r.metadata.labels["controller.kubernetes.io/hash"],
        r.metadata.ownerReferences[0].uid,
      ]),
    ).toEqual([["web-6ff65b68cb", 1, "6ff65b68cb", set.metadata.uid]]);
    expect(history[0].data.spec.template).toEqual({ ...set.spec.template, $patch: "replace" });
  });

  it("a template change with partition 2 of 3 replicas: the status and pod labels of sts-partitioned-after.json and pod-list-mixed-revisions.json", async () => {
    const sim = await fixtureSet();
    // As captured: partition 3 (merge patch under a resourceVersion), the template change, then partition 2.
    const before = await getSet(sim);
    const held = await patchSet(sim, {
      metadata: { resourceVersion: before.metadata.resourceVersion },
      spec: { updateStrategy: { rollingUpdate: { partition: 3 } } },
    });
    expect(held.code).toBe(200);
    await sim.setPodTemplate(ns, "web", (t) => void (t.metadata.annotations = { rev: "2" }));
    sim.advance(60_000);
    expect(await revisionsOf(sim)).toEqual({
      "web-0": "web-6ff65b68cb",
      "web-1": "web-6ff65b68cb",
      "web-2": "web-6ff65b68cb",
    });
    expect((await patchSet(sim, { spec: { updateStrategy: { rollingUpdate: { partition: 2 } } } })).code).toBe(200);
    sim.advance(60_000);

    const after = fixtureJson("sts-partitioned-after.json");
    const set = await getSet(sim);
    expect(set.status).toEqual(after.status);
    expect(set.metadata.generation).toBe(after.metadata.generation);
    expect(set.spec.template).toEqual(after.spec.template);
    const shape = (items: any[]) =>
      items.map((p) => ({
        name: p.metadata.name,
        revision: p.metadata.labels["controller-revision-hash"],
        annotations: p.metadata.annotations,
        phase: p.status.phase,
      }));
    expect(shape(await listPods(sim))).toEqual(shape(fixtureJson("pod-list-mixed-revisions.json").items));
    // Only web-2 was replaced.
    expect(sim.audit.filter((a) => a.verb === "delete" && a.resource === "pods").map((a) => a.name)).toEqual(["web-2"]);
    expect(
      (await call(sim, "GET", `/apis/apps/v1/namespaces/${ns}/controllerrevisions`)).body.items.map((r: any) => [
        r.metadata.name,
        r.revision,
      ]),
    ).toEqual([
      ["web-6ff65b68cb", 1],
      ["web-7c4fb86845", 2],
    ]);

    // A pod below the partition is re-created at status.currentRevision, from its ControllerRevision.
    await sim.deletePod(ns, "web-0");
    sim.advance(30_000);
    expect(pod(sim, "web-0").metadata.labels["controller-revision-hash"]).toBe("web-6ff65b68cb");
    expect(pod(sim, "web-0").metadata.annotations).toBeUndefined();

    // Lowering the partition to 0 finishes the rollout: currentRevision becomes updateRevision.
    expect((await patchSet(sim, { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } })).code).toBe(200);
    sim.advance(120_000);
    expect(Object.values(await revisionsOf(sim))).toEqual(["web-7c4fb86845", "web-7c4fb86845", "web-7c4fb86845"]);
    expect((await getSet(sim)).status).toMatchObject({
      currentRevision: "web-7c4fb86845",
      updateRevision: "web-7c4fb86845",
      currentReplicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
    });
  });

  it("maxUnavailable 1 replaces one pod at a time, only when every pod is Ready, highest first", async () => {
    const sim = await fixtureSet({ spec: { replicas: 4 } });
    await sim.setImage(ns, "web", "busybox:1.37");
    const downAtOnce: number[] = [];
    for (let t = 0; t < 120_000; t += 500) {
      const pods = sim.list("pods", ns);
      downAtOnce.push(pods.filter((p) => p.status.phase !== "Running").length + (4 - pods.length));
      sim.advance(500);
    }
    expect(Math.max(...downAtOnce)).toBe(1);
    expect(sim.audit.filter((a) => a.verb === "delete" && a.resource === "pods").map((a) => a.name)).toEqual([
      "web-3",
      "web-2",
      "web-1",
      "web-0",
    ]);
    const set = await getSet(sim);
    expect(set.status.currentRevision).toBe(set.status.updateRevision);
    expect(pod(sim, "web-0").spec.containers[0].image).toBe("busybox:1.37");
  });

  it("maxUnavailable 2 replaces two pods at once", async () => {
    const sim = await fixtureSet({ spec: { replicas: 4, maxUnavailable: 2 } });
    await sim.setImage(ns, "web", "busybox:1.37");
    sim.settle();
    const deletes = sim.audit.filter((a) => a.verb === "delete" && a.resource === "pods");
    expect(deletes.map((a) => a.name)).toEqual(["web-3", "web-2"]);
    expect(new Set(deletes.map((a) => a.at)).size).toBe(1);
    sim.advance(120_000);
    const set = await getSet(sim);
    expect(set.status).toMatchObject({
      currentReplicas: 4,
      updatedReplicas: 4,
      currentRevision: set.status.updateRevision,
    });
  });

  it("maxUnavailable as a percent of replicas, rounded down, at least 1", async () => {
    const sim = await fixtureSet({ spec: { replicas: 4, maxUnavailable: "50%", podManagementPolicy: "Parallel" } });
    await sim.setImage(ns, "web", "busybox:1.37");
    sim.settle();
    expect(sim.audit.filter((a) => a.verb === "delete" && a.resource === "pods").map((a) => a.name)).toEqual([
      "web-3",
      "web-2",
    ]);
    const small = await fixtureSet({ spec: { replicas: 4, maxUnavailable: "10%", podManagementPolicy: "Parallel" } });
    await small.setImage(ns, "web", "busybox:1.37");
    small.settle();
    expect(small.audit.filter((a) => a.verb === "delete" && a.resource === "pods").map((a) => a.name)).toEqual([
      "web-3",
    ]);
  });

  it("OnDelete never deletes a pod; a pod a person deletes comes back at the update revision", async () => {
    const sim = await fixtureSet({ spec: { updateStrategy: "OnDelete" } });
    await sim.setImage(ns, "web", "busybox:1.37");
    sim.advance(120_000);
    expect(sim.audit.filter((a) => a.verb === "delete" && a.resource === "pods")).toEqual([]);
    const set = await getSet(sim);
    // updatedReplicas is omitempty: none updated, none written.
    expect(set.status).toMatchObject({ currentReplicas: 3 });
    expect(set.status.updatedReplicas).toBeUndefined();
    await sim.deletePod(ns, "web-0");
    sim.advance(30_000);
    expect(pod(sim, "web-0").metadata.labels["controller-revision-hash"]).toBe(set.status.updateRevision);
  });

  it("metadata.generation rises on every spec change, not on metadata or status writes", async () => {
    const sim = await fixtureSet();
    const g = async () => (await getSet(sim)).metadata.generation;
    expect(await g()).toBe(1);
    await patchSet(sim, { metadata: { annotations: { a: "1" } } });
    expect(await g()).toBe(1);
    await patchSet(sim, { status: { replicas: 7 } }); // the main resource ignores status
    expect((await getSet(sim)).status.replicas).toBe(3);
    await patchSet(sim, { spec: { replicas: 4 } });
    expect(await g()).toBe(2);
    sim.advance(60_000);
    expect((await getSet(sim)).status.observedGeneration).toBe(2);
  });
});

describe("the partition patch over HTTP", () => {
  it("a merge patch of the partition and annotations under a resourceVersion: 200; again with that resourceVersion: 409 as captured", async () => {
    const sim = await fixtureSet();
    await patchSet(sim, { metadata: { annotations: { "claimstep.io/user-partition": "0" } } });
    const rv = (await getSet(sim)).metadata.resourceVersion;
    const ok = await patchSet(sim, {
      metadata: { resourceVersion: rv, annotations: { "claimstep.io/user-partition": null, "claimstep.io/step": "1" } },
      spec: { updateStrategy: { rollingUpdate: { partition: 3 } } },
    });
    expect(ok.code).toBe(200);
    const captured = fixtureStatus("sts-partition-patch.txt");
    expect(ok.body.spec.updateStrategy).toEqual(captured.body.spec.updateStrategy);
    expect(ok.body.metadata.generation).toBe(captured.body.metadata.generation);
    expect(ok.body.metadata.annotations).toEqual({
      "claimstep.io/volume-claim-update-strategy": "InPlace",
      "claimstep.io/step": "1",
    });
    expect(Number(ok.body.metadata.resourceVersion)).toBeGreaterThan(Number(rv));

    const stale = await patchSet(sim, {
      metadata: { resourceVersion: rv },
      spec: { updateStrategy: { rollingUpdate: { partition: 2 } } },
    });
    const expected = fixtureStatus("sts-partition-patch-stale-rv.txt");
    expect(stale.code).toBe(expected.code);
    expect(stale.body).toEqual(expected.body);
    expect((await getSet(sim)).spec.updateStrategy.rollingUpdate.partition).toBe(3);

    // The claim templates stay immutable.
    const templates = structuredClone(ok.body.spec.volumeClaimTemplates);
    templates[0].spec.resources.requests.storage = "2Gi";
    expect((await patchSet(sim, { spec: { volumeClaimTemplates: templates } })).code).toBe(422);
  });
});

describe("the Eviction subresource and PodDisruptionBudgets", () => {
  it("429, 409 and 201 answer with the captured bodies; a failed eviction charges the budget for 2 minutes", async () => {
    const sim = await fixtureSet();
    await sim.addPodDisruptionBudget(ns, "web", { minAvailable: 3, matchLabels: { app: "web" } });
    const uid = pod(sim, "web-2").metadata.uid;

    const blocked = await evict(sim, "web-2", uid);
    expect({ code: blocked.code, body: blocked.body }).toEqual(fixtureStatus("pod-evict-pdb-blocked.txt"));
    expect(sim.get("poddisruptionbudgets", ns, "web")!.status.disruptedPods).toBeUndefined();

    // The budget lowered to 2 (generation 2): one disruption allowed once the controller saw it.
    await sim.admin.mergePatch(
      "poddisruptionbudgets",
      ns,
      "web",
      { spec: { minAvailable: 2 } },
      { fieldManager: "kubectl" },
    );
    // Until the disruption controller has observed generation 2, evictions wait (Retry-After 10).
    const early = await evict(sim, "web-2", uid);
    expect(early.code).toBe(429);
    expect(early.headers.get("Retry-After")).toBe("10");
    expect(early.body.details).toEqual({
      causes: [
        { reason: "DisruptionBudget", message: "The disruption budget web is still being processed by the server." },
      ],
      retryAfterSeconds: 10,
    });
    sim.settle();
    expect(sim.get("poddisruptionbudgets", ns, "web")!.status).toMatchObject({
      disruptionsAllowed: 1,
      observedGeneration: 2,
    });

    const zero = "00000000-0000-0000-0000-000000000000";
    const mismatch = await evict(sim, "web-2", zero);
    const expected = fixtureStatus("pod-evict-uid-mismatch.txt");
    expected.body.message = expected.body.message.replace("c4421219-5e02-4e56-aabe-8b370677cf83", uid);
    expect({ code: mismatch.code, body: mismatch.body }).toEqual(expected);
    expect(pod(sim, "web-2").metadata.uid).toBe(uid); // never stopped

    sim.settle();
    const at = sim.clock.stamp();
    const captured = fixtureJson("pdb-after-failed-eviction.json");
    const pdb = (await call(sim, "GET", `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/web`)).body;
    expect(pdb.metadata.generation).toBe(captured.metadata.generation);
    expect(pdb.spec).toEqual(captured.spec);
    expect(pdb.status).toEqual({
      ...captured.status,
      conditions: [{ ...captured.status.conditions[0], lastTransitionTime: at }],
      disruptedPods: { "web-2": at },
    });

    // Still charged just before DeletionTimeout, free after it (the controller wakes for it).
    sim.advance(119_000);
    expect(sim.get("poddisruptionbudgets", ns, "web")!.status).toMatchObject({
      disruptionsAllowed: 0,
      disruptedPods: { "web-2": at },
    });
    sim.advance(1_000);
    const freed = sim.get("poddisruptionbudgets", ns, "web")!.status;
    expect(freed.disruptedPods).toBeUndefined();
    expect(freed).toMatchObject({
      disruptionsAllowed: 1,
      currentHealthy: 3,
      conditions: [{ type: "DisruptionAllowed", status: "True", reason: "SufficientPods" }],
    });

    const ok = await evict(sim, "web-2", uid);
    expect({ code: ok.code, body: ok.body }).toEqual(fixtureStatus("pod-evict-ok.txt"));
    expect(sim.get("pods", ns, "web-2")).toBeUndefined();
    sim.settle();
    // Re-created at once with a new uid; the budget stays charged for it until DeletionTimeout.
    expect(pod(sim, "web-2").metadata.uid).not.toBe(uid);
    expect(sim.get("poddisruptionbudgets", ns, "web")!.status).toMatchObject({
      disruptionsAllowed: 0,
      disruptedPods: { "web-2": sim.clock.stamp() },
    });
    sim.advance(120_000);
    expect(sim.get("poddisruptionbudgets", ns, "web")!.status).toMatchObject({ disruptionsAllowed: 1 });
    expect(
      sim.audit.filter((a) => a.subresource === "eviction").map((a) => `${a.verb} ${a.name} ${a.outcome}`),
    ).toEqual(["create web-2 429", "create web-2 429", "create web-2 409", "create web-2 ok", "delete web-2 ok"]);
  });

  it("PodDisruptionBudgets over HTTP: create (status is the controller's), get, list; minAvailable with maxUnavailable is refused", async () => {
    const sim = await fixtureSet();
    const path = `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`;
    const pdb = {
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "web" },
      spec: { minAvailable: 2, selector: { matchLabels: { app: "web" } } },
      status: { disruptionsAllowed: 9 },
    };
    const created = await call(sim, "POST", path, pdb);
    expect(created.code).toBe(201);
    expect(created.body.metadata).toMatchObject({ name: "web", namespace: ns, generation: 1 });
    expect(created.body.status).toBeUndefined();
    sim.settle();
    expect((await call(sim, "GET", `${path}/web`)).body.status).toMatchObject({
      disruptionsAllowed: 1,
      currentHealthy: 3,
      desiredHealthy: 2,
      expectedPods: 3,
      observedGeneration: 1,
    });
    const list = await call(sim, "GET", path);
    expect(list.body.kind).toBe("PodDisruptionBudgetList");
    expect(list.body.items.map((i: any) => i.metadata.name)).toEqual(["web"]);
    const both = await call(sim, "POST", path, {
      ...pdb,
      metadata: { name: "both" },
      spec: { ...pdb.spec, maxUnavailable: 1 },
    });
    expect(both.code).toBe(422);
  });

  it("404 for a missing pod; no budget, no deleteOptions or policy/v1beta1: evicted; a body that is not an Eviction: 400", async () => {
    const sim = await fixtureSet();
    const missing = await evict(sim, "web-9");
    expect(missing.code).toBe(404);
    expect(missing.body).toMatchObject({
      reason: "NotFound",
      message: 'pods "web-9" not found',
      details: { name: "web-9", kind: "pods" },
    });
    expect((await evict(sim, "web-2")).code).toBe(201);
    expect((await evict(sim, "web-1", undefined, "policy/v1beta1")).code).toBe(201);
    expect(
      (
        await call(sim, "POST", `/api/v1/namespaces/${ns}/pods/web-0/eviction`, {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "web-0" },
        })
      ).code,
    ).toBe(400);
    expect((await call(sim, "POST", `/api/v1/namespaces/${ns}/pods/web-0/eviction`, EVICTION("web-1"))).code).toBe(400);
    expect(pod(sim, "web-0")).toBeDefined();
    expect(sim.http.counters().byRequest).toEqual({ "create pods/eviction": 5 });
  });

  it("more than one budget: a Status with code 500; a pod that is not Ready is evicted without charging a healthy budget", async () => {
    const sim = await fixtureSet();
    await sim.addPodDisruptionBudget(ns, "a", { maxUnavailable: 1, matchLabels: { app: "web" } });
    expect(sim.get("poddisruptionbudgets", ns, "a")!.status).toMatchObject({
      expectedPods: 3,
      desiredHealthy: 2,
      currentHealthy: 3,
      disruptionsAllowed: 1,
    });
    await sim.addPodDisruptionBudget(ns, "b", { minAvailable: "50%", matchLabels: { app: "web" } });
    expect(sim.get("poddisruptionbudgets", ns, "b")!.status).toMatchObject({ expectedPods: 3, desiredHealthy: 2 });
    const two = await evict(sim, "web-2");
    expect(two.code).toBe(500);
    expect(two.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
      code: 500,
    });
    expect(pod(sim, "web-2")).toBeDefined();

    await sim.admin.delete("poddisruptionbudgets", ns, "b", { fieldManager: "kubectl" });
    sim.update("pods", ns, "web-1", (p) => (p.status.conditions = [{ type: "Ready", status: "False" }]), "kubelet");
    sim.settle();
    // currentHealthy 2 ≥ desiredHealthy 2: the unready pod goes without charging the budget.
    expect((await evict(sim, "web-1")).code).toBe(201);
    expect(sim.get("poddisruptionbudgets", ns, "a")!.status.disruptedPods).toBeUndefined();
  });

  it("RBAC: `pods` does not grant `pods/eviction`; `pods/eviction` or `*/eviction` does", async () => {
    const rules = (resources: string[]) => ({
      anonymous: {
        user: "claimstep",
        rules: [{ apiGroups: [""], resources, verbs: ["create", "get", "list", "delete"] }],
      },
    });
    const denied = await fixtureSet({ cluster: rules(["pods"]) });
    const refused = await evict(denied, "web-2");
    expect(refused.code).toBe(403);
    expect(refused.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message:
        'pods "web-2" is forbidden: User "claimstep" cannot create resource "pods/eviction" in API group "" in the namespace "fx"',
      reason: "Forbidden",
      details: { name: "web-2", kind: "pods" },
      code: 403,
    });
    // A person (or anyone with delete on pods) may still delete a pod outright: claimstep never does.
    expect((await call(denied, "DELETE", `/api/v1/namespaces/${ns}/pods/web-2`)).code).toBe(200);
    expect((await evict(await fixtureSet({ cluster: rules(["pods/eviction"]) }), "web-2")).code).toBe(201);
    expect((await evict(await fixtureSet({ cluster: rules(["*/eviction"]) }), "web-2")).code).toBe(201);
    const onlyEviction = await fixtureSet({ cluster: rules(["pods/eviction"]) });
    expect((await call(onlyEviction, "GET", `/api/v1/namespaces/${ns}/pods/web-2`)).code).toBe(403);
    onlyEviction.http.deny("create", "pods/eviction");
    expect((await evict(onlyEviction, "web-2")).code).toBe(403);
  });
});

describe("volumes that finish growing only when their pod restarts", () => {
  const grow = (sim: SimCluster, name: string, storage: string) =>
    sim.admin.mergePatch(
      "persistentvolumeclaims",
      ns,
      name,
      { spec: { resources: { requests: { storage } } } },
      { fieldManager: "kubectl" },
    );
  const resizeState = (sim: SimCluster, name: string) => {
    const c = claim(sim, name);
    return {
      allocation: c.status.allocatedResourceStatuses?.storage,
      conditions: (c.status.conditions ?? []).map((x: any) => x.type),
      capacity: c.status.capacity.storage,
    };
  };

  it("nodeExpansion offline: the claim stays NodeResizePending + FileSystemResizePending while the pod runs, and finishes when it restarts", async () => {
    const sim = await fixtureSet({ driver: { resize: "online", nodeExpansion: "offline" } });
    await grow(sim, "data-web-2", "2Gi");
    sim.advance(10 * 60_000);
    expect(resizeState(sim, "data-web-2")).toEqual({
      allocation: "NodeResizePending",
      conditions: ["Resizing", "FileSystemResizePending"],
      capacity: "1Gi",
    });
    expect(pod(sim, "web-2").status.phase).toBe("Running");
    const uid = pod(sim, "web-2").metadata.uid;
    expect((await evict(sim, "web-2", uid)).code).toBe(201);
    sim.advance(30_000);
    expect(resizeState(sim, "data-web-2")).toEqual({ allocation: undefined, conditions: [], capacity: "2Gi" });
    expect(pod(sim, "web-2").status.phase).toBe("Running");
    expect(pod(sim, "web-2").metadata.uid).not.toBe(uid);
  });

  it("an offline-only driver: in use while the pod runs; once the pod is evicted the resizer proceeds at once and the pod starts only after it, mounting finishes the resize", async () => {
    const sim = await fixtureSet({
      driver: { resize: "offline", driverName: "offline.csi.example.com" },
      cluster: { latencies: { podStartMs: 100, reactMs: 2_000 } },
    });
    await grow(sim, "data-web-2", "2Gi");
    // Until the first refusal (the retry is then retryMs = 15 s away).
    for (
      let t = 0;
      t < 60_000 && !resizeState(sim, "data-web-2").conditions.includes("ControllerResizeError");
      t += 100
    )
      sim.advance(100);
    const error = claim(sim, "data-web-2").status.conditions.find((x: any) => x.type === "ControllerResizeError");
    expect(error.message).toMatch(/is in use by pod web-2; the driver only supports offline expansion/);
    sim.advance(60_000);
    expect(resizeState(sim, "data-web-2")).toMatchObject({ allocation: "ControllerResizeInProgress", capacity: "1Gi" });

    expect((await evict(sim, "web-2", pod(sim, "web-2").metadata.uid)).code).toBe(201);
    sim.advance(1_000);
    // Re-created, but not started while the expansion it waits for is pending.
    expect(pod(sim, "web-2").status.phase).toBe("Pending");
    sim.advance(4_000);
    expect(resizeState(sim, "data-web-2")).toEqual({ allocation: undefined, conditions: [], capacity: "2Gi" });
    expect(pod(sim, "web-2").status.phase).toBe("Running");
  });
});

describe("toJSON / restore in the middle of a rolling update", () => {
  it("a restored cluster continues the rollout and the budget's expiry exactly as the one never saved", async () => {
    const sim = await fixtureSet({ spec: { replicas: 4 } });
    await sim.addPodDisruptionBudget(ns, "web", { maxUnavailable: 1, matchLabels: { app: "web" } });
    await evict(sim, "web-0", "00000000-0000-0000-0000-000000000000"); // charges the budget, 409
    await sim.setImage(ns, "web", "busybox:1.37");
    sim.advance(1_500); // web-3 replaced, not yet Ready
    expect(pod(sim, "web-3").status.phase).toBe("Pending");
    const back = SimCluster.restore(JSON.parse(JSON.stringify(sim.toJSON())));
    const view = async (c: SimCluster) => ({
      pods: (await listPods(c)).map((p) => [
        p.metadata.name,
        p.metadata.uid,
        p.metadata.labels["controller-revision-hash"],
        p.status.phase,
      ]),
      set: (await getSet(c)).status,
      revisions: c.list("controllerrevisions", ns).map((r) => [r.metadata.name, r.revision]),
      pdb: c.get("poddisruptionbudgets", ns, "web")!.status,
    });
    expect(await view(back)).toEqual(await view(sim));
    for (const step of [30_000, 90_000, 120_000]) {
      sim.advance(step);
      back.advance(step);
      expect(await view(back)).toEqual(await view(sim));
    }
    const done = await view(back);
    expect(done.set.currentRevision).toBe(done.set.updateRevision);
    expect(done.pdb.disruptedPods).toBeUndefined();
  });
});
