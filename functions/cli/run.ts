// `run`: step until Complete or Blocked, as a live view, plain lines, JSON lines (YAML
// documents) or a timeline. A set claimstep leaves alone (not opted in) exits 2: a CI job must not
// pass having done nothing. Its parts are in run/.

import type { Context } from "./context.js";
import { finished, timedOut } from "./run/end.js";
import { holdFrame, showStep } from "./run/show.js";
import { announceStopping, stopped } from "./run/signals.js";
import { startRun } from "./run/start.js";
import { stepOnce } from "./run/step.js";
import { tellStory } from "./run/story.js";
import { pauseBeforeNext } from "./run/wait.js";

export { elapsedSince, intervalOf, MIN_INTERVAL_MS } from "./run/clock.js";

export interface RunOptions {
  /** Re-create the set with its new templates once complete (`claimstep finalize`). */
  finalize?: boolean;
}

export async function run(ctx: Context, opts: RunOptions = {}): Promise<number> {
  const s = await startRun(ctx, !!opts.finalize);
  tellStory(s);
  announceStopping(s);
  for (let n = 1; ; n++) {
    if (ctx.signal.aborted) return stopped(s);
    const now = s.target.now();
    const r = await stepOnce(s, n, now);
    // The set could not be read: said, paused, tried again.
    if (!r) continue;
    showStep(s, n, now, r);
    const code = finished(s, r.decision) ?? timedOut(s, r.decision);
    if (code !== undefined) return code;
    await holdFrame(s);
    if (ctx.signal.aborted) return stopped(s);
    await pauseBeforeNext(s, r);
  }
}
