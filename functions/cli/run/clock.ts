// The clocks of `run` and `status --watch`: --interval between steps and --timeout over them.
import type { Context } from "../context.js";
import { parseDuration } from "../durations.js";
import { UsageError } from "../flags.js";

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
