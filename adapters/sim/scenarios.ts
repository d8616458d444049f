// The catalogue of ready-made simulated clusters: `npm start`, `claimstep … --cluster
// sim[:<scenario>]` and the tests all build from here. Each holds StatefulSet default/web
// (3 replicas; claim templates data 1Gi and wal 1Gi on VolumeAttributesClass silver, class fast)
// and, unless it says otherwise, desires a change of them through the annotation.

import { ADMISSION_ENABLED, ADMISSION_LABEL } from "../../core/change/index.js";
import { Keys } from "../../core/keys.js";
import { planStep } from "../../core/plan/index.js";
import { rawAnnotation } from "../../core/policy/index.js";
import type { MetricsReader, StateReader, Writers } from "../../core/ports.js";
import type { Decision, SetRef } from "../../core/types.js";
import type { WebhookHandler } from "./admission-webhooks.js";
import { installClaimstepWebhook } from "./claimstep-webhook.js";
import { claimTemplate, type RetentionPolicy, type SetSpec, SimCluster, statefulSetManifest } from "./cluster.js";
import type { DriverBehaviour } from "./controllers/context.js";
import type { FaultPlan } from "./faults.js";
import { SIM_SERVER } from "./http.js";
import { type ScenarioName, SET } from "./scenario-names.js";
import type { Json } from "./store.js";

export { SET, scenarioName } from "./scenario-names.js";

/**
 * One claimstep step, as functions/step.ts's `runStep` takes it: the scenarios that reach their
 * start through claimstep's own steps (finalize-crash, autogrow) run them with this.
 */
export type ScenarioStep = (opts: {
  reader: StateReader;
  writers: Writers;
  ref: SetRef;
  now: Date;
  metrics?: MetricsReader;
  dryRun?: boolean;
}) => Promise<{ decision: Decision }>;

/**
 * What of claimstep itself the scenarios run, passed in by the entry points (functions/scenarios.ts)
 * so that the simulated cluster (an adapter) never imports them: its step, and its admission route.
 */
export interface ScenarioClaimstep {
  step: ScenarioStep;
  /** claimstep's admission webhook (`admissionRoutes().fetch`), for `apply`. */
  admission: WebhookHandler;
}

export interface Scenario {
  summary: string;
  /** What a person should take away when it ends. */
  lesson: string;
  build(seed?: number): Promise<SimCluster>;
}

const LIVE: SetSpec["templates"] = [
  { name: "data", storage: "1Gi", storageClassName: "fast" },
  { name: "wal", storage: "1Gi", storageClassName: "fast", volumeAttributesClassName: "silver" },
];
/** The change most scenarios ask for: data grows to 2Gi, wal moves to VolumeAttributesClass gold. */
const CHANGE: SetSpec["templates"] = [
  { name: "data", storage: "2Gi", storageClassName: "fast" },
  { name: "wal", storage: "1Gi", storageClassName: "fast", volumeAttributesClassName: "gold" },
];

interface Setup {
  driver?: DriverBehaviour;
  /** `allowVolumeExpansion` of class fast; default true. */
  expandable?: boolean;
  faults?: FaultPlan;
  /** Desired templates; null: none (the set desires nothing yet). */
  desired?: SetSpec["templates"] | null;
  /** `claimstep.io/volume-claim-update-strategy`; default InPlace. */
  strategy?: string;
  /** A ResourceQuota on requests.storage in the namespace. */
  quota?: string;
  /** Replicas of web; default 3. */
  replicas?: number;
  maxUnavailable?: number;
  /** Other annotations written with the desired templates (pod coordination, restarts). */
  annotations?: Record<string, string>;
  /** Written with the desired templates, as `claimstep set … --hold-pods` does (P5). */
  holdPods?: boolean;
  /** Then a new image in the pod template, as `kubectl set image` (a pod rollout). */
  image?: string;
  /** persistentVolumeClaimRetentionPolicy of the set. */
  retention?: RetentionPolicy;
  /** A person scales the set to this many replicas, this long after the build (`kubectl scale`). */
  scaleLater?: { replicas: number; afterMs: number };
  /** A PodDisruptionBudget `web` over the set's pods; `relaxAfterMs`: a person lowers minAvailable by one then. */
  budget?: { minAvailable: number; relaxAfterMs?: number };
  /** Changes the set's manifest before it is created (labels, annotations). */
  manifest?: (m: Json) => void;
  /** The live set's claim templates; default LIVE (data and wal). */
  live?: SetSpec["templates"];
  /** Volumes the pod template's container mounts, each at /<name>; default none. */
  mounts?: string[];
  /** A pod template held for the re-create (claimstep.io/pod-template): the live one with these mounts instead. */
  heldMounts?: string[];
  /** claimstep.io/remove-claim-templates. */
  remove?: string[];
}

/** The pod template of a manifest with its first container mounting `mounts`, each at /<name>. */
function withMounts(template: Json, mounts: string[]): Json {
  const t = structuredClone(template) as { spec: { containers: Json[] } };
  t.spec.containers[0]!.volumeMounts = mounts.map((name) => ({ name, mountPath: `/${name}` }));
  return t as unknown as Json;
}

/** The cluster of a scenario: classes fast and premium, VACs silver and gold, the set, its request. */
async function build(setup: Setup, seed = 1): Promise<SimCluster> {
  // Cloud-like latencies: a controller resize takes ~25 s, a file system resize ~8 s, a modification ~20 s.
  const sim = new SimCluster({
    seed,
    latencies: { resizeMs: 25_000, nodeResizeMs: 8_000, modifyMs: 20_000, retryMs: 30_000 },
    ...(setup.faults ? { faults: setup.faults } : {}),
  });
  await sim.addStorageClass("fast", {
    allowVolumeExpansion: setup.expandable ?? true,
    driver: setup.driver ?? { resize: "online", modify: "ok" },
  });
  await sim.addStorageClass("premium", { allowVolumeExpansion: true });
  await sim.addVolumeAttributesClass("silver", { iops: "3000", throughput: "125" });
  await sim.addVolumeAttributesClass("gold", { iops: "12000", throughput: "500" });
  if (setup.quota) await sim.addStorageQuota(SET.namespace, "storage", setup.quota);
  const replicas = setup.replicas ?? 3;
  const manifest = statefulSetManifest({
    ...SET,
    replicas,
    templates: setup.live ?? LIVE,
    ...(setup.strategy ? { strategy: setup.strategy } : {}),
    ...(setup.maxUnavailable !== undefined ? { maxUnavailable: setup.maxUnavailable } : {}),
    ...(setup.retention ? { retentionPolicy: setup.retention } : {}),
  });
  const spec = manifest.spec as Json;
  if (setup.mounts) spec.template = withMounts(spec.template as Json, setup.mounts);
  setup.manifest?.(manifest);
  await sim.createStatefulSet(manifest);
  if (setup.scaleLater) {
    const at = new Date(sim.now().getTime() + setup.scaleLater.afterMs);
    sim.scheduleEdit(at, {
      resource: "statefulsets",
      namespace: SET.namespace,
      name: SET.name,
      mergePatch: { spec: { replicas: setup.scaleLater.replicas } },
    });
  }
  if (setup.budget) {
    await sim.addPodDisruptionBudget(SET.namespace, SET.name, {
      minAvailable: setup.budget.minAvailable,
      matchLabels: { app: SET.name },
    });
    if (setup.budget.relaxAfterMs !== undefined) {
      const at = new Date(sim.now().getTime() + setup.budget.relaxAfterMs);
      sim.scheduleEdit(at, {
        resource: "poddisruptionbudgets",
        namespace: SET.namespace,
        name: SET.name,
        mergePatch: { spec: { minAvailable: setup.budget.minAvailable - 1 } },
      });
    }
  }
  const desired = setup.desired === undefined ? CHANGE : setup.desired;
  if (desired) {
    // The request, as `kubectl annotate` (or `claimstep set`, `--hold-pods` for P5) writes it.
    const annotations = {
      [Keys.templates]: JSON.stringify(desired.map(claimTemplate)),
      ...setup.annotations,
      ...(setup.holdPods ? { [Keys.podCoordination]: "ClaimsFirst", [Keys.userPartition]: "0" } : {}),
      ...(setup.heldMounts
        ? { [Keys.podTemplate]: JSON.stringify(withMounts(spec.template as Json, setup.heldMounts)) }
        : {}),
      ...(setup.remove ? { [Keys.removeTemplates]: JSON.stringify(setup.remove) } : {}),
    };
    const hold = setup.holdPods ? { spec: { updateStrategy: { rollingUpdate: { partition: replicas } } } } : {};
    await sim.admin.mergePatch(
      "statefulsets",
      SET.namespace,
      SET.name,
      { metadata: { annotations }, ...hold },
      { fieldManager: "kubectl" },
    );
  }
  if (setup.image) await sim.setImage(SET.namespace, SET.name, setup.image);
  return sim;
}

const scenario = (summary: string, lesson: string, setup: Setup): Scenario => ({
  summary,
  lesson,
  build: (seed) => build(setup, seed),
});

/** The annotation `kubectl annotate` (or `claimstep set`) writes. */
const desire = (sim: SimCluster, templates: SetSpec["templates"]) =>
  sim.admin.mergePatch(
    "statefulsets",
    SET.namespace,
    SET.name,
    { metadata: { annotations: { [Keys.templates]: JSON.stringify(templates.map(claimTemplate)) } } },
    { fieldManager: "kubectl" },
  );

/**
 * `recover`, where the failure has already happened: someone asked for data 1Ti, claimstep wrote
 * data-web-2 (the highest ordinal) at 1Ti, the driver (volumes up to 100Gi) marked it
 * ControllerResizeInfeasible, and the desired template went back to 2Gi. What is left is the undo.
 */
async function buildRecover(seed = 1): Promise<SimCluster> {
  const sim = await build({ driver: { resize: "online", modify: "ok", maxStorage: "100Gi" }, desired: null }, seed);
  const tooBig: SetSpec["templates"] = [{ ...LIVE[0]!, storage: "1Ti" }, LIVE[1]!];
  await desire(sim, tooBig);
  // claimstep's first step of that rollout, as it made it.
  const decision = planStep(await sim.reader.load(SET), sim.now(), sim.writers.claims);
  if (decision.action?.type !== "PatchClaim" || decision.action.claim !== "data-web-2")
    throw new Error(`recover: expected the first step to write data-web-2, got ${decision.phase}/${decision.reason}`);
  await sim.writers.claims.apply(decision.action);
  sim.advance(2 * 60_000);
  await desire(sim, [{ ...LIVE[0]!, storage: "2Gi" }, LIVE[1]!]);
  return sim;
}

const FINALIZE_SETUP: Setup = {
  annotations: { [Keys.finalize]: "Recreate" },
  retention: { whenDeleted: "Delete", whenScaled: "Retain" },
};

/**
 * `finalize-crash`, where the crash has already happened: the rollout completed, claimstep wrote
 * the record and deleted the set (orphan), and the process died before creating it again. What is
 * left: pods and claims without a set, and the record.
 */
async function buildFinalizeCrash(step: ScenarioStep, seed = 1): Promise<SimCluster> {
  const sim = await build(FINALIZE_SETUP, seed);
  for (let i = 0; i < 500; i++) {
    const r = await step({ reader: sim.reader, writers: sim.writers, ref: SET, now: sim.now() });
    if (r.decision.action?.type === "OrphanSet") {
      sim.advance(60_000); // the garbage collector releases the pods and claims; nobody creates the set
      if (sim.get("statefulsets", SET.namespace, SET.name))
        throw new Error("finalize-crash: the set is still there after the orphan delete");
      return sim;
    }
    sim.advance(10_000);
  }
  throw new Error("finalize-crash: the rollout never reached the re-create");
}

/** `autogrow`'s policy: grow by half at 80% full, up to 8Gi. */
export const AUTOGROW_POLICY = { threshold: "80%", increase: "50%", max: "8Gi" } as const;
const MI = 1024 * 1024;

/**
 * `autogrow`: web complete at data 1Gi with claimstep.io/autogrow, an application filling its data
 * volumes (data-web-2 at 2 MiB/s, data-web-1 at 1 MiB/s, data-web-0 at 0.5 MiB/s; wal slowly),
 * claimstep stepping it while it fills, until data-web-2 crosses 80% (about two minutes in).
 */
async function buildAutogrow(step: ScenarioStep, seed = 1): Promise<SimCluster> {
  const sim = await build({ desired: LIVE, annotations: { [Keys.autogrow]: JSON.stringify(AUTOGROW_POLICY) } }, seed);
  // claimstep's rollout of the templates as they are (the claims get its revision label) to Complete.
  for (let i = 0; ; i++) {
    if (i === 200) throw new Error("autogrow: the rollout of the live templates never completed");
    const r = await step({ reader: sim.reader, writers: sim.writers, ref: SET, now: sim.now(), metrics: sim.metrics });
    if (r.decision.phase === "Complete") break;
    sim.advance(10_000);
  }
  sim.setWorkload(SET.namespace, "data-web-2", { bytesPerSecond: 2 * MI, startUsed: 600 * MI });
  sim.setWorkload(SET.namespace, "data-web-1", { bytesPerSecond: 1 * MI, startUsed: 400 * MI });
  sim.setWorkload(SET.namespace, "data-web-0", { bytesPerSecond: 0.5 * MI, startUsed: 300 * MI });
  sim.setWorkload(SET.namespace, "wal-web-", { bytesPerSecond: 64 * 1024, startUsed: 50 * MI });
  // Then its plan (a dry run: the real step is the run's first) reads the usage every 10 s while
  // the disks fill, until one is over 80%.
  for (let i = 0; i < 100; i++) {
    sim.advance(10_000);
    const r = await step({
      reader: sim.reader,
      writers: sim.writers,
      ref: SET,
      now: sim.now(),
      metrics: sim.metrics,
      dryRun: true,
    });
    if (r.decision.reason === "AutogrowTriggered") return sim;
    if (r.decision.phase !== "Complete")
      throw new Error(
        `autogrow: expected web to stay complete, got ${r.decision.phase}/${r.decision.reason}: ${r.decision.message}`,
      );
  }
  throw new Error("autogrow: no claim crossed the threshold");
}

/**
 * `apply`'s StatefulSet web as its owner keeps it in Git: opted in to claimstep's admission
 * webhook by the label claimstep.io/admission=enabled (no claimstep annotation), claim templates
 * data and wal at `dataStorage`. What the scenario applies (data 2Gi), and what
 * `claimstep apply -f` is tried with.
 */
export function applyScenarioManifest(dataStorage = "2Gi"): Json {
  const m = statefulSetManifest({ ...SET, replicas: 3, templates: [{ ...LIVE[0]!, storage: dataStorage }, LIVE[1]!] });
  const metadata = m.metadata as Json;
  delete metadata.annotations;
  metadata.labels = { [ADMISSION_LABEL]: ADMISSION_ENABLED };
  return m;
}

/**
 * `apply`: claimstep's webhook installed (deploy/kubernetes/admission.yaml), web created at 1Gi
 * from its manifest, then the manifest with data at 2Gi applied as `kubectl apply --server-side
 * --force-conflicts` does it: the API server calls the webhook, which keeps spec at 1Gi and moves
 * the templates into claimstep's annotation (with finalize Recreate); the rollout follows.
 */
async function buildApply(admission: WebhookHandler, seed = 1): Promise<SimCluster> {
  const sim = await build({ desired: null, manifest: (m) => Object.assign(m, applyScenarioManifest("1Gi")) }, seed);
  await installClaimstepWebhook(sim, admission);
  const url = `${SIM_SERVER}/apis/apps/v1/namespaces/${SET.namespace}/statefulsets/${SET.name}?fieldManager=kubectl&force=true`;
  const res = await sim.http.fetchLike(url, {
    method: "PATCH",
    headers: { "Content-Type": "application/apply-patch+yaml", "User-Agent": "kubectl/v1.34.2" },
    body: JSON.stringify(applyScenarioManifest("2Gi")),
  });
  const set = (await res.json()) as Json;
  const annotations = ((set.metadata as Json | undefined)?.annotations as Record<string, string> | undefined) ?? {};
  if (res.status !== 200 || !rawAnnotation(annotations, "templates"))
    throw new Error(
      `apply: the apply of web at 2Gi did not go through claimstep's webhook: HTTP ${res.status} ${JSON.stringify(set).slice(0, 400)}`,
    );
  return sim;
}

type Scenarios = Partial<Record<ScenarioName, Scenario>>;

/** Rollouts that go through: a size and a class, on two claims or on one. */
const ROLLOUTS = {
  grow: scenario(
    "grow data 1Gi → 2Gi and move wal to VolumeAttributesClass gold, one ordinal at a time",
    "every claim was updated highest ordinal first, each waiting for the resize or modification to finish before the next",
    {},
  ),
  vac: scenario(
    "grow data to 2Gi and move it to VolumeAttributesClass gold",
    "a size and a VolumeAttributesClass change go in one apply per claim; the claim is ready once both took effect",
    { desired: [{ ...CHANGE[0]!, volumeAttributesClassName: "gold" }, LIVE[1]!] },
  ),
} satisfies Scenarios;

/** Requests claimstep refuses: blocked before any write, or at the first claim. */
const REFUSED = {
  blocked: scenario(
    "class fast does not allow expansion (allowVolumeExpansion unset)",
    "the API server would refuse the expansion: claimstep blocks with ExpansionNotAllowed before writing anything",
    { expandable: false },
  ),
  "blocked-class": scenario(
    "the desired data template names storage class premium, but the claims are of class fast",
    "a claim's class is immutable: claimstep blocks before writing anything, with the fix in the message",
    { desired: [{ ...CHANGE[0]!, storageClassName: "premium" }, CHANGE[1]!] },
  ),
  infeasible: scenario(
    "the CSI driver rejects the expansion as infeasible",
    "a terminal resize failure blocks the rollout at the first claim (ResizeFailed), so no other claim is touched",
    { driver: { resize: "infeasible", modify: "ok" } },
  ),
} satisfies Scenarios;

/** Expansions that need a pod restarted, one of them under a PodDisruptionBudget. */
const RESTARTS = {
  "offline-driver": scenario(
    "the CSI driver of class fast only expands volumes no pod is using; restart-pods: WhenRequired",
    "each resize waited on the driver's in-use error until claimstep evicted that one pod (Eviction API, every other pod Ready); the volume grew while the pod was down",
    {
      driver: { resize: "offline", modify: "ok", driverName: "offline.csi.example.com" },
      annotations: { [Keys.restartPods]: "WhenRequired" },
    },
  ),
  "node-expansion-restart": scenario(
    "the driver grows volumes online but the node grows the file system only at mount; restart-pods: WhenRequired, restart-after 2m",
    "each claim waited FileSystemResizePending on its running pod; after restart-after claimstep evicted that pod, the new one mounted the volume and the file system grew",
    {
      driver: { resize: "online", nodeExpansion: "offline", modify: "ok" },
      annotations: { [Keys.restartPods]: "WhenRequired", [Keys.restartAfter]: "2m" },
    },
  ),
  "pdb-blocks": scenario(
    "restarts needed (file system grows only at mount) under a PodDisruptionBudget minAvailable 3 of 3, which a person relaxes to 2 after 8 minutes",
    "while the budget allowed no disruption claimstep waited (DisruptionBudget, asking again only after the refused eviction's two-minute charge); once it allowed one, each pod was restarted in turn",
    {
      driver: { resize: "online", nodeExpansion: "offline", modify: "ok" },
      annotations: { [Keys.restartPods]: "WhenRequired", [Keys.restartAfter]: "1m" },
      budget: { minAvailable: 3, relaxAfterMs: 8 * 60_000 },
    },
  ),
} satisfies Scenarios;

/** The re-create of the set at the end of the rollout, and one cut short by a crash. */
const reCreates = (step: ScenarioStep) =>
  ({
    finalize: scenario(
      "grow, then re-create web with the new templates (claimstep.io/finalize: Recreate; claims owned by the set, whenDeleted: Delete); right after, a person scales web to 4",
      "the set was re-created from a recorded manifest (orphan delete, create, adoption): every pod and claim kept, and the scale-up created data-web-3 at the new size",
      // The re-create ends 1:50 into the run; the scale-up follows it.
      { ...FINALIZE_SETUP, scaleLater: { replicas: 4, afterMs: 115_000 } },
    ),
    "finalize-crash": {
      summary:
        "the re-create of web was cut short: the set was deleted (orphan) and the process died before creating it again; the record is all that is left",
      lesson:
        "the next invocation found the record and no set, created the set from it, waited for adoption and removed the record: a crash between any two requests is finished by the next step",
      build: (seed) => buildFinalizeCrash(step, seed),
    },
  }) satisfies Scenarios;

/** Claims and pods together (pod-coordination: ClaimsFirst), one or two ordinals at a time. */
const CLAIMS_FIRST = {
  "pods-claims-first": scenario(
    "5 replicas: data grows to 2Gi and the pod template gets a new image together; pod-coordination: ClaimsFirst, pods held (set --hold-pods), maxUnavailable 1",
    "each pod was replaced only after its own claims were ready (the partition went down one ordinal at a time), then the next ordinal's claims began; your partition came back at the end",
    { replicas: 5, maxUnavailable: 1, holdPods: true, image: "registry.k8s.io/pause:3.10" },
  ),
  "pods-claims-first-2": scenario(
    "as pods-claims-first with maxUnavailable 2: two ordinals' claims and pods in flight at once",
    "two ordinals moved at a time, each still claims first, then its pod",
    { replicas: 5, maxUnavailable: 2, holdPods: true, image: "registry.k8s.io/pause:3.10" },
  ),
} satisfies Scenarios;

/** A cluster that fails under the rollout (API faults, a flaky driver, a quota), or failed before it. */
const FAILURES = {
  "flaky-api": scenario(
    "the API server answers 429, 500 or a timeout to one request in eight; the driver fails transiently too",
    "a failed invocation leaves the cluster valid; the next one re-reads it and continues from where it really is",
    {
      driver: { resize: "flaky", flakyFailures: 2, modify: "ok" },
      faults: { tooManyRequests: 0.05, serverError: 0.04, timeout: 0.035, retryAfterSeconds: 2 },
    },
  ),
  quota: scenario(
    "a ResourceQuota of 8Gi (6Gi in use) leaves room for only two of the three data claims to grow to 2Gi",
    "the API server refused the expansion; claimstep reports it as QuotaExceeded with the quota's numbers",
    { quota: "8Gi" },
  ),
  recover: {
    summary:
      "data asked for 1Ti, more than the driver provides (100Gi): data-web-2 failed as ControllerResizeInfeasible; the desired data is back to 2Gi",
    lesson:
      "a failed expansion is undone by lowering the template: the failed claim comes back down to 2Gi (Kubernetes ≥ 1.34 accepts a request above status.capacity), then the rollout goes on",
    build: buildRecover,
  },
} satisfies Scenarios;

const autogrowScenario = (step: ScenarioStep): Scenario => ({
  summary: `web is complete at data 1Gi with claimstep.io/autogrow ${JSON.stringify(AUTOGROW_POLICY)}; an application fills data-web-2 at 2 MiB/s (data-web-1 at 1, data-web-0 at 0.5): it has just crossed 80%`,
  lesson:
    "the usage (one Prometheus query per step) crossed the threshold: claimstep raised the desired data template by half, rounded up to whole Gi, and the normal rollout grew every ordinal alike, highest first; no claim is above the threshold any more",
  build: (seed) => buildAutogrow(step, seed),
});

const applyScenario = (admission: WebhookHandler): Scenario => ({
  summary:
    "claimstep's admission webhook is installed and web is labelled claimstep.io/admission=enabled; `kubectl apply --server-side` of web with data at 2Gi (was 1Gi) was accepted: the webhook kept spec at 1Gi and wrote the 2Gi template into claimstep's annotation, with finalize Recreate",
  lesson:
    "the apply the API server would refuse (422) went through the webhook into a rollout, highest ordinal first, then the set was re-created with data at 2Gi: its live spec now matches the applied manifest (try `claimstep apply -f web.yaml --cluster sim:apply` for the same gesture)",
  build: (seed) => buildApply(admission, seed),
});

/** Claim templates added or removed, through the re-create and the pods' restarts. */
const TEMPLATE_CHANGES = {
  "add-template": scenario(
    "web runs with claim template data (mounted at /data); claimstep.io/finalize: Recreate; the desired templates add logs (1Gi, class fast) and claimstep.io/pod-template holds the pod template that mounts it at /logs",
    "the set was re-created with logs and the pod template that mounts it in one create; the StatefulSet controller cannot put a volume into a running pod (it created logs-web-0 and stopped at web-0), so claimstep evicted the pods lowest ordinal first: each came back mounting data and logs, its logs claim created by the controller; no claim was deleted and the data claims kept their uids",
    {
      live: [LIVE[0]!],
      mounts: ["data"],
      desired: [LIVE[0]!, { name: "logs", storage: "1Gi", storageClassName: "fast" }],
      heldMounts: ["data", "logs"],
      annotations: { [Keys.finalize]: "Recreate" },
    },
  ),
  "remove-template": scenario(
    'web has claim templates data and cache, its pod template mounts both; claimstep.io/remove-claim-templates: ["cache"], claimstep.io/pod-template holds the pod template without the cache mount; claimstep.io/finalize: Recreate',
    "the set was re-created without cache and the pods were restarted lowest ordinal first so that none mounts it; the cache claims were kept, labelled claimstep.io/orphaned-from=web (claimstep status lists them with the command that deletes them): claimstep never deletes a claim",
    {
      live: [LIVE[0]!, { name: "cache", storage: "1Gi", storageClassName: "fast" }],
      mounts: ["data", "cache"],
      desired: [LIVE[0]!],
      heldMounts: ["data"],
      remove: ["cache"],
      annotations: { [Keys.finalize]: "Recreate" },
    },
  ),
} satisfies Scenarios;

const OPTED_OUT = scenario(
  "web is not opted in and desires nothing: try `claimstep set web data --storage 2Gi --cluster sim:opted-out`",
  "a set that is not opted in is left alone: no write of any kind",
  { strategy: "OnClaimDelete", desired: null },
);

/**
 * Every name of SCENARIO_NAMES, and no other (the type checks both ways: each group's names, and
 * all of them here), built with claimstep's step and admission route where a scenario needs them
 * (functions/scenarios.ts passes runStep). In the order of SCENARIO_NAMES' first list.
 */
export const simScenarios = ({ step, admission }: ScenarioClaimstep): Record<string, Scenario> =>
  ({
    ...ROLLOUTS,
    ...REFUSED,
    ...RESTARTS,
    ...reCreates(step),
    ...CLAIMS_FIRST,
    ...FAILURES,
    autogrow: autogrowScenario(step),
    apply: applyScenario(admission),
    ...TEMPLATE_CHANGES,
    "opted-out": OPTED_OUT,
  }) satisfies Record<ScenarioName, Scenario>;
