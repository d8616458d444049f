// The Cloudflare Worker: `fetch` serves the HTTP app, `scheduled` steps the opted-in
// StatefulSets of the configured namespaces within the invocation's subrequest budget, rotating
// where it starts with the cron tick so every set gets its turn. Kubernetes is reached with plain
// fetch and a bearer token (through Cloudflare Tunnel + Access for a private cluster).
import { KubeClient, type FetchLike } from "../adapters/kube/client.js";
import { createApp } from "./app.js";
import { RecentIds } from "./auth.js";
import { configFromEnv, type AppConfig } from "./config.js";
import { runStep } from "./step.js";
import { sweep, type SweepReport } from "./sweep.js";
import { wire } from "./wiring.js";
import { fleetBindings, usesFleet } from "./fleet/context.js";
import { fleetFetch, fleetQueue, fleetScheduled } from "./fleet/entry.js";
import type { MessageBatch } from "./fleet/runtime.js";
import { deliveryOf, observedFetch, observeStep, recorder, type Recorder, type SubrequestFetch } from "./observe.js";

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

const clientFor = (config: AppConfig, fetchImpl: FetchLike): KubeClient => {
  const kube = config.kube!; // requireKube guarantees it
  return new KubeClient({
    server: kube.server,
    fetch: fetchImpl,
    headers: { ...kube.headers, ...(kube.token ? { Authorization: `Bearer ${kube.token}` } : {}) },
  });
};

/** A fetch that counts the subrequests it makes. */
/** Every subrequest observed: each API call (and failed Prometheus query) is an event. */
const observed = (config: AppConfig, f: SubrequestFetch, record: Recorder) => observedFetch(f, record, { kube: config.kube!.server, prometheus: config.prometheus?.url });

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
    const record = recorder(env);
    const f = observed(config, (url, init) => fetch(url, init), record);
    // Steps that write go through `step` (the app's stepper, the forge webhooks'): each one an event.
    const wiring: ReturnType<typeof wire> = wire({
      client: clientFor(config, f),
      config,
      now: () => new Date(),
      replay,
      log,
      fetch: f,
      instance: "claimstep-worker",
      step: (ref) => observeStep(record, ref, () => runStep({ reader: wiring.deps.reader, writers: wiring.deps.writers, metrics: wiring.deps.metrics, ref, now: new Date() })),
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
  const record = recorder(env);
  const f = observed(config, counter.fetch, record);
  const wiring = wire({ client: clientFor(config, f), config, now, replay, log, fetch: f, instance: "claimstep-worker" });
  const report = await sweep({
    listOptedIn: (ns) => wiring.listOptedIn(ns),
    namespaces: config.namespaces,
    step: (ref) => observeStep(record, ref, () => runStep({ reader: wiring.deps.reader, writers: wiring.deps.writers, metrics: wiring.deps.metrics, ref, now: now() })),
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
    return Response.json({ error: "Misconfigured", message: "the Worker's configuration is invalid; see its log" }, { status: 500 });
  }
  return app.fetch(request, env, ctx as never);
}

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const res = await serve(request, env, ctx);
    // Deliveries and admission reviews, by their answers (docs/observability-workers.md).
    const e = await deliveryOf(request, res);
    if (e) recorder(env)(e);
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
