// SIGINT/SIGTERM during a `run` (cli.ts aborts ctx.signal with it): the request in flight ends,
// then the set is read back and where it stands is said (functions/cli/interrupt.ts), exit 130 or 143.

import { EXIT } from "../exit-codes.js";
import { reportInterruption } from "../interrupt.js";
import { interruptOf } from "../signals.js";
import type { RunSession } from "./session.js";

/** Says, when a signal comes while a request is in flight, that the run stops once it is answered. */
export function announceStopping(s: RunSession): void {
  const { ctx, ref } = s;
  const onAbort = () => {
    const signal = interruptOf(ctx.signal);
    if (signal && s.inFlight)
      ctx.io.stderr.write(
        `claimstep: ${signal}: stopping ${ref.namespace}/${ref.name} once the request in flight is answered, then saying where it stands (${signal} again exits at once)\n`,
      );
  };
  // Once: ctx.signal lives as long as the command, whose end unsubscribes the signals (cli.ts).
  ctx.signal.addEventListener("abort", onAbort, { once: true });
}

/** Stopped: by a signal (where the set stands is said), or stdout is gone (a closed pipe: a reader that has seen enough). */
export async function stopped({ ctx, target, ref, finalize }: RunSession): Promise<number> {
  const signal = interruptOf(ctx.signal);
  if (!signal) return EXIT.ok;
  return reportInterruption(ctx, target, ref, signal, {
    verb: finalize ? "finalize" : "run",
    ...(finalize ? { finalize: true } : {}),
  });
}
