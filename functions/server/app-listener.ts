// The app's listener (startServer, functions/server.ts): the app, with GET /metrics behind a bearer
// token and its answers counted, on the port and address set; over HTTPS from the TLS files when
// set (the admission webhook needs TLS); the sweep its interval loop. And, once it listens, where
// the status page is.
import type { Hono } from "hono";
import type { ServeContext, ServedCluster } from "./context.js";
import type { Sweeper } from "./sweeper.js";

export function appListener(ctx: ServeContext, app: Pick<Hono<any>, "fetch">, sweep: Sweeper) {
  const { port, host, tls, metrics } = ctx.settings;
  return {
    app: { fetch: ctx.metrics.instrumentFetch(app.fetch, ctx.recorder, metrics.tokens) },
    port,
    hostname: host,
    log: ctx.log,
    ...sweep,
    ...(tls ? { tls } : {}),
  };
}

/** Where the status page is, when it is served (viewer tokens configured). */
export function sayStatusPage(ctx: ServeContext, cluster: ServedCluster, port: number): void {
  const { tls, host } = ctx.settings;
  if (cluster.deps.ui) ctx.log({ msg: "status page", url: `${tls ? "https" : "http"}://${host}:${port}/ui` });
}
