// The adapter seams of a step, split as Kubernetes splits its controllers' writes: a reader, a
// claim writer (the one action), a set-status writer (the set's annotations) and an event
// recorder. The direct API server implements all three writers; the GitOps pull-request writer
// only the claim writer; the simulated cluster is reached through the direct ones.

import type { PolicyResult, PolicySnapshot } from "./policy/policy.js";
import type { Reason } from "./reasons.js";
import type {
  ActionType,
  ArmRecord,
  ClaimAction,
  CreateSet,
  Decision,
  DeleteRecord,
  EventRecord,
  EvictPod,
  LabelClaim,
  OrphanSet,
  PatchPartition,
  RestoreOwnership,
  SetRef,
  Snapshot,
  UsageReading,
  WriteRecord,
} from "./types.js";

export interface LoadOptions {
  signal?: AbortSignal;
  /** Read the re-create record even when the set does not ask for finalize (`claimstep finalize`). */
  recreateRecord?: boolean;
  /** List the VolumeAttributesClasses even when no template names one yet (`set --vac`). */
  volumeAttributesClasses?: boolean;
}

export interface StateReader {
  /**
   * Load one StatefulSet and what surrounds it, with its policy parsed once the set is read (and
   * only what the policy needs loaded after it). Throws ApiError (NotFound …) on failure.
   */
  load(ref: SetRef, opts?: LoadOptions): Promise<PolicySnapshot>;
}

/**
 * Autogrow's metrics: the usage of a set's claims (kubelet_volume_stats_used_bytes and
 * _capacity_bytes), one instant query. Never throws: an unreachable server or a query error is a
 * reading that says why (the step goes on without autogrow).
 */
export interface MetricsReader {
  usage(ref: SetRef, claims: readonly string[], signal?: AbortSignal): Promise<UsageReading>;
}

/** What the planner needs to know of the writer that will carry out its action. */
export interface WriterCapabilities {
  /** Shown in decisions and results, e.g. `direct`, `pull-request writer (github)`. */
  readonly name: string;
  /** Action types this writer can carry out; any other becomes Blocked/ActionNotSupported. */
  readonly supports: readonly ActionType[];
  /** The writer proposes changes for a person to approve (a pull request) instead of applying them. */
  readonly proposes: boolean;
  /** Why this writer can carry out nothing at all, and what a person must do (e.g. no GitOps repository configured). */
  readonly unavailable?: string;
}

/** What a claim writer did with an action. */
export type ApplyOutcome =
  | { kind: "applied"; detail?: string }
  /** Accepted for later (e.g. a pull request awaiting merge): the step waits. */
  | { kind: "proposed"; detail: string; url?: string }
  /** The writer will not carry it out (e.g. its pull request was closed unmerged): the set blocks. */
  | { kind: "refused"; reason: Extract<Reason, "ChangeRejected" | "ApplyRejected">; message: string; url?: string };

/** Writes one claim: the single action of a step. */
export interface ClaimWriter extends WriterCapabilities {
  /** Apply one claim update (or propose a re-create); the decision is its context (revision, table). Throws ApiError when the server refuses. */
  apply(action: ClaimAction, decision: Decision): Promise<ApplyOutcome>;
}

/** Writes claimstep's annotations on the StatefulSet. */
export interface SetStatusWriter {
  /** Merge-patch StatefulSet annotations with a resourceVersion precondition; resolves to the set's new resourceVersion when the server says it. */
  annotateSet(ref: SetRef, annotations: Record<string, string>, resourceVersion?: string): Promise<string | undefined>;
}

/** Records Events on the StatefulSet. */
export interface EventRecorder {
  /** Record events on the StatefulSet, de-duplicated (a repeat raises the count). */
  recordEvents(ref: SetRef, events: EventRecord[], now: Date): Promise<void>;
}

/** What became of a pod-side action. */
export type PodOutcome = { kind: "applied"; detail: string } | { kind: "budget"; message: string };

/**
 * The pod side (docs/design.md "Pods"): the partition and evictions. Operational, so always direct,
 * with the set-status writer's credentials, whatever writes the claims.
 */
export interface PodWriter {
  /**
   * Merge-patch the partition, the user-partition record (a number records, null removes) and the
   * set's annotations of this step in one request, under the set's resourceVersion as read.
   */
  patchPartition(action: PatchPartition, annotations: Record<string, string> | undefined): Promise<PodOutcome>;
  /** POST pods/<name>/eviction with the pod's uid as precondition; a PodDisruptionBudget's 429 is `budget`. */
  evict(action: EvictPod): Promise<PodOutcome>;
  /**
   * R3: how long a refused eviction keeps claimstep from asking again; absent: BUDGET_CHARGE_SECONDS
   * (core/policy/pod-policy.ts, two minutes). Less only in tests (CLAIMSTEP_BUDGET_CHARGE_SECONDS).
   */
  readonly budgetChargeSeconds?: number;
}

/**
 * The re-create (docs/design.md "Re-creating the set", F1–F4), always direct: the record, the orphan
 * delete of the set, its creation from the record, the record's removal. Each is one request.
 */
export interface RecreateWriter {
  writeRecord(action: WriteRecord): Promise<{ kind: "applied"; detail: string }>;
  armRecord(action: ArmRecord): Promise<{ kind: "applied"; detail: string }>;
  orphanSet(action: OrphanSet): Promise<{ kind: "applied"; detail: string }>;
  createSet(action: CreateSet): Promise<{ kind: "applied"; detail: string }>;
  /**
   * F5: hand the old set's field ownership back: the managedFields, the annotation that says so and
   * the step's own annotations (its status), in one merge patch under the set's resourceVersion.
   */
  restoreOwnership(
    action: RestoreOwnership,
    annotations: Record<string, string> | undefined,
  ): Promise<{ kind: "applied"; detail: string }>;
  deleteRecord(action: DeleteRecord): Promise<{ kind: "applied"; detail: string }>;
  /** After a re-create without a template: label (or unlabel) one of its claims orphaned-from the set. */
  labelClaim(action: LabelClaim): Promise<{ kind: "applied"; detail: string }>;
}

/** The writers of a step. */
export interface Writers {
  /**
   * The claim writer, or the choice of one per set (by `claimstep.io/apply-via`); the step passes
   * the set's policy as it parsed it (core/policy/policy.ts), so the choice does not parse it again.
   */
  claims: ClaimWriter | ((snapshot: Snapshot, policy?: PolicyResult) => ClaimWriter);
  status: SetStatusWriter;
  events: EventRecorder;
  /** Partition patches and evictions; absent: a step that needs one blocks saying so. */
  pods?: PodWriter;
  /** The re-create's requests; absent: a step that needs one blocks saying so. */
  recreate?: RecreateWriter;
}

// The sweeper's Lease (coordination.k8s.io/v1), as leader election (core/kube/lease.ts) reads and writes it.

/** A Lease's spec (coordination.k8s.io/v1 LeaseSpec, the fields leader election uses). */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  /** MicroTime: RFC 3339 with microseconds, e.g. `2026-11-30T10:00:00.000000Z`. */
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** The Lease as read from the API server. */
export interface ObservedLease {
  spec: LeaseSpec;
  resourceVersion: string;
}

/** What became of a create or update of the Lease (a step's write has its own: core/plan/verdict.ts WriteOutcome). */
export type LeaseWriteOutcome =
  /** It landed: the Lease as now stored. */
  | { kind: "written"; lease: ObservedLease }
  /** 409 (AlreadyExists on create, Conflict on update): someone else wrote first. */
  | { kind: "lost" }
  /** No answer, or an error: whether it landed is unknown. */
  | { kind: "failed"; error?: string };

/** The one Lease, as the election reaches it (adapters/kube/lease.ts; the loop: functions/lease/elector.ts). */
export interface LeaseApi {
  /** e.g. `leases.coordination.k8s.io claimstep/claimstep-sweeper`, for the log. */
  readonly describe: string;
  /** The Lease, or undefined when there is none (404); throws when it cannot be read. */
  get(): Promise<ObservedLease | undefined>;
  create(spec: LeaseSpec): Promise<LeaseWriteOutcome>;
  /** Write `spec` under a resourceVersion precondition. */
  update(spec: LeaseSpec, resourceVersion: string): Promise<LeaseWriteOutcome>;
}
