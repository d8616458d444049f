// The simulated cluster: an in-memory API server (store + SimApi) with the StatefulSet
// controller, PV controller, CSI external-resizer (expansion and ModifyVolume) and kubelet on a
// virtual clock. `api` is what claimstep talks to (faults injected); `admin` is the same API
// without faults, for seeding, tests and GitOps merges; `reader`/`writer` are the step's ports.
import type { ClaimTemplate, StatefulSet } from "../../core/k8s.js";
import { SimApi } from "./api.js";
import { VirtualClock } from "./clock.js";
import { DEFAULT_LATENCIES, type ControllerContext, type DriverBehaviour, type Latencies, type Volume } from "./controllers/context.js";
import { Kubelet } from "./controllers/kubelet.js";
import { syncStatefulSets } from "./controllers/statefulset.js";
import { StorageControllers } from "./controllers/storage.js";
import { FaultInjector, type FaultPlan } from "./faults.js";
import { Prng } from "./prng.js";
import { SimStateReader } from "./reader.js";
import { Store, type AuditEntry, type Json } from "./store.js";
import { SimActionWriter, type SimWriterOptions } from "./writer.js";

export interface SimClusterOptions {
  /** Seeds every random choice (uids, faults). Default 1. */
  seed?: number;
  /** Virtual start time. Default 2026-11-30T10:00:00Z. */
  start?: Date;
  /** Serve the VolumeAttributesClass API (a v1.31-like server). false: a v1.24 server, as the fixtures. Default true. */
  volumeAttributesClasses?: boolean;
  faults?: FaultPlan;
  latencies?: Partial<Latencies>;
  writer?: SimWriterOptions;
}

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
  /** claimstep's API: faults injected per request. */
  readonly api: SimApi;
  /** The same API without faults: seeding, tests, GitOps merges. */
  readonly admin: SimApi;
  readonly reader: SimStateReader;
  readonly writer: SimActionWriter;
  private readonly controllers: ControllerContext;
  private readonly storage: StorageControllers;
  private readonly kubelet: Kubelet;

  constructor(opts: SimClusterOptions = {}) {
    this.clock = new VirtualClock(opts.start ?? new Date("2026-11-30T10:00:00Z"));
    this.prng = new Prng(opts.seed ?? 1);
    this.store = new Store(this.clock, this.prng);
    const profile = opts.volumeAttributesClasses === false ? "v1.24" : "vac";
    // Faults draw from their own stream so that enabling them does not change uids or names.
    this.faults = new FaultInjector(opts.faults ?? {}, new Prng((opts.seed ?? 1) ^ 0x9e3779b9));
    this.api = new SimApi({ store: this.store, clock: this.clock, profile }, this.faults);
    this.admin = new SimApi({ store: this.store, clock: this.clock, profile });
    this.reader = new SimStateReader(this.api);
    this.writer = new SimActionWriter(this.api, opts.writer);
    this.controllers = {
      store: this.store,
      clock: this.clock,
      latencies: { ...DEFAULT_LATENCIES, ...opts.latencies },
      drivers: new Map(),
      volumes: new Map<string, Volume>(),
    };
    this.storage = new StorageControllers(this.controllers);
    this.kubelet = new Kubelet(this.controllers);
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

  async addVolumeAttributesClass(name: string, parameters: Record<string, string> = {}, driverName = "sim.csi.claimstep.io"): Promise<void> {
    await this.admin.create("volumeattributesclasses", { metadata: { name }, driverName, parameters }, { fieldManager: KUBECTL });
  }

  /** A ResourceQuota with a hard `requests.storage`. */
  async addStorageQuota(namespace: string, name: string, requestsStorage: string): Promise<void> {
    await this.admin.create("resourcequotas", { metadata: { name, namespace }, spec: { hard: { "requests.storage": requestsStorage } } }, { fieldManager: KUBECTL });
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
      syncStatefulSets(this.controllers);
      this.storage.sync();
      this.kubelet.sync();
      if (this.store.writes === before) return;
    }
    throw new Error(`simulated controllers did not settle after ${MAX_SETTLE_PASSES} passes at ${this.clock.now().toISOString()}`);
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
}

/** A StatefulSet manifest as a person would write it (the demo, tests and property scenarios). */
export interface SetSpec {
  name: string;
  namespace?: string;
  replicas: number;
  templates: { name: string; storage: string; storageClassName?: string; volumeAttributesClassName?: string; labels?: Record<string, string>; volumeMode?: "Filesystem" | "Block" }[];
  ordinalsStart?: number;
  partition?: number;
  maxUnavailable?: number | string;
  podManagementPolicy?: "OrderedReady" | "Parallel";
  /** claimstep.io/volume-claim-update-strategy; default InPlace. */
  strategy?: string;
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
      updateStrategy: { type: "RollingUpdate", ...(Object.keys(rollingUpdate).length ? { rollingUpdate } : {}) },
      template: { metadata: { labels }, spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.9" }] } },
      volumeClaimTemplates: spec.templates.map(claimTemplate),
    },
  };
}
