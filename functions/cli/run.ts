// `run`: step until Complete or Blocked, as a live view, plain lines, JSON lines (YAML
// documents) or a timeline. A set claimstep leaves alone (not opted in) exits 2: a CI job must not
// pass having done nothing.

import { ApiError } from "../../adapters/api-error.js";
import type { StatefulSet } from "../../core/kube/index.js";
import { canonicalTemplate } from "../../core/kube/index.js";
import { nothingLeftToDo } from "../../core/plan/index.js";
import { rawAnnotation } from "../../core/policy/index.js";
import type { Decision, SetRef } from "../../core/types.js";
import { renderDecision } from "../../core/view/index.js";
import { runStep, type StepResult } from "../step.js";
import { Timeline } from "../timeline.js";
import { paintHeadline } from "./color.js";
import type { Context } from "./context.js";
import { parseDuration } from "./durations.js";
import { EXIT, exitOf } from "./exit-codes.js";
import { UsageError } from "./flags.js";
import { reportInterruption } from "./interrupt.js";
import { emit, print } from "./io.js";
import { LiveView } from "./live-view.js";
import { interruptOf } from "./signals.js";
import { outcomeText, plainLine, resultJSON } from "./step-lines.js";
import { refOf, type Target } from "./target.js";

/**
 * The shortest --interval of `run` and `status --watch`: a shorter one would hammer a cluster's
 * API server (and spin on the simulated one). docs/operating.md.
 */
export const MIN_INTERVAL_MS = 1_000;

/** --interval (default `fallback`), refused below MIN_INTERVAL_MS, before anything is read. */
export function intervalOf(ctx: Context, fallback: string): number {
  const given = ctx.flags.interval ?? fallback;
  const ms = parseDuration(given, "interval");
  if (ms < MIN_INTERVAL_MS)
    throw new UsageError(
      `--interval ${JSON.stringify(given)}: give at least 1s (a shorter interval would hammer the API server), e.g. --interval ${fallback}`,
    );
  return ms;
}

/**
 * --timeout runs on whichever clock went further since `started`: the cluster's (the simulated one's
 * virtual clock runs ahead of the wall) or the wall clock (so that it ends the command even when
 * the cluster's clock stands still).
 */
export const elapsedSince = (clusterNow: number, started: number, realStart: number): number =>
  Math.max(clusterNow - started, Date.now() - realStart);

export interface RunOptions {
  /** Re-create the set with its new templates once complete (`claimstep finalize`). */
  finalize?: boolean;
}

/** What a scenario's story is about: the set's live claim templates and the changes asked of them. */
const storyKey = (set: StatefulSet): string => {
  const a = set.metadata.annotations;
  return JSON.stringify([
    (set.spec.volumeClaimTemplates ?? []).map(canonicalTemplate),
    ...(["templates", "removeTemplates", "podTemplate", "strategy"] as const).map((k) => rawAnnotation(a, k) ?? null),
  ]);
};

/** Does the set stand as the scenario set it up (so that its story is the one this run tells)? */
async function storyHolds(target: Target, ref: SetRef): Promise<boolean> {
  if (!target.story?.initial) return true;
  try {
    const [now, initial] = await Promise.all([target.reader.load(ref), target.story.initial()]);
    return !now.setMissing && storyKey(now.statefulSet) === storyKey(initial);
  } catch {
    return false;
  }
}

export async function run(ctx: Context, opts: RunOptions = {}): Promise<number> {
  const interval = intervalOf(ctx, "5s");
  const timeout = ctx.flags.timeout ? parseDuration(ctx.flags.timeout, "timeout") : undefined;
  const target = await ctx.target();
  const ref = refOf(ctx.flags, target, ctx.args[0], opts.finalize ? "finalize" : "run");
  const started = target.now().getTime();
  const realStart = Date.now();
  const timeline = ctx.timeline ? new Timeline((line) => print(ctx.io, line), started) : undefined;
  const live = !ctx.json && !timeline && ctx.io.stdout.isTTY ? new LiveView(ctx.io.stdout) : undefined;
  // A scenario's story (its summary, then its lesson) holds only for a run that starts from the set
  // as the scenario set it up: not once `set` or `apply` changed it, nor for a second run.
  const story = timeline && target.story && (await storyHolds(target, ref)) ? target.story : undefined;
  if (timeline && target.story) {
    print(
      ctx.io,
      story
        ? `claimstep run · ${target.label}: ${story.summary}`
        : `claimstep run · ${target.label}: ${ref.name} as it stands, changed since the scenario set it up (claimstep sim reset --cluster sim:${target.story.name}${ctx.flags["sim-state"] ? ` --sim-state ${ctx.flags["sim-state"]}` : ""} starts it over)`,
    );
    print(ctx.io, `one invocation every ${interval / 1000} ${target.frameMs !== undefined ? "virtual " : ""}seconds\n`);
  }
  let previous = "";
  let last: Decision | undefined;
  const endTimeline = (code: number): number => {
    if (!timeline) return code;
    timeline.end(last, target.now().getTime(), Date.now() - realStart);
    if (story) print(ctx.io, `${story.lesson}.`);
    return code;
  };
  // SIGINT/SIGTERM (cli.ts aborts ctx.signal with it): the request in flight ends, then the set is
  // read back and where it stands is said (functions/cli/interrupt.ts), exit 130 or 143.
  let inFlight = false;
  const onAbort = () => {
    const signal = interruptOf(ctx.signal);
    if (signal && inFlight)
      ctx.io.stderr.write(
        `claimstep: ${signal}: stopping ${ref.namespace}/${ref.name} once the request in flight is answered, then saying where it stands (${signal} again exits at once)\n`,
      );
  };
  // Once: ctx.signal lives as long as the command, whose end unsubscribes the signals (cli.ts).
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  // Stopped: by a signal (say where the set stands), or stdout is gone (a closed pipe: a reader that has seen enough).
  const stopped = async (): Promise<number> => {
    const signal = interruptOf(ctx.signal);
    if (!signal) return EXIT.ok;
    return reportInterruption(ctx, target, ref, signal, {
      verb: opts.finalize ? "finalize" : "run",
      ...(opts.finalize ? { finalize: true } : {}),
    });
  };
  for (let n = 1; ; n++) {
    if (ctx.signal.aborted) return stopped();
    const now = target.now();
    let r: StepResult;
    try {
      inFlight = true;
      r = await runStep({
        reader: target.reader,
        writers: target.writers,
        metrics: target.metrics,
        ref,
        now,
        ...(opts.finalize ? { finalize: true } : {}),
      });
    } catch (err) {
      inFlight = false;
      // The set could not be read (429, 5xx, timeout after the client's retries): nothing was
      // written, so the run goes on; anything else (not found, permissions) ends it.
      if (!(err instanceof ApiError && err.isTransient)) throw err;
      if (timeline) timeline.failed(now.getTime(), n, err);
      else if (ctx.json) emit(ctx, { step: n, at: now.toISOString(), error: err.message }, true);
      else
        ctx.io.stderr.write(
          `claimstep: ${ref.namespace}/${ref.name}: could not load the set (${err.message}); retrying\n`,
        );
      await target.pause(Math.max(interval, (err.retryAfterSeconds ?? 0) * 1000), ctx.signal);
      continue;
    }
    inFlight = false;
    const d = r.decision;
    last = d;
    const elapsed = Math.round((now.getTime() - started) / 1000);
    if (timeline) {
      timeline.step(now.getTime(), n, r);
    } else if (ctx.json) {
      emit(ctx, { step: n, at: now.toISOString(), ...resultJSON(r) }, true);
    } else if (live) {
      live.draw(
        `${paintHeadline(renderDecision(d), d.phase, ctx.color)}\n\nstep ${n} · ${elapsed}s · ${target.label} · ${outcomeText(r)}`,
      );
    } else {
      const key = `${d.phase}|${d.reason}|${d.message}|${r.outcome.kind}`;
      if (key !== previous || r.outcome.kind === "applied")
        print(ctx.io, paintHeadline(plainLine(now, r), d.phase, ctx.color));
      previous = key;
    }
    // Complete with more to do (a re-create follows the rollout) is not the end yet.
    const done = d.phase === "Complete" ? nothingLeftToDo(d) : d.phase === "Blocked" || d.phase === "Idle";
    if (done) {
      if (!ctx.json && !live && !timeline) print(ctx.io, `\n${paintHeadline(renderDecision(d), d.phase, ctx.color)}`);
      // Idle (not opted in, or spec.updateStrategy OnDelete): nothing was or will be done; that is no success.
      const code = endTimeline(d.phase === "Idle" ? EXIT.blocked : exitOf(d));
      if (d.phase === "Blocked" && !ctx.json)
        ctx.io.stderr.write(`claimstep: ${d.ref.namespace}/${d.ref.name} is blocked (${d.reason}): ${d.message}\n`);
      if (d.phase === "Idle")
        ctx.io.stderr.write(
          `claimstep: ${d.ref.namespace}/${d.ref.name} is left alone (${d.reason}): ${d.message}; nothing was done\n`,
        );
      return code;
    }
    if (timeout !== undefined && elapsedSince(target.now().getTime(), started, realStart) >= timeout) {
      const code = endTimeline(EXIT.error);
      ctx.io.stderr.write(
        `claimstep: ${ref.namespace}/${ref.name} is still ${d.phase} (${d.reason}) after ${ctx.flags.timeout}: ${d.message}\n`,
      );
      return code;
    }
    if (live && target.frameMs) await new Promise((resolve) => setTimeout(resolve, target.frameMs));
    if (ctx.signal.aborted) return stopped();
    // The server's Retry-After after a transient failure; else the decision's requeueAfter, with
    // --interval as the default and the cap.
    const wait =
      r.outcome.kind === "retry" && r.outcome.retryAfterSeconds
        ? r.outcome.retryAfterSeconds * 1000
        : d.requeueAfter !== undefined
          ? Math.min(d.requeueAfter * 1000, interval)
          : interval;
    // Never less than the floor (a requeueAfter of 0 would spin), never past the timeout.
    const left =
      timeout === undefined
        ? Infinity
        : Math.max(0, timeout - elapsedSince(target.now().getTime(), started, realStart));
    await target.pause(Math.min(Math.max(wait, MIN_INTERVAL_MS), Math.max(left, 1)), ctx.signal);
  }
}
