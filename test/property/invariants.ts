// The safety invariants of docs/design.md, checked from the outside: on the simulated cluster's live
// objects and on the audit log of every request claimstep made. Readiness and scope are computed
// here independently of core/ (only the revision hash and quantity parsing are shared), so a
// planner bug cannot hide behind the same bug in the checker.

import type { SimCluster } from "../../adapters/sim/cluster.js";
import type { VolumeStats } from "../../adapters/sim/controllers/workload.js";
import type { AuditEntry, Json } from "../../adapters/sim/store.js";
import { FIELD_MANAGER, Keys } from "../../core/keys.js";
import type { ClaimTemplate, PersistentVolumeClaim, StatefulSet } from "../../core/kube/k8s.js";
import { toBytes } from "../../core/kube/quantity.js";
import { revisionOf } from "../../core/kube/revision.js";
import type { UsageReading } from "../../core/types.js";

export type InvariantId =
  | "I1"
  | "I2"
  | "I3"
  | "I4"
  | "I5"
  | "I6"
  | "I7"
  | "I8"
  | "I9"
  | "I10"
  | "I11"
  | "I15"
  | "I16"
  | "I10-optout"
  | "I4-pods"
  | "I17"
  | "A1"
  | "A2"
  | "A3"
  | "A4"
  | "A5"
  | "rule2"
  | "rule13"
  | "crash";

export interface Violation {
  invariant: InvariantId;
  message: string;
}

export interface SetView {
  set: StatefulSet;
  /** Desired templates, or undefined when the annotation is invalid (nothing may be written then). */
  desired: ClaimTemplate[] | undefined;
  revision: string | undefined;
  start: number;
  first: number;
  end: number;
  maxUnavailable: number;
  claims: Map<string, PersistentVolumeClaim>;
  /** The set's pods by name, as the API server shows them. */
  pods: Map<string, PodView>;
  /** spec.updateStrategy.rollingUpdate.partition (0 when unset). */
  livePartition: number;
  /** `claimstep.io/user-partition` while claimstep holds the live partition (P1), else undefined. */
  recordedPartition: number | undefined;
  /** The user's partition: the recorded one while claimstep holds the live one, else the live one (rule 3, P1). */
  userPartition: number;
}

/** A pod as the oracle reads it. */
export interface PodView {
  metadata: {
    name: string;
    uid?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
  };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

const bytes = (q: string | undefined | null): bigint => (q === undefined || q === null ? 0n : toBytes(q));

function desiredOf(set: StatefulSet): ClaimTemplate[] | undefined {
  const live = set.spec.volumeClaimTemplates ?? [];
  const raw = set.metadata.annotations?.[Keys.templates];
  if (raw === undefined) return live;
  try {
    const parsed = JSON.parse(raw) as ClaimTemplate[];
    if (!Array.isArray(parsed)) return undefined;
    const names = new Set(live.map((t) => t.metadata.name));
    if (parsed.some((t) => !names.has(t?.metadata?.name))) return undefined;
    parsed.forEach((t) => toBytes(t.spec.resources!.requests!.storage!));
    return parsed;
  } catch {
    return undefined;
  }
}

function maxUnavailableOf(set: StatefulSet): number {
  const raw = set.spec.updateStrategy?.rollingUpdate?.maxUnavailable;
  const replicas = set.spec.replicas ?? 1;
  if (raw === undefined) return 1;
  if (typeof raw === "number") return Math.max(1, raw);
  const pct = /^(\d+)%$/.exec(raw);
  return Math.max(1, pct ? Math.floor((replicas * Number(pct[1])) / 100) : Number(raw));
}

export function viewOf(cluster: SimCluster, ref: { namespace: string; name: string }): SetView {
  const set = cluster.store.peek("statefulsets", ref.namespace, ref.name) as unknown as StatefulSet;
  // Claims as the API server shows them: what an older server does not report (a failed
  // expansion's allocatedResourceStatuses) no client could know, so the oracle does not either.
  const shown = cluster.store
    .all("persistentvolumeclaims", ref.namespace)
    .map((c) => cluster.admin.view("persistentvolumeclaims", c) as unknown as PersistentVolumeClaim);
  const pods = cluster.store.all("pods", ref.namespace).map((p) => cluster.admin.view("pods", p) as unknown as PodView);
  return viewFrom(set, new Map(shown.map((c) => [c.metadata.name, c])), new Map(pods.map((p) => [p.metadata.name, p])));
}

const recordedOf = (set: StatefulSet): number | undefined => {
  const raw = set.metadata.annotations?.[Keys.userPartition];
  return raw !== undefined && /^\d{1,9}$/.test(raw) ? Number(raw) : undefined;
};

/** The view of a set, its claims and its pods (live, or as they stood before one request). */
export function viewFrom(
  set: StatefulSet,
  claims: Map<string, PersistentVolumeClaim>,
  pods: Map<string, PodView>,
): SetView {
  const desired = desiredOf(set);
  const start = set.spec.ordinals?.start ?? 0;
  const replicas = set.spec.replicas ?? 1;
  const livePartition = set.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
  const recordedPartition = recordedOf(set);
  // Rule 3 with P1: while claimstep holds the partition, the user's recorded one bounds the scope.
  const userPartition = recordedPartition ?? livePartition;
  return {
    set,
    desired,
    revision: desired ? revisionOf(desired) : undefined,
    start,
    first: start + Math.min(userPartition, replicas),
    end: start + replicas,
    maxUnavailable: maxUnavailableOf(set),
    claims,
    pods,
    livePartition,
    recordedPartition,
    userPartition,
  };
}

/**
 * Rule 15: an expansion still under way on the claim — the controller's half, or the node's (the
 * kubelet's file system resize) — unless the resizer marked it as needing no node expansion (rule 16).
 */
export function expansionUnderWay(pvc: PersistentVolumeClaim): string | undefined {
  if (pvc.metadata.annotations?.["volume.kubernetes.io/node-expansion-not-required"] === "true") return undefined;
  const storage = pvc.status?.allocatedResourceStatuses?.storage;
  if (storage === "ControllerResizeInProgress" || storage === "NodeResizePending" || storage === "NodeResizeInProgress")
    return storage;
  return (pvc.status?.conditions ?? []).some((c) => c.type === "FileSystemResizePending" && c.status === "True")
    ? "FileSystemResizePending"
    : undefined;
}

/** KEP readiness: bound, capacity ≥ min(template, spec), no expansion under way (rule 15), the template's VAC applied. */
export function claimReady(pvc: PersistentVolumeClaim | undefined, t: ClaimTemplate): boolean {
  if (pvc?.status?.phase !== "Bound") return false;
  if (expansionUnderWay(pvc)) return false;
  const tpl = bytes(t.spec.resources?.requests?.storage);
  const spec = bytes(pvc.spec.resources?.requests?.storage);
  const want = tpl < spec ? tpl : spec;
  if (bytes(pvc.status.capacity?.storage) < want) return false;
  const vac = t.spec.volumeAttributesClassName;
  if (vac && (pvc.status.currentVolumeAttributesClassName !== vac || pvc.status.modifyVolumeStatus)) return false;
  return true;
}

const claimName = (v: SetView, t: ClaimTemplate, o: number) => `${t.metadata.name}-${v.set.metadata.name}-${o}`;

/** A change claimstep made to a claim (at an earlier revision) that the drivers are still carrying out. */
function settling(p: PersistentVolumeClaim): boolean {
  if (p.metadata.labels?.[Keys.revisionLabel] === undefined || p.status?.phase !== "Bound") return false;
  const storage = p.status.allocatedResourceStatuses?.storage;
  if (
    storage === "ControllerResizeInfeasible" ||
    storage === "NodeResizeInfeasible" ||
    p.status.modifyVolumeStatus?.status === "Infeasible"
  )
    return false;
  const vac = p.spec.volumeAttributesClassName;
  return (
    bytes(p.status.capacity?.storage) < bytes(p.spec.resources?.requests?.storage) ||
    (vac !== undefined &&
      vac !== null &&
      (p.status.currentVolumeAttributesClassName !== vac || p.status.modifyVolumeStatus !== undefined))
  );
}

/**
 * Ordinals in scope that are in flight: claimstep has started them at the current revision (a
 * claim carries it) and not finished them (a claim is not at the revision yet, or not ready) — a
 * half-updated ordinal is in flight even when the claims written so far are ready — or a change
 * claimstep made at an earlier revision is still being carried out on one of their claims.
 */
export function inFlight(v: SetView): Set<number> {
  const out = new Set<number>();
  if (!v.desired || !v.revision) return out;
  for (let o = v.first; o < v.end; o++) {
    const pvcs = v.desired.map((t) => v.claims.get(claimName(v, t, o)));
    const atRevision = (p: PersistentVolumeClaim | undefined) =>
      p?.metadata.labels?.[Keys.revisionLabel] === v.revision;
    const finished = v.desired.every((t, i) => atRevision(pvcs[i]) && claimReady(pvcs[i], t));
    const started = pvcs.some(atRevision) && !finished;
    if (started || pvcs.some((p) => p !== undefined && !atRevision(p) && settling(p))) out.add(o);
  }
  return out;
}

/** Every in-scope claim is at the revision and ready (what Complete asserts). */
export function completeIsTrue(v: SetView): string | undefined {
  if (!v.desired || !v.revision) return "Complete with invalid desired templates";
  for (let o = v.first; o < v.end; o++) {
    for (const t of v.desired) {
      const name = claimName(v, t, o);
      const pvc = v.claims.get(name);
      if (!pvc) return `Complete but ${name} does not exist`;
      if (pvc.metadata.labels?.[Keys.revisionLabel] !== v.revision)
        return `Complete but ${name} is at revision ${pvc.metadata.labels?.[Keys.revisionLabel]}, not ${v.revision}`;
      if (bytes(pvc.spec.resources?.requests?.storage) < bytes(t.spec.resources?.requests?.storage))
        return `Complete but ${name} requests less than the template`;
      if (!claimReady(pvc, t)) return `Complete but ${name} is not ready`;
    }
  }
  return undefined;
}

/** I15 on Complete: no claim in scope has an expansion under way (rule 15), whatever its capacity says. */
export function completeWithExpansionUnderWay(v: SetView): string | undefined {
  for (let o = v.first; o < v.end; o++) {
    for (const t of v.desired ?? []) {
      const name = claimName(v, t, o);
      const pvc = v.claims.get(name);
      const why = pvc && expansionUnderWay(pvc);
      if (why)
        return `Complete while ${name} has an expansion under way (${why}; capacity ${pvc.status?.capacity?.storage}, request ${pvc.spec.resources?.requests?.storage})`;
    }
  }
  return undefined;
}

/** I15 on a decision's table: no claim reported Ready that, as the step read it, had an expansion under way. */
export function readyWithExpansionUnderWay(
  v: SetView,
  table: readonly { claims: readonly { claim: string; readiness: { state: string } }[] }[],
): string | undefined {
  for (const o of table)
    for (const c of o.claims) {
      const pvc = c.readiness.state === "Ready" ? v.claims.get(c.claim) : undefined;
      const why = pvc && expansionUnderWay(pvc);
      if (why) return `${c.claim} reported Ready while its expansion is under way (${why})`;
    }
  return undefined;
}

const effectiveClass = (p: PersistentVolumeClaim) =>
  p.metadata.annotations?.[Keys.betaStorageClass] ?? p.spec.storageClassName ?? undefined;

function templateOfClaim(v: SetView, claim: string): { t: ClaimTemplate; ordinal: number } | undefined {
  for (const t of v.desired ?? v.set.spec.volumeClaimTemplates ?? []) {
    const prefix = `${t.metadata.name}-${v.set.metadata.name}-`;
    if (claim.startsWith(prefix) && /^\d+$/.test(claim.slice(prefix.length)))
      return { t, ordinal: Number(claim.slice(prefix.length)) };
  }
  return undefined;
}

const sameJSON = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Rule 17: the node's expansion failed at the size allocated: NodeResizeError, the controller's half
 * not under way, the request what the resizer last allocated (a server that reports
 * allocatedResources), the capacity below it.
 */
function nodeFailed(p: PersistentVolumeClaim): boolean {
  const error = (p.status?.conditions ?? []).some((c) => c.type === "NodeResizeError" && c.status === "True");
  const allocated = p.status?.allocatedResources?.storage;
  const spec = p.spec.resources?.requests?.storage;
  return (
    error &&
    p.status?.allocatedResourceStatuses?.storage !== "ControllerResizeInProgress" &&
    allocated !== undefined &&
    bytes(allocated) === bytes(spec) &&
    bytes(p.status?.capacity?.storage) < bytes(spec)
  );
}

/**
 * I2 as revised by X1–X3: claimstep asked `asked`, less than the claim requested. Only a claim
 * whose expansion failed (allocatedResourceStatuses.storage *Infeasible, or rule 17's lasting
 * NodeResizeError) may come down, only to the desired template's request, and only strictly above
 * status.capacity.
 */
function checkLowering(v: SetView, name: string, before: PersistentVolumeClaim, asked: string): Violation[] {
  const out: Violation[] = [];
  const spec = before.spec.resources?.requests?.storage;
  const allocation = before.status?.allocatedResourceStatuses?.storage;
  const capacity = before.status?.capacity?.storage;
  const t = templateOfClaim(v, name)?.t;
  const tpl = t?.spec.resources?.requests?.storage;
  if (allocation !== "ControllerResizeInfeasible" && allocation !== "NodeResizeInfeasible" && !nodeFailed(before)) {
    const how = allocation ?? (bytes(capacity) >= bytes(spec) ? "succeeded" : "no failure reported");
    out.push({
      invariant: "I2",
      message: `claimstep lowered ${name} from ${spec} to ${asked} although its expansion has not failed (${how}, capacity ${capacity})`,
    });
  }
  if (bytes(asked) <= bytes(capacity))
    out.push({
      invariant: "I2",
      message: `claimstep lowered ${name} from ${spec} to ${asked}, not above its capacity ${capacity}`,
    });
  if (tpl === undefined || bytes(asked) < bytes(tpl))
    out.push({
      invariant: "I2",
      message: `claimstep lowered ${name} from ${spec} to ${asked}, below the desired template's ${tpl}`,
    });
  else if (bytes(asked) !== bytes(tpl))
    out.push({
      invariant: "I2",
      message: `claimstep lowered ${name} from ${spec} to ${asked}, not to the desired template's ${tpl}`,
    });
  return out;
}

/** What the pod invariants remember across the invocations of one run (I11). */
export interface PodLedger {
  /** Ordinal → when claimstep last evicted its pod (virtual ms). */
  evictedAt: Map<number, number>;
  /**
   * A PodDisruptionBudget's refusals (429) of claimstep's evictions: when, the audit seq, and
   * whether the invocation recorded it (`claimstep.io/last-eviction`, result DisruptionBudget).
   */
  budgetRefusals: { atMs: number; seq: number; recorded: boolean }[];
  /** Occurrences of known, reported core bugs (not violations; see knownBug() in scenario.ts). */
  knownBugHits: string[];
}

export const newPodLedger = (): PodLedger => ({ evictedAt: new Map(), budgetRefusals: [], knownBugHits: [] });

export interface ReplayContext {
  /** An object as the API server shows it (an older server hides a claim's allocatedResourceStatuses). */
  show: (resource: "persistentvolumeclaims", obj: Json) => Json;
  ledger: PodLedger;
  /**
   * The audit seq from which requests come from the racing invocation that loaded its snapshot
   * before the invocation began (`firstSeq`): what happened since, it could not know.
   */
  staleFromSeq?: number;
  firstSeq: number;
  /** Filled by checkWrites: the budget refusals of this invocation that were recorded. */
  recordedRefusals?: Set<number>;
  /** Autogrow: the usage the steps read, and the revisions claimstep grew from (A1–A4). */
  autogrow?: AutogrowLedger;
}

/** R3: a refused eviction charges the budget for about two minutes; no eviction is asked for sooner. */
const BUDGET_CHARGE_MS = 2 * 60_000;
const DEFAULT_RESTART_AFTER_MS = 5 * 60_000;

function durationMs(raw: string | undefined): number {
  if (raw === undefined || !/^(\d+[hms])+$/.test(raw)) return DEFAULT_RESTART_AFTER_MS;
  let total = 0;
  for (const [, n, unit] of raw.matchAll(/(\d+)([hms])/g))
    total += Number(n) * ({ h: 3600, m: 60, s: 1 } as Record<string, number>)[unit!]! * 1000;
  return total;
}

const podReady = (p: PodView | undefined): boolean =>
  !!p &&
  !p.metadata.deletionTimestamp &&
  (p.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");

const ordinalOfPod = (v: SetView, pod: string): number | undefined => {
  const prefix = `${v.set.metadata.name}-`;
  return pod.startsWith(prefix) && /^\d+$/.test(pod.slice(prefix.length))
    ? Number(pod.slice(prefix.length))
    : undefined;
};

const partitionOf = (body: Json | undefined): unknown =>
  (((body?.spec as Json | undefined)?.updateStrategy as Json | undefined)?.rollingUpdate as Json | undefined)
    ?.partition;

/** Every claim of ordinal `o` at the revision and ready (KEP readiness), or why not. */
function notDone(v: SetView, o: number): string | undefined {
  if (!v.desired || !v.revision) return "the desired templates are invalid";
  for (const t of v.desired) {
    const name = claimName(v, t, o);
    const pvc = v.claims.get(name);
    if (!pvc) return `${name} does not exist`;
    if (pvc.metadata.labels?.[Keys.revisionLabel] !== v.revision)
      return `${name} is at revision ${pvc.metadata.labels?.[Keys.revisionLabel]}, not ${v.revision}`;
    if (!claimReady(pvc, t))
      return `${name} is not ready (spec ${pvc.spec.resources?.requests?.storage}, capacity ${pvc.status?.capacity?.storage}, phase ${pvc.status?.phase})`;
  }
  return undefined;
}

/**
 * I10 on one partition patch claimstep made (accepted by the server), with the set and claims as
 * the store held them at that request: (a) every ordinal whose pod the lowering lets the
 * controller replace has its claims at the revision and ready; (b) never below the user's
 * partition (the record, or the live one at take-over, which is what the record must say); (c)
 * once held, only lowered (the restore excepted); no move without ClaimsFirst or a record.
 */
function checkPartitionPatch(v: SetView, e: AuditEntry): Violation[] {
  const out: Violation[] = [];
  const say = (message: string) => out.push({ invariant: "I10", message: `partition patch at ${e.at}: ${message}` });
  const p = partitionOf(e.body);
  if (typeof p !== "number" || !Number.isInteger(p) || p < 0)
    return [{ invariant: "I10", message: `claimstep wrote partition ${JSON.stringify(p)}` }];
  const from = v.livePartition;
  const record = ((e.body?.metadata as Json | undefined)?.annotations as Json | undefined)?.[Keys.userPartition];
  const coordination = v.set.metadata.annotations?.[Keys.podCoordination];
  let lowered = p < from;
  if (record === null) {
    // P4: the restore.
    if (v.recordedPartition === undefined)
      say(`restored partition ${p} without a record of the user's (${Keys.userPartition})`);
    else if (p !== v.recordedPartition) say(`restored partition ${p}, not the user's recorded ${v.recordedPartition}`);
    // Restoring at once because ClaimsFirst was turned off, or the set opted out, is the user's
    // choice: no readiness owed.
    if (coordination !== "ClaimsFirst" || v.set.metadata.annotations?.[Keys.strategy] !== "InPlace") lowered = false;
  } else if (record !== undefined) {
    // P1: the take-over.
    if (v.recordedPartition !== undefined)
      say(
        `took the partition over again while holding it: the record ${v.recordedPartition} overwritten with ${JSON.stringify(record)}`,
      );
    if (record !== String(from))
      say(`recorded the user's partition as ${JSON.stringify(record)} while the live one was ${from}`);
    if (coordination !== "ClaimsFirst")
      say(`took the partition over without ${Keys.podCoordination}: ClaimsFirst (${JSON.stringify(coordination)})`);
    if (p < from) say(`took the partition over by lowering it (${from} → ${p}), below the user's ${from}`);
  } else {
    if (v.recordedPartition === undefined)
      say(`moved the partition ${from} → ${p} without holding it (no ${Keys.userPartition} record)`);
    else if (p < v.recordedPartition) say(`wrote partition ${p}, below the user's ${v.recordedPartition}`);
    if (p >= from) say(`did not lower the partition while holding it (${from} → ${p})`);
  }
  if (lowered) {
    for (let o = v.start + p; o < Math.min(v.start + from, v.end); o++) {
      const why = notDone(v, o);
      if (why)
        say(`lowered ${from} → ${p}, letting the controller replace pod ${v.set.metadata.name}-${o} although ${why}`);
    }
  }
  return out;
}

/** A claim of the pod's ordinal at the revision that waits on its pod (R1), or why none does. */
function waitingClaim(v: SetView, o: number, nowMs: number, afterMs: number): { claim: string } | { why: string } {
  if (!v.desired || !v.revision) return { why: "the desired templates are invalid" };
  const notes: string[] = [];
  for (const t of v.desired) {
    const name = claimName(v, t, o);
    const pvc = v.claims.get(name);
    if (!pvc) continue;
    if (pvc.metadata.labels?.[Keys.revisionLabel] !== v.revision) {
      notes.push(`${name} not at the revision`);
      continue;
    }
    const conditions = pvc.status?.conditions ?? [];
    if (
      conditions.some(
        (c) => c.type === "ControllerResizeError" && c.status === "True" && /\bin[- ]use\b/i.test(c.message ?? ""),
      )
    )
      return { claim: name };
    const pending = conditions.find((c) => c.type === "FileSystemResizePending" && c.status === "True");
    if (!pending) {
      notes.push(`${name} waits on nothing`);
      continue;
    }
    const since = Date.parse(pending.lastTransitionTime ?? "");
    if (Number.isNaN(since) || nowMs - since < afterMs) {
      notes.push(
        `${name} FileSystemResizePending only since ${pending.lastTransitionTime} (restart-after ${afterMs / 1000}s)`,
      );
      continue;
    }
    return { claim: name };
  }
  return { why: notes.join("; ") || "no claim" };
}

/**
 * I11 on one eviction request of claimstep's: a uid precondition, restart-pods WhenRequired; and,
 * when the pod it names is the pod as stored (the request could evict it): a claim of the pod at
 * the revision waits on it (R1), the pod is not itself younger than restart-after, every other pod
 * in scope is Ready, the ordinal is among the highest maxUnavailable in flight; never two evictions of one
 * ordinal within restart-after; never an eviction within two minutes of a budget's refusal it
 * could know of.
 */
function checkEviction(v: SetView, e: AuditEntry, ctx: ReplayContext): Violation[] {
  const out: Violation[] = [];
  const say = (message: string) =>
    out.push({ invariant: "I11", message: `eviction of ${e.name} at ${e.at} (${e.outcome}): ${message}` });
  const nowMs = Date.parse(e.at);
  const annotations = v.set.metadata.annotations ?? {};
  const afterMs = durationMs(annotations[Keys.restartAfter]);
  const uid = ((e.body?.deleteOptions as Json | undefined)?.preconditions as Json | undefined)?.uid as
    | string
    | undefined;
  if (typeof uid !== "string" || !uid) say(`no uid precondition: ${JSON.stringify(e.body)}`);
  if (annotations[Keys.restartPods] !== "WhenRequired")
    say(`${Keys.restartPods} is ${JSON.stringify(annotations[Keys.restartPods])}, not WhenRequired`);
  // R3: the refusals this request's invocation could have known of.
  const knownBefore = ctx.staleFromSeq !== undefined && e.seq >= ctx.staleFromSeq ? ctx.firstSeq : e.seq;
  const refused = ctx.ledger.budgetRefusals.filter((r) => r.seq < knownBefore && nowMs - r.atMs < BUDGET_CHARGE_MS);
  const asked = (r: { atMs: number }) =>
    `asked again ${(nowMs - r.atMs) / 1000}s after a PodDisruptionBudget refused an eviction (at least ${BUDGET_CHARGE_MS / 1000}s)`;
  // (Bug 3, fixed: the attempt is recorded before the eviction, so a refusal is remembered even
  // when the answer or the write after it is lost.)
  if (refused.length) say(asked(refused[refused.length - 1]!));
  const o = ordinalOfPod(v, e.name);
  const pod = v.pods.get(e.name);
  if (o === undefined) {
    say("not a pod of the set");
    return out;
  }
  if (pod && uid !== undefined && pod.metadata.uid === uid) {
    if (o < v.first || o >= v.end) say(`ordinal ${o} is outside [${v.first}, ${v.end})`);
    const waiting = waitingClaim(v, o, nowMs, afterMs);
    if ("why" in waiting) say(`no claim of ordinal ${o} at the revision waits on its pod: ${waiting.why}`);
    const created = Date.parse(pod.metadata.creationTimestamp ?? "");
    if (!Number.isNaN(created) && nowMs - created < afterMs)
      say(
        `the pod was created ${(nowMs - created) / 1000}s ago, less than restart-after ${afterMs / 1000}s (that restart already happened)`,
      );
    const notReady: string[] = [];
    for (let n = v.first; n < v.end; n++) {
      const name = `${v.set.metadata.name}-${n}`;
      if (n !== o && !podReady(v.pods.get(name))) notReady.push(name);
    }
    if (notReady.length) say(`another pod in scope is not Ready: ${notReady.join(", ")}`);
    // Within maxUnavailable: the ordinal is one of the highest maxUnavailable ordinals in flight
    // (more may be in flight after maxUnavailable was lowered: restarting the highest lets it finish).
    const flying = inFlight(v);
    flying.add(o);
    const rank = [...flying].sort((a, b) => b - a).indexOf(o);
    if (rank >= v.maxUnavailable)
      say(
        `ordinal ${o} is not among the ${v.maxUnavailable} highest of the ordinals in flight (${[...flying].sort((a, b) => b - a).join(", ")}), maxUnavailable ${v.maxUnavailable}`,
      );
  }
  if (e.outcome === "ok") {
    const last = ctx.ledger.evictedAt.get(o);
    if (last !== undefined && nowMs - last < afterMs)
      say(
        `evicting twice for one resize: ordinal ${o} was evicted ${(nowMs - last) / 1000}s before (restart-after ${afterMs / 1000}s)`,
      );
    ctx.ledger.evictedAt.set(o, nowMs);
  } else if (e.outcome === 429) {
    ctx.ledger.budgetRefusals.push({ atMs: nowMs, seq: e.seq, recorded: ctx.recordedRefusals?.has(e.seq) ?? true });
  }
  return out;
}

/** The budget refusals of these requests that claimstep recorded afterwards (`last-eviction` DisruptionBudget, accepted). */
function recordedRefusals(entries: readonly AuditEntry[]): Set<number> {
  const out = new Set<number>();
  entries.forEach((e, i) => {
    if (e.actor !== FIELD_MANAGER || e.resource !== "pods" || e.subresource !== "eviction" || e.outcome !== 429) return;
    const recorded = entries.slice(i + 1).some((w) => {
      if (w.actor !== FIELD_MANAGER || w.resource !== "statefulsets" || w.outcome !== "ok") return false;
      const raw = ((w.body?.metadata as Json | undefined)?.annotations as Json | undefined)?.[Keys.lastEviction];
      return typeof raw === "string" && raw.includes('"DisruptionBudget"');
    });
    if (recorded) out.add(e.seq);
  });
  return out;
}

/**
 * I1, I2, I3, I5, I9, I10, I11, rule 2 and rule 13 on the requests claimstep made in one
 * invocation. `before` is the cluster as the invocation found it; the audit log is replayed over
 * it, so that every request is judged on the set, claims and pods as the store held them when it
 * arrived (claimstep's own earlier requests included; nothing else runs during an invocation).
 */
export function checkWrites(before: SetView, entries: readonly AuditEntry[], ctx: ReplayContext): Violation[] {
  const out: Violation[] = [];
  let set = before.set;
  const claims = new Map(before.claims);
  const pods = new Map(before.pods);
  ctx.recordedRefusals = recordedRefusals(entries);
  for (const e of entries) {
    if (e.actor === FIELD_MANAGER) out.push(...checkRequest(viewFrom(set, claims, pods), e, ctx));
    // The store after this request.
    if (e.outcome !== "ok") continue;
    if (e.resource === "statefulsets" && e.after) set = e.after as unknown as StatefulSet;
    else if (e.resource === "persistentvolumeclaims") {
      if (e.verb === "delete" && !e.after) claims.delete(e.name);
      else if (e.after)
        claims.set(e.name, ctx.show("persistentvolumeclaims", e.after) as unknown as PersistentVolumeClaim);
    } else if (e.resource === "pods" && e.verb === "delete") pods.delete(e.name);
  }
  return out;
}

function checkRequest(v: SetView, e: AuditEntry, ctx: ReplayContext): Violation[] {
  const out: Violation[] = [];
  if (e.resource === "pods") {
    if (e.verb === "create" && e.subresource === "eviction") return checkEviction(v, e, ctx);
    // The deletion an accepted eviction makes is the API server's, named after the evicter.
    if (e.verb === "delete" && e.subresource === "eviction") return [];
    return [
      {
        invariant: "I11",
        message: `claimstep sent ${e.verb} pods/${e.name}${e.subresource ? `/${e.subresource}` : ""} (${e.outcome}): a pod is only ever removed through POST pods/<name>/eviction`,
      },
    ];
  }
  if (e.verb === "delete") out.push({ invariant: "I1", message: `claimstep deleted ${e.resource} ${e.name}` });
  if (e.resource === "statefulsets") {
    const spec = (e.body as Json | undefined)?.spec;
    const partitionOnly =
      spec !== undefined && sameJSON(spec, { updateStrategy: { rollingUpdate: { partition: partitionOf(e.body) } } });
    if (e.outcome === "ok" && isGrowth(e)) out.push(...checkGrowth(v, e, ctx));
    if (e.outcome === "ok") {
      const rv = ((e.body?.metadata as Json | undefined)?.resourceVersion as string | undefined) ?? undefined;
      if (rv === undefined)
        out.push({
          invariant: "I9",
          message: `claimstep patched the StatefulSet without a resourceVersion precondition: ${JSON.stringify(e.body).slice(0, 200)}`,
        });
      if (spec !== undefined && !partitionOnly)
        out.push({
          invariant: "I5",
          message: `claimstep wrote the StatefulSet's spec beyond the partition: ${JSON.stringify(spec)}`,
        });
      if (partitionOnly) out.push(...checkPartitionPatch(v, e));
      else if (
        ((e.body?.metadata as Json | undefined)?.annotations as Json | undefined)?.[Keys.userPartition] !== undefined
      ) {
        out.push({
          invariant: "I10",
          message: `claimstep wrote ${Keys.userPartition} without moving the partition: ${JSON.stringify(e.body).slice(0, 200)}`,
        });
      }
    }
  }
  if (e.resource !== "persistentvolumeclaims") return out;
  const before = e.before as unknown as PersistentVolumeClaim | undefined;
  const body = e.body as unknown as PersistentVolumeClaim | undefined;
  const asked = body?.spec?.resources?.requests?.storage;
  if (!v.desired)
    out.push({ invariant: "rule2", message: `claimstep wrote ${e.name} although the desired templates are invalid` });
  // Rule 13: a claim being deleted is treated as missing and never written. A deletionTimestamp is
  // never cleared, so a claim terminating in the snapshot the step read is still terminating in
  // `before` (the object as stored when the request arrived, refused requests included).
  const deletedAt = before?.metadata?.deletionTimestamp;
  if (deletedAt !== undefined) {
    out.push({
      invariant: "rule13",
      message: `claimstep sent ${e.verb} to ${e.name}, which is being deleted (deletionTimestamp ${deletedAt}; outcome ${e.outcome})`,
    });
  }
  if (before && asked !== undefined && bytes(asked) < bytes(before.spec.resources?.requests?.storage))
    out.push(...checkLowering(v, e.name, before, asked));
  // I16 (rule 19): never one write that changes both a claim's request and its class.
  const askedClass = (body?.spec as Json | undefined)?.volumeAttributesClassName;
  if (
    before &&
    asked !== undefined &&
    bytes(asked) !== bytes(before.spec.resources?.requests?.storage) &&
    askedClass !== undefined &&
    askedClass !== (before.spec.volumeAttributesClassName ?? null)
  )
    out.push({
      invariant: "I16",
      message: `claimstep changed ${e.name}'s request (${before.spec.resources?.requests?.storage} → ${asked}) and class (${before.spec.volumeAttributesClassName ?? "(none)"} → ${String(askedClass)}) in one write`,
    });
  // I17 (rule 20, KEP-4650 Risks): a claim at the current revision is done: never applied again. An
  // apply refused under its resourceVersion (a step that read the claim before it was stamped) wrote nothing.
  const stamped = before?.metadata?.labels?.[Keys.revisionLabel];
  if (e.outcome === "ok" && body?.spec && stamped !== undefined && stamped === v.revision)
    out.push({
      invariant: "I17",
      message: `claimstep applied ${e.name}, which is already at the current revision ${stamped}`,
    });
  if (before && body?.spec && (body.spec as Json).resources === undefined) {
    out.push({
      invariant: "I2",
      message: `claimstep applied ${e.name} without its storage request (the server would drop claimstep's request)`,
    });
  }
  const owner = templateOfClaim(v, e.name);
  if (!owner) {
    out.push({ invariant: "I3", message: `claimstep wrote ${e.name}, which belongs to no template of the set` });
    return out;
  }
  // I3 with P1: while claimstep holds the live partition, the user's recorded one bounds the scope.
  if (owner.ordinal < v.first || owner.ordinal >= v.end) {
    const held =
      v.recordedPartition !== undefined
        ? ` (the user's partition ${v.recordedPartition}, claimstep holding the live one at ${v.livePartition})`
        : "";
    out.push({
      invariant: "I3",
      message: `claimstep wrote ${e.name} (ordinal ${owner.ordinal}) outside [${v.first}, ${v.end})${held}`,
    });
  }
  if (before) {
    const want = owner.t.spec.storageClassName ?? undefined;
    if (want !== undefined && want !== effectiveClass(before)) {
      out.push({
        invariant: "I5",
        message: `claimstep wrote ${e.name} of class ${effectiveClass(before)} while the template asks for ${want}`,
      });
    }
    const ts = owner.t.spec;
    const ps = before.spec;
    const mismatch =
      (ts.accessModes && !sameJSON([...ts.accessModes].sort(), [...(ps.accessModes ?? [])].sort())) ||
      (ts.volumeMode && ts.volumeMode !== (ps.volumeMode ?? "Filesystem")) ||
      (ts.selector && !sameJSON(ts.selector, ps.selector)) ||
      (ts.dataSource && !sameJSON(ts.dataSource, ps.dataSource));
    if (mismatch)
      out.push({
        invariant: "I5",
        message: `claimstep wrote ${e.name} whose immutable fields differ from template ${owner.t.metadata.name}`,
      });
  }
  if (e.outcome === "ok" && (body?.metadata as Json | undefined)?.resourceVersion === undefined) {
    out.push({ invariant: "I9", message: `claimstep wrote ${e.name} without the resourceVersion it read` });
  }
  return out;
}

/** I10 (d): a converged run leaves the user's partition in place and no record of it. */
export function checkRestored(v: SetView, userPartition: number): Violation[] {
  const out: Violation[] = [];
  const record = v.set.metadata.annotations?.[Keys.userPartition];
  if (record !== undefined)
    out.push({
      invariant: "I10",
      message: `Complete while ${Keys.userPartition}=${record} is still recorded (the partition not restored; live ${v.livePartition})`,
    });
  if (v.livePartition !== userPartition)
    out.push({
      invariant: "I10",
      message: `Complete with partition ${v.livePartition}, not the user's ${userPartition}`,
    });
  return out;
}

/**
 * I10-optout (rule 1 with P4; KEP-4650: OnClaimDelete "unblocks normal Pod rollout immediately"):
 * an invocation that finds a set not opted in (the strategy not InPlace, or OnDelete) whose
 * partition claimstep holds (its record of the user's) leaves the user's partition restored and the
 * record gone, in one write of the set; one that finds no record writes nothing to the set's spec,
 * its claims or its pods. `failed`: the invocation met a transient fault (nothing owed then).
 */
export function checkOptOut(
  before: SetView,
  after: SetView,
  entries: readonly AuditEntry[],
  failed: boolean,
): Violation[] {
  const optedIn =
    before.set.metadata.annotations?.[Keys.strategy] === "InPlace" &&
    before.set.spec.updateStrategy?.type !== "OnDelete";
  if (optedIn) return [];
  const out: Violation[] = [];
  const say = (message: string) => out.push({ invariant: "I10-optout", message });
  const writes = entries.filter(
    (e) =>
      e.actor === FIELD_MANAGER &&
      e.outcome === "ok" &&
      (e.resource === "persistentvolumeclaims" ||
        e.resource === "pods" ||
        (e.resource === "statefulsets" && (e.body?.spec as unknown) !== undefined)),
  );
  const held = before.recordedPartition;
  if (held === undefined) {
    for (const e of writes) say(`claimstep wrote ${e.resource}/${e.name} on a set that is not opted in`);
    return out;
  }
  for (const e of writes.filter((x) => x.resource !== "statefulsets"))
    say(
      `claimstep wrote ${e.resource}/${e.name} on a set that is not opted in (the partition it holds not yet restored)`,
    );
  if (writes.filter((e) => e.resource === "statefulsets").length > 1)
    say("claimstep patched the partition of an opted-out set more than once in one invocation");
  if (failed) return out;
  if (after.recordedPartition !== undefined || after.livePartition !== held)
    say(
      `the set is not opted in (${Keys.strategy}=${before.set.metadata.annotations?.[Keys.strategy] ?? "(none)"}, ${before.set.spec.updateStrategy?.type ?? "RollingUpdate"}) and claimstep still holds its partition: live ${after.livePartition}, the user's ${held}${after.recordedPartition !== undefined ? ", still recorded" : ""}`,
    );
  return out;
}

/** The set's pods (every ordinal of [start, end)) that exist, are not being deleted and are not Ready. */
function podsNotReady(v: SetView): Map<number, string> {
  const out = new Map<number, string>();
  for (let o = v.start; o < v.end; o++) {
    const name = `${v.set.metadata.name}-${o}`;
    const p = v.pods.get(name);
    if (p && !p.metadata.deletionTimestamp && !podReady(p)) out.set(o, name);
  }
  return out;
}

/**
 * I4-pods (rule 21, KEP-4650 table row 9: the pod and its claims ready before the next replica; the
 * StatefulSet controller's maxUnavailable counting): a claim write that starts an ordinal (none of
 * its claims at the revision before) happens only while fewer than maxUnavailable other ordinals
 * are unavailable — in flight (I4), or with a pod that exists, is not being deleted and is not
 * Ready; with maxUnavailable 1, an ordinal's pod not Ready stops the next one. And a rollout is not
 * newly Complete while the pod of an ordinal in scope is not Ready. `before`: the world the
 * invocation read (only claimstep writes during it).
 */
export function checkPodsReady(
  before: SetView,
  entries: readonly AuditEntry[],
  reasons: readonly string[],
): Violation[] {
  const out: Violation[] = [];
  if (!before.desired || !before.revision) return out;
  const unready = podsNotReady(before);
  const flying = inFlight(before);
  const unavailable = new Set([...flying, ...unready.keys()]);
  const started = new Set<number>();
  for (const e of entries) {
    if (e.actor !== FIELD_MANAGER || e.outcome !== "ok" || e.resource !== "persistentvolumeclaims") continue;
    const owner = templateOfClaim(before, e.name);
    if (!owner || started.has(owner.ordinal)) continue;
    const wasStarted = before.desired.some(
      (t) =>
        before.claims.get(claimName(before, t, owner.ordinal))?.metadata.labels?.[Keys.revisionLabel] ===
        before.revision,
    );
    // Already in flight (I4's sense: a change still carried out on its claims) holds its slot.
    if (wasStarted || flying.has(owner.ordinal)) continue;
    started.add(owner.ordinal);
    const others = [...unavailable].filter((o) => o !== owner.ordinal);
    const down = others.filter((o) => unready.has(o));
    if (others.length >= before.maxUnavailable && down.length)
      out.push({
        invariant: "I4-pods",
        message: `claimstep started ordinal ${owner.ordinal} (wrote ${e.name}) while ${down.map((o) => `pod ${unready.get(o)} (ordinal ${o})`).join(", ")} not Ready, ${others.length} other ordinal(s) unavailable ≥ maxUnavailable ${before.maxUnavailable}`,
      });
  }
  if (reasons.includes("RolloutComplete"))
    for (const [o, pod] of unready)
      if (o >= before.first)
        out.push({ invariant: "I4-pods", message: `RolloutComplete while pod ${pod} (ordinal ${o}) is not Ready` });
  return out;
}

/** I4: starting an ordinal never leaves more than maxUnavailable in flight. */
export function checkInFlight(before: Set<number>, after: Set<number>, v: SetView): Violation[] {
  const started = [...after].filter((o) => !before.has(o));
  if (started.length && after.size > v.maxUnavailable) {
    return [
      {
        invariant: "I4",
        message: `ordinal(s) ${started.join(", ")} started with ${after.size} in flight (${[...after].sort((a, b) => b - a).join(", ")}) > maxUnavailable ${v.maxUnavailable}`,
      },
    ];
  }
  return [];
}

// ─── Autogrow (issue 18, docs/design.md "Autogrow") ─────────────────────────────────────────────────
//
// A1 never a desired size above max: a growth changes one template (the policy's, when it names
//    one), only its storage, upwards, to at most max.
// A2 a growth only when the rollout was complete at the request's time (every claim in scope at
//    the revision and ready, current-revision = that revision), under a valid policy, after the
//    step read the usage successfully and found a claim in scope at or above the threshold.
// A3 never two growths from one revision; each records autogrown-from = the revision grown from.
// A4 the new size follows the formula from the usage the step read: min(max, roundUpGi(max(
//    capacity × (1 + increase) or capacity + increase, desired))) for the fullest claim.
// A5 (at the end) a converged case has no claim in scope at or above the threshold (unless one
//    growth from this revision was made already); one that ended AutogrowLimit is really at max.
// Computed here from the policy's text, independently of core/plan/autogrow.ts.

/** The usage readings of a run (with the audit seq each was read at), and the revisions grown from. */
export interface AutogrowLedger {
  readings: { seqAt: number; reading: UsageReading }[];
  /** Revision → the audit seq of claimstep's accepted growth from it. */
  grownFrom: Map<string, number>;
  /** claimstep's accepted growths. */
  growths: number;
  /** Occurrences of known, reported core bugs (KNOWN BUG 5), not counted as violations. */
  knownBugHits: string[];
}

export const newAutogrowLedger = (): AutogrowLedger => ({
  readings: [],
  grownFrom: new Map(),
  growths: 0,
  knownBugHits: [],
});

const GIB = 1024n ** 3n;
const AUTOGROW_NOTE = "autogrow skipped this step";

interface OraclePolicy {
  thresholdBp: bigint;
  increase: { bp: bigint } | { bytes: bigint };
  max: bigint;
  template: string | undefined;
}

const bp = (p: string): bigint | undefined => {
  const m = /^(\d{1,3})(?:\.(\d{1,2}))?%$/.exec(p);
  return m ? BigInt(m[1]!) * 100n + BigInt((m[2] ?? "").padEnd(2, "0")) : undefined;
};

/** The policy as the oracle reads it, or why it is not one. */
export function oraclePolicy(raw: string | undefined): OraclePolicy | string {
  if (raw === undefined) return "without an autogrow policy";
  try {
    const p = JSON.parse(raw) as { threshold?: string; increase?: string; max?: string; template?: string };
    const thresholdBp = bp(p.threshold ?? "");
    if (thresholdBp === undefined || thresholdBp <= 0n || thresholdBp > 10_000n)
      return `under an invalid threshold ${p.threshold}`;
    const inc = p.increase ?? "";
    const increase: OraclePolicy["increase"] = inc.endsWith("%") ? { bp: bp(inc) ?? -1n } : { bytes: bytes(inc) };
    if ("bp" in increase ? increase.bp < 0n : increase.bytes <= 0n) return `under an invalid increase ${inc}`;
    const max = bytes(p.max ?? "0");
    if (max <= 0n) return `under an invalid max ${p.max}`;
    return { thresholdBp, increase, max, template: p.template };
  } catch (err) {
    return `under an invalid policy (${(err as Error).message})`;
  }
}

const annotationsOfBody = (body: Json | undefined): Json =>
  ((body?.metadata as Json | undefined)?.annotations as Json | undefined) ?? {};

/** A request of claimstep's that changes the desired templates: an autogrow growth (RaiseTemplate). */
export const isGrowth = (e: AuditEntry): boolean =>
  e.actor === FIELD_MANAGER &&
  e.resource === "statefulsets" &&
  typeof annotationsOfBody(e.body)[Keys.templates] === "string";

/** For traces: the templates' sizes a growth wrote, and the revision it records. */
export function growthOf(e: AuditEntry): string {
  const a = annotationsOfBody(e.body);
  try {
    const t = JSON.parse(a[Keys.templates] as string) as ClaimTemplate[];
    return `${t.map((x) => `${x.metadata.name} ${x.spec.resources?.requests?.storage}`).join(", ")} from ${String(a[Keys.autogrownFrom])}`;
  } catch {
    return String(a[Keys.templates]);
  }
}

/** JSON with sorted keys: templates compared by content, not by the order their keys were written in. */
const canonical = (x: unknown): string =>
  JSON.stringify(x, (_k, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Json).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
const storageOf = (t: ClaimTemplate): bigint => bytes(t.spec.resources?.requests?.storage);
const withoutStorage = (t: ClaimTemplate) =>
  canonical({
    ...t,
    spec: {
      ...t.spec,
      resources: { ...t.spec.resources, requests: { ...t.spec.resources?.requests, storage: undefined } },
    },
  });
const roundUpGiB = (b: bigint): bigint => ((b + GIB - 1n) / GIB) * GIB;

/** Claims in scope of the policy's templates at or above its threshold, per this usage, fullest first. */
function overThreshold(
  v: SetView,
  p: OraclePolicy,
  volumes: readonly { claim: string; usedBytes: bigint; capacityBytes: bigint }[],
) {
  const byClaim = new Map(volumes.map((x) => [x.claim, x]));
  const out: { t: ClaimTemplate; claim: string; used: bigint; capacity: bigint; ratioBp: bigint }[] = [];
  for (const t of v.desired ?? []) {
    if (p.template !== undefined && t.metadata.name !== p.template) continue;
    for (let o = v.first; o < v.end; o++) {
      const u = byClaim.get(claimName(v, t, o));
      if (!u || u.capacityBytes <= 0n) continue;
      const ratioBp = (u.usedBytes * 10_000n) / u.capacityBytes;
      if (ratioBp >= p.thresholdBp)
        out.push({ t, claim: u.claim, used: u.usedBytes, capacity: u.capacityBytes, ratioBp });
    }
  }
  return out.sort((a, b) => (b.ratioBp > a.ratioBp ? 1 : b.ratioBp < a.ratioBp ? -1 : 0));
}

const pct = (used: bigint, capacity: bigint) => `${(Number((used * 10_000n) / capacity) / 100).toFixed(2)}%`;

/** A1–A4 on one accepted growth, judged on the set and claims as they stood when it arrived. */
function checkGrowth(v: SetView, e: AuditEntry, ctx: ReplayContext): Violation[] {
  const out: Violation[] = [];
  const say = (invariant: InvariantId, message: string) =>
    out.push({ invariant, message: `growth at ${e.at} (seq ${e.seq}; ${growthOf(e)}): ${message}` });
  const a = annotationsOfBody(e.body);
  const p = oraclePolicy(v.set.metadata.annotations?.[Keys.autogrow]);
  if (typeof p === "string") {
    say("A2", `claimstep changed ${Keys.templates} ${p}`);
    return out;
  }
  if (!v.desired || !v.revision) {
    say("A2", "claimstep grew while the desired templates are invalid");
    return out;
  }
  let next: ClaimTemplate[];
  try {
    next = JSON.parse(a[Keys.templates] as string) as ClaimTemplate[];
    next.forEach((t) => storageOf(t));
  } catch (err) {
    say("A1", `the templates written are not valid (${(err as Error).message})`);
    return out;
  }
  // A1.
  if (next.length !== v.desired.length || next.some((t, i) => t.metadata.name !== v.desired![i]!.metadata.name)) {
    say(
      "A1",
      `the templates written are not the desired ones (${v.desired.map((t) => t.metadata.name).join(",")} → ${next.map((t) => t.metadata?.name).join(",")})`,
    );
    return out;
  }
  const changed = next
    .map((t, i) => ({ t, was: v.desired![i]! }))
    .filter(({ t, was }) => canonical(t) !== canonical(was));
  if (changed.length !== 1) say("A1", `${changed.length} templates changed (one growth raises one template)`);
  for (const { t, was } of changed) {
    const name = t.metadata.name;
    if (withoutStorage(t) !== withoutStorage(was))
      say("A1", `template ${name} changed beyond its size: ${withoutStorage(was)} → ${withoutStorage(t)}`);
    if (storageOf(t) <= storageOf(was))
      say(
        "A1",
        `template ${name} not raised: ${was.spec.resources?.requests?.storage} → ${t.spec.resources?.requests?.storage}`,
      );
    if (storageOf(t) > p.max)
      say(
        "A1",
        `template ${name} raised to ${t.spec.resources?.requests?.storage}, above the autogrow max (${p.max} bytes)`,
      );
    if (p.template !== undefined && name !== p.template)
      say("A1", `template ${name} raised although the policy names ${p.template}`);
  }
  // A3.
  const from = v.revision;
  const ledger = ctx.autogrow;
  // The record is the revisions grown from, comma-separated, the latest last.
  const written = String(a[Keys.autogrownFrom] ?? "")
    .split(",")
    .filter(Boolean);
  if (written.at(-1) !== from)
    say(
      "A3",
      `recorded ${Keys.autogrownFrom} ${JSON.stringify(a[Keys.autogrownFrom])}, not ending with the revision grown from ${from}`,
    );
  const record = v.set.metadata.annotations?.[Keys.autogrownFrom];
  const earlier = ledger?.grownFrom.get(from);
  if (ledger) ledger.growths++;
  if ((record ?? "").split(",").includes(from))
    say("A3", `a second growth from revision ${from} (${Keys.autogrownFrom} already says ${record})`);
  // (KNOWN BUG 5, fixed: the record kept only the last revision, so one a person brought back was grown from again.)
  // Grown from before and out of the record: only once 16 later growths (the record's length) pushed it out.
  else if (earlier !== undefined && [...ledger!.grownFrom.values()].filter((seq) => seq > earlier).length < 16) {
    say(
      "A3",
      `a second growth from revision ${from} (the first at seq ${earlier}; ${Keys.autogrownFrom} said ${record}): ${growthOf(e)}`,
    );
  }
  ledger?.grownFrom.set(from, e.seq);
  // A2: the rollout complete at the request's time.
  const incomplete = completeIsTrue(v);
  if (incomplete) say("A2", `grew while the rollout is in progress: ${incomplete.replace(/^Complete but /, "")}`);
  const current = v.set.metadata.annotations?.[Keys.currentRevision];
  if (current !== from)
    say(
      "A2",
      `grew while ${Keys.currentRevision} is ${current}, not the revision ${from} (the rollout not recorded complete)`,
    );
  if (!ledger) return out;
  // A2/A4: on the usage this step read (in this invocation, before the request).
  const reading = [...ledger.readings].reverse().find((r) => r.seqAt < e.seq);
  if (!reading || reading.seqAt < ctx.firstSeq - 1) {
    say("A2", "grew without reading the usage in its step");
    return out;
  }
  if (!reading.reading.ok) {
    say("A2", `grew although the usage query failed (${reading.reading.message})`);
    return out;
  }
  const over = overThreshold(v, p, reading.reading.volumes);
  if (!over.length) {
    say(
      "A2",
      `grew although no claim in scope is at or above the threshold (${p.thresholdBp} bp): ${reading.reading.volumes.map((u) => `${u.claim} ${pct(u.usedBytes, u.capacityBytes)}`).join(", ")}`,
    );
    return out;
  }
  // A4: the fullest claim(s) — ties within a hundredth of a percent: any of them.
  const expected = over
    .filter((c) => c.ratioBp === over[0]!.ratioBp)
    .map((c) => {
      const desired = storageOf(c.t);
      const grown =
        "bp" in p.increase ? c.capacity + (c.capacity * p.increase.bp) / 10_000n : c.capacity + p.increase.bytes;
      const target = roundUpGiB(grown > desired ? grown : desired);
      return { name: c.t.metadata.name, claim: c.claim, size: target < p.max ? target : p.max };
    });
  for (const { t } of changed) {
    if (!expected.some((x) => x.name === t.metadata.name && x.size === storageOf(t))) {
      say(
        "A4",
        `template ${t.metadata.name} raised to ${t.spec.resources?.requests?.storage} (${storageOf(t)} bytes); the formula from the usage read says ${expected.map((x) => `${x.name} ${x.size} bytes (${x.claim})`).join(" or ")}`,
      );
    }
  }
  return out;
}

/**
 * I7 with autogrow: the writes of a repeat invocation on a Complete set that nothing excuses. An
 * autogrow decision of the repeat (a growth, or AutogrowLimit: its writes and event) is excused
 * when the first invocation read no usage (it recorded the completion, or its query failed); a
 * status-only patch when one of the invocations carried the autogrow note (its query failed) and
 * only the message changed.
 */
export function autogrowI7(
  wrote: readonly AuditEntry[],
  o: { firstReadUsage: boolean; messages: readonly string[]; repeatReason: string | undefined },
): AuditEntry[] {
  const autogrew = !o.firstReadUsage && (o.repeatReason === "AutogrowTriggered" || o.repeatReason === "AutogrowLimit");
  const noted = o.messages.some((m) => m.includes(AUTOGROW_NOTE));
  return wrote.filter((e) => {
    if (autogrew) return false;
    if (isGrowth(e)) return true;
    if (e.resource === "statefulsets" && noted && (e.body?.spec as unknown) === undefined) {
      const keys = Object.keys(annotationsOfBody(e.body));
      if (keys.length !== 1 || keys[0] !== Keys.status) return true;
      const status = (raw: unknown) => {
        try {
          const x = JSON.parse(String(raw)) as Json;
          return JSON.stringify({
            phase: x.phase,
            reason: x.reason,
            revision: x.revision,
            counts: x.counts,
            ordinal: x.ordinal,
          });
        } catch {
          return String(raw);
        }
      };
      const was = ((e.before?.metadata as Json | undefined)?.annotations as Json | undefined)?.[Keys.status];
      return was !== undefined && status(was) !== status(annotationsOfBody(e.body)[Keys.status]);
    }
    return true;
  });
}

/**
 * A5, at the end of an autogrow case: converged (the last step read the usage and found nothing
 * to do) with no claim in scope at or above the threshold — unless claimstep already grew once
 * from the revision the set is at (one growth per revision); or ended AutogrowLimit with a claim
 * over the threshold whose template is at max.
 */
export function checkAutogrowEnd(
  v: SetView,
  stats: readonly VolumeStats[],
  policy: { threshold: string; increase: string; max: string; template?: string },
  o: { converged: boolean; limited: boolean; last: string },
): Violation[] {
  const p = oraclePolicy(JSON.stringify(policy));
  if (typeof p === "string") return [];
  const over = overThreshold(v, p, stats);
  const list = (xs: typeof over) =>
    xs
      .map(
        (c) =>
          `${c.claim} ${pct(c.used, c.capacity)} of ${c.capacity} bytes (template ${c.t.metadata.name} ${c.t.spec.resources?.requests?.storage})`,
      )
      .join(", ");
  if (o.limited) {
    const atMax = over.filter((c) => storageOf(c.t) >= p.max);
    if (!atMax.length)
      return [
        {
          invariant: "A5",
          message: `ended AutogrowLimit, but no claim in scope over the threshold has its template at max (${policy.max}): over: ${list(over) || "none"}; ${o.last}`,
        },
      ];
  }
  if (
    o.converged &&
    over.length &&
    !String(v.set.metadata.annotations?.[Keys.autogrownFrom] ?? "")
      .split(",")
      .includes(v.revision ?? "")
  ) {
    return [
      {
        invariant: "A5",
        message: `converged with claims at or above the threshold ${policy.threshold}: ${list(over)}; ${o.last}`,
      },
    ];
  }
  return [];
}
