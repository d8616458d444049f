// One step of a `run`: read the set, decide, act (functions/step.ts). A set that could not be read
// for now is said and tried again after a pause; anything else that failed ends the run.
import { ApiError } from "../../../adapters/api-error.js";
import { runStep, type StepResult } from "../../step.js";
import { emit } from "../io.js";
import type { RunSession } from "./session.js";

/** Step `n`, at `now` on the cluster's clock; undefined: the set could not be read (said, paused, to be tried again). */
export async function stepOnce(s: RunSession, n: number, now: Date): Promise<StepResult | undefined> {
  const { target } = s;
  let r: StepResult;
  try {
    s.inFlight = true;
    r = await runStep({
      reader: target.reader,
      writers: target.writers,
      metrics: target.metrics,
      ref: s.ref,
      now,
      ...(s.finalize ? { finalize: true } : {}),
    });
  } catch (err) {
    s.inFlight = false;
    await retryLater(s, n, now, err);
    return undefined;
  }
  s.inFlight = false;
  s.last = r.decision;
  return r;
}

/**
 * The set could not be read (429, 5xx, timeout after the client's retries): nothing was written,
 * so the run goes on after a pause (the interval, or the server's Retry-After if longer); anything
 * else (not found, permissions) is thrown and ends it.
 */
async function retryLater(s: RunSession, n: number, now: Date, err: unknown): Promise<void> {
  if (!(err instanceof ApiError && err.isTransient)) throw err;
  const { ctx, ref, timeline } = s;
  if (timeline) timeline.failed(now.getTime(), n, err);
  else if (ctx.json) emit(ctx, { step: n, at: now.toISOString(), error: err.message }, true);
  else
    ctx.io.stderr.write(`claimstep: ${ref.namespace}/${ref.name}: could not load the set (${err.message}); retrying\n`);
  await s.target.pause(Math.max(s.interval, (err.retryAfterSeconds ?? 0) * 1000), ctx.signal);
}
