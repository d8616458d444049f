// The simulated cluster: an in-memory API server (store + SimApi, served over HTTP by SimHttp)
// with the StatefulSet controller, PV controller, CSI external-resizer (expansion and
// ModifyVolume), kubelet and garbage collector on a virtual clock. claimstep reaches it as it reaches a real one:
// `client` is the production KubeClient over `http.fetchLike`, `reader`/`writers` the production
// KubeReader and direct writers. `admin` is the API without faults or HTTP, for seeding and for the
// controllers' and people's own writes (a GitOps merge, kubectl).
// What it models faithfully, which test holds each part to a real server, and what it does not
// model: README.md beside this file.
import type { ClaimTemplate, StatefulSet } from "../../core/kube/index.js";
import { toBytes } from "../../core/kube/index.js";
import { KubeClient, type KubeClientOptions } from "../kube/client.js";
import { KubeReader } from "../kube/reader.js";
import { type KubeWriters, kubeWriters } from "../kube/writer.js";
import { PrometheusMetrics } from "../metrics/prometheus.js";
import { SimWebhooks, type WebhookHandler } from "./admission-webhooks.js";
import { type DeleteOptions, mergePatchFor, SimApi } from "./api.js";
import { VirtualClock } from "./clock.js";
import { type ControllerContext, DEFAULT_LATENCIES, type DriverBehaviour, type Volume } from "./controllers/context.js";
import { syncDisruptionBudgets } from "./controllers/disruption.js";
import { GarbageCollector } from "./controllers/garbage-collector.js";
import { Kubelet } from "./controllers/kubelet.js";
import { People, type ScheduledEdit } from "./controllers/people.js";
import { syncClaimProtection } from "./controllers/pvc-protection.js";
import { syncStatefulSets } from "./controllers/statefulset.js";
import { StorageControllers } from "./controllers/storage.js";
import { type VolumeStats, type Workload, type WorkloadOptions, Workloads } from "./controllers/workload.js";
import { FaultInjector } from "./faults.js";
import { SIM_SERVER, SimHttp } from "./http.js";
import type { SimClusterOptions } from "./options.js";
import { Prng } from "./prng.js";
import { PROMETHEUS_PATH, SimPrometheus } from "./prometheus.js";
import { checkClusterState, SIM_CLUSTER_STATE_VERSION, type SimClusterState } from "./state.js";
import { writeStatefulSet } from "./statefulset-writes.js";
import { type AuditEntry, type Json, RESOURCES, type Resource, Store } from "./store.js";

export interface StorageClassOptions {
  allowVolumeExpansion?: boolean;
  provisioner?: string;
  driver?: DriverBehaviour;
}

/** Who writes as whom when the sim seeds or edits objects the way a person would. */
export const KUBECTL = "kubectl";

const MAX_SETTLE_PASSES = 1_000;

export class SimCluster {
  readonly clock: VirtualClock;
  readonly prng: Prng;
  readonly store: Store;
  readonly faults: FaultInjector;
  /** The API server's logic, faults injected per request: what `http` serves. */
  readonly api: SimApi;
  /** The same API without faults or HTTP: seeding, tests, controllers' and people's writes. */
  readonly admin: SimApi;
  /** The API server over HTTP: a fetch handler with paths, RBAC, paging and test hooks. */
  readonly http: SimHttp;
  /** The production client, reader and writers (claims, set status, events), over `http`. */
  readonly client: KubeClient;
  readonly reader: KubeReader;
  readonly writers: KubeWriters;
  /** The kubelets' volume stats over the Prometheus HTTP API, at `<server>/prometheus` (served by `http`). */
  readonly prometheus: SimPrometheus;
  /** Autogrow's production metrics reader (PrometheusMetrics), querying `prometheus` through `http`. */
  readonly metrics: PrometheusMetrics;
  /** The mutating admission webhooks the API server calls (stored MutatingWebhookConfigurations, registered servers). */
  readonly webhooks: SimWebhooks;
  private readonly workloads: Workloads;
  private readonly controllers: ControllerContext;
  private readonly storage: StorageControllers;
  private readonly kubelet: Kubelet;
  private readonly people: People;
  private readonly gc: GarbageCollector;
  private readonly opts: SimClusterOptions;

  constructor(opts: SimClusterOptions = {}) {
    this.opts = opts;
    this.clock = new VirtualClock(opts.start ?? new Date("2026-11-30T10:00:00Z"));
    this.prng = new Prng(opts.seed ?? 1);
    this.store = new Store(this.clock, this.prng);
    const profile = opts.volumeAttributesClasses === false ? "v1.24" : "vac";
    // Faults draw from their own stream so that enabling them does not change uids or names.
    this.faults = new FaultInjector(opts.faults ?? {}, new Prng((opts.seed ?? 1) ^ 0x9e3779b9));
    const expansionRecovery = opts.expansionRecovery ?? opts.volumeAttributesClasses !== false;
    this.api = new SimApi({ store: this.store, clock: this.clock, profile, expansionRecovery }, this.faults);
    this.admin = new SimApi({ store: this.store, clock: this.clock, profile, expansionRecovery });
    this.prometheus = new SimPrometheus(
      () => this.workloads.stats(),
      () => this.clock.nowMs(),
      opts.requestLogLimit,
    );
    this.webhooks = new SimWebhooks(this.store, new Prng((opts.seed ?? 1) ^ 0x5bd1e995));
    this.http = new SimHttp(() => this.api, {
      statefulSetWrite: (r, actor, identity) =>
        writeStatefulSet({ api: this.api, store: this.store, clock: this.clock, webhooks: this.webhooks }, r, actor, {
          username: identity?.user ?? "system:admin",
          groups: identity?.rules ? ["system:authenticated"] : ["system:masters", "system:authenticated"],
        }),
      prometheus: this.prometheus,
      ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
      ...(opts.tokens ? { tokens: opts.tokens } : {}),
      ...(opts.anonymous ? { anonymous: opts.anonymous } : {}),
      volumeAttributesClassVersions:
        opts.volumeAttributesClasses === false ? [] : (opts.volumeAttributesClassVersions ?? ["v1"]),
      ...(opts.requestLogLimit !== undefined ? { requestLogLimit: opts.requestLogLimit } : {}),
    });
    this.client = this.newClient();
    this.reader = new KubeReader(this.client);
    this.writers = kubeWriters(this.client, { reportingInstance: opts.reportingInstance ?? "claimstep-sim" });
    this.controllers = {
      store: this.store,
      clock: this.clock,
      latencies: { ...DEFAULT_LATENCIES, ...opts.latencies },
      drivers: new Map(),
      volumes: new Map<string, Volume>(),
      bindsVolumeName: profile === "vac",
    };
    this.storage = new StorageControllers(this.controllers);
    this.kubelet = new Kubelet(this.controllers);
    this.people = new People(this.controllers, (edit) => this.applyEdit(edit));
    this.gc = new GarbageCollector(this.controllers);
    this.workloads = new Workloads(this.controllers);
    this.metrics = new PrometheusMetrics({
      url: `${(opts.baseUrl ?? SIM_SERVER).replace(/\/+$/, "")}${PROMETHEUS_PATH}`,
      fetch: this.http.fetchLike,
    });
  }

  /**
   * An application filling its volumes: each Bound claim of `namespace` named `claims` (a name, or
   * a prefix ending in `-` such as `data-web-`) gains `bytesPerSecond` of used bytes per virtual
   * second while a Running pod mounts it, never beyond its file system's size (status.capacity).
   * `startUsed` (bytes or a quantity) sets the used bytes of the claims it names at once. Setting
   * it again for the same claims changes it; kept in the saved state.
   */
  setWorkload(namespace: string, claims: string, opts: WorkloadOptions): void {
    this.workloads.set(namespace, claims, opts);
  }

  /** Stop the workloads (of a namespace, or the one over `claims`); their data stays. */
  clearWorkloads(namespace?: string, claims?: string): void {
    this.workloads.clear(namespace, claims);
  }

  listWorkloads(): Workload[] {
    return this.workloads.list();
  }

  /**
   * A readiness probe that fails: the pod reports Ready=False for `forMs` from now (starting not
   * Ready, if it is still starting), then Ready again — a pod an expansion broke for a while.
   */
  failReadiness(namespace: string, pod: string, forMs: number): void {
    const uid = (this.store.peek("pods", namespace, pod)?.metadata as { uid?: string } | undefined)?.uid;
    if (!uid) return;
    this.kubelet.failReadiness(uid, this.clock.nowMs() + forMs);
    this.settle();
  }

  /** What the kubelets report now: used and capacity bytes of every mounted, Bound claim. */
  volumeStats(): VolumeStats[] {
    return this.workloads.stats();
  }

  /**
   * A person's merge patch of an object at a later virtual time (`kubectl patch` at 10:08), kept
   * in the saved state. An edit of an object that is gone by then is dropped.
   */
  scheduleEdit(at: Date, edit: Omit<ScheduledEdit, "atMs">): void {
    resourceNamed(edit.resource);
    this.people.schedule({ ...edit, atMs: at.getTime() });
  }

  private applyEdit(edit: ScheduledEdit): void {
    const r = resourceNamed(edit.resource);
    const live = this.store.peek(r, edit.namespace, edit.name);
    if (!live) return;
    this.update(edit.resource, edit.namespace, edit.name, (o) => deepMerge(o, edit.mergePatch), edit.actor ?? KUBECTL);
  }

  /**
   * A production KubeClient that talks to this cluster's HTTP server. Retries do not wait in
   * real time: the virtual clock stands still during a request, as it does while a step runs.
   */
  newClient(opts: Partial<KubeClientOptions> & { token?: string } = {}): KubeClient {
    const { token = this.opts.token, ...rest } = opts;
    return new KubeClient({
      server: this.opts.baseUrl ?? SIM_SERVER,
      fetch: this.http.fetchLike,
      sleep: async () => {},
      ...(token !== undefined ? { headers: { Authorization: `Bearer ${token}` } } : {}),
      ...rest,
    });
  }

  /**
   * The server behind webhook URLs under `url` (`https://claimstep-webhook.claimstep.svc:443`):
   * the API server's calls to a MutatingWebhookConfiguration's webhook go to `handler` (claimstep's
   * `admissionRoutes().fetch`, a test's). Not kept in the saved state: register again after restore.
   */
  registerWebhookServer(url: string, handler: WebhookHandler): void {
    this.webhooks.register(url, handler);
  }

  /** Store objects as captured (fixtures): kind decides the resource; uid, resourceVersion and managedFields are kept. */
  seed(...objects: object[]): void {
    for (const o of objects as Json[]) this.store.seed(resourceOfKind(o.kind), o);
  }

  /** The object as the API server would answer it (a copy), or undefined. */
  get(resource: string, namespace: string | undefined, name: string): SimObject | undefined {
    const r = resourceNamed(resource);
    const o = this.store.peek(r, namespace, name);
    return o && (structuredClone(this.store.view(r, o)) as SimObject);
  }

  /** Objects of a resource (copies), optionally in one namespace. */
  list(resource: string, namespace?: string): SimObject[] {
    const r = resourceNamed(resource);
    return this.store.all(r, namespace).map((o) => structuredClone(this.store.view(r, o)) as SimObject);
  }

  /** Change a stored object as a controller or a person would (a new resourceVersion, audited as `actor`). */
  update(
    resource: string,
    namespace: string | undefined,
    name: string,
    change: (o: SimObject) => void,
    actor = "kubectl",
  ): SimObject {
    const r = resourceNamed(resource);
    const live = this.store.peek(r, namespace, name);
    if (!live) throw new Error(`simulated cluster: no ${resource} ${namespace ?? ""}/${name}`);
    const next = structuredClone(live) as SimObject;
    change(next);
    const stored = this.store.replace(
      r,
      next,
      { manager: { manager: actor, operation: "Update", apiVersion: RESOURCES[r].apiVersion.replace(/^.*\//, "") } },
      actor,
      "update",
    );
    return structuredClone(this.store.view(r, stored)) as SimObject;
  }

  /** Remove an object outright (what the garbage collector or a person's delete leaves). */
  remove(resource: string, namespace: string | undefined, name: string, actor = "kubectl"): void {
    this.store.remove(resourceNamed(resource), namespace, name, actor);
  }

  /** events.k8s.io Events, oldest first. */
  events(namespace?: string): SimObject[] {
    return this.list("events", namespace).sort(
      (a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion),
    );
  }

  /**
   * Finish every pending change of a Bound claim at once, as the resizer and kubelet would:
   * capacity = request, the VAC in effect, resize conditions cleared. Returns the claims changed.
   * For tests that seed objects as captured, where no simulated volume stands behind a claim.
   */
  completeResizes(): string[] {
    const done: string[] = [];
    for (const c of this.store.all("persistentvolumeclaims") as any[]) {
      if (c.status?.phase !== "Bound") continue;
      const request = c.spec?.resources?.requests?.storage;
      const capacity = c.status?.capacity?.storage;
      const vac = c.spec?.volumeAttributesClassName;
      const grow =
        request !== undefined && (capacity === undefined || toBytes(String(request)) > toBytes(String(capacity)));
      const modify = vac && c.status?.currentVolumeAttributesClassName !== vac;
      if (!grow && !modify) continue;
      this.update(
        "persistentvolumeclaims",
        c.metadata.namespace,
        c.metadata.name,
        (next: any) => {
          if (grow) next.status.capacity = { ...(next.status.capacity ?? {}), storage: request };
          if (modify) next.status.currentVolumeAttributesClassName = vac;
          delete next.status.modifyVolumeStatus;
          delete next.status.allocatedResourceStatuses;
          if (next.status.conditions)
            next.status.conditions = next.status.conditions.filter((x: any) => !/Resiz|ModifyingVolume/.test(x.type));
        },
        "csi-resizer",
      );
      done.push(c.metadata.name);
    }
    return done;
  }

  /** Forget every object, the audit log, and the HTTP server's log, faults, hooks and denials. */
  reset(): void {
    this.store.clear();
    this.http.reset();
    this.prometheus.reset();
    this.workloads.restore({ workloads: [], used: {} });
    this.controllers.drivers.clear();
    this.controllers.volumes.clear();
    this.gc.clear();
  }

  get audit(): readonly AuditEntry[] {
    return this.store.audit;
  }

  now(): Date {
    return this.clock.now();
  }

  /** Add a StorageClass and the behaviour of its CSI driver. */
  async addStorageClass(name: string, opts: StorageClassOptions = {}): Promise<void> {
    await this.admin.create(
      "storageclasses",
      {
        metadata: { name },
        provisioner: opts.provisioner ?? "sim.csi.claimstep.io",
        reclaimPolicy: "Delete",
        volumeBindingMode: "Immediate",
        ...(opts.allowVolumeExpansion !== undefined ? { allowVolumeExpansion: opts.allowVolumeExpansion } : {}),
      },
      { fieldManager: KUBECTL },
    );
    if (opts.driver) this.setDriver(name, opts.driver);
  }

  /** Change how the driver of a class behaves (takes effect on its next operation). */
  setDriver(className: string, behaviour: DriverBehaviour): void {
    this.controllers.drivers.set(className, behaviour);
  }

  async addVolumeAttributesClass(
    name: string,
    parameters: Record<string, string> = {},
    driverName = "sim.csi.claimstep.io",
  ): Promise<void> {
    await this.admin.create(
      "volumeattributesclasses",
      { metadata: { name }, driverName, parameters },
      { fieldManager: KUBECTL },
    );
  }

  /** A ResourceQuota with a hard `requests.storage`. */
  async addStorageQuota(namespace: string, name: string, requestsStorage: string): Promise<void> {
    await this.admin.create(
      "resourcequotas",
      { metadata: { name, namespace }, spec: { hard: { "requests.storage": requestsStorage } } },
      { fieldManager: KUBECTL },
    );
  }

  /**
   * A PodDisruptionBudget (policy/v1) selecting pods by labels, as `kubectl create pdb` makes it;
   * the disruption controller computes its status at once.
   */
  async addPodDisruptionBudget(
    namespace: string,
    name: string,
    opts: { minAvailable?: number | string; maxUnavailable?: number | string; matchLabels: Record<string, string> },
  ): Promise<void> {
    await this.admin.create(
      "poddisruptionbudgets",
      {
        metadata: { name, namespace },
        spec: {
          ...(opts.minAvailable !== undefined ? { minAvailable: opts.minAvailable } : {}),
          ...(opts.maxUnavailable !== undefined ? { maxUnavailable: opts.maxUnavailable } : {}),
          selector: { matchLabels: { ...opts.matchLabels } },
        },
      },
      { fieldManager: KUBECTL },
    );
    this.settle();
  }

  /**
   * A person's edit of a StatefulSet's pod template (`kubectl edit`): `change` edits a copy of
   * `spec.template`, sent as a JSON merge patch (a new generation and, unless the template is
   * unchanged, a new update revision that the StatefulSet controller rolls out). Controllers do
   * not run: advance the clock to see the rollout.
   */
  async setPodTemplate(namespace: string, set: string, change: (template: SimObject) => void): Promise<SimObject> {
    const live = this.store.peek("statefulsets", namespace, set);
    if (!live) throw new Error(`simulated cluster: no statefulsets ${namespace}/${set}`);
    const template = structuredClone(
      ((live.spec as Json).template as Json | undefined) ?? { metadata: {}, spec: {} },
    ) as SimObject;
    const before = structuredClone(template);
    change(template);
    const patch = { spec: { template: mergePatchFor(before, template) } };
    return (await this.admin.mergePatch("statefulsets", namespace, set, patch as Json, {
      fieldManager: KUBECTL,
    })) as SimObject;
  }

  /** `kubectl set image statefulset/<set> <container>=<image>` (default: the first container). */
  async setImage(namespace: string, set: string, image: string, container?: string): Promise<SimObject> {
    return this.setPodTemplate(namespace, set, (t) => {
      const containers = (t.spec?.containers as { name: string; image?: string }[] | undefined) ?? [];
      const target = container === undefined ? containers[0] : containers.find((c) => c.name === container);
      if (!target)
        throw new Error(`simulated cluster: statefulset ${namespace}/${set} has no container ${container ?? "at all"}`);
      target.image = image;
    });
  }

  /**
   * A policy/v1 Eviction of a pod through the API (no faults), as `kubectl drain` sends it: the
   * Status answered (code 201), or the API server's refusal thrown (429 budget, 409 uid, 404).
   */
  async evictPod(namespace: string, pod: string, uid?: string): Promise<SimObject> {
    const eviction = {
      apiVersion: "policy/v1",
      kind: "Eviction",
      metadata: { name: pod, namespace },
      ...(uid !== undefined ? { deleteOptions: { preconditions: { uid } } } : {}),
    };
    return (await this.admin.evict(namespace, pod, eviction, { fieldManager: KUBECTL })) as unknown as SimObject;
  }

  /** A person's `kubectl delete pod` (no budget is consulted; claimstep never does this, it evicts). */
  async deletePod(namespace: string, pod: string): Promise<void> {
    await this.admin.delete("pods", namespace, pod, { fieldManager: KUBECTL });
  }

  /**
   * A person's `kubectl scale statefulset/<set> --replicas=<n>`: spec.replicas through the API (a
   * new generation). Controllers do not run: advance the clock to see pods and claims come or go.
   */
  async scale(namespace: string, set: string, replicas: number): Promise<SimObject> {
    return (await this.admin.mergePatch(
      "statefulsets",
      namespace,
      set,
      { spec: { replicas } },
      { fieldManager: KUBECTL },
    )) as SimObject;
  }

  /**
   * A person's edit of spec.persistentVolumeClaimRetentionPolicy (`kubectl patch`); an unset
   * field is left as it is. The StatefulSet controller then adds (whenDeleted: Delete) or
   * removes (Retain) its owner reference on the claims of the set's pods.
   */
  async setRetentionPolicy(namespace: string, set: string, policy: RetentionPolicy): Promise<SimObject> {
    const patch = { spec: { persistentVolumeClaimRetentionPolicy: { ...policy } } };
    return (await this.admin.mergePatch("statefulsets", namespace, set, patch, { fieldManager: KUBECTL })) as SimObject;
  }

  /**
   * A person's `kubectl delete statefulset/<set>` (`--cascade=orphan`: propagationPolicy Orphan;
   * the default is Background, which loses the pods and, with `whenDeleted: Delete`, the claims).
   * Returns the set as the API server answered (with its deletionTimestamp); the garbage
   * collector finishes `latencies.gcMs` later.
   */
  async deleteStatefulSet(namespace: string, set: string, opts: DeleteOptions = {}): Promise<SimObject> {
    return (await this.admin.delete("statefulsets", namespace, set, { fieldManager: KUBECTL, ...opts })) as SimObject;
  }

  /** Create a StatefulSet and let the controllers bring up its claims and pods. */
  async createStatefulSet(set: StatefulSet | Json, settleMs = 10 * 60_000): Promise<void> {
    await this.admin.create("statefulsets", set as Json, { fieldManager: KUBECTL });
    this.advance(settleMs);
  }

  /** Run every controller at the current instant until none has anything left to do. */
  settle(): void {
    for (let pass = 0; pass < MAX_SETTLE_PASSES; pass++) {
      const before = this.store.writes;
      // First: what the workloads wrote since the last instant, on the volumes mounted all along.
      this.workloads.sync();
      this.people.sync();
      syncStatefulSets(this.controllers);
      this.storage.sync();
      this.kubelet.sync();
      this.gc.sync();
      syncClaimProtection(this.controllers);
      syncDisruptionBudgets(this.controllers);
      if (this.store.writes === before) return;
    }
    throw new Error(
      `simulated controllers did not settle after ${MAX_SETTLE_PASSES} passes at ${this.clock.now().toISOString()}`,
    );
  }

  /** Move virtual time forward by `ms`, running the controllers at every instant they asked for. */
  advance(ms: number): void {
    const target = this.clock.nowMs() + ms;
    for (;;) {
      this.settle();
      const next = this.clock.takeNextWake(target);
      if (next === undefined) break;
      this.clock.set(next);
    }
    this.clock.set(target);
    this.settle();
  }

  /** The next instant a controller will act, if any (to skip idle time). */
  nextActivity(): Date | undefined {
    const at = this.clock.peekWake();
    return at === undefined ? undefined : new Date(at);
  }

  /**
   * Everything needed to continue this cluster exactly where it is, as plain JSON: the objects
   * with their resourceVersions, uids and field owners, the revision counter, the clock and its
   * pending wake-ups, the controllers' timers, the volumes, the PRNGs, the drivers, latencies and
   * fault plan. Not kept: the audit log, the HTTP server's request log and test hooks.
   */
  toJSON(): SimClusterState {
    const { start: _start, faults: _faults, latencies: _latencies, ...options } = this.opts;
    return {
      version: SIM_CLUSTER_STATE_VERSION,
      options: structuredClone(options),
      clock: this.clock.state(),
      prng: this.prng.state(),
      faults: this.faults.state(),
      latencies: { ...this.controllers.latencies },
      drivers: structuredClone(Object.fromEntries(this.controllers.drivers)),
      volumes: Object.fromEntries(
        [...this.controllers.volumes].map(([uid, v]) => [uid, { ...v, bytes: v.bytes.toString() }]),
      ),
      storage: this.storage.state(),
      kubelet: this.kubelet.state(),
      people: this.people.state(),
      gc: this.gc.state(),
      workloads: this.workloads.state(),
      store: this.store.state(),
    };
  }

  /** The cluster `toJSON` described, continuing from there; throws on a state of another version or shape. */
  static restore(json: unknown): SimCluster {
    const state = checkClusterState(json);
    const sim = new SimCluster({
      ...state.options,
      start: new Date(state.clock.nowMs),
      latencies: state.latencies,
      faults: state.faults.plan,
    });
    sim.clock.restore(state.clock);
    sim.prng.restore(state.prng);
    sim.faults.restore(state.faults);
    sim.store.restore(state.store);
    for (const [name, behaviour] of Object.entries(state.drivers))
      sim.controllers.drivers.set(name, structuredClone(behaviour));
    for (const [uid, v] of Object.entries(state.volumes))
      sim.controllers.volumes.set(uid, { ...v, bytes: BigInt(v.bytes) });
    sim.storage.restore(state.storage);
    sim.kubelet.restore(state.kubelet);
    sim.people.restore(state.people ?? []);
    sim.gc.restore(state.gc);
    if (state.workloads) sim.workloads.restore(state.workloads);
    return sim;
  }
}

/** An object as the facade methods hand it out: a copy, loosely typed for tests and seeding. */
export interface SimObject {
  metadata: { name: string; namespace?: string; [key: string]: any };
  [key: string]: any;
}

/** JSON merge patch (RFC 7386) of `patch` into `target`, in place: null removes a key. */
function deepMerge(target: Json, patch: Json): void {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete target[k];
    else if (
      typeof v === "object" &&
      !Array.isArray(v) &&
      typeof target[k] === "object" &&
      target[k] !== null &&
      !Array.isArray(target[k])
    )
      deepMerge(target[k] as Json, v as Json);
    else target[k] = structuredClone(v);
  }
}

const resourceNamed = (name: string): Resource => {
  if (!(name in RESOURCES))
    throw new Error(`the simulated cluster does not store ${name}: it stores ${Object.keys(RESOURCES).join(", ")}`);
  return name as Resource;
};

const resourceOfKind = (kind: unknown): Resource => {
  const r = (Object.keys(RESOURCES) as Resource[]).find((x) => RESOURCES[x].kind === kind);
  if (!r) throw new Error(`the simulated cluster does not store kind ${String(kind)}`);
  return r;
};

/** A StatefulSet manifest as a person would write it (the demo, tests and property scenarios). */
export interface SetSpec {
  name: string;
  namespace?: string;
  replicas: number;
  templates: {
    name: string;
    storage: string;
    storageClassName?: string;
    volumeAttributesClassName?: string;
    labels?: Record<string, string>;
    volumeMode?: "Filesystem" | "Block";
  }[];
  ordinalsStart?: number;
  partition?: number;
  maxUnavailable?: number | string;
  podManagementPolicy?: "OrderedReady" | "Parallel";
  /** spec.updateStrategy.type; default RollingUpdate. */
  updateStrategy?: "RollingUpdate" | "OnDelete";
  /** The container image of the pod template; default registry.k8s.io/pause:3.9. */
  image?: string;
  /** Annotations of the pod template (a change of them is a new revision, as `rev: "2"` in the fixtures). */
  podAnnotations?: Record<string, string>;
  /** claimstep.io/volume-claim-update-strategy; default InPlace. */
  strategy?: string;
  /** spec.persistentVolumeClaimRetentionPolicy; the API server defaults both to Retain. */
  retentionPolicy?: RetentionPolicy;
}

/** A StatefulSet's persistentVolumeClaimRetentionPolicy. */
export interface RetentionPolicy {
  whenDeleted?: "Retain" | "Delete";
  whenScaled?: "Retain" | "Delete";
}

export function claimTemplate(t: SetSpec["templates"][number]): ClaimTemplate {
  return {
    metadata: { name: t.name, ...(t.labels ? { labels: { ...t.labels } } : {}) },
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: t.storage } },
      ...(t.storageClassName !== undefined ? { storageClassName: t.storageClassName } : {}),
      ...(t.volumeAttributesClassName !== undefined ? { volumeAttributesClassName: t.volumeAttributesClassName } : {}),
      volumeMode: t.volumeMode ?? "Filesystem",
    },
  };
}

export function statefulSetManifest(spec: SetSpec): Json {
  const labels = { app: spec.name };
  const rollingUpdate = {
    ...(spec.partition !== undefined ? { partition: spec.partition } : {}),
    ...(spec.maxUnavailable !== undefined ? { maxUnavailable: spec.maxUnavailable } : {}),
  };
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: {
      name: spec.name,
      namespace: spec.namespace ?? "default",
      annotations: { "claimstep.io/volume-claim-update-strategy": spec.strategy ?? "InPlace" },
    },
    spec: {
      replicas: spec.replicas,
      selector: { matchLabels: labels },
      serviceName: spec.name,
      podManagementPolicy: spec.podManagementPolicy ?? "OrderedReady",
      ...(spec.ordinalsStart !== undefined ? { ordinals: { start: spec.ordinalsStart } } : {}),
      updateStrategy:
        spec.updateStrategy === "OnDelete"
          ? { type: "OnDelete" }
          : { type: "RollingUpdate", ...(Object.keys(rollingUpdate).length ? { rollingUpdate } : {}) },
      template: {
        metadata: { labels, ...(spec.podAnnotations ? { annotations: { ...spec.podAnnotations } } : {}) },
        spec: { containers: [{ name: "app", image: spec.image ?? "registry.k8s.io/pause:3.9" }] },
      },
      volumeClaimTemplates: spec.templates.map(claimTemplate),
      ...(spec.retentionPolicy ? { persistentVolumeClaimRetentionPolicy: { ...spec.retentionPolicy } } : {}),
    },
  };
}
