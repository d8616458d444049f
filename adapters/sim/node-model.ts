// The node and storage side of a cluster, as one pure model: how a CSI driver behaves
// (DriverBehaviour, the one vocabulary of the simulated cluster's scenarios and of the e2e node
// agent's StorageClass annotations), what the PV controller, external-resizer (v2.0.0, with
// RecoverVolumeExpansionFailure, GA in v1.34), its VolumeAttributesClass modifier and the kubelet
// (v1.34) write on a claim at each step, and which step a claim is at. No I/O, no clock: the
// drivers (controllers/storage.ts and controllers/kubelet.ts in the simulated cluster,
// test/e2e/support/node-agent.ts against a real API server) read the claim, ask the model, time
// the step and write what it returns.
//
// The reference is the real node: test/fixtures/storage/ (kubelet v1.34.2 + CSI hostpath +
// external-resizer v2.0.0), held by test/adapters/sim/storage-conformance.test.ts.
//
//   resize: allocatedResources + allocatedResourceStatuses.storage=ControllerResizeInProgress +
//           Resizing → NodeResizePending + Resizing + FileSystemResizePending → (kubelet)
//           NodeResizeInProgress → capacity, the entry and every resize condition cleared |
//           capacity at once (a driver without node expansion, or a Block volume) |
//           ControllerResizeInfeasible + Resizing + ControllerResizeError (not retried at the
//           same size; a changed request, larger or lowered, is: the recovery) |
//           NodeResizeInfeasible + NodeResizeError → (resizer) NodeResizePending, the error kept.
//   modify: modifyVolumeStatus {InProgress, target} + ModifyingVolume → currentVolumeAttributesClassName,
//           the status and the modify conditions cleared | {Infeasible, target} + ModifyingVolume
//           "failed" + ModifyVolumeError | {Pending} while the class does not exist.
import type { Condition, PersistentVolumeClaim, PersistentVolumeClaimStatus } from "../../core/kube/index.js";
import { formatBytes, toBytes } from "../../core/kube/index.js";

/** How the CSI driver behind a StorageClass provisions, resizes and modifies volumes. */
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
  /** VolumeAttributesClasses the driver refuses (modifyVolumeStatus Infeasible), the others as `modify` says. */
  refusedClasses?: string[];
  /**
   * The VolumeAttributesClass parameters the driver accepts (the CSI hostpath driver's
   * `--accepted-mutable-parameter-names`): a class with any other parameter is refused with
   * InvalidArgument "invalid parameters: [name ...]" (modifyVolumeStatus Infeasible). Unset: any.
   */
  mutableParameters?: string[];
  /** Claim created → provisioned and Bound, ms (unset: the cluster's default). */
  provisionMs?: number;
  /** Controller-side expansion time, ms (unset: the cluster's default). */
  resizeMs?: number;
  /** The kubelet's file system expansion of a mounted volume, ms (unset: the cluster's default). */
  nodeResizeMs?: number;
  /** ControllerModifyVolume time, ms (unset: the cluster's default). */
  modifyMs?: number;
  /**
   * AWS EBS: a volume's next resize within this long of its last one is refused (EC2 ModifyVolume
   * VolumeModificationRateExceeded, 6 hours), as the EBS CSI driver passes it on. Unset: no limit.
   */
  modificationCooldownMs?: number;
  /** The CSI driver's name, as its messages show it. Default sim.csi.claimstep.io. */
  driverName?: string;
}

export const DEFAULT_DRIVER: DriverBehaviour = { resize: "online", modify: "ok" };

// ---------------------------------------------------------------------------------------------
// words the real components write

/** external-resizer's annotation on a claim whose driver needs no node expansion (NodeExpansionNotRequired). */
export const NODE_EXPANSION_NOT_REQUIRED = "volume.kubernetes.io/node-expansion-not-required";
export const FILE_SYSTEM_RESIZE_PENDING =
  "Waiting for user to (re-)start a pod to finish file system resize of volume on node.";
/** The claim's resize conditions (external-resizer's and the kubelet's). */
export const RESIZE_CONDITIONS = ["Resizing", "ControllerResizeError", "FileSystemResizePending", "NodeResizeError"];
/** The modifier's conditions. */
export const MODIFY_CONDITIONS = ["ModifyingVolume", "ModifyVolumeError"];

/** A resize condition as external-resizer and the kubelet write it (lastProbeTime null). */
export const condition = (type: string, at: string, message?: string): Condition => ({
  type,
  status: "True",
  lastProbeTime: null,
  lastTransitionTime: at,
  ...(message ? { message } : {}),
});

/** A modifier's condition: probed now; its lastTransitionTime is kept by withMergedConditions while it stays True. */
const modifyCondition = (type: string, at: string, message: string): Condition => ({
  type,
  status: "True",
  lastProbeTime: at,
  lastTransitionTime: at,
  message,
});

export const hasCondition = (pvc: Pick<PersistentVolumeClaim, "status">, type: string): boolean =>
  (pvc.status?.conditions ?? []).some((c) => c.type === type && c.status === "True");

// ---------------------------------------------------------------------------------------------
// the writes, status → status (the argument is not changed)

type Status = PersistentVolumeClaimStatus;
const clone = (s: Status | undefined): Status => structuredClone(s ?? {});

/** Conditions of the given types replaced (external-resizer merges resize conditions this way); none left: no field. */
export function withConditions(status: Status | undefined, remove: string[], add: Condition[]): Status {
  const next = clone(status);
  const kept = (next.conditions ?? []).filter((c) => !remove.includes(c.type) && !add.some((a) => a.type === c.type));
  const all = [...kept, ...add];
  if (all.length) next.conditions = all;
  else delete next.conditions;
  return next;
}

/**
 * Conditions set as external-resizer's modifier merges them: one of the same type is replaced
 * where it stands (keeping its lastTransitionTime while it stays True), a new one is appended.
 */
export function withMergedConditions(status: Status | undefined, add: Condition[]): Status {
  const next = clone(status);
  const all = [...(next.conditions ?? [])];
  for (const c of add) {
    const at = all.findIndex((x) => x.type === c.type);
    if (at < 0) all.push(c);
    else
      all[at] = {
        ...c,
        lastTransitionTime: all[at]!.status === c.status ? all[at]!.lastTransitionTime : c.lastTransitionTime,
      };
  }
  next.conditions = all;
  return next;
}

const withStorageStatus = (status: Status | undefined, storage: string): Status => {
  const next = clone(status);
  next.allocatedResourceStatuses = { ...(next.allocatedResourceStatuses ?? {}), storage };
  return next;
};

/** The PV controller bound the claim to a volume of `size` (and, with one, the VolumeAttributesClass in effect). */
export const bound = (accessModes: string[], size: string, volumeAttributesClassName?: string): Status => ({
  phase: "Bound",
  accessModes,
  capacity: { storage: size },
  ...(volumeAttributesClassName ? { currentVolumeAttributesClassName: volumeAttributesClassName } : {}),
});

/**
 * markControllerResizeInProgress, once the change is noticed: allocatedResources = `size`, a
 * fresh Resizing; an earlier controller error and file system resize are dropped (a node's
 * NodeResizeError stays).
 */
export function controllerResizeStarted(status: Status | undefined, size: string, at: string): Status {
  const next = withStorageStatus(status, "ControllerResizeInProgress");
  next.allocatedResources = { ...(next.allocatedResources ?? {}), storage: size };
  return withConditions(
    next,
    ["Resizing", "ControllerResizeError", "FileSystemResizePending"],
    [condition("Resizing", at)],
  );
}

/** markControllerExpansionInfeasible: Resizing stays, the driver's final error ("code = … desc = …") beside it. */
export const controllerResizeInfeasible = (status: Status | undefined, refusal: string, at: string): Status =>
  withConditions(
    withStorageStatus(status, "ControllerResizeInfeasible"),
    [],
    [condition("ControllerResizeError", at, `failed to expand pvc with rpc error: ${refusal}`)],
  );

/** A controller error the resizer retries (in use for an offline driver, a cooldown): ControllerResizeError only. */
export const controllerResizeError = (status: Status | undefined, message: string, at: string): Status =>
  withConditions(status, [], [condition("ControllerResizeError", at, message)]);

/** markForPendingNodeExpansion: Resizing stays; the kubelet grows the file system where the volume is mounted. */
export const nodeResizePending = (status: Status | undefined, at: string): Status =>
  withConditions(
    withStorageStatus(status, "NodeResizePending"),
    ["ControllerResizeError", "FileSystemResizePending"],
    [condition("FileSystemResizePending", at, FILE_SYSTEM_RESIZE_PENDING)],
  );

/** The node refused: the resizer hands the expansion back to the node, keeping its NodeResizeError. */
export const handedBackToNode = (status: Status | undefined, at: string): Status =>
  withConditions(
    withStorageStatus(status, "NodeResizePending"),
    [],
    [condition("FileSystemResizePending", at, FILE_SYSTEM_RESIZE_PENDING)],
  );

/** NodeExpandVolume starts: allocatedResourceStatuses.storage=NodeResizeInProgress, the conditions as they are. */
export const nodeResizeInProgress = (status: Status | undefined): Status =>
  withStorageStatus(status, "NodeResizeInProgress");

/** MarkNodeExpansionInfeasible: the other resize conditions stay. */
export const nodeResizeInfeasible = (status: Status | undefined, message: string, at: string): Status =>
  withConditions(withStorageStatus(status, "NodeResizeInfeasible"), [], [condition("NodeResizeError", at, message)]);

/**
 * The expansion is over (markOverallExpansionAsFinished, or the kubelet's NodeExpandVolume):
 * capacity = `size` (default allocatedResources), the storage status and every resize condition
 * cleared; allocatedResources stays.
 */
export function resizeFinished(status: Status | undefined, size?: string): Status {
  const next = clone(status);
  const grown = size ?? next.allocatedResources?.storage;
  if (grown !== undefined) next.capacity = { ...(next.capacity ?? {}), storage: grown };
  if (next.allocatedResourceStatuses) {
    delete next.allocatedResourceStatuses.storage;
    if (!Object.keys(next.allocatedResourceStatuses).length) delete next.allocatedResourceStatuses;
  }
  return withConditions(next, RESIZE_CONDITIONS, []);
}

/** markControllerModifyVolumeStatus(Pending): the status only (the earlier target kept, no target of its own), the conditions as they are. */
export function modifyPending(status: Status | undefined): Status {
  const next = clone(status);
  const target = next.modifyVolumeStatus?.targetVolumeAttributesClassName || undefined;
  next.modifyVolumeStatus = { ...(target ? { targetVolumeAttributesClassName: target } : {}), status: "Pending" };
  return next;
}

/** markControllerModifyVolumeStatus(InProgress): an earlier ModifyVolumeError stays until the modification ends. */
export function modifyInProgress(status: Status | undefined, target: string, at: string): Status {
  const next = clone(status);
  next.modifyVolumeStatus = { targetVolumeAttributesClassName: target, status: "InProgress" };
  return withMergedConditions(next, [
    modifyCondition("ModifyingVolume", at, `Modifying volume to "${target}" is in progress.`),
  ]);
}

/** The driver refused `target` (InvalidArgument): not retried while the spec names it. */
export function modifyInfeasible(status: Status | undefined, target: string, refusal: string, at: string): Status {
  const next = clone(status);
  next.modifyVolumeStatus = { targetVolumeAttributesClassName: target, status: "Infeasible" };
  return withMergedConditions(next, [
    modifyCondition("ModifyingVolume", at, `Modifying volume to "${target}" failed. Waiting for retry.`),
    { ...modifyCondition("ModifyVolumeError", at, refusal), reason: "InvalidArgument" },
  ]);
}

/** markControllerModifyVolumeCompleted: the class in effect, the status and the modify conditions cleared. */
export function modifyCompleted(status: Status | undefined, target: string): Status {
  const next = clone(status);
  next.currentVolumeAttributesClassName = target;
  delete next.modifyVolumeStatus;
  return withConditions(next, MODIFY_CONDITIONS, []);
}

/** The spec asks for no class any more: the modifier's conditions cleared, the last modifyVolumeStatus as it was. */
export const modifyCancelled = (status: Status | undefined): Status => withConditions(status, MODIFY_CONDITIONS, []);

// ---------------------------------------------------------------------------------------------
// where a claim is

const bytes = (q: string | undefined): bigint => (q === undefined ? 0n : toBytes(q));

/**
 * What external-resizer does next with a bound claim whose volume holds `volumeBytes`:
 * - idle: nothing (as large as asked; refused at this very size; no resizer);
 * - node: the node's turn (NodeResizePending / NodeResizeInProgress): the controller waits;
 * - hand-back: the node refused (NodeResizeInfeasible): back to NodeResizePending;
 * - start: markControllerResizeInProgress at the request (a new request, a larger one, or a
 *   changed one after a refusal: the recovery, which lowers allocatedResources too);
 * - expand: ControllerExpandVolume to allocatedResources, when due.
 */
export type ResizeStage = "idle" | "node" | "hand-back" | "start" | "expand";

export function resizeStage(pvc: PersistentVolumeClaim, volumeBytes: bigint, driver: DriverBehaviour): ResizeStage {
  const spec = bytes(pvc.spec.resources?.requests?.storage);
  const allocation = pvc.status?.allocatedResourceStatuses?.storage;
  const allocated = bytes(pvc.status?.allocatedResources?.storage);
  // The node refused to grow the file system: handed back at the size the volume was grown to,
  // whatever the request says since.
  if (allocation === "NodeResizeInfeasible") return "hand-back";
  if (spec <= volumeBytes) return "idle";
  if (allocation === "NodeResizePending" || allocation === "NodeResizeInProgress") return "node";
  // An infeasible request waits for the spec to change (the resizer's slow set).
  if (allocation === "ControllerResizeInfeasible" && allocated === spec) return "idle";
  if (driver.resize === "none") return "idle";
  if (allocation !== "ControllerResizeInProgress" || allocated < spec) return "start";
  return "expand";
}

/** The driver's final refusal of an expansion to `target` bytes ("code = … desc = …"), if it refuses. */
export function expansionRefusal(
  driver: DriverBehaviour,
  target: bigint,
  className: string | null | undefined,
): string | undefined {
  // The CSI hostpath driver's words for its --max-volume-size.
  if (driver.maxStorage !== undefined && target > toBytes(driver.maxStorage))
    return `code = OutOfRange desc = Requested capacity ${target} exceeds maximum allowed ${toBytes(driver.maxStorage)}`;
  if (driver.resize === "infeasible")
    return `code = OutOfRange desc = requested size ${formatBytes(target)} is not supported by the backend of class ${className}`;
  return undefined;
}

/** The kubelet grows the file system only at a mount (not while a pod runs): offline on the node. */
const nodeExpandsOffline = (driver: DriverBehaviour): boolean =>
  driver.resize === "offline" || driver.nodeExpansion === "offline";

/**
 * What the kubelet does with a claim for a pod that mounts it, `starting` (being mounted now) or
 * `running` (mounted since before the claim became NodeResizePending):
 * - idle: no node expansion pending;
 * - wait-for-mount: an offline node expansion waits for the next mount (the pod's restart);
 * - expand: NodeExpandVolume (NodeResizeInProgress, then the answer);
 * - finish: NodeExpandVolume is in progress: its answer.
 * A mount finishes any pending expansion, whatever the driver.
 */
export type NodeStage = "idle" | "wait-for-mount" | "expand" | "finish";

export function nodeStage(pvc: PersistentVolumeClaim, driver: DriverBehaviour, pod: "starting" | "running"): NodeStage {
  const allocation = pvc.status?.allocatedResourceStatuses?.storage;
  if (allocation !== "NodeResizePending" && allocation !== "NodeResizeInProgress") return "idle";
  if (pod === "running" && nodeExpandsOffline(driver)) return "wait-for-mount";
  return allocation === "NodeResizePending" ? "expand" : "finish";
}

/**
 * A pod does not start while a claim of an offline-only driver (`resize: "offline"`) has a
 * controller expansion pending (the request above the volume, not infeasible): the volume stays
 * unpublished until the resizer has grown it, then the mount finishes the resize.
 */
export function mountWaitsForController(
  pvc: PersistentVolumeClaim,
  volumeBytes: bigint | undefined,
  driver: DriverBehaviour,
): boolean {
  if (driver.resize !== "offline") return false;
  const request = pvc.spec.resources?.requests?.storage;
  if (volumeBytes === undefined || request === undefined) return false;
  if (pvc.status?.allocatedResourceStatuses?.storage === "ControllerResizeInfeasible") return false;
  return toBytes(request) > volumeBytes;
}

/** The controller expansion finishes the resize (no file system to grow, or a driver with no node step). */
export const finishesOnController = (pvc: PersistentVolumeClaim, driver: DriverBehaviour): boolean =>
  pvc.spec.volumeMode === "Block" || driver.nodeExpansion === "none";

/**
 * What the modifier does next with a bound claim:
 * - idle: the class asked for is the one in effect;
 * - unsupported: the driver lacks MODIFY_VOLUME (nothing is written);
 * - finish: ControllerModifyVolume to `target` is in flight: it ends with that class, whatever
 *   the spec says since;
 * - cancel: the spec names no class any more;
 * - refused: the driver refused this very class (not retried while the spec names it);
 * - parked: Pending on a class that did not exist (queued again only by a change of the spec's class);
 * - start: look the class up: Pending if it does not exist, else InProgress to `target`.
 * `parkedOn`: the class the claim was left Pending on, if the driver keeps that.
 */
export type ModifyStage =
  | { stage: "idle" | "unsupported" | "cancel" | "refused" | "parked" }
  | { stage: "finish" | "start"; target: string };

export function modifyStage(pvc: PersistentVolumeClaim, driver: DriverBehaviour, parkedOn?: string): ModifyStage {
  const wanted = pvc.spec.volumeAttributesClassName || undefined;
  const current = pvc.status?.currentVolumeAttributesClassName || undefined;
  const mvs = pvc.status?.modifyVolumeStatus ?? undefined;
  if (!mvs && wanted === current) return { stage: "idle" };
  if (driver.modify === "none") return { stage: "unsupported" };
  const target = mvs?.targetVolumeAttributesClassName || undefined;
  if (mvs?.status === "InProgress" && target) return { stage: "finish", target };
  if (!wanted) return { stage: "cancel" };
  if (mvs?.status === "Infeasible" && target === wanted) return { stage: "refused" };
  if (mvs?.status === "Pending" && parkedOn === wanted) return { stage: "parked" };
  return { stage: "start", target: wanted };
}

/** The driver's refusal of VolumeAttributesClass `target` (its parameters' names given), if it refuses. */
export function modifyRefusal(
  driver: DriverBehaviour,
  target: string,
  parameters: string[],
  volumeName: string,
): string | undefined {
  if (driver.modify === "infeasible" || driver.refusedClasses?.includes(target))
    return `parameters of VolumeAttributesClass ${target} are not supported for volume ${volumeName}`;
  const invalid = driver.mutableParameters
    ? parameters.filter((p) => !driver.mutableParameters!.includes(p)).sort()
    : [];
  // The CSI hostpath driver's words for parameters outside --accepted-mutable-parameter-names.
  if (invalid.length) return `invalid parameters: [${invalid.join(" ")}]`;
  return undefined;
}
