// What the simulated controllers share: the store, the clock, per-class driver behaviour, the
// latencies, the backing volumes, and small helpers to write status and emit events.
import type { Condition, ObjectMeta, PersistentVolumeClaim } from "../../../core/k8s.js";

/** A pod as the simulated controllers handle it (core's Pod schema keeps only what a step reads). */
export interface Pod {
  metadata: ObjectMeta;
  spec?: Record<string, unknown>;
  status?: { phase?: string; conditions?: Condition[] };
}

import type { VirtualClock } from "../clock.js";
import type { ManagerRef } from "../errors.js";
import type { Json, Store } from "../store.js";

/** How the CSI driver behind a StorageClass resizes and modifies volumes. */
export interface DriverBehaviour {
  /**
   * online: grows while the pod runs; offline: refuses while a pod uses the volume (as
   * external-resizer does for drivers without ONLINE expansion); infeasible: the driver rejects
   * every expansion (ControllerResizeInfeasible); flaky: transient failures, then success. none: no
   * resizer at all (local-path: allowVolumeExpansion true, no csi-resizer): nothing ever takes the
   * request up, the claim's status never moves.
   */
  resize: "online" | "offline" | "infeasible" | "flaky" | "none";
  /**
   * How the node grows the file system after the controller expansion. online (default): the
   * kubelet grows it while the pod runs; offline: only when a pod (re)mounts the volume, so the
   * claim stays NodeResizePending + FileSystemResizePending until its pod restarts. An `offline`
   * `resize` driver is offline on the node too. none: the driver needs no node expansion (no node
   * EXPAND_VOLUME capability): the controller expansion finishes the resize at once and the
   * resizer annotates the claim `volume.kubernetes.io/node-expansion-not-required`. infeasible:
   * the node refuses to grow it (NodeExpandVolume fails with a final error): the kubelet marks the
   * claim NodeResizeInfeasible + NodeResizeError, the resizer puts it back to NodeResizePending
   * within reactMs (NodeResizeError stays), and the kubelet tries again retryMs later.
   */
  nodeExpansion?: "online" | "offline" | "none" | "infeasible";
  /** The largest volume the backend provides: an expansion beyond it is infeasible, whatever `resize` says. */
  maxStorage?: string;
  /** Transient failures of a flaky driver before it succeeds (per expansion). Default 2. */
  flakyFailures?: number;
  /**
   * ok: ControllerModifyVolume succeeds; infeasible: it is rejected (modifyVolumeStatus Infeasible);
   * none: the driver lacks MODIFY_VOLUME (ceph-csi RBD, TopoLVM), so the external-resizer runs no
   * modify controller and nothing writes the claim's modifyVolumeStatus.
   */
  modify?: "ok" | "infeasible" | "none";
  /**
   * The VolumeAttributesClass parameters the driver accepts (the CSI hostpath driver's
   * `--accepted-mutable-parameter-names`): a class with any other parameter is refused with
   * InvalidArgument "invalid parameters: [name ...]" (modifyVolumeStatus Infeasible). Unset: any.
   */
  mutableParameters?: string[];
  /** Controller-side expansion time, ms. */
  resizeMs?: number;
  /** ControllerModifyVolume time, ms. */
  modifyMs?: number;
  /**
   * AWS EBS: a volume's next resize within this long of its last one is refused (EC2 ModifyVolume
   * VolumeModificationRateExceeded, 6 hours), as the EBS CSI driver passes it on. Unset: no limit.
   */
  modificationCooldownMs?: number;
  /** The CSI driver's name, as its messages show it. Default sim.csi.claimstep.io. */
  driverName?: string;
}

export interface Latencies {
  /** PVC Pending → Bound. */
  bindMs: number;
  /** Pod created → Running and Ready (once its claims are bound). */
  podStartMs: number;
  /** A changed claim noticed by the resizer / modifier. */
  reactMs: number;
  /** Default controller-side expansion time. */
  resizeMs: number;
  /** kubelet's file system expansion of a mounted volume. */
  nodeResizeMs: number;
  /** Default ControllerModifyVolume time. */
  modifyMs: number;
  /** Back-off before a failed resize or modify is retried. */
  retryMs: number;
  /**
   * The garbage collector's delay: from an owner deleted with the `orphan` or `foregroundDeletion`
   * finalizer, or a dependent whose owners are all gone, to its work on them.
   */
  gcMs: number;
}

export const DEFAULT_LATENCIES: Latencies = {
  bindMs: 1_000,
  podStartMs: 3_000,
  reactMs: 500,
  resizeMs: 8_000,
  nodeResizeMs: 3_000,
  modifyMs: 6_000,
  retryMs: 15_000,
  gcMs: 300,
};

export const DEFAULT_DRIVER: DriverBehaviour = { resize: "online", modify: "ok" };

/** The backend volume of a bound claim. */
export interface Volume {
  name: string;
  bytes: bigint;
  volumeAttributesClassName?: string;
}

export interface ControllerContext {
  store: Store;
  clock: VirtualClock;
  latencies: Latencies;
  drivers: Map<string, DriverBehaviour>;
  volumes: Map<string, Volume>;
  /** Binding sets the claim's spec.volumeName (a current server; the v1.24 captures show it empty). */
  bindsVolumeName?: boolean;
}

export const driverOf = (ctx: ControllerContext, className: string | null | undefined): DriverBehaviour =>
  (className ? ctx.drivers.get(className) : undefined) ?? DEFAULT_DRIVER;

export const CONTROLLER_MANAGER: ManagerRef = {
  manager: "kube-controller-manager",
  operation: "Update",
  apiVersion: "v1",
};
export const BINDER: ManagerRef = {
  manager: "kube-controller-manager",
  operation: "Update",
  apiVersion: "v1",
  subresource: "status",
};
export const RESIZER: ManagerRef = {
  manager: "csi-resizer",
  operation: "Update",
  apiVersion: "v1",
  subresource: "status",
};
export const KUBELET: ManagerRef = { manager: "kubelet", operation: "Update", apiVersion: "v1", subresource: "status" };

export const claimsOf = (ctx: ControllerContext): PersistentVolumeClaim[] =>
  ctx.store.all("persistentvolumeclaims") as unknown as PersistentVolumeClaim[];
export const podsOf = (ctx: ControllerContext): Pod[] => ctx.store.all("pods") as unknown as Pod[];

/** Claims a pod mounts (spec.volumes[].persistentVolumeClaim.claimName). */
export const claimNamesOf = (pod: Pod): string[] =>
  (((pod.spec as Json | undefined)?.volumes as Json[] | undefined) ?? [])
    .map((v) => (v.persistentVolumeClaim as Json | undefined)?.claimName as string | undefined)
    .filter((n): n is string => n !== undefined);

/** Pods whose containers run (phase Running): what publishes a volume on a node. */
export const runningPodsUsing = (ctx: ControllerContext, pvc: PersistentVolumeClaim): Pod[] =>
  podsUsing(ctx, pvc).filter((p) => p.status?.phase === "Running");

/** Pods (not terminated) that use a claim. */
export const podsUsing = (ctx: ControllerContext, pvc: PersistentVolumeClaim): Pod[] =>
  podsOf(ctx).filter(
    (p) => p.metadata.namespace === pvc.metadata.namespace && claimNamesOf(p).includes(pvc.metadata.name),
  );

export const hasCondition = (pvc: PersistentVolumeClaim, type: string): boolean =>
  (pvc.status?.conditions ?? []).some((c) => c.type === type && c.status === "True");

/** Replace conditions of the given types (external-resizer merges resize conditions this way). */
export function setConditions(pvc: PersistentVolumeClaim, remove: string[], add: Condition[]): void {
  const status = (pvc.status ??= {});
  const kept = (status.conditions ?? []).filter((c) => !remove.includes(c.type) && !add.some((a) => a.type === c.type));
  const next = [...kept, ...add];
  if (next.length) status.conditions = next;
  else delete status.conditions;
}

export const condition = (ctx: ControllerContext, type: string, message?: string): Condition => ({
  type,
  status: "True",
  lastProbeTime: null,
  lastTransitionTime: ctx.clock.stamp(),
  ...(message ? { message } : {}),
});

export function writeClaim(
  ctx: ControllerContext,
  pvc: PersistentVolumeClaim,
  manager: ManagerRef,
  actor: string,
): void {
  ctx.store.replace(
    "persistentvolumeclaims",
    pvc as unknown as Json,
    { manager },
    actor,
    manager.subresource === "status" ? "status" : "update",
  );
}

/** Record an event about an object (core events as controllers emit them), counting repeats. */
export function emitEvent(
  ctx: ControllerContext,
  regarding: { kind: string; namespace?: string; name: string },
  type: "Normal" | "Warning",
  reason: string,
  note: string,
  controller: string,
): void {
  const now = ctx.clock.now().toISOString();
  const same = ctx.store.all("events", regarding.namespace).find((e) => {
    const r = e.regarding as Json | undefined;
    return r?.kind === regarding.kind && r?.name === regarding.name && e.reason === reason && e.note === note;
  });
  if (same) {
    const series = (same.series as { count: number } | undefined) ?? { count: 1 };
    ctx.store.replace(
      "events",
      { ...structuredClone(same), series: { count: series.count + 1, lastObservedTime: now } },
      { manager: { manager: controller, operation: "Update", apiVersion: "v1" } },
      controller,
      "update",
    );
    return;
  }
  ctx.store.insert(
    "events",
    {
      // Controllers name their events <object>.<suffix>, as client-go's recorder does.
      metadata: { name: ctx.store.generateName(`${regarding.name}.`), namespace: regarding.namespace ?? "default" },
      eventTime: now,
      reportingController: controller,
      reportingInstance: `${controller}-sim`,
      action: reason,
      reason,
      regarding: { apiVersion: "v1", ...regarding },
      note,
      type,
    },
    { manager: controller, operation: "Update", apiVersion: "v1" },
    controller,
  );
}
