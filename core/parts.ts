// The planner's intermediate results, as types only: what the rules conclude (DecisionParts), the
// conclusion of the walk, and each claim and ordinal evaluated. The modules of the planner (scope,
// claims, pods, walk, finalize, autogrow, decision) all speak these without importing each other.
import type { ClaimTemplate, PersistentVolumeClaim } from "./kube/k8s.js";
import type { EventReason, Reason, ReasonOf } from "./reasons.js";
import type { Action, ClaimReport, EventRecord, PatchClaim } from "./types.js";

/** What the rules concluded; the phase follows from the reason. */
export interface DecisionParts {
  reason: Reason;
  /** Reason recorded in the status annotation when it differs (a converged set keeps `RolloutComplete`). */
  statusReason?: Reason;
  message: string;
  revision?: string;
  action?: Action;
  events?: EventRecord[];
  ordinal?: number;
  /** Whether to write claimstep's annotations (false: leave the set untouched, as for opted-out sets). */
  record: boolean;
  /** Revision every claim has reached, when the rollout completes. */
  currentRevision?: string;
  /** The pull request the claim writer answered with (recorded in the status as `pullRequest`). */
  pullRequest?: string;
  /** Seconds until the next step; default: the reason's (core/reasons.ts). */
  requeueAfter?: number;
  /** Other claimstep annotations to write with the status (e.g. the record of an eviction). */
  annotations?: Record<string, string>;
}

/** The conclusion of the walk; the revision and the status record are the planner's to add. */
export type WalkConclusion = Omit<DecisionParts, "revision" | "record">;

/** Why a claim cannot be written now (rule 6), predicted from the objects instead of provoked. */
export interface Obstacle {
  reason: Extract<EventReason, ReasonOf<"Blocked" | "Waiting">>;
  message: string;
}

/** One claim of one ordinal, fully evaluated. */
export interface ClaimPlan {
  report: ClaimReport;
  template: ClaimTemplate;
  pvc?: PersistentVolumeClaim;
  /** The claim still needs claimstep's apply (rule 7). */
  needsUpdate: boolean;
  /** At the revision and ready (rule 8). */
  done: boolean;
  /** Occupies a maxUnavailable slot: written by claimstep and not yet ready. */
  inFlight: boolean;
  obstacle?: Obstacle;
  patch?: PatchClaim;
  /**
   * Rule 19: its class change waits for the resize under way on it (the resizer's two controllers
   * fight over a claim that changes both): no patch until the resize is done.
   */
  classHeld?: boolean;
  /**
   * X2 (issue 36 point 4): its expansion failed and the template no longer needs it: what it still
   * requests and how to clear that, reported with every step while it lasts (the rollout goes on).
   */
  unmet?: string;
}

export interface OrdinalPlan {
  ordinal: number;
  claims: ClaimPlan[];
}
