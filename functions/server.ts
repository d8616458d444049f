// The Node server: the same Hono app on @hono/node-server, with kubeconfig or in-cluster auth
// (or KUBE_API_SERVER + KUBE_TOKEN like the Worker, or the simulated cluster), an optional
// interval loop that steps every opted-in set, and a graceful shutdown on SIGTERM/SIGINT.
// The two entry points only wire the parts in functions/server/: startServer listens (listen.ts,
// limits.ts), loops (interval.ts) and drains (drain.ts); serveFromEnv reads the settings and builds
// what the parts share (settings.ts, context.ts), the cluster (cluster.ts, playground.ts,
// kube-cluster.ts), the sweep and its Lease (sweeper.ts), the listeners (metrics-listener.ts,
// app-listener.ts) and stops on a signal (signals.ts, shutdown.ts), in this order.

import type { AddressInfo } from "node:net";
import type { Server as TlsServer } from "node:tls";
import type { Hono } from "hono";
import { createApp } from "./app.js";
import { readKeyPair, reloadTls, type TlsFiles } from "./http/tls-files.js";
import type { Leadership } from "./lease/elector.js";
import { appListener, sayStatusPage } from "./server/app-listener.js";
import { servedCluster } from "./server/cluster.js";
import { serveContext } from "./server/context.js";
import { drain } from "./server/drain.js";
import { intervalLoop } from "./server/interval.js";
import { type ServerLimits, serverLimits, sharedFetch } from "./server/limits.js";
import { DEFAULT_HOST, listen } from "./server/listen.js";
import { jsonLog, type Log } from "./server/log.js";
import { metricsListener } from "./server/metrics-listener.js";
import type { ServeFromEnvOptions } from "./server/settings.js";
import { letGo, shutDown } from "./server/shutdown.js";
import { nextSignal } from "./server/signals.js";
import { sweeper } from "./server/sweeper.js";

export { SERVER_LIMITS, type ServerLimits, SHARED_ROUTES } from "./server/limits.js";

export interface ServerOptions {
  /** The app (its fetch: functions/metrics.ts wraps the app's with GET /metrics). */
  app: Pick<Hono<any>, "fetch">;
  port: number;
  /** The address to bind; default 127.0.0.1 (this machine only). */
  hostname?: string;
  /** Run `tick` every `intervalMs` (never two at once). */
  intervalMs?: number;
  tick?: () => Promise<unknown>;
  log?: Log;
  /** How long shutdown waits for in-flight requests and the running tick. */
  drainMs?: number;
  /**
   * Run `tick` only while this replica holds the Lease (CLAIMSTEP_LEASE=true): started with the
   * server, stopped (the Lease released) on close, after the running tick. Requests are served
   * either way.
   */
  leader?: Leadership;
  /** Serve HTTPS from these files, reloaded when they change (the admission webhook needs TLS). */
  tls?: TlsFiles;
  /** The connection limits (tests shorten them); default SERVER_LIMITS. */
  limits?: Partial<ServerLimits>;
}

export interface RunningServer {
  port: number;
  /** Stop the loop, stop accepting, finish what is in flight (up to drainMs), then close. */
  close(): Promise<void>;
}

/** Listen (functions/server/listen.ts), then start the Lease and the interval loop; close drains (drain.ts). */
export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const log = opts.log ?? jsonLog;
  const host = opts.hostname ?? DEFAULT_HOST;
  const pair = opts.tls ? readKeyPair(opts.tls) : undefined;
  const limits = serverLimits(opts.limits);
  const fetch = sharedFetch(opts.app.fetch, limits.routeConnections);
  const server = await listen({ fetch, port: opts.port, host, limits, pair });
  const port = (server.address() as AddressInfo).port;
  const stopReload = pair && opts.tls ? reloadTls(server as unknown as TlsServer, opts.tls, pair, log) : undefined;
  log({ msg: "listening", host, port, ...(pair ? { tls: { subject: pair.subject, notAfter: pair.notAfter } } : {}) });
  opts.leader?.start();
  const loop = intervalLoop({ intervalMs: opts.intervalMs, tick: opts.tick, leader: opts.leader, log });
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= drain(server, { loop, stopReload, leader: opts.leader, drainMs: opts.drainMs ?? 10_000, log }));
  return { port, close };
}

/** `claimstep serve` and the container's entry point: runs until SIGTERM/SIGINT, then exits 0. */
export async function serveFromEnv(opts: ServeFromEnvOptions): Promise<number> {
  // The recorder asks the steps' clock, the cluster's, only once the cluster is built.
  const ctx = await serveContext(opts, () => cluster.deps.now());
  const cluster = await servedCluster(ctx);
  const app = createApp(cluster.deps);
  const sweep = await sweeper(ctx, cluster);
  // The signal handlers go in before the server says it listens: a SIGTERM right after
  // "listening" must stop it gracefully (exit 0), never kill it.
  const stopped = nextSignal(ctx.log);
  const metricsServer = await metricsListener(ctx);
  const server = await startServer(appListener(ctx, app, sweep)).catch((err: unknown) => {
    letGo(cluster, metricsServer);
    throw err;
  });
  sayStatusPage(ctx, cluster, server.port);
  const signal = await stopped;
  await shutDown(ctx, cluster, { server, metricsServer }, signal);
  return 0;
}
