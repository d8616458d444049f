// The pause between two steps of a `run`.
import type { StepResult } from "../../step.js";
import { MIN_INTERVAL_MS } from "./clock.js";
import { elapsed, type RunSession } from "./session.js";

/** Until the next step: as the step `r` asks, never less than the floor, never past --timeout. */
export async function pauseBeforeNext(s: RunSession, r: StepResult): Promise<void> {
  const d = r.decision;
  // The server's Retry-After after a transient failure; else the decision's requeueAfter, with
  // --interval as the default and the cap.
  const wait =
    r.outcome.kind === "retry" && r.outcome.retryAfterSeconds
      ? r.outcome.retryAfterSeconds * 1000
      : d.requeueAfter !== undefined
        ? Math.min(d.requeueAfter * 1000, s.interval)
        : s.interval;
  // Never less than the floor (a requeueAfter of 0 would spin), never past the timeout.
  const left = s.timeout === undefined ? Infinity : Math.max(0, s.timeout - elapsed(s));
  await s.target.pause(Math.min(Math.max(wait, MIN_INTERVAL_MS), Math.max(left, 1)), s.ctx.signal);
}
