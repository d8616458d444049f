// The kubelet, as far as claims are concerned (its writes on claims are the node model's,
// ../node-model.ts; this keeps the timers): a pod starts (Running, Ready) once every claim it
// mounts is bound; mounting a volume whose controller expansion is done (NodeResizePending)
// grows its file system, and so does a running pod for drivers with online node expansion
// (not `nodeExpansion: "offline"`, not `resize: "offline"`), at the kubelet's next pod sync
// (`nodeResizeMs`). Growing is NodeExpandVolume, as kubelet v1.34 records it:
// allocatedResourceStatuses.storage=NodeResizeInProgress (the conditions as they are), then
// capacity = allocatedResources with the storage status and every resize condition cleared
// (allocatedResources stays). A node that refuses (`nodeExpansion: "infeasible"`) marks it
// NodeResizeInfeasible + NodeResizeError instead; the resizer hands it back (NodeResizePending)
// and the kubelet tries again after its back-off (`retryMs`).
// A pod does not start while a claim of an offline-only driver (`resize: "offline"`) has a
// controller expansion pending (the request above the volume, not infeasible): the volume must
// stay unpublished until the resizer has grown it, then the mount finishes the resize.
import type { PersistentVolumeClaim } from "../../../core/kube/index.js";
import {
  mountWaitsForController,
  nodeResizeInfeasible,
  nodeResizeInProgress,
  nodeStage,
  resizeFinished,
} from "../node-model.js";
import type { Json } from "../store.js";
import {
  type ControllerContext,
  claimNamesOf,
  condition,
  driverOf,
  KUBELET,
  type Pod,
  podsOf,
  writeClaim,
} from "./context.js";

/**
 * When a pod starts (per pod uid), and when a claim's file system expansion starts or, once
 * NodeResizeInProgress, finishes (per claim uid); ms since the epoch.
 */
export interface KubeletState {
  startAt: Record<string, number>;
  expandAt: Record<string, number>;
  /** Pods (by uid) whose readiness probe fails until then (ms since the epoch). */
  probeFailsUntil?: Record<string, number>;
}

/** NodeExpandVolume itself: NodeResizeInProgress lasted 50–95 ms in the recordings. */
const NODE_EXPAND_MS = 100;

export class Kubelet {
  private readonly startAt = new Map<string, number>();
  private readonly expandAt = new Map<string, number>();
  private readonly probeFailsUntil = new Map<string, number>();

  constructor(private readonly ctx: ControllerContext) {}

  state(): KubeletState {
    return {
      startAt: Object.fromEntries(this.startAt),
      expandAt: Object.fromEntries(this.expandAt),
      ...(this.probeFailsUntil.size ? { probeFailsUntil: Object.fromEntries(this.probeFailsUntil) } : {}),
    };
  }

  /**
   * The pod's readiness probe fails until `untilMs`: a Running pod reports Ready=False (the
   * prober's reason), one starting starts not Ready; then Ready again at the kubelet's next sync.
   */
  failReadiness(uid: string, untilMs: number): void {
    this.probeFailsUntil.set(uid, untilMs);
    this.ctx.clock.wakeAt(untilMs);
  }

  /** Ready=False while the pod's probe fails, Ready=True after: written only when it changes. */
  private probe(pod: Pod, now: number): void {
    const uid = pod.metadata.uid!;
    const until = this.probeFailsUntil.get(uid);
    if (until === undefined) return;
    const ready = now >= until;
    if (ready) this.probeFailsUntil.delete(uid);
    const conditions = (pod.status?.conditions ?? []) as { type: string; status: string }[];
    const current = conditions.find((c) => c.type === "Ready")?.status === "True";
    if (current === ready) return;
    const next = structuredClone(pod) as unknown as Json;
    const status = next.status as Json;
    status.conditions = [
      ...conditions.filter((c) => c.type !== "Ready"),
      {
        ...condition(this.ctx, "Ready"),
        status: ready ? "True" : "False",
        ...(ready ? {} : { reason: "ReadinessProbeFailed" }),
        lastProbeTime: null,
      },
    ];
    this.ctx.store.replace("pods", next, { manager: KUBELET }, "kubelet", "status");
  }

  restore(state: KubeletState): void {
    for (const [table, saved] of [
      [this.startAt, state.startAt],
      [this.expandAt, state.expandAt],
      [this.probeFailsUntil, state.probeFailsUntil ?? {}],
    ] as const) {
      table.clear();
      for (const [uid, n] of Object.entries(saved)) table.set(uid, n);
    }
  }

  private claim(pod: Pod, name: string): PersistentVolumeClaim | undefined {
    return this.ctx.store.peek("persistentvolumeclaims", pod.metadata.namespace, name) as unknown as
      | PersistentVolumeClaim
      | undefined;
  }

  sync(): void {
    const now = this.ctx.clock.nowMs();
    for (const pod of podsOf(this.ctx)) {
      const claims = claimNamesOf(pod).map((n) => this.claim(pod, n));
      if (pod.status?.phase !== "Running") {
        if (claims.some((c) => c?.status?.phase !== "Bound")) continue;
        const uid = pod.metadata.uid!;
        if (claims.some((c) => this.awaitsOfflineExpansion(c!))) {
          this.startAt.delete(uid);
          continue;
        }
        const due = this.startAt.get(uid) ?? now + this.ctx.latencies.podStartMs;
        if (!this.startAt.has(uid)) {
          this.startAt.set(uid, due);
          this.ctx.clock.wakeAt(due);
        }
        if (now < due) continue;
        this.startAt.delete(uid);
        // Mounting finishes any pending file system expansion (offline drivers grow here).
        for (const c of claims) {
          const stage = nodeStage(c!, driverOf(this.ctx, c!.spec.storageClassName), "starting");
          if (stage === "expand") this.nodeExpanded(this.nodeResizeInProgress(c!));
          else if (stage === "finish") this.nodeExpanded(c!);
        }
        const next = structuredClone(pod) as unknown as Json;
        const failing = now < (this.probeFailsUntil.get(uid) ?? 0);
        next.status = {
          phase: "Running",
          conditions: [
            {
              ...condition(this.ctx, "Ready"),
              ...(failing ? { status: "False", reason: "ReadinessProbeFailed" } : {}),
              lastProbeTime: null,
            },
          ],
          startTime: this.ctx.clock.stamp(),
        };
        this.ctx.store.replace("pods", next, { manager: KUBELET }, "kubelet", "status");
        continue;
      }
      if (!pod.metadata.deletionTimestamp) this.probe(pod, now);
      for (const c of claims) {
        if (!c) continue;
        const driver = driverOf(this.ctx, c.spec.storageClassName);
        const stage = nodeStage(c, driver, "running");
        if (stage === "idle" || stage === "wait-for-mount") continue; // an offline one grows at the next mount
        const uid = c!.metadata.uid!;
        // The node half lasts nodeResizeMs in all: waiting for the sync, then NodeExpandVolume.
        const nodeResizeMs = driver.nodeResizeMs ?? this.ctx.latencies.nodeResizeMs;
        const expandMs = Math.min(NODE_EXPAND_MS, nodeResizeMs);
        const wait = stage === "expand" ? nodeResizeMs - expandMs : expandMs;
        const due = this.expandAt.get(uid) ?? now + wait;
        if (!this.expandAt.has(uid)) {
          this.expandAt.set(uid, due);
          this.ctx.clock.wakeAt(due);
        }
        if (now < due) continue;
        this.expandAt.delete(uid);
        if (stage === "expand") {
          this.nodeResizeInProgress(c!);
          this.expandAt.set(uid, now + expandMs);
          this.ctx.clock.wakeAt(now + expandMs);
        } else this.nodeExpanded(c!);
      }
    }
  }

  /** A claim of an offline-only driver whose controller expansion has yet to happen. */
  private awaitsOfflineExpansion(pvc: PersistentVolumeClaim): boolean {
    const volume = this.ctx.volumes.get(pvc.metadata.uid!);
    return mountWaitsForController(pvc, volume?.bytes, driverOf(this.ctx, pvc.spec.storageClassName));
  }

  /** NodeExpandVolume starts; the claim as written. */
  private nodeResizeInProgress(pvc: PersistentVolumeClaim): PersistentVolumeClaim {
    const next = { ...structuredClone(pvc), status: nodeResizeInProgress(pvc.status) };
    writeClaim(this.ctx, next, KUBELET, "kubelet");
    return next;
  }

  /** NodeExpandVolume answered: the resize finishes, or the driver refused it (`nodeExpansion: "infeasible"`). */
  private nodeExpanded(pvc: PersistentVolumeClaim): void {
    const driver = driverOf(this.ctx, pvc.spec.storageClassName);
    const uid = pvc.metadata.uid!;
    if (driver.nodeExpansion !== "infeasible") {
      writeClaim(this.ctx, { ...structuredClone(pvc), status: resizeFinished(pvc.status) }, KUBELET, "kubelet");
      this.expandAt.delete(uid);
      return;
    }
    // Tried again retryMs later (the kubelet's back-off), once the resizer has made it
    // NodeResizePending again.
    const volume = this.ctx.volumes.get(uid)?.name ?? pvc.spec.volumeName ?? pvc.metadata.name;
    const message = `failed to expand pvc with rpc error: code = OutOfRange desc = the node cannot grow the file system of volume ${volume} to ${pvc.status?.allocatedResources?.storage}`;
    const next = { ...structuredClone(pvc), status: nodeResizeInfeasible(pvc.status, message, this.ctx.clock.stamp()) };
    writeClaim(this.ctx, next, KUBELET, "kubelet");
    const retry = this.ctx.clock.nowMs() + this.ctx.latencies.retryMs;
    this.expandAt.set(uid, retry);
    this.ctx.clock.wakeAt(retry);
  }
}
