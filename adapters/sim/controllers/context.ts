// What the simulated controllers share: the store, the clock, per-class driver behaviour, the
// latencies, the backing volumes, and small helpers to write status and emit events.
import type { Condition, ObjectMeta, PersistentVolumeClaim } from "../../../core/kube/index.js";

/** A pod as the simulated controllers handle it (core's Pod schema keeps only what a step reads). */
export interface Pod {
  metadata: ObjectMeta;
  spec?: Record<string, unknown>;
  status?: { phase?: string; conditions?: Condition[] };
}

import type { VirtualClock } from "../clock.js";
import type { ManagerRef } from "../errors.js";
import { DEFAULT_DRIVER, type DriverBehaviour } from "../node-model.js";
import type { Json, Store } from "../store.js";

/** How the CSI driver behind a StorageClass behaves: the node model's one vocabulary (scenarios name it here). */
export type { DriverBehaviour } from "../node-model.js";

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
