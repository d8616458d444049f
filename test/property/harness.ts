// Plays one scenario on the simulated cluster: claimstep steps (sometimes two racing), virtual time
// between them, edits mid-rollout; the invariants are checked after every invocation. Steps reach
// the cluster as they reach a real one: the production KubeReader and direct writers over its HTTP handler.
import { ApiError } from "../../adapters/api-error.js";
import { claimTemplate, type SetSpec, SimCluster, statefulSetManifest } from "../../adapters/sim/cluster.js";
import { DEFAULT_LATENCIES } from "../../adapters/sim/controllers/context.js";
import { Prng } from "../../adapters/sim/prng.js";
import type { Json } from "../../adapters/sim/store.js";
import { Keys } from "../../core/keys.js";
import type { ClaimTemplate } from "../../core/kube/k8s.js";
import { toBytes } from "../../core/kube/quantity.js";
import type { MetricsReader, StateReader } from "../../core/ports.js";
import type { Decision, Snapshot, UsageReading } from "../../core/types.js";
import { runStep, type StepResult } from "../../functions/step.js";
import {
  type AutogrowLedger,
  autogrowI7,
  checkAutogrowEnd,
  checkInFlight,
  checkOptOut,
  checkPodsReady,
  checkRestored,
  checkWrites,
  completeIsTrue,
  completeWithExpansionUnderWay,
  growthOf,
  inFlight,
  isGrowth,
  newAutogrowLedger,
  newPodLedger,
  readyWithExpansionUnderWay,
  type Violation,
  viewOf,
} from "./invariants.js";
import type { Scenario, TemplateSetup } from "./scenario.js";

export interface RunResult {
  violations: Violation[];
  steps: number;
  /** Ordinals in scope at the end, and their claims (for steps-per-ordinal figures). */
  ordinals: number;
  claims: number;
  phase: Decision["phase"] | "none";
  reason: string;
  /** The last decision's message (why a hostile run stopped where it did). */
  message: string;
  converged: boolean;
  races: number;
  transientFailures: number;
  faults: number;
  /** claimstep's accepted partition patches and evictions, and the evictions a budget refused. */
  partitionPatches: number;
  evictions: number;
  budgetRefusals: number;
  /** Occurrences of known, reported core bugs (KNOWN BUG 3), which are not counted as violations. */
  knownBugHits: string[];
  /** Autogrow: claimstep's accepted growths, the usage queries and those that failed. */
  growths: number;
  usageReads: number;
  usageFailures: number;
  /** An autogrow case that ended Blocked/AutogrowLimit with the template at max (not converged, and rightly so). */
  limited: boolean;
  /** The set was opted out (an optOut edit) and claimstep then left it Idle. */
  optedOut: boolean;
}

const ref = { namespace: "default", name: "db" };
const NOT_REACHED = "never reached Converged";

function templatesOf(s: Scenario, extraGi: number, desired: boolean): ClaimTemplate[] {
  return s.templates.map((t: TemplateSetup, i) => {
    const growGi = desired ? s.desired.growGi[i]! + extraGi : 0;
    const vac = desired ? s.desired.vac[i] : t.vac;
    const tpl = claimTemplate({
      name: t.name,
      storage: `${Math.max(1, t.storageGi + growGi)}Gi`,
      storageClassName: desired && s.desired.classOf?.template === i ? s.desired.classOf.className : t.className,
      ...(vac !== undefined ? { volumeAttributesClassName: vac } : {}),
      ...(desired && s.desired.label ? { labels: { tier: `t${i}` } } : {}),
    });
    if (desired && s.desired.accessModes === i) tpl.spec.accessModes = ["ReadWriteMany"];
    return tpl;
  });
}

function annotationFor(s: Scenario, extraGi: number): string {
  if (s.desired.invalid === "json") return "[{not json";
  const templates = templatesOf(s, extraGi, true);
  if (s.desired.invalid === "unknown-template") templates.push({ ...templates[0]!, metadata: { name: "extra" } });
  return JSON.stringify(templates);
}

const patchSet = (c: SimCluster, patch: Json) =>
  c.admin.mergePatch("statefulsets", ref.namespace, ref.name, patch, { fieldManager: "kubectl" });

interface EditState {
  extraGi: number;
  /** Pod template changes made so far (the image tag). */
  images: number;
  /** The user's partition as the user last set it (I10 d). */
  userPartition: number;
  /** The set was opted out (kind optOut): it ends Idle, not Complete. */
  optedOut?: boolean;
}

async function applyEdit(c: SimCluster, s: Scenario, edit: Scenario["edits"][number], state: EditState): Promise<void> {
  switch (edit.kind) {
    case "podNotReady": {
      const set = c.get("statefulsets", ref.namespace, ref.name)!;
      const replicas = Number(set.spec.replicas ?? 1);
      if (!replicas) return;
      const ordinal = Number(set.spec.ordinals?.start ?? 0) + (edit.index % replicas);
      c.failReadiness(ref.namespace, `${ref.name}-${ordinal}`, edit.forSeconds * 1000);
      return;
    }
    case "optOut":
      // KEP-4650: back to OnClaimDelete, "to unblock normal Pod rollout immediately".
      state.optedOut = true;
      await patchSet(c, { metadata: { annotations: { [Keys.strategy]: "OnClaimDelete" } } });
      return;
    case "image":
      state.images++;
      await c.setImage(ref.namespace, ref.name, `registry.k8s.io/pause:3.${10 + state.images}`);
      return;
    case "userPartition": {
      // docs/pods.md: while claimstep holds the partition, the user's goes in the record.
      state.userPartition = edit.partition;
      const held =
        c.get("statefulsets", ref.namespace, ref.name)?.metadata.annotations?.[Keys.userPartition] !== undefined;
      await patchSet(
        c,
        held
          ? { metadata: { annotations: { [Keys.userPartition]: String(edit.partition) } } }
          : { spec: { updateStrategy: { rollingUpdate: { partition: edit.partition } } } },
      );
      return;
    }
    case "retarget":
      state.extraGi += edit.growGi;
      await patchSet(c, { metadata: { annotations: { [Keys.templates]: annotationFor(s, state.extraGi) } } });
      return;
    case "lower":
      state.extraGi -= edit.byGi;
      await patchSet(c, { metadata: { annotations: { [Keys.templates]: annotationFor(s, state.extraGi) } } });
      return;
    case "rollback":
      // Back to the live templates: claims already grown stay grown (target = max(template, spec)).
      await patchSet(c, { metadata: { annotations: { [Keys.templates]: null } } });
      return;
    case "scale":
      await patchSet(c, { spec: { replicas: edit.replicas } });
      return;
    case "partition":
      state.userPartition = edit.partition;
      await patchSet(c, { spec: { updateStrategy: { rollingUpdate: { partition: edit.partition } } } });
      return;
    case "maxUnavailable":
      await patchSet(c, { spec: { updateStrategy: { rollingUpdate: { maxUnavailable: edit.value } } } });
      return;
    case "workload": {
      const w = s.autogrow!.workloads[edit.index]!;
      const t = s.templates[w.template]!.name;
      const claims = w.ordinal !== undefined ? `${t}-${ref.name}-${s.ordinalsStart + w.ordinal}` : `${t}-${ref.name}-`;
      c.setWorkload(ref.namespace, claims, {
        bytesPerSecond: w.bytesPerSecond,
        ...(w.startUsedMi !== undefined ? { startUsed: `${w.startUsedMi}Mi` } : {}),
      });
      return;
    }
    case "workloadStop":
      c.clearWorkloads(ref.namespace);
      return;
    case "reapply":
      await patchSet(c, { metadata: { annotations: { [Keys.templates]: annotationFor(s, state.extraGi) } } });
      return;
    case "deleteClaim": {
      // `kubectl delete pvc` on a claim in use: the API server marks it, the pod keeps it (rule 13).
      const set = c.get("statefulsets", ref.namespace, ref.name)!;
      const replicas = Number(set.spec.replicas ?? 1);
      if (!replicas) return;
      const ordinal = Number(set.spec.ordinals?.start ?? 0) + (edit.index % replicas);
      const name = `${s.templates[0]!.name}-${ref.name}-${ordinal}`;
      if (c.get("persistentvolumeclaims", ref.namespace, name))
        await c.admin.delete("persistentvolumeclaims", ref.namespace, name, { fieldManager: "kubectl" });
      return;
    }
  }
}

export async function buildCluster(s: Scenario): Promise<SimCluster> {
  const latencies = {
    bindMs: s.latency.bindMs,
    ...(s.latency.nodeResizeMs !== undefined ? { nodeResizeMs: s.latency.nodeResizeMs } : {}),
    ...(s.latency.podStartMs !== undefined ? { podStartMs: s.latency.podStartMs } : {}),
  };
  const c = new SimCluster({ seed: s.seed, volumeAttributesClasses: s.vacApi, faults: s.faults, latencies });
  for (const cls of s.classes)
    await c.addStorageClass(cls.name, {
      ...(cls.allowVolumeExpansion !== undefined ? { allowVolumeExpansion: cls.allowVolumeExpansion } : {}),
      driver: cls.driver,
    });
  if (s.vacApi) for (const vac of ["silver", "gold"]) await c.addVolumeAttributesClass(vac);
  if (s.quotaGi !== undefined) await c.addStorageQuota(ref.namespace, "storage", `${s.quotaGi}Gi`);
  const spec: SetSpec = {
    name: ref.name,
    replicas: s.replicas,
    ordinalsStart: s.ordinalsStart,
    ...(s.partition !== undefined ? { partition: s.partition } : {}),
    ...(s.maxUnavailable !== undefined ? { maxUnavailable: s.maxUnavailable } : {}),
    podManagementPolicy: s.parallel ? "Parallel" : "OrderedReady",
    templates: s.templates.map((t) => ({
      name: t.name,
      storage: `${t.storageGi}Gi`,
      storageClassName: t.className,
      ...(t.vac ? { volumeAttributesClassName: t.vac } : {}),
    })),
  };
  const manifest = statefulSetManifest(spec);
  (manifest.spec as Json).volumeClaimTemplates = templatesOf(s, 0, false);
  await c.createStatefulSet(manifest, 2 * 60_000 + s.replicas * (10_000 + (s.latency.podStartMs ?? 0)));
  const pods = s.pods;
  if (pods?.budget) {
    await c.addPodDisruptionBudget(ref.namespace, ref.name, {
      minAvailable: pods.budget.minAvailable,
      matchLabels: { app: ref.name },
    });
    if (pods.budget.relaxAfterMs !== undefined) {
      const at = new Date(c.now().getTime() + pods.budget.relaxAfterMs);
      c.scheduleEdit(at, {
        resource: "poddisruptionbudgets",
        namespace: ref.namespace,
        name: ref.name,
        mergePatch: { spec: { minAvailable: pods.budget.minAvailable - 1 } },
      });
    }
  }
  // The request, as `kubectl annotate` or `claimstep set` writes it: with --hold-pods (P5) the
  // same merge patch holds every pod (partition = replicas) and records the user's partition.
  const annotations: Record<string, string> = {
    [Keys.templates]: annotationFor(s, 0),
    ...(pods?.claimsFirst ? { [Keys.podCoordination]: "ClaimsFirst" } : {}),
    ...(pods?.restartAfter ? { [Keys.restartPods]: "WhenRequired", [Keys.restartAfter]: pods.restartAfter } : {}),
    ...(s.autogrow ? { [Keys.autogrow]: JSON.stringify(s.autogrow.policy) } : {}),
  };
  const live = s.partition ?? 0;
  if (pods?.hold) annotations[Keys.userPartition] = String(live);
  await patchSet(c, {
    metadata: { annotations },
    ...(pods?.hold ? { spec: { updateStrategy: { rollingUpdate: { partition: Math.max(s.replicas, live) } } } } : {}),
  });
  return c;
}

/** Failures of the usage query: Prometheus's own answers (through the sim), or a reader answering { ok: false }. */
const PROMETHEUS_FAILURES = [
  { code: 503, body: JSON.stringify({ status: "error", errorType: "unavailable", error: "no healthy upstream" }) },
  { code: 502, body: "<html><head><title>502 Bad Gateway</title></head></html>", contentType: "text/html" },
  {
    code: 422,
    body: JSON.stringify({
      status: "error",
      errorType: "execution",
      error: "query processing would load too many samples into memory",
    }),
  },
] as const;

/**
 * The production PrometheusMetrics over the sim's /prometheus (sim.metrics), each reading recorded
 * in the ledger with the audit seq it was read at (the invariants judge a growth on the usage its
 * step read); some fail, as `metricsFailure` says. Its own PRNG: the rest of a run is as without it.
 */
export class RecordingMetrics implements MetricsReader {
  private readonly prng: Prng;
  constructor(
    private readonly c: SimCluster,
    readonly ledger: AutogrowLedger,
    private readonly failureRate: number,
    seed: number,
  ) {
    this.prng = new Prng(seed ^ 0x27d4eb2f);
  }

  async usage(r: typeof ref, claims: readonly string[], signal?: AbortSignal): Promise<UsageReading> {
    let reading: UsageReading;
    if (this.prng.chance(this.failureRate)) {
      const pick = this.prng.int(0, PROMETHEUS_FAILURES.length);
      if (pick === PROMETHEUS_FAILURES.length)
        reading = { ok: false, message: "the metrics reader failed (test stub)" };
      else {
        this.c.prometheus.failNext({ ...PROMETHEUS_FAILURES[pick]! });
        reading = await this.c.metrics.usage(r, claims, signal);
      }
    } else reading = await this.c.metrics.usage(r, claims, signal);
    this.ledger.readings.push({ seqAt: this.c.audit.length, reading });
    return reading;
  }
}

/** One invocation, or two racing (both load, then both plan and apply). Never throws for API errors. */
async function invoke(
  c: SimCluster,
  race: boolean,
  metrics: RecordingMetrics,
): Promise<{
  results: StepResult[];
  raced: boolean;
  failures: number;
  thrown: Violation[];
  staleFromSeq?: number;
  firstReadUsage: boolean;
}> {
  const thrown: Violation[] = [];
  let failures = 0;
  const guarded = async (reader: StateReader): Promise<StepResult | undefined> => {
    try {
      const r = await runStep({ reader, writers: c.writers, ref, now: c.now(), metrics });
      if (r.outcome.kind === "retry") failures++;
      return r;
    } catch (err) {
      if (err instanceof ApiError && err.isTransient) {
        failures++;
        return undefined;
      }
      thrown.push({ invariant: "crash", message: `runStep threw: ${(err as Error).message}` });
      return undefined;
    }
  };
  let stale: Snapshot | undefined;
  if (race) {
    try {
      stale = await c.reader.load(ref);
    } catch (err) {
      if (!(err instanceof ApiError && err.isTransient)) throw err;
      failures++;
    }
  }
  const results: StepResult[] = [];
  const readMark = metrics.ledger.readings.length;
  const first = await guarded(c.reader);
  const firstReadUsage = metrics.ledger.readings.slice(readMark).some((r) => r.reading.ok);
  if (first) results.push(first);
  let staleFromSeq: number | undefined;
  if (stale) {
    const snapshot = stale;
    staleFromSeq = c.audit.length + 1;
    const second = await guarded({ load: async () => snapshot });
    if (second) results.push(second);
  }
  return {
    results,
    raced: stale !== undefined,
    failures,
    thrown,
    firstReadUsage,
    ...(staleFromSeq !== undefined ? { staleFromSeq } : {}),
  };
}

/** Whether a claim in scope is mounted (the kubelet reports it): else a usage query finds nothing. */
function mountedInScope(c: SimCluster, s: Scenario): boolean {
  const v = viewOf(c, ref);
  const mounted = new Set(c.volumeStats().map((x) => x.claim));
  for (let o = v.first; o < v.end; o++)
    if (s.templates.some((t) => mounted.has(`${t.name}-${ref.name}-${o}`))) return true;
  return false;
}

/** At most how many growths an autogrow case makes: each is 1Gi at least (rounded up), up to max. */
function growthsBound(s: Scenario): number {
  const a = s.autogrow!;
  const maxGi = Math.ceil(Number(toBytes(a.policy.max)) / 2 ** 30);
  const retargetGi = s.edits.reduce((sum, e) => sum + (e.kind === "retarget" ? e.growGi : 0), 0);
  let total = 0;
  s.templates.forEach((t) => {
    if (a.policy.template !== undefined && a.policy.template !== t.name) return;
    // From the smallest the template may be: its live size (a rollback), less what a lowering takes.
    total += Math.max(0, maxGi - Math.max(1, t.storageGi - 6)) + 1 + retargetGi;
  });
  return Math.min(total, 60);
}

/** `trace` receives one line per invocation (for replaying a failing scenario by hand). */
export async function runScenario(s: Scenario, opts: { trace?: (line: string) => void } = {}): Promise<RunResult> {
  const c = await buildCluster(s);
  const prng = new Prng(s.seed ^ 0x5bd1e995);
  const violations: Violation[] = [];
  const pending = [...s.edits].sort((a, b) => a.atStep - b.atStep);
  const state: EditState = { extraGi: 0, images: 0, userPartition: s.partition ?? 0 };
  const ledger = newPodLedger();
  const grow = newAutogrowLedger();
  const metrics = new RecordingMetrics(c, grow, s.autogrow?.metricsFailure ?? 0, s.seed);
  // Enough invocations for the slowest claim to settle between gaps, for every claim the set may have.
  const faulty = (s.faults.tooManyRequests ?? 0) + (s.faults.serverError ?? 0) + (s.faults.timeout ?? 0) > 0;
  const flaky = s.classes.some((c) => c.driver.resize === "flaky");
  const mostReplicas = Math.max(1, s.replicas, ...s.edits.map((e) => (e.kind === "scale" ? e.replicas : 0)));
  // Pods: a replacement per ordinal (ClaimsFirst waits for it), a restart after restart-after and
  // a refused eviction's two-minute charge per ordinal, a budget relaxed late.
  const podStartMs = s.latency.podStartMs ?? DEFAULT_LATENCIES.podStartMs;
  const restartMs = s.pods?.restartAfter
    ? (s.pods.restartAfter === "5m" ? 300_000 : s.pods.restartAfter === "1m" ? 60_000 : 30_000) + 120_000 + podStartMs
    : 0;
  const podMs = s.pods ? 2 * podStartMs + restartMs : 0;
  const claimMs =
    s.latency.bindMs +
    s.latency.resizeMs +
    s.latency.modifyMs +
    (s.latency.nodeResizeMs ?? 0) +
    (flaky ? 2 * DEFAULT_LATENCIES.retryMs : 0) +
    10_000;
  const gapMs = ((s.gapSeconds[0] + s.gapSeconds[1]) / 2) * 1000;
  const podSteps = s.pods ? mostReplicas * (podMs / gapMs + 3) + (s.pods.budget?.relaxAfterMs ?? 0) / gapMs : 0;
  const rollout = mostReplicas * s.templates.length * (claimMs / gapMs + 3) + podSteps;
  // Autogrow: the workloads run until their last edit; then every growth (1Gi at least, up to max)
  // is a rollout of its own, with its query failing now and then.
  const growths = s.autogrow ? growthsBound(s) : 0;
  const lastEdit = Math.max(0, ...s.edits.map((e) => e.atStep));
  const autogrowSteps = s.autogrow ? lastEdit + growths * (rollout + 10) * (1 + 2 * s.autogrow.metricsFailure) : 0;
  const budget = Math.ceil((60 + rollout + 40 * s.edits.length + autogrowSteps) * (faulty ? 3 : 1));
  // A waiting rollout (kind waiting) whose decision stops changing has met the wait it is allowed.
  let lastProgressMs = c.now().getTime();
  // A hostile rollout whose decision stops changing has met its obstacle.
  let unchanged = 0;
  let lastKey = "";
  let steps = 0;
  let races = 0;
  let transientFailures = 0;
  let last: Decision | undefined;
  let converged = false;
  let limited = false;
  let optedOut = false;

  for (let i = 0; i < budget; i++) {
    while (pending.length && pending[0]!.atStep <= i) await applyEdit(c, s, pending.shift()!, state);

    const before = viewOf(c, ref);
    const flyingBefore = inFlight(before);
    const auditMark = c.audit.length;
    const readMark = grow.readings.length;
    const { results, raced, failures, thrown, staleFromSeq, firstReadUsage } = await invoke(
      c,
      prng.chance(s.raceRate),
      metrics,
    );
    steps += 1 + (raced ? 1 : 0);
    races += raced ? 1 : 0;
    transientFailures += failures;
    violations.push(...thrown);
    const after = viewOf(c, ref);
    const entries = c.audit.slice(auditMark);
    opts.trace?.(
      `#${i} t=${c.now().toISOString()}${raced ? " race" : ""} replicas=${after.end - after.start} in flight ${[...flyingBefore].join(",")}→${[...inFlight(after)].join(",")} | ` +
        results
          .map((r) => `${r.decision.phase}/${r.decision.reason} ${r.outcome.kind}: ${r.decision.message}`)
          .join(" || ") +
        ` | writes: ${entries
          .filter(
            (e) =>
              e.actor === "claimstep" &&
              (e.resource === "persistentvolumeclaims" ||
                (e.resource === "pods" && e.verb === "create") ||
                (e.resource === "statefulsets" && ((e.body?.spec as unknown) !== undefined || isGrowth(e)))),
          )
          .map(
            (e) =>
              `${e.resource === "pods" ? "evict " : ""}${e.name}${e.resource === "statefulsets" ? (isGrowth(e) ? ` grown: ${growthOf(e)}` : ` partition ${before.livePartition}→${JSON.stringify(e.body?.spec)}`) : ""}:${e.outcome}`,
          )
          .join(
            ",",
          )} | partition ${after.livePartition} user ${after.userPartition}${after.recordedPartition !== undefined ? " (held)" : ""}` +
        grow.readings
          .slice(readMark)
          .map(
            ({ reading: u }) =>
              ` | usage ${u.ok ? u.volumes.map((x) => `${x.claim} ${(Number((x.usedBytes * 1000n) / (x.capacityBytes || 1n)) / 10).toFixed(1)}% of ${x.capacityBytes / 2n ** 20n}Mi`).join(", ") : `failed: ${u.message.slice(0, 60)}`}`,
          )
          .join(""),
    );
    const show = (r: "persistentvolumeclaims", o: Json) => c.admin.view(r, o);
    violations.push(
      ...checkWrites(before, entries, {
        show,
        ledger,
        autogrow: grow,
        firstSeq: auditMark + 1,
        ...(staleFromSeq !== undefined ? { staleFromSeq } : {}),
      }),
      ...checkInFlight(flyingBefore, inFlight(after), after),
      ...checkOptOut(before, after, entries, failures > 0 || thrown.length > 0),
      ...checkPodsReady(
        before,
        entries,
        results.map((r) => r.decision.reason),
      ),
    );
    if (
      entries.some(
        (e) =>
          e.actor === "claimstep" &&
          e.outcome === "ok" &&
          (e.resource === "persistentvolumeclaims" ||
            e.resource === "pods" ||
            (e.resource === "statefulsets" && (e.body?.spec as unknown) !== undefined)),
      )
    )
      lastProgressMs = c.now().getTime();
    // An exception inside the simulated API server is a bug of the model, never an answer to prove things on.
    for (const bug of c.http.bugs.splice(0))
      violations.push({ invariant: "crash", message: `the simulated API server failed: ${bug.stack ?? bug.message}` });

    if (raced && results.length === 2) {
      // I9: the invocation on the older snapshot must not act once the other one has.
      const firstWrote = entries.some(
        (e) => e.actor === "claimstep" && e.outcome === "ok" && e.resource === "persistentvolumeclaims",
      );
      const claimWrites = entries.filter(
        (e) => e.actor === "claimstep" && e.outcome === "ok" && e.resource === "persistentvolumeclaims",
      );
      if (firstWrote && claimWrites.length > 1)
        violations.push({
          invariant: "I9",
          message: `both racing invocations wrote claims: ${claimWrites.map((e) => e.name).join(", ")}`,
        });
    }

    // Both racing invocations read the world before either ran: when the other one grew the
    // desired templates (autogrow), a Complete is a truth about that world, not the one after.
    const grewAt = (k: number) =>
      entries.some(
        (e) =>
          isGrowth(e) &&
          e.outcome === "ok" &&
          (staleFromSeq === undefined || (k === 0 ? e.seq < staleFromSeq : e.seq >= staleFromSeq)),
      );
    for (const [k, r] of results.entries()) {
      last = r.decision;
      // I15: never Ready, never Complete, with an expansion under way (rule 15).
      const early = readyWithExpansionUnderWay(before, r.decision.ordinals);
      if (early) violations.push({ invariant: "I15", message: early });
      if (r.decision.phase === "Complete") {
        const world = raced && results.length === 2 && grewAt(1 - k) ? before : after;
        const pending = completeWithExpansionUnderWay(world);
        if (pending) violations.push({ invariant: "I15", message: pending });
        const untrue = completeIsTrue(world);
        if (untrue) violations.push({ invariant: "I6", message: untrue });
        // I10 (d): done means the user's partition is back and claimstep's record of it gone.
        violations.push(...checkRestored(after, state.userPartition));
      }
    }

    const decision = results[0]?.decision;
    // A racing invocation's growth leaves a set no longer converged: the repeat of I7 does not apply.
    const grewNow = entries.some((e) => isGrowth(e) && e.outcome === "ok");
    if (decision?.phase === "Complete" && results[0]!.outcome.kind !== "retry" && failures === 0 && !grewNow) {
      // I7: a repeat invocation on a converged set writes nothing — with autogrow, unless the
      // usage it reads calls for a growth the first could not see (it read no usage: it recorded
      // the rollout's completion, or the query failed), or only the autogrow note of its status
      // changed (the query failed in one of the two and not the other, or failed otherwise).
      const mark = c.audit.length;
      const repeatMark = grow.readings.length;
      const beforeRepeat = viewOf(c, ref);
      const repeat = await invoke(c, false, metrics);
      steps++;
      transientFailures += repeat.failures;
      violations.push(...repeat.thrown);
      // With autogrow the repeat may grow (A1–A4 hold for it as for any invocation).
      violations.push(
        ...checkWrites(beforeRepeat, c.audit.slice(mark), { show, ledger, autogrow: grow, firstSeq: mark + 1 }),
      );
      if (s.autogrow) {
        opts.trace?.(
          `#${i} (repeat) ${repeat.results.map((r) => `${r.decision.phase}/${r.decision.reason} ${r.outcome.kind}: ${r.decision.message}`).join("")} | writes: ${c.audit
            .slice(mark)
            .filter((e) => e.actor === "claimstep" && isGrowth(e))
            .map((e) => `grown: ${growthOf(e)}:${e.outcome}`)
            .join(",")}`,
        );
      }
      const wrote = c.audit.slice(mark).filter((e) => e.actor === "claimstep" && e.outcome === "ok");
      const unexcused = s.autogrow
        ? autogrowI7(wrote, {
            firstReadUsage,
            messages: [...results, ...repeat.results].map((r) => r.decision.message),
            repeatReason: repeat.results[0]?.decision.reason,
          })
        : wrote;
      if (repeat.results.length && repeat.failures === 0 && unexcused.length) {
        violations.push({
          invariant: "I7",
          message: `a repeat invocation on a Complete set wrote ${unexcused.map((e) => `${e.verb} ${e.resource}/${e.name}${e.resource === "statefulsets" ? ` ${JSON.stringify(e.body).slice(0, 300)}` : ""}`).join(", ")}`,
        });
      }
      // (or nothing in scope is mounted: no usage to read, the query says so every time).
      const readUsage = grow.readings.slice(repeatMark).some((r) => r.reading.ok) || !mountedInScope(c, s);
      // With autogrow, converged is a step that read the usage and found nothing to grow.
      if (repeat.results[0]?.decision.reason === "Converged" && !pending.length && (!s.autogrow || readUsage)) {
        converged = true;
        last = repeat.results[0].decision;
        break;
      }
    }
    if (violations.length) break;
    // Opted out (I10-optout): once Idle, claimstep is done with the set.
    if (state.optedOut && decision?.reason === "NotOptedIn" && !pending.length) {
      optedOut = true;
      break;
    }
    // Autogrow at its max, with the applications stopped: nothing changes any more (A5 judges it).
    if (s.autogrow && decision?.reason === "AutogrowLimit" && !pending.length) {
      limited = true;
      break;
    }
    if (decision?.phase === "Blocked" && s.kind === "hostile" && !pending.length && i > 20) break;
    const key = decision ? `${decision.phase}|${decision.reason}|${decision.message}` : lastKey;
    unchanged = key === lastKey ? unchanged + 1 : 0;
    lastKey = key;
    if (s.kind === "hostile" && !pending.length && unchanged > 80) break;
    if (s.kind === "waiting" && !pending.length && c.now().getTime() - lastProgressMs > 20 * 60_000) break;
    c.advance(prng.int(s.gapSeconds[0], s.gapSeconds[1]) * 1000);
  }

  // A5: converged with no claim over the threshold (or one growth from this revision already made), or truly at max.
  if (s.autogrow && !violations.length)
    violations.push(
      ...checkAutogrowEnd(viewOf(c, ref), c.volumeStats(), s.autogrow.policy, {
        converged,
        limited,
        last: last ? `${last.phase}/${last.reason}: ${last.message}` : "no decision",
      }),
    );
  if (s.kind === "clean" && !converged && !limited && !optedOut && !violations.length) {
    violations.push({
      invariant: "I6",
      message: `${NOT_REACHED} within ${budget} invocations; last: ${last ? `${last.phase}/${last.reason}: ${last.message}` : "no decision"}`,
    });
  }
  // A rollout that may only wait (a budget, a volume that grows at mount) waits: it is never Blocked.
  if (
    s.kind === "waiting" &&
    !converged &&
    !limited &&
    !violations.length &&
    last?.phase === "Blocked" &&
    !s.waitsFor?.startsWith("KNOWN BUG")
  ) {
    violations.push({
      invariant: "I6",
      message: `a rollout expected to wait (${s.waitsFor}) ended Blocked: ${last.reason}: ${last.message}`,
    });
  }
  const v = viewOf(c, ref);
  const own = c.audit.filter((e) => e.actor === "claimstep");
  return {
    partitionPatches: own.filter(
      (e) => e.resource === "statefulsets" && e.outcome === "ok" && (e.body?.spec as unknown) !== undefined,
    ).length,
    evictions: own.filter((e) => e.resource === "pods" && e.verb === "create" && e.outcome === "ok").length,
    budgetRefusals: own.filter((e) => e.resource === "pods" && e.verb === "create" && e.outcome === 429).length,
    knownBugHits: [...ledger.knownBugHits, ...grow.knownBugHits],
    violations,
    steps,
    ordinals: Math.max(0, v.end - v.first),
    claims: Math.max(0, v.end - v.first) * s.templates.length,
    phase: last?.phase ?? "none",
    reason: last?.reason ?? "",
    message: last?.message ?? "",
    converged,
    optedOut,
    races,
    transientFailures,
    faults: Object.values(c.faults.counts).reduce((a, b) => a + b, 0),
    growths: grow.growths,
    usageReads: grow.readings.length,
    usageFailures: grow.readings.filter((r) => !r.reading.ok).length,
    limited,
  };
}
