// The Cloudflare Worker: `fetch` serves the HTTP app, `scheduled` steps the opted-in
// StatefulSets of the configured namespaces within the invocation's subrequest budget, rotating
// where it starts with the cron tick so every set gets its turn. Kubernetes is reached with plain
// fetch and a bearer token (through Cloudflare Tunnel + Access for a private cluster).
import { type FetchLike, KubeClient } from "../adapters/kube/client.js";
import { createApp } from "./app.js";
import { RecentIds } from "./auth.js";
import { type AppConfig, configFromEnv } from "./config.js";
import { fleetBindings, usesFleet } from "./fleet/context.js";
import { fleetFetch, fleetQueue, fleetScheduled } from "./fleet/entry.js";
import type { MessageBatch } from "./fleet/runtime.js";
import { deliveryOf, eventSink, observing } from "./observe.js";
import { type SweepReport, sweep } from "./sweep.js";
import { wire } from "./wiring.js";

// Fleet mode (functions/fleet/): one Durable Object per set, the cron fanning out through a Queue.
export { LedgerObject, SetObject } from "./fleet/objects.js";

/** The parts of the Workers runtime types used here. */
export interface ScheduledController {
  scheduledTime: number;
  cron: string;
}
export interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException?(): void;
}
export type Env = Record<string, unknown>;

const log = (entry: Record<string, unknown>) => console.log(JSON.stringify(entry));

// Per isolate: webhook ids seen here. Another isolate has its own (see docs/deploying.md, "Deploy to
// Cloudflare Workers"); a replay there costs at most one more idempotent step.
const replay = new RecentIds();

// Each request an event (docs/observability-workers.md): the client's onRequest hook.
const clientFor = (config: AppConfig, fetchImpl: FetchLike, hooks: ReturnType<typeof observing>): KubeClient => {
  const kube = config.kube!; // requireKube guarantees it
  return new KubeClient({
    server: kube.server,
    fetch: fetchImpl,
    onRequest: hooks.onRequest,
    headers: { ...kube.headers, ...(kube.token ? { Authorization: `Bearer ${kube.token}` } : {}) },
  });
};

/** A fetch that counts the subrequests it makes. */
const countingFetch = () => {
  let count = 0;
  const f = (url: string, init?: RequestInit) => {
    count++;
    return fetch(url, init);
  };
  return { fetch: f, used: () => count };
};

// The app for an env, built once per isolate (env is the same object for the isolate's life).
const apps = new WeakMap<object, ReturnType<typeof createApp>>();

function appFor(env: Env) {
  let app = apps.get(env);
  if (!app) {
    const config = configFromEnv(env, { requireKube: true });
    const f = (url: string, init?: RequestInit) => fetch(url, init);
    // Each step that writes and each failed Prometheus query an event too.
    const hooks = observing(eventSink(env));
    const wiring = wire({
      client: clientFor(config, f, hooks),
      config,
      now: () => new Date(),
      replay,
      log,
      fetch: f,
      instance: "claimstep-worker",
      runStep: hooks.runStep,
      wrapMetrics: hooks.wrapMetrics,
    });
    app = createApp(wiring.deps);
    apps.set(env, app);
  }
  return app;
}

export async function runScheduled(controller: ScheduledController, env: Env): Promise<SweepReport> {
  const config = configFromEnv(env, { requireKube: true });
  const counter = countingFetch();
  const now = () => new Date();
  const hooks = observing(eventSink(env));
  const wiring = wire({
    client: clientFor(config, counter.fetch, hooks),
    config,
    now,
    replay,
    log,
    fetch: counter.fetch,
    instance: "claimstep-worker",
    runStep: hooks.runStep,
    wrapMetrics: hooks.wrapMetrics,
  });
  const report = await sweep({
    listOptedIn: (ns) => wiring.listOptedIn(ns),
    namespaces: config.namespaces,
    step: (ref) =>
      hooks.runStep({
        reader: wiring.deps.reader,
        writers: wiring.deps.writers,
        metrics: wiring.deps.metrics,
        ref,
        now: now(),
      }),
    tick: Math.floor(controller.scheduledTime / (config.tickSeconds * 1000)),
    budget: { limit: config.subrequestBudget, perStep: config.subrequestsPerStep, used: counter.used },
    log,
  });
  log({ msg: "scheduled", cron: controller.cron, subrequests: counter.used(), ...report });
  return report;
}

async function serve(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  // Several clusters (CLAIMSTEP_CLUSTERS) or fleet mode: /v1/clusters/:cluster/… and the default cluster's routes.
  if (usesFleet(env)) return fleetFetch(request, env, ctx);
  let app;
  try {
    app = appFor(env);
  } catch (err) {
    log({ msg: "configuration error", error: (err as Error).message });
    return Response.json(
      { error: "Misconfigured", message: "the Worker's configuration is invalid; see its log" },
      { status: 500 },
    );
  }
  return app.fetch(request, env, ctx as never);
}

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const res = await serve(request, env, ctx);
    // Deliveries and admission reviews, by their answers (docs/observability-workers.md).
    const e = await deliveryOf(request, res);
    if (e) eventSink(env)(e);
    return res;
  },

  // Awaited (not waitUntil) so a failure shows as a failed cron invocation.
  async scheduled(controller: ScheduledController, env: Env): Promise<void> {
    if (usesFleet(env)) await fleetScheduled(controller, env);
    else await runScheduled(controller, env);
  },

  // Fleet mode: each message (one set) to its Durable Object.
  async queue(batch: MessageBatch, env: Env): Promise<void> {
    if (fleetBindings(env) || usesFleet(env)) await fleetQueue(batch, env);
  },
};
