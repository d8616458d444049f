// One invocation: load → plan (final for the writer that will carry it out) → write at most one
// claim → one verdict on what became of it → record status and events. Every entry point (HTTP,
// cron, CLI, relay, simulation) goes through here.
import { planStep } from "../core/plan.js";
import type { ClaimWriter, StateReader, WriterCapabilities, Writers } from "../core/ports.js";
import type { Decision, SetRef, Snapshot } from "../core/types.js";
import { verdict, type WriteOutcome } from "../core/verdict.js";
import { ApiError } from "../adapters/api-error.js";

export interface StepOptions {
  reader: StateReader;
  /** The claim writer (or the choice of one per set, e.g. by `claimstep.io/apply-via`), the set-status writer and the event recorder. */
  writers: Writers;
  ref: SetRef;
  now: Date;
  /** Plan only: no write of any kind. */
  dryRun?: boolean;
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

/** RBAC refusals are configuration errors, not rollout states: say which permission is missing. */
export class PermissionError extends Error {
  override readonly name = "PermissionError";
  constructor(override readonly cause: ApiError) {
    super(`missing permission: ${cause.message}. Grant it in the claimstep ClusterRole (deploy/kubernetes/rbac.yaml).`);
  }
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
  let snapshot: Snapshot;
  try {
    snapshot = await opts.reader.load(opts.ref);
  } catch (err) {
    throw permission(err);
  }
  const claims = typeof opts.writers.claims === "function" ? opts.writers.claims(snapshot) : opts.writers.claims;
  const planned = planStep(snapshot, opts.now, capabilities(claims, opts.writers));
  if (opts.dryRun) return { decision: planned, outcome: { kind: "dry-run" }, writer: claims.name };

  const written = planned.action ? await write(claims, opts.writers, planned) : undefined;
  const decision = written ? verdict(snapshot, opts.now, planned, written.result) : planned;
  const outcome: StepOutcome = written?.outcome ?? { kind: "none" };
  // A partition patch carries the step's annotations itself: the set's resourceVersion has moved.
  const annotated = decision.action?.type === "PatchPartition" && written?.result.kind === "applied";

  try {
    if (decision.setAnnotations && !annotated) await opts.writers.status.annotateSet(opts.ref, decision.setAnnotations, decision.setResourceVersion);
    if (decision.events.length) await opts.writers.events.recordEvents(opts.ref, decision.events, opts.now);
  } catch (err) {
    // The claim write (if any) has landed; a lost race on the status is repaired by the next step.
    if (err instanceof ApiError && err.isTransient) {
      return { decision, outcome: outcome.kind === "none" ? asRetry(err) : outcome, writer: claims.name };
    }
    throw permission(err);
  }
  return { decision, outcome, writer: claims.name };
}

/** What the step's writers can carry out: the claim writer's actions, and the pod side's when there is one. */
function capabilities(claims: ClaimWriter, writers: Writers): WriterCapabilities {
  if (!writers.pods) return claims;
  return {
    name: claims.name,
    supports: [...claims.supports, "PatchPartition", "EvictPod"],
    proposes: claims.proposes,
    ...(claims.unavailable !== undefined ? { unavailable: claims.unavailable } : {}),
  };
}

/** Apply the decision's action: what became of it, for the verdict and for the caller. */
async function write(claims: ClaimWriter, writers: Writers, decision: Decision): Promise<{ result: WriteOutcome; outcome: StepOutcome }> {
  const action = decision.action!;
  try {
    if (action.type !== "PatchClaim") {
      const pods = writers.pods!; // planned only when present (capabilities)
      const done = action.type === "PatchPartition" ? await pods.patchPartition(action, decision.setAnnotations) : await pods.evict(action);
      return { result: done, outcome: done.kind === "applied" ? done : { kind: "none" } };
    }
    const applied = await claims.apply(action, decision);
    return { result: applied, outcome: applied.kind === "refused" ? { kind: "refused" } : applied };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    // A pod or set gone since the read (404) is a lost race like a 409: the next step re-plans.
    if (err.isTransient || (action.type !== "PatchClaim" && err.kind === "NotFound")) return { result: { kind: "transient", retryAfterSeconds: err.retryAfterSeconds }, outcome: asRetry(err) };
    if (err.code === 401 || (err.code === 403 && !err.isAdmissionForbidden)) throw permission(err);
    return { result: { kind: "rejected", refusal: err }, outcome: { kind: "refused", error: err } };
  }
}
