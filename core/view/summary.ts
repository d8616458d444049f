// Where a set stands, as every status surface shows it: `claimstep status` (one set, a namespace,
// `-A`, `-o wide`, `-o json`), `status --watch`, and the status page's list and set page. Derived
// from the one parsed policy (core/policy/policy.ts) and the plan of the step a controller would run now
// (core/plan/plan.ts, made and never written), never from a second reading of the annotations: the
// recorded status (claimstep.io/status) only says when the last step ran, whether it saw the
// desired revision, and what the API server refused (which no plan can know). Pure.

import { Keys } from "../keys.js";
import type { StatefulSet } from "../kube/k8s.js";
import { Messages } from "../messages.js";
import { nothingLeftToDo } from "../plan/decision.js";
import { recordedKept } from "../plan/recreate-record.js";
import { applyViaOf, hasNoClaimTemplates, rawAnnotation, strategyOf } from "../policy/annotations.js";
import { GITOPS_KEYS } from "../policy/gitops-owner.js";
import type { PolicyResult } from "../policy/policy.js";
import { recordedRevisionsOf, recordedStatusOf } from "../policy/records.js";
import type { Decision, SetRef, Snapshot, StatusRecord } from "../types.js";

/** How a set's claim writes are carried out (`claimstep.io/apply-via`). */
export interface ApplyMode {
  mode: "direct" | "pull-request" | "invalid";
  /** The annotation's value when it is invalid. */
  value?: string;
  /** The pull request the writer recorded in the status (`pullRequest`, http(s) only). */
  link?: string;
}

/** What `claimstep status` shows of one set, and the status page's list. */
export interface SetSummary {
  ref: SetRef;
  /** `claimstep.io/volume-claim-update-strategy` (default OnClaimDelete). */
  strategy: string;
  optedIn: boolean;
  /** The set has no claim templates, live or desired: nothing for claimstep to update. */
  noClaimTemplates?: true;
  /**
   * The phase the step would record now; `-` (reason NotObserved) while no step has recorded the
   * desired revision and the step still has work to do; `Progressing` for a set deleted mid
   * re-create; the recorded `Blocked` while the server refuses the write the step would make.
   */
  phase: string;
  reason: string;
  message: string;
  /** When the phase and reason shown were first recorded (`-`: no step recorded them yet). */
  since: string;
  /** When the last step ran (`-`: never). */
  observedAt: string;
  /** The revision the step works on: the desired templates' (`-` when they are invalid). */
  revision: string;
  /** `claimstep.io/current-revision`, the revision the last completed rollout recorded (`-` when none). */
  currentRevision: string;
  /** The revision of the desired templates as they are now (null: they are invalid). */
  desiredRevision: string | null;
  /** Ordinals done / in scope, as the plan counts them. */
  progress?: { done: number; total: number };
  /** `2/3` (or `-`). */
  updated: string;
  counts?: StatusRecord["counts"];
  ordinal?: number;
  applyMode: ApplyMode;
  /** The StatefulSet is deleted mid re-create and its record remains: the next step creates it. */
  setMissing: boolean;
  /** A step has recorded the desired revision. */
  observed: boolean;
  /** claimstep has nothing left to do for the set (core/plan/decision.ts nothingLeftToDo of the plan). */
  done: boolean;
  /** The record as the last step wrote it (`status -o json` prints it as `status`). */
  status: StatusRecord | null;
  /** What could go wrong around the rollout, whatever its phase (setWarnings); absent when nothing. */
  warnings?: string[];
}

const str = (v: unknown, fallback = "-"): string =>
  typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : fallback;

/** An http(s) URL as recorded, or undefined (any other scheme, spaces, quotes or angle brackets). */
const httpUrl = (v: unknown): string | undefined =>
  typeof v === "string" && /^https?:\/\/[^/\s<>"'`]+[^\s<>"'`]*$/.test(v) ? v : undefined;

/**
 * The apply mode as the policy has it (the annotation read again only when the policy stopped
 * before it); the link is the pull request the writer recorded (`status.pullRequest`), never a URL
 * found in a message.
 */
export function applyModeOf(
  set: Pick<StatefulSet, "metadata">,
  status: Pick<StatusRecord, "pullRequest"> | null,
  policy?: PolicyResult,
): ApplyMode {
  const via = policy?.ok ? { ok: true as const, via: policy.policy.applyVia } : applyViaOf(set);
  if (!via.ok) return { mode: "invalid", value: rawAnnotation(set.metadata.annotations, "applyVia") ?? "" };
  if (via.via === "direct") return { mode: "direct" };
  const link = httpUrl(status?.pullRequest);
  return { mode: "pull-request", ...(link ? { link } : {}) };
}

/**
 * What every status surface warns of for this set, whatever its phase: Flux's force annotation,
 * which turns any 422 Invalid (a template change claimstep's webhook did not handle) into a delete
 * of the set and its pods (issue 35).
 */
export function setWarnings(set: Pick<StatefulSet, "metadata">): string[] {
  const out: string[] = [];
  if (set.metadata.annotations?.[GITOPS_KEYS.fluxForce]?.toLowerCase() === "enabled")
    out.push(Messages.fluxForce(set.metadata, GITOPS_KEYS.fluxForce));
  return out;
}

/**
 * What a deleted set awaiting its re-create says: "kept" only when every pod and claim its record
 * names is there with its uid (core/plan/recreate-record.ts recordedKept).
 */
export const setDeletedText = (ref: SetRef, kept: boolean): string =>
  `StatefulSet ${ref.namespace}/${ref.name} is deleted${kept ? "; its pods and claims are kept" : ""}`;
export const recreateCommand = (ref: SetRef): string => `claimstep run ${ref.name} -n ${ref.namespace}`;

const STEPPED_BY = "claimstep serve, a step --all CronJob or claimstep run steps it";

type Shown = Pick<SetSummary, "phase" | "reason" | "message">;

/** The phase, reason and message every surface shows: the plan's, but for the four cases that say more. */
function shownOf(
  snapshot: Snapshot,
  planned: Decision,
  recorded: StatusRecord | null,
  observed: boolean,
  done: boolean,
): Shown {
  const s = planned.status;
  // Deleted mid re-create: listed and marked, with the command that finishes it (or why nothing will).
  if (snapshot.setMissing) {
    const gone = setDeletedText(planned.ref, recordedKept(snapshot));
    if (s.phase === "Blocked") return { phase: "Blocked", reason: s.reason, message: `${gone}; ${s.message}` };
    return {
      phase: "Progressing",
      reason: s.phase === "Progressing" || s.phase === "Waiting" ? s.reason : "Recreating",
      message: `${gone}; \`${recreateCommand(planned.ref)}\` re-creates it (as the next step of claimstep serve or a step --all CronJob does): ${s.message}`,
    };
  }
  // The server refused the write the plan would make again (the planner cannot know it): the refusal stands.
  if (
    recorded?.phase === "Blocked" &&
    planned.revision !== undefined &&
    recorded.revision === planned.revision &&
    planned.action &&
    planned.phase !== "Blocked"
  )
    return { phase: "Blocked", reason: str(recorded.reason), message: str(recorded.message, "") };
  // A desired revision no step has seen yet: never the previous revision's phase.
  if (!observed && !done && planned.phase !== "Blocked" && planned.phase !== "Idle")
    return {
      phase: "-",
      reason: "NotObserved",
      message: `no step recorded for revision ${planned.revision ?? "(invalid templates)"} yet (${STEPPED_BY}); the next step: ${s.message}`,
    };
  // Complete, with a write or a step still to come (the re-create after the rollout, the record's
  // removal, a restart): not Complete yet.
  if (s.phase === "Complete" && !done)
    return { phase: "Progressing", reason: s.reason, message: `${s.message}; ${notDoneYet(planned)}` };
  return { phase: s.phase, reason: s.reason, message: s.message };
}

/** What is still to come after a Complete that is not the end. */
const notDoneYet = (d: Pick<Decision, "action" | "requeueAfter">): string =>
  d.action
    ? `not done: the next step writes (${d.action.type})`
    : `not done: the next step is due in ${d.requeueAfter ?? 0}s`;

/**
 * One set as every status surface shows it: the snapshot a step loads, the plan that step makes of
 * it (a dry run, as the step's writers can carry it out) and the policy it parsed.
 */
export function summaryOf(snapshot: Snapshot, planned: Decision, policy: PolicyResult): SetSummary {
  const set = snapshot.statefulSet;
  const strategy = strategyOf(set);
  const recorded = recordedStatusOf(set) ?? null;
  const desiredRevision = policy.ok ? policy.policy.revision : null;
  const revision = planned.revision ?? desiredRevision ?? undefined;
  const observed = recorded !== null && revision !== undefined && recorded.revision === revision;
  const done = nothingLeftToDo(planned);
  const shown = shownOf(snapshot, planned, recorded, observed, done);
  const counts = planned.status.counts;
  const progress = counts.total > 0 ? { done: counts.updated, total: counts.total } : undefined;
  const sameAsRecorded = recorded !== null && recorded.phase === shown.phase && recorded.reason === shown.reason;
  const warnings = setWarnings(set);
  return {
    ref: planned.ref,
    strategy: strategy.kind === "InPlace" ? "InPlace" : (strategy.value ?? "OnClaimDelete"),
    optedIn: strategy.kind === "InPlace",
    ...(hasNoClaimTemplates(set) ? { noClaimTemplates: true as const } : {}),
    ...shown,
    since: sameAsRecorded ? str(recorded.since) : "-",
    observedAt: recorded ? str(recorded.observedAt) : "-",
    revision: revision ?? "-",
    currentRevision: recordedRevisionsOf(set).current ?? "-",
    desiredRevision,
    ...(progress ? { progress, counts } : {}),
    updated: progress ? `${progress.done}/${progress.total}` : "-",
    ...(planned.status.ordinal !== undefined ? { ordinal: planned.status.ordinal } : {}),
    applyMode: applyModeOf(set, recorded, policy),
    setMissing: snapshot.setMissing === true,
    observed,
    done,
    status: recorded,
    ...(warnings.length ? { warnings } : {}),
  };
}

/** How a watch ends: nothing left to do (exit 0), or a set that will not move without a person (exit 2). */
export type WatchEnd = "complete" | "blocked";

/** What `status --watch` prints, and the status page's live headline. */
export interface Headline {
  phase: string;
  reason: string;
  message: string;
  /** `2/3 updated`, once a step recorded this revision. */
  updated?: string;
  end?: WatchEnd;
}

/** The summary as one line that changes when the set moves, and how a watch of it ends. */
export function headlineOf(s: SetSummary): Headline {
  if (!s.optedIn) {
    return {
      phase: "Idle",
      reason: "NotOptedIn",
      message: s.noClaimTemplates
        ? `not opted in: ${Messages.noClaimTemplates(s.ref.name)}`
        : `not opted in: ${Keys.strategy} is ${s.strategy}; set it to InPlace (claimstep set does) to let claimstep update this set's claims`,
      end: "blocked",
    };
  }
  const updated = s.phase !== "-" && s.progress ? { updated: `${s.updated} updated` } : {};
  // Blocked until a person acts; Idle (spec.updateStrategy OnDelete): never updated by claimstep.
  const end: WatchEnd | undefined = s.done
    ? "complete"
    : s.phase === "Blocked" || s.phase === "Idle"
      ? "blocked"
      : undefined;
  return { phase: s.phase, reason: s.reason, message: s.message, ...updated, ...(end ? { end } : {}) };
}
