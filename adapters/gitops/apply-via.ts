// Per-set choice of claim writer: `claimstep.io/apply-via: direct | pull-request` on the
// StatefulSet (default direct; the policy is core/kube/statefulset.ts). runStep accepts
// `claims: (snapshot) => ClaimWriter`; writerFor builds that. It never throws: a set it cannot
// serve gets a writer that carries out nothing, and the planner blocks it with the fix.
import { actionTarget } from "../../core/actions.js";
import { Messages } from "../../core/messages.js";
import type { PolicyResult } from "../../core/policy/index.js";
import { applyViaOf } from "../../core/policy/index.js";
import type { ClaimWriter } from "../../core/ports.js";
import type { Snapshot } from "../../core/types.js";

export interface ClaimWriterChoice {
  direct: ClaimWriter;
  /** Absent when no GitOps repository is configured: a set asking for pull requests is then blocked. */
  pullRequest?: ClaimWriter;
}

/** A writer that carries out nothing, saying why and what a person must do. */
export function unavailableWriter(name: string, why: string): ClaimWriter {
  return {
    name,
    supports: [],
    proposes: false,
    unavailable: why,
    apply: async (action) => {
      throw new Error(`${name} cannot apply ${action.type} of ${actionTarget(action)}: ${why}`);
    },
  };
}

/** Pick each set's claim writer from its annotation. */
export function writerFor(writers: ClaimWriterChoice): (snapshot: Snapshot, policy?: PolicyResult) => ClaimWriter {
  return (snapshot, policy) => {
    const set = snapshot.statefulSet;
    // The step's parsed policy when it holds one; else (not opted in, another annotation invalid,
    // or no policy given) the annotation itself, so the writer's name and refusal stay the same.
    const via = policy?.ok ? { ok: true as const, via: policy.policy.applyVia } : applyViaOf(set);
    // The planner blocks such a set (InvalidApplyVia) before it plans any write.
    if (!via.ok) return unavailableWriter("no writer", via.message);
    if (via.via === "direct") return writers.direct;
    return (
      writers.pullRequest ??
      unavailableWriter("pull-request writer (not configured)", Messages.pullRequestNotConfigured(set.metadata))
    );
  };
}
