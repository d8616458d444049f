// Issue 33's proof on a real API server (kube-apiserver + kube-controller-manager v1.34, the node
// agent as kubelet and CSI driver): claimstep's shipped modes run AS DEPLOYED — deployment.yaml's
// `claimstep serve` (two replicas, the Lease, the interval) and cronjob.yaml's `step --all` on a
// schedule, under the ServiceAccount and RBAC of rbac.yaml + rbac-finalize.yaml (support/deployed.ts)
// — with no CLI invocation after the change is requested (an admin's annotation of the set, or
// `claimstep set … --add/--remove`): a re-create started by any of them is finished by them, the set
// missing only for a moment (orphan delete → create measured in the audit log, per mode); the sweeper
// SIGKILLed right after the orphan delete and the other replica finishing; a GitOps self-heal that
// re-creates the set from the old manifest in the window, reported; and a record planted by a
// ServiceAccount that may only create ConfigMaps, never acted on (while the set exists; and, once a
// person's orphan delete removed it, when the record holds another set).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CronLoop,
  type Deployed,
  type SetWatch,
  shippedServer,
  startCronLoop,
  startDeployment,
  watchSets,
} from "./support/deployed.js";
import {
  type AuditEntry,
  byNodeAgent,
  checkAudit,
  describeAudit,
  type KubeObject,
  ok,
  Rest,
  storageClass,
  useControlPlane,
  waitFor,
} from "./support/index.js";
import { Informer } from "./support/informer.js";
import { auditCaughtUp, claimstep, describeRun, routineErrors, sleep } from "./support/scenario-finalize.js";
import {
  claimNamesOf,
  cleanTemplates,
  describeState,
  isReady,
  K,
  setPods,
  templateClaims,
  templatesSetManifest,
  uidMap,
} from "./support/scenario-templates.js";

const e2e = useControlPlane({ prefix: "deployed", needsFakeDriver: true });
let sc = "";
const report: string[] = [];
const timings: string[] = [];

/** deployment.yaml's interval is 60 s; the scenarios ask for 2 s (as the issue's run did). */
const INTERVAL_SECONDS = 2;
/** The cron loop's period (cronjob.yaml: every two minutes). */
const CRON_PERIOD_MS = 5_000;
/**
 * The longest a set may be missing between claimstep's orphan delete and its create: the issue
 * asks for about 2 s in every mode (the sweep steps the set again within about a second until it
 * exists; the garbage collector's orphan finalizer takes part of it); 5 s on a loaded 2-core machine.
 */
const MISSING_BOUND_MS = 5_000;
/** A set missing this long after the orphan delete is not coming back: the scenario fails there. */
const GIVE_UP_MISSING_MS = 25_000;
const RECORD = (set: string) => `claimstep-recreate-${set}`;

beforeAll(async () => {
  if (!e2e.available) return;
  sc = `${e2e.namespace}-fast`;
  ok(await e2e.admin.create("storageclasses", null, storageClass(sc, { resizeLatencyMs: 300 })), `create ${sc}`);
});

afterAll(async () => {
  if (!e2e.available) return;
  await e2e.admin.delete("storageclasses", null, sc).catch(() => undefined);
  console.log(
    `issue 33, claimstep as deployed on the real server (${e2e.info.version}):\n${report.join("\n")}\norphan delete → create, per mode (audit log):\n${timings.join("\n") || "  (none measured)"}`,
  );
});

// ---------------------------------------------------------------------------------------------
// the admin's sets and requests

type Policy = "OrderedReady" | "Parallel";

/** Creates the set (as an admin or a GitOps tool applies it) and waits until it runs. */
async function createSet(
  name: string,
  o: { policy?: Policy; replicas?: number; annotations?: Record<string, string> } = {},
): Promise<KubeObject> {
  const replicas = o.replicas ?? 3;
  const m = gitManifest(name, o);
  ok(await e2e.api.create("statefulsets", m), `create StatefulSet ${name}`);
  await waitFor(
    async () => {
      const s = (await e2e.api.get("statefulsets", name)).body;
      const pods = await setPods(e2e, name);
      const data = await templateClaims(e2e, name, "data");
      return (
        s.status?.readyReplicas === replicas &&
        s.status?.observedGeneration === s.metadata.generation &&
        s.status?.currentRevision === s.status?.updateRevision &&
        pods.filter(isReady).length === replicas &&
        data.length === replicas &&
        data.every((c) => c.status?.phase === "Bound")
      );
    },
    { timeoutMs: 60_000, intervalMs: 250, what: `StatefulSet ${name}: ${replicas} pods Ready, claims Bound` },
  );
  return ok(await e2e.api.get("statefulsets", name), `get ${name}`);
}

/** The set as written in Git: opted in (`InPlace`) unless `annotations` says otherwise. */
function gitManifest(
  name: string,
  o: { policy?: Policy; replicas?: number; annotations?: Record<string, string> } = {},
): KubeObject {
  const m = templatesSetManifest(name, {
    storageClass: sc,
    replicas: o.replicas ?? 3,
    policy: o.policy ?? "OrderedReady",
  });
  m.metadata.annotations = o.annotations ?? { [K.strategy]: "InPlace" };
  return m;
}

/** The admin's request (`kubectl annotate`): data at `size`, opted in, `claimstep.io/finalize: Recreate`. */
async function requestGrow(name: string, size: string): Promise<void> {
  const live = ok(await e2e.api.get("statefulsets", name), `get ${name}`);
  const templates = cleanTemplates(live).map((t) =>
    t.metadata.name === "data" ? { ...t, spec: { ...t.spec, resources: { requests: { storage: size } } } } : t,
  );
  ok(
    await e2e.api.patch("statefulsets", name, {
      metadata: {
        annotations: { [K.strategy]: "InPlace", [K.templates]: JSON.stringify(templates), [K.finalize]: "Recreate" },
      },
    }),
    `annotate ${name}`,
  );
}

const statusOf = (set: KubeObject): { phase?: string; reason?: string; message?: string } => {
  try {
    return JSON.parse(set.metadata.annotations?.["claimstep.io/status"] ?? "{}");
  } catch {
    return {};
  }
};

/** claimstep's events (events.k8s.io) about `set`. */
async function eventsAbout(set: string): Promise<KubeObject[]> {
  const items = ok(await e2e.api.list("events.events.k8s.io"), "list events").items ?? [];
  return items.filter((e: KubeObject) => e.regarding?.name === set);
}

const describeEvents = (events: KubeObject[]) =>
  events.map((e) => `  ${e.type} ${e.reason}: ${String(e.note ?? "").slice(0, 300)}`).join("\n");

// ---------------------------------------------------------------------------------------------
// waiting for the re-create, failing with the documented reason

interface Ctx {
  watch: SetWatch;
  /** The processes (for the failure message). */
  describeMode: () => string;
  t0: number;
}

async function recordState(set: string): Promise<string> {
  const r = await e2e.api.get("configmaps", RECORD(set));
  if (r.status === 404) return "no record";
  const cm = r.body;
  return `record ${cm.metadata.name} uid ${cm.metadata.uid} armed=${cm.data?.armed ?? "-"} revision ${cm.data?.revision}`;
}

async function failureReport(ctx: Ctx, sets: string[], why: string): Promise<string> {
  const parts = [why];
  for (const set of sets)
    parts.push(
      `--- ${set}: the watch (times from the request)\n${ctx.watch.describe(set, ctx.t0)}`,
      `--- ${set}: ${await recordState(set)}`,
      `--- ${set}: the server's objects\n${await describeState(e2e, set)}`,
      `--- ${set}: claimstep's events\n${describeEvents(await eventsAbout(set))}`,
    );
  parts.push(`--- claimstep as deployed\n${ctx.describeMode()}`);
  return parts.join("\n");
}

/**
 * Polls until `done(set)` holds for every set; fails at once when a set claimstep orphan-deleted is
 * still missing GIVE_UP_MISSING_MS later (issue 33's bug), or at `timeoutMs`.
 */
async function awaitAll(
  ctx: Ctx,
  sets: { name: string; oldUid: string; done: (live: KubeObject) => Promise<boolean> }[],
  o: { timeoutMs: number; giveUpMissingMs?: number },
): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  const finished = new Set<string>();
  for (;;) {
    for (const s of sets) {
      if (finished.has(s.name)) continue;
      const r = await e2e.api.get("statefulsets", s.name);
      if (r.status === 200 && r.body.metadata.uid !== s.oldUid && (await s.done(r.body))) {
        finished.add(s.name);
        continue;
      }
      const orphaned = ctx.watch.deletedAt(s.name, s.oldUid);
      const giveUp = o.giveUpMissingMs ?? GIVE_UP_MISSING_MS;
      if (r.status === 404 && orphaned !== undefined && Date.now() - orphaned > giveUp)
        expect.fail(
          await failureReport(
            ctx,
            [s.name],
            `StatefulSet ${s.name} still missing ${((Date.now() - orphaned) / 1000).toFixed(0)} s after claimstep's orphan delete: nothing re-created it (its pods run with no owner)`,
          ),
        );
    }
    if (finished.size === sets.length) return;
    if (Date.now() > deadline)
      expect.fail(
        await failureReport(
          ctx,
          sets.filter((s) => !finished.has(s.name)).map((s) => s.name),
          `not finished within ${o.timeoutMs / 1000} s`,
        ),
      );
    await sleep(500);
  }
}

/** The set re-created and at rest, its record gone, claimstep's status Complete. */
const recreatedAndComplete = async (live: KubeObject): Promise<boolean> =>
  (await e2e.api.get("configmaps", RECORD(live.metadata.name!))).status === 404 &&
  statusOf(live).phase === "Complete" &&
  live.status?.observedGeneration === live.metadata.generation &&
  live.status?.readyReplicas === live.spec.replicas;

// ---------------------------------------------------------------------------------------------
// the audit log

/** claimstep's orphan delete and create of `set` since `since`, and the time between them. */
function recreateRequests(set: string, since: number) {
  const mine = e2e.audit({ since: new Date(since), user: e2e.info.claimstepUser, resource: "statefulsets" });
  const deletes = mine.filter((e) => e.verb === "delete" && e.name === set && e.code === 200);
  const creates = mine.filter((e) => e.verb === "create" && e.name === set && e.code === 201);
  const gap =
    deletes[0] && creates[0] ? Date.parse(creates[0].time) - Date.parse(deletes[0].time) : Number.POSITIVE_INFINITY;
  return { deletes, creates, gapMs: gap };
}

/** The re-create's expected answers: the set read while it is gone, the create refused while the old
 * set's orphan finalizer runs, a write of the set that lost a race with the StatefulSet controller. */
const recreateErrors = (e: AuditEntry) =>
  e.resource === "statefulsets" &&
  ((e.verb === "get" && e.code === 404) ||
    (e.verb === "create" && e.code === 409) ||
    (e.verb === "patch" && e.code === 409));

/** 0 claim deletes; pod deletes only the node agent finishing claimstep's evictions (`evicted`);
 * no error answered to claimstep but the expected ones. Entries of `sets` since `since`. */
function expectNothingDeleted(sets: string[], since: number, o: { evictions?: boolean } = {}) {
  const ofSets = (e: AuditEntry) => sets.some((s) => e.name === s || new RegExp(`-${s}-\\d+$`).test(e.name));
  const events = e2e.audit({ since: new Date(since) });
  const deletes = events.filter(
    (e) =>
      (e.verb === "delete" || e.verb === "deletecollection") &&
      e.subresource === "" &&
      e.code < 300 &&
      (e.resource === "pods" || e.resource === "persistentvolumeclaims") &&
      ofSets(e),
  );
  const evictions = events.filter((e) => e.subresource === "eviction" && e.code === 201);
  const unexplained = deletes.filter(
    (d) =>
      !(
        o.evictions &&
        d.resource === "pods" &&
        byNodeAgent(d) &&
        evictions.some((v) => v.name === d.name && Date.parse(v.time) <= Date.parse(d.time))
      ),
  );
  expect(unexplained, `pod or claim deletes:\n${describeAudit(unexplained)}`).toEqual([]);
  const check = checkAudit({
    events: events.filter(ofSets),
    namespace: e2e.namespace,
    claimstepUser: e2e.info.claimstepUser,
    expectedErrors: (e) => routineErrors(e) || recreateErrors(e),
  });
  expect(check.unexpectedErrors, `errors answered to claimstep:\n${describeAudit(check.unexpectedErrors)}`).toEqual([]);
}

/** The end of a grow + re-create: the new set at `size`, every pod and claim the same uid, owned by it. */
async function expectGrownAndRecreated(
  set: string,
  before: { uid: string; pods: Record<string, string>; claims: Record<string, string> },
  size: string,
) {
  const state = await describeState(e2e, set);
  const live = ok(await e2e.api.get("statefulsets", set), `get ${set}`);
  expect(live.metadata.uid, state).not.toBe(before.uid);
  expect(
    live.spec.volumeClaimTemplates.map((t: any) => [t.metadata.name, t.spec.resources.requests.storage]),
    state,
  ).toEqual([["data", size]]);
  expect(live.metadata.annotations?.[K.templates], state).toBeUndefined();
  const pods = await setPods(e2e, set);
  expect(uidMap(pods), state).toEqual(before.pods);
  for (const p of pods)
    expect(p.metadata.ownerReferences?.find((r: any) => r.controller)?.uid, `${p.metadata.name}\n${state}`).toBe(
      live.metadata.uid,
    );
  const claims = await templateClaims(e2e, set, "data");
  expect(uidMap(claims), state).toEqual(before.claims);
  for (const c of claims) expect(c.status?.capacity?.storage, `${c.metadata.name}\n${state}`).toBe(size);
  expect((await e2e.api.get("configmaps", RECORD(set))).status, state).toBe(404);
  const recreated = (await eventsAbout(set)).filter((e) => e.reason === "SetRecreated");
  expect(recreated.length, describeEvents(await eventsAbout(set))).toBeGreaterThan(0);
}

/** Measures F2 → F3 in the audit log, asserts one orphan delete and one create, and records it. */
async function measure(mode: string, set: string, since: number, boundMs: number): Promise<number> {
  await auditCaughtUp(e2e);
  const r = recreateRequests(set, since);
  const all = describeAudit(
    e2e.audit({ since: new Date(since), user: e2e.info.claimstepUser, resource: "statefulsets" }),
  );
  expect(r.deletes, all).toHaveLength(1);
  expect(r.creates, all).toHaveLength(1);
  timings.push(
    `  ${mode}, ${set}: orphan delete ${r.deletes[0]!.time} → create ${r.creates[0]!.time}: ${(r.gapMs / 1000).toFixed(2)} s`,
  );
  expect(r.gapMs, `${mode}: orphan delete → create of ${set}\n${all}`).toBeLessThanOrEqual(boundMs);
  return r.gapMs;
}

/** Until claimstep's status of the set says Complete (it writes nothing more to it then). */
const settled = (set: string) =>
  waitFor(async () => statusOf((await e2e.api.get("statefulsets", set)).body).phase === "Complete", {
    timeoutMs: 30_000,
    intervalMs: 250,
    what: `${set}: claimstep's status Complete`,
  });

const snapshot = async (set: string) => ({
  uid: ok(await e2e.api.get("statefulsets", set), `get ${set}`).metadata.uid as string,
  pods: uidMap(await setPods(e2e, set)),
  claims: uidMap(await templateClaims(e2e, set, "data")),
});

// ---------------------------------------------------------------------------------------------

describe.sequential("claimstep serve as deployed (deployment.yaml: 2 replicas, the Lease, interval 2 s)", () => {
  let dep: Deployed | undefined;
  let watch: SetWatch | undefined;
  const ctx = (t0: number): Ctx => ({ watch: watch!, describeMode: () => dep?.describe() ?? "", t0 });

  beforeAll(async () => {
    if (!e2e.available) return;
    dep = await startDeployment(e2e, {
      env: { CLAIMSTEP_INTERVAL_SECONDS: String(INTERVAL_SECONDS), CLAIMSTEP_NAMESPACES: e2e.namespace },
    });
    await dep.waitSweeper();
    watch = await watchSets(e2e);
    report.push(`serve: ${dep.command}`);
  });
  afterAll(async () => {
    await watch?.stop();
    const exits = await dep?.stop();
    if (exits) report.push(`serve replicas stopped (SIGTERM): ${exits.join(", ")}`);
  });

  it("1. grow + re-create, OrderedReady and Parallel: the set back at 2Gi, the same pod and claim uids, the record gone", {
    timeout: 120_000,
  }, async () => {
    const sets = [
      { name: "grow-ord", policy: "OrderedReady" as const },
      { name: "grow-par", policy: "Parallel" as const },
    ];
    await Promise.all(sets.map((s) => createSet(s.name, { policy: s.policy })));
    const before = Object.fromEntries(
      await Promise.all(sets.map(async (s) => [s.name, await snapshot(s.name)] as const)),
    );
    const since = Date.now();
    for (const s of sets) await requestGrow(s.name, "2Gi");
    await awaitAll(
      ctx(since),
      sets.map((s) => ({ name: s.name, oldUid: before[s.name]!.uid, done: recreatedAndComplete })),
      { timeoutMs: 90_000 },
    );
    const seconds = ((Date.now() - since) / 1000).toFixed(1);
    for (const s of sets) {
      await expectGrownAndRecreated(s.name, before[s.name]!, "2Gi");
      await measure(`serve (${s.policy})`, s.name, since, MISSING_BOUND_MS);
      report.push(`1. serve grow + re-create ${s.name} (${s.policy}):\n${watch!.describe(s.name, since)}`);
    }
    expectNothingDeleted(
      sets.map((s) => s.name),
      since,
    );
    report.push(`1. both sets done ${seconds} s after the admin's request`);
  });

  describe.sequential("2. a claim template added, then removed (claimstep set --add / --remove)", () => {
    const sets = [
      { name: "tpl-ord", policy: "OrderedReady" as const },
      { name: "tpl-par", policy: "Parallel" as const },
    ];
    let data: Record<string, Record<string, string>> = {};
    const logs: Record<string, Record<string, string>> = {};

    /** Every pod Ready, restarted since `pods`, mounting exactly `claims` of its ordinal. */
    const podsMount = async (set: string, before: Record<string, string>, templates: string[]) => {
      const pods = await setPods(e2e, set);
      return (
        pods.length === 2 &&
        pods.every(
          (p) =>
            isReady(p) &&
            p.metadata.uid !== before[p.metadata.name!] &&
            JSON.stringify(claimNamesOf(p)) === JSON.stringify(templates.map((t) => `${t}-${p.metadata.name}`).sort()),
        )
      );
    };

    it("add logs: re-created with data and logs, every pod back mounting both, data claims the same uids, the record gone", {
      timeout: 120_000,
    }, async () => {
      await Promise.all(sets.map((s) => createSet(s.name, { policy: s.policy, replicas: 2 })));
      // The person runs `set` once claimstep has looked at the new set (a `set` racing the server's
      // first status write of the set fails with the server's 409: seen here, exit 1).
      for (const s of sets) await settled(s.name);
      const before = Object.fromEntries(
        await Promise.all(sets.map(async (s) => [s.name, await snapshot(s.name)] as const)),
      );
      data = Object.fromEntries(sets.map((s) => [s.name, before[s.name]!.claims]));
      const since = Date.now();
      for (const s of sets) {
        const args = [
          "set",
          s.name,
          "logs",
          "--add",
          "--storage",
          "1Gi",
          "--storage-class",
          sc,
          "--mount-path",
          "/logs",
        ];
        const r = await claimstep(e2e, args, { kubeconfig: e2e.info.adminKubeconfig });
        expect(r.code, describeRun(r)).toBe(0);
        const live = ok(await e2e.api.get("statefulsets", s.name), `get ${s.name}`);
        report.push(
          `2. claimstep ${args.join(" ")} (the admin's kubeconfig): exit 0, wrote ${K.finalize}=${live.metadata.annotations?.[K.finalize] ?? "-"}`,
        );
      }
      await awaitAll(
        ctx(since),
        sets.map((s) => ({
          name: s.name,
          oldUid: before[s.name]!.uid,
          done: async (live) =>
            (await recreatedAndComplete(live)) &&
            JSON.stringify(live.spec.volumeClaimTemplates.map((t: any) => t.metadata.name)) ===
              JSON.stringify(["data", "logs"]) &&
            (await podsMount(s.name, before[s.name]!.pods, ["data", "logs"])),
        })),
        { timeoutMs: 100_000 },
      );
      for (const s of sets) {
        const state = await describeState(e2e, s.name);
        expect(uidMap(await templateClaims(e2e, s.name, "data")), state).toEqual(data[s.name]);
        const l = await templateClaims(e2e, s.name, "logs");
        expect(
          l.map((c) => c.metadata.name),
          state,
        ).toEqual([`logs-${s.name}-0`, `logs-${s.name}-1`]);
        for (const c of l) expect(c.status?.phase, state).toBe("Bound");
        logs[s.name] = uidMap(l);
        expect((await e2e.api.get("configmaps", RECORD(s.name))).status, state).toBe(404);
        await measure(`serve, add (${s.policy})`, s.name, since, MISSING_BOUND_MS);
        report.push(`2. serve add logs ${s.name} (${s.policy}):\n${watch!.describe(s.name, since)}`);
      }
      expectNothingDeleted(
        sets.map((s) => s.name),
        since,
        { evictions: true },
      );
    });

    it("remove logs: re-created with data only, every pod back mounting data, the logs claims kept (same uids), the record gone", {
      timeout: 120_000,
    }, async () => {
      expect(Object.keys(logs), "the add ran first").toHaveLength(2);
      const before = Object.fromEntries(
        await Promise.all(sets.map(async (s) => [s.name, await snapshot(s.name)] as const)),
      );
      const since = Date.now();
      for (const s of sets) {
        const r = await claimstep(e2e, ["set", s.name, "logs", "--remove"], { kubeconfig: e2e.info.adminKubeconfig });
        expect(r.code, describeRun(r)).toBe(0);
      }
      await awaitAll(
        ctx(since),
        sets.map((s) => ({
          name: s.name,
          oldUid: before[s.name]!.uid,
          done: async (live) =>
            (await recreatedAndComplete(live)) &&
            JSON.stringify(live.spec.volumeClaimTemplates.map((t: any) => t.metadata.name)) ===
              JSON.stringify(["data"]) &&
            (await podsMount(s.name, before[s.name]!.pods, ["data"])),
        })),
        { timeoutMs: 100_000 },
      );
      for (const s of sets) {
        const state = await describeState(e2e, s.name);
        expect(uidMap(await templateClaims(e2e, s.name, "data")), state).toEqual(data[s.name]);
        const l = await templateClaims(e2e, s.name, "logs");
        expect(uidMap(l), state).toEqual(logs[s.name]);
        for (const c of l) expect(c.metadata.labels?.[K.orphanedFrom], state).toBe(s.name);
        expect((await e2e.api.get("configmaps", RECORD(s.name))).status, state).toBe(404);
        await measure(`serve, remove (${s.policy})`, s.name, since, MISSING_BOUND_MS);
        report.push(`2. serve remove logs ${s.name} (${s.policy}):\n${watch!.describe(s.name, since)}`);
      }
      expectNothingDeleted(
        sets.map((s) => s.name),
        since,
        { evictions: true },
      );
    });
  });

  it("5. a GitOps self-heal re-creates the set from the old manifest in the window: reported (Warning RecreatedByOther, status), the record not left armed, nothing deleted", {
    timeout: 120_000,
  }, async () => {
    // heal-git: Git's manifest opts the set in; heal-plain: Git's manifest has no claimstep annotation
    // (the opt-in and the change were annotated by hand). The loop creates Git's manifest as soon as
    // the set is being deleted (409 until it is gone), as Argo CD's or Flux's self-heal would.
    const sets = [
      { name: "heal-git", git: gitManifest("heal-git", { replicas: 2 }) },
      { name: "heal-plain", git: gitManifest("heal-plain", { replicas: 2, annotations: {} }) },
    ];
    for (const s of sets) await createSet(s.name, { replicas: 2, annotations: s.git.metadata.annotations });
    const before = Object.fromEntries(
      await Promise.all(sets.map(async (s) => [s.name, await snapshot(s.name)] as const)),
    );
    const healed = new Map<string, { at: number; uid: string; attempts: number }>();
    const healing = new Set<string>();
    let active = true;
    const heal = async (name: string, manifest: KubeObject, oldUid: string) => {
      healing.add(name);
      for (let attempts = 1; active && attempts < 2000; attempts++) {
        const r = await e2e.api.create("statefulsets", manifest);
        if (r.status === 201) {
          healed.set(name, { at: Date.now(), uid: r.body.metadata.uid!, attempts });
          return;
        }
        const live = await e2e.api.get("statefulsets", name);
        if (live.status === 200 && live.body.metadata.uid !== oldUid) return; // someone else's (claimstep's) first
        await sleep(5);
      }
    };
    watch!.onEvent((s) => {
      const set = sets.find((x) => x.name === s.name);
      if (set && active && s.deleting && s.uid === before[s.name]!.uid && !healing.has(s.name))
        void heal(s.name, set.git, before[s.name]!.uid);
    });
    const since = Date.now();
    for (const s of sets) await requestGrow(s.name, "2Gi");

    const t = ctx(since);
    try {
      // Until claimstep has said so (a Warning RecreatedByOther about each set), or went on as if it
      // had re-created it itself (SetRecreated after the self-heal: the bug).
      const deadline = Date.now() + 90_000;
      const concluded = new Set<string>();
      while (concluded.size < sets.length) {
        for (const s of sets) {
          if (concluded.has(s.name)) continue;
          const h = healed.get(s.name);
          if (!h) {
            const r = recreateRequests(s.name, since);
            if (r.creates.length)
              expect.fail(
                await failureReport(
                  t,
                  [s.name],
                  `claimstep's create of ${s.name} came before the self-heal's: the race this scenario needs was not run`,
                ),
              );
            continue;
          }
          const events = await eventsAbout(s.name);
          if (events.some((e) => e.reason === "RecreatedByOther" && e.type === "Warning")) concluded.add(s.name);
          else if (
            events.some(
              (e) => e.reason === "SetRecreated" && Date.parse(e.metadata.creationTimestamp ?? "") >= h.at - 1000,
            )
          )
            expect.fail(
              await failureReport(
                t,
                [s.name],
                `claimstep reported SetRecreated for ${s.name}, which the self-heal created (uid ${h.uid}) from the old manifest`,
              ),
            );
          else if (Date.now() - h.at > 30_000)
            expect.fail(
              await failureReport(
                t,
                [s.name],
                `30 s after the self-heal re-created ${s.name} (uid ${h.uid}), claimstep had said nothing about it`,
              ),
            );
        }
        if (Date.now() > deadline)
          expect.fail(
            await failureReport(
              t,
              sets.map((s) => s.name),
              "no conclusion within 90 s",
            ),
          );
        await sleep(500);
      }
      // A few more sweeps: what claimstep does after saying so.
      await sleep(3 * INTERVAL_SECONDS * 1000);
    } finally {
      active = false;
    }

    for (const s of sets) {
      const h = healed.get(s.name)!;
      const state = await failureReport(t, [s.name], `${s.name} after the self-heal`);
      const live = ok(await e2e.api.get("statefulsets", s.name), `get ${s.name}`);
      // The live set is the self-heal's, with Git's templates; claimstep re-created nothing.
      expect(live.metadata.uid, state).toBe(h.uid);
      expect(live.spec.volumeClaimTemplates[0].spec.resources.requests.storage, state).toBe("1Gi");
      const r = recreateRequests(s.name, since);
      expect(r.deletes, state).toHaveLength(1);
      expect(r.creates, state).toEqual([]);
      // Reported: a Warning event and the set's status.
      const warning = (await eventsAbout(s.name)).find((e) => e.reason === "RecreatedByOther" && e.type === "Warning");
      expect(warning, state).toBeDefined();
      expect(
        watch!.trail.some((x) => x.name === s.name && x.uid === h.uid && x.status === "Blocked/RecreatedByOther"),
        `claimstep.io/status of ${s.name} said Blocked/RecreatedByOther\n${state}`,
      ).toBe(true);
      // The record is not left armed (discarded, or disarmed).
      const cm = await e2e.api.get("configmaps", RECORD(s.name));
      expect(cm.status === 404 || cm.body.data?.armed !== "true", state).toBe(true);
      // Nothing deleted, the same pods (adopted by the healed set) and claims.
      const after = await snapshot(s.name);
      expect(after.pods, state).toEqual(before[s.name]!.pods);
      expect(after.claims, state).toEqual(before[s.name]!.claims);
      report.push(
        `5. self-heal ${s.name}: re-created by the loop ${((h.at - (watch!.deletedAt(s.name, before[s.name]!.uid) ?? h.at)) / 1000).toFixed(2)} s after the orphan delete was seen (${h.attempts} POSTs); claimstep's Warning ${warning?.reason}: ${warning?.note}; final status ${statusOf(live).phase}/${statusOf(live).reason}; record ${cm.status === 404 ? "deleted" : `kept, armed=${cm.body.data?.armed ?? "-"}`}\n${watch!.describe(s.name, since)}`,
      );
    }
    expectNothingDeleted(
      sets.map((s) => s.name),
      since,
    );

    // The way out the message gives: keep the healed set, delete the record. The set Git opts in is
    // claimstep's again (Complete at its templates: the claims stay at 2Gi, never shrunk).
    const wayOut = Date.now();
    for (const s of sets) ok(await e2e.api.delete("configmaps", RECORD(s.name)), `delete ${RECORD(s.name)}`);
    const back = await waitFor(
      async () => {
        const live = (await e2e.api.get("statefulsets", "heal-git")).body;
        return statusOf(live).phase === "Complete" ? live : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 250, what: "heal-git: claimstep's status Complete once the record is deleted" },
    );
    const backMs = Date.now() - wayOut;
    await sleep(2 * INTERVAL_SECONDS * 1000);
    const plain = ok(await e2e.api.get("statefulsets", "heal-plain"), "get heal-plain");
    for (const c of await templateClaims(e2e, "heal-git", "data")) expect(c.status?.capacity?.storage).toBe("2Gi");
    report.push(
      `5. the way out (the records deleted by the admin): heal-git ${statusOf(back).phase}/${statusOf(back).reason} ${(backMs / 1000).toFixed(1)} s later: ${statusOf(back).message}; heal-plain (not opted in by Git): claimstep.io/status left as ${statusOf(plain).phase ?? "-"}/${statusOf(plain).reason ?? "-"}`,
    );
  });

  it("6. a record planted by a ServiceAccount that may only create ConfigMaps: never acted on, Blocked/RecordNotOurs naming it, nothing deleted", {
    timeout: 120_000,
  }, async () => {
    const set = "trust";
    const ns = e2e.namespace;
    const planter = await planterClient();

    // The set: opted in, claimstep.io/finalize: Recreate left from an earlier change (sticky), its
    // rollout complete (claimstep's status Complete, the current revision recorded).
    await createSet(set, { replicas: 2, annotations: { [K.strategy]: "InPlace", [K.finalize]: "Recreate" } });
    const complete = await waitFor(
      async () => {
        const s = (await e2e.api.get("statefulsets", set)).body;
        return statusOf(s).phase === "Complete" && s.metadata.annotations?.["claimstep.io/current-revision"]
          ? s
          : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: `${set}: claimstep's status Complete` },
    );
    const before = await snapshot(set);
    // The planter can do nothing else: not even read the set.
    expect((await planter.get("statefulsets", ns, set)).status).toBe(403);
    expect((await planter.patch("statefulsets", ns, set, { metadata: { labels: { x: "y" } } })).status).toBe(403);

    // The record it plants: claimstep's layout (label, annotation, data keys), the live set's
    // manifest with a held pod template running another ServiceAccount and an env var, no kept uids.
    const manifest = structuredClone(complete);
    delete manifest.status;
    for (const k of ["uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"])
      delete manifest.metadata[k];
    const podTemplate = structuredClone(complete.spec.template);
    delete podTemplate.metadata?.creationTimestamp;
    podTemplate.spec.serviceAccountName = "planted";
    podTemplate.spec.containers[0].env = [{ name: "PLANTED", value: "1" }];
    manifest.metadata.annotations = { ...manifest.metadata.annotations, [K.podTemplate]: JSON.stringify(podTemplate) };
    const revision = complete.metadata.annotations!["claimstep.io/current-revision"]!;
    const since = Date.now();
    const planted = await plantRecord(planter, set, revision, {
      "statefulset.json": JSON.stringify(manifest),
      "old-uid": complete.metadata.uid,
      "old-resource-version": complete.metadata.resourceVersion,
    });

    const t = ctx(since);
    const pods = await podWatch(set);
    try {
      // Until claimstep says so (Warning RecordNotOurs), failing at once if it acts on the record.
      await (async () => {
        const deadline = Date.now() + 40_000;
        for (;;) {
          const live = await e2e.api.get("statefulsets", set);
          const cm = await e2e.api.get("configmaps", RECORD(set));
          const acted =
            live.status !== 200
              ? `the set is gone (HTTP ${live.status})`
              : live.body.metadata.uid !== before.uid
                ? `the set was re-created (uid ${before.uid} → ${live.body.metadata.uid})`
                : cm.status !== 200
                  ? `the planted record was deleted (HTTP ${cm.status})`
                  : cm.body.metadata.resourceVersion !== planted.metadata.resourceVersion
                    ? `the planted record was written (armed=${cm.body.data?.armed ?? "-"})`
                    : pods.planted().length
                      ? `pods ran under the planted ServiceAccount: ${pods.planted().join(", ")}`
                      : undefined;
          if (acted) expect.fail(await failureReport(t, [set], `claimstep acted on the planted record: ${acted}`));
          const events = await eventsAbout(set);
          if (events.some((e) => e.reason === "RecordNotOurs" && e.type === "Warning")) return;
          if (Date.now() > deadline)
            expect.fail(
              await failureReport(t, [set], "40 s after the record was planted claimstep had not reported it"),
            );
          await sleep(500);
        }
      })();
      // And stays so over a few more sweeps.
      await sleep(3 * INTERVAL_SECONDS * 1000);
    } finally {
      await pods.stop();
    }

    const state = await failureReport(t, [set], `${set} after the planted record`);
    const live = ok(await e2e.api.get("statefulsets", set), `get ${set}`);
    expect(live.metadata.uid, state).toBe(before.uid);
    expect(statusOf(live).phase, state).toBe("Blocked");
    expect(statusOf(live).reason, state).toBe("RecordNotOurs");
    const cm = ok(await e2e.api.get("configmaps", RECORD(set)), "get the planted record");
    expect(cm.metadata.uid, state).toBe(planted.metadata.uid);
    expect(cm.metadata.resourceVersion, state).toBe(planted.metadata.resourceVersion);
    const warning = (await eventsAbout(set)).find((e) => e.reason === "RecordNotOurs" && e.type === "Warning");
    expect(warning?.note, state).toContain(RECORD(set));
    expect(pods.planted(), state).toEqual([]);
    expect(pods.uids(), state).toEqual(new Set(Object.values(before.pods)));
    expect(await snapshot(set), state).toEqual(before);
    // claimstep wrote nothing but the set's status and events: no delete, no create, no record write.
    await auditCaughtUp(e2e);
    const writes = e2e
      .audit({ since: new Date(since), user: e2e.info.claimstepUser })
      .filter(
        (e) =>
          !["get", "list", "watch"].includes(e.verb) &&
          e.resource !== "events" &&
          (e.name === set ||
            e.name === RECORD(set) ||
            e.name.startsWith(`${set}-`) ||
            e.name.startsWith(`data-${set}-`)),
      );
    expect(
      writes.filter((e) => !(e.resource === "statefulsets" && e.verb === "patch" && e.name === set)),
      describeAudit(writes),
    ).toEqual([]);
    expectNothingDeleted([set], since);
    report.push(
      `6. planted record: claimstep's status ${statusOf(live).phase}/${statusOf(live).reason}: ${statusOf(live).message}\n   Warning ${warning?.reason}: ${warning?.note}\n   claimstep's writes since the planting: ${describeAudit(writes) || "none"}`,
    );
    // Out of the way of the scenarios after this one (an admin removes it).
    ok(await e2e.api.delete("configmaps", RECORD(set)), "delete the planted record");
  });

  it("7. the set gone (a person's orphan delete), a record planted naming its living pods but holding another set: nothing created, Warning RecordUnreadable, nothing deleted", {
    timeout: 120_000,
  }, async () => {
    const set = "lost";
    const other = `${set}-planted`;
    const ns = e2e.namespace;
    const planter = await planterClient();
    await createSet(set, { replicas: 2 });
    await settled(set);
    const before = await snapshot(set);
    // A person re-creates the set by hand, the usual way: kubectl delete --cascade=orphan first.
    ok(await e2e.api.delete("statefulsets", set, { propagationPolicy: "Orphan" }), `orphan-delete ${set}`);
    await waitFor(async () => (await e2e.api.get("statefulsets", set)).status === 404, {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: `StatefulSet ${set} gone`,
    });
    // In that window the planter writes a record as claimstep would (label, annotation, keys, armed),
    // naming the orphaned pods and claims by uid, with the manifest of another set (its selector the
    // orphaned pods': that set would adopt them) under the planted ServiceAccount.
    const manifest = gitManifest(set, { replicas: 2 });
    manifest.metadata.name = other;
    manifest.spec.template.spec.serviceAccountName = "planted";
    const since = Date.now();
    const planted = await plantRecord(planter, set, "0000000000", {
      "statefulset.json": JSON.stringify(manifest),
      "old-uid": before.uid,
      "old-resource-version": "1",
      armed: "true",
      "kept-uids.json": JSON.stringify({ pods: before.pods, claims: before.claims }),
    });
    const noSet = async () => {
      for (const name of [set, other]) {
        const r = await e2e.api.get("statefulsets", name);
        if (r.status !== 404) return `StatefulSet ${name} exists (HTTP ${r.status}, uid ${r.body.metadata?.uid})`;
      }
      const cm = await e2e.api.get("configmaps", RECORD(set));
      if (cm.body.metadata?.resourceVersion !== planted.metadata.resourceVersion)
        return `the planted record was written or deleted (HTTP ${cm.status})`;
      return undefined;
    };
    const t = ctx(since);
    const deadline = Date.now() + 40_000;
    for (;;) {
      const acted = await noSet();
      if (acted) expect.fail(await failureReport(t, [set], `claimstep acted on the planted record: ${acted}`));
      if ((await eventsAbout(set)).some((e) => e.reason === "RecordUnreadable" && e.type === "Warning")) break;
      if (Date.now() > deadline)
        expect.fail(await failureReport(t, [set], "40 s after the record was planted claimstep had not reported it"));
      await sleep(500);
    }
    // And stays so over a few more sweeps.
    await sleep(3 * INTERVAL_SECONDS * 1000);
    const state = await failureReport(t, [set], `${set} after the planted record`);
    expect(await noSet(), state).toBeUndefined();
    const warning = (await eventsAbout(set)).find((e) => e.reason === "RecordUnreadable" && e.type === "Warning");
    expect(warning?.note, state).toContain(`is StatefulSet ${ns}/${other}, not ${ns}/${set}`);
    expect(uidMap(await setPods(e2e, set)), state).toEqual(before.pods);
    expect(uidMap(await templateClaims(e2e, set, "data")), state).toEqual(before.claims);
    // claimstep wrote nothing but events: no create, no delete, no record write.
    await auditCaughtUp(e2e);
    const writes = e2e
      .audit({ since: new Date(since), user: e2e.info.claimstepUser })
      .filter((e) => !["get", "list", "watch"].includes(e.verb) && e.resource !== "events");
    expect(
      writes.filter(
        (e) => e.name === set || e.name === other || e.name === RECORD(set) || e.resource === "statefulsets",
      ),
      describeAudit(writes),
    ).toEqual([]);
    expectNothingDeleted([set], since);
    // What a person sees: claimstep status says the same, and offers no command that would act on the record.
    const status = await claimstep(e2e, ["status", set, "-o", "json"], { kubeconfig: e2e.info.adminKubeconfig });
    const said = JSON.parse(status.stdout);
    expect(status.code, status.stderr).toBe(2);
    expect(said).toMatchObject({ phase: "Blocked", reason: "RecordUnreadable", setMissing: true });
    expect(said.command, "no command that would act on the record").toBeUndefined();
    expect(said.message, "nothing compared its pods and claims: no 'kept'").not.toMatch(/kept/);
    report.push(
      `7. planted record, the set gone: Warning ${warning?.reason}: ${warning?.note}\n   claimstep status: exit ${status.code}, ${said.phase}/${said.reason}: ${said.message}`,
    );
    // Out of the way of the scenarios after this one (an admin removes it).
    ok(await e2e.api.delete("configmaps", RECORD(set)), "delete the planted record");
  });
});

/**
 * A client for ServiceAccount `planter`, which may only create ConfigMaps in the namespace (and the
 * ServiceAccount `planted` for a planted pod template); made once, shared by scenarios 6 and 7.
 */
let planterMade: Promise<Rest> | undefined;
function planterClient(): Promise<Rest> {
  planterMade ??= (async () => {
    const ns = e2e.namespace;
    // Another ServiceAccount for the planted pod template, and the planter: create configmaps only.
    ok(
      await e2e.api.create("serviceaccounts", {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "planted" },
      }),
    );
    ok(
      await e2e.api.create("serviceaccounts", {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "planter" },
      }),
    );
    ok(
      await e2e.api.create("roles", {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "planter" },
        rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["create"] }],
      }),
    );
    ok(
      await e2e.api.create("rolebindings", {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "planter" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "planter" },
        subjects: [{ kind: "ServiceAccount", name: "planter", namespace: ns }],
      }),
    );
    const token = await waitFor(
      async () => {
        const r = await e2e.admin.sub("token").create<{ status: { token: string } }>("serviceaccounts", ns, "planter", {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenRequest",
          spec: { expirationSeconds: 3600 },
        });
        return r.status === 201 ? r.body.status.token : undefined;
      },
      { timeoutMs: 15_000, what: "a token for ServiceAccount planter" },
    );
    return new Rest({ server: e2e.info.server, caPem: e2e.info.caPem, token, userAgent: "e2e-planter" });
  })();
  return planterMade;
}

/** The planter's ConfigMap in claimstep's record layout (name, label, annotation, revision key) with `data`. */
async function plantRecord(planter: Rest, set: string, revision: string, data: Record<string, unknown>) {
  return ok(
    await planter.create("configmaps", e2e.namespace, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: RECORD(set),
        labels: { "app.kubernetes.io/managed-by": "claimstep", "claimstep.io/revision": revision },
        annotations: { "claimstep.io/statefulset": set },
      },
      data: { ...data, revision },
    }),
    "the planter creates the record",
  );
}

/** The set's pods, watched: any uid seen, and any pod under another ServiceAccount than default. */
async function podWatch(set: string) {
  const uids = new Set<string>();
  const planted = new Set<string>();
  const re = new RegExp(`^${set}-\\d+$`);
  const informer = new Informer({
    credentials: e2e.info.admin,
    path: `/api/v1/namespaces/${e2e.namespace}/pods`,
    onError: () => undefined,
    onChange: (type, obj) => {
      if (!obj || type === "DELETED" || !re.test(obj.metadata.name ?? "")) return;
      uids.add(obj.metadata.uid!);
      const sa = obj.spec?.serviceAccountName ?? "default";
      if (sa !== "default") planted.add(`${obj.metadata.name} (${sa})`);
    },
  });
  await informer.synced;
  for (const p of informer.list()) if (re.test(p.metadata.name ?? "")) uids.add(p.metadata.uid!);
  return { uids: () => new Set(uids), planted: () => [...planted], stop: () => informer.stop() };
}

// ---------------------------------------------------------------------------------------------

describe.sequential("two serve replicas with the Lease: the sweeper SIGKILLed right after the orphan delete", () => {
  it("3. the other replica takes the Lease and creates the set: at 2Gi, the same pod and claim uids, the record gone", {
    timeout: 120_000,
  }, async () => {
    const dep = await startDeployment(e2e, {
      env: { CLAIMSTEP_INTERVAL_SECONDS: String(INTERVAL_SECONDS), CLAIMSTEP_NAMESPACES: e2e.namespace },
      prefix: "lease",
    });
    const watch = await watchSets(e2e);
    try {
      expect(dep.replicas).toHaveLength(2);
      const set = "lease";
      await createSet(set, { policy: "Parallel" });
      const before = await snapshot(set);
      const sweeper = await dep.waitSweeper();
      const other = dep.replicas.find((r) => r !== sweeper)!;
      let killedAt: number | undefined;
      watch.onEvent((s) => {
        if (s.name === set && s.uid === before.uid && s.deleting && killedAt === undefined) {
          sweeper.kill("SIGKILL");
          killedAt = Date.now();
        }
      });
      const since = Date.now();
      await requestGrow(set, "2Gi");
      const t: Ctx = { watch, describeMode: () => dep.describe(), t0: since };
      // The Lease runs out (CLAIMSTEP_LEASE_DURATION_SECONDS, default 15) before the other sweeps.
      const leaseMs = Number(shippedServer().env.CLAIMSTEP_LEASE_DURATION_SECONDS || 15) * 1000;
      await awaitAll(t, [{ name: set, oldUid: before.uid, done: recreatedAndComplete }], {
        timeoutMs: 100_000,
        giveUpMissingMs: leaseMs + GIVE_UP_MISSING_MS,
      });
      expect(killedAt, "the sweeper was killed when the set was seen being deleted").toBeDefined();
      const exit = await sweeper.stop();
      expect(exit, dep.describe()).toBe("SIGKILL");
      await expectGrownAndRecreated(set, before, "2Gi");
      // The create came from the replica left, after the kill, once it held the Lease.
      await auditCaughtUp(e2e);
      const r = recreateRequests(set, since);
      expect(Date.parse(r.creates[0]!.time), describeAudit(r.creates)).toBeGreaterThan(killedAt!);
      // The audit's stageTimestamp (microseconds, when the answer completed) may trail by a moment
      // the watch event the kill was timed on: the delete came first either way.
      expect(Date.parse(r.deletes[0]!.time), describeAudit(r.deletes)).toBeLessThanOrEqual(killedAt! + 1_000);
      expect((await dep.sweeper())?.name, dep.describe()).toBe(other.name);
      const acquired = other.logs.find((l) => l.line.msg === "lease acquired" && l.at > killedAt!);
      expect(acquired, dep.describe()).toBeDefined();
      // The follower takes over once it has seen the killed holder's last renewal unchanged for a
      // whole lease duration, and it reads the Lease once per renew period (CLAIMSTEP_LEASE_RENEW_SECONDS,
      // default 5): up to duration + renew after that renewal, then its next sweep and the create
      // (23.85 s seen on a loaded CI run against the 22 s that left the renew period out).
      const renewMs = Number(shippedServer().env.CLAIMSTEP_LEASE_RENEW_SECONDS || 5) * 1000;
      const gap = await measure(
        "serve, sweeper SIGKILLed after the orphan delete",
        set,
        since,
        leaseMs + renewMs + MISSING_BOUND_MS + INTERVAL_SECONDS * 1000,
      );
      expectNothingDeleted([set], since);
      report.push(
        `3. ${dep.command}: ${sweeper.name} SIGKILLed ${((killedAt! - since) / 1000).toFixed(1)} s after the request (the set seen being deleted); ${other.name} took the Lease ${((acquired!.at - killedAt!) / 1000).toFixed(1)} s later and created the set ${(gap / 1000).toFixed(1)} s after the orphan delete\n${watch.describe(set, since)}`,
      );
    } finally {
      await watch.stop();
      await dep.stop();
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe.sequential("the CronJob's command in a loop (cronjob.yaml: step --all -A)", () => {
  it("4. `step --all` every 5 s finishes a grow + re-create: at 2Gi, the same pod and claim uids, the record gone", {
    timeout: 120_000,
  }, async () => {
    const set = "cron";
    await createSet(set, { replicas: 2 });
    const before = await snapshot(set);
    const watch = await watchSets(e2e);
    let loop: CronLoop | undefined;
    const since = Date.now();
    try {
      await requestGrow(set, "2Gi");
      loop = startCronLoop(e2e, { periodMs: CRON_PERIOD_MS });
      const l = loop;
      const t: Ctx = {
        watch,
        t0: since,
        describeMode: () =>
          `${l.command}\n${l.runs
            .slice(-6)
            .map(
              (r) =>
                `--- run at +${((r.startedAt - since) / 1000).toFixed(1)} s, ${((r.endedAt - r.startedAt) / 1000).toFixed(1)} s, exit ${r.code ?? r.signal}\n${r.stdout.trim()}${r.stderr.trim() ? `\n[stderr] ${r.stderr.trim()}` : ""}`,
            )
            .join("\n")}`,
      };
      await awaitAll(t, [{ name: set, oldUid: before.uid, done: recreatedAndComplete }], { timeoutMs: 100_000 });
      await loop.stop();
      await expectGrownAndRecreated(set, before, "2Gi");
      const gap = await measure("CronJob step --all", set, since, MISSING_BOUND_MS);
      expectNothingDeleted([set], since);
      const failed = loop.runs.filter((r) => r.code !== 0 && r.code !== 2);
      expect(failed.map((r) => `exit ${r.code ?? r.signal}: ${r.stderr}`)).toEqual([]);
      report.push(
        `4. ${loop.command}: ${loop.runs.length} runs (exits ${loop.runs.map((r) => r.code ?? r.signal).join(" ")}), the set missing ${(gap / 1000).toFixed(2)} s\n${watch.describe(set, since)}`,
      );
    } finally {
      await loop?.stop();
      await watch.stop();
    }
  });
});
