// The Durable Objects of fleet mode (Worker-only; no Node built-ins):
//
// SetObject — one per StatefulSet of a cluster (functions/fleet/routing.ts: setObjectName). Every
// trigger of the set meets here: the queue's pokes (cron fan-out), relay deliveries and webhooks
// (POST /step), and its own alarm. Steps never run two at once: a trigger arriving during a step
// waits for it and gets a step of its own, started after it arrived (triggers arriving meanwhile
// share that one). After each step the object sets its alarm at the decision's requeueAfter, so a
// rollout moves at the cluster's pace, not the cron's; on a 429/5xx/timeout it backs off (its own
// count, and its cluster's, kept by the cluster's LedgerObject). It keeps the last decision.
//
// LedgerObject — named `cluster:<name>`: that cluster's backoff; named `replay:<n>`: accepted
// webhook ids (one store for every isolate, by a hash of the id), each until its expiry.
import type { FetchLike } from "../../adapters/kube/client.js";
import { ApiError } from "../../adapters/api-error.js";
import { RecentIds, type ReplayClaim } from "../auth.js";
import { PermissionError, runStep, type StepResult } from "../step.js";
import { wire, type Wiring } from "../wiring.js";
import { clusterNamed } from "./clusters.js";
import { clusterClient, countingFetch, fleetContext } from "./context.js";
import { clusterObjectName } from "./routing.js";
import { call, stubOf, type DOState, type FleetBindings } from "./runtime.js";
import { alarmAfterStep, backoffMs, failed, HEALTHY, isClusterFailure, type ClusterBackoff } from "./schedule.js";
import { toWire, type StepWire, type WireError, errorToWire } from "./wire.js";

export interface SetTarget {
  cluster: string;
  namespace: string;
  name: string;
}

/** What the object keeps about its set (storage key "state"), served by GET /state. */
export interface SetState {
  target?: SetTarget;
  steps: number;
  /** Consecutive transient failures of this set's steps. */
  failures: number;
  last?: {
    at: string;
    via: string;
    phase?: string;
    reason?: string;
    message?: string;
    outcome?: string;
    requeueAfter?: number;
    subrequests: number;
    error?: string;
  };
  nextAlarm?: number | null;
}

const log = (entry: Record<string, unknown>) => console.log(JSON.stringify(entry));
const json = (body: unknown, status = 200) => Response.json(body, { status });

export class SetObject {
  private state?: SetState;
  private queued?: Promise<StepWire | { error: WireError }>;
  private tail: Promise<unknown> = Promise.resolve();
  /** A poke arrived while a step ran: the next alarm is at once. */
  private poked = false;
  private active = 0;
  /** The most steps ever seen running at once in this instance (1, by construction; the tests check). */
  private maxActive = 0;
  private wiring?: { key: string; wiring: Wiring; counter: ReturnType<typeof countingFetch> };

  constructor(
    private readonly ctx: DOState,
    private readonly env: Record<string, unknown>,
  ) {}

  /** The fetch to reach the API server (the benchmark swaps in the simulated clusters). */
  protected fetcher(): FetchLike {
    return fetch;
  }

  protected now(): number {
    return Date.now();
  }

  private async load(): Promise<SetState> {
    this.state ??= (await this.ctx.storage.get<SetState>("state")) ?? { steps: 0, failures: 0 };
    return this.state;
  }

  private async remember(target: SetTarget): Promise<SetState> {
    const s = await this.load();
    if (!s.target || s.target.cluster !== target.cluster || s.target.namespace !== target.namespace || s.target.name !== target.name) {
      s.target = { cluster: target.cluster, namespace: target.namespace, name: target.name };
      await this.ctx.storage.put("state", s);
    }
    return s;
  }

  async fetch(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (request.method === "GET" && path === "/state") {
      const s = await this.load();
      return json({ ...s, nextAlarm: await this.ctx.storage.getAlarm(), active: this.active, maxActive: this.maxActive });
    }
    const body = (await request.json()) as SetTarget & { via?: string };
    await this.remember(body);
    if (path === "/poke") {
      // A change may have happened: step at once (an alarm now), unless one is due sooner or the
      // set is backing off (it keeps its alarm). During a step: once it is done.
      if (this.active) this.poked = true;
      const at = await this.ctx.storage.getAlarm();
      const now = this.now();
      if (!(await this.load()).failures && (at === null || at > now)) await this.ctx.storage.setAlarm(now);
      return json({ ok: true });
    }
    if (path === "/step") {
      const r = await this.serialized(body.via ?? "request");
      return "error" in r ? json(r, 500) : json(r);
    }
    return json({ error: "NotFound" }, 404);
  }

  async alarm(): Promise<void> {
    await this.serialized("alarm");
  }

  /** One step after every step already running or waiting has finished; triggers meanwhile join it. */
  private serialized(via: string): Promise<StepWire | { error: WireError }> {
    if (this.queued) return this.queued;
    const next = this.tail.then(() => {
      this.queued = undefined;
      return this.stepOnce(via);
    });
    this.queued = next;
    this.tail = next.catch(() => {});
    return next;
  }

  private wiringFor(s: SetState) {
    const { config, fleet } = fleetContext(this.env);
    const found = clusterNamed(fleet, s.target!.cluster);
    if ("error" in found) throw new Error(found.error);
    const key = found.cluster.name;
    if (this.wiring?.key !== key) {
      const counter = countingFetch(() => this.fetcher());
      // One attempt per request: the object's alarm is the retry, with the cluster's backoff.
      const client = clusterClient(this.env, found.cluster, counter.fetch, { attempts: 1 });
      const wiring = wire({ client, config: { ...config, namespaces: found.cluster.namespaces }, now: () => new Date(this.now()), replay: new RecentIds(1), log, fetch: counter.fetch, instance: "claimstep-worker" });
      this.wiring = { key, wiring, counter };
    }
    return this.wiring;
  }

  private async stepOnce(via: string): Promise<StepWire | { error: WireError }> {
    const s = await this.load();
    if (!s.target) return { error: { type: "Error", message: "this object has no set yet" } };
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    this.poked = false;
    const startedMs = this.now();
    let result: StepWire | { error: WireError };
    let clusterError: { retryAfterSeconds?: number } | undefined;
    let requeueAfter: number | undefined;
    let subrequests = 0;
    try {
      const { wiring, counter } = this.wiringFor(s);
      counter.reset();
      const ref = { namespace: s.target.namespace, name: s.target.name };
      try {
        const r: StepResult = await runStep({ reader: wiring.deps.reader, writers: wiring.deps.writers, metrics: wiring.deps.metrics, ref, now: new Date(startedMs) });
        result = toWire(r);
        requeueAfter = r.decision.requeueAfter;
        if (r.outcome.kind === "retry" && isClusterFailure(r.outcome.error)) clusterError = { ...(r.outcome.retryAfterSeconds !== undefined ? { retryAfterSeconds: r.outcome.retryAfterSeconds } : {}) };
      } catch (err) {
        result = { error: errorToWire(err) };
        const api = err instanceof ApiError ? err : err instanceof PermissionError ? err.cause : undefined;
        // Unreachable (fetch threw: DNS, TLS, refused) counts as the cluster's failure too.
        if (!api || isClusterFailure(api)) clusterError = { ...(api?.retryAfterSeconds !== undefined ? { retryAfterSeconds: api.retryAfterSeconds } : {}) };
      } finally {
        subrequests = counter.used();
      }
    } catch (err) {
      result = { error: errorToWire(err) }; // configuration: the cluster is no longer configured
    } finally {
      this.active--;
    }

    const now = this.now();
    let backoffUntil: number | undefined;
    const hadFailures = s.failures > 0;
    if (clusterError) {
      s.failures++;
      backoffUntil = now + backoffMs(s.failures, clusterError.retryAfterSeconds);
      try {
        const gate = await call<ClusterBackoff>(stubOf((this.env as unknown as FleetBindings).LEDGER, clusterObjectName(s.target.cluster)), "/gate/fail", { nowMs: now, retryAfterSeconds: clusterError.retryAfterSeconds });
        backoffUntil = Math.max(backoffUntil, gate.body.untilMs);
      } catch {
        // the ledger is unreachable: the set's own backoff still holds
      }
    } else if (!("error" in result)) {
      s.failures = 0;
      if (hadFailures) await call(stubOf((this.env as unknown as FleetBindings).LEDGER, clusterObjectName(s.target.cluster)), "/gate/ok", {}).catch(() => {});
    }
    s.steps++;
    const d = "error" in result ? undefined : result.decision;
    s.last = {
      at: new Date(startedMs).toISOString(),
      via,
      ...(d ? { phase: d.phase, reason: d.reason, message: d.message } : {}),
      ...("error" in result ? { error: result.error.message } : { outcome: result.outcome.kind }),
      ...(requeueAfter !== undefined ? { requeueAfter } : {}),
      subrequests,
    };
    const next = alarmAfterStep({
      nowMs: now,
      ...(requeueAfter !== undefined ? { requeueAfterSeconds: requeueAfter } : {}),
      ...(backoffUntil !== undefined ? { backoffUntilMs: backoffUntil } : {}),
      // A step already waiting will run at once anyway.
      triggeredDuringStep: this.poked && this.queued === undefined,
    });
    if (next === undefined) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(next);
    s.nextAlarm = next ?? null;
    await this.ctx.storage.put("state", s);
    log({ msg: "set step", cluster: s.target.cluster, namespace: s.target.namespace, name: s.target.name, ...s.last, failures: s.failures, nextAlarm: next });
    return result;
  }
}

/** A cluster's backoff (`cluster:<name>`) or a shard of replay ids (`replay:<n>`). */
export class LedgerObject {
  constructor(
    private readonly ctx: DOState,
    _env: unknown,
  ) {}

  async fetch(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    const storage = this.ctx.storage;
    const body = (request.method === "POST" ? await request.json() : {}) as { id: string; nowMs: number; expiresAtMs: number; retryAfterSeconds?: number };
    if (path === "/gate") return json((await storage.get<ClusterBackoff>("gate")) ?? HEALTHY);
    if (path === "/gate/fail") {
      const next = failed((await storage.get<ClusterBackoff>("gate")) ?? HEALTHY, body.nowMs, body.retryAfterSeconds);
      await storage.put("gate", next);
      return json(next);
    }
    if (path === "/gate/ok") {
      await storage.put("gate", HEALTHY);
      return json(HEALTHY);
    }
    if (path === "/replay/claim") {
      const key = `r:${body.id}`;
      const until = await storage.get<number>(key);
      if (until !== undefined && until > body.nowMs) return json({ ok: false, reason: "replayed" } satisfies ReplayClaim);
      await storage.put(key, body.expiresAtMs);
      const alarm = await storage.getAlarm();
      if (alarm === null || alarm > body.expiresAtMs) await storage.setAlarm(body.expiresAtMs);
      return json({ ok: true } satisfies ReplayClaim);
    }
    if (path === "/replay/release") {
      await storage.delete(`r:${body.id}`);
      return json({ ok: true });
    }
    return json({ error: "NotFound" }, 404);
  }

  /** Forget expired ids; wake again at the next expiry. */
  async alarm(): Promise<void> {
    const now = Date.now();
    let next = Infinity;
    for (const [key, until] of await this.ctx.storage.list<number>({ prefix: "r:" })) {
      if (until <= now) await this.ctx.storage.delete(key);
      else next = Math.min(next, until);
    }
    if (next !== Infinity) await this.ctx.storage.setAlarm(next);
  }
}
