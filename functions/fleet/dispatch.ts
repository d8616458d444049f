// Fleet mode's handlers (Worker-only; no Node built-ins):
// - fanOut (cron): per cluster, unless it is backing off, list the opted-in sets and send one queue
//   message per set; clusters in parallel, each listing under a timeout, so a cluster that is down
//   costs the others nothing; within the invocation's subrequest budget (clusters that do not fit
//   rotate with the tick).
// - consume (queue): route each message to its set's object (a poke: the object steps in an alarm,
//   an invocation of its own); a malformed message is dropped, a failed poke retried.
// - durableReplay: the replay store of every isolate, in LedgerObjects.
// - remoteStep: a step run by the set's object (relay, webhooks, POST /v1/steps).
import type { AsyncReplayGuard, ReplayClaim } from "../auth.js";
import type { SetRef } from "../../core/types.js";
import type { StepResult } from "../step.js";
import type { Cluster, Fleet } from "./clusters.js";
import { batches, clusterObjectName, replayObjectName, setObjectName, StepMessage, stepMessage } from "./routing.js";
import { call, stubOf, type DONamespace, type MessageBatch } from "./runtime.js";
import { isOpen, type ClusterBackoff } from "./schedule.js";
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
  settled.forEach((r, i) => report.push(r.status === "fulfilled" ? r.value : { cluster: admitted[i]!.name, error: `cluster ${admitted[i]!.name}: ${(r.reason as Error)?.message}` }));
  const sent = report.reduce((s, r) => s + ("sent" in r ? r.sent : 0), 0);
  o.log?.({ msg: "fan-out", sent, clusters: report });
  return { clusters: report, sent };
}

/** The queue consumer: each message to its set's object. */
export async function consume(batch: MessageBatch, sets: DONamespace, log: (entry: Record<string, unknown>) => void = () => {}): Promise<{ poked: number; dropped: number; retried: number }> {
  let poked = 0;
  let dropped = 0;
  let retried = 0;
  await Promise.all(
    batch.messages.map(async (m) => {
      const parsed = StepMessage.safeParse(m.body);
      if (!parsed.success) {
        dropped++;
        log({ msg: "queue message dropped", id: m.id, problem: "not a step message {v:1,cluster,namespace,name}" });
        m.ack();
        return;
      }
      const { cluster, namespace, name } = parsed.data;
      try {
        const res = await call(stubOf(sets, setObjectName(cluster, { namespace, name })), "/poke", { cluster, namespace, name, via: "cron" });
        if (res.status >= 400) throw new Error(`poke answered ${res.status}`);
        poked++;
        m.ack();
      } catch (err) {
        retried++;
        log({ msg: "queue message retried", cluster, namespace, name, attempts: m.attempts, error: (err as Error).message });
        m.retry({ delaySeconds: Math.min(60, 5 * m.attempts) });
      }
    }),
  );
  return { poked, dropped, retried };
}

/** The replay store every isolate shares: ids in LedgerObjects, by a hash of the id. */
export const durableReplay = (ledger: DONamespace): AsyncReplayGuard => ({
  claim: async (id, nowMs, expiresAtMs) => (await call<ReplayClaim>(stubOf(ledger, replayObjectName(id)), "/replay/claim", { id, nowMs, expiresAtMs })).body,
  release: async (id) => void (await call(stubOf(ledger, replayObjectName(id)), "/replay/release", { id })),
});

/** A step of `ref` on `cluster`, run by its set's object (serialized with every other trigger of the set). */
export async function remoteStep(sets: DONamespace, cluster: string, ref: SetRef, via: string): Promise<StepResult> {
  const res = await call<StepWire | { error: WireError }>(stubOf(sets, setObjectName(cluster, ref)), "/step", { cluster, namespace: ref.namespace, name: ref.name, via });
  if ("error" in res.body) throw errorFromWire(res.body.error);
  return fromWire(res.body);
}

/** A cluster's backoff from its ledger object, and a failure reported to it. */
export const clusterGate = (ledger: DONamespace) => ({
  get: async (cluster: string) => (await call<ClusterBackoff>(stubOf(ledger, clusterObjectName(cluster)), "/gate")).body,
  fail: async (cluster: string, nowMs: number, retryAfterSeconds?: number) =>
    (await call<ClusterBackoff>(stubOf(ledger, clusterObjectName(cluster)), "/gate/fail", { nowMs, ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) })).body,
});
