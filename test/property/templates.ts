// Adding and removing a claim template on a running set (issue 27, docs/design.md "Adding and
// removing claim templates", invariant I14), as a property: random running sets (1–4 replicas,
// ordinals from 0 or elsewhere, OrderedReady or Parallel, maxUnavailable 1–2, sometimes a user
// partition, sometimes a PodDisruptionBudget, claims retained or owned by the set) get a template
// `logs` added (with or without a held pod template mounting it, `claimstep.io/pod-template`),
// removed (`claimstep.io/remove-claim-templates`), or removed and added back, with
// `claimstep.io/finalize: Recreate`. claimstep steps through the production reader and writers
// over the simulated API server, with API faults (409, 429, 5xx, timeouts), processes killed
// before or after any request or losing its answer, and two invocations racing on one snapshot;
// then clean steps until Complete (bounded).
//
// The oracle below watches from outside — the simulated store, its audit log and every request
// claimstep sends — after every request and every advance of the clock. It imports nothing of
// core/ (the annotation and label names are spelled out in `K`; templates.test.ts checks them
// against core/keys.ts):
// - I14a  no pod is created that mounts a volume its spec lacks; no StatefulSet is stored, sent
//         or recorded (the re-create record's manifest) whose pod template mounts a volume it lacks;
// - I14b  no claim is deleted (I1: same uid, no deletionTimestamp, never a DELETE); a claim is
//         labelled orphaned-from only when its template is gone from the set; at the end a
//         removed template's claims are there, labelled `claimstep.io/orphaned-from=<set>`, and a
//         re-added template's claims are the same ones, unlabelled; the Complete decision lists the
//         removed template's claims (Decision.orphanedClaims, none mounted), and none after a re-add;
// - I14-unavailable  at every request of claimstep's, at most maxUnavailable pods of the set are
//         missing or not Ready (before and after it lands);
// - I14-evict-ready  an eviction only while every other pod of the set is Ready, within
//         maxUnavailable (docs/design.md S4: with maxUnavailable 2, one other may be restarting);
// - I14-order  restarts lowest ordinal first: no eviction while a lower pod's volumes do not match;
// - I14-pods  a pod of the set goes only through claimstep's eviction;
// - I14-partition  the live partition never below the recorded user's; at the end the user's
//         partition is back and `claimstep.io/user-partition` gone;
// - I14-converge  Complete/Converged only while every pod of the set is Ready with its set's
//         volumes; Complete (twice in a row) within the clean steps, the set carrying exactly the
//         expected templates and pod template, every pod Ready with a volume for every template of
//         the set, none for a removed one, mounting what the pod template says; no record left.
//
// Planted bugs (`TemplatesBug`) wrap a step's reader or writers (never core/ or adapters/), each
// caught by the invariant named for it (templates.test.ts).
import fc from "fast-check";
import { ApiError } from "../../adapters/api-error.js";
import { KubeReader } from "../../adapters/kube/reader.js";
import { kubeWriters } from "../../adapters/kube/writer.js";
import { claimTemplate, SimCluster, statefulSetManifest } from "../../adapters/sim/cluster.js";
import { SIM_SERVER } from "../../adapters/sim/http.js";
import { Prng } from "../../adapters/sim/prng.js";
import type { AuditEntry, Json } from "../../adapters/sim/store.js";
import type { PodWriter, RecreateWriter, StateReader, Writers } from "../../core/ports.js";
import type { Decision, Snapshot } from "../../core/types.js";
import { runStep, type StepResult } from "../../functions/step.js";

export const REF = { namespace: "default", name: "db" } as const;

/** The contract's names, spelled out (the oracle reads nothing of core/). */
export const K = {
  templates: "claimstep.io/volume-claim-templates",
  removeTemplates: "claimstep.io/remove-claim-templates",
  podTemplate: "claimstep.io/pod-template",
  orphanedFrom: "claimstep.io/orphaned-from",
  finalize: "claimstep.io/finalize",
  userPartition: "claimstep.io/user-partition",
} as const;

const RECORD = `claimstep-recreate-${REF.name}`;
const BASE = "data";
const EXTRA = "logs";
/** A volume no claim template provides (the `badMount` case's held pod template mounts it). */
const MISSING = "cache";
const CLASS = "fast";

// ---------------------------------------------------------------------------------------------
// Cases

export type TemplatesOp = "add" | "remove";

export interface TemplatesCase {
  seed: number;
  replicas: number;
  ordinalsStart: number;
  parallel: boolean;
  maxUnavailable: number;
  /** The user's partition (spec.updateStrategy.rollingUpdate.partition), when set. */
  partition?: number;
  /** A PodDisruptionBudget over the set's pods, minAvailable replicas − 1. */
  pdb: boolean;
  whenDeleted: "Retain" | "Delete";
  /** In order: add `logs` to [data], remove it from [data, logs], or both (a removed template added back). */
  ops: TemplatesOp[];
  /** The pod template mounts `logs` while the set has it: an add holds the pod template that mounts it, a remove the one that stops. */
  mounts: boolean;
  /** The desired-templates annotation lists every template (else only the added one; a remove writes none). */
  listAll: boolean;
  /** The add's held pod template also mounts a volume no template provides: claimstep must refuse, writing nothing. */
  badMount?: boolean;
  podStartMs: number;
  gcMs: number;
  /** Invocations with faults, kills and races, per op, before the clean ones. */
  chaosSteps: number;
  killRate: number;
  raceRate: number;
  /** Per request of claimstep's that writes: a 409 Conflict as if another writer got there first. */
  conflictRate: number;
  /**
   * Per invocation: a slow process reads a snapshot now and acts on it 1–3 invocations later.
   * 0 in `templatesCase`; `templatesCaseWithSlowSteps` (CLAIMSTEP_TEMPLATES_SLOW=1 in the soak) sets it.
   */
  slowRate?: number;
  /**
   * Per chaos invocation: the user sets another partition (docs/pods.md: in the record while
   * claimstep holds the live one, else the live one); the end must hand back the latest.
   */
  partitionEditRate?: number;
  faults: { tooManyRequests: number; serverError: number; timeout: number };
}

const OPS: TemplatesOp[][] = [["add"], ["remove"], ["remove", "add"], ["add", "remove"]];

export const templatesCase: fc.Arbitrary<TemplatesCase> = fc
  .record({
    seed: fc.integer({ min: 1, max: 2 ** 30 }),
    replicas: fc.integer({ min: 1, max: 4 }),
    ordinalsStart: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20 })),
    parallel: fc.boolean(),
    maxUnavailable: fc.integer({ min: 1, max: 2 }),
    partitionPick: fc.option(fc.integer({ min: 0, max: 4 }), { freq: 3 }),
    pdb: fc.boolean(),
    whenDeleted: fc.constantFrom("Retain" as const, "Delete" as const),
    ops: fc.constantFrom(...OPS),
    mounts: fc.boolean(),
    listAll: fc.boolean(),
    podStartMs: fc.constantFrom(2_000, 8_000, 25_000),
    gcMs: fc.constantFrom(300, 5_000, 30_000),
    chaosSteps: fc.integer({ min: 4, max: 24 }),
    killRate: fc.constantFrom(0, 0.2, 0.4),
    raceRate: fc.constantFrom(0, 0.2, 0.4),
    conflictRate: fc.constantFrom(0, 0.05),
    partitionEditRate: fc.constantFrom(0, 0, 0.1),
    noisy: fc.boolean(),
  })
  .map(({ partitionPick, noisy, ...rest }) => ({
    ...rest,
    ...(partitionPick !== null ? { partition: Math.min(partitionPick, rest.replicas) } : {}),
    faults: noisy
      ? { tooManyRequests: 0.05, serverError: 0.05, timeout: 0.05 }
      : { tooManyRequests: 0, serverError: 0, timeout: 0 },
  }));

/** Cases with slow processes acting on snapshots one to three invocations old. */
export const templatesCaseWithSlowSteps: fc.Arbitrary<TemplatesCase> = fc
  .tuple(templatesCase, fc.constantFrom(0.2, 0.4))
  .map(([c, slowRate]) => ({ ...c, slowRate }));

/** The same case without faults, kills, races or conflicts. */
export const quiet = (c: TemplatesCase): TemplatesCase => ({
  ...c,
  killRate: 0,
  raceRate: 0,
  conflictRate: 0,
  partitionEditRate: 0,
  faults: { tooManyRequests: 0, serverError: 0, timeout: 0 },
});

const initialTemplates = (c: TemplatesCase): string[] => (c.ops[0] === "add" ? [BASE] : [BASE, EXTRA]);
const mountsFor = (c: TemplatesCase, templates: readonly string[]): Json[] =>
  templates.filter((t) => t === BASE || c.mounts).map((t) => ({ name: t, mountPath: `/${t}` }));
const template = (name: string) => claimTemplate({ name, storage: "1Gi", storageClassName: CLASS });

// ---------------------------------------------------------------------------------------------
// Planted bugs: a step's reader or writers, wrapped.

export type TemplatesBug =
  /** The pod writer evicts the highest pod whose volumes do not match the set instead of the one asked for. */
  | "evict-highest-first"
  /** The planner is shown every pod Ready: it evicts without the others being Ready. */
  | "evict-without-ready-check"
  /** The planner is shown the held pod template without its mount of a missing volume; the re-create sends the real one. */
  | "mount-check-dropped"
  /**
   * The same, on an API server that does not refuse it (older than the check, or a webhook's
   * mutation after validation): the set is stored as sent, and its controller makes pods from it.
   */
  | "mount-check-dropped-server-accepts"
  /** The re-create writer deletes a removed template's claim instead of labelling it. */
  | "claims-deleted"
  /** The restore removes the record of the user's partition but leaves the partition held. */
  | "partition-not-restored";

export const TEMPLATES_BUGS: readonly TemplatesBug[] = [
  "evict-highest-first",
  "evict-without-ready-check",
  "mount-check-dropped",
  "mount-check-dropped-server-accepts",
  "claims-deleted",
  "partition-not-restored",
];

interface PlantContext {
  sim: SimCluster;
  fetch: (url: string, init?: RequestInit) => Promise<Response>;
  /** The held pod template the case wrote (the truth the `mount-check-dropped` reader hides). */
  held: () => Json | undefined;
}

const bindRecreate = (w: RecreateWriter): RecreateWriter => ({
  writeRecord: (a) => w.writeRecord(a),
  armRecord: (a) => w.armRecord(a),
  orphanSet: (a) => w.orphanSet(a),
  createSet: (a) => w.createSet(a),
  restoreOwnership: (a, annotations) => w.restoreOwnership(a, annotations),
  deleteRecord: (a) => w.deleteRecord(a),
  labelClaim: (a) => w.labelClaim(a),
});
const bindPods = (w: PodWriter): PodWriter => ({
  patchPartition: (a, annotations) => w.patchPartition(a, annotations),
  evict: (a) => w.evict(a),
});

/** The mounts of a pod template's containers. */
function mountNames(podTemplate: Json | undefined): string[] {
  const spec = (podTemplate?.spec as Json | undefined) ?? {};
  const containers = [...((spec.containers as Json[]) ?? []), ...((spec.initContainers as Json[]) ?? [])];
  return containers.flatMap((c) => ((c.volumeMounts as Json[] | undefined) ?? []).map((m) => String(m.name)));
}

/** A held pod template without its mounts of `MISSING`. */
function withoutMissing(raw: string): string {
  try {
    const t = JSON.parse(raw) as Json;
    for (const c of ((t.spec as Json | undefined)?.containers as Json[] | undefined) ?? [])
      if (Array.isArray(c.volumeMounts)) c.volumeMounts = (c.volumeMounts as Json[]).filter((m) => m.name !== MISSING);
    return JSON.stringify(t);
  } catch {
    return raw;
  }
}

function plantReader(bug: TemplatesBug | undefined, reader: StateReader): StateReader {
  if (bug === "evict-without-ready-check")
    return {
      load: async (ref, o) => {
        const s = await reader.load(ref, o);
        for (const p of s.pods) {
          delete p.metadata.deletionTimestamp;
          p.status = { ...p.status, phase: "Running", conditions: [{ type: "Ready", status: "True" }] };
        }
        return s;
      },
    };
  if (bug === "mount-check-dropped" || bug === "mount-check-dropped-server-accepts")
    return {
      load: async (ref, o) => {
        const s = await reader.load(ref, o);
        const a = s.statefulSet.metadata.annotations;
        const raw = a?.[K.podTemplate];
        if (a && raw !== undefined) a[K.podTemplate] = withoutMissing(raw);
        // The reader's policy is of the set it read: the edited set's is parsed by the step.
        delete s.policy;
        return s;
      },
    };
  return reader;
}

function plantWriters(bug: TemplatesBug | undefined, w: Writers, ctx: PlantContext): Writers {
  if (!bug) return w;
  const pods = bindPods(w.pods!);
  const recreate = bindRecreate(w.recreate!);
  switch (bug) {
    case "evict-highest-first":
      pods.evict = (a) => {
        const view = observe(ctx.sim);
        const top = [...view.pods.entries()]
          .filter(([, p]) => p.ordinal !== undefined && !p.deleting && mismatch(view, p) !== undefined)
          .sort((x, y) => y[1].ordinal! - x[1].ordinal!)[0];
        return w.pods!.evict(top ? { ...a, pod: top[0], uid: top[1].uid, ordinal: top[1].ordinal! } : a);
      };
      break;
    case "partition-not-restored":
      pods.patchPartition = (a, annotations) =>
        w.pods!.patchPartition(a.userPartition === null ? { ...a, partition: a.from } : a, annotations);
      break;
    case "claims-deleted":
      recreate.labelClaim = async (a) => {
        if (a.orphanedFrom === null) return w.recreate!.labelClaim(a);
        const res = await ctx.fetch(
          `${SIM_SERVER}/api/v1/namespaces/${a.namespace}/persistentvolumeclaims/${a.claim}?fieldManager=claimstep`,
          { method: "DELETE", body: JSON.stringify({ apiVersion: "v1", kind: "DeleteOptions" }) },
        );
        if (!res.ok) throw new Error(`planted claims-deleted: DELETE ${a.claim} answered ${res.status}`);
        return { kind: "applied", detail: `deleted PersistentVolumeClaim ${a.claim} (planted bug)` };
      };
      break;
    case "mount-check-dropped":
      recreate.createSet = (a) => {
        const held = ctx.held();
        if (!held) return w.recreate!.createSet(a);
        const manifest = structuredClone(a.manifest);
        (manifest.spec as unknown as Json).template = structuredClone(held);
        return w.recreate!.createSet({ ...a, manifest });
      };
      break;
    case "mount-check-dropped-server-accepts":
      recreate.createSet = async (a) => {
        const held = ctx.held();
        const manifest = structuredClone(a.manifest) as unknown as Json;
        if (held) (manifest.spec as Json).template = structuredClone(held);
        // Stored as sent: no validation (the create is audited as claimstep's).
        ctx.sim.store.insert(
          "statefulsets",
          manifest,
          { manager: "claimstep", operation: "Update", apiVersion: "apps/v1" },
          "claimstep",
          "create",
          manifest,
        );
        // … and restarts its lowest pod at once, so that the controller makes one from it.
        const lowest = [...observe(ctx.sim).pods.entries()]
          .filter(([, p]) => p.ordinal !== undefined && !p.deleting)
          .sort((x, y) => x[1].ordinal! - y[1].ordinal!)[0];
        if (lowest)
          await ctx.fetch(
            `${SIM_SERVER}/api/v1/namespaces/${a.namespace}/pods/${lowest[0]}/eviction?fieldManager=claimstep`,
            {
              method: "POST",
              body: JSON.stringify({ apiVersion: "policy/v1", kind: "Eviction", metadata: { name: lowest[0] } }),
            },
          );
        return { kind: "applied", detail: `created StatefulSet ${a.set} unvalidated (planted bug)` };
      };
      break;
    case "evict-without-ready-check":
      break;
  }
  return { ...w, pods, recreate };
}

// ---------------------------------------------------------------------------------------------
// The oracle's view of the cluster (straight from the simulated store).

export type TemplatesInvariant =
  | "I14a"
  | "I14b"
  | "I14-unavailable"
  | "I14-evict-ready"
  | "I14-order"
  | "I14-pods"
  | "I14-partition"
  | "I14-converge"
  | "crash";

export interface TemplatesViolation {
  invariant: TemplatesInvariant;
  message: string;
  /** Op (0-based) and invocation in it where it was seen. */
  op: number;
  at: number;
}

interface PodState {
  uid: string;
  ordinal: number | undefined;
  ready: boolean;
  deleting: boolean;
  /** Claim names of its persistentVolumeClaim volumes. */
  claims: Set<string>;
  /** Its containers' volume mounts. */
  mounts: string[];
}
interface ClaimState {
  uid: string;
  deleting: boolean;
  orphanedFrom: string | undefined;
}
interface World {
  set?: {
    uid: string;
    deleting: boolean;
    templates: string[];
    podTemplate: Json;
    partition: number;
    annotations: Record<string, string>;
  };
  record: boolean;
  pods: Map<string, PodState>;
  claims: Map<string, ClaimState>;
}

const POD_NAME = new RegExp(`^${REF.name}-(\\d+)$`);
const CLAIM_NAME = new RegExp(`^(${BASE}|${EXTRA})-${REF.name}-(\\d+)$`);
const claimOf = (t: string, o: number) => `${t}-${REF.name}-${o}`;

function podState(p: Json): PodState {
  const m = p.metadata as any;
  const spec = (p.spec as any) ?? {};
  const status = (p.status as any) ?? {};
  const o = POD_NAME.exec(m.name);
  return {
    uid: m.uid,
    ordinal: o ? Number(o[1]) : undefined,
    ready:
      !m.deletionTimestamp &&
      status.phase === "Running" &&
      (status.conditions ?? []).some((x: any) => x.type === "Ready" && x.status === "True"),
    deleting: !!m.deletionTimestamp,
    claims: new Set(
      ((spec.volumes ?? []) as any[]).map((v) => v.persistentVolumeClaim?.claimName).filter((x) => x !== undefined),
    ),
    mounts: mountNames(p as Json),
  };
}

function observe(sim: SimCluster): World {
  const raw = sim.store.peek("statefulsets", REF.namespace, REF.name) as any;
  const pods = new Map<string, PodState>();
  for (const p of sim.store.all("pods", REF.namespace))
    if (POD_NAME.test((p.metadata as any).name)) pods.set((p.metadata as any).name, podState(p));
  const claims = new Map<string, ClaimState>();
  for (const c of sim.store.all("persistentvolumeclaims", REF.namespace)) {
    const m = c.metadata as any;
    if (CLAIM_NAME.test(m.name))
      claims.set(m.name, { uid: m.uid, deleting: !!m.deletionTimestamp, orphanedFrom: m.labels?.[K.orphanedFrom] });
  }
  return {
    ...(raw
      ? {
          set: {
            uid: raw.metadata.uid,
            deleting: !!raw.metadata.deletionTimestamp,
            templates: (raw.spec.volumeClaimTemplates ?? []).map((t: any) => t.metadata.name),
            podTemplate: raw.spec.template,
            partition: raw.spec.updateStrategy?.rollingUpdate?.partition ?? 0,
            annotations: { ...(raw.metadata.annotations ?? {}) },
          },
        }
      : {}),
    record: !!sim.store.peek("configmaps", REF.namespace, RECORD),
    pods,
    claims,
  };
}

/** Why pod `p` does not match the set's templates (a volume missing, or one of a template no longer there), or undefined. */
function mismatch(w: World, p: PodState): string | undefined {
  if (!w.set || p.ordinal === undefined) return undefined;
  const lacks = w.set.templates.filter((t) => !p.claims.has(claimOf(t, p.ordinal!)));
  const extra = [BASE, EXTRA].filter((t) => !w.set!.templates.includes(t) && p.claims.has(claimOf(t, p.ordinal!)));
  if (!lacks.length && !extra.length) return undefined;
  return [lacks.length ? `lacks ${lacks.join(", ")}` : "", extra.length ? `still has ${extra.join(", ")}` : ""]
    .filter(Boolean)
    .join(" and ");
}

/** Volumes a StatefulSet's pod template mounts that neither its claim templates nor its own volumes provide. */
export function missingMounts(set: Json | undefined): string[] {
  const spec = (set?.spec as Json | undefined) ?? {};
  const podTemplate = spec.template as Json | undefined;
  const have = new Set([
    ...((spec.volumeClaimTemplates as Json[] | undefined) ?? []).map((t) => String((t.metadata as Json)?.name)),
    ...(((podTemplate?.spec as Json | undefined)?.volumes as Json[] | undefined) ?? []).map((v) => String(v.name)),
  ]);
  return mountNames(podTemplate).filter((m) => !have.has(m));
}

/** Volumes a pod mounts that its spec lacks. */
function podMissingMounts(pod: Json): string[] {
  const have = new Set((((pod.spec as Json | undefined)?.volumes as Json[] | undefined) ?? []).map((v) => v.name));
  return mountNames(pod).filter((m) => !have.has(m));
}

/** `DELETE persistentvolumeclaims/x`, `POST pods/eviction`: what a request is, for traces and tallies. */
export function requestKind(method: string, path: string): string {
  const parts = path.replace(/\?.*$/, "").split("/").filter(Boolean);
  const at = parts.indexOf("namespaces");
  const rest = at >= 0 ? parts.slice(at + 2) : parts.slice(parts[0] === "api" ? 2 : 3);
  const verb = method === "GET" ? (rest.length >= 2 ? "GET" : "LIST") : method;
  return `${verb} ${rest[0] ?? "?"}${rest[2] ? `/${rest[2]}` : ""}`;
}

// ---------------------------------------------------------------------------------------------
// One case.

export interface TemplatesResult {
  violations: TemplatesViolation[];
  /** Where processes were killed or lost an answer: `killed after POST pods/eviction → 201`. */
  killPoints: string[];
  invocations: number;
  races: number;
  kills: number;
  lost: number;
  faults: number;
  conflicts: number;
  /** claimstep's accepted evictions, and those a budget refused. */
  evictions: number;
  budgetRefusals: number;
  /** Claims claimstep labelled or unlabelled orphaned-from (accepted). */
  labels: number;
  /** The ops that ended Complete. */
  completed: number;
  /** Steps of slow processes on old snapshots. */
  slowSteps: number;
  /** A person's partition edits. */
  edits: number;
  last?: Decision;
}

class ProcessKilled extends Error {
  override readonly name = "ProcessKilled";
}

export type KillMode = "die-before" | "die-after" | "lost";
interface Kill {
  mode: KillMode;
  /** 1-based request of the process's step, or its first write. */
  at: number | "first-write";
}

export interface TemplatesRunOptions {
  bug?: TemplatesBug;
  trace?: (line: string) => void;
  /** Keep going after a violation (planted-bug runs show every invariant that fires). */
  keepGoing?: boolean;
  /** Clean invocations allowed per op to reach Complete (default 160). */
  cleanSteps?: number;
  /**
   * Besides the case's own kills: the first request of this kind (`POST pods/eviction`, see
   * requestKind; a claim's label: `PATCH persistentvolumeclaims (orphaned-from)`) kills its process so.
   */
  killAt?: { request: string; mode: KillMode };
  /** Right after the first request of this kind lands, the user sets this partition (see `partitionEditRate`). */
  editAfter?: { request: string; partition: number };
}

const CLEAN_STEPS = 160;
const CLEAN_GAP_MS = 10_000;
/** Clean invocations with the same decision after which a case stops waiting (300 s: more than any wait of a case). */
const STUCK_STEPS = 30;

export async function runTemplatesCase(c: TemplatesCase, opts: TemplatesRunOptions = {}): Promise<TemplatesResult> {
  const sim = new SimCluster({ seed: c.seed, latencies: { gcMs: c.gcMs, podStartMs: c.podStartMs } });
  const prng = new Prng(c.seed ^ 0x1b873593);
  const trace = opts.trace;
  const violations: TemplatesViolation[] = [];
  const seen = new Set<string>();
  let op = 0;
  let at = 0;
  const violate = (invariant: TemplatesInvariant, message: string) => {
    const key = `${invariant}|${message.replace(/^[^:]*#\d+[^:]*: /, "")}`;
    if (seen.has(key)) return;
    seen.add(key);
    violations.push({ invariant, message, op, at });
    trace?.(`  VIOLATION ${invariant}: ${message}`);
  };
  const result: TemplatesResult = {
    violations,
    invocations: 0,
    races: 0,
    kills: 0,
    lost: 0,
    faults: 0,
    conflicts: 0,
    evictions: 0,
    budgetRefusals: 0,
    labels: 0,
    completed: 0,
    slowSteps: 0,
    edits: 0,
    killPoints: [],
  };
  let forcedDone = false;
  let editDone = false;

  let where = () => "setup";
  // I14a (pods): every pod anyone creates, judged as it is stored.
  const insert = sim.store.insert.bind(sim.store);
  sim.store.insert = (r, obj, manager, actor, verb, body) => {
    const stored = insert(r, obj, manager, actor, verb, body);
    if (r === "pods") {
      const missing = podMissingMounts(stored);
      if (missing.length)
        violate(
          "I14a",
          `${where()}: pod ${(stored.metadata as any).name} created by ${actor} mounts ${missing.join(", ")}, which its spec lacks`,
        );
    }
    return stored;
  };

  // The running set.
  await sim.addStorageClass(CLASS, { allowVolumeExpansion: true, driver: { resize: "online", modify: "ok" } });
  const manifest = statefulSetManifest({
    name: REF.name,
    replicas: c.replicas,
    ordinalsStart: c.ordinalsStart,
    ...(c.partition !== undefined ? { partition: c.partition } : {}),
    maxUnavailable: c.maxUnavailable,
    podManagementPolicy: c.parallel ? "Parallel" : "OrderedReady",
    templates: initialTemplates(c).map((name) => ({ name, storage: "1Gi", storageClassName: CLASS })),
    retentionPolicy: { whenDeleted: c.whenDeleted, whenScaled: "Retain" },
  }) as any;
  manifest.spec.template.spec.containers[0].volumeMounts = mountsFor(c, initialTemplates(c));
  await sim.createStatefulSet(manifest, 2 * 60_000 + c.replicas * (10_000 + c.podStartMs));
  if (c.pdb)
    await sim.addPodDisruptionBudget(REF.namespace, REF.name, {
      minAvailable: c.replicas - 1,
      matchLabels: { app: REF.name },
    });
  const start = observe(sim);
  const first = c.ordinalsStart;
  const end = c.ordinalsStart + c.replicas;
  for (let o = first; o < end; o++)
    if (!start.pods.get(`${REF.name}-${o}`)?.ready)
      throw new Error(`case ${JSON.stringify(c)}: pod ${o} not Ready after setup`);

  // Every claim of the set ever seen: each must stay, same uid.
  const claimLedger = new Map<string, string>();
  let auditMark = sim.audit.length;
  let held: Json | undefined;

  const checkWorld = (w: World, label: string) => {
    for (const [name, s] of w.claims) if (!claimLedger.has(name) && !s.deleting) claimLedger.set(name, s.uid);
    for (const [name, uid] of claimLedger) {
      const now = w.claims.get(name);
      if (!now)
        violate("I14b", `${label}: claim ${name} (uid ${uid}) is gone${deleter("persistentvolumeclaims", name)}`);
      else if (now.uid !== uid) violate("I14b", `${label}: claim ${name} was re-created (uid ${uid} → ${now.uid})`);
      else if (now.deleting)
        violate("I14b", `${label}: claim ${name} has a deletionTimestamp${deleter("persistentvolumeclaims", name)}`);
    }
    const raw = sim.store.peek("statefulsets", REF.namespace, REF.name);
    const missing = missingMounts(raw);
    if (missing.length)
      violate(
        "I14a",
        `${label}: StatefulSet ${REF.name} stored with a pod template mounting ${missing.join(", ")}, which it lacks (the API server must refuse it: 422)`,
      );
    // Pods go only through claimstep's evictions (I14-pods); the audit since the last look.
    for (const e of sim.audit.slice(auditMark)) {
      // Every version of the set the store accepted, not only the one there now.
      const accepted = e.resource === "statefulsets" && e.outcome === "ok" ? missingMounts(e.after) : [];
      if (accepted.length)
        violate(
          "I14a",
          `${label}: StatefulSet ${e.name} stored (${e.verb} by ${e.actor}) with a pod template mounting ${accepted.join(", ")}, which it lacks (the API server must refuse it: 422)`,
        );
      if (e.resource !== "pods" || e.verb !== "delete" || e.outcome !== "ok" || !POD_NAME.test(e.name)) continue;
      if (e.subresource === "eviction" && e.actor === "claimstep") continue;
      violate(
        "I14-pods",
        `${label}: pod ${e.name} deleted by ${e.actor}${e.subresource ? ` (${e.subresource})` : ""} at ${e.at}`,
      );
    }
    auditMark = sim.audit.length;
  };
  const deleter = (resource: string, name: string): string => {
    const e = [...sim.audit]
      .reverse()
      .find((x: AuditEntry) => x.resource === resource && x.name === name && x.verb === "delete" && x.outcome === "ok");
    return e ? ` (deleted by ${e.actor} at ${e.at})` : "";
  };
  checkWorld(start, "setup");

  const unavailable = (w: World): string[] => {
    const out: string[] = [];
    for (let o = first; o < end; o++) {
      const p = w.pods.get(`${REF.name}-${o}`);
      if (!p) out.push(`${REF.name}-${o} missing`);
      else if (!p.ready) out.push(`${REF.name}-${o} ${p.deleting ? "terminating" : "not Ready"}`);
    }
    return out;
  };

  /** Every request claimstep sends that may change something, judged as it lands. */
  function checkRequest(
    method: string,
    path: string,
    body: any,
    status: number,
    pre: World,
    post: World,
    label: string,
  ) {
    const kind = requestKind(method, path);
    const short = `${label} ${method} ${path.replace(/\?.*$/, "")} → ${status}`;
    trace?.(`  ${short}`);
    const ok = status < 300;
    for (const [when, w] of [
      ["before", pre],
      ["after", post],
    ] as const) {
      const down = unavailable(w);
      if (down.length > c.maxUnavailable)
        violate(
          "I14-unavailable",
          `${short}: ${down.length} pods down ${when} it (${down.join(", ")}), maxUnavailable ${c.maxUnavailable}`,
        );
    }
    if (/\/persistentvolumeclaims\//.test(path) && method === "DELETE")
      violate("I14b", `${short}: claimstep sent DELETE of claim ${path.split("/").pop()?.replace(/\?.*$/, "")}`);
    if (/\/statefulsets(\/[^/?]+)?(\?|$)/.test(path) && (method === "POST" || method === "PUT") && body) {
      const missing = missingMounts(body);
      if (missing.length)
        violate(
          "I14a",
          `${short}: claimstep sent a StatefulSet whose pod template mounts ${missing.join(", ")}, which its volumes and claim templates lack`,
        );
    }
    if (/\/configmaps(\?|$)/.test(path) && method === "POST" && body?.data) {
      for (const [k, v] of Object.entries(body.data as Record<string, string>)) {
        let parsed: Json | undefined;
        try {
          parsed = JSON.parse(v);
        } catch {
          continue;
        }
        if (!parsed || typeof parsed !== "object" || !(parsed.spec as Json | undefined)?.template) continue;
        const missing = missingMounts(parsed);
        if (missing.length)
          violate(
            "I14a",
            `${short}: claimstep recorded (${k}) a StatefulSet whose pod template mounts ${missing.join(", ")}, which it lacks`,
          );
      }
    }
    const evicted = /\/pods\/([^/]+)\/eviction/.exec(path)?.[1];
    if (evicted && method === "POST") {
      if (ok) result.evictions++;
      if (status === 429) result.budgetRefusals++;
      const uid = body?.deleteOptions?.preconditions?.uid;
      const pod = pre.pods.get(evicted);
      if (pod && pod.uid === uid) {
        const others: string[] = [];
        for (let o = first; o < end; o++) {
          const name = `${REF.name}-${o}`;
          if (name === evicted) continue;
          const p = pre.pods.get(name);
          if (!p?.ready) others.push(`${name} ${!p ? "missing" : p.deleting ? "terminating" : "not Ready"}`);
        }
        // docs/design.md S4: every other pod Ready within maxUnavailable (this one included).
        if (others.length + 1 > c.maxUnavailable)
          violate(
            "I14-evict-ready",
            `${short}: eviction of ${evicted} while ${others.join(", ")} (maxUnavailable ${c.maxUnavailable})`,
          );
        const lower = [...pre.pods.entries()]
          .filter(([, p]) => p.ordinal !== undefined && p.ordinal < pod.ordinal! && p.ordinal >= first && !p.deleting)
          .map(([name, p]) => [name, mismatch(pre, p)] as const)
          .filter(([, why]) => why !== undefined);
        if (lower.length)
          violate(
            "I14-order",
            `${short}: eviction of ${evicted} while a lower pod's volumes do not match the set: ${lower.map(([n, why]) => `${n} ${why}`).join("; ")}`,
          );
      }
    }
    const claim = /\/persistentvolumeclaims\/([^/?]+)/.exec(path)?.[1];
    if (claim && method === "PATCH") {
      const label_ = body?.metadata?.labels?.[K.orphanedFrom];
      if (label_ !== undefined && ok) result.labels++;
      const t = CLAIM_NAME.exec(claim)?.[1];
      if (typeof label_ === "string" && t && pre.set && !pre.set.deleting && pre.set.templates.includes(t))
        violate(
          "I14b",
          `${short}: labelled ${claim} ${K.orphanedFrom}=${label_} while the set (uid ${pre.set.uid}) has template ${t}`,
        );
    }
    if (post.set && post.set.annotations[K.userPartition] !== undefined) {
      const recorded = Number(post.set.annotations[K.userPartition]);
      if (post.set.partition < recorded)
        violate(
          "I14-partition",
          `${short}: partition ${post.set.partition} below the user's recorded ${recorded} (${kind})`,
        );
    }
  }

  // Lost answers: one permanent fault entry whose predicate fires when a process asks for it.
  let loseNext = false;
  sim.http.failNext(
    () => {
      if (!loseNext) return false;
      loseNext = false;
      return true;
    },
    { lost: true },
    Number.MAX_SAFE_INTEGER,
  );
  let chaosOn = false;

  /** A step's process: its own client over the cluster's HTTP server, killed where `kill` says. */
  function processOf(kill: Kill | undefined, opt: { yieldRandomly?: boolean; label?: string } = {}) {
    let n = 0;
    let wrote = false;
    let dead = false;
    const label = opt.label ?? "step";
    const state: { killed: boolean; lost: number } = { killed: false, lost: 0 };
    const fetchLike = async (url: string, init: RequestInit = {}): Promise<Response> => {
      if (dead) throw new ProcessKilled("the process is gone");
      if (opt.yieldRandomly) for (let k = prng.int(0, 3); k > 0; k--) await new Promise((r) => setImmediate(r));
      if (dead) throw new ProcessKilled("the process is gone");
      n++;
      const method = (init.method ?? "GET").toUpperCase();
      const path = url.replace(/^https?:\/\/[^/]+/, "");
      const body = typeof init.body === "string" && init.body ? JSON.parse(init.body) : undefined;
      // A claim's orphaned-from label is told apart from its other patches (the revision label).
      const orphan = body?.metadata?.labels?.[K.orphanedFrom];
      const kind =
        requestKind(method, path) +
        (orphan === null ? " (orphaned-from removed)" : orphan !== undefined ? " (orphaned-from)" : "");
      if (chaosOn && !forcedDone && opts.killAt?.request === kind) {
        forcedDone = true;
        kill = { mode: opts.killAt.mode, at: n };
      }
      const mode =
        kill && (kill.at === n || (kill.at === "first-write" && method !== "GET" && !wrote)) ? kill.mode : undefined;
      if (method !== "GET") wrote = true;
      if (mode === "die-before") {
        dead = true;
        state.killed = true;
        result.killPoints.push(`killed before ${kind}`);
        trace?.(`  ${label} killed before ${requestKind(method, path)}`);
        throw new ProcessKilled("killed");
      }
      if (method !== "GET" && chaosOn && prng.chance(c.conflictRate) && !/\/events/.test(path)) {
        result.conflicts++;
        trace?.(`  ${label} ${requestKind(method, path)} → 409 (injected: another writer was first)`);
        return new Response(
          JSON.stringify({
            kind: "Status",
            apiVersion: "v1",
            metadata: {},
            status: "Failure",
            message:
              "Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest version and try again",
            reason: "Conflict",
            code: 409,
          }),
          { status: 409, headers: { "content-type": "application/json" } },
        );
      }
      if (mode === "lost") {
        loseNext = true;
        state.lost++;
        result.killPoints.push(`answer lost: ${kind}`);
      }
      const judged = method !== "GET";
      const pre = judged ? observe(sim) : undefined;
      const res = await sim.http.fetchLike(url, init);
      if (pre) {
        const post = observe(sim);
        checkRequest(method, path, body, res.status, pre, post, label);
        checkWorld(post, `${where()} ${label} ${requestKind(method, path)}`);
      }
      if (opts.editAfter && !editDone && opts.editAfter.request === kind && res.status < 300) {
        editDone = true;
        await editPartition(opts.editAfter.partition);
      }
      if (mode === "die-after") {
        dead = true;
        state.killed = true;
        result.killPoints.push(`killed after ${kind} → ${res.status}`);
        trace?.(`  ${label} killed after ${requestKind(method, path)} → ${res.status}`);
        throw new ProcessKilled("killed");
      }
      return res;
    };
    const client = sim.newClient({ fetch: fetchLike });
    const writers = kubeWriters(client, { reportingInstance: "claimstep-sim" });
    return {
      reader: plantReader(opts.bug, new KubeReader(client)),
      writers: plantWriters(opts.bug, writers as Writers, { sim, fetch: fetchLike, held: () => held }),
      state,
    };
  }

  const drawKill = (): Kill | undefined => {
    if (!prng.chance(c.killRate)) return undefined;
    const mode = (["die-before", "die-after", "lost"] as const)[prng.int(0, 2)]!;
    return { mode, at: prng.chance(0.5) ? "first-write" : prng.int(1, 9) };
  };

  /** One invocation (or two racing on one snapshot). */
  async function invoke(chaos: boolean): Promise<{ decisions: StepResult[] }> {
    const decisions: StepResult[] = [];
    // What the invocation read (racing ones read it too): nothing else runs while it runs.
    const before = observe(sim);
    const guarded = async (p: ReturnType<typeof processOf>, reader: StateReader, label: string) => {
      try {
        const r = await runStep({ reader, writers: p.writers, ref: REF, now: sim.now() });
        if (!p.state.killed) decisions.push(r);
        trace?.(
          `  ${label}: ${r.decision.phase}/${r.decision.reason} ${r.decision.action?.type ?? "-"} ${r.outcome.kind}${p.state.killed ? " (killed)" : ""}: ${r.decision.message}`,
        );
      } catch (err) {
        if (p.state.killed || err instanceof ProcessKilled) return;
        if (err instanceof ApiError && (err.isTransient || err.code === 409)) return;
        // A planted bug's request the API server refuses (422) is its invariant's to report.
        if (opts.bug && err instanceof Error) {
          trace?.(`  ${label}: threw ${err.message.slice(0, 300)}`);
          return;
        }
        violate("crash", `${label}: runStep threw ${(err as Error).stack ?? err}`);
      }
    };
    const faultsBefore = Object.values(sim.faults.counts).reduce((a, b) => a + b, 0);
    const procs: ReturnType<typeof processOf>[] = [];
    if (chaos && prng.chance(c.raceRate)) {
      result.races++;
      let snapshot: Snapshot | undefined;
      try {
        snapshot = await processOf(undefined).reader.load(REF);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
      }
      if (snapshot) {
        const shared = snapshot;
        const a = processOf(drawKill(), { yieldRandomly: true, label: "A" });
        const b = processOf(drawKill(), { yieldRandomly: true, label: "B" });
        procs.push(a, b);
        await Promise.all([
          guarded(a, { load: async () => structuredClone(shared) }, "A"),
          guarded(b, { load: async () => structuredClone(shared) }, "B"),
        ]);
      }
    } else {
      const p = processOf(chaos ? drawKill() : undefined);
      procs.push(p);
      await guarded(p, p.reader, "step");
    }
    loseNext = false;
    if (procs.some((p) => p.state.killed)) result.kills++;
    result.lost += procs.reduce((s, p) => s + p.state.lost, 0);
    result.faults += Object.values(sim.faults.counts).reduce((a, b) => a + b, 0) - faultsBefore;
    for (const bug of sim.http.bugs.splice(0))
      violate("crash", `the simulated API server failed: ${bug.stack ?? bug.message}`);
    // Converged is a truth about the pods it read: every one there, Ready, with its set's volumes.
    for (const { decision: d } of decisions) {
      if (d.phase !== "Complete" || d.reason !== "Converged") continue;
      const down = unavailable(before);
      const mismatched = [...before.pods.entries()]
        .filter(([, p]) => p.ordinal !== undefined && p.ordinal >= first && p.ordinal < end)
        .map(([name, p]) => [name, mismatch(before, p)] as const)
        .filter(([, why]) => why !== undefined)
        .map(([name, why]) => `${name} ${why}`);
      if (down.length || mismatched.length)
        violate(
          "I14-converge",
          `${where()}: Complete/Converged while ${[...down, ...mismatched].join(", ")}: "${d.message}"`,
        );
    }
    return { decisions };
  }

  /** The user's partition as the user last set it. */
  let userPartition = c.partition ?? 0;
  /** A person sets another partition: the record while claimstep holds the live one (docs/pods.md), else the live one. */
  const editPartition = async (to?: number) => {
    const live = sim.store.peek("statefulsets", REF.namespace, REF.name) as any;
    if (!live || live.metadata.deletionTimestamp) return;
    const next = to ?? prng.int(0, c.replicas);
    const held = live.metadata.annotations?.[K.userPartition] !== undefined;
    await sim.admin.mergePatch(
      "statefulsets",
      REF.namespace,
      REF.name,
      held
        ? { metadata: { annotations: { [K.userPartition]: String(next) } } }
        : { spec: { updateStrategy: { rollingUpdate: { partition: next } } } },
      { fieldManager: "kubectl" },
    );
    userPartition = next;
    result.edits++;
    trace?.(
      `  edit: the user's partition → ${next}${held ? ` (in ${K.userPartition}: claimstep holds the live one)` : ""}`,
    );
  };

  /** A slow process's snapshot, and the invocation after which it acts. */
  let slow: { snapshot: Snapshot; due: number } | undefined;
  /** The slow process acts if due, then maybe another one reads. */
  const slowProcess = async () => {
    if (slow && slow.due <= at) {
      const { snapshot } = slow;
      slow = undefined;
      result.slowSteps++;
      const p = processOf(undefined, { label: "slow" });
      try {
        const r = await runStep({
          reader: { load: async () => structuredClone(snapshot) },
          writers: p.writers,
          ref: REF,
          now: sim.now(),
        });
        trace?.(
          `  slow: ${r.decision.phase}/${r.decision.reason} ${r.decision.action?.type ?? "-"} ${r.outcome.kind}: ${r.decision.message}`,
        );
      } catch (err) {
        if (!(err instanceof ApiError) && !opts.bug)
          violate("crash", `slow: runStep threw ${(err as Error).stack ?? err}`);
      }
    }
    if (!slow && c.slowRate && prng.chance(c.slowRate)) {
      try {
        slow = { snapshot: await processOf(undefined).reader.load(REF), due: at + prng.int(1, 3) };
        trace?.(`  a slow process read its snapshot; it acts after invocation #${slow.due}`);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
      }
    }
  };

  const advance = (ms: number) => {
    sim.advance(ms);
    checkWorld(observe(sim), `${where()} (after ${ms} ms)`);
  };

  // The ops.
  let templates = initialTemplates(c);
  const removed = new Set<string>();
  /** Uids of a removed template's claims when it was removed: a re-add must reuse them. */
  const removedUids = new Map<string, string>();
  for (op = 0; op < c.ops.length && (!violations.length || opts.keepGoing); op++) {
    const kind = c.ops[op]!;
    at = 0;
    where = () => `op ${op} (${kind}) #${at}`;
    const live = sim.store.peek("statefulsets", REF.namespace, REF.name) as any;
    const next = kind === "add" ? [...templates, EXTRA] : templates.filter((t) => t !== EXTRA);
    const badMount = !!c.badMount && kind === "add";
    const mountsChange = c.mounts || badMount;
    held = undefined;
    if (mountsChange) {
      held = structuredClone(live.spec.template) as Json;
      const container = ((held.spec as Json).containers as Json[])[0]!;
      container.volumeMounts = [
        ...mountsFor(c, next),
        ...(badMount ? [{ name: MISSING, mountPath: `/${MISSING}` }] : []),
      ];
    }
    const annotations: Record<string, string | null> = {
      [K.finalize]: "Recreate",
      [K.podTemplate]: held ? JSON.stringify(held) : null,
    };
    if (kind === "add") {
      annotations[K.templates] = JSON.stringify((c.listAll ? next : [EXTRA]).map(template));
      if (removed.has(EXTRA)) annotations[K.removeTemplates] = null;
    } else {
      annotations[K.removeTemplates] = JSON.stringify([EXTRA]);
      annotations[K.templates] = c.listAll ? JSON.stringify(next.map(template)) : null;
      for (let o = first; o < end; o++) {
        const name = claimOf(EXTRA, o);
        const uid = claimLedger.get(name);
        if (uid) removedUids.set(name, uid);
      }
    }
    await sim.admin.mergePatch(
      "statefulsets",
      REF.namespace,
      REF.name,
      { metadata: { annotations } },
      { fieldManager: "kubectl" },
    );
    trace?.(`op ${op}: ${kind} ${EXTRA} (${JSON.stringify(annotations)})`);
    const uidBefore = live.metadata.uid as string;

    // The chaos.
    sim.faults.plan = { ...c.faults, retryAfterSeconds: 1 };
    chaosOn = true;
    for (let i = 0; i < c.chaosSteps && (!violations.length || opts.keepGoing); i++) {
      at++;
      result.invocations++;
      trace?.(`#${at} t=${sim.now().toISOString().slice(11, 23)}`);
      await invoke(true);
      await slowProcess();
      if (c.partitionEditRate && prng.chance(c.partitionEditRate)) await editPartition();
      const pick = prng.int(0, 9);
      advance(pick === 0 ? 0 : pick <= 5 ? prng.int(500, 10_000) : prng.int(10_000, 60_000));
    }
    sim.faults.plan = {};
    chaosOn = false;
    slow = undefined;

    // Clean steps until Complete twice in a row.
    let completes = 0;
    let stuck = 0;
    let lastKey = "";
    let last: Decision | undefined;
    for (let i = 0; i < (opts.cleanSteps ?? CLEAN_STEPS) && completes < 2; i++) {
      if (violations.length && !opts.keepGoing) break;
      at++;
      result.invocations++;
      trace?.(`#${at} (clean) t=${sim.now().toISOString().slice(11, 23)}`);
      const { decisions } = await invoke(false);
      last = decisions.at(-1)?.decision ?? last;
      if (last) result.last = last;
      completes = last?.phase === "Complete" ? completes + 1 : 0;
      if (badMount && last?.phase === "Blocked") completes = 2;
      // The same word for a while: it stays so (the end checks say what is left).
      const key = last ? `${last.phase}|${last.reason}|${last.message}` : "";
      stuck = key === lastKey ? stuck + 1 : 0;
      lastKey = key;
      if (stuck >= STUCK_STEPS) break;
      if (completes < 2) advance(CLEAN_GAP_MS);
    }
    if (violations.length && !opts.keepGoing) break;
    const lastSaid = last ? `${last.phase}/${last.reason}: ${last.message}` : "no decision";

    if (badMount) {
      // Refused before anything is written: no record, the same set, no eviction.
      const w = observe(sim);
      const problems: string[] = [];
      if (last?.phase !== "Blocked") problems.push(`not Blocked (last: ${lastSaid})`);
      if (w.record) problems.push(`record ${RECORD} written`);
      if (w.set?.uid !== uidBefore)
        problems.push(`the set was re-created (uid ${uidBefore} → ${w.set?.uid ?? "none"})`);
      if (result.evictions) problems.push(`${result.evictions} pods evicted`);
      if (problems.length)
        violate("I14a", `a held pod template mounting ${MISSING} (no such volume): ${problems.join("; ")}`);
      break;
    }
    templates = next;
    if (kind === "remove") removed.add(EXTRA);
    else removed.delete(EXTRA);

    // The end of the op: I14-converge, I14b, I14-partition.
    const w = observe(sim);
    const converge: string[] = [];
    if (completes < 2) converge.push(`not Complete after the clean steps; last ${lastSaid}`);
    if (!w.set) converge.push("no set");
    else {
      if (w.set.uid === uidBefore) converge.push(`the set was not re-created (uid ${uidBefore})`);
      if ([...w.set.templates].sort().join(",") !== [...templates].sort().join(","))
        converge.push(`the set's templates are ${w.set.templates.join(", ")}, not ${templates.join(", ")}`);
      for (const k of [K.podTemplate, K.templates])
        if (w.set.annotations[k] !== undefined) converge.push(`the set still carries ${k}`);
      const want = mountsFor(c, templates)
        .map((m) => m.name)
        .join(",");
      if (mountNames(w.set.podTemplate).join(",") !== want)
        converge.push(`the set's pod template mounts [${mountNames(w.set.podTemplate).join(", ")}], not [${want}]`);
      for (let o = first; o < end; o++) {
        const name = `${REF.name}-${o}`;
        const p = w.pods.get(name);
        if (!p) {
          converge.push(`pod ${name} missing`);
          continue;
        }
        if (!p.ready) converge.push(`pod ${name} not Ready`);
        const why = mismatch(w, p);
        if (why) converge.push(`pod ${name} ${why}`);
        if (p.mounts.join(",") !== want) converge.push(`pod ${name} mounts [${p.mounts.join(", ")}], not [${want}]`);
      }
    }
    if (w.record) converge.push(`record ${RECORD} left`);
    if (kind === "remove" && !w.set?.annotations[K.removeTemplates]?.includes(`"${EXTRA}"`))
      converge.push(`the set does not keep ${K.removeTemplates} naming ${EXTRA} (the record of what was removed)`);
    if (converge.length) violate("I14-converge", `${where()}: ${converge.join("; ")}`);
    for (let o = first; o < end; o++) {
      const name = claimOf(EXTRA, o);
      const claim = w.claims.get(name);
      if (removed.has(EXTRA)) {
        if (!claim) violate("I14b", `${where()}: removed template ${EXTRA}'s claim ${name} is gone`);
        else if (claim.orphanedFrom !== REF.name)
          violate(
            "I14b",
            `${where()}: removed template ${EXTRA}'s claim ${name} is labelled ${K.orphanedFrom}=${claim.orphanedFrom ?? "(none)"}, not ${REF.name}`,
          );
      } else {
        if (claim?.orphanedFrom !== undefined)
          violate(
            "I14b",
            `${where()}: claim ${name} of the set's template ${EXTRA} still labelled ${K.orphanedFrom}=${claim.orphanedFrom}`,
          );
        const was = removedUids.get(name);
        if (was && claim && claim.uid !== was)
          violate(
            "I14b",
            `${where()}: re-added template ${EXTRA}'s claim ${name} is a new one (uid ${was} → ${claim.uid})`,
          );
      }
    }
    if (w.set) {
      const want = userPartition;
      if (w.set.annotations[K.userPartition] !== undefined)
        violate(
          "I14-partition",
          `${where()}: ${K.userPartition}=${w.set.annotations[K.userPartition]} still recorded at the end (partition ${w.set.partition})`,
        );
      if (w.set.partition !== want)
        violate("I14-partition", `${where()}: the partition is ${w.set.partition} at the end, not the user's ${want}`);
    }
    // What claimstep says (status, the page): the removed template's claims, kept, none mounted now.
    if (completes >= 2 && last) {
      const want = removed.has(EXTRA) ? Array.from({ length: c.replicas }, (_, i) => claimOf(EXTRA, first + i)) : [];
      const said = (last.orphanedClaims ?? []).map((o) => `${o.claim}${o.mounted ? " (mounted)" : ""}`).sort();
      if (said.join(",") !== [...want].sort().join(","))
        violate(
          "I14b",
          `${where()}: the Complete decision lists the orphaned claims [${said.join(", ")}], not [${want.join(", ")}]`,
        );
    }
    if (completes >= 2) result.completed++;
  }
  return result;
}
