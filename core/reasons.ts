// Every reason a Decision can carry, as constants with the phase it belongs to, the type of the
// Event it records (when it records one) and how soon to look at the set again (in the style of
// Argo Rollouts' utils/conditions). Imports nothing; the message builders are in core/messages.ts.

export type Phase = "Idle" | "Progressing" | "Waiting" | "Blocked" | "Complete";

export type EventType = "Normal" | "Warning";

interface ReasonInfo {
  phase: Phase;
  /** Type of the Event recorded under this reason; absent: the reason records no Event of its own. */
  event?: EventType;
  /** Seconds until the next step is worth running (`Decision.requeueAfter`); absent: nothing to wait for. */
  requeueAfter?: number;
}

/**
 * Mid re-create, between the arming of the record and the create of the new set: the set is going
 * or gone, and every shipped mode steps it again at once (functions/sweep.ts), not an interval later.
 */
export const AT_ONCE = 0.25;
/** Short while a rollout moves: the claim just written is worth looking at again soon. */
const SOON = 2;
/** The pace of a CSI driver: a resize or a modification takes seconds to minutes. */
const DRIVER_PACE = 10;
/** Controllers that create or bind claims. */
const CONTROLLER_PACE = 15;
/** A person approving a pull request. */
const PERSON_PACE = 60;
/**
 * A PodDisruptionBudget charged by a failed eviction frees itself after about two minutes: the
 * default charge (core/policy/pod-policy.ts BUDGET_CHARGE_SECONDS; test/core/plan/pods.test.ts holds them
 * equal). A step given a shorter one (a test's) says its own wait.
 */
const BUDGET_PACE = 120;
/** After a transient failure (lost race, 429, 5xx, timeout) that named no Retry-After. */
export const RETRY_PACE = 5;

export const REASONS = {
  // Idle: claimstep leaves the set alone.
  NotOptedIn: { phase: "Idle" },
  OnDelete: { phase: "Idle" },
  // Progressing: one claim is being written.
  ClaimUpdated: { phase: "Progressing", event: "Normal", requeueAfter: SOON },
  // Progressing: the partition moves or a pod is restarted (docs/design.md "Pods").
  PartitionHeld: { phase: "Progressing", event: "Normal", requeueAfter: SOON },
  PartitionLowered: { phase: "Progressing", event: "Normal", requeueAfter: SOON },
  PartitionRestored: { phase: "Progressing", event: "Normal", requeueAfter: SOON },
  PodEvicted: { phase: "Progressing", event: "Normal", requeueAfter: CONTROLLER_PACE },
  // Progressing: one request of the re-create (docs/design.md "Re-creating the set", F1–F4).
  RecordWritten: { phase: "Progressing", event: "Normal", requeueAfter: SOON },
  RecordArmed: { phase: "Progressing", requeueAfter: AT_ONCE },
  SetOrphaned: { phase: "Progressing", event: "Normal", requeueAfter: AT_ONCE },
  SetCreated: { phase: "Progressing", event: "Normal", requeueAfter: SOON },
  OwnershipRestored: { phase: "Progressing", event: "Normal", requeueAfter: AT_ONCE },
  // Not Complete while the set is not what it asks for: its claims are done and the re-create is
  // next, or the record goes but pods must still restart to mount the re-created set's volumes.
  RecreateNext: { phase: "Progressing", requeueAfter: SOON },
  RecreatedPodsNext: { phase: "Progressing", requeueAfter: SOON },
  RecordDiscarded: { phase: "Progressing", event: "Normal", requeueAfter: SOON },
  RecreateApproved: { phase: "Progressing", event: "Normal", requeueAfter: SOON },
  AutogrowTriggered: { phase: "Progressing", event: "Normal", requeueAfter: SOON },
  // Progressing: after a re-create without a template, its claims are kept and labelled (or reused).
  ClaimOrphaned: { phase: "Progressing", event: "Normal", requeueAfter: SOON },
  ClaimReused: { phase: "Progressing", event: "Normal", requeueAfter: SOON },
  // Waiting: something outside claimstep has to happen first.
  PodUpdating: { phase: "Waiting", requeueAfter: CONTROLLER_PACE },
  /** Rule 21 (KEP-4650 table row 9): an updated ordinal's pod, or a pod using up the last maxUnavailable slot, is not Ready. */
  PodNotReady: { phase: "Waiting", event: "Warning", requeueAfter: CONTROLLER_PACE },
  Recreating: { phase: "Waiting", requeueAfter: SOON },
  DisruptionBudget: { phase: "Waiting", event: "Warning", requeueAfter: BUDGET_PACE },
  ClaimResizing: { phase: "Waiting", event: "Normal", requeueAfter: DRIVER_PACE },
  ClaimNotBound: { phase: "Waiting", event: "Warning", requeueAfter: CONTROLLER_PACE },
  ClaimMissing: { phase: "Waiting", requeueAfter: CONTROLLER_PACE },
  AwaitingApproval: { phase: "Waiting", requeueAfter: PERSON_PACE },
  /** Rule 18: a VolumeAttributesClass modification Pending on a class that exists now (the resizer retries on its resync). */
  ModifyVolumePending: { phase: "Waiting", event: "Warning", requeueAfter: PERSON_PACE },
  // Blocked: a person has to act; stepping again changes nothing until they do.
  InvalidTemplates: { phase: "Blocked", event: "Warning" },
  InvalidApplyVia: { phase: "Blocked", event: "Warning" },
  InvalidPolicy: { phase: "Blocked", event: "Warning" },
  RecordUnreadable: { phase: "Blocked", event: "Warning" },
  RecreateReplaced: { phase: "Blocked", event: "Warning" },
  /** A record claimstep did not write (or not for the set as it is now): never acted on, never deleted. */
  RecordNotOurs: { phase: "Blocked", event: "Warning" },
  /** The set was re-created by someone else between claimstep's orphan delete and its create. */
  RecreatedByOther: { phase: "Blocked", event: "Warning" },
  AutogrowLimit: { phase: "Blocked", event: "Warning" },
  TemplatesNeedRecreate: { phase: "Blocked", event: "Warning" },
  StorageClassNotFound: { phase: "Blocked", event: "Warning" },
  StorageClassMismatch: { phase: "Blocked", event: "Warning" },
  ImmutableFieldMismatch: { phase: "Blocked", event: "Warning" },
  ExpansionNotAllowed: { phase: "Blocked", event: "Warning" },
  VolumeAttributesClassNotFound: { phase: "Blocked", event: "Warning" },
  /** Issue 36 point 5: the VolumeAttributesClass's driverName is not the claim's StorageClass's provisioner. */
  VolumeAttributesClassDriverMismatch: { phase: "Blocked", event: "Warning" },
  /** Issue 36 point 5: no component took up a claim's resize or modification in 10 minutes (no resizer, no ModifyVolume). */
  DriverNotResponding: { phase: "Blocked", event: "Warning" },
  ResizeFailed: { phase: "Blocked", event: "Warning" },
  /** Rule 17: the kubelet's file system expansion failed at the size allocated (NodeResizeError). */
  NodeResizeFailed: { phase: "Blocked", event: "Warning" },
  RecoveryNotPossible: { phase: "Blocked", event: "Warning" },
  ModifyVolumeFailed: { phase: "Blocked", event: "Warning" },
  QuotaExceeded: { phase: "Blocked", event: "Warning" },
  ApplyRejected: { phase: "Blocked", event: "Warning" },
  ChangeRejected: { phase: "Blocked", event: "Warning" },
  ActionNotSupported: { phase: "Blocked", event: "Warning" },
  // Complete: every claim in scope is at the revision and ready.
  RolloutComplete: { phase: "Complete", event: "Normal" },
  SetRecreated: { phase: "Complete", event: "Normal" },
  Finalized: { phase: "Complete" },
  Converged: { phase: "Complete" },
} as const satisfies Record<string, ReasonInfo>;

export type Reason = keyof typeof REASONS;

/** Reasons that record an Event of their own. */
export type EventReason = { [R in Reason]: (typeof REASONS)[R] extends { event: EventType } ? R : never }[Reason];

/** Reasons of one phase, e.g. `ReasonOf<"Blocked">`. */
export type ReasonOf<P extends Phase> = { [R in Reason]: (typeof REASONS)[R]["phase"] extends P ? R : never }[Reason];

export const phaseOf = (reason: Reason): Phase => REASONS[reason].phase;

export const requeueAfterOf = (reason: Reason): number | undefined => (REASONS[reason] as ReasonInfo).requeueAfter;
