// Building Decisions: the status record, the StatefulSet annotations that must change (only
// those), and turning a writer's or server's refusal into a Blocked decision.
import type { StatefulSet } from "./k8s.js";
import {
  Keys,
  type Action,
  type Decision,
  type EventReason,
  type EventRecord,
  type OrdinalReport,
  type Phase,
  type SetRef,
  type Snapshot,
  type StatusRecord,
} from "./types.js";

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
    observedAt: s.observedAt,
  });
}

const sameStatus = (existing: string | undefined, next: StatusRecord): boolean => {
  if (existing === undefined) return false;
  try {
    const old = JSON.parse(existing) as Partial<StatusRecord>;
    return statusJSON({ ...next, observedAt: "" }) === statusJSON({ ...(old as StatusRecord), observedAt: "" });
  } catch {
    return false;
  }
};

/** The annotations to merge-patch: only those whose value changes. */
export function annotationChanges(set: StatefulSet, wanted: Record<string, string | undefined>, status: StatusRecord): Record<string, string> | undefined {
  const current = set.metadata.annotations ?? {};
  const changes: Record<string, string> = {};
  for (const [key, value] of Object.entries(wanted)) {
    if (value !== undefined && current[key] !== value) changes[key] = value;
  }
  if (!sameStatus(current[Keys.status], status)) changes[Keys.status] = statusJSON(status);
  return Object.keys(changes).length ? changes : undefined;
}

export interface DecisionParts {
  phase: Phase;
  reason: string;
  /** Reason recorded in the status annotation when it differs (a converged set keeps `RolloutComplete`). */
  statusReason?: string;
  message: string;
  revision?: string;
  action?: Action;
  events?: EventRecord[];
  ordinal?: number;
  /** Whether to write claimstep's annotations (false: leave the set untouched, as for opted-out sets). */
  record: boolean;
  /** Revision every claim has reached, when the rollout completes. */
  currentRevision?: string;
}

export function refOf(set: StatefulSet): SetRef {
  return { namespace: set.metadata.namespace ?? "default", name: set.metadata.name };
}

export function makeDecision(snapshot: Snapshot, now: Date, ordinals: OrdinalReport[], parts: DecisionParts): Decision {
  const set = snapshot.statefulSet;
  const status: StatusRecord = {
    phase: parts.phase,
    reason: parts.statusReason ?? parts.reason,
    message: parts.message,
    ...(parts.ordinal !== undefined ? { ordinal: parts.ordinal } : {}),
    ...(parts.revision !== undefined ? { revision: parts.revision } : {}),
    counts: countsOf(ordinals),
    observedAt: now.toISOString(),
  };
  const setAnnotations = parts.record
    ? annotationChanges(set, { [Keys.updateRevision]: parts.revision, [Keys.currentRevision]: parts.currentRevision }, status)
    : undefined;
  return {
    ref: refOf(set),
    phase: parts.phase,
    reason: parts.reason,
    message: parts.message,
    ...(parts.revision !== undefined ? { revision: parts.revision } : {}),
    ...(parts.action ? { action: parts.action } : {}),
    events: parts.events ?? [],
    ...(setAnnotations ? { setAnnotations } : {}),
    ...(set.metadata.resourceVersion !== undefined ? { setResourceVersion: set.metadata.resourceVersion } : {}),
    status,
    ordinals,
  };
}

export interface Verdict {
  phase: Phase;
  reason: string;
  message: string;
  /** Keep the planned action on the decision (e.g. a proposed pull request still describes it). */
  keepAction?: boolean;
}

/** The same decision with another outcome (a refusal, a proposal): status and events follow it. */
export function withVerdict(snapshot: Snapshot, decision: Decision, now: Date, verdict: Verdict): Decision {
  const event: EventRecord | undefined =
    verdict.phase === "Blocked"
      ? { type: "Warning", reason: verdict.reason as EventReason, action: "Block", note: verdict.message }
      : undefined;
  return makeDecision(snapshot, now, decision.ordinals, {
    phase: verdict.phase,
    reason: verdict.reason,
    message: verdict.message,
    ...(decision.revision !== undefined ? { revision: decision.revision } : {}),
    ...(verdict.keepAction && decision.action ? { action: decision.action } : {}),
    ...(decision.status.ordinal !== undefined ? { ordinal: decision.status.ordinal } : {}),
    events: event ? [event] : decision.events,
    record: true,
  });
}

/** What the API server said, reduced to what the planner needs (ApiError satisfies it). */
export interface Refusal {
  code: number;
  message: string;
  reason?: string | undefined;
}

/** Map the API server's refusal of a claim write to the Blocked reason a person acts on. */
export function refusalOf(action: Action, refusal: Refusal): { reason: EventReason; message: string } {
  const said = `the API server refused ${action.type} of ${action.namespace}/${action.claim} (${refusal.code}${refusal.reason ? ` ${refusal.reason}` : ""}): ${refusal.message}`;
  if (refusal.code === 403 && /exceeded quota/i.test(refusal.message)) {
    return { reason: "QuotaExceeded", message: `${said}. Raise the ResourceQuota's requests.storage or lower the template.` };
  }
  if (refusal.code === 403 && /must support resize|only dynamically provisioned/i.test(refusal.message)) {
    return {
      reason: "ExpansionNotAllowed",
      message: `${said}. Set allowVolumeExpansion: true on the claim's StorageClass if its driver supports it.`,
    };
  }
  return { reason: "ApplyRejected", message: `${said}. Fix the desired templates; nothing was changed.` };
}
