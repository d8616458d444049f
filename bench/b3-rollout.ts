// B3: how long a whole rollout takes on the simulated cluster's virtual clock, against the ideal
// ⌈N/k⌉·L (N ordinals, k = maxUnavailable, L = one claim's resize latency), for each way steps
// are triggered:
// - relay: the shipped watch relay's Debouncer (functions/relay.ts) fed by every change the
//   cluster records (controllers' and claimstep's own writes, as a watch sees them), firing a step;
// - relay, no debounce: a step at the very instant anything changes (the event-driven bound);
// - relay with the earlier 2 s quiet period, for comparison;
// - cron every P seconds: one step per tick, the change landing half a period before a tick.
// Every step is the real one (functions/step.ts runStep over the simulated reader and writers).
//
// B3-claims-first: the same set with `claimstep.io/pod-coordination: ClaimsFirst` and a new pod
// template at once (KEP-4650's order, docs/pods.md P1–P5): per ordinal, highest first, the claim is
// written and becomes ready (L_claim), then claimstep lowers the partition and the StatefulSet
// controller replaces that ordinal's pod, which starts and becomes Ready (L_pod); only then is the
// ordinal out of flight. Set up as `claimstep set --hold-pods` then `kubectl set image` do it
// (the sim's `pods-claims-first` scenario): ideal ⌈N/k⌉·(L_claim + L_pod).

import { KubeReader } from "../adapters/kube/reader.js";
import { kubeWriters } from "../adapters/kube/writer.js";
import { claimTemplate, SimCluster, statefulSetManifest } from "../adapters/sim/cluster.js";
import { Keys } from "../core/keys.js";
import type { SetRef } from "../core/types.js";
import type { Recorder } from "../core/view/recorder.js";
import { alarmAfterStep } from "../functions/fleet/schedule.js";
import { recordedStep } from "../functions/recorded-step.js";
import { DEFAULT_DEBOUNCE, type DebounceOptions, Debouncer, type RelayClock } from "../functions/relay/index.js";
import { runStep, type StepOptions } from "../functions/step.js";

export type Trigger =
  | { kind: "relay"; debounce: DebounceOptions; label: string }
  | { kind: "cron"; periodMs: number; label: string }
  /**
   * Fleet mode (functions/fleet/): the cron every `periodMs` pokes the set's Durable Object (a step
   * at once), and after each step the object's alarm is set at the decision's requeueAfter
   * (functions/fleet/schedule.ts alarmAfterStep): no relay.
   */
  | { kind: "alarm"; periodMs: number; label: string };

const seconds = (ms: number) => `${ms / 1000} s`;

export const B3_TRIGGERS: readonly Trigger[] = [
  {
    kind: "relay",
    debounce: DEFAULT_DEBOUNCE,
    label: `relay (shipped: ${seconds(DEFAULT_DEBOUNCE.quietMs)} quiet, ≤ ${seconds(DEFAULT_DEBOUNCE.maxWaitMs)})`,
  },
  { kind: "relay", debounce: { quietMs: 0, maxWaitMs: 0 }, label: "relay (no debounce)" },
  // The relay's earlier default, for comparison.
  {
    kind: "relay",
    debounce: { quietMs: 2000, maxWaitMs: 10_000 },
    label: "relay (2 s quiet, ≤ 10 s: earlier default)",
  },
  { kind: "cron", periodMs: 60_000, label: "cron 60 s" },
  { kind: "cron", periodMs: 300_000, label: "cron 300 s" },
];

export interface RolloutCase {
  replicas: number;
  maxUnavailable: number;
  /** Write → ready of one claim: reactMs + resizeMs + nodeResizeMs of the simulated storage. */
  resizeLatencyMs: number;
  trigger: Trigger;
  /**
   * ClaimsFirst (B3-claims-first): a pod template change rolls out with the claims, each pod
   * replaced after its claims are ready; the replaced pod starts in this long (the sim's
   * podStartMs). Absent: claims only, the pods are never replaced.
   */
  claimsFirst?: { podStartMs: number };
  /** The ideal's per-ordinal latency; default `resizeLatencyMs` (claims only). */
  idealOrdinalMs?: number;
  /**
   * The metrics recorder on (B9: B3 with the recorder on vs off): each step recorded as the Node
   * server records it, and every API request counted through the client's hook.
   */
  recorder?: Recorder;
}

/** When a step acted, and what it decided (for the calibration and for reading a slow rollout). */
export interface StepRecord {
  /** Virtual ms since the change. */
  atMs: number;
  phase: string;
  reason: string;
  action?: string;
}

export interface RolloutResult {
  /** "claims": the claim rollout alone; "claims-first": with a pod template change, ClaimsFirst. */
  mode?: "claims" | "claims-first";
  trigger: string;
  replicas: number;
  maxUnavailable: number;
  idealMs: number;
  totalMs: number;
  ratio: number;
  steps: number;
  claimWrites: number;
  /** Partition patches claimstep made (held, lowered, restored); claims-first only. */
  partitionPatches?: number;
  /** Alarm rows: the change → the first step (the cron's pick-up, half a period here). */
  pickUpMs?: number;
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
  const sim = new SimCluster({
    seed: 7,
    volumeAttributesClasses: false,
    latencies: {
      reactMs: REACT_MS,
      resizeMs,
      nodeResizeMs: NODE_RESIZE_MS,
      ...(c.claimsFirst ? { podStartMs: c.claimsFirst.podStartMs } : {}),
    },
  });
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
  if (pods !== c.replicas)
    throw new Error(`B3: the simulated StatefulSet has ${pods} pods after settling, expected ${c.replicas}`);
  return sim;
}

/** Run one rollout to Complete and time it on the virtual clock. */
export async function runRollout(c: RolloutCase): Promise<RolloutResult> {
  return (await traceRollout(c)).result;
}

/** The same, with every acting step's time and decision. */
export async function traceRollout(c: RolloutCase): Promise<{ result: RolloutResult; timeline: StepRecord[] }> {
  const sim = await clusterFor(c);
  const recorder = c.recorder;
  const counted = recorder ? sim.newClient({ onRequest: (r) => recorder.apiRequest(r) }) : undefined;
  const reader = counted ? new KubeReader(counted) : sim.reader;
  const writers = counted ? kubeWriters(counted, { reportingInstance: "claimstep-sim" }) : sim.writers;
  const run = recorder ? (o: StepOptions) => recordedStep({ ...o, recorder }) : runStep;
  const timers = new VirtualTimers(() => sim.clock.nowMs());
  const due: string[] = [];
  const debouncer =
    c.trigger.kind === "relay" ? new Debouncer(timers, c.trigger.debounce, (key) => due.push(key)) : undefined;

  // The change: desired templates written to the set (as `claimstep set` or a CI call would).
  const desired = JSON.stringify([claimTemplate({ name: "data", storage: "20Gi", storageClassName: "fast" })]);
  if (c.claimsFirst) {
    // `claimstep set web data --storage 20Gi --hold-pods`: the templates, ClaimsFirst, the user's
    // partition (none: 0) recorded and the partition = replicas, in one patch (P5)…
    const annotations = { [Keys.templates]: desired, [Keys.podCoordination]: "ClaimsFirst", [Keys.userPartition]: "0" };
    await sim.admin.mergePatch(
      "statefulsets",
      REF.namespace,
      REF.name,
      { metadata: { annotations }, spec: { updateStrategy: { rollingUpdate: { partition: c.replicas } } } },
      { fieldManager: "kubectl" },
    );
    // …then `kubectl set image`: the pod rollout the partition holds back.
    await sim.setImage(REF.namespace, REF.name, "registry.k8s.io/pause:3.10");
  } else {
    await sim.admin.mergePatch(
      "statefulsets",
      REF.namespace,
      REF.name,
      { metadata: { annotations: { [Keys.templates]: desired } } },
      { fieldManager: "kubectl" },
    );
  }
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
  let partitionPatches = 0;
  const timeline: StepRecord[] = [];
  let doneAt: number | undefined;
  let alarmAt: number | undefined;
  const step = async () => {
    steps++;
    const { decision, outcome } = await run({ reader, writers, ref: REF, now: sim.now() });
    if (c.trigger.kind === "alarm")
      alarmAt = alarmAfterStep({
        nowMs: sim.clock.nowMs(),
        ...(decision.requeueAfter !== undefined ? { requeueAfterSeconds: decision.requeueAfter } : {}),
      });
    if (outcome.kind === "applied" && decision.action) {
      if (decision.action.type === "PatchPartition") partitionPatches++;
      else claimWrites++;
      timeline.push({
        atMs: sim.clock.nowMs() - t0,
        phase: decision.phase,
        reason: decision.reason,
        action: decision.action.type,
      });
    }
    if (outcome.kind === "retry" || outcome.kind === "refused")
      throw new Error(`B3: step failed (${outcome.kind}): ${decision.message}`);
    if (decision.phase === "Complete") {
      doneAt = sim.clock.nowMs();
      timeline.push({ atMs: doneAt - t0, phase: decision.phase, reason: decision.reason });
    } else if (decision.phase === "Blocked") throw new Error(`B3: rollout blocked: ${decision.message}`);
    watchEvents();
  };

  const period = c.trigger.kind === "cron" || c.trigger.kind === "alarm" ? c.trigger.periodMs : 0;
  let firstStepAt: number | undefined;
  let nextTick = t0 + period / 2;
  while (doneAt === undefined) {
    // The controllers react to the step's writes at the instant they were made, and a watch sees
    // those reactions then, not at the next instant the loop visits (a debounce timer's).
    sim.settle();
    watchEvents();
    const now = sim.clock.nowMs();
    if (now - t0 > GIVE_UP_MS)
      throw new Error(
        `B3: ${c.trigger.label} k=${c.maxUnavailable} did not complete within ${GIVE_UP_MS / 3600_000} h of virtual time`,
      );
    const candidates = [sim.nextActivity()?.getTime(), timers.next(), period ? nextTick : undefined, alarmAt].filter(
      (t): t is number => t !== undefined,
    );
    if (!candidates.length)
      throw new Error(`B3: ${c.trigger.label}: nothing left to happen and the rollout is not complete`);
    const at = Math.max(now, Math.min(...candidates));
    sim.advance(at - now);
    watchEvents();
    timers.runDue();
    if (c.trigger.kind === "cron" && sim.clock.nowMs() >= nextTick) {
      nextTick += period;
      await step();
    }
    if (c.trigger.kind === "alarm") {
      // The cron's poke: an alarm at once, unless one is due sooner.
      if (sim.clock.nowMs() >= nextTick) {
        nextTick += period;
        alarmAt = Math.min(alarmAt ?? Infinity, sim.clock.nowMs());
      }
      if (alarmAt !== undefined && sim.clock.nowMs() >= alarmAt && doneAt === undefined) {
        alarmAt = undefined;
        firstStepAt ??= sim.clock.nowMs();
        await step();
      }
    }
    while (due.length && doneAt === undefined) {
      due.shift();
      await step();
    }
  }
  const idealMs = Math.ceil(c.replicas / c.maxUnavailable) * (c.idealOrdinalMs ?? c.resizeLatencyMs);
  const totalMs = doneAt - t0;
  const result: RolloutResult = {
    mode: c.claimsFirst ? "claims-first" : "claims",
    trigger: c.trigger.label,
    replicas: c.replicas,
    maxUnavailable: c.maxUnavailable,
    idealMs,
    totalMs,
    ratio: totalMs / idealMs,
    steps,
    claimWrites,
    ...(c.claimsFirst ? { partitionPatches } : {}),
    ...(firstStepAt !== undefined ? { pickUpMs: firstStepAt - t0 } : {}),
  };
  return { result, timeline };
}

/**
 * L_claim and L_pod as the simulated cluster really does them: a 1-replica claims-first rollout
 * with a step at every change, so each acting step follows its cause at the same instant. L_claim
 * is the claim write → the step that lowers the partition (the claim is ready); L_pod is that patch
 * → the step that restores the user's partition (the replaced pod runs the new revision, Ready).
 */
export function latenciesOf(timeline: readonly StepRecord[]): { claimMs: number; podMs: number } {
  const at = (reason: string) => {
    const s = timeline.find((x) => x.reason === reason);
    if (!s)
      throw new Error(
        `B3: no ${reason} step in the calibration run (${timeline.map((x) => x.reason).join(", ") || "no steps"})`,
      );
    return s.atMs;
  };
  const write = timeline.find((x) => x.action === "PatchClaim");
  if (!write) throw new Error("B3: the calibration run wrote no claim");
  const lowered = at("PartitionLowered");
  return { claimMs: lowered - write.atMs, podMs: at("PartitionRestored") - lowered };
}

export interface B3ClaimsFirst {
  /** The replaced pod's start, as configured (the sim's podStartMs). */
  podStartMs: number;
  /** L_claim and L_pod measured on a 1-replica claims-first rollout, no debounce (`latenciesOf`). */
  claimLatencyMs: number;
  podLatencyMs: number;
  /** ⌈N/k⌉·(L_claim + L_pod) per row, with the measured L_claim and L_pod. */
  rows: RolloutResult[];
}

export interface B3Result {
  resizeLatencyMs: number;
  /** One claim's write → ready as the simulated storage really does it (a 1-replica rollout, no debounce). */
  measuredLatencyMs: number;
  rows: RolloutResult[];
  /** B3-claims-first (absent from runs before it was measured). */
  claimsFirst?: B3ClaimsFirst;
  target: { relayRatio: number };
}

/** maxUnavailable of the claims-only rows and of the claims-first ones. */
export const B3_K = [1, 2, 5] as const;
export const B3_CLAIMS_FIRST_K = [1, 2, 5] as const;
/**
 * The triggers B3-claims-first runs with: the shipped relay, a step at every change, and cron
 * every 60 s for comparison (one action per tick: a claim write and a partition patch per ordinal).
 */
export const B3_CLAIMS_FIRST_TRIGGERS: readonly Trigger[] = [B3_TRIGGERS[0]!, B3_TRIGGERS[1]!, B3_TRIGGERS[3]!];

export interface B3Options {
  replicas?: number;
  resizeLatencyMs?: number;
  /** The replaced pod's start in the claims-first rows: a database that takes a while to come up. */
  podStartMs?: number;
  claimsOnlyK?: readonly number[];
  claimsFirstK?: readonly number[];
  triggers?: readonly Trigger[];
  claimsFirstTriggers?: readonly Trigger[];
}

export async function runB3(log: (line: string) => void = () => {}, opts: B3Options = {}): Promise<B3Result> {
  const replicas = opts.replicas ?? 50;
  const resizeLatencyMs = opts.resizeLatencyMs ?? 60_000;
  const podStartMs = opts.podStartMs ?? 30_000;
  const calibration = await runRollout({ replicas: 1, maxUnavailable: 1, resizeLatencyMs, trigger: B3_TRIGGERS[1]! });
  const rows: RolloutResult[] = [];
  for (const maxUnavailable of opts.claimsOnlyK ?? B3_K) {
    for (const trigger of opts.triggers ?? B3_TRIGGERS) {
      const r = await runRollout({ replicas, maxUnavailable, resizeLatencyMs, trigger });
      log(
        `  B3 ${trigger.label} k=${maxUnavailable}: ${(r.totalMs / 1000).toFixed(0)} s, ratio ${r.ratio.toFixed(3)}, ${r.steps} steps`,
      );
      rows.push(r);
    }
  }
  const claimsFirst = { podStartMs };
  const { timeline } = await traceRollout({
    replicas: 1,
    maxUnavailable: 1,
    resizeLatencyMs,
    trigger: B3_TRIGGERS[1]!,
    claimsFirst,
  });
  const { claimMs, podMs } = latenciesOf(timeline);
  log(`  B3-claims-first calibration: L_claim ${(claimMs / 1000).toFixed(1)} s, L_pod ${(podMs / 1000).toFixed(1)} s`);
  const cfRows: RolloutResult[] = [];
  for (const maxUnavailable of opts.claimsFirstK ?? B3_CLAIMS_FIRST_K) {
    for (const trigger of opts.claimsFirstTriggers ?? B3_CLAIMS_FIRST_TRIGGERS) {
      const r = await runRollout({
        replicas,
        maxUnavailable,
        resizeLatencyMs,
        trigger,
        claimsFirst,
        idealOrdinalMs: claimMs + podMs,
      });
      log(
        `  B3-claims-first ${trigger.label} k=${maxUnavailable}: ${(r.totalMs / 1000).toFixed(0)} s, ratio ${r.ratio.toFixed(3)}, ${r.steps} steps, ${r.partitionPatches} partition patches`,
      );
      cfRows.push(r);
    }
  }
  return {
    resizeLatencyMs,
    measuredLatencyMs: calibration.totalMs,
    rows,
    claimsFirst: { podStartMs, claimLatencyMs: claimMs, podLatencyMs: podMs, rows: cfRows },
    target: { relayRatio: 1.05 },
  };
}
