// A step's outcome as JSON (HTTP answers, `-o json`): an ApiError reduced to its code, reason and
// message. Apart from the app so the CLI can print it without loading the HTTP stack.
import type { StepResult } from "./step.js";

export const outcomeJSON = (r: StepResult) => {
  const o = r.outcome;
  if ((o.kind === "refused" || o.kind === "retry") && o.error) {
    return { ...o, error: { code: o.error.code, reason: o.error.reason, message: o.error.message } };
  }
  return o;
};
