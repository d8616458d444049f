// One invocation: load → plan → apply at most one action → record status and events.
// Every entry point (HTTP, cron, CLI, relay, simulation) goes through here.
import { planStep } from "../core/plan.js";
import { refusalOf, withVerdict } from "../core/decision.js";
import type { ActionWriter, StateReader } from "../core/ports.js";
import type { Decision, SetRef, Snapshot } from "../core/types.js";
import { ApiError } from "../adapters/api-error.js";

export interface StepOptions {
  reader: StateReader;
  /** A writer, or a choice of writer per set (e.g. by `claimstep.io/apply-via`). */
  writer: ActionWriter | ((snapshot: Snapshot) => ActionWriter);
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
  const writer = typeof opts.writer === "function" ? opts.writer(snapshot) : opts.writer;
  let decision = planStep(snapshot, opts.now);
  const action = decision.action;

  if (action && !writer.supports.includes(action.type)) {
    decision = withVerdict(snapshot, decision, opts.now, {
      phase: "Blocked",
      reason: "ActionNotSupported",
      message: `${writer.name} cannot apply ${action.type} of ${action.claim}: apply it by hand (kubectl apply --server-side --field-manager=claimstep --force-conflicts) or switch the set to claimstep.io/apply-via: direct`,
    });
  }
  if (opts.dryRun) return { decision, outcome: { kind: "dry-run" }, writer: writer.name };

  let outcome: StepOutcome = { kind: "none" };
  const planned = decision.action;
  if (planned) {
    try {
      const applied = await writer.apply(planned, decision);
      if (applied.kind === "refused") {
        decision = withVerdict(snapshot, decision, opts.now, { phase: "Blocked", reason: applied.reason, message: applied.message });
        outcome = { kind: "refused" };
      } else if (applied.kind === "proposed") {
        decision = withVerdict(snapshot, decision, opts.now, {
          phase: "Waiting",
          reason: "AwaitingApproval",
          message: applied.detail,
          keepAction: true,
        });
        outcome = applied;
      } else {
        outcome = applied;
      }
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.isTransient) return { decision, outcome: asRetry(err), writer: writer.name };
      if (err.code === 401 || (err.code === 403 && !err.isAdmissionForbidden)) throw permission(err);
      const refusal = refusalOf(planned, err);
      decision = withVerdict(snapshot, decision, opts.now, { phase: "Blocked", ...refusal });
      outcome = { kind: "refused", error: err };
    }
  }

  try {
    if (decision.setAnnotations) {
      await writer.annotateSet(opts.ref, decision.setAnnotations, decision.setResourceVersion);
    }
    if (decision.events.length) await writer.recordEvents(opts.ref, decision.events, opts.now);
  } catch (err) {
    // The claim write (if any) has landed; a lost race on the status is repaired by the next step.
    if (err instanceof ApiError && err.isTransient) {
      return { decision, outcome: outcome.kind === "none" ? asRetry(err) : outcome, writer: writer.name };
    }
    throw permission(err);
  }
  return { decision, outcome, writer: writer.name };
}
