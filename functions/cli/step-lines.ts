// The renderings of a step's result: its JSON object and its one line for logs and pipes.
import { outcomeJSON } from "../outcome.js";
import type { StepResult } from "../step.js";

export const resultJSON = (r: StepResult) => ({ decision: r.decision, outcome: outcomeJSON(r), writer: r.writer });

export const outcomeText = (r: StepResult): string => {
  const o = r.outcome;
  switch (o.kind) {
    case "none":
      return "nothing to apply";
    case "dry-run":
      return "dry run: nothing written";
    case "applied":
      return o.detail ?? "applied";
    case "proposed":
      return `proposed: ${o.detail}`;
    case "refused":
      return `refused${o.error ? `: ${o.error.message}` : ""}`;
    case "retry":
      return `will retry${o.retryAfterSeconds ? ` in ${o.retryAfterSeconds}s` : ""}: ${o.error.message}`;
  }
};

/** One line per step for logs and pipes (no `0/0 updated` while the set does not exist, mid re-create). */
export const plainLine = (at: Date, r: StepResult): string => {
  const d = r.decision;
  const c = d.status.counts;
  const progress = c.total ? `  ${c.updated}/${c.total} updated` : "";
  return `${at.toISOString()}  ${d.ref.namespace}/${d.ref.name}  ${d.phase}  ${d.reason}${progress}  ${d.message}  (${outcomeText(r)})`;
};
