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
// A set that does not exist (its read is a 404), or a cluster no longer configured, leaves nothing:
// the object deletes its storage and alarm after such a step, and refuses (404) a trigger naming a
// cluster that is not configured before storing anything.
//
// LedgerObject — named `cluster:<name>`: that cluster's backoff; named `replay:<n>`: accepted
// webhook ids (one store for every isolate, by a hash of the id), each until its expiry; at most
// REPLAY_SHARD_CAPACITY live ids a shard (then `full`, with the wait until the soonest expiry), keys
// of at most MAX_REPLAY_KEY_BYTES; its alarm pages through the ids REPLAY_ALARM_PAGE at a time.

import { ApiError, PermissionError } from "../../adapters/api-error.js";
import type { FetchLike } from "../../adapters/kube/client.js";
import { describeRequest, Routes } from "../../adapters/kube/routes.js";
import { RecentIds, type ReplayClaim } from "../auth.js";
import { eventSink, observing } from "../observe.js";
import { runStep, type StepResult } from "../step.js";
import { type Wiring, wire } from "../wiring.js";
import { clusterNamed } from "./clusters.js";
import { clusterClient, countingFetch, fleetContext } from "./context.js";
import { clusterGate } from "./dispatch.js";
import { clusterObjectName, MAX_REPLAY_KEY_BYTES, SetRequest, utf8Length } from "./routing.js";
import { call, type DOState, type FleetBindings, stubOf } from "./runtime.js";
import { alarmAfterStep, backoffMs, type ClusterBackoff, failed, HEALTHY, isClusterFailure } from "./schedule.js";
import { errorToWire, type StepWire, toWire, type WireError } from "./wire.js";

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

/** The set's cluster is not (or no longer) configured: the object has nothing to keep. */
class ClusterNotConfigured extends Error {}

const sameTarget = (a: SetTarget | undefined, b: SetTarget) =>
  !!a && a.cluster === b.cluster && a.namespace === b.namespace && a.name === b.name;

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
    if (!sameTarget(s.target, target)) {
      s.target = { cluster: target.cluster, namespace: target.namespace, name: target.name };
      await this.ctx.storage.put("state", s);
    }
    return s;
  }

  /** The cluster's configuration, or the error naming the configured ones (ClusterNotConfigured). */
  private clusterOf(name: string) {
    const found = clusterNamed(fleetContext(this.env).fleet, name);
    if ("error" in found) throw new ClusterNotConfigured(found.error);
    return found.cluster;
  }

  /** Nothing left of this object: no state, no alarm (its set or its cluster is gone). */
  private async forget(why: string): Promise<void> {
    const t = this.state?.target;
    this.state = undefined;
    this.poked = false;
    const storage = this.ctx.storage;
    await storage.deleteAlarm();
    // The runtime's deleteAll (a stand-in without it: the one key).
    await (storage.deleteAll ? storage.deleteAll() : storage.delete("state"));
    log({ msg: "set object cleared", ...(t ? { cluster: t.cluster, namespace: t.namespace, name: t.name } : {}), why });
  }

  async fetch(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (request.method === "GET" && path === "/state") {
      const s = await this.load();
      return json({
        ...s,
        nextAlarm: await this.ctx.storage.getAlarm(),
        active: this.active,
        maxActive: this.maxActive,
      });
    }
    if (request.method !== "POST" || (path !== "/poke" && path !== "/step")) return json({ error: "NotFound" }, 404);
    const parsed = SetRequest.safeParse(await request.json().catch(() => undefined));
    if (!parsed.success) return json({ error: `${path} takes {"cluster","namespace","name","via"?}, DNS names` }, 400);
    const { via, ...target } = parsed.data;
    try {
      this.clusterOf(target.cluster);
    } catch (err) {
      // Before anything is stored: an object for a cluster that is not configured keeps nothing.
      if (err instanceof ClusterNotConfigured) return json({ error: err.message }, 404);
      throw err;
    }
    if (path === "/poke") {
      await this.remember(target);
      // A change may have happened: step at once (an alarm now), unless one is due sooner or the
      // set is backing off (it keeps its alarm). During a step: once it is done.
      if (this.active) this.poked = true;
      const at = await this.ctx.storage.getAlarm();
      const now = this.now();
      if (!(await this.load()).failures && (at === null || at > now)) await this.ctx.storage.setAlarm(now);
      return json({ ok: true });
    }
    // A step asked directly: nothing is stored until the step has found the set.
    const r = await this.serialized(via ?? "request", target);
    return "error" in r ? json(r, 500) : json(r);
  }

  async alarm(): Promise<void> {
    await this.serialized("alarm");
  }

  /** One step after every step already running or waiting has finished; triggers meanwhile join it. */
  private serialized(via: string, target?: SetTarget): Promise<StepWire | { error: WireError }> {
    if (this.queued) return this.queued;
    const next = this.tail.then(() => {
      this.queued = undefined;
      return this.stepOnce(via, target);
    });
    this.queued = next;
    this.tail = next.catch(() => {});
    return next;
  }

  private wiringFor(s: SetState) {
    const { config } = fleetContext(this.env);
    const cluster = this.clusterOf(s.target!.cluster);
    const key = cluster.name;
    if (this.wiring?.key !== key) {
      const counter = countingFetch(() => this.fetcher());
      // One attempt per request: the object's alarm is the retry, with the cluster's backoff.
      // Each API request, step and failed Prometheus query an event (docs/observability-workers.md).
      const hooks = observing(eventSink(this.env), key);
      const client = clusterClient(this.env, cluster, counter.fetch, { attempts: 1, onRequest: hooks.onRequest });
      const wiring = wire({
        client,
        config: { ...config, namespaces: cluster.namespaces },
        now: () => new Date(this.now()),
        replay: new RecentIds(1),
        log,
        fetch: counter.fetch,
        instance: "claimstep-worker",
        ...hooks,
      });
      this.wiring = { key, wiring, counter };
    }
    return this.wiring;
  }

  private async stepOnce(via: string, target?: SetTarget): Promise<StepWire | { error: WireError }> {
    const s = await this.load();
    if (target && !sameTarget(s.target, target))
      s.target = { cluster: target.cluster, namespace: target.namespace, name: target.name };
    const t = s.target;
    if (!t) return { error: { type: "Error", message: "this object has no set yet" } };
    const startedMs = this.now();
    const run = await this.attempt(s, { namespace: t.namespace, name: t.name }, startedMs);
    if (run.gone) {
      await this.forget(run.gone);
      return run.result;
    }
    const now = this.now();
    const backoffUntil = await this.backOff(s, t.cluster, run, now);
    s.steps++;
    s.last = lastStep(run, via, startedMs);
    await this.schedule(s, t, run, now, backoffUntil);
    return run.result;
  }

  /** The step itself, counted as running (maxActive), with what the object makes of its end. */
  private async attempt(s: SetState, ref: { namespace: string; name: string }, startedMs: number): Promise<StepRun> {
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    this.poked = false;
    try {
      const { wiring, counter } = this.wiringFor(s);
      counter.reset();
      try {
        const r: StepResult = await (wiring.deps.runStep ?? runStep)({
          reader: wiring.deps.reader,
          writers: wiring.deps.writers,
          metrics: wiring.deps.metrics,
          ref,
          now: new Date(startedMs),
        });
        return { ...ranStep(r), subrequests: counter.used() };
      } catch (err) {
        return { ...failedStep(err, ref), subrequests: counter.used() };
      }
    } catch (err) {
      // configuration: the cluster is no longer configured
      return {
        result: { error: errorToWire(err) },
        subrequests: 0,
        ...(err instanceof ClusterNotConfigured ? { gone: "the cluster is not configured" } : {}),
      };
    } finally {
      this.active--;
    }
  }

  /** The set's backoff after its cluster failed (and the cluster's, from the ledger); a success ends both. */
  private async backOff(s: SetState, cluster: string, run: StepRun, now: number): Promise<number | undefined> {
    const ledger = (this.env as unknown as FleetBindings).LEDGER;
    const hadFailures = s.failures > 0;
    if (run.clusterError) {
      s.failures++;
      const backoffUntil = now + backoffMs(s.failures, run.clusterError.retryAfterSeconds);
      try {
        const gate = await clusterGate(ledger).fail(cluster, now, run.clusterError.retryAfterSeconds);
        return Math.max(backoffUntil, gate.untilMs);
      } catch {
        return backoffUntil; // the ledger is unreachable: the set's own backoff still holds
      }
    }
    if (!("error" in run.result)) {
      s.failures = 0;
      if (hadFailures) await call(stubOf(ledger, clusterObjectName(cluster)), "/gate/ok", {}).catch(() => {});
    }
    return undefined;
  }

  /** The next alarm, stored with the state, and the step's log line. */
  private async schedule(
    s: SetState,
    t: SetTarget,
    run: StepRun,
    now: number,
    backoffUntil: number | undefined,
  ): Promise<void> {
    const next = alarmAfterStep({
      nowMs: now,
      ...(run.requeueAfter !== undefined ? { requeueAfterSeconds: run.requeueAfter } : {}),
      ...(backoffUntil !== undefined ? { backoffUntilMs: backoffUntil } : {}),
      // A step already waiting will run at once anyway.
      triggeredDuringStep: this.poked && this.queued === undefined,
    });
    if (next === undefined) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(next);
    s.nextAlarm = next ?? null;
    await this.ctx.storage.put("state", s);
    log({
      msg: "set step",
      cluster: t.cluster,
      namespace: t.namespace,
      name: t.name,
      ...s.last,
      failures: s.failures,
      nextAlarm: next,
    });
  }
}

/** One step's end, as the object keeps and schedules it. */
interface StepRun {
  result: StepWire | { error: WireError };
  /** The cluster failed (429, 5xx, unreachable): the set backs off, and its cluster. */
  clusterError?: { retryAfterSeconds?: number };
  requeueAfter?: number;
  subrequests: number;
  /** Why this object should keep nothing: its set is not found, or its cluster not configured. */
  gone?: string;
}

const retryAfterOf = (seconds: number | undefined) => (seconds !== undefined ? { retryAfterSeconds: seconds } : {});

/** A step that ran: its decision's requeue, and a retry the cluster caused. */
function ranStep(r: StepResult): Omit<StepRun, "subrequests"> {
  return {
    result: toWire(r),
    ...(r.decision.requeueAfter !== undefined ? { requeueAfter: r.decision.requeueAfter } : {}),
    ...(r.outcome.kind === "retry" && isClusterFailure(r.outcome.error)
      ? { clusterError: retryAfterOf(r.outcome.retryAfterSeconds) }
      : {}),
  };
}

/** A step that threw: the set gone (its own read a 404), or the cluster failing. */
function failedStep(err: unknown, ref: { namespace: string; name: string }): Omit<StepRun, "subrequests"> {
  const api = err instanceof ApiError ? err : err instanceof PermissionError ? err.cause : undefined;
  return {
    result: { error: errorToWire(err) },
    ...(err instanceof ApiError &&
    err.kind === "NotFound" &&
    err.request === describeRequest(Routes.getStatefulSet, ref)
      ? { gone: "the StatefulSet does not exist" }
      : {}),
    // Unreachable (fetch threw: DNS, TLS, refused) counts as the cluster's failure too.
    ...(!api || isClusterFailure(api) ? { clusterError: retryAfterOf(api?.retryAfterSeconds) } : {}),
  };
}

/** What GET /state shows of the last step. */
function lastStep(run: StepRun, via: string, startedMs: number): SetState["last"] {
  const d = "error" in run.result ? undefined : run.result.decision;
  return {
    at: new Date(startedMs).toISOString(),
    via,
    ...(d ? { phase: d.phase, reason: d.reason, message: d.message } : {}),
    ...("error" in run.result ? { error: run.result.error.message } : { outcome: run.result.outcome.kind }),
    ...(run.requeueAfter !== undefined ? { requeueAfter: run.requeueAfter } : {}),
    subrequests: run.subrequests,
  };
}

/** Live replay ids one ledger shard keeps (REPLAY_SHARDS shards); past it, claims answer `full`. */
export const REPLAY_SHARD_CAPACITY = 10_000;
/** Keys the ledger's alarm reads per list (it pages through them, never all in one list). */
export const REPLAY_ALARM_PAGE = 500;
/** Deletes sent together (the runtime coalesces writes not separated by other I/O). */
const DELETE_BATCH = 128;
/** The count of stored ids, kept beside them (exact again after each complete pass of the alarm). */
const COUNT = "count";

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** A cluster's backoff (`cluster:<name>`) or a shard of replay ids (`replay:<n>`). */
export class LedgerObject {
  /** Live ids this shard keeps (a subclass may lower it). */
  protected readonly capacity: number = REPLAY_SHARD_CAPACITY;

  constructor(
    private readonly ctx: DOState,
    _env: unknown,
  ) {}

  protected now(): number {
    return Date.now();
  }

  async fetch(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    const storage = this.ctx.storage;
    if (path === "/gate") return json((await storage.get<ClusterBackoff>("gate")) ?? HEALTHY);
    let body: Record<string, unknown> = {};
    if (request.method === "POST") {
      const parsed: unknown = await request.json().catch(() => undefined);
      if (!parsed || typeof parsed !== "object")
        return json({ ok: false, error: "the body must be a JSON object" }, 400);
      body = parsed as Record<string, unknown>;
    }
    if (path === "/gate/fail") {
      const next = failed(
        (await storage.get<ClusterBackoff>("gate")) ?? HEALTHY,
        Number(body.nowMs),
        finite(body.retryAfterSeconds) ? body.retryAfterSeconds : undefined,
      );
      await storage.put("gate", next);
      return json(next);
    }
    if (path === "/gate/ok") {
      await storage.put("gate", HEALTHY);
      return json(HEALTHY);
    }
    if (path !== "/replay/claim" && path !== "/replay/release") return json({ error: "NotFound" }, 404);
    const id = body.id;
    if (typeof id !== "string" || id === "" || utf8Length(id) > MAX_REPLAY_KEY_BYTES) {
      return json({ ok: false, error: `id must be a string of 1 to ${MAX_REPLAY_KEY_BYTES} bytes` }, 400);
    }
    const key = `r:${id}`;
    if (path === "/replay/release") {
      if ((await storage.get<number>(key)) !== undefined) {
        await storage.delete(key);
        await storage.put(COUNT, Math.max(0, ((await storage.get<number>(COUNT)) ?? 1) - 1));
      }
      return json({ ok: true });
    }
    const { nowMs, expiresAtMs } = body;
    if (!finite(nowMs) || !finite(expiresAtMs))
      return json({ ok: false, error: "nowMs and expiresAtMs must be numbers (epoch milliseconds)" }, 400);
    const until = await storage.get<number>(key);
    if (until !== undefined && until > nowMs) return json({ ok: false, reason: "replayed" } satisfies ReplayClaim);
    const count = (await storage.get<number>(COUNT)) ?? 0;
    if (until === undefined && count >= this.capacity) {
      // Full of ids not yet forgotten: the alarm is at the soonest expiry.
      const soonest = (await storage.getAlarm()) ?? nowMs;
      return json({
        ok: false,
        reason: "full",
        retryAfterSeconds: Math.max(1, Math.ceil((soonest - nowMs) / 1000)),
      } satisfies ReplayClaim);
    }
    await storage.put(key, expiresAtMs);
    if (until === undefined) await storage.put(COUNT, count + 1);
    const alarm = await storage.getAlarm();
    if (alarm === null || alarm > expiresAtMs) await storage.setAlarm(expiresAtMs);
    return json({ ok: true } satisfies ReplayClaim);
  }

  /**
   * Forget expired ids, REPLAY_ALARM_PAGE keys a list; wake again at the next expiry (or at once,
   * when the pass did not get through every key).
   */
  async alarm(): Promise<void> {
    const storage = this.ctx.storage;
    const now = this.now();
    let next = Infinity;
    let live = 0;
    let deleted = 0;
    let complete = false;
    let cursor: string | undefined;
    // Every key fits in this many pages (claims stop at the capacity); bounded whatever storage does.
    const pages = Math.ceil(this.capacity / REPLAY_ALARM_PAGE) + 1;
    for (let page = 0; page < pages; page++) {
      const batch = await storage.list<number>({
        prefix: "r:",
        limit: REPLAY_ALARM_PAGE,
        ...(cursor !== undefined ? { startAfter: cursor } : {}),
      });
      const expired: string[] = [];
      let last: string | undefined;
      for (const [key, until] of batch) {
        last = key;
        if (!finite(until) || until <= now) expired.push(key);
        else {
          live++;
          next = Math.min(next, until);
        }
      }
      for (let i = 0; i < expired.length; i += DELETE_BATCH)
        await Promise.all(expired.slice(i, i + DELETE_BATCH).map((k) => storage.delete(k)));
      deleted += expired.length;
      if (batch.size < REPLAY_ALARM_PAGE || last === undefined) {
        complete = true;
        break;
      }
      if (cursor !== undefined && last <= cursor) break; // a storage that does not page: no progress
      cursor = last;
    }
    if (complete) {
      if (live) await storage.put(COUNT, live);
      else await storage.delete(COUNT);
      if (next !== Infinity) await storage.setAlarm(next);
    } else {
      await storage.put(COUNT, Math.max(0, ((await storage.get<number>(COUNT)) ?? 0) - deleted));
      await storage.setAlarm(now + 1_000);
    }
  }
}
