// How `claimstep serve` ends: after a signal, in this order, the playground's clock stopped, the
// server closed (the loop, then the requests and the running tick drained, then the Lease released:
// functions/server/drain.ts), the metrics listener closed, and where each set a step left mid
// re-create stands read back into the log. If it cannot listen, nothing may keep the process alive.
import type { ServeContext, ServedCluster } from "./context.js";
import type { MetricsListener } from "./metrics-listener.js";

export async function shutDown(
  ctx: ServeContext,
  cluster: ServedCluster,
  listening: { server: { close(): Promise<void> }; metricsServer: MetricsListener | undefined },
  signal: string,
): Promise<void> {
  cluster.stopClock();
  await listening.server.close();
  await listening.metricsServer?.close();
  const { reader, writers, now } = cluster.deps;
  await ctx.midRecreate.report({ reader, writers, now, signal, log: ctx.log });
}

/** The server could not listen: stop the playground's clock and the metrics listener (not waited for). */
export function letGo(cluster: ServedCluster, metricsServer: MetricsListener | undefined): void {
  cluster.stopClock();
  void metricsServer?.close();
}
