// Claim readiness (docs/design.md rule 8), read from the real PVC status fields that the
// external-resizer, kubelet and external-resizer's ModifyVolume write.

import { Keys } from "../keys.js";
import type { Condition, PersistentVolumeClaim } from "../kube/k8s.js";
import { toBytes } from "../kube/quantity.js";
import { Messages } from "../messages.js";
import type { ClaimReadiness } from "../types.js";

export interface ReadinessWant {
  /** Bytes the capacity must reach: min(template request, PVC spec request). */
  storageBytes: bigint;
  /** The VolumeAttributesClass the template names, if any. */
  volumeAttributesClassName?: string;
  /** Whether that class exists in the cluster (undefined: not known), for the message of rule 18. */
  volumeAttributesClassExists?: boolean;
}

const condition = (pvc: PersistentVolumeClaim, type: string): Condition | undefined =>
  pvc.status?.conditions?.find((c) => c.type === type && c.status === "True");

/**
 * What says a volume cannot grow while a pod uses it (issue 36 point 5). The external-resizer
 * decides "in use" from the gRPC code alone (`inUseError`: FailedPrecondition, the CSI spec's code
 * for "volume in use, the plugin supports only offline expansion") and puts the error into the
 * `ControllerResizeError` condition ("failed to expand pvc with rpc error: code = FailedPrecondition
 * desc = …") and a `VolumeResizeFailed` Warning Event ("Unable to expand <ns>/<pvc> because CSI
 * driver <name> only supports offline expansion and volume is currently in-use"). Azure Disk
 * without LiveResize answers Internal with "disk resize is only supported on Unattached disk".
 */
const IN_USE: readonly RegExp[] = [
  /code = FailedPrecondition\b/,
  /only supports offline expansion/i,
  /only supported on Unattached disk/i,
  /\bin[- ]use\b/i,
];

/**
 * The resizer reports the volume in use (an offline-only driver: it expands only while no pod
 * uses the volume): not a failure, the expansion waits on the pod (R1).
 */
export const resizeBlockedByPod = (pvc: PersistentVolumeClaim): boolean =>
  (pvc.status?.conditions ?? []).some(
    (c) => c.type === "ControllerResizeError" && c.status === "True" && IN_USE.some((re) => re.test(c.message ?? "")),
  );

const withMessage = (what: string, c: Condition | undefined): string => (c?.message ? `${what}: ${c.message}` : what);

/**
 * Issue 36 point 5: AWS EBS refuses a volume's next modification within its cooldown (EC2
 * ModifyVolume `VolumeModificationRateExceeded`, "You've reached the maximum modification rate per
 * volume limit. Wait at least 6 hours between modifications per EBS volume."); the EBS CSI driver
 * passes EC2's text on, and the resizer puts it into the claim's error condition. Said plainly, with
 * EC2's text (which says when the next one is allowed) kept.
 */
const RATE_LIMITED = /VolumeModificationRateExceeded|maximum modification rate/i;
const retrying = (what: string, c: Condition | undefined): string =>
  RATE_LIMITED.test(c?.message ?? "") ? Messages.modificationRateLimited(withMessage(what, c)) : withMessage(what, c);

/**
 * Rule 16: the resizer marks a claim whose driver needs no node expansion; the kubelet then skips
 * the node half and the controller sets the capacity at once. Nothing waits on a pod for it.
 */
export const nodeExpansionNotRequired = (pvc: PersistentVolumeClaim): boolean =>
  pvc.metadata.annotations?.[Keys.nodeExpansionNotRequired] === "true";

/**
 * Rule 15: the node's half of an expansion is still to come or under way (the claim's capacity is
 * updated only after it, but a rollout must never say Complete while it is pending, whatever the
 * capacity says); never for a claim that needs no node expansion (rule 16).
 */
export function nodeExpansionPending(pvc: PersistentVolumeClaim): boolean {
  if (nodeExpansionNotRequired(pvc)) return false;
  const allocation = pvc.status?.allocatedResourceStatuses?.storage;
  return (
    allocation === "NodeResizePending" ||
    allocation === "NodeResizeInProgress" ||
    condition(pvc, "FileSystemResizePending") !== undefined
  );
}

/** An expansion in progress: the controller's half, or the node's (rules 15 and 17). */
const resizeInProgress = (pvc: PersistentVolumeClaim): boolean =>
  pvc.status?.allocatedResourceStatuses?.storage === "ControllerResizeInProgress" || nodeExpansionPending(pvc);

/** The request changed since the resizer last allocated (lowered, X1, or raised): it retries at the new one. */
function requestChangedSince(pvc: PersistentVolumeClaim): { allocated: string; spec: string } | undefined {
  const allocated = pvc.status?.allocatedResources?.storage;
  const spec = pvc.spec.resources?.requests?.storage;
  return allocated !== undefined && spec !== undefined && toBytes(allocated) !== toBytes(String(spec))
    ? { allocated, spec: String(spec) }
    : undefined;
}

/**
 * Rule 17: the node's expansion failed at the size the resizer allocated: `NodeResizeError` (the
 * kubelet's `NodeResizeInfeasible` lasts milliseconds; the claim is handed back to the node half,
 * or left with nothing in progress, and the condition stays — a change of the request does not
 * clear it) raised during this attempt (not before the resizer's current `Resizing`), the request
 * still what the resizer allocated, its controller half not under way, and the capacity below the
 * request. A server that reports no `allocatedResources` (older than 1.34 or the feature off) is
 * not judged here (X2).
 */
export function nodeExpansionFailed(pvc: PersistentVolumeClaim): boolean {
  const error = condition(pvc, "NodeResizeError");
  if (!error || requestChangedSince(pvc)) return false;
  if (pvc.status?.allocatedResourceStatuses?.storage === "ControllerResizeInProgress") return false;
  if (pvc.status?.allocatedResources?.storage === undefined) return false;
  // An error older than the resizer's current attempt is left from an earlier one.
  const attempt = Date.parse(condition(pvc, "Resizing")?.lastTransitionTime ?? "");
  if (attempt > Date.parse(error.lastTransitionTime ?? "")) return false;
  const capacity = pvc.status?.capacity?.storage;
  const spec = pvc.spec.resources?.requests?.storage;
  return spec !== undefined && (capacity === undefined || toBytes(capacity) < toBytes(String(spec)));
}

function storageReadiness(pvc: PersistentVolumeClaim, want: bigint): ClaimReadiness | undefined {
  const capacity = pvc.status?.capacity?.storage;
  const reached = capacity !== undefined && toBytes(capacity) >= want;
  // Rules 15 and 17: capacity at the want and no expansion under way is ready (a NodeResizeError
  // left from an earlier attempt does not block); under way, it is not, whatever the capacity says.
  if (reached && !resizeInProgress(pvc)) return undefined;
  const name = pvc.metadata.name;
  const allocation = pvc.status?.allocatedResourceStatuses?.storage;
  const controllerError = condition(pvc, "ControllerResizeError");
  const nodeError = condition(pvc, "NodeResizeError");
  if (allocation === "ControllerResizeInfeasible" || allocation === "NodeResizeInfeasible") {
    // The request changed since (lowered, X1, or raised): the resizer retries at the new one.
    const changed = requestChangedSince(pvc);
    if (changed) {
      return {
        state: "Resizing",
        message: `${name}: the resize to ${changed.allocated} was infeasible; waiting for the resizer to retry at the request ${changed.spec}`,
      };
    }
    return {
      state: "Failed",
      reason: "ResizeFailed",
      message: withMessage(`${name}: resize is infeasible (${allocation})`, controllerError ?? nodeError),
    };
  }
  if (controllerError) {
    return { state: "Retrying", message: retrying(`${name}: resize failed, the driver retries`, controllerError) };
  }
  // Rule 17: the node failed at this size; retrying it there changes nothing a person does not.
  if (nodeExpansionFailed(pvc)) {
    return {
      state: "Failed",
      reason: "NodeResizeFailed",
      message: Messages.nodeResizeFailed(name, nodeError?.message, capacity, pvc.spec.resources?.requests?.storage),
    };
  }
  if (nodeError && resizeInProgress(pvc)) {
    return { state: "Retrying", message: withMessage(`${name}: resize failed, the driver retries`, nodeError) };
  }
  if (nodeExpansionPending(pvc)) {
    const fsPending = condition(pvc, "FileSystemResizePending");
    return {
      state: "WaitingForPod",
      message: Messages.nodeExpansionPending(name, reached, fsPending?.message ?? allocation),
    };
  }
  if (allocation === "ControllerResizeInProgress" || condition(pvc, "Resizing")) {
    return { state: "Resizing", message: `${name}: the driver is resizing the volume` };
  }
  const changed = nodeError ? requestChangedSince(pvc) : undefined;
  if (changed) {
    return {
      state: "Resizing",
      message: withMessage(
        `${name}: the node's expansion to ${changed.allocated} failed; waiting for the resizer to retry at the request ${changed.spec}`,
        nodeError,
      ),
    };
  }
  const spec = pvc.spec.resources?.requests?.storage;
  if (spec === undefined || toBytes(spec) < want) {
    return { state: "Behind", message: `${name}: request not yet raised` };
  }
  return { state: "Resizing", message: `${name}: waiting for the resizer to pick up the new request` };
}

function volumeClassReadiness(
  pvc: PersistentVolumeClaim,
  vac: string,
  exists: boolean | undefined,
): ClaimReadiness | undefined {
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
    return { state: "Retrying", message: retrying(`${name}: modifying volume failed, the driver retries`, error) };
  if (pvc.spec.volumeAttributesClassName !== vac) {
    return { state: "Behind", message: `${name}: volumeAttributesClassName not yet set to ${vac}` };
  }
  // Rule 18: Pending (the class was missing when asked for) is not woken by the class appearing.
  if (modify?.status === "Pending") {
    return {
      state: "Modifying",
      reason: "ModifyVolumePending",
      message: Messages.modifyVolumePending(
        name,
        pvc.metadata.namespace,
        vac,
        pvc.status?.currentVolumeAttributesClassName,
        exists,
      ),
    };
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
  const vac = want.volumeAttributesClassName
    ? volumeClassReadiness(pvc, want.volumeAttributesClassName, want.volumeAttributesClassExists)
    : undefined;
  if (vac?.state === "Failed") return vac;
  return storage ?? vac ?? { state: "Ready" };
}
