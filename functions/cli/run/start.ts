// The start of a `run`: its flags read (refused before anything is read), its target connected,
// its clocks started, the way it shows its steps chosen.
import { Timeline } from "../../timeline.js";
import type { Context } from "../context.js";
import { parseDuration } from "../durations.js";
import { print } from "../io.js";
import { LiveView } from "../live-view.js";
import { refOf } from "../target.js";
import { intervalOf } from "./clock.js";
import type { RunSession } from "./session.js";
import { storyHolds } from "./story.js";

/** A run of `ctx`, nothing stepped yet; `finalize`: `claimstep finalize`. */
export async function startRun(ctx: Context, finalize: boolean): Promise<RunSession> {
  const interval = intervalOf(ctx, "5s");
  const timeout = ctx.flags.timeout ? parseDuration(ctx.flags.timeout, "timeout") : undefined;
  const target = await ctx.target();
  const ref = refOf(ctx.flags, target, ctx.args[0], finalize ? "finalize" : "run");
  const started = target.now().getTime();
  const realStart = Date.now();
  const timeline = ctx.timeline ? new Timeline((line) => print(ctx.io, line), started) : undefined;
  const live = !ctx.json && !timeline && ctx.io.stdout.isTTY ? new LiveView(ctx.io.stdout) : undefined;
  // A scenario's story (its summary, then its lesson) holds only for a run that starts from the set
  // as the scenario set it up: not once `set` or `apply` changed it, nor for a second run.
  const story = timeline && target.story && (await storyHolds(target, ref)) ? target.story : undefined;
  return {
    ctx,
    finalize,
    target,
    ref,
    interval,
    timeout,
    started,
    realStart,
    timeline,
    live,
    story,
    last: undefined,
    previous: "",
    inFlight: false,
  };
}
