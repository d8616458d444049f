// SIGTERM and SIGINT: `claimstep serve` stops gracefully on the first (exit 0), the handlers then
// removed, so that a second one is Node's own (the process ends at once).
import type { Log } from "./log.js";

/** The first SIGTERM or SIGINT from now, logged. Installed at once: a signal before the server listens is not lost. */
export function nextSignal(log: Log): Promise<string> {
  return new Promise<string>((resolve) => {
    const stop = (signal: string) => {
      log({ msg: "signal", signal });
      process.off("SIGTERM", onTerm);
      process.off("SIGINT", onInt);
      resolve(signal);
    };
    const onTerm = () => stop("SIGTERM");
    const onInt = () => stop("SIGINT");
    process.on("SIGTERM", onTerm);
    process.on("SIGINT", onInt);
  });
}
