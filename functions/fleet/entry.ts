// The Worker's handlers when it serves several clusters or runs in fleet mode (functions/worker.ts
// calls them): the routes of every cluster (/v1/clusters/:cluster/… and the default cluster's
// /v1/…) and status pages (/ui/clusters/:cluster/… and the default cluster's /ui/…), the cron's
// fan-out, the queue's consumer. Worker-safe (no Node built-ins).

import { ApiError } from "../../adapters/api-error.js";
import { listOptedInSets } from "../../adapters/kube/reader.js";
import { createApp } from "../app.js";
import { bearerMatches, RecentIds } from "../auth.js";
import { eventSink, observing } from "../observe.js";
import { type SweepReport, sweep } from "../sweep.js";
import { wire } from "../wiring.js";
import { type Cluster, clusterNamed } from "./clusters.js";
import { clusterClient, countingFetch, type FleetContext, fleetBindings, fleetContext } from "./context.js";
import {
  clusterGate,
  consume,
  durableReplay,
  type FanOutReport,
  FORGE_REPLAY_SHARDS,
  fanOut,
  remoteStep,
} from "./dispatch.js";
import { setObjectName } from "./routing.js";
import { type MessageBatch, stubOf } from "./runtime.js";
import { isClusterFailure } from "./schedule.js";

type Env = Record<string, unknown>;
const log = (entry: Record<string, unknown>) => console.log(JSON.stringify(entry));
const problem = (status: number, error: string, message: string) => Response.json({ error, message }, { status });

// Per isolate, as the single-cluster Worker's: used only without the fleet bindings.
const isolateReplay = new RecentIds();
const apps = new WeakMap<object, Map<string, ReturnType<typeof createApp>>>();

function appFor(env: Env, ctx: FleetContext, cluster: Cluster) {
  let byCluster = apps.get(env);
  if (!byCluster) apps.set(env, (byCluster = new Map()));
  let app = byCluster.get(cluster.name);
  if (!app) {
    const bindings = fleetBindings(env);
    const f = (url: string, init?: RequestInit) => fetch(url, init);
    // Each API request, step and failed Prometheus query an event (docs/observability-workers.md).
    const hooks = observing(eventSink(env), cluster.name);
    const wiring = wire({
      client: clusterClient(env, cluster, f, { onRequest: hooks.onRequest }),
      config: { ...ctx.config, namespaces: cluster.namespaces },
      now: () => new Date(),
      replay: bindings ? durableReplay(bindings.LEDGER) : isolateReplay,
      // Forge deliveries: shared by every isolate too, in shards of their own (not the relay's).
      ...(bindings ? { forgeReplay: durableReplay(bindings.LEDGER, FORGE_REPLAY_SHARDS) } : {}),
      log: (e) => log({ cluster: cluster.name, ...e }),
      fetch: f,
      instance: "claimstep-worker",
      runStep: hooks.runStep,
      wrapMetrics: hooks.wrapMetrics,
      ...(bindings ? { step: (ref) => remoteStep(bindings.SETS, cluster.name, ref, "http") } : {}),
    });
    const { deps } = wiring;
    const base = cluster.name === ctx.fleet.defaultCluster ? "/ui" : `/ui/clusters/${cluster.name}`;
    if (deps.ui)
      deps.ui = { ...deps.ui, at: { cluster: cluster.name, base, clusters: ctx.fleet.clusters.map((c) => c.name) } };
    app = createApp(deps);
    byCluster.set(cluster.name, app);
  }
  return app;
}

const CLUSTER_ROUTE = /^\/v1\/clusters\/([^/]+)(\/.*)?$/;
const UI_ROUTE = /^\/ui\/clusters\/([^/]+)(\/.*)?$/;
const STATE_ROUTE = /^\/statefulsets\/([^/]+)\/([^/]+)\/state$/;

export async function fleetFetch(request: Request, env: Env, execution: unknown): Promise<Response> {
  let ctx: FleetContext;
  try {
    ctx = fleetContext(env);
  } catch (err) {
    log({ msg: "configuration error", error: (err as Error).message });
    return problem(500, "Misconfigured", "the Worker's configuration is invalid; see its log");
  }
  const url = new URL(request.url);
  const fallback = ctx.fleet.clusters.find((c) => c.name === ctx.fleet.defaultCluster)!;
  // A cluster's status pages: its own app (the default cluster's at /ui; an unknown one: its 404 page).
  const ui = UI_ROUTE.exec(url.pathname);
  const page = ui && ctx.fleet.clusters.find((c) => c.name === ui[1]);
  if (page && page !== fallback) return appFor(env, ctx, page).fetch(request, env, execution as never);
  if (page) (url.pathname = `/ui${ui![2] ?? ""}`), (request = new Request(url, request));
  const m = CLUSTER_ROUTE.exec(url.pathname);
  if (!m) return appFor(env, ctx, fallback).fetch(request, env, execution as never);
  let name: string;
  try {
    name = decodeURIComponent(m[1]!);
  } catch {
    // A malformed escape (%E0%A4%A): URIError. Cluster names are DNS labels; say so, do not 500.
    return problem(
      400,
      "BadRequest",
      `the cluster segment ${JSON.stringify(m[1]!.slice(0, 80))} is not valid percent-encoding: name a configured cluster, e.g. /v1/clusters/<name>/…`,
    );
  }
  const authorization = request.headers.get("authorization") ?? undefined;
  const found = clusterNamed(ctx.fleet, name, { listNames: false });
  if ("error" in found) {
    // The configured names only to a caller holding an API or viewer token.
    const listNames = await bearerMatches(authorization, [
      ...ctx.config.bearerTokens,
      ...(ctx.config.viewers ?? []).map((v) => v.token),
    ]);
    return problem(
      404,
      "NotFound",
      listNames ? (clusterNamed(ctx.fleet, name) as { error: string }).error : found.error,
    );
  }
  const rest = m[2] ?? "/";
  const state = STATE_ROUTE.exec(rest);
  if (state && request.method === "GET") {
    // The set object's last decision and next alarm: for API and viewer tokens.
    const tokens = [
      ...ctx.config.bearerTokens,
      ...(ctx.config.viewers ?? [])
        .filter((v) => !v.namespaces || v.namespaces.includes(state[1]!))
        .map((v) => v.token),
    ];
    if (!(await bearerMatches(authorization, tokens)))
      return problem(401, "Unauthorized", "authenticate with `Authorization: Bearer <token>` (an API or viewer token)");
    const bindings = fleetBindings(env);
    if (!bindings)
      return problem(
        404,
        "NotFound",
        "set state is kept in fleet mode only: bind SETS, LEDGER and STEP_QUEUE (wrangler.toml) and leave CLAIMSTEP_DISPATCH unset",
      );
    return stubOf(bindings.SETS, setObjectName(found.cluster.name, { namespace: state[1]!, name: state[2]! })).fetch(
      "https://do/state",
    );
  }
  url.pathname = `/v1${rest}`;
  return appFor(env, ctx, found.cluster).fetch(new Request(url, request), env, execution as never);
}

/** Cron: fan out one message per opted-in set (fleet mode), or sweep every cluster in turn (no bindings). */
export async function fleetScheduled(
  controller: { scheduledTime: number; cron: string },
  env: Env,
): Promise<FanOutReport | SweepReport[]> {
  const { config, fleet } = fleetContext(env);
  const counter = countingFetch();
  const sink = eventSink(env);
  const tick = Math.floor(controller.scheduledTime / (config.tickSeconds * 1000));
  const bindings = fleetBindings(env);
  if (!bindings) {
    const reports: SweepReport[] = [];
    for (const cluster of fleet.clusters) {
      const hooks = observing(sink, cluster.name);
      const client = clusterClient(env, cluster, counter.fetch, { onRequest: hooks.onRequest });
      const wiring = wire({
        client,
        config: { ...config, namespaces: cluster.namespaces },
        now: () => new Date(),
        replay: isolateReplay,
        log,
        fetch: counter.fetch,
        instance: "claimstep-worker",
        ...hooks,
      });
      reports.push(
        await sweep({
          listOptedIn: (ns) => wiring.listOptedIn(ns),
          namespaces: cluster.namespaces,
          step: (ref) =>
            hooks.runStep({
              reader: wiring.deps.reader,
              writers: wiring.deps.writers,
              metrics: wiring.deps.metrics,
              ref,
              now: new Date(),
            }),
          tick,
          budget: { limit: config.subrequestBudget, perStep: config.subrequestsPerStep, used: counter.used },
          log: (e) => log({ cluster: cluster.name, ...e }),
        }),
      );
    }
    log({ msg: "scheduled", cron: controller.cron, subrequests: counter.used(), clusters: fleet.clusters.length });
    return reports;
  }
  const gate = clusterGate(bindings.LEDGER);
  const report = await fanOut({
    fleet,
    nowMs: Date.now(),
    tick,
    listOptedIn: (c, ns) =>
      listOptedInSets(
        clusterClient(env, c, counter.fetch, {
          attempts: 1,
          timeoutMs: 10_000,
          onRequest: observing(sink, c.name).onRequest,
        }),
        ns,
      ),
    gate: async (c) => (counter.add(1), gate.get(c.name)),
    failed: async (c, err) => {
      // Only the cluster's own failures back it off; a 401/403 is configuration (in the log).
      if (err instanceof ApiError && !isClusterFailure(err)) return;
      counter.add(1);
      await gate.fail(c.name, Date.now(), err instanceof ApiError ? err.retryAfterSeconds : undefined);
    },
    send: async (messages) => (counter.add(1), bindings.STEP_QUEUE.sendBatch(messages.map((body) => ({ body })))),
    budget: { limit: config.subrequestBudget, used: counter.used },
    log,
  });
  log({
    msg: "scheduled",
    cron: controller.cron,
    subrequests: counter.used(),
    sent: report.sent,
    clusters: report.clusters,
  });
  return report;
}

/** Queue: every message to its set's object. */
export async function fleetQueue(batch: MessageBatch, env: Env): Promise<void> {
  const bindings = fleetBindings(env);
  if (!bindings) {
    log({ msg: "queue batch without fleet bindings", queue: batch.queue, messages: batch.messages.length });
    batch.messages.forEach((m) => m.retry({ delaySeconds: 60 }));
    return;
  }
  let ctx: FleetContext;
  try {
    ctx = fleetContext(env);
  } catch (err) {
    // Misconfigured: keep the messages until the configuration is fixed (the queue's retries).
    log({ msg: "configuration error", error: (err as Error).message });
    batch.messages.forEach((m) => m.retry({ delaySeconds: 60 }));
    return;
  }
  const configured = new Set(ctx.fleet.clusters.map((c) => c.name));
  const r = await consume(batch, bindings.SETS, log, (cluster) => configured.has(cluster));
  log({ msg: "queue", queue: batch.queue, ...r });
}
