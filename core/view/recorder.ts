// The metrics port (issue 25): what claimstep tells a recorder as it works — a step finished (its
// decision, outcome and duration, with what the set's gauges need), an API request answered, a
// delivery or an admission review handled, autogrow's growths and Prometheus' failures. Types and
// pure functions only: the Node server's recorder is prom-client's (adapters/metrics-node/registry.ts);
// the Worker has none.

import type { StatefulSet } from "../kube/k8s.js";
import { toBytes } from "../kube/quantity.js";
import { phaseShown } from "../plan/decision.js";
import { autogrowOf, rawAnnotation, strategyOf } from "../policy/annotations.js";
import { desiredKeyOf, desiredOf } from "../policy/policy.js";
import type { Phase } from "../reasons.js";
import type { Decision, SetRef, Snapshot } from "../types.js";

/** claimstep_steps_total's outcome: what a step did, or why it did nothing. */
export type StepOutcomeLabel = "applied" | "proposed" | "waiting" | "refused" | "retried" | "idle" | "complete";

/** What a set's gauges show after a step (claimstep_set_*), read from its snapshot and decision. */
export interface SetObservation {
  phase: Phase;
  reason: string;
  counts: { updated: number; inFlight: number; pending: number; blocked: number };
  /** status.since, ms since the epoch (claimstep_set_phase_age_seconds counts from it). */
  sinceMs: number;
  /** The claimstep.io/volume-claim-update-strategy, as the set says it (InPlace, OnClaimDelete, invalid). */
  strategy: string;
  autogrow: boolean;
  /** The autogrow threshold as a ratio (0.8), sets with a valid autogrow policy only. */
  thresholdRatio?: number;
  /** Per template: the desired request, and the smallest spec request among its claims (bytes). */
  templates: { template: string; desiredBytes?: number; requestedBytes?: number }[];
  /** The set's claims (claimstep_claim_info). */
  claims: string[];
}

export interface StepRecord {
  ref: SetRef;
  outcome: StepOutcomeLabel;
  seconds: number;
  /** The set's gauges; absent when the step could not read the set. */
  set?: SetObservation;
  /** The step raised a template for autogrow (applied or proposed). */
  grew: boolean;
}

/** An answer of the API server (or none: code "error"). */
export interface ApiRequestRecord {
  verb: string;
  /** The plural resource, with its subresource (`pods/eviction`). */
  resource: string;
  code: number | "error";
  seconds: number;
}

export type DeliverySource = "relay" | "github" | "gitlab" | "api";
export type DeliveryResult = "accepted" | "replayed" | "refused" | "ignored";
export type AdmissionResult = "patched" | "allowed" | "error";

/** The recorder port. Every method is cheap and never throws. */
export interface Recorder {
  step(record: StepRecord): void;
  /** A step failed before it finished (its duration is still observed). */
  stepFailed(seconds: number): void;
  /** The set is gone or opted out: its series go. */
  setGone(ref: SetRef): void;
  /** The opted-in sets of a namespace (or of all: undefined) are these: the series of the others there go. */
  setsListed(namespace: string | undefined, refs: readonly SetRef[]): void;
  apiRequest(record: ApiRequestRecord): void;
  delivery(source: DeliverySource, result: DeliveryResult): void;
  admissionReview(result: AdmissionResult): void;
  prometheusQueryFailed(): void;
}

/** A step's outcome kind and its decision's phase as claimstep_steps_total's outcome. */
export function outcomeLabel(kind: string, phase: Phase): StepOutcomeLabel {
  if (kind === "applied" || kind === "proposed" || kind === "refused") return kind;
  if (kind === "retry") return "retried";
  if (phase === "Complete") return "complete";
  if (phase === "Idle") return "idle";
  if (phase === "Blocked") return "refused";
  return "waiting";
}

/** "80%" → 0.8 (the policy is validated: a percent with at most two decimals). */
const ratioOf = (percent: string): number => Number(percent.replace("%", "")) / 100;

/** How many annotation values the memos below keep: a few per set is plenty, and they are small. */
const MEMO_LIMIT = 4096;

/** compute(), remembered by key: the same annotation text gives the same answer, and a set's steps ask again at every step. */
function memo<T>(): (key: string, compute: () => T) => T {
  const seen = new Map<string, T>();
  return (key, compute) => {
    if (seen.has(key)) return seen.get(key) as T;
    if (seen.size >= MEMO_LIMIT) seen.clear();
    const v = compute();
    seen.set(key, v);
    return v;
  };
}

const bytesMemo = memo<number | undefined>();
/** A quantity in bytes (a Number: exact below 2^53, 8 PiB), remembered: a set's claims repeat a few values. */
const bytesOf = (q: unknown): number | undefined => {
  if (typeof q !== "string" && typeof q !== "number") return undefined;
  return bytesMemo(String(q), () => {
    try {
      return Number(toBytes(q));
    } catch {
      return undefined;
    }
  });
};

type DesiredBytes = { template: string; bytes: number | undefined }[];
const desiredMemo = memo<DesiredBytes>();
const thresholdMemo = memo<number | undefined>();

/** The desired templates' requests, as the planner reads them (core/policy/policy.ts desiredOf: a template being removed is not desired). */
function desiredBytesOf(set: StatefulSet): DesiredBytes {
  return desiredMemo(desiredKeyOf(set), () => {
    const desired = desiredOf(set);
    return desired.ok
      ? desired.templates.map((t) => ({
          template: t.metadata.name,
          bytes: bytesOf(t.spec.resources?.requests?.storage),
        }))
      : [];
  });
}

/** The autogrow threshold as a ratio, or undefined (no valid policy). */
function thresholdOf(set: StatefulSet): number | undefined {
  const raw = rawAnnotation(set.metadata.annotations, "autogrow");
  if (raw === undefined) return undefined;
  return thresholdMemo(raw, () => {
    const policy = autogrowOf(set);
    return policy.ok && policy.policy ? ratioOf(policy.policy.threshold) : undefined;
  });
}

/** The set's gauges after a step, from what the step read and decided. */
export function observeSet(snapshot: Snapshot, decision: Decision): SetObservation {
  const set = snapshot.statefulSet;
  const threshold = thresholdOf(set);
  const grows = threshold !== undefined;
  const desired = desiredBytesOf(set);
  const templates = new Map<string, { template: string; desiredBytes?: number; requestedBytes?: number }>();
  for (const t of desired)
    templates.set(t.template, { template: t.template, ...(t.bytes !== undefined ? { desiredBytes: t.bytes } : {}) });
  const claims: string[] = [];
  for (const o of decision.ordinals) {
    for (const c of o.claims) {
      if (!c.exists) continue;
      claims.push(c.claim);
      const bytes = bytesOf(c.spec);
      if (bytes === undefined) continue;
      const t = templates.get(c.template) ?? { template: c.template };
      if (t.requestedBytes === undefined || bytes < t.requestedBytes) t.requestedBytes = bytes;
      templates.set(c.template, t);
    }
  }
  const { counts } = decision.status;
  const since = Date.parse(decision.status.since);
  const strategy = strategyOf(set);
  return {
    // Complete only when claimstep has nothing left to do: a Complete step followed by the
    // re-create, the record's removal or a restart is still Progressing (as every status surface says).
    phase: phaseShown(decision),
    reason: decision.reason,
    counts: { updated: counts.updated, inFlight: counts.inFlight, pending: counts.pending, blocked: counts.blocked },
    sinceMs: Number.isNaN(since) ? Date.parse(decision.status.observedAt) || 0 : since,
    strategy: strategy.kind === "invalid" ? "invalid" : strategy.kind,
    autogrow: grows,
    ...(threshold !== undefined ? { thresholdRatio: threshold } : {}),
    templates: [...templates.values()],
    claims,
  };
}
