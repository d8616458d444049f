// The spine: what a step reads (Snapshot), what it decides (Decision) and the one thing it may
// do (Action). Every adapter and entry point speaks these types.
import type {
  ClaimTemplate,
  ConfigMap,
  PersistentVolumeClaim,
  Pod,
  StatefulSet,
  StorageClass,
  VolumeAttributesClass,
} from "./kube/k8s.js";
import type { ManagedFieldsEntry } from "./kube/ownership.js";
import type { EventReason, EventType, Phase, Reason } from "./reasons.js";

/** Which StatefulSet a step is about. */
export interface SetRef {
  namespace: string;
  name: string;
}

/** One claim's usage as the kubelet reports it (kubelet_volume_stats_*). */
export interface VolumeUsage {
  claim: string;
  usedBytes: bigint;
  capacityBytes: bigint;
}

/** What the metrics adapter found for the set's claims. */
export type UsageReading = { ok: true; volumes: VolumeUsage[] } | { ok: false; message: string };

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
  /**
   * The re-create record (ConfigMap `claimstep-recreate-<set>`), read when finalize applies or
   * the set is gone; absent when there is none (or it was not read).
   */
  recreateRecord?: ConfigMap;
  /** The StatefulSet does not exist: `statefulSet` is the manifest the record holds (F3). */
  setMissing?: boolean;
  /** Autogrow's reading of the claims' usage (one instant Prometheus query), when it applies. */
  volumeUsage?: UsageReading;
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
  /** Template labels plus `claimstep.io/revision` (rule 19's size first: the claim's own revision, if any). */
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Rule 19: the template's class, written with the revision by the next apply once this resize is done. */
  classFollows?: string;
  /** The PVC's uid and resourceVersion as read, for writers that want preconditions. */
  uid?: string;
  resourceVersion?: string;
}

/**
 * Move `spec.updateStrategy.rollingUpdate.partition` (P1, P2, P4, P5): a merge patch of the
 * StatefulSet under its resourceVersion as read, carrying the user-partition record in the same
 * request (recorded on take-over, removed on restore).
 */
export interface PatchPartition {
  type: "PatchPartition";
  namespace: string;
  set: string;
  /** The partition to write (counted from spec.ordinals.start). */
  partition: number;
  /** The partition as read. */
  from: number;
  /** Record the user's partition (a number: take-over), remove the record (null: restore), or leave it (absent). */
  userPartition?: number | null;
  resourceVersion?: string;
}

/** Evict one pod through the Eviction API (policy/v1), which honours PodDisruptionBudgets (R2). */
export interface EvictPod {
  type: "EvictPod";
  namespace: string;
  pod: string;
  /** The pod's uid as read: the eviction's precondition (409 when the pod was replaced since). */
  uid: string;
  ordinal: number;
  /** The claim whose file system resize waits on this pod. */
  claim: string;
}

/** F1: create the re-create record, ConfigMap `claimstep-recreate-<set>` (409 when one exists). */
export interface WriteRecord {
  type: "WriteRecord";
  namespace: string;
  set: string;
  /** The ConfigMap to create. */
  record: ConfigMap;
}

/** F2: DELETE the set, propagationPolicy Orphan, with the uid and resourceVersion as read. */
export interface OrphanSet {
  type: "OrphanSet";
  namespace: string;
  set: string;
  uid: string;
  resourceVersion: string;
}

/** F3: POST the set from the record (409 AlreadyExists while the old one finalizes). */
export interface CreateSet {
  type: "CreateSet";
  namespace: string;
  set: string;
  manifest: StatefulSet;
}

/**
 * Before F2: arm the record (or disarm it), a merge patch under the record's resourceVersion as
 * read. The set is deleted only with an armed record, and a record is discarded only unarmed and
 * under the resourceVersion it was read at: arming changes it, so a step that decided to discard
 * on a snapshot older than the orphan delete loses the race instead of losing the set.
 */
export interface ArmRecord {
  type: "ArmRecord";
  namespace: string;
  set: string;
  name: string;
  armed: boolean;
  resourceVersion: string;
}

/** F4 (or a discard): DELETE the record (uid precondition; a discard also its resourceVersion). */
export interface DeleteRecord {
  type: "DeleteRecord";
  namespace: string;
  set: string;
  name: string;
  uid: string;
  /** Set for a discard: the record exactly as read (unarmed), or nothing. */
  resourceVersion?: string;
}

/**
 * F5, after the new set adopted its pods and before the record goes: hand the field ownership the
 * old set had back (core/kube/ownership.ts). One merge patch of `metadata.managedFields` and the
 * `claimstep.io/ownership-restored` annotation, under the new set's uid and resourceVersion as read.
 */
export interface RestoreOwnership {
  type: "RestoreOwnership";
  namespace: string;
  set: string;
  uid: string;
  resourceVersion: string;
  /** The uid of the record the ownership comes from (the annotation's value). */
  record: string;
  managedFields: ManagedFieldsEntry[];
}

/**
 * GitOps mode, before F1: propose the re-create as a pull request that edits the StatefulSet's
 * manifest in Git to carry the desired templates (and drop the desired-templates annotation);
 * merging it approves F1–F4. A claim-writer action: only the pull-request writer carries it out.
 */
export interface ProposeRecreate {
  type: "ProposeRecreate";
  namespace: string;
  set: string;
  revision: string;
  /** The desired claim templates, as the manifest in Git must carry them. */
  templates: ClaimTemplate[];
  /** The held-back pod template (`claimstep.io/pod-template`) the manifest must carry, when there is one. */
  podTemplate?: unknown;
  /** Claim templates the manifest must no longer carry (`claimstep.io/remove-claim-templates`). */
  removed?: string[];
}

/**
 * After a re-create without a template: label a claim of the removed template
 * `claimstep.io/orphaned-from=<set>` (or remove that label from a claim whose template came back).
 * A merge patch of the claim's labels under its resourceVersion as read; never a delete.
 */
export interface LabelClaim {
  type: "LabelClaim";
  namespace: string;
  set: string;
  claim: string;
  /** The set to name in the label, or null to remove it (the template came back: the claim is reused). */
  orphanedFrom: string | null;
  uid?: string;
  resourceVersion?: string;
}

/**
 * Autogrow: raise one template's desired size in `claimstep.io/volume-claim-templates` (merge
 * patch under the set's resourceVersion as read, with the autogrown-from record), or propose that
 * as a pull request in GitOps mode. The rollout that follows grows every ordinal.
 */
export interface RaiseTemplate {
  type: "RaiseTemplate";
  namespace: string;
  set: string;
  template: string;
  from: string;
  to: string;
  /** The whole desired templates after the raise (the annotation's new value). */
  templates: ClaimTemplate[];
  /** The revision grown from, and the one the raise makes. */
  fromRevision: string;
  toRevision: string;
  /** `claimstep.io/autogrown-from` after the raise: the revisions grown from, this one last. */
  autogrownFrom: string;
  resourceVersion?: string;
}

/** What a claim writer carries out: a claim, a raise of the desired templates, or (pull requests) the proposal of a re-create. */
export type ClaimAction = PatchClaim | ProposeRecreate | RaiseTemplate;

/** The single action a Decision may carry. */
export type Action =
  | PatchClaim
  | PatchPartition
  | EvictPod
  | WriteRecord
  | ArmRecord
  | OrphanSet
  | CreateSet
  | DeleteRecord
  | RestoreOwnership
  | ProposeRecreate
  | RaiseTemplate
  | LabelClaim;
export type ActionType = Action["type"];

/** An Event to record on the StatefulSet (events.k8s.io/v1), de-duplicated by the writer. */
export interface EventRecord {
  type: EventType;
  reason: EventReason;
  /** The verb of `events.k8s.io/v1` `action`, e.g. `PatchClaim`, `Block`, `Complete`. */
  action: string;
  note: string;
}

/** Readiness of one claim (docs/design.md rule 8), from the real status fields. */
export type ClaimReadiness =
  | { state: "Ready" }
  | { state: "Missing"; message: string }
  | { state: "NotBound"; message: string }
  | { state: "Resizing"; message: string }
  | { state: "WaitingForPod"; message: string }
  | { state: "Modifying"; message: string; reason?: Extract<Reason, "ModifyVolumePending"> }
  | { state: "Retrying"; message: string }
  | {
      state: "Failed";
      reason: Extract<Reason, "ResizeFailed" | "NodeResizeFailed" | "ModifyVolumeFailed">;
      message: string;
    }
  | { state: "Behind"; message: string };

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
  /** The pod's Ready condition (absent when the pod does not exist). */
  podReady?: boolean;
  /** The pod's pod-template revision (`controller-revision-hash`). */
  podRevision?: string;
  /** Whether the pod runs the set's `status.updateRevision` (absent when the set reports none). */
  podUpdated?: boolean;
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
   * The pull request the claim writer made (or found) for this step, as its answer says: what the
   * status page links. Never taken from the message, which other text (a driver's or an admission
   * error) can put URLs in.
   */
  pullRequest?: string;
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
  /** Claims labelled `claimstep.io/orphaned-from` this set: kept after their template was removed, for a person to delete. */
  orphanedClaims?: OrphanedClaim[];
  /**
   * Seconds after which the next step is worth running: short while Progressing, the driver's or
   * a person's pace while Waiting, the server's Retry-After after a transient failure; absent when
   * only a change of the set (Complete, Blocked, Idle) gives a step something to do.
   */
  requeueAfter?: number;
}

/** A claim of a removed template, left in place (I1). */
export interface OrphanedClaim {
  claim: string;
  template: string;
  /** Whether a pod of the set still mounts it (until the pod is restarted). */
  mounted: boolean;
}

/** A pod or claim F1 recorded that is not the same object any more. */
export interface Replaced {
  kind: "pod" | "claim";
  name: string;
  /** gone; re-created (another uid); deleting (the recorded uid, with a deletionTimestamp). */
  state: "gone" | "re-created" | "deleting";
  uid: string;
  newUid?: string;
}
