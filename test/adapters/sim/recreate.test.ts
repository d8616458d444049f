// Re-creating a StatefulSet with new claim templates (issue 14), on the simulated cluster over
// HTTP as claimstep reaches it: DELETE with propagationPolicy Orphan and preconditions
// (sts-delete-orphan-precond.txt, sts-delete-orphan-stale-rv.txt), the orphan finalizer and the
// garbage collector, a careless Background delete, persistentVolumeClaimRetentionPolicy, POST of
// the set again (sts-create-recreated.txt, sts-create-exists.txt), adoption without restarts,
// ConfigMaps (configmap-create.txt, configmap-create-exists.txt) and a request whose answer is lost.
import { describe, expect, it } from "vitest";
import { type RetentionPolicy, SimCluster } from "../../../adapters/sim/cluster.js";
import { type Identity, SIM_SERVER } from "../../../adapters/sim/http.js";
import type { SimClusterOptions } from "../../../adapters/sim/options.js";
import { fixtureStatus } from "../../fixtures/apiserver.js";

const ns = "fx";
const SETS = `/apis/apps/v1/namespaces/${ns}/statefulsets`;
const CONFIGMAPS = `/api/v1/namespaces/${ns}/configmaps`;
/** When the second capture deleted and re-created the set (the fixtures' timestamps). */
const CAPTURED_AT = new Date("2026-11-30T16:35:18Z");

async function call(
  sim: SimCluster,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await sim.http.fetch(
    new Request(`${SIM_SERVER}${path}`, {
      method,
      headers: { "Content-Type": "application/json", ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }),
  );
  return { code: res.status, body: (await res.json()) as any };
}

const deleteOptions = (preconditions: { uid?: string; resourceVersion?: string }, propagationPolicy?: string) => ({
  kind: "DeleteOptions",
  apiVersion: "v1",
  ...(propagationPolicy ? { propagationPolicy } : {}),
  preconditions,
});
const getSet = (sim: SimCluster) => call(sim, "GET", `${SETS}/web`);
const pods = (sim: SimCluster) => sim.list("pods", ns).filter((p) => /^web-\d+$/.test(p.metadata.name));
const claims = (sim: SimCluster) => sim.list("persistentvolumeclaims", ns);
const uids = (objects: { metadata: { name: string; uid?: string } }[]) =>
  Object.fromEntries(objects.map((o) => [o.metadata.name, o.metadata.uid]));
const ownerUids = (objects: { metadata: { name: string; ownerReferences?: { uid: string }[] } }[]) =>
  Object.fromEntries(objects.map((o) => [o.metadata.name, (o.metadata.ownerReferences ?? []).map((r) => r.uid)]));

/** sts-create-recreated.txt's set as a client POSTs it: no server-set metadata, no status; `storage` for template `data`. */
function manifest(storage: string, change?: (set: any) => void): any {
  const set = structuredClone(fixtureStatus("sts-create-recreated.txt").body);
  for (const k of ["uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"])
    delete set.metadata[k];
  delete set.status;
  set.spec.volumeClaimTemplates[0].spec.resources.requests.storage = storage;
  change?.(set);
  return set;
}

/**
 * The second capture's set made through the API: `web` in `fx`, 3 replicas, template `data` 1Gi of
 * class `fast`, pod template as captured (busybox, annotation rev: "2"), retention `policy`.
 */
async function capturedSet(opts: { policy?: RetentionPolicy; cluster?: SimClusterOptions } = {}): Promise<SimCluster> {
  const sim = new SimCluster({ volumeAttributesClasses: false, ...opts.cluster });
  await sim.addStorageClass("fast", { allowVolumeExpansion: true });
  const created = await call(
    sim,
    "POST",
    SETS,
    manifest("1Gi", (s) => {
      s.spec.persistentVolumeClaimRetentionPolicy = { whenDeleted: "Delete", whenScaled: "Retain", ...opts.policy };
    }),
  );
  expect(created.code).toBe(201);
  sim.advance(10 * 60_000);
  return sim;
}

/** Orphan-delete the set (query parameter and DeleteOptions body, current preconditions) and let the GC finish. */
async function orphanDelete(sim: SimCluster): Promise<any> {
  const live = (await getSet(sim)).body;
  const deleted = await call(
    sim,
    "DELETE",
    `${SETS}/web?propagationPolicy=Orphan`,
    deleteOptions({ uid: live.metadata.uid, resourceVersion: live.metadata.resourceVersion }),
  );
  expect(deleted.code).toBe(200);
  sim.advance(1_000);
  expect((await getSet(sim)).code).toBe(404);
  return live;
}

/** A Status or object with the server-set fields of `from` (uid, resourceVersion, creationTimestamp) and no managedFields. */
function comparable(o: any, from?: any): any {
  const c = structuredClone(o);
  delete c.metadata.managedFields;
  if (from) for (const k of ["uid", "resourceVersion", "creationTimestamp"]) c.metadata[k] = from.metadata[k];
  return c;
}

describe("DELETE of a StatefulSet with propagationPolicy Orphan", () => {
  /** The set of sts-delete-orphan-precond.txt as it stood before the delete (resourceVersion 947), seeded as captured. */
  function seededAsCaptured(): { sim: SimCluster; captured: any } {
    const captured = fixtureStatus("sts-delete-orphan-precond.txt").body;
    const before = structuredClone(captured);
    for (const k of ["deletionTimestamp", "deletionGracePeriodSeconds", "finalizers"]) delete before.metadata[k];
    before.metadata.resourceVersion = "947";
    const sim = new SimCluster({ volumeAttributesClasses: false, start: CAPTURED_AT });
    sim.seed(before);
    return { sim, captured };
  }

  it("answers a stale resourceVersion precondition as sts-delete-orphan-stale-rv.txt, then the current one as sts-delete-orphan-precond.txt", async () => {
    const { sim, captured } = seededAsCaptured();
    const uid = captured.metadata.uid;
    const stale = await call(sim, "DELETE", `${SETS}/web`, deleteOptions({ uid, resourceVersion: "1" }, "Orphan"));
    expect(stale).toEqual(fixtureStatus("sts-delete-orphan-stale-rv.txt"));
    const deleted = await call(sim, "DELETE", `${SETS}/web`, deleteOptions({ uid, resourceVersion: "947" }, "Orphan"));
    expect(deleted.code).toBe(200);
    expect(Number(deleted.body.metadata.resourceVersion)).toBeGreaterThan(947);
    expect(comparable(deleted.body)).toEqual(
      comparable({
        ...captured,
        metadata: { ...captured.metadata, resourceVersion: deleted.body.metadata.resourceVersion },
      }),
    );
    // The delete is no field manager's write: the owners are those captured.
    expect(deleted.body.metadata.managedFields.map((m: any) => m.manager)).toEqual(
      captured.metadata.managedFields.map((m: any) => m.manager),
    );
    // A uid precondition that does not match names the kind with its group.
    const wrongUid = await call(
      sim,
      "DELETE",
      `${SETS}/web`,
      deleteOptions({ uid: "00000000-0000-0000-0000-000000000000" }, "Orphan"),
    );
    expect(wrongUid.code).toBe(409);
    expect(wrongUid.body.message).toBe(
      `Operation cannot be fulfilled on StatefulSet.apps "web": the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
    );
    expect(wrongUid.body.details).toEqual({ name: "web", group: "apps", kind: "StatefulSet" });
  });

  it("the set stays, deletionTimestamp and finalizer orphan, until the garbage collector is done; a DELETE again answers it unchanged; a POST meanwhile is 409 as sts-create-exists.txt", async () => {
    const { sim, captured } = seededAsCaptured();
    const deleted = await call(
      sim,
      "DELETE",
      `${SETS}/web?propagationPolicy=Orphan`,
      deleteOptions({ uid: captured.metadata.uid }),
    );
    expect(deleted.code).toBe(200);
    sim.advance(100);
    const lingering = await getSet(sim);
    expect(lingering.code).toBe(200);
    expect(lingering.body).toEqual(deleted.body);
    const again = await call(sim, "DELETE", `${SETS}/web`);
    expect(again).toEqual({ code: 200, body: deleted.body });
    expect(await call(sim, "POST", SETS, manifest("2Gi"))).toEqual(fixtureStatus("sts-create-exists.txt"));
    sim.advance(1_000);
    expect((await getSet(sim)).code).toBe(404);
    expect(
      sim.audit
        .filter((e) => e.resource === "statefulsets" && e.verb === "delete" && e.outcome === "ok")
        .map((e) => e.actor),
    ).toContain("garbage-collector");
  });

  it("keeps every pod (same uid, not restarted) and claim, and the GC takes the old set's ownerReferences off them", async () => {
    const sim = await capturedSet();
    const podsBefore = pods(sim);
    const claimsBefore = claims(sim);
    const setUid = (await getSet(sim)).body.metadata.uid;
    // With whenDeleted: Delete the controller owns the claims for the set (controller reference, as KEP-1847 now has it).
    expect(claimsBefore.map((c) => c.metadata.ownerReferences)).toEqual(
      claimsBefore.map(() => [
        {
          apiVersion: "apps/v1",
          kind: "StatefulSet",
          name: "web",
          uid: setUid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]),
    );
    const deleted = await call(sim, "DELETE", `${SETS}/web?propagationPolicy=Orphan`, deleteOptions({ uid: setUid }));
    expect(deleted.body.metadata).toMatchObject({ finalizers: ["orphan"], deletionGracePeriodSeconds: 0 });
    sim.advance(100);
    // Before the GC: still owned.
    expect(Object.values(ownerUids(pods(sim)))).toEqual([[setUid], [setUid], [setUid]]);
    sim.advance(1_000);
    expect((await getSet(sim)).code).toBe(404);
    expect(uids(pods(sim))).toEqual(uids(podsBefore));
    expect(uids(claims(sim))).toEqual(uids(claimsBefore));
    expect(pods(sim).map((p) => [p.metadata.creationTimestamp, p.status.phase])).toEqual(
      podsBefore.map((p) => [p.metadata.creationTimestamp, "Running"]),
    );
    expect(ownerUids(pods(sim))).toEqual({ "web-0": [], "web-1": [], "web-2": [] });
    expect(ownerUids(claims(sim))).toEqual({ "data-web-0": [], "data-web-1": [], "data-web-2": [] });
    expect(sim.list("controllerrevisions", ns).every((r) => !r.metadata.ownerReferences)).toBe(true);
    expect(claims(sim).every((c) => !c.metadata.deletionTimestamp)).toBe(true);
  });
});

describe("a careless DELETE without Orphan", () => {
  it("of a whenDeleted: Delete set: Status Success, the set gone at once, then the GC deletes its pods and LOSES its claims", async () => {
    const sim = await capturedSet();
    const setUid = (await getSet(sim)).body.metadata.uid;
    const deleted = await call(sim, "DELETE", `${SETS}/web`);
    expect(deleted).toEqual({
      code: 200,
      body: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Success",
        details: { name: "web", group: "apps", kind: "statefulsets", uid: setUid },
      },
    });
    expect((await getSet(sim)).code).toBe(404);
    expect(pods(sim)).toHaveLength(3);
    sim.advance(5_000);
    expect(pods(sim)).toHaveLength(0);
    expect(claims(sim)).toHaveLength(0);
    expect(sim.list("controllerrevisions", ns)).toHaveLength(0);
  });

  it("of a Retain set: pods go, claims stay (nothing owns them)", async () => {
    const sim = await capturedSet({ policy: { whenDeleted: "Retain" } });
    expect(claims(sim).every((c) => !c.metadata.ownerReferences)).toBe(true);
    expect((await call(sim, "DELETE", `${SETS}/web?propagationPolicy=Background`)).code).toBe(200);
    sim.advance(5_000);
    expect(pods(sim)).toHaveLength(0);
    expect(claims(sim).map((c) => c.metadata.name)).toEqual(["data-web-0", "data-web-1", "data-web-2"]);
  });

  it("Foreground: the set stays (finalizer foregroundDeletion) until the GC has deleted its pods and claims", async () => {
    const sim = await capturedSet();
    const deleted = await call(sim, "DELETE", `${SETS}/web`, {
      kind: "DeleteOptions",
      apiVersion: "v1",
      propagationPolicy: "Foreground",
    });
    expect(deleted.code).toBe(200);
    expect(deleted.body.metadata.finalizers).toEqual(["foregroundDeletion"]);
    sim.advance(100);
    expect((await getSet(sim)).code).toBe(200);
    sim.advance(5_000);
    expect((await getSet(sim)).code).toBe(404);
    expect(pods(sim)).toHaveLength(0);
    expect(claims(sim)).toHaveLength(0);
  });
});

describe("POST of the set again", () => {
  it("answers 201 as sts-create-recreated.txt: new uid, generation 1, zero status; adopts the pods without restarts and re-owns the claims", async () => {
    const sim = await capturedSet({ cluster: { start: new Date(CAPTURED_AT.getTime() - 10 * 60_000 - 1_000) } });
    const podsBefore = pods(sim);
    const claimsBefore = claims(sim);
    const old = await orphanDelete(sim);
    expect(sim.now()).toEqual(CAPTURED_AT);
    const created = await call(sim, "POST", SETS, manifest("2Gi"), { "User-Agent": "curl/8.5.0" });
    const expected = fixtureStatus("sts-create-recreated.txt");
    expect(created.code).toBe(expected.code);
    expect(comparable(created.body, expected.body)).toEqual(comparable(expected.body));
    expect(created.body.metadata.uid).not.toBe(old.metadata.uid);
    expect(created.body.metadata.creationTimestamp).toBe(expected.body.metadata.creationTimestamp);
    expect(created.body.metadata.managedFields.map((m: any) => [m.manager, m.operation])).toEqual([["curl", "Update"]]);
    expect(await call(sim, "POST", SETS, manifest("2Gi"))).toEqual(fixtureStatus("sts-create-exists.txt"));

    sim.advance(10_000);
    const newUid = created.body.metadata.uid;
    expect(uids(pods(sim))).toEqual(uids(podsBefore));
    expect(pods(sim).map((p) => p.metadata.labels["controller-revision-hash"])).toEqual(
      podsBefore.map((p) => p.metadata.labels["controller-revision-hash"]),
    );
    expect(ownerUids(pods(sim))).toEqual({ "web-0": [newUid], "web-1": [newUid], "web-2": [newUid] });
    expect(uids(claims(sim))).toEqual(uids(claimsBefore));
    expect(ownerUids(claims(sim))).toEqual({ "data-web-0": [newUid], "data-web-1": [newUid], "data-web-2": [newUid] });
    // The claims keep their size: the templates only apply to claims the controller creates.
    expect(claims(sim).map((c) => c.spec.resources.requests.storage)).toEqual(["1Gi", "1Gi", "1Gi"]);
    const set = (await getSet(sim)).body;
    expect(set.status).toMatchObject({
      observedGeneration: 1,
      replicas: 3,
      readyReplicas: 3,
      updatedReplicas: 3,
      currentRevision: old.status.currentRevision,
      updateRevision: old.status.currentRevision,
    });
    // No pod was deleted by the controller after the re-create.
    expect(sim.audit.filter((e) => e.resource === "pods" && e.verb === "delete")).toEqual([]);
  });

  it("with a changed pod template: the adopted pods are rolled to the new revision (new uids), claims kept", async () => {
    const sim = await capturedSet();
    const podsBefore = pods(sim);
    const claimsBefore = claims(sim);
    const old = await orphanDelete(sim);
    const created = await call(
      sim,
      "POST",
      SETS,
      manifest("2Gi", (s) => (s.spec.template.metadata.annotations.rev = "3")),
    );
    expect(created.code).toBe(201);
    sim.advance(10 * 60_000);
    const set = (await getSet(sim)).body;
    expect(set.status.updateRevision).not.toBe(old.status.updateRevision);
    expect(set.status).toMatchObject({
      currentRevision: set.status.updateRevision,
      updatedReplicas: 3,
      readyReplicas: 3,
    });
    const now = pods(sim);
    expect(now.map((p) => p.metadata.labels["controller-revision-hash"])).toEqual([
      set.status.updateRevision,
      set.status.updateRevision,
      set.status.updateRevision,
    ]);
    expect(now.every((p) => p.metadata.uid !== uids(podsBefore)[p.metadata.name])).toBe(true);
    expect(uids(claims(sim))).toEqual(uids(claimsBefore));
  });

  it("a scale-up after a re-create with bigger templates creates the new claim at the new size", async () => {
    const sim = await capturedSet();
    await orphanDelete(sim);
    expect((await call(sim, "POST", SETS, manifest("2Gi"))).code).toBe(201);
    sim.advance(10_000);
    await sim.scale(ns, "web", 4);
    sim.advance(60_000);
    expect(claims(sim).map((c) => [c.metadata.name, c.spec.resources.requests.storage])).toEqual([
      ["data-web-0", "1Gi"],
      ["data-web-1", "1Gi"],
      ["data-web-2", "1Gi"],
      ["data-web-3", "2Gi"],
    ]);
    expect(pods(sim)).toHaveLength(4);
  });

  it("before the GC has orphaned the pods, a set re-created in their place cannot adopt pods still owned by the old one", async () => {
    const sim = await capturedSet();
    const old = (await getSet(sim)).body;
    await call(sim, "DELETE", `${SETS}/web?propagationPolicy=Orphan`, deleteOptions({ uid: old.metadata.uid }));
    expect((await call(sim, "POST", SETS, manifest("2Gi"))).code).toBe(409);
    sim.advance(1_000);
    expect((await call(sim, "POST", SETS, manifest("2Gi"))).code).toBe(201);
  });
});

describe("persistentVolumeClaimRetentionPolicy", () => {
  it("a create defaults it to Retain/Retain; switching to whenDeleted: Delete owns the claims, back to Retain drops the reference", async () => {
    const sim = new SimCluster({ volumeAttributesClasses: false });
    await sim.addStorageClass("fast", { allowVolumeExpansion: true });
    const created = await call(
      sim,
      "POST",
      SETS,
      manifest("1Gi", (s) => delete s.spec.persistentVolumeClaimRetentionPolicy),
    );
    expect(created.body.spec.persistentVolumeClaimRetentionPolicy).toEqual({
      whenDeleted: "Retain",
      whenScaled: "Retain",
    });
    sim.advance(10 * 60_000);
    expect(claims(sim).every((c) => !c.metadata.ownerReferences)).toBe(true);
    await sim.setRetentionPolicy(ns, "web", { whenDeleted: "Delete" });
    sim.settle();
    const uid = created.body.metadata.uid;
    expect(Object.values(ownerUids(claims(sim)))).toEqual([[uid], [uid], [uid]]);
    await sim.setRetentionPolicy(ns, "web", { whenDeleted: "Retain" });
    sim.settle();
    expect(Object.values(ownerUids(claims(sim)))).toEqual([[], [], []]);
  });

  it("whenScaled: Delete: a scale-down deletes the condemned pod's claim after the pod; Retain keeps it", async () => {
    const sim = await capturedSet({ policy: { whenScaled: "Delete" } });
    await sim.scale(ns, "web", 2);
    sim.advance(5_000);
    expect(pods(sim).map((p) => p.metadata.name)).toEqual(["web-0", "web-1"]);
    expect(claims(sim).map((c) => c.metadata.name)).toEqual(["data-web-0", "data-web-1"]);
    const kept = await capturedSet();
    await kept.scale(ns, "web", 2);
    kept.advance(5_000);
    expect(claims(kept).map((c) => c.metadata.name)).toEqual(["data-web-0", "data-web-1", "data-web-2"]);
  });
});

describe("ConfigMaps", () => {
  const record = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "claimstep-web-recreate", namespace: ns },
    data: { "statefulset.json": "{}" },
  };

  it("create answers as configmap-create.txt, again as configmap-create-exists.txt; get, list; delete with a uid precondition", async () => {
    const sim = new SimCluster({ volumeAttributesClasses: false, start: CAPTURED_AT });
    const created = await call(sim, "POST", CONFIGMAPS, record, { "User-Agent": "curl/8.5.0" });
    const expected = fixtureStatus("configmap-create.txt");
    expect(created.code).toBe(expected.code);
    expect(comparable(created.body, expected.body)).toEqual(comparable(expected.body));
    expect(created.body.metadata.creationTimestamp).toBe(expected.body.metadata.creationTimestamp);
    // A map the create brought into being is owned as a node too (`".": {}`), as captured.
    expect(created.body.metadata.managedFields).toEqual(expected.body.metadata.managedFields);
    expect(await call(sim, "POST", CONFIGMAPS, record)).toEqual(fixtureStatus("configmap-create-exists.txt"));

    expect(await call(sim, "GET", `${CONFIGMAPS}/claimstep-web-recreate`)).toEqual({ code: 200, body: created.body });
    const list = await call(sim, "GET", CONFIGMAPS);
    expect(list.body.kind).toBe("ConfigMapList");
    expect(list.body.items.map((i: any) => i.metadata.name)).toEqual(["claimstep-web-recreate"]);

    const uid = created.body.metadata.uid;
    const wrong = await call(
      sim,
      "DELETE",
      `${CONFIGMAPS}/claimstep-web-recreate`,
      deleteOptions({ uid: "00000000-0000-0000-0000-000000000000" }),
    );
    expect(wrong).toEqual({
      code: 409,
      body: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `Operation cannot be fulfilled on ConfigMap "claimstep-web-recreate": the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
        reason: "Conflict",
        details: { name: "claimstep-web-recreate", kind: "ConfigMap" },
        code: 409,
      },
    });
    const deleted = await call(sim, "DELETE", `${CONFIGMAPS}/claimstep-web-recreate`, deleteOptions({ uid }));
    expect(deleted).toEqual({
      code: 200,
      body: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Success",
        details: { name: "claimstep-web-recreate", kind: "configmaps", uid },
      },
    });
    expect((await call(sim, "GET", `${CONFIGMAPS}/claimstep-web-recreate`)).code).toBe(404);
  });

  it("RBAC: create, get and delete on configmaps are needed; kept by toJSON/restore", async () => {
    const rules = (verbs: string[]): Identity => ({
      user: "claimstep",
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs }],
    });
    const denied = new SimCluster({ anonymous: rules(["get"]) });
    const refused = await call(denied, "POST", CONFIGMAPS, record);
    expect(refused.code).toBe(403);
    expect(refused.body.message).toBe(
      `configmaps is forbidden: User "claimstep" cannot create resource "configmaps" in API group "" in the namespace "${ns}"`,
    );
    const sim = new SimCluster({ anonymous: rules(["create", "get", "delete"]) });
    expect((await call(sim, "POST", CONFIGMAPS, record)).code).toBe(201);
    const back = SimCluster.restore(JSON.parse(JSON.stringify(sim.toJSON())));
    expect(back.get("configmaps", ns, "claimstep-web-recreate")).toEqual(
      sim.get("configmaps", ns, "claimstep-web-recreate"),
    );
  });
});

describe("a request that lands but whose answer is lost", () => {
  it("the orphan DELETE and the POST are applied although the client sees 504 (or 503); the retry finds them done", async () => {
    const sim = await capturedSet();
    const uid = (await getSet(sim)).body.metadata.uid;
    sim.http.failNext("delete statefulsets", { lost: true });
    const lost = await call(sim, "DELETE", `${SETS}/web?propagationPolicy=Orphan`, deleteOptions({ uid }));
    expect(lost.code).toBe(504);
    expect(lost.body.reason).toBe("Timeout");
    expect((await getSet(sim)).body.metadata.finalizers).toEqual(["orphan"]);
    sim.advance(1_000);
    sim.http.failNext("create statefulsets", { lost: true, code: 503 });
    expect((await call(sim, "POST", SETS, manifest("2Gi"))).code).toBe(503);
    expect((await getSet(sim)).body.metadata.uid).not.toBe(uid);
    expect((await call(sim, "POST", SETS, manifest("2Gi"))).code).toBe(409);
  });

  it("a lost answer to a refused request is still only a timeout (the refusal happened)", async () => {
    const sim = await capturedSet();
    sim.http.failNext("delete statefulsets", { lost: true });
    expect(
      (
        await call(
          sim,
          "DELETE",
          `${SETS}/web`,
          deleteOptions({ uid: "00000000-0000-0000-0000-000000000000" }, "Orphan"),
        )
      ).code,
    ).toBe(504);
    expect((await getSet(sim)).body.metadata.deletionTimestamp).toBeUndefined();
    expect(sim.audit.at(-1)).toMatchObject({ verb: "delete", resource: "statefulsets", outcome: 409 });
  });
});

describe("saved mid-deletion", () => {
  it("toJSON/restore keeps the GC's pending work: the restored cluster finishes the orphan delete", async () => {
    const sim = await capturedSet();
    const uid = (await getSet(sim)).body.metadata.uid;
    await call(sim, "DELETE", `${SETS}/web?propagationPolicy=Orphan`, deleteOptions({ uid }));
    sim.advance(100);
    const back = SimCluster.restore(JSON.parse(JSON.stringify(sim.toJSON())));
    expect(back.toJSON()).toEqual(sim.toJSON());
    back.advance(1_000);
    expect(back.get("statefulsets", ns, "web")).toBeUndefined();
    expect(pods(back).every((p) => !p.metadata.ownerReferences)).toBe(true);
    expect(claims(back)).toHaveLength(3);
  });
});
