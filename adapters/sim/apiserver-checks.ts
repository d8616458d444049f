// The API server's own checks of a write, as the sim makes them (not claimstep's admission webhook,
// core/change/admission.ts): a PVC update's validation (ValidatePersistentVolumeClaimUpdate) first,
// then its built-in plugins PersistentVolumeClaimResize and ResourceQuota, in that order; a
// StatefulSet's pod-template volumes. With the messages of fixtures/apiserver/.
import type { PersistentVolumeClaim, StorageClass } from "../../core/kube/index.js";
import { formatBytes, toBytes } from "../../core/kube/index.js";
import type { ApiError } from "../api-error.js";
import { admissionForbidden, type FieldError, invalid, type ResourceName } from "./errors.js";
import { type SpecProfile, specDiff } from "./spec-diff.js";

export const PVC_RESOURCE: ResourceName = {
  plural: "persistentvolumeclaims",
  group: "",
  kind: "PersistentVolumeClaim",
};

const storageOf = (pvc: PersistentVolumeClaim): string | undefined => pvc.spec.resources?.requests?.storage;
const bytesOf = (q: string | undefined): bigint => (q === undefined ? 0n : toBytes(q));

const IMMUTABLE_TEXT: Record<SpecProfile, string> = {
  "v1.24": "spec is immutable after creation except resources.requests for bound claims",
  vac: "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
};

/**
 * Validation of a PVC update; the errors in the API server's order. `recovery`: the server has
 * RecoverVolumeExpansionFailure (GA in Kubernetes 1.34): a request may be lowered, but only to a
 * value strictly above status.capacity (fixtures pvc-decrease-to-capacity.txt,
 * pvc-decrease-above-capacity.txt); without it every decrease is refused (pvc-shrink.txt).
 */
export function validateClaimUpdate(
  old: PersistentVolumeClaim,
  next: PersistentVolumeClaim,
  profile: SpecProfile,
  recovery = false,
): FieldError[] {
  const errors: FieldError[] = [];
  if (next.metadata.uid !== undefined && next.metadata.uid !== old.metadata.uid) {
    errors.push({ type: "Invalid", field: "metadata.uid", value: next.metadata.uid, detail: "field is immutable" });
  }
  const storage = storageOf(next);
  if (storage === undefined) {
    errors.push({ type: "Required", field: "spec.resources[storage]" });
    return errors;
  }
  try {
    toBytes(storage);
  } catch {
    errors.push({
      type: "Invalid",
      field: "spec.resources.requests.storage",
      value: storage,
      detail: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    });
    return errors;
  }
  // A bound claim may change its request (and, with VolumeAttributesClass, its class name).
  const bound = old.status?.phase === "Bound";
  const oldClone = structuredClone(old.spec);
  const newClone = structuredClone(next.spec);
  if (bound) {
    newClone.resources = {
      ...(newClone.resources ?? {}),
      requests: { ...(newClone.resources?.requests ?? {}), storage: storageOf(old)! },
    };
    if (profile === "vac") {
      if (oldClone.volumeAttributesClassName === undefined) delete newClone.volumeAttributesClassName;
      else newClone.volumeAttributesClassName = oldClone.volumeAttributesClassName;
    }
  }
  if (JSON.stringify(canonical(oldClone)) !== JSON.stringify(canonical(newClone))) {
    // v1.24 prints go-cmp's report on a line of its own; v1.34 the unified diff right after the text.
    errors.push({
      type: "Forbidden",
      field: "spec",
      detail: `${IMMUTABLE_TEXT[profile]}\n${specDiff(oldClone, newClone, profile)}`,
    });
  }
  if (bytesOf(storage) < bytesOf(storageOf(old))) {
    if (!recovery) {
      errors.push({
        type: "Forbidden",
        field: "spec.resources.requests.storage",
        detail: "field can not be less than previous value",
      });
    } else if (bytesOf(storage) <= bytesOf(old.status?.capacity?.storage)) {
      errors.push({
        type: "Forbidden",
        field: "spec.resources.requests.storage",
        detail: "field can not be less than status.capacity",
      });
    }
  }
  // Measured on v1.34.2 (issue 34): back to none is accepted while the claim has no current class
  // (a modification not yet applied, e.g. Pending on a class that did not exist); refused after.
  if (
    profile === "vac" &&
    old.spec.volumeAttributesClassName &&
    !next.spec.volumeAttributesClassName &&
    old.status?.currentVolumeAttributesClassName
  ) {
    errors.push({
      type: "Forbidden",
      field: "spec.volumeAttributesClassName",
      detail: "update from non-nil value to nil is forbidden",
    });
  }
  return errors;
}

const canonical = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(canonical)
    : v && typeof v === "object"
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>)
            .filter(([, x]) => x !== undefined && x !== null)
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([k, x]) => [k, canonical(x)]),
        )
      : v;

export function validationError(name: string, errors: FieldError[]): ApiError {
  return invalid(PVC_RESOURCE, name, errors);
}

/** A ResourceQuota's hard `requests.storage`, as the sim keeps it. */
export interface StorageQuota {
  name: string;
  namespace: string;
  hard: string;
}

/** Quota usage of a claim: the larger of its request and what is allocated to it. */
export const quotaUsage = (pvc: PersistentVolumeClaim): bigint => {
  const spec = bytesOf(storageOf(pvc));
  const allocated = bytesOf(pvc.status?.allocatedResources?.storage);
  return spec > allocated ? spec : allocated;
};

/** The server's refusal of a PVC that grows (its plugins PersistentVolumeClaimResize, then ResourceQuota: 403), if any. */
export function claimGrowthRefusal(
  old: PersistentVolumeClaim,
  next: PersistentVolumeClaim,
  ctx: { storageClasses: Map<string, StorageClass>; quotas: StorageQuota[]; namespaceClaims: PersistentVolumeClaim[] },
): ApiError | undefined {
  const name = next.metadata.name;
  const grows = bytesOf(storageOf(next)) > bytesOf(storageOf(old));
  if (!grows) return undefined;
  // PersistentVolumeClaimResize: only dynamically provisioned claims of an expandable class.
  const className = old.spec.storageClassName ?? undefined;
  const sc = className ? ctx.storageClasses.get(className) : undefined;
  if (sc?.allowVolumeExpansion !== true) {
    return admissionForbidden(
      PVC_RESOURCE,
      name,
      "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
    );
  }
  // ResourceQuota: the increase is charged against every quota of the namespace.
  const requested = quotaUsage(next) - quotaUsage(old);
  for (const q of ctx.quotas) {
    const used = ctx.namespaceClaims.reduce((sum, c) => sum + quotaUsage(c), 0n);
    const hard = toBytes(q.hard);
    if (requested > 0n && used + requested > hard) {
      return admissionForbidden(
        PVC_RESOURCE,
        name,
        `exceeded quota: ${q.name}, requested: requests.storage=${formatBytes(requested)}, used: requests.storage=${formatBytes(used)}, limited: requests.storage=${q.hard}`,
      );
    }
  }
  return undefined;
}

/**
 * What the API server's validation of a StatefulSet (create and update) says about its pod
 * template's volumes: every `volumeMounts[].name` and `volumeDevices[].name` of a container, then
 * of an init container, must name a volume of `spec.template.spec.volumes` or a claim template
 * (field.NotFound otherwise; the order and texts test/e2e/conformance.test.ts finds on v1.34).
 */
export function validateSetVolumes(set: Record<string, unknown>): FieldError[] {
  const spec = (set.spec ?? {}) as Record<string, unknown>;
  const podSpec = (((spec.template ?? {}) as Record<string, unknown>).spec ?? {}) as Record<string, unknown>;
  const named = (list: unknown): string[] =>
    (Array.isArray(list) ? list : []).map((v) =>
      String((v as { name?: unknown; metadata?: { name?: unknown } }).name ?? ""),
    );
  const volumes = new Set([
    ...named(podSpec.volumes),
    ...(Array.isArray(spec.volumeClaimTemplates) ? spec.volumeClaimTemplates : []).map((t) =>
      String(((t as { metadata?: { name?: unknown } }).metadata?.name ?? "") as string),
    ),
  ]);
  const errors: FieldError[] = [];
  for (const kind of ["containers", "initContainers"] as const) {
    const containers = Array.isArray(podSpec[kind]) ? (podSpec[kind] as Record<string, unknown>[]) : [];
    containers.forEach((c, i) => {
      for (const list of ["volumeMounts", "volumeDevices"] as const)
        named(c[list]).forEach((name, j) => {
          if (!volumes.has(name))
            errors.push({
              type: "NotFound",
              field: `spec.template.spec.${kind}[${i}].${list}[${j}].name`,
              value: name,
            });
        });
    });
  }
  return errors;
}
