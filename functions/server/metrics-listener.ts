// The metrics' own listener (docs/operating.md "Metrics"): GET /metrics without a token on
// CLAIMSTEP_METRICS_ADDR, for a Prometheus inside the cluster's network.
import type { ServeContext } from "./context.js";

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

/** Listening on CLAIMSTEP_METRICS_ADDR, if set, and saying where. */
export async function metricsListener(ctx: ServeContext): Promise<MetricsListener | undefined> {
  const { addr } = ctx.settings.metrics;
  if (!addr) return undefined;
  const server = await ctx.metrics.serveMetrics({ recorder: ctx.recorder, ...addr });
  ctx.log({ msg: "metrics", url: `http://${addr.host}:${server.port}/metrics` });
  return server;
}
