// The spine: what a step reads (Snapshot), what it decides (Decision) and the one thing it may
// do (Action). Every adapter and entry point speaks these types.
import type {
  PersistentVolumeClaim,
  Pod,
  StatefulSet,
  StorageClass,
  VolumeAttributesClass,
} from "./k8s.js";
import type { EventReason, Reason } from "./reasons.js";

/** Annotation and label keys of the user-facing contract (DESIGN.md). */
export const Keys = {
  strategy: "claimstep.io/volume-claim-update-strategy",
  templates: "claimstep.io/volume-claim-templates",
  updateRevision: "claimstep.io/update-revision",
  currentRevision: "claimstep.io/current-revision",
  status: "claimstep.io/status",
  applyVia: "claimstep.io/apply-via",
  revisionLabel: "claimstep.io/revision",
  betaStorageClass: "volume.beta.kubernetes.io/storage-class",
} as const;

export const FIELD_MANAGER = "claimstep";

/** Which StatefulSet a step is about. */
export interface SetRef {
  namespace: string;
  name: string;
}

/** Everything one step reads: one StatefulSet and the objects around it. */
export interface Snapshot {
  statefulSet: StatefulSet;
  /** Pods matching the set's selector (any ordinal, condemned included). */
  pods: Pod[];
  /** PVCs matching the set's selector. */
  claims: PersistentVolumeClaim[];
  storageClasses: StorageClass[];
  /** `undefined` when the cluster has no VolumeAttributesClass API. */
  volumeAttributesClasses: VolumeAttributesClass[] | undefined;
}

/**
 * One server-side apply of one PVC, carrying only the fields claimstep owns plus the revision
 * label (fieldManager `claimstep`, force=true).
 */
export interface PatchClaim {
  type: "PatchClaim";
  namespace: string;
  /** PVC name: `<template>-<set>-<ordinal>`. */
  claim: string;
  template: string;
  ordinal: number;
  /** Requested storage, as the quantity string to write (never less than the PVC's spec). */
  storage: string;
  volumeAttributesClassName?: string;
  /** Template labels plus `claimstep.io/revision`. */
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** The PVC's uid and resourceVersion as read, for writers that want preconditions. */
  uid?: string;
  resourceVersion?: string;
}

/** The single action a Decision may carry. A union so later work (pod coordination) can add cases. */
export type Action = PatchClaim;
export type ActionType = Action["type"];

export type Phase = "Idle" | "Progressing" | "Waiting" | "Blocked" | "Complete";

export type EventType = "Normal" | "Warning";

/** An Event to record on the StatefulSet (events.k8s.io/v1), de-duplicated by the writer. */
export interface EventRecord {
  type: EventType;
  reason: EventReason;
  /** The verb of `events.k8s.io/v1` `action`, e.g. `PatchClaim`, `Block`, `Complete`. */
  action: string;
  note: string;
}

/** Readiness of one claim (DESIGN.md rule 8), from the real status fields. */
export type ClaimReadiness =
  | { state: "Ready" }
  | { state: "Missing"; message: string }
  | { state: "NotBound"; message: string }
  | { state: "Resizing"; message: string }
  | { state: "WaitingForPod"; message: string }
  | { state: "Modifying"; message: string }
  | { state: "Retrying"; message: string }
  | { state: "Failed"; reason: Extract<Reason, "ResizeFailed" | "ModifyVolumeFailed">; message: string }
  | { state: "Behind"; message: string };
export type ReadinessState = ClaimReadiness["state"];

/** One claim of one ordinal, as every interface renders it. */
export interface ClaimReport {
  template: string;
  claim: string;
  exists: boolean;
  /** spec.resources.requests.storage as found. */
  spec?: string;
  /** status.capacity.storage as found. */
  capacity?: string;
  /** What claimstep wants requested: max(template, spec). */
  target?: string;
  volumeAttributesClassName?: { desired?: string; current?: string };
  /** The claim's `claimstep.io/revision` label. */
  revision?: string;
  readiness: ClaimReadiness;
}

export type OrdinalState =
  | "Updated" // at the revision and ready
  | "InFlight" // at the revision, not ready yet
  | "Pending" // needs an update, not started
  | "Blocked"
  | "OutOfScope" // below the partition
  | "Condemned"; // outside [start, start + replicas)

export interface OrdinalReport {
  ordinal: number;
  pod: string;
  podPhase?: string;
  state: OrdinalState;
  claims: ClaimReport[];
}

/** The compact JSON written to `claimstep.io/status`. */
export interface StatusRecord {
  phase: Phase;
  reason: Reason;
  message: string;
  ordinal?: number;
  revision?: string;
  counts: { updated: number; inFlight: number; pending: number; blocked: number; total: number };
  /**
   * When the phase or the reason last changed (as a condition's lastTransitionTime): carried over
   * from the previous record while both stay the same.
   */
  since: string;
  observedAt: string;
}

export interface Decision {
  ref: SetRef;
  phase: Phase;
  /** Machine-readable reason (core/reasons.ts): e.g. `ClaimUpdated`, `Converged`, `NotOptedIn`, `OnDelete`. */
  reason: Reason;
  message: string;
  /** Update revision of the desired templates, when they are valid. */
  revision?: string;
  /** At most one action. */
  action?: Action;
  events: EventRecord[];
  /**
   * StatefulSet annotations to write (merge patch, resourceVersion precondition); absent when
   * nothing changes, so a converged set gets no write at all.
   */
  setAnnotations?: Record<string, string>;
  /** The StatefulSet's resourceVersion as read, the precondition of `setAnnotations`. */
  setResourceVersion?: string;
  status: StatusRecord;
  ordinals: OrdinalReport[];
  /**
   * Seconds after which the next step is worth running: short while Progressing, the driver's or
   * a person's pace while Waiting, the server's Retry-After after a transient failure; absent when
   * only a change of the set (Complete, Blocked, Idle) gives a step something to do.
   */
  requeueAfter?: number;
}
