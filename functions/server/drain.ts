// Closing the server: the loop stopped first, then no new connection taken while what is in flight
// (the requests and the running tick) finishes, up to drainMs; the Lease released after the
// running tick; whatever connection is left then closed.
import type { Leadership } from "../lease/elector.js";
import type { IntervalLoop } from "./interval.js";
import type { NodeServer } from "./listen.js";
import type { Log } from "./log.js";

export async function drain(
  server: NodeServer,
  opts: {
    loop: IntervalLoop;
    /** Stop watching the TLS files. */
    stopReload: (() => void) | undefined;
    leader: Leadership | undefined;
    drainMs: number;
    log: Log;
  },
): Promise<void> {
  opts.loop.stop();
  opts.stopReload?.();
  opts.log({ msg: "shutting down" });
  const drained = new Promise<void>((resolve) => server.close(() => resolve()));
  // Keep-alive connections turn idle once their request is answered: close them as they do.
  const closeIdle = () => ("closeIdleConnections" in server ? server.closeIdleConnections() : undefined);
  closeIdle();
  const sweeper = setInterval(closeIdle, 50);
  let deadline: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    Promise.all([drained, opts.loop.running()]),
    new Promise<void>((resolve) => (deadline = setTimeout(resolve, opts.drainMs))),
  ]);
  clearInterval(sweeper);
  clearTimeout(deadline);
  await opts.leader?.stop();
  if ("closeAllConnections" in server) server.closeAllConnections();
  opts.log({ msg: "stopped" });
}
