// A step as the API routes run and answer it: here (runStep, or the Node server's recorded one)
// or, when it writes, through the Worker's set objects; logged; answered 200, or 503 with
// Retry-After when it hit a transient failure.
import type { Context } from "hono";
import type { SetRef } from "../../core/types.js";
import { renderDecision } from "../../core/view/index.js";
import { outcomeJSON } from "../outcome.js";
import { runStep, type StepResult } from "../step.js";
import type { AppDeps } from "./deps.js";

export const stepRunner =
  (deps: AppDeps, log: (entry: Record<string, unknown>) => void) =>
  async (ref: SetRef, dryRun: boolean, via: string): Promise<StepResult> => {
    const result =
      deps.stepper && !dryRun
        ? await deps.stepper(ref)
        : await (deps.runStep ?? runStep)({
            reader: deps.reader,
            writers: deps.writers,
            metrics: deps.metrics,
            ref,
            now: deps.now(),
            dryRun,
          });
    log({
      msg: "step",
      via,
      namespace: ref.namespace,
      name: ref.name,
      dryRun,
      phase: result.decision.phase,
      reason: result.decision.reason,
      outcome: result.outcome.kind,
      writer: result.writer,
    });
    return result;
  };

const stepJSON = (r: StepResult) => ({
  decision: r.decision,
  outcome: outcomeJSON(r),
  writer: r.writer,
  table: renderDecision(r.decision),
});

/** A step's answer: 503 with Retry-After when it hit a transient failure, else 200. */
export const stepResponse = (c: Context, r: StepResult, extra: Record<string, unknown> = {}) => {
  if (r.outcome.kind === "retry") {
    c.header("Retry-After", String(r.outcome.retryAfterSeconds ?? 5));
    return c.json({ ...extra, ...stepJSON(r) }, 503);
  }
  return c.json({ ...extra, ...stepJSON(r) }, 200);
};
