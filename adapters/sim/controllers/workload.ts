// The workloads: applications writing to their volumes. A workload fills the file system of each
// Bound claim it names, while a Running pod mounts it, at a steady rate, never beyond the file
// system's size (the claim's status.capacity, which grows when the kubelet grows the file system).
// What the kubelet then reports as kubelet_volume_stats_used_bytes / _capacity_bytes for each
// mounted claim (the simulated Prometheus, ../prometheus.ts). Time moves only through `sync`, at
// the instants the cluster's controllers run, and usage is linear between them.
import type { PersistentVolumeClaim } from "../../../core/kube/index.js";
import { toBytes } from "../../../core/kube/index.js";
import { type ControllerContext, claimNamesOf, claimsOf, type Pod, podsOf } from "./context.js";

export interface WorkloadOptions {
  /** How fast the workload writes, in bytes per (virtual) second. */
  bytesPerSecond: number;
  /** Bytes (or a quantity such as "600Mi") already used on matching claims, set at once; new claims start with it too. Default 0. */
  startUsed?: number | string;
}

/** A workload over the claims of a namespace: a claim's name, or a prefix ending in `-` (`data-web-`). */
export interface Workload extends WorkloadOptions {
  namespace: string;
  claims: string;
}

/** A mounted claim's file system as the kubelet reports it. */
export interface VolumeStats {
  namespace: string;
  claim: string;
  /** The pod that mounts it, and the node it runs on. */
  pod: string;
  node: string;
  usedBytes: bigint;
  capacityBytes: bigint;
}

export interface WorkloadState {
  workloads: Workload[];
  /** Per claim uid: bytes used (a decimal string) as of `atMs`. */
  used: Record<string, { bytes: string; atMs: number }>;
}

const bytesOf = (q: number | string | undefined): bigint =>
  q === undefined ? 0n : typeof q === "number" ? BigInt(Math.round(q)) : toBytes(q);

/** Exact names beat prefixes; the longest prefix wins. */
function workloadOf(workloads: readonly Workload[], pvc: PersistentVolumeClaim): Workload | undefined {
  const ns = pvc.metadata.namespace ?? "default";
  const name = pvc.metadata.name;
  let best: Workload | undefined;
  for (const w of workloads) {
    if (w.namespace !== ns) continue;
    if (w.claims === name) return w;
    if (w.claims.endsWith("-") && name.startsWith(w.claims) && (!best || w.claims.length > best.claims.length))
      best = w;
  }
  return best;
}

/** The node a pod runs on: spec.nodeName, else one of three nodes by its ordinal. */
const nodeOf = (pod: { metadata: { name: string }; spec?: Record<string, unknown> }): string =>
  typeof pod.spec?.nodeName === "string"
    ? pod.spec.nodeName
    : `sim-node-${(Number(/-(\d+)$/.exec(pod.metadata.name)?.[1] ?? 0) % 3) + 1}`;

export class Workloads {
  private workloads: Workload[] = [];
  private readonly used = new Map<string, { bytes: bigint; atMs: number }>();

  constructor(private readonly ctx: ControllerContext) {}

  /** Start (or change) a workload; `startUsed` applies at once to the Bound claims it names. */
  set(namespace: string, claims: string, opts: WorkloadOptions): void {
    if (!(opts.bytesPerSecond >= 0) || !Number.isFinite(opts.bytesPerSecond))
      throw new Error(`simulated workload ${namespace}/${claims}: bytesPerSecond must be a number ≥ 0`);
    if (this.workloads.length === 0) {
      // Nothing was written while no workload ran (sync skips the walk then): from now on.
      const now = this.ctx.clock.nowMs();
      for (const u of this.used.values()) u.atMs = now;
    }
    this.sync();
    const w: Workload = {
      namespace,
      claims,
      bytesPerSecond: opts.bytesPerSecond,
      ...(opts.startUsed !== undefined ? { startUsed: opts.startUsed } : {}),
    };
    this.workloads = [...this.workloads.filter((x) => !(x.namespace === namespace && x.claims === claims)), w];
    if (opts.startUsed === undefined) return;
    const now = this.ctx.clock.nowMs();
    for (const pvc of claimsOf(this.ctx)) {
      if (pvc.status?.phase !== "Bound" || workloadOf(this.workloads, pvc) !== w) continue;
      this.used.set(pvc.metadata.uid!, { bytes: this.capped(pvc, bytesOf(opts.startUsed)), atMs: now });
    }
  }

  /** Stop the workloads of a namespace (all, or the one over `claims`); what they wrote stays. */
  clear(namespace?: string, claims?: string): void {
    this.sync();
    this.workloads = this.workloads.filter(
      (w) => (namespace !== undefined && w.namespace !== namespace) || (claims !== undefined && w.claims !== claims),
    );
  }

  list(): Workload[] {
    return structuredClone(this.workloads);
  }

  private capped(pvc: PersistentVolumeClaim, bytes: bigint): bigint {
    const capacity = this.capacityOf(pvc);
    return bytes > capacity ? capacity : bytes;
  }

  private capacityOf(pvc: PersistentVolumeClaim): bigint {
    const c = pvc.status?.capacity?.storage;
    return c === undefined ? 0n : toBytes(String(c));
  }

  /** Running pods by the claims they mount (`<namespace>/<claim>`), one walk over the pods. */
  private mounts(): Map<string, Pod> {
    const byClaim = new Map<string, Pod>();
    for (const pod of podsOf(this.ctx)) {
      if (pod.status?.phase !== "Running") continue;
      for (const claim of claimNamesOf(pod)) byClaim.set(`${pod.metadata.namespace ?? "default"}/${claim}`, pod);
    }
    return byClaim;
  }

  /** Write what each workload wrote since the last sync, on the claims mounted all that time. */
  sync(): void {
    // No workload: nothing to write (the bench's thousands of claims cost nothing here).
    if (this.workloads.length === 0) return;
    const now = this.ctx.clock.nowMs();
    const mounts = this.mounts();
    const seen = new Set<string>();
    for (const pvc of claimsOf(this.ctx)) {
      const uid = pvc.metadata.uid!;
      seen.add(uid);
      if (pvc.status?.phase !== "Bound") continue;
      const w = workloadOf(this.workloads, pvc);
      const last = this.used.get(uid) ?? { bytes: this.capped(pvc, bytesOf(w?.startUsed)), atMs: now };
      const mounted = mounts.has(`${pvc.metadata.namespace ?? "default"}/${pvc.metadata.name}`);
      const written = w && mounted ? BigInt(Math.floor((w.bytesPerSecond * (now - last.atMs)) / 1000)) : 0n;
      this.used.set(uid, { bytes: this.capped(pvc, last.bytes + written), atMs: now });
    }
    for (const uid of [...this.used.keys()]) if (!seen.has(uid)) this.used.delete(uid);
  }

  /** The kubelet's volume stats: every Bound claim a Running pod mounts, as of now. */
  stats(): VolumeStats[] {
    this.sync();
    const mounts = this.mounts();
    const out: VolumeStats[] = [];
    for (const pvc of claimsOf(this.ctx)) {
      if (pvc.status?.phase !== "Bound") continue;
      const pod = mounts.get(`${pvc.metadata.namespace ?? "default"}/${pvc.metadata.name}`);
      if (!pod) continue;
      out.push({
        namespace: pvc.metadata.namespace ?? "default",
        claim: pvc.metadata.name,
        pod: pod.metadata.name,
        node: nodeOf(pod),
        usedBytes: this.used.get(pvc.metadata.uid!)?.bytes ?? 0n,
        capacityBytes: this.capacityOf(pvc),
      });
    }
    return out;
  }

  state(): WorkloadState {
    return {
      workloads: structuredClone(this.workloads),
      used: Object.fromEntries([...this.used].map(([uid, u]) => [uid, { bytes: u.bytes.toString(), atMs: u.atMs }])),
    };
  }

  restore(state: WorkloadState): void {
    this.workloads = structuredClone(state.workloads);
    this.used.clear();
    for (const [uid, u] of Object.entries(state.used)) this.used.set(uid, { bytes: BigInt(u.bytes), atMs: u.atMs });
  }
}
