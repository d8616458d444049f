// B3: how long a whole rollout takes on the simulated cluster's virtual clock, against the ideal
// ⌈N/k⌉·L (N ordinals, k = maxUnavailable, L = one claim's resize latency), for each way steps
// are triggered:
// - relay: the shipped watch relay's Debouncer (functions/relay.ts) fed by every change the
//   cluster records (controllers' and claimstep's own writes, as a watch sees them), firing a step;
// - relay, no debounce: a step at the very instant anything changes (the event-driven bound);
// - relay with the earlier 2 s quiet period, for comparison;
// - cron every P seconds: one step per tick, the change landing half a period before a tick.
// Every step is the real one (functions/step.ts runStep over the simulated reader and writers).
import { Keys, type SetRef } from "../core/types.js";
import { claimTemplate, SimCluster, statefulSetManifest } from "../adapters/sim/cluster.js";
import { DEFAULT_DEBOUNCE, Debouncer, type DebounceOptions, type RelayClock } from "../functions/relay/index.js";
import { runStep } from "../functions/step.js";

export type Trigger =
  | { kind: "relay"; debounce: DebounceOptions; label: string }
  | { kind: "cron"; periodMs: number; label: string };

const seconds = (ms: number) => `${ms / 1000} s`;

export const B3_TRIGGERS: readonly Trigger[] = [
  {
    kind: "relay",
    debounce: DEFAULT_DEBOUNCE,
    label: `relay (shipped: ${seconds(DEFAULT_DEBOUNCE.quietMs)} quiet, ≤ ${seconds(DEFAULT_DEBOUNCE.maxWaitMs)})`,
  },
  { kind: "relay", debounce: { quietMs: 0, maxWaitMs: 0 }, label: "relay (no debounce)" },
  // The relay's earlier default, for comparison.
  { kind: "relay", debounce: { quietMs: 2000, maxWaitMs: 10_000 }, label: "relay (2 s quiet, ≤ 10 s: earlier default)" },
  { kind: "cron", periodMs: 60_000, label: "cron 60 s" },
  { kind: "cron", periodMs: 300_000, label: "cron 300 s" },
];

export interface RolloutCase {
  replicas: number;
  maxUnavailable: number;
  /** Write → ready of one claim: reactMs + resizeMs + nodeResizeMs of the simulated storage. */
  resizeLatencyMs: number;
  trigger: Trigger;
}

export interface RolloutResult {
  trigger: string;
  replicas: number;
  maxUnavailable: number;
  idealMs: number;
  totalMs: number;
  ratio: number;
  steps: number;
  claimWrites: number;
}

const REF: SetRef = { namespace: "default", name: "web" };
const REACT_MS = 500;
const NODE_RESIZE_MS = 3_000;
/** A rollout that has not completed after this much virtual time is a failure, not a figure. */
const GIVE_UP_MS = 48 * 3600_000;

/** setTimeout on the simulation's clock, for the relay's Debouncer. */
class VirtualTimers implements RelayClock {
  private queue: { at: number; fn: () => void; id: number }[] = [];
  private ids = 0;
  constructor(private readonly nowMs: () => number) {}
  now(): Date {
    return new Date(this.nowMs());
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.ids;
    this.queue.push({ at: this.nowMs() + Math.max(0, ms), fn, id });
    this.queue.sort((a, b) => a.at - b.at || a.id - b.id);
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.queue = this.queue.filter((t) => t.id !== handle);
  }
  next(): number | undefined {
    return this.queue[0]?.at;
  }
  /** Run every timer due at or before now. */
  runDue(): void {
    while (this.queue.length && this.queue[0]!.at <= this.nowMs()) this.queue.shift()!.fn();
  }
}

/** A cluster with the set created and settled, its storage resizing in `resizeLatencyMs`. */
async function clusterFor(c: RolloutCase): Promise<SimCluster> {
  const resizeMs = c.resizeLatencyMs - REACT_MS - NODE_RESIZE_MS;
  if (resizeMs <= 0) throw new Error(`B3: resize latency must exceed ${REACT_MS + NODE_RESIZE_MS} ms`);
  const sim = new SimCluster({ seed: 7, volumeAttributesClasses: false, latencies: { reactMs: REACT_MS, resizeMs, nodeResizeMs: NODE_RESIZE_MS } });
  await sim.addStorageClass("fast", { allowVolumeExpansion: true });
  await sim.createStatefulSet(
    statefulSetManifest({
      name: REF.name,
      namespace: REF.namespace,
      replicas: c.replicas,
      maxUnavailable: c.maxUnavailable,
      podManagementPolicy: "Parallel",
      templates: [{ name: "data", storage: "10Gi", storageClassName: "fast" }],
    }),
    30 * 60_000,
  );
  const pods = (await sim.admin.list("pods", REF.namespace)).items.length;
  if (pods !== c.replicas) throw new Error(`B3: the simulated StatefulSet has ${pods} pods after settling, expected ${c.replicas}`);
  return sim;
}

/** Run one rollout to Complete and time it on the virtual clock. */
export async function runRollout(c: RolloutCase): Promise<RolloutResult> {
  const sim = await clusterFor(c);
  const timers = new VirtualTimers(() => sim.clock.nowMs());
  const due: string[] = [];
  const debouncer = c.trigger.kind === "relay" ? new Debouncer(timers, c.trigger.debounce, (key) => due.push(key)) : undefined;

  // The change: desired templates written to the set (as `claimstep set` or a CI call would).
  const desired = JSON.stringify([claimTemplate({ name: "data", storage: "20Gi", storageClassName: "fast" })]);
  await sim.admin.mergePatch("statefulsets", REF.namespace, REF.name, { metadata: { annotations: { [Keys.templates]: desired } } }, { fieldManager: "kubectl" });
  const t0 = sim.clock.nowMs();

  let seen = 0;
  // Every recorded write to the set, its claims or its pods is a watch event for the relay.
  const watchEvents = () => {
    for (; seen < sim.audit.length; seen++) {
      const e = sim.audit[seen]!;
      if (e.outcome !== "ok" || e.namespace !== REF.namespace) continue;
      if (e.resource === "statefulsets" || e.resource === "persistentvolumeclaims" || e.resource === "pods") {
        debouncer?.touch(`${REF.namespace}/${REF.name}`, `${e.resource} ${e.name}`);
      }
    }
  };
  watchEvents();

  let steps = 0;
  let claimWrites = 0;
  let doneAt: number | undefined;
  const step = async () => {
    steps++;
    const { decision, outcome } = await runStep({ reader: sim.reader, writers: sim.writers, ref: REF, now: sim.now() });
    if (outcome.kind === "applied" && decision.action) claimWrites++;
    if (outcome.kind === "retry" || outcome.kind === "refused") throw new Error(`B3: step failed (${outcome.kind}): ${decision.message}`);
    if (decision.phase === "Complete") doneAt = sim.clock.nowMs();
    else if (decision.phase === "Blocked") throw new Error(`B3: rollout blocked: ${decision.message}`);
    watchEvents();
  };

  const period = c.trigger.kind === "cron" ? c.trigger.periodMs : 0;
  let nextTick = t0 + period / 2;
  while (doneAt === undefined) {
    const now = sim.clock.nowMs();
    if (now - t0 > GIVE_UP_MS) throw new Error(`B3: ${c.trigger.label} k=${c.maxUnavailable} did not complete within ${GIVE_UP_MS / 3600_000} h of virtual time`);
    const candidates = [sim.nextActivity()?.getTime(), timers.next(), c.trigger.kind === "cron" ? nextTick : undefined].filter(
      (t): t is number => t !== undefined,
    );
    if (!candidates.length) throw new Error(`B3: ${c.trigger.label}: nothing left to happen and the rollout is not complete`);
    const at = Math.max(now, Math.min(...candidates));
    sim.advance(at - now);
    watchEvents();
    timers.runDue();
    if (c.trigger.kind === "cron" && sim.clock.nowMs() >= nextTick) {
      nextTick += period;
      await step();
    }
    while (due.length && doneAt === undefined) {
      due.shift();
      await step();
    }
  }
  const idealMs = Math.ceil(c.replicas / c.maxUnavailable) * c.resizeLatencyMs;
  const totalMs = doneAt - t0;
  return {
    trigger: c.trigger.label,
    replicas: c.replicas,
    maxUnavailable: c.maxUnavailable,
    idealMs,
    totalMs,
    ratio: totalMs / idealMs,
    steps,
    claimWrites,
  };
}

export interface B3Result {
  resizeLatencyMs: number;
  /** One claim's write → ready as the simulated storage really does it (a 1-replica rollout, no debounce). */
  measuredLatencyMs: number;
  rows: RolloutResult[];
  target: { relayRatio: number };
}

export async function runB3(log: (line: string) => void = () => {}, replicas = 50, resizeLatencyMs = 60_000): Promise<B3Result> {
  const calibration = await runRollout({ replicas: 1, maxUnavailable: 1, resizeLatencyMs, trigger: B3_TRIGGERS[1]! });
  const rows: RolloutResult[] = [];
  for (const maxUnavailable of [1, 5]) {
    for (const trigger of B3_TRIGGERS) {
      const r = await runRollout({ replicas, maxUnavailable, resizeLatencyMs, trigger });
      log(`  B3 ${trigger.label} k=${maxUnavailable}: ${(r.totalMs / 1000).toFixed(0)} s, ratio ${r.ratio.toFixed(3)}, ${r.steps} steps`);
      rows.push(r);
    }
  }
  return { resizeLatencyMs, measuredLatencyMs: calibration.totalMs, rows, target: { relayRatio: 1.05 } };
}
