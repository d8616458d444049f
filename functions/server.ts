// The Node server: the same Hono app on @hono/node-server, with kubeconfig or in-cluster auth
// (or KUBE_API_SERVER + KUBE_TOKEN like the Worker, or the simulated cluster), an optional
// interval loop that steps every opted-in set, and a graceful shutdown on SIGTERM/SIGINT.

import type { IncomingMessage } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Server as TlsServer } from "node:tls";
import { serve } from "@hono/node-server";
import type { Hono } from "hono";
import { KubeClient, type KubeClientOptions } from "../adapters/kube/client.js";
import { type AppDeps, createApp } from "./app.js";
import { RecentIds } from "./auth.js";
import { RefusalBackoff } from "./backoff.js";
import { type AppConfig, budgetChargeOf, ConfigError, configFromEnv } from "./config.js";
import { readKeyPair, reloadTls, type TlsFiles, tlsFilesFromEnv } from "./http/tls-files.js";
import type { Leadership } from "./lease/elector.js";
import { MidRecreate } from "./mid-recreate.js";
import { countingMetrics, recordedStep } from "./recorded-step.js";
import { ADMISSION_PATH } from "./routes/admission.js";
import type { StepOptions } from "./step.js";
import { signalledReader, stopOnAbort, sweep } from "./sweep.js";
import { wire } from "./wiring.js";

type Log = (entry: Record<string, unknown>) => void;
const jsonLog: Log = (entry) => console.log(JSON.stringify({ time: new Date().toISOString(), ...entry }));

/**
 * Where `claimstep serve` listens unless told (--host, CLAIMSTEP_HOST): this machine only. The
 * container image sets CLAIMSTEP_HOST=0.0.0.0, and deployment.yaml passes --host 0.0.0.0, so that
 * the pod's port is reachable.
 */
export const DEFAULT_HOST = "127.0.0.1";

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

/** What one client may hold of the server (docs/deploying.md, "The Node server"). */
export interface ServerLimits {
  /** A request's headers must arrive within this (from its first byte), else 408 and the connection is closed. */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this, else 408 and close. Not the answer: a long one (the status page's stream) is not cut. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** Connections open at once; more are dropped as they connect. */
  maxConnections: number;
  /** How often the two timeouts are checked (Node's connectionsCheckingInterval; its default is 30 s). */
  checkIntervalMs: number;
  /**
   * Requests whose body is still arriving, at once, on each of SHARED_ROUTES: the routes a client
   * reaches without a credential checked from its headers. A request holds its place from its headers
   * until its body is in (or its answer is produced, whichever comes first: a step it then runs holds
   * none). More are answered 503 (Retry-After 1, the connection closed) before any of their body is
   * read, so that the rest of maxConnections stays for /healthz (the kubelet's probes) and the bearer
   * routes.
   */
  routeConnections: number;
}

/**
 * The routes that take their share of the connections (ServerLimits.routeConnections each): the
 * admission webhook (called by the API server, unauthenticated by design), the forge webhooks (signed
 * over the body, and facing the internet in GitOps mode) and the relay (signed over the body).
 */
export const SHARED_ROUTES: readonly string[] = [
  ADMISSION_PATH,
  "/v1/webhooks/github",
  "/v1/webhooks/gitlab",
  "/v1/relay",
];

/** The one of SHARED_ROUTES a path is (ADMISSION_PATH also with /by-namespace), if any. */
const sharedRouteOf = (path: string): string | undefined =>
  SHARED_ROUTES.find((r) => path === r || path.startsWith(`${r}/`));

/**
 * `fetch`, with each of SHARED_ROUTES receiving at most `share` bodies at once; beyond it 503 and
 * the connection closed, its body unread (@hono/node-server drains or drops what is left). A place
 * is given back when the request's body has ended (Node's IncomingMessage, in @hono/node-server's
 * env) or its answer is produced.
 */
function sharedFetch<E>(
  fetch: (request: Request, env: E) => Response | Promise<Response>,
  share: number,
): (request: Request, env: E) => Promise<Response> {
  const receiving = new Map<string, number>();
  return async (request, env) => {
    const route = sharedRouteOf(new URL(request.url).pathname);
    if (route === undefined) return fetch(request, env);
    const held = receiving.get(route) ?? 0;
    if (held >= share)
      return Response.json(
        {
          error: "Unavailable",
          message: `claimstep receives at most ${share} request${share === 1 ? "" : "s"} at once on ${route}: retry`,
        },
        { status: 503, headers: { "Retry-After": "1", Connection: "close" } },
      );
    receiving.set(route, held + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      receiving.set(route, (receiving.get(route) ?? 1) - 1);
    };
    const incoming = (env as { incoming?: IncomingMessage } | undefined)?.incoming;
    if (incoming?.readableEnded) release();
    else incoming?.once("end", release);
    try {
      return await fetch(request, env);
    } finally {
      release();
      incoming?.off("end", release);
    }
  };
}

/**
 * Node's defaults let a request take 300 s and its headers 60 s, and accept any number of
 * connections. A request to claimstep is small (a step, an event, a webhook: under the 256 KiB
 * body limit; an AdmissionReview under 8 MiB, from inside the cluster), so 30 s is ample; the app
 * gives a body BODY_DEADLINE_MS (5 s, functions/http/body.ts). Each of the four SHARED_ROUTES may
 * receive 32 bodies at once: 128 of the 512 connections in all, 384 kept for /healthz and the
 * bearer routes.
 */
export const SERVER_LIMITS: ServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 512,
  checkIntervalMs: 1_000,
  routeConnections: 32,
};

/** The server could not listen: the message names the fix. */
export class ListenError extends Error {
  override readonly name = "ListenError";
}

export interface RunningServer {
  port: number;
  /** Stop the loop, stop accepting, finish what is in flight (up to drainMs), then close. */
  close(): Promise<void>;
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const log = opts.log ?? jsonLog;
  const host = opts.hostname ?? DEFAULT_HOST;
  const pair = opts.tls ? readKeyPair(opts.tls) : undefined;
  const limits = { ...SERVER_LIMITS, ...opts.limits };
  if (limits.headersTimeoutMs > limits.requestTimeoutMs)
    throw new RangeError("startServer: headersTimeoutMs must not exceed requestTimeoutMs");
  const fetch = sharedFetch(opts.app.fetch, limits.routeConnections);
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    // A port in use (or an address not of this machine) is one line naming the fix, not an unhandled 'error' event.
    const failed = (err: NodeJS.ErrnoException) => {
      const where = `${host}:${opts.port}`;
      if (err.code === "EADDRINUSE")
        reject(
          new ListenError(
            `cannot listen on ${where}: the port is in use (EADDRINUSE); stop what listens there or choose another with --port (or PORT)`,
          ),
        );
      else if (err.code === "EADDRNOTAVAIL")
        reject(
          new ListenError(
            `cannot listen on ${where}: no such address on this machine (EADDRNOTAVAIL); choose another with --host (or CLAIMSTEP_HOST)`,
          ),
        );
      else if (err.code === "EACCES")
        reject(
          new ListenError(
            `cannot listen on ${where}: permission denied (EACCES); ports below 1024 need privileges, choose another with --port (or PORT)`,
          ),
        );
      else reject(new ListenError(`cannot listen on ${where}: ${err.message}`));
    };
    // Node's http options (https.createServer takes them too): the timeouts are checked every checkIntervalMs.
    const timeouts = {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    };
    const serverOptions = pair ? { ...timeouts, cert: pair.cert, key: pair.key } : timeouts;
    const s = serve(
      {
        fetch,
        port: opts.port,
        hostname: host,
        overrideGlobalObjects: false,
        serverOptions,
        ...(pair ? { createServer: createHttpsServer } : {}),
      },
      () => {
        s.off("error", failed);
        resolve(s);
      },
    );
    s.once("error", failed);
    // Set before the first connection (listen is asynchronous): beyond it, a new connection is dropped.
    s.maxConnections = limits.maxConnections;
    if ("keepAliveTimeout" in s) s.keepAliveTimeout = limits.keepAliveTimeoutMs;
  });
  const port = (server.address() as AddressInfo).port;
  const stopReload = pair && opts.tls ? reloadTls(server as unknown as TlsServer, opts.tls, pair, log) : undefined;
  log({
    msg: "listening",
    host: opts.hostname ?? DEFAULT_HOST,
    port,
    ...(pair ? { tls: { subject: pair.subject, notAfter: pair.notAfter } } : {}),
  });
  opts.leader?.start();

  let running: Promise<unknown> | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  if (opts.intervalMs && opts.tick) {
    const tick = opts.tick;
    timer = setInterval(() => {
      if (running) return; // the previous pass is still going: skip this one
      if (opts.leader && !opts.leader.holds()) return; // another replica sweeps
      running = tick()
        .catch((err) => log({ msg: "interval pass failed", error: (err as Error).message }))
        .finally(() => {
          running = undefined;
        });
    }, opts.intervalMs);
  }

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      if (timer) clearInterval(timer);
      stopReload?.();
      log({ msg: "shutting down" });
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections turn idle once their request is answered: close them as they do.
      const closeIdle = () => ("closeIdleConnections" in server ? server.closeIdleConnections() : undefined);
      closeIdle();
      const sweeper = setInterval(closeIdle, 50);
      let deadline: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all([drained, running]),
        new Promise<void>((resolve) => (deadline = setTimeout(resolve, opts.drainMs ?? 10_000))),
      ]);
      clearInterval(sweeper);
      clearTimeout(deadline);
      await opts.leader?.stop();
      if ("closeAllConnections" in server) server.closeAllConnections();
      log({ msg: "stopped" });
    })());
  return { port, close };
}

export interface ServeFromEnvOptions {
  env: Record<string, string | undefined>;
  port?: number;
  /** The address to bind (--host); else CLAIMSTEP_HOST, else 127.0.0.1. */
  host?: string;
  kubeconfig?: string;
  context?: string;
  /** `sim[:scenario]`: serve the simulated cluster, its virtual time following the wall clock. */
  cluster?: string;
  log?: Log;
}

/** The API server client: KUBE_API_SERVER + KUBE_TOKEN when set, else kubeconfig / in-cluster; each request told to `onRequest` (the metrics). */
async function kubeClientFor(
  config: AppConfig,
  opts: ServeFromEnvOptions,
  onRequest: KubeClientOptions["onRequest"],
): Promise<KubeClient> {
  if (config.kube) {
    const { server, token, headers } = config.kube;
    return new KubeClient({
      server,
      headers: { ...headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      onRequest,
    });
  }
  const { nodeKubeTarget } = await import("../adapters/kube-node/kubeconfig.js");
  return nodeKubeTarget(
    { ...(opts.kubeconfig ? { kubeconfig: opts.kubeconfig } : {}), ...(opts.context ? { context: opts.context } : {}) },
    { onRequest },
  ).client;
}

/** `claimstep serve` and the container's entry point: runs until SIGTERM/SIGINT, then exits 0. */
export async function serveFromEnv(opts: ServeFromEnvOptions): Promise<number> {
  const log = opts.log ?? jsonLog;
  const config = configFromEnv(opts.env);
  // A test's shorter R3 charge (CLAIMSTEP_BUDGET_CHARGE_SECONDS), read here as the CLI reads it:
  // Node only, so the Worker's bundle carries none of it.
  const charge = budgetChargeOf(opts.env);
  if (charge.problems.length) throw new ConfigError(charge.problems);
  const tls = tlsFilesFromEnv(opts.env);
  const replay = new RecentIds();
  const port = opts.port ?? Number(opts.env.PORT ?? 8080);
  // The metrics (docs/operating.md "Metrics"): GET /metrics behind a bearer token, and on CLAIMSTEP_METRICS_ADDR.
  const { instrumentFetch, metricsConfigFromEnv, serveMetrics } = await import("./metrics.js");
  const { PromRecorder } = await import("../adapters/metrics-node/registry.js");
  const metricsConfig = metricsConfigFromEnv(opts.env, config.bearerTokens);
  const recorder = new PromRecorder({ now: () => deps.now().getTime() });
  const onRequest = recorder.apiRequest;
  // The sets a step left mid re-create are named in the log when the server stops (mid-recreate.ts).
  const midRecreate = new MidRecreate();
  const recorded = midRecreate.watch((o: StepOptions) => recordedStep({ ...o, recorder }));
  let deps: AppDeps;
  let listOptedIn: (ns: string | undefined) => Promise<{ namespace: string; name: string }[]>;
  /** Where the sweeper's Lease is (CLAIMSTEP_LEASE=true). */
  let leaseClient: KubeClient;
  let wallClock: ReturnType<typeof setInterval> | undefined;

  if (opts.cluster) {
    // The playground: the scenario's simulated cluster, its virtual time following the wall clock.
    const { scenarioName } = await import("../adapters/sim/scenarios.js");
    const { SCENARIOS } = await import("./scenarios.js");
    const { listOptedInSets } = await import("../adapters/kube/reader.js");
    const { uiSource } = await import("./ui/source.js");
    const sim = await SCENARIOS[scenarioName(opts.cluster)]!.build(1);
    // The production reader and writers over a client of the cluster's that counts its requests.
    const { KubeReader } = await import("../adapters/kube/reader.js");
    const { kubeWriters } = await import("../adapters/kube/writer.js");
    const client = sim.newClient({ onRequest });
    deps = {
      reader: new KubeReader(client),
      writers: kubeWriters(client, { reportingInstance: "claimstep-sim" }),
      runStep: recorded,
      auth: { bearerTokens: config.bearerTokens, webhookSecrets: config.webhookSecrets, replay },
      now: () => sim.now(),
      namespaces: config.namespaces,
      bodyLimitBytes: config.bodyLimitBytes,
      log,
      ...(config.viewers?.length
        ? { ui: { viewers: config.viewers, source: uiSource(sim.client), clock: "simulated" as const } }
        : {}),
      // Autogrow reads the simulated cluster's own Prometheus (CLAIMSTEP_PROMETHEUS_URL is not used).
      metrics: countingMetrics(sim.metrics, recorder),
    };
    listOptedIn = (ns) => listOptedInSets(client, ns);
    leaseClient = sim.client;
    wallClock = setInterval(() => sim.advance(1000), 1000);
  } else {
    const client = await kubeClientFor(config, opts, onRequest);
    const wiring = wire({
      client,
      config,
      now: () => new Date(),
      replay,
      log,
      instance: opts.env.HOSTNAME ?? "claimstep",
      runStep: recorded,
      wrapMetrics: (m) => countingMetrics(m, recorder),
    });
    deps = wiring.deps;
    listOptedIn = (ns) => wiring.listOptedIn(ns);
    leaseClient = client;
  }
  if (charge.seconds && deps.writers.pods) Object.assign(deps.writers.pods, { budgetChargeSeconds: charge.seconds });

  const app = createApp(deps);
  // A set the sweep no longer lists (deleted, opted out) loses its series.
  const listed = listOptedIn;
  listOptedIn = async (ns) => {
    const refs = await listed(ns);
    recorder.setsListed(ns, refs);
    return refs;
  };
  let tick = 0;
  // A set whose write the server refused is left alone for a growing pause (core/plan/backoff.ts), on the steps' clock.
  const backoff = new RefusalBackoff(() => deps.now().getTime());
  // The playground steps its sets by itself (every 2 s) unless CLAIMSTEP_INTERVAL_SECONDS says otherwise.
  const intervalSeconds = opts.cluster && !opts.env.CLAIMSTEP_INTERVAL_SECONDS ? 2 : config.intervalSeconds;
  // Several replicas: only the holder of the Lease sweeps; every replica serves requests.
  let leader: Leadership | undefined;
  if (config.lease) {
    const { kubeElector, leaseIdentity } = await import("./lease/index.js");
    leader = kubeElector({
      client: leaseClient,
      config: config.lease,
      identity: leaseIdentity(opts.env.HOSTNAME),
      log,
    });
  }
  // claimstep_lease_holder: 1 while this replica sweeps (holds the Lease, or sweeps alone).
  recorder.sweeps(() => (leader ? leader.holds() : intervalSeconds > 0));
  // The signal handlers go in before the server says it listens: a SIGTERM right after
  // "listening" must stop it gracefully (exit 0), never kill it.
  const stopped = new Promise<string>((resolve) => {
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
  const metricsServer = metricsConfig.addr ? await serveMetrics({ recorder, ...metricsConfig.addr }) : undefined;
  if (metricsServer) log({ msg: "metrics", url: `http://${metricsConfig.addr!.host}:${metricsServer.port}/metrics` });
  const server = await startServer({
    app: { fetch: instrumentFetch(app.fetch, recorder, metricsConfig.tokens) },
    port,
    hostname: opts.host ?? (opts.env.CLAIMSTEP_HOST || DEFAULT_HOST),
    log,
    ...(leader ? { leader } : {}),
    ...(tls ? { tls } : {}),
    ...(intervalSeconds > 0
      ? {
          intervalMs: intervalSeconds * 1000,
          tick: () =>
            sweep({
              listOptedIn,
              namespaces: config.namespaces,
              // A lost Lease aborts the signal: the running step stops before its next write.
              step: (ref, signal) =>
                recorded({
                  reader: signal ? signalledReader(deps.reader, signal) : deps.reader,
                  writers: signal ? stopOnAbort(deps.writers, signal) : deps.writers,
                  metrics: deps.metrics,
                  ref,
                  now: deps.now(),
                }),
              tick: tick++,
              log,
              backoff,
              ...(leader ? { proceed: () => leader!.holds(), signal: leader.signal() } : {}),
            }),
        }
      : {}),
  }).catch((err: unknown) => {
    // Nothing may keep the process alive once it cannot listen.
    if (wallClock) clearInterval(wallClock);
    void metricsServer?.close();
    throw err;
  });
  if (deps.ui)
    log({
      msg: "status page",
      url: `${tls ? "https" : "http"}://${opts.host ?? (opts.env.CLAIMSTEP_HOST || DEFAULT_HOST)}:${server.port}/ui`,
    });

  const signal = await stopped;
  if (wallClock) clearInterval(wallClock);
  await server.close();
  await metricsServer?.close();
  // After the running tick: where each set a step left mid re-create stands, read back.
  await midRecreate.report({ reader: deps.reader, writers: deps.writers, now: deps.now, signal, log });
  return 0;
}
