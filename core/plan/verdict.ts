// The writer's side of a decision, in one place. Before the write: what the writer's capabilities
// make of the planned action (one it cannot carry out → Blocked/ActionNotSupported; a writer that
// proposes → Waiting/AwaitingApproval). After it: what its answer, or the API server's, makes of
// the decision (applied, proposed, refused, rejected by the server, or a transient failure).

import { Keys } from "../keys.js";
import { blocked, concluded, eventOf, Messages } from "../messages.js";
import type { DecisionParts } from "../parts.js";
import { lastEvictionJSON } from "../policy/pod-policy.js";
import type { ApplyOutcome, WriterCapabilities } from "../ports.js";
import { RETRY_PACE, type Reason } from "../reasons.js";
import type { Action, Decision, Snapshot } from "../types.js";
import { makeDecision } from "./decision.js";

type Conclusion = Omit<DecisionParts, "revision" | "record">;

/** The planned conclusion as this writer can carry it out. */
export function forWriter(conclusion: Conclusion, writer: WriterCapabilities): Conclusion {
  const { action, ...rest } = conclusion;
  if (!action) return conclusion;
  if (!writer.supports.includes(action.type)) {
    const message =
      writer.unavailable !== undefined && action.type === "PatchClaim"
        ? Messages.writerUnavailable(writer.name, action, writer.unavailable)
        : Messages.actionNotSupported(writer.name, action);
    return { ...rest, ...blocked("ActionNotSupported", message) };
  }
  // Partition patches, evictions and the re-create's requests are operational: they go direct,
  // never through a proposal; a claim write, or the re-create itself, is proposed.
  if (writer.proposes && (action.type === "PatchClaim" || action.type === "ProposeRecreate"))
    return {
      ...conclusion,
      reason: "AwaitingApproval",
      message: Messages.awaitingApproval(writer.name, conclusion.message),
    };
  return conclusion;
}

/** What the API server said, reduced to what a verdict needs (ApiError satisfies it). */
export interface Refusal {
  code: number;
  message: string;
  reason?: string | undefined;
}

/** What became of a decision's action. */
export type WriteOutcome =
  | ApplyOutcome
  /** The API server refused the write (admission, validation): the set blocks with its words. */
  | { kind: "rejected"; refusal: Refusal }
  /** A lost race, 429, 5xx or timeout: nothing changed; the next invocation continues. */
  | { kind: "transient"; retryAfterSeconds?: number | undefined }
  /** R3: a PodDisruptionBudget refused the eviction (429); the budget stays charged for a while. */
  | { kind: "budget"; message: string };

/**
 * The final decision, given what became of its action; after a budget's refusal, the next step is
 * worth running once the charge (`budgetChargeSeconds`, as the step planned with) has run out.
 */
export function verdict(
  snapshot: Snapshot,
  now: Date,
  decision: Decision,
  outcome: WriteOutcome,
  budgetChargeSeconds?: number,
): Decision {
  switch (outcome.kind) {
    case "applied":
      // An eviction went through: its record (written as attempted before it) says so.
      if (decision.action?.type === "EvictPod") {
        const a = decision.action;
        return redecide(snapshot, now, decision, {
          reason: decision.reason,
          message: decision.message,
          action: a,
          events: decision.events,
          annotations: {
            [Keys.lastEviction]: lastEvictionJSON({ pod: a.pod, uid: a.uid, at: now.toISOString(), result: "Evicted" }),
          },
        });
      }
      // A merged re-create proposal: approved; recorded so the next step begins F1 directly.
      if (decision.action?.type === "ProposeRecreate") {
        const revision = decision.action.revision;
        return makeDecision(snapshot, now, decision.ordinals, {
          reason: "RecreateApproved",
          message: Messages.recreateApproved(decision.action.set, revision, outcome.detail),
          revision,
          record: true,
          annotations: { [Keys.recreateApproved]: revision },
          events: [
            eventOf("RecreateApproved", Messages.recreateApproved(decision.action.set, revision, outcome.detail)),
          ],
        });
      }
      return decision;
    case "proposed":
      // The proposal (e.g. a pull request) still describes the action; the step waits for approval.
      return redecide(snapshot, now, decision, {
        reason: "AwaitingApproval",
        message: outcome.detail,
        action: decision.action,
        events: decision.events,
        ...(outcome.url ? { pullRequest: outcome.url } : {}),
      });
    case "refused":
      return blockedBy(snapshot, now, decision, outcome.reason, outcome.message, outcome.url);
    case "rejected": {
      const { reason, message } = refusalOf(decision.action!, outcome.refusal);
      return blockedBy(snapshot, now, decision, reason, message);
    }
    case "budget": {
      // R3: recorded, so that no step asks again while the refused eviction charges the budget.
      const action = decision.action!;
      const pod = action.type === "EvictPod" ? action : undefined;
      const message = Messages.budgetRefused(pod?.pod ?? "?", outcome.message);
      const record: Record<string, string> = pod
        ? {
            [Keys.lastEviction]: lastEvictionJSON({
              pod: pod.pod,
              uid: pod.uid,
              at: now.toISOString(),
              result: "DisruptionBudget",
              message: outcome.message,
            }),
          }
        : {};
      return redecide(snapshot, now, decision, {
        ...concluded("DisruptionBudget", message),
        annotations: record,
        // Absent: the reason's pace, the default charge (core/reasons.ts).
        requeueAfter: budgetChargeSeconds,
      });
    }
    case "transient": {
      // Nothing is recorded: the next invocation re-reads the set and continues from where it is.
      const { setAnnotations: _unwritten, ...rest } = decision;
      return { ...rest, events: [], requeueAfter: outcome.retryAfterSeconds ?? RETRY_PACE };
    }
  }
}

const blockedBy = (
  snapshot: Snapshot,
  now: Date,
  decision: Decision,
  reason: Extract<Reason, "QuotaExceeded" | "ExpansionNotAllowed" | "ApplyRejected" | "ChangeRejected">,
  message: string,
  pullRequest?: string,
) => redecide(snapshot, now, decision, { ...blocked(reason, message), ...(pullRequest ? { pullRequest } : {}) });

/** The same decision with another outcome: status and events follow it. */
function redecide(
  snapshot: Snapshot,
  now: Date,
  decision: Decision,
  parts: Pick<
    DecisionParts,
    "reason" | "message" | "action" | "events" | "pullRequest" | "annotations" | "requeueAfter"
  >,
): Decision {
  return makeDecision(snapshot, now, decision.ordinals, {
    ...parts,
    ...(decision.revision !== undefined ? { revision: decision.revision } : {}),
    ...(decision.status.ordinal !== undefined ? { ordinal: decision.status.ordinal } : {}),
    record: true,
  });
}

/** Map the API server's refusal of a claim write to the Blocked reason a person acts on. */
export function refusalOf(
  action: Action,
  refusal: Refusal,
): { reason: Extract<Reason, "QuotaExceeded" | "ExpansionNotAllowed" | "ApplyRejected">; message: string } {
  const said = Messages.refused(action, refusal.code, refusal.reason, refusal.message);
  if (refusal.code === 403 && /exceeded quota/i.test(refusal.message))
    return { reason: "QuotaExceeded", message: Messages.quotaExceeded(said) };
  if (refusal.code === 403 && /must support resize|only dynamically provisioned/i.test(refusal.message)) {
    return { reason: "ExpansionNotAllowed", message: Messages.expansionRefused(said) };
  }
  return { reason: "ApplyRejected", message: Messages.applyRejected(said) };
}
