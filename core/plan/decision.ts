// Building Decisions: the status record (with `since` carried over while the phase and reason
// stay), the StatefulSet annotations that must change (only those), and the requeue hint.

import { Keys } from "../keys.js";
import type { StatefulSet } from "../kube/k8s.js";
import type { DecisionParts } from "../parts.js";
import { recordedStatusOf } from "../policy/records.js";
import { phaseOf, requeueAfterOf } from "../reasons.js";
import type { Decision, OrdinalReport, SetRef, Snapshot, StatusRecord } from "../types.js";

export function countsOf(ordinals: readonly OrdinalReport[]): StatusRecord["counts"] {
  const counts = { updated: 0, inFlight: 0, pending: 0, blocked: 0, total: 0 };
  for (const o of ordinals) {
    if (o.state === "OutOfScope" || o.state === "Condemned") continue;
    counts.total++;
    if (o.state === "Updated") counts.updated++;
    else if (o.state === "InFlight") counts.inFlight++;
    else if (o.state === "Pending") counts.pending++;
    else if (o.state === "Blocked") counts.blocked++;
  }
  return counts;
}

/** Status JSON in a fixed key order, so equal records serialize equally. */
export function statusJSON(s: StatusRecord): string {
  return JSON.stringify({
    phase: s.phase,
    reason: s.reason,
    message: s.message,
    ...(s.ordinal !== undefined ? { ordinal: s.ordinal } : {}),
    ...(s.revision !== undefined ? { revision: s.revision } : {}),
    counts: s.counts,
    ...(s.pullRequest !== undefined ? { pullRequest: s.pullRequest } : {}),
    since: s.since,
    observedAt: s.observedAt,
  });
}

// `since` and `observedAt` follow from the rest (since changes only with the phase or reason), so
// they do not count as a change: a record written before `since` existed is not rewritten for it.
const sameStatus = (old: Partial<StatusRecord> | undefined, next: StatusRecord): boolean =>
  old !== undefined &&
  statusJSON({ ...next, since: "", observedAt: "" }) ===
    statusJSON({ ...(old as StatusRecord), since: "", observedAt: "" });

/**
 * When the phase and reason last changed: the previous record's `since` while they stay the same
 * (its `observedAt` for a record written before `since` existed), else now.
 */
function sinceOf(
  old: Partial<StatusRecord> | undefined,
  next: Pick<StatusRecord, "phase" | "reason">,
  now: Date,
): string {
  if (!old || old.phase !== next.phase || old.reason !== next.reason) return now.toISOString();
  if (typeof old.since === "string") return old.since;
  return typeof old.observedAt === "string" ? old.observedAt : now.toISOString();
}

/** The annotations to merge-patch: only those whose value changes. */
export function annotationChanges(
  set: StatefulSet,
  wanted: Record<string, string | undefined>,
  status: StatusRecord,
): Record<string, string> | undefined {
  const current = set.metadata.annotations ?? {};
  const changes: Record<string, string> = {};
  for (const [key, value] of Object.entries(wanted)) {
    if (value !== undefined && current[key] !== value) changes[key] = value;
  }
  if (!sameStatus(recordedStatusOf(set), status)) changes[Keys.status] = statusJSON(status);
  return Object.keys(changes).length ? changes : undefined;
}

export function refOf(set: StatefulSet): SetRef {
  return { namespace: set.metadata.namespace ?? "default", name: set.metadata.name };
}

export function makeDecision(snapshot: Snapshot, now: Date, ordinals: OrdinalReport[], parts: DecisionParts): Decision {
  const set = snapshot.statefulSet;
  const phase = phaseOf(parts.reason);
  const reason = parts.statusReason ?? parts.reason;
  const previous = recordedStatusOf(set);
  const status: StatusRecord = {
    phase,
    reason,
    message: parts.message,
    ...(parts.ordinal !== undefined ? { ordinal: parts.ordinal } : {}),
    ...(parts.revision !== undefined ? { revision: parts.revision } : {}),
    counts: countsOf(ordinals),
    ...(parts.pullRequest !== undefined ? { pullRequest: parts.pullRequest } : {}),
    since: sinceOf(previous, { phase, reason }, now),
    observedAt: now.toISOString(),
  };
  const setAnnotations = parts.record
    ? annotationChanges(
        set,
        { ...parts.annotations, [Keys.updateRevision]: parts.revision, [Keys.currentRevision]: parts.currentRevision },
        status,
      )
    : undefined;
  const requeueAfter = parts.requeueAfter ?? requeueAfterOf(parts.reason);
  return {
    ref: refOf(set),
    phase,
    reason: parts.reason,
    message: parts.message,
    ...(parts.revision !== undefined ? { revision: parts.revision } : {}),
    ...(parts.action ? { action: parts.action } : {}),
    events: parts.events ?? [],
    ...(setAnnotations ? { setAnnotations } : {}),
    ...(set.metadata.resourceVersion !== undefined ? { setResourceVersion: set.metadata.resourceVersion } : {}),
    status,
    ordinals,
    ...(requeueAfter !== undefined ? { requeueAfter } : {}),
  };
}

/**
 * claimstep has nothing left to do for the set: the step's decision is Complete with no action and
 * no next step due (a re-create, a restart or a partition hand-back still to come is one). The one
 * test of "done" for `status --watch`, the status surfaces and `run`.
 */
export const nothingLeftToDo = (d: Pick<Decision, "phase" | "action" | "requeueAfter">): boolean =>
  d.phase === "Complete" && d.action === undefined && d.requeueAfter === undefined;

/**
 * A step's phase as a status surface reports it (claimstep_set_phase, the Workers' step events):
 * Complete only when nothing is left to do; a Complete followed by a write or a step still due
 * (the re-create after the rollout, the record's removal, a restart) is Progressing.
 */
export const phaseShown = (d: Pick<Decision, "phase" | "action" | "requeueAfter">): Decision["phase"] =>
  d.phase === "Complete" && !nothingLeftToDo(d) ? "Progressing" : d.phase;
