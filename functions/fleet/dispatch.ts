// Fleet mode's handlers (Worker-only; no Node built-ins):
// - fanOut (cron): per cluster, unless it is backing off, list the opted-in sets and send one queue
//   message per set; clusters in parallel, each listing under a timeout, so a cluster that is down
//   costs the others nothing; within the invocation's subrequest budget (clusters that do not fit
//   rotate with the tick).
// - consume (queue): route each message to its set's object (a poke: the object steps in an alarm,
//   an invocation of its own); a malformed message is dropped, a failed poke retried.
// - durableReplay: the replay store of every isolate, in LedgerObjects.
// - remoteStep: a step run by the set's object (relay, webhooks, POST /v1/steps).

import type { SetRef } from "../../core/types.js";
import type { AsyncReplayGuard, ReplayClaim } from "../auth.js";
import { Problem } from "../http/problem.js";
import type { StepResult } from "../step.js";
import type { Cluster, Fleet } from "./clusters.js";
import {
  batches,
  clusterObjectName,
  MAX_REPLAY_KEY_BYTES,
  replayObjectName,
  StepMessage,
  setObjectName,
  stepMessage,
  utf8Length,
} from "./routing.js";
import { call, type DONamespace, type MessageBatch, stubOf } from "./runtime.js";
import { type ClusterBackoff, isOpen } from "./schedule.js";
import { errorFromWire, fromWire, type StepWire, type WireError } from "./wire.js";

export interface FanOutOptions {
  fleet: Fleet;
  /** Opted-in sets of one namespace of a cluster (undefined: all namespaces). */
  listOptedIn(cluster: Cluster, namespace: string | undefined): Promise<SetRef[]>;
  /** The cluster's backoff, from its ledger object. */
  gate(cluster: Cluster): Promise<ClusterBackoff>;
  /** A listing failed: the cluster backs off. */
  failed(cluster: Cluster, err: unknown): Promise<void>;
  send(messages: StepMessage[]): Promise<void>;
  nowMs: number;
  tick: number;
  budget: { limit: number; used(): number };
  log?: (entry: Record<string, unknown>) => void;
}

export type ClusterFanOut =
  | { cluster: string; sent: number }
  | { cluster: string; skipped: "backoff"; untilMs: number }
  | { cluster: string; skipped: "budget" }
  | { cluster: string; error: string };

export interface FanOutReport {
  clusters: ClusterFanOut[];
  sent: number;
}

/** Subrequests one cluster's fan-out costs before its messages: its gate and its listings. */
const costBefore = (c: Cluster) => 1 + Math.max(1, c.namespaces.length);

export async function fanOut(o: FanOutOptions): Promise<FanOutReport> {
  const n = o.fleet.clusters.length;
  const start = ((Math.floor(o.tick) % n) + n) % n;
  const order = o.fleet.clusters.map((_, i) => o.fleet.clusters[(start + i) % n]!);
  // Reserve each cluster's gate, listings and one batch before it starts; what does not fit waits for a later tick.
  let reserved = o.budget.used();
  const admitted: Cluster[] = [];
  const report: ClusterFanOut[] = [];
  for (const c of order) {
    const cost = costBefore(c) + 1;
    if (reserved + cost > o.budget.limit) report.push({ cluster: c.name, skipped: "budget" });
    else {
      reserved += cost;
      admitted.push(c);
    }
  }
  const one = async (c: Cluster): Promise<ClusterFanOut> => {
    const gate = await o.gate(c);
    if (!isOpen(gate, o.nowMs)) return { cluster: c.name, skipped: "backoff", untilMs: gate.untilMs };
    let refs: SetRef[];
    try {
      const scopes = c.namespaces.length ? c.namespaces : [undefined];
      refs = (await Promise.all(scopes.map((ns) => o.listOptedIn(c, ns)))).flat();
    } catch (err) {
      await o.failed(c, err).catch(() => {});
      return { cluster: c.name, error: `cluster ${c.name}: ${(err as Error).message}` };
    }
    let sent = 0;
    for (const batch of batches(refs.map((r) => stepMessage(c.name, r)))) {
      // Batches past the one reserved: only while the budget allows.
      if (sent > 0 && o.budget.used() + 1 > o.budget.limit) break;
      await o.send(batch);
      sent += batch.length;
    }
    return { cluster: c.name, sent };
  };
  const settled = await Promise.allSettled(admitted.map(one));
  settled.forEach((r, i) =>
    report.push(
      r.status === "fulfilled"
        ? r.value
        : { cluster: admitted[i]!.name, error: `cluster ${admitted[i]!.name}: ${(r.reason as Error)?.message}` },
    ),
  );
  const sent = report.reduce((s, r) => s + ("sent" in r ? r.sent : 0), 0);
  o.log?.({ msg: "fan-out", sent, clusters: report });
  return { clusters: report, sent };
}

/**
 * The queue consumer: each message to its set's object. A message for a cluster that is not
 * configured (`isConfigured`) is dropped before any object is asked (no object is created for it);
 * one its object refuses (4xx: not a set it can step) is dropped too, not retried.
 */
export async function consume(
  batch: MessageBatch,
  sets: DONamespace,
  log: (entry: Record<string, unknown>) => void = () => {},
  isConfigured: (cluster: string) => boolean = () => true,
): Promise<{ poked: number; dropped: number; retried: number }> {
  let poked = 0;
  let dropped = 0;
  let retried = 0;
  await Promise.all(
    batch.messages.map(async (m) => {
      const drop = (problem: string, target?: object) => {
        dropped++;
        log({ msg: "queue message dropped", id: m.id, ...target, problem });
        m.ack();
      };
      const parsed = StepMessage.safeParse(m.body);
      if (!parsed.success) return drop("not a step message {v:1,cluster,namespace,name}");
      const target = parsed.data;
      const { cluster } = target;
      if (!isConfigured(cluster)) return drop("the cluster is not configured (CLAIMSTEP_CLUSTERS)", target);
      try {
        const res = await call<{ error?: string }>(stubOf(sets, setObjectName(cluster, target)), "/poke", {
          cluster,
          namespace: target.namespace,
          name: target.name,
          via: "cron",
        });
        // Refused (4xx: not a set it can step): dropped, not retried.
        if (res.status < 500 && res.status >= 400)
          return drop(`its object answered ${res.status}: ${res.body?.error}`, target);
        if (res.status >= 400) throw new Error(`poke answered ${res.status}`);
        poked++;
        m.ack();
      } catch (err) {
        retried++;
        log({ msg: "queue message retried", ...target, attempts: m.attempts, error: (err as Error).message });
        m.retry({ delaySeconds: Math.min(60, 5 * m.attempts) });
      }
    }),
  );
  return { poked, dropped, retried };
}

export { MAX_REPLAY_KEY_BYTES } from "./routing.js";

/** How long a caller waits before retrying when the ledger gave no valid answer. */
const LEDGER_RETRY_AFTER_SECONDS = 5;

/** The replay key's bytes, or a 400 naming it and the bound. */
function checkReplayKey(key: string): void {
  const bytes = utf8Length(key);
  if (bytes <= MAX_REPLAY_KEY_BYTES) return;
  throw new Problem(
    400,
    "BadRequest",
    `the delivery id is too long: its replay key ${JSON.stringify(`${key.slice(0, 64)}…`)} is ${bytes} bytes, at most ${MAX_REPLAY_KEY_BYTES} are kept (Standard Webhooks ids are ~30): send a shorter webhook-id`,
  );
}

/**
 * A ledger's answer to a claim, read strictly (fail closed): accepted only on a 2xx status with
 * `ok: true`; `replayed` and `full` (with a non-negative retryAfterSeconds) as they are; anything
 * else — another status, another shape, no JSON, no answer — is a 503, never an acceptance.
 */
export function readClaim(shard: string, res: { status: number; body: unknown } | { failed: string }): ReplayClaim {
  let why: string;
  if ("failed" in res) why = res.failed;
  else {
    const b = res.body as { ok?: unknown; reason?: unknown; retryAfterSeconds?: unknown } | null;
    const ok2xx = res.status >= 200 && res.status < 300;
    if (ok2xx && b && typeof b === "object") {
      if (b.ok === true) return { ok: true };
      if (b.ok === false && b.reason === "replayed") return { ok: false, reason: "replayed" };
      const after = b.retryAfterSeconds;
      if (b.ok === false && b.reason === "full" && typeof after === "number" && Number.isFinite(after) && after >= 0) {
        return { ok: false, reason: "full", retryAfterSeconds: Math.max(1, Math.ceil(after)) };
      }
    }
    why = `HTTP ${res.status}, ${JSON.stringify(res.body)?.slice(0, 120) ?? "no body"}`;
  }
  throw new Problem(
    503,
    "Unavailable",
    `the replay ledger (Durable Object LEDGER ${JSON.stringify(shard)}) gave no valid answer (${why}): the signed request was refused, not accepted unchecked; retry later`,
    {
      headers: { "Retry-After": String(LEDGER_RETRY_AFTER_SECONDS) },
    },
  );
}

/** The replay store every isolate shares: ids in LedgerObjects, by a hash of the id. Fails closed. */
/** The shards of the forge webhooks' delivery ids (`forge-replay:<n>`): their own capacity, not the relay's (`replay:<n>`). */
export const FORGE_REPLAY_SHARDS = "forge-replay";

export const durableReplay = (ledger: DONamespace, kind = "replay"): AsyncReplayGuard => ({
  claim: async (id, nowMs, expiresAtMs) => {
    checkReplayKey(id);
    const shard = replayObjectName(id, kind);
    let res: { status: number; body: unknown } | { failed: string };
    try {
      res = await call<unknown>(stubOf(ledger, shard), "/replay/claim", { id, nowMs, expiresAtMs });
    } catch (err) {
      res = { failed: `${(err as Error)?.message ?? String(err)}`.slice(0, 160) };
    }
    return readClaim(shard, res);
  },
  release: async (id) => {
    if (utf8Length(id) > MAX_REPLAY_KEY_BYTES) return; // never stored
    await call(stubOf(ledger, replayObjectName(id, kind)), "/replay/release", { id });
  },
});

/** A step of `ref` on `cluster`, run by its set's object (serialized with every other trigger of the set). */
export async function remoteStep(sets: DONamespace, cluster: string, ref: SetRef, via: string): Promise<StepResult> {
  const res = await call<StepWire | { error: WireError }>(stubOf(sets, setObjectName(cluster, ref)), "/step", {
    cluster,
    namespace: ref.namespace,
    name: ref.name,
    via,
  });
  if ("error" in res.body) throw errorFromWire(res.body.error);
  return fromWire(res.body);
}

/** A cluster's backoff from its ledger object, and a failure reported to it. */
export const clusterGate = (ledger: DONamespace) => {
  /** The ledger's answer read strictly: a 2xx with two numbers, else an error naming the ledger. */
  const gate = async (cluster: string, path: string, body?: unknown): Promise<ClusterBackoff> => {
    const name = clusterObjectName(cluster);
    const res = await call<ClusterBackoff>(stubOf(ledger, name), path, body);
    const b = res.body;
    if (res.status < 300 && res.status >= 200 && Number.isFinite(b?.failures) && Number.isFinite(b?.untilMs))
      return { failures: b.failures, untilMs: b.untilMs };
    throw new Error(
      `the cluster ledger (Durable Object LEDGER ${JSON.stringify(name)}) gave no valid backoff (HTTP ${res.status}, ${JSON.stringify(b)?.slice(0, 120)})`,
    );
  };
  return {
    get: (cluster: string) => gate(cluster, "/gate"),
    fail: (cluster: string, nowMs: number, retryAfterSeconds?: number) =>
      gate(cluster, "/gate/fail", { nowMs, ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) }),
  };
};
