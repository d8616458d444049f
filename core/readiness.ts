// Claim readiness (docs/design.md rule 8), read from the real PVC status fields that the
// external-resizer, kubelet and external-resizer's ModifyVolume write.
import type { Condition, PersistentVolumeClaim } from "./k8s.js";
import { toBytes } from "./quantity.js";
import type { ClaimReadiness } from "./types.js";

export interface ReadinessWant {
  /** Bytes the capacity must reach: min(template request, PVC spec request). */
  storageBytes: bigint;
  /** The VolumeAttributesClass the template names, if any. */
  volumeAttributesClassName?: string;
}

const condition = (pvc: PersistentVolumeClaim, type: string): Condition | undefined =>
  pvc.status?.conditions?.find((c) => c.type === type && c.status === "True");

/**
 * The resizer reports the volume in use (an offline-only driver: it expands only while no pod
 * uses the volume): not a failure, the expansion waits on the pod (R1).
 */
export const resizeBlockedByPod = (pvc: PersistentVolumeClaim): boolean =>
  (pvc.status?.conditions ?? []).some(
    (c) => c.type === "ControllerResizeError" && c.status === "True" && /\bin[- ]use\b/i.test(c.message ?? ""),
  );

const withMessage = (what: string, c: Condition | undefined): string => (c?.message ? `${what}: ${c.message}` : what);

function storageReadiness(pvc: PersistentVolumeClaim, want: bigint): ClaimReadiness | undefined {
  const capacity = pvc.status?.capacity?.storage;
  if (capacity !== undefined && toBytes(capacity) >= want) return undefined;
  const name = pvc.metadata.name;
  const allocation = pvc.status?.allocatedResourceStatuses?.storage;
  const controllerError = condition(pvc, "ControllerResizeError");
  const nodeError = condition(pvc, "NodeResizeError");
  if (allocation === "ControllerResizeInfeasible" || allocation === "NodeResizeInfeasible") {
    // The request changed since (lowered, X1, or raised): the resizer retries at the new one.
    const allocated = pvc.status?.allocatedResources?.storage;
    const spec = pvc.spec.resources?.requests?.storage;
    if (allocated !== undefined && spec !== undefined && toBytes(allocated) !== toBytes(String(spec))) {
      return {
        state: "Resizing",
        message: `${name}: the resize to ${allocated} was infeasible; waiting for the resizer to retry at the request ${spec}`,
      };
    }
    return {
      state: "Failed",
      reason: "ResizeFailed",
      message: withMessage(`${name}: resize is infeasible (${allocation})`, controllerError ?? nodeError),
    };
  }
  if (controllerError || nodeError) {
    return {
      state: "Retrying",
      message: withMessage(`${name}: resize failed, the driver retries`, controllerError ?? nodeError),
    };
  }
  const fsPending = condition(pvc, "FileSystemResizePending");
  if (allocation === "NodeResizePending" || allocation === "NodeResizeInProgress" || fsPending) {
    return {
      state: "WaitingForPod",
      message: `${name}: volume grown, file system resize pending until a pod mounts it${fsPending?.message ? ` (${fsPending.message})` : ""}`,
    };
  }
  if (allocation === "ControllerResizeInProgress" || condition(pvc, "Resizing")) {
    return { state: "Resizing", message: `${name}: the driver is resizing the volume` };
  }
  const spec = pvc.spec.resources?.requests?.storage;
  if (spec === undefined || toBytes(spec) < want) {
    return { state: "Behind", message: `${name}: request not yet raised` };
  }
  return { state: "Resizing", message: `${name}: waiting for the resizer to pick up the new request` };
}

function volumeClassReadiness(pvc: PersistentVolumeClaim, vac: string): ClaimReadiness | undefined {
  const name = pvc.metadata.name;
  const modify = pvc.status?.modifyVolumeStatus;
  if (pvc.status?.currentVolumeAttributesClassName === vac && !modify) return undefined;
  if (modify?.status === "Infeasible") {
    return {
      state: "Failed",
      reason: "ModifyVolumeFailed",
      message: withMessage(
        `${name}: changing to VolumeAttributesClass ${vac} is infeasible`,
        condition(pvc, "ModifyVolumeError"),
      ),
    };
  }
  const error = condition(pvc, "ModifyVolumeError");
  if (error)
    return { state: "Retrying", message: withMessage(`${name}: modifying volume failed, the driver retries`, error) };
  if (pvc.spec.volumeAttributesClassName !== vac) {
    return { state: "Behind", message: `${name}: volumeAttributesClassName not yet set to ${vac}` };
  }
  return {
    state: "Modifying",
    message: `${name}: modifying volume to ${vac}${modify?.status ? ` (${modify.status})` : ""}`,
  };
}

/** Is this claim ready at what the template asks, and if not, why (rule 8). */
export function claimReadiness(
  pvc: PersistentVolumeClaim | undefined,
  want: ReadinessWant,
  expectedName = "claim",
): ClaimReadiness {
  if (!pvc)
    return { state: "Missing", message: `${expectedName}: not created yet (left to the StatefulSet controller)` };
  // Rule 13: a claim being deleted is as good as missing, whatever its status says.
  if (pvc.metadata.deletionTimestamp) {
    return {
      state: "Missing",
      message: `${pvc.metadata.name} is being deleted (deletionTimestamp ${pvc.metadata.deletionTimestamp}); the StatefulSet controller re-creates it`,
    };
  }
  if (pvc.status?.phase !== "Bound") {
    return { state: "NotBound", message: `${pvc.metadata.name}: phase ${pvc.status?.phase ?? "unknown"}, not Bound` };
  }
  const storage = storageReadiness(pvc, want.storageBytes);
  if (storage?.state === "Failed") return storage;
  const vac = want.volumeAttributesClassName ? volumeClassReadiness(pvc, want.volumeAttributesClassName) : undefined;
  if (vac?.state === "Failed") return vac;
  return storage ?? vac ?? { state: "Ready" };
}
