// B7: fleet mode (functions/fleet/) — 1,000 opted-in sets across 10 simulated clusters, stepped in
// one cron period: the cron's fan-out invocation, the queue consumer's invocations, and one alarm
// invocation per set object. The shipped handlers run (fleetScheduled, fleetQueue, SetObject,
// LedgerObject) over in-memory stand-ins of Durable Objects (storage, alarms) and Queues; every
// request to an API server is answered by a simulated cluster (adapters/sim) through the global
// fetch. Invocations run one at a time so each one's subrequests and CPU are its own; the CPU the
// simulated API servers spend answering is measured apart and subtracted.
//
// B3-alarms: B3's rollout (N = 50, L = 60 s, k = 1, 2, 5) triggered as fleet mode triggers it:
// the cron pokes the object, then each step's requeueAfter sets the next alarm; no relay.
import { SimCluster } from "../adapters/sim/cluster.js";
import { fleetQueue, fleetScheduled } from "../functions/fleet/entry.js";
import { LedgerObject, SetObject } from "../functions/fleet/objects.js";
import type { DONamespace, DOStorage, MessageBatch, QueueMessage } from "../functions/fleet/runtime.js";
import { simClusterOptions, statefulSetObjects, storageClassObjects } from "../test/support/index.js";
import { type RolloutResult, runRollout, type Trigger } from "./b3-rollout.js";
import { median, percentile } from "./harness.js";

export const B7_CLUSTERS = 10;
export const B7_SETS_PER_CLUSTER = 100;

class MemoryStorage implements DOStorage {
  readonly map = new Map<string, unknown>();
  alarm: number | null = null;
  async get<T>(key: string) {
    return structuredClone(this.map.get(key)) as T | undefined;
  }
  async put(key: string, value: unknown) {
    this.map.set(key, structuredClone(value));
  }
  async delete(key: string) {
    return this.map.delete(key);
  }
  async list<T>(o: { prefix?: string } = {}) {
    return new Map([...this.map].filter(([k]) => k.startsWith(o.prefix ?? "")) as [string, T][]);
  }
  async getAlarm() {
    return this.alarm;
  }
  async setAlarm(ms: number) {
    this.alarm = ms;
  }
  async deleteAlarm() {
    this.alarm = null;
  }
}

const OK = { status: 200, json: async () => ({ ok: true }) } as unknown as Response;

interface Obj {
  storage: MemoryStorage;
  instance: { fetch(r: Request): Promise<Response>; alarm(): Promise<void> };
}

/**
 * Durable Objects in memory: one instance per name, requests counted as the caller's subrequests.
 * `deferred`: a request is answered 200 at once and run later as the object's own invocation (a
 * poke needs no answer but its status), so its CPU is not the caller's.
 */
function namespace(
  make: (storage: MemoryStorage) => Obj["instance"],
  count: () => void,
  deferred?: (run: () => Promise<unknown>) => void,
): DONamespace & { objects: Map<string, Obj> } {
  const objects = new Map<string, Obj>();
  return {
    objects,
    idFromName: (name: string) => name,
    get: (id: unknown) => ({
      fetch: async (input: string, init?: RequestInit) => {
        count();
        let o = objects.get(id as string);
        if (!o) {
          const storage = new MemoryStorage();
          o = { storage, instance: make(storage) };
          objects.set(id as string, o);
        }
        const target = o;
        if (deferred) {
          // Node's Request and Response cost far more CPU than the runtime's: none built for the caller.
          deferred(() => target.instance.fetch(new Request(input, init)));
          return OK;
        }
        return o.instance.fetch(new Request(input, init));
      },
    }),
  };
}

export interface InvocationStats {
  count: number;
  subrequestsMax: number;
  cpuMs: { median: number; p90: number; max: number };
  wallMsMax: number;
}

export interface B7Result {
  clusters: number;
  sets: number;
  replicasPerSet: number;
  subrequestBudget: number;
  cron: InvocationStats & { sent: number; coldCpuMs: number };
  queue: InvocationStats & { poked: number };
  /** The set objects' invocations by the consumer's pokes (each sets its alarm at once). */
  pokes: InvocationStats;
  alarms: InvocationStats & { stepped: number; outcomes: Record<string, number> };
  /** Sets stepped once after the tick, of all opted in. */
  steppedInTick: number;
  /**
   * The critical path if the platform runs consumer invocations and objects in parallel (it does):
   * the cron's wall + the queue's batch timeout (1 s) + the slowest consumer invocation + the
   * slowest alarm step, with the simulated API servers answering in no time. Modeled, not measured
   * on Cloudflare.
   */
  modeledTickMs: number;
  cronPeriodMs: number;
}

const statsOf = (samples: { sub: number; cpu: number; wall: number }[]): InvocationStats => ({
  count: samples.length,
  subrequestsMax: Math.max(...samples.map((s) => s.sub)),
  cpuMs: {
    median: median(samples.map((s) => s.cpu)),
    p90: percentile(
      samples.map((s) => s.cpu),
      90,
    ),
    max: Math.max(...samples.map((s) => s.cpu)),
  },
  wallMsMax: Math.max(...samples.map((s) => s.wall)),
});

export async function runB7(
  log: (line: string) => void = () => {},
  opts: { clusters?: number; setsPerCluster?: number; replicas?: number } = {},
): Promise<B7Result> {
  const nClusters = opts.clusters ?? B7_CLUSTERS;
  const perCluster = opts.setsPerCluster ?? B7_SETS_PER_CLUSTER;
  const replicas = opts.replicas ?? 3;
  const desired = [{ name: "data", storage: "2Gi", storageClassName: "fast" }];
  const sims = new Map<string, SimCluster>();
  const env: Record<string, unknown> = {
    CLAIMSTEP_API_TOKEN: "bench-api-token-0123456789",
    CLAIMSTEP_NAMESPACES: "default",
    CLAIMSTEP_SUBREQUEST_BUDGET: "50",
  };
  const list: object[] = [];
  for (let i = 0; i < nClusters; i++) {
    const name = `c${i}`;
    const url = `https://${name}.bench.test`;
    const sim = new SimCluster(
      simClusterOptions({ baseUrl: url, token: `token-${name}-0123456789`, volumeAttributesClassVersions: [] }),
    );
    sim.seed(...storageClassObjects());
    for (let j = 0; j < perCluster; j++) sim.seed(...statefulSetObjects({ name: `s${j}`, replicas, desired }));
    sims.set(new URL(url).host, sim);
    list.push({ name, server: url, tokenSecret: `KUBE_TOKEN_C${i}` });
    env[`KUBE_TOKEN_C${i}`] = `token-${name}-0123456789`;
  }
  env.CLAIMSTEP_CLUSTERS = JSON.stringify(list);

  // Per invocation: subrequests, and the CPU the simulated API servers spent (subtracted).
  let sub = 0;
  let simCpuUs = 0;
  const realFetch = globalThis.fetch;
  let chain: Promise<unknown> = Promise.resolve();
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    const sim = sims.get(new URL(req.url).host);
    if (!sim) throw new TypeError(`B7: no simulated cluster at ${req.url}`);
    sub++;
    // One simulated request at a time, so the CPU window of one holds no other's work (a step's
    // reads go out in parallel).
    const answer = chain.then(async () => {
      const t = process.cpuUsage();
      const res = await sim.http.fetch(req);
      const body = await res.arrayBuffer();
      const d = process.cpuUsage(t);
      simCpuUs += d.user + d.system;
      return new Response(body, { status: res.status, headers: res.headers });
    });
    chain = answer.catch(() => undefined);
    return answer;
  }) as typeof fetch;
  const silent = console.log;
  console.log = () => {}; // the handlers' JSON log lines

  const queue: unknown[] = [];
  env.STEP_QUEUE = {
    sendBatch: async (ms: Iterable<{ body: unknown }>) => {
      sub++;
      queue.push(...[...ms].map((m) => m.body));
    },
  };
  env.LEDGER = namespace(
    (storage) => new LedgerObject({ storage }, env),
    () => sub++,
  );
  const pokes: (() => Promise<unknown>)[] = [];
  const sets = namespace(
    (storage) => new SetObject({ storage }, env),
    () => sub++,
    (run) => pokes.push(run),
  );
  env.SETS = sets;

  const measure = async <T>(fn: () => Promise<T>) => {
    sub = 0;
    simCpuUs = 0;
    const t = process.cpuUsage();
    const w = performance.now();
    const value = await fn();
    const wall = performance.now() - w;
    const d = process.cpuUsage(t);
    return { value, sample: { sub, cpu: Math.max(0, d.user + d.system - simCpuUs) / 1000, wall } };
  };

  try {
    // Warm the isolate as a deployed Worker would be (configuration parsed, modules loaded).
    const t0 = Date.now();
    // The first cron invocation of the isolate (configuration parsed, code compiled), then a warm one:
    // the figures are the warm one's; its messages are the ones consumed below.
    const cold = await measure(() => fleetScheduled({ scheduledTime: t0, cron: "* * * * *" }, env));
    queue.length = 0;
    const cron = await measure(() => fleetScheduled({ scheduledTime: t0, cron: "* * * * *" }, env));
    const sent = queue.length;
    log(`  B7 cron: ${sent} messages, ${cron.sample.sub} subrequests, ${cron.sample.cpu.toFixed(1)} ms CPU`);

    const consumers: { sub: number; cpu: number; wall: number }[] = [];
    let poked = 0;
    for (let i = 0; i < queue.length; i += 50) {
      const messages: QueueMessage[] = queue
        .slice(i, i + 50)
        .map((body, k) => ({ id: `m${i + k}`, body, attempts: 1, ack() {}, retry() {} }));
      const batch: MessageBatch = { queue: "claimstep-steps", messages };
      const r = await measure(() => fleetQueue(batch, env));
      consumers.push(r.sample);
      poked += messages.length;
    }
    log(`  B7 queue: ${consumers.length} invocations, ≤ ${Math.max(...consumers.map((c) => c.sub))} subrequests`);
    // Each poke: an invocation of its set's object (sets the alarm).
    const pokeSamples: { sub: number; cpu: number; wall: number }[] = [];
    for (const run of pokes.splice(0)) pokeSamples.push((await measure(run)).sample);

    const alarms: { sub: number; cpu: number; wall: number }[] = [];
    const outcomes: Record<string, number> = {};
    for (const o of sets.objects.values()) {
      if (o.storage.alarm === null || o.storage.alarm > Date.now()) continue;
      o.storage.alarm = null; // the runtime clears a fired alarm before running it
      const r = await measure(() => o.instance.alarm());
      alarms.push(r.sample);
      const st = o.storage.map.get("state") as { last?: { reason?: string; outcome?: string; error?: string } };
      const key = st.last?.error ? `error: ${st.last.error.slice(0, 60)}` : `${st.last?.reason}/${st.last?.outcome}`;
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    }
    log(`  B7 alarms: ${alarms.length} steps, ${JSON.stringify(outcomes)}`);
    const cronS = statsOf([cron.sample]);
    const queueS = statsOf(consumers);
    const alarmS = statsOf(alarms);
    return {
      clusters: nClusters,
      sets: nClusters * perCluster,
      replicasPerSet: replicas,
      subrequestBudget: 50,
      cron: { ...cronS, sent, coldCpuMs: cold.sample.cpu },
      queue: { ...queueS, poked },
      pokes: statsOf(pokeSamples),
      alarms: { ...alarmS, stepped: alarms.length, outcomes },
      steppedInTick: alarms.length,
      modeledTickMs: cronS.wallMsMax + 1000 + queueS.wallMsMax + statsOf(pokeSamples).wallMsMax + alarmS.wallMsMax,
      cronPeriodMs: 60_000,
    };
  } finally {
    globalThis.fetch = realFetch;
    console.log = silent;
  }
}

export const B3_ALARM_TRIGGERS: readonly Trigger[] = [
  { kind: "alarm", periodMs: 60_000, label: "alarms (cron 60 s)" },
  { kind: "alarm", periodMs: 300_000, label: "alarms (cron 300 s)" },
];

export interface B3AlarmsResult {
  replicas: number;
  resizeLatencyMs: number;
  rows: RolloutResult[];
  target: { ratio: number };
}

/** B3 with alarms instead of the relay. `ratio` counts from the change; `pickUpMs` is the wait for the first tick. */
export async function runB3Alarms(
  log: (line: string) => void = () => {},
  opts: { replicas?: number; k?: readonly number[] } = {},
): Promise<B3AlarmsResult> {
  const replicas = opts.replicas ?? 50;
  const resizeLatencyMs = 60_000;
  const rows: RolloutResult[] = [];
  for (const maxUnavailable of opts.k ?? [1, 2, 5]) {
    for (const trigger of B3_ALARM_TRIGGERS) {
      const r = await runRollout({ replicas, maxUnavailable, resizeLatencyMs, trigger });
      const afterPickUp = (r.totalMs - (r.pickUpMs ?? 0)) / r.idealMs;
      log(
        `  B3-alarms ${trigger.label} k=${maxUnavailable}: ${(r.totalMs / 1000).toFixed(0)} s, ratio ${r.ratio.toFixed(3)} (${afterPickUp.toFixed(3)} after the pick-up), ${r.steps} steps`,
      );
      rows.push(r);
    }
  }
  return { replicas, resizeLatencyMs, rows, target: { ratio: 1.05 } };
}

export interface Verdict {
  id: string;
  target: string;
  figure: string;
  met: boolean;
}

const ms = (x: number) => `${x.toFixed(1)} ms`;

export function judgeB7(b7: B7Result, b3a: B3AlarmsResult): Verdict[] {
  const subMax = Math.max(
    b7.cron.subrequestsMax,
    b7.queue.subrequestsMax,
    b7.pokes.subrequestsMax,
    b7.alarms.subrequestsMax,
  );
  const cpuP90 = Math.max(b7.cron.cpuMs.p90, b7.queue.cpuMs.p90, b7.pokes.cpuMs.p90, b7.alarms.cpuMs.p90);
  const byTrigger = (label: string, f: (r: RolloutResult) => number) =>
    b3a.rows
      .filter((r) => r.trigger === label)
      .map((r) => `k=${r.maxUnavailable}: ${f(r).toFixed(3)}`)
      .join(", ");
  return [
    {
      id: `B7 ${b7.sets} sets across ${b7.clusters} clusters in one cron period`,
      target: "every set stepped once per tick; the tick's critical path < 60 s",
      figure: `${b7.steppedInTick}/${b7.sets} stepped; ${1 + b7.queue.count + b7.pokes.count + b7.alarms.count} invocations (1 cron, ${b7.queue.count} queue, ${b7.pokes.count} pokes, ${b7.alarms.count} alarms); modeled critical path ${(b7.modeledTickMs / 1000).toFixed(1)} s (simulated API servers, no network)`,
      met: b7.steppedInTick === b7.sets && b7.modeledTickMs < b7.cronPeriodMs,
    },
    {
      id: "B7 subrequests per invocation",
      target: `≤ ${b7.subrequestBudget} (Workers Free)`,
      figure: `max: cron ${b7.cron.subrequestsMax}, queue ${b7.queue.subrequestsMax}, poke ${b7.pokes.subrequestsMax}, alarm ${b7.alarms.subrequestsMax}`,
      met: subMax <= b7.subrequestBudget,
    },
    {
      id: "B7 CPU per invocation",
      target: "p90 < 10 ms (Workers Free's CPU limit)",
      figure: `cron ${ms(b7.cron.cpuMs.median)} (first of the isolate ${ms(b7.cron.coldCpuMs)}); queue median ${ms(b7.queue.cpuMs.median)}, p90 ${ms(b7.queue.cpuMs.p90)}; poke median ${ms(b7.pokes.cpuMs.median)}, p90 ${ms(b7.pokes.cpuMs.p90)}; alarm median ${ms(b7.alarms.cpuMs.median)}, p90 ${ms(b7.alarms.cpuMs.p90)}, max ${ms(b7.alarms.cpuMs.max)}`,
      met: cpuP90 < 10,
    },
    ...B3_ALARM_TRIGGERS.map((t) => ({
      id: `B3-alarms rollout time, ${t.label}`,
      target: "≤ 1.05 × ⌈N/k⌉·L (from the change)",
      figure: `N=${b3a.replicas}, L 60 s; ${byTrigger(t.label, (r) => r.ratio)}; after the cron's pick-up: ${byTrigger(t.label, (r) => (r.totalMs - (r.pickUpMs ?? 0)) / r.idealMs)}`,
      met: b3a.rows.filter((r) => r.trigger === t.label).every((r) => r.ratio <= b3a.target.ratio),
    })),
  ];
}
