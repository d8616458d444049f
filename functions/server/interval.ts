// The interval loop: a tick every intervalMs, never two at once, and only while this replica holds
// the Lease when there is one (every replica serves requests either way).
import type { Leadership } from "../lease/elector.js";
import type { Log } from "./log.js";

export interface IntervalLoop {
  /** No tick starts after this; the running one goes on. */
  stop(): void;
  /** The tick running now, if any. */
  running(): Promise<unknown> | undefined;
}

export function intervalLoop(opts: {
  intervalMs?: number | undefined;
  tick?: (() => Promise<unknown>) | undefined;
  leader?: Leadership | undefined;
  log: Log;
}): IntervalLoop {
  let running: Promise<unknown> | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  if (opts.intervalMs && opts.tick) {
    const tick = opts.tick;
    timer = setInterval(() => {
      if (running) return; // the previous pass is still going: skip this one
      if (opts.leader && !opts.leader.holds()) return; // another replica sweeps
      running = tick()
        .catch((err) => opts.log({ msg: "interval pass failed", error: (err as Error).message }))
        .finally(() => {
          running = undefined;
        });
    }, opts.intervalMs);
  }
  return {
    stop: () => {
      if (timer) clearInterval(timer);
    },
    running: () => running,
  };
}
