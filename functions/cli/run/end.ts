// How a `run` ends: nothing left to do (exit 0), Blocked (2), left alone (2: nothing was done,
// which is no success), or still going at --timeout (1); the timeline closed with its totals.

import { nothingLeftToDo } from "../../../core/plan/index.js";
import type { Decision } from "../../../core/types.js";
import { renderDecision } from "../../../core/view/index.js";
import { paintHeadline } from "../color.js";
import { EXIT, exitOf } from "../exit-codes.js";
import { print } from "../io.js";
import { elapsed, type RunSession } from "./session.js";

/** The timeline's last lines (its totals, then the story's lesson); `code` passed through. */
function endTimeline({ ctx, target, timeline, story, last, realStart }: RunSession, code: number): number {
  if (!timeline) return code;
  timeline.end(last, target.now().getTime(), Date.now() - realStart);
  if (story) print(ctx.io, `${story.lesson}.`);
  return code;
}

/** The exit code when `d` ends the run (said); undefined while there is more to do. */
export function finished(s: RunSession, d: Decision): number | undefined {
  const { ctx, live, timeline } = s;
  // Complete with more to do (a re-create follows the rollout) is not the end yet.
  const done = d.phase === "Complete" ? nothingLeftToDo(d) : d.phase === "Blocked" || d.phase === "Idle";
  if (!done) return undefined;
  if (!ctx.json && !live && !timeline) print(ctx.io, `\n${paintHeadline(renderDecision(d), d.phase, ctx.color)}`);
  // Idle (not opted in, or spec.updateStrategy OnDelete): nothing was or will be done; that is no success.
  const code = endTimeline(s, d.phase === "Idle" ? EXIT.blocked : exitOf(d));
  if (d.phase === "Blocked" && !ctx.json)
    ctx.io.stderr.write(`claimstep: ${d.ref.namespace}/${d.ref.name} is blocked (${d.reason}): ${d.message}\n`);
  if (d.phase === "Idle")
    ctx.io.stderr.write(
      `claimstep: ${d.ref.namespace}/${d.ref.name} is left alone (${d.reason}): ${d.message}; nothing was done\n`,
    );
  return code;
}

/** The exit code when --timeout has passed with `d` still not the end (said); undefined before. */
export function timedOut(s: RunSession, d: Decision): number | undefined {
  const { ctx, ref } = s;
  const over = s.timeout !== undefined && elapsed(s) >= s.timeout;
  if (!over) return undefined;
  const code = endTimeline(s, EXIT.error);
  ctx.io.stderr.write(
    `claimstep: ${ref.namespace}/${ref.name} is still ${d.phase} (${d.reason}) after ${ctx.flags.timeout}: ${d.message}\n`,
  );
  return code;
}
