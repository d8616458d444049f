// One invocation: load → plan (final for the writer that will carry it out) → write at most one
// claim → one verdict on what became of it → record status and events. Every entry point (HTTP,
// cron, CLI, relay, simulation) goes through here.

import { ApiError, PermissionError } from "../adapters/api-error.js";
import { RECREATE_ACTIONS } from "../core/actions.js";
import { planStep, verdict, type WriteOutcome } from "../core/plan/index.js";
import { type PolicyResult, type PolicySnapshot, policyOfSnapshot, recordedRevisionsOf } from "../core/policy/index.js";
import type {
  ApplyOutcome,
  ClaimWriter,
  MetricsReader,
  RecreateWriter,
  StateReader,
  WriterCapabilities,
  Writers,
} from "../core/ports.js";
import type { Action, ClaimAction, Decision, EvictPod, PatchPartition, SetRef, Snapshot } from "../core/types.js";

export interface StepOptions {
  reader: StateReader;
  /** The claim writer (or the choice of one per set, e.g. by `claimstep.io/apply-via`), the set-status writer and the event recorder. */
  writers: Writers;
  ref: SetRef;
  now: Date;
  /** Plan only: no write of any kind. */
  dryRun?: boolean;
  /** Re-create the set with its new templates once complete, whatever its annotation says (`claimstep finalize`). */
  finalize?: boolean;
  /** Autogrow's metrics (Prometheus); absent: a set asking for autogrow goes on without it, saying so. */
  metrics?: MetricsReader;
}

export type StepOutcome =
  | { kind: "none" }
  | { kind: "dry-run" }
  | { kind: "applied"; detail?: string }
  | { kind: "proposed"; detail: string; url?: string }
  /** The writer or the server refused the action: the decision is now Blocked. */
  | { kind: "refused"; error?: ApiError }
  /** A transient failure (lost race, 429, 5xx, timeout): nothing changed; the next invocation continues. */
  | { kind: "retry"; error: ApiError; retryAfterSeconds?: number };

export interface StepResult {
  decision: Decision;
  outcome: StepOutcome;
  writer: string;
}

const asRetry = (error: ApiError): StepOutcome => ({
  kind: "retry",
  error,
  ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
});

/** An RBAC 403 (not an admission refusal) anywhere in a step is a PermissionError. */
const permission = (err: unknown): unknown =>
  err instanceof ApiError && err.code === 403 && !err.isAdmissionForbidden ? new PermissionError(err) : err;

export async function runStep(opts: StepOptions): Promise<StepResult> {
  let snapshot: PolicySnapshot;
  try {
    snapshot = await opts.reader.load(opts.ref, opts.finalize ? { recreateRecord: true } : {});
  } catch (err) {
    throw permission(err);
  }
  // The set's annotations, parsed once (by the reader, else here) for the usage read and the planner.
  const policy = policyOfSnapshot(snapshot);
  snapshot = await withUsage(snapshot, policy, opts);
  const claims =
    typeof opts.writers.claims === "function" ? opts.writers.claims(snapshot, policy) : opts.writers.claims;
  // R3's charge as the pod writer counts it (shortened only in tests).
  const budgetChargeSeconds = opts.writers.pods?.budgetChargeSeconds;
  const planned = planStep(snapshot, opts.now, capabilities(claims, opts.writers), {
    policy,
    finalize: opts.finalize,
    budgetChargeSeconds,
  });
  if (opts.dryRun) return { decision: planned, outcome: { kind: "dry-run" }, writer: claims.name };

  // R3: an eviction is recorded (claimstep.io/last-eviction, with the status) before it is
  // attempted, so that no step evicts again before the budget's charge has run out, even when the
  // answer or a later write is lost. No record, no eviction. F1 likewise: the set's stamp
  // (claimstep.io/recreate-record) before the record, so that only a record it names is acted on.
  let setResourceVersion = planned.setResourceVersion;
  let preWritten = false;
  const preWrite = planned.action?.type === "EvictPod" || planned.action?.type === "WriteRecord";
  if (preWrite && planned.setAnnotations) {
    try {
      setResourceVersion =
        (await opts.writers.status.annotateSet(opts.ref, planned.setAnnotations, planned.setResourceVersion)) ??
        setResourceVersion;
      preWritten = true;
    } catch (err) {
      if (err instanceof ApiError && err.isTransient)
        return { decision: { ...planned, events: [] }, outcome: asRetry(err), writer: claims.name };
      throw permission(err);
    }
  }

  const written = planned.action ? await write(claims, opts.writers, planned) : undefined;
  const decision = written ? verdict(snapshot, opts.now, planned, written.result, budgetChargeSeconds) : planned;
  const outcome: StepOutcome = written?.outcome ?? { kind: "none" };
  // A partition patch carries the step's annotations itself: the set's resourceVersion has moved.
  // After an orphan delete or a create, the set is not the one read: nothing to annotate; a raise
  // of the desired templates moved its resourceVersion (its next step records the status).
  const type = decision.action?.type;
  const annotated =
    (written?.result.kind === "applied" &&
      (type === "PatchPartition" ||
        type === "OrphanSet" ||
        type === "CreateSet" ||
        type === "RaiseTemplate" ||
        type === "RestoreOwnership")) ||
    (written?.result.kind === "transient" && preWritten) ||
    // Written before the action, and the verdict changed nothing of it (F1's stamp and status).
    (preWritten && sameAnnotations(decision.setAnnotations, planned.setAnnotations));

  let failed: unknown;
  try {
    // Between the orphan delete and the create there is no set to annotate (F3): a refused create
    // is said by the decision and its event, never hidden by the 404 of a status write.
    if (decision.setAnnotations && !annotated && !snapshot.setMissing)
      await opts.writers.status.annotateSet(opts.ref, decision.setAnnotations, setResourceVersion);
  } catch (err) {
    failed = err;
  }
  // The events say what the step did: recorded even when the status write lost its race. Right
  // after an eviction the StatefulSet controller writes the set's status, so the status patch
  // under the resourceVersion read before it nearly always loses (found on a real v1.34 server:
  // PodEvicted was never recorded). The next step repairs the status; nothing repairs an event.
  try {
    if (decision.events.length) await opts.writers.events.recordEvents(opts.ref, decision.events, opts.now);
  } catch (err) {
    failed ??= err;
  }
  if (failed !== undefined) {
    // The claim write (if any) has landed; a lost race on the status is repaired by the next step.
    if (failed instanceof ApiError && failed.isTransient) {
      return { decision, outcome: outcome.kind === "none" ? asRetry(failed) : outcome, writer: claims.name };
    }
    throw permission(failed);
  }
  return { decision, outcome, writer: claims.name };
}

const sameAnnotations = (a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean =>
  a !== undefined &&
  b !== undefined &&
  Object.keys(a).length === Object.keys(b).length &&
  Object.entries(a).every(([k, v]) => b[k] === v);

/**
 * Autogrow reads the claims' usage only where it may act: the set asks for it and no rollout is in
 * progress (update-revision = current-revision), so other steps cost no query.
 */
async function withUsage(snapshot: Snapshot, parsed: PolicyResult, opts: StepOptions): Promise<Snapshot> {
  const current = recordedRevisionsOf(snapshot.statefulSet).current;
  if (!parsed.ok || !parsed.policy.autogrow || snapshot.setMissing || current === undefined) return snapshot;
  // The desired templates' revision, not the annotation: right after a raise they differ already.
  if (parsed.policy.revision !== current) return snapshot;
  if (!opts.metrics) return snapshot;
  const claims = snapshot.claims.map((c) => c.metadata.name);
  return { ...snapshot, volumeUsage: await opts.metrics.usage(opts.ref, claims) };
}

const isClaimAction = (a: Action): a is ClaimAction =>
  a.type === "PatchClaim" || a.type === "ProposeRecreate" || a.type === "RaiseTemplate";

/** What the step's writers can carry out: the claim writer's actions, and the pod side's when there is one. */
function capabilities(claims: ClaimWriter, writers: Writers): WriterCapabilities {
  if (!writers.pods && !writers.recreate) return claims;
  return {
    name: claims.name,
    supports: [
      ...claims.supports,
      ...(writers.pods ? (["PatchPartition", "EvictPod"] as const) : []),
      ...(writers.recreate ? [...RECREATE_ACTIONS, "LabelClaim" as const] : []),
    ],
    proposes: claims.proposes,
    ...(claims.unavailable !== undefined ? { unavailable: claims.unavailable } : {}),
  };
}

/** The re-create's one request of this step (F1–F5), or a label on a claim of a removed template. */
function recreateWrite(
  recreate: RecreateWriter,
  action: Exclude<Action, ClaimAction | PatchPartition | EvictPod>,
  annotations: Record<string, string> | undefined,
): Promise<{ kind: "applied"; detail: string }> {
  switch (action.type) {
    case "WriteRecord":
      return recreate.writeRecord(action);
    case "ArmRecord":
      return recreate.armRecord(action);
    case "OrphanSet":
      return recreate.orphanSet(action);
    case "CreateSet":
      return recreate.createSet(action);
    case "RestoreOwnership":
      return recreate.restoreOwnership(action, annotations);
    case "DeleteRecord":
      return recreate.deleteRecord(action);
    case "LabelClaim":
      return recreate.labelClaim(action);
  }
}

/** Apply the decision's action: what became of it, for the verdict and for the caller. */
async function write(
  claims: ClaimWriter,
  writers: Writers,
  decision: Decision,
): Promise<{ result: WriteOutcome; outcome: StepOutcome }> {
  const action = decision.action!;
  try {
    // Planned only when the writer is present (capabilities).
    if (action.type === "PatchPartition" || action.type === "EvictPod") {
      const pods = writers.pods!;
      const done =
        action.type === "PatchPartition"
          ? await pods.patchPartition(action, decision.setAnnotations)
          : await pods.evict(action);
      return { result: done, outcome: done.kind === "applied" ? done : { kind: "none" } };
    }
    if (action.type !== "PatchClaim" && action.type !== "ProposeRecreate" && action.type !== "RaiseTemplate") {
      const recreate = writers.recreate!;
      const done = await recreateWrite(recreate, action, decision.setAnnotations);
      return { result: done, outcome: done };
    }
    const answer = await claims.apply(action, decision);
    // A merged growth proposal changed Git, not the set: it waits for the GitOps tool to apply it.
    const applied: ApplyOutcome =
      claims.proposes && action.type === "RaiseTemplate" && answer.kind === "applied"
        ? { kind: "proposed", detail: answer.detail ?? "merged; waiting for the GitOps controller to apply it" }
        : answer;
    return { result: applied, outcome: applied.kind === "refused" ? { kind: "refused" } : applied };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    // A pod, set or record gone since the read (404), or one already there (409 AlreadyExists: a
    // landed create whose answer was lost, or the old set still finalizing) is a lost race like a
    // 409: the next step re-reads and re-plans.
    const raced = !isClaimAction(action) && (err.kind === "NotFound" || err.kind === "AlreadyExists");
    if (err.isTransient || raced)
      return { result: { kind: "transient", retryAfterSeconds: err.retryAfterSeconds }, outcome: asRetry(err) };
    if (err.code === 401 || (err.code === 403 && !err.isAdmissionForbidden)) throw permission(err);
    return { result: { kind: "rejected", refusal: err }, outcome: { kind: "refused", error: err } };
  }
}
