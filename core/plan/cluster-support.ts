// Issue 36 point 6: what the API server a set lives on silently leaves out. Pure functions of the
// set as read; the messages are in core/messages.ts.

import type { PersistentVolumeClaim, StatefulSet, StorageClass } from "../kube/k8s.js";
import { toBytes } from "../kube/quantity.js";
import { maxUnavailableOf } from "../kube/statefulset.js";
import { concluded, Messages } from "../messages.js";
import type { OrdinalPlan, WalkConclusion } from "../parts.js";
import { recordedStatusOf } from "../policy/records.js";
import { effectiveClass } from "./claims.js";

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/** spec.updateStrategy.rollingUpdate.maxUnavailable as the manifest kubectl (or Argo CD) applied asked it. */
function lastAppliedMaxUnavailable(set: StatefulSet): number | string | undefined {
  const raw = set.metadata.annotations?.[LAST_APPLIED];
  if (!raw) return undefined;
  try {
    const applied = JSON.parse(raw) as { spec?: { updateStrategy?: { rollingUpdate?: { maxUnavailable?: unknown } } } };
    const v = applied.spec?.updateStrategy?.rollingUpdate?.maxUnavailable;
    return typeof v === "number" || typeof v === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a manager's entry (server-side apply or update) owns the field. */
function ownsMaxUnavailable(set: StatefulSet): string | undefined {
  const entries = (set.metadata as { managedFields?: { manager?: string; fieldsV1?: unknown }[] }).managedFields ?? [];
  for (const e of entries) {
    const f = e.fieldsV1 as Record<string, Record<string, Record<string, Record<string, unknown>>>> | undefined;
    if (f?.["f:spec"]?.["f:updateStrategy"]?.["f:rollingUpdate"]?.["f:maxUnavailable"] !== undefined) return e.manager;
  }
  return undefined;
}

/**
 * `maxUnavailable` asked for (above 1) but absent from the set: the API server drops the field when
 * its MaxUnavailableStatefulSet feature gate is off, and the set then rolls one pod at a time (and
 * claimstep one ordinal at a time). Told from what the set carries: kubectl's (and Argo CD's
 * client-side) last-applied-configuration, or a managedFields entry that owns the field (the field
 * manager records an apply's or update's fields before the strategy drops the disabled ones).
 */
export function droppedMaxUnavailable(set: StatefulSet): string | undefined {
  if (set.spec.updateStrategy?.rollingUpdate?.maxUnavailable !== undefined) return undefined;
  if ((set.spec.updateStrategy?.type ?? "RollingUpdate") !== "RollingUpdate") return undefined;
  const asked = lastAppliedMaxUnavailable(set);
  if (asked !== undefined) {
    const parsed = maxUnavailableOf({
      ...set,
      spec: { ...set.spec, updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: asked } } },
    });
    return parsed.ok && parsed.value > 1 ? Messages.maxUnavailableDropped(String(asked), LAST_APPLIED) : undefined;
  }
  const manager = ownsMaxUnavailable(set);
  return manager !== undefined ? Messages.maxUnavailableDropped(undefined, `managedFields (${manager})`) : undefined;
}

/** How long a claim may show no sign of its driver before the wait is called off (issue 36 point 5). */
export const DRIVER_STALL_MS = 10 * 60_000;

const RESIZE_CONDITIONS: readonly string[] = [
  "Resizing",
  "FileSystemResizePending",
  "ControllerResizeError",
  "NodeResizeError",
];

/**
 * What a claim shows when no component ever took up claimstep's write: a request above the
 * capacity with no resize condition, no allocation status and nothing allocated at the request
 * (a class with `allowVolumeExpansion: true` whose driver has no resizer: local-path); or the
 * class asked with no `modifyVolumeStatus` at all (the resizer writes one, even Pending, as soon
 * as it looks: a driver without ControllerModifyVolume — ceph-csi RBD, TopoLVM — or a resizer
 * without the VolumeAttributesClass gate never does).
 */
function untouched(pvc: PersistentVolumeClaim): "resize" | "modify" | undefined {
  const s = pvc.status;
  if (pvc.metadata.deletionTimestamp || s?.phase !== "Bound") return undefined;
  const spec = pvc.spec.resources?.requests?.storage;
  const capacity = s.capacity?.storage;
  const bytes = (q: string | number | undefined) => {
    try {
      return q === undefined ? undefined : toBytes(q);
    } catch {
      return undefined;
    }
  };
  const [want, have, allocated] = [bytes(spec), bytes(capacity), bytes(s.allocatedResources?.storage)];
  if (
    want !== undefined &&
    have !== undefined &&
    have < want &&
    !(s.conditions ?? []).some((c) => RESIZE_CONDITIONS.includes(c.type) && c.status === "True") &&
    s.allocatedResourceStatuses?.storage === undefined &&
    (allocated === undefined || allocated < want)
  )
    return "resize";
  const vac = pvc.spec.volumeAttributesClassName;
  if (
    vac &&
    s.currentVolumeAttributesClassName !== vac &&
    !s.modifyVolumeStatus &&
    !(s.conditions ?? []).some((c) => c.type === "ModifyVolumeError" || c.type === "ModifyingVolume")
  )
    return "modify";
  return undefined;
}

/**
 * Issue 36 point 5: a rollout that has waited on a claim's resize or modification for
 * DRIVER_STALL_MS (the status record's `since` under `ClaimResizing`; once blocked, its own record)
 * while the claim shows no
 * sign of any component taking it up is Blocked/DriverNotResponding, naming what the claim shows
 * and what to check, instead of waiting without end. Only a conclusion that waits on claims
 * (`ClaimResizing`, no action) is replaced; once the claim's status moves, the rule no longer
 * applies and the rollout goes on by itself.
 */
export function stalledDriver(
  set: StatefulSet,
  ordinals: readonly OrdinalPlan[],
  classes: ReadonlyMap<string, StorageClass>,
  conclusion: WalkConclusion,
  nowMs: number,
): WalkConclusion | undefined {
  if (conclusion.reason !== "ClaimResizing" || conclusion.action) return undefined;
  const previous = recordedStatusOf(set);
  const since = Date.parse(previous?.since ?? "");
  // Once blocked, it stays so while the claim shows nothing (its own record is the previous one).
  const waited =
    previous?.reason === "DriverNotResponding" ||
    (previous?.reason === "ClaimResizing" && !Number.isNaN(since) && nowMs - since >= DRIVER_STALL_MS);
  if (!waited) return undefined;
  for (const o of ordinals) {
    for (const c of o.claims) {
      if (!c.pvc || c.done || !c.report.exists) continue;
      const what = untouched(c.pvc);
      if (!what) continue;
      const className = effectiveClass(c.pvc);
      const message = Messages.driverNotResponding({
        claim: c.pvc.metadata.name,
        namespace: c.pvc.metadata.namespace ?? "default",
        what,
        request: String(c.pvc.spec.resources?.requests?.storage ?? ""),
        capacity: c.pvc.status?.capacity?.storage ?? "",
        vac: c.pvc.spec.volumeAttributesClassName ?? "",
        className,
        provisioner: className ? classes.get(className)?.provisioner : undefined,
        resizer: c.pvc.metadata.annotations?.[STORAGE_RESIZER],
        minutes: DRIVER_STALL_MS / 60_000,
      });
      return {
        ...concluded("DriverNotResponding", message),
        ordinal: o.ordinal,
      };
    }
  }
  return undefined;
}

/** Set by kube-controller-manager's expand controller: the resizer it hands the claim to. */
const STORAGE_RESIZER = "volume.kubernetes.io/storage-resizer";
