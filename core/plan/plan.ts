// planStep: the single next safe action for one StatefulSet (docs/design.md rules 1–14 and the pod
// rules P1–P5, R1–R3), final when it returns. Pure: a function of the snapshot, the time it is
// given and the capabilities of the writer that will carry the action out. The rules live in
// parts, each read top-down as the decision table: scope (rules 1–3), claim evaluation (rules
// 4–8, 13, 14), the pods (core/plan/pods.ts), the walk (8–10).

import { Keys } from "../keys.js";
import { revisionOf } from "../kube/revision.js";
import { belowPartition, inScope } from "../kube/statefulset.js";
import { blocked, Messages } from "../messages.js";
import type { OrdinalPlan, WalkConclusion } from "../parts.js";
import { rawAnnotation } from "../policy/annotations.js";
import { BUDGET_CHARGE_SECONDS, lastEvictionJSON } from "../policy/pod-policy.js";
import { type PolicyResult, policyOf } from "../policy/policy.js";
import { reshapePending } from "../policy/shape.js";
import type { WriterCapabilities } from "../ports.js";
import { phaseOf } from "../reasons.js";
import type { Decision, OrdinalReport, Snapshot } from "../types.js";
import { autogrowStep } from "./autogrow.js";
import { evaluateOrdinal, ordinalReport, reportOrdinal, stateOf } from "./claims.js";
import { droppedMaxUnavailable, stalledDriver } from "./cluster-support.js";
import { makeDecision } from "./decision.js";
import { finalizeStep } from "./finalize.js";
import {
  type Coordination,
  coordinationOf,
  type PodsPending,
  partitionStep,
  podsNotReady,
  podsPending,
  releaseOnOptOut,
  restartStep,
} from "./pods.js";
import { holdForShape, orphanedClaimsOf, shapeStep } from "./reshape.js";
import { type Scope, scopeOf } from "./scope.js";
import { forWriter } from "./verdict.js";
import { inFlightOrdinals, walk } from "./walk.js";

export interface PlanOptions {
  /** Re-create the set with the new templates once complete, whatever `claimstep.io/finalize` says (`claimstep finalize`). */
  finalize?: boolean;
  /**
   * The set's policy, when the caller has it already: the step runner hands it the reader's
   * (core/policy/policy.ts PolicySnapshot). Without it the planner parses the snapshot's set, never a
   * policy the snapshot carries: a caller may plan an edited copy of a loaded snapshot.
   */
  policy?: PolicyResult;
  /** R3: how long a refused eviction charges the budget; default BUDGET_CHARGE_SECONDS (tests give less). */
  budgetChargeSeconds?: number;
}

/** Compute the single next safe step for one StatefulSet, as the given writer can carry it out. */
export function planStep(snapshot: Snapshot, now: Date, writer: WriterCapabilities, opts: PlanOptions = {}): Decision {
  // F3: the set is gone mid re-create; its record holds the one to create.
  if (snapshot.setMissing) {
    const created = finalizeStep(snapshot, { wanted: true, converged: true, revision: "", desired: [] });
    if (created) return makeDecision(snapshot, now, [], { ...forWriter(created, writer), record: false });
  }

  // Rules 1–3 and every annotation's policy (core/policy/policy.ts): opt-in, desired templates, scope;
  // or Idle / Blocked right here.
  const scoped = scopeOf(snapshot, opts.policy ?? policyOf(snapshot.statefulSet));
  if (!scoped.ok) {
    // F4 whatever the set says: re-created by someone else mid re-create (a GitOps self-heal from an
    // old manifest drops the opt-in), it is reported and the record disarmed, never forgotten.
    const recreated = snapshot.recreateRecord
      ? finalizeStep(snapshot, { wanted: false, converged: false, revision: "", desired: [] })
      : undefined;
    if (recreated?.reason === "RecreatedByOther")
      return makeDecision(snapshot, now, [], { ...forWriter(recreated, writer), record: true });
    // Rule 1 with P4: opted out while claimstep holds the partition → the user's back, once.
    const { reason } = scoped.conclusion;
    const set = snapshot.statefulSet;
    const released =
      reason === "NotOptedIn" || reason === "OnDelete"
        ? releaseOnOptOut(
            set,
            Messages.optedOut(reason === "OnDelete" ? "OnDelete" : rawAnnotation(set.metadata.annotations, "strategy")),
          )
        : undefined;
    if (released) return makeDecision(snapshot, now, [], { ...forWriter(released, writer), record: true });
    return makeDecision(snapshot, now, [], scoped.conclusion);
  }
  const { scope } = scoped;

  // Rules 4–8 (every claim of every ordinal in scope, highest first), P3 and rule 21: what the
  // steps of the table read.
  const ctx = stepContext(snapshot, now, scope, opts);
  const { ordinals, pending } = ctx;
  const reports: OrdinalReport[] = [
    ...ordinals.map((o) =>
      ordinalReport(
        scope,
        o,
        pending.busy.has(o.ordinal) ? "InFlight" : pending.held.has(o.ordinal) ? "Pending" : stateOf(o),
      ),
    ),
    ...belowPartition(scope.ordinals).map((o) => ordinalReport(scope, reportOrdinal(scope, o), "OutOfScope")),
    ...scope.condemned.map((o) => ordinalReport(scope, reportOrdinal(scope, o), "Condemned")),
  ];

  // The one thing to do now: the first step of the table that concludes (STEPS, below), as this
  // writer can do it. Issue 36 point 5: a wait on a claim no driver component ever took up is called off.
  const stalled = (c: WalkConclusion) =>
    stalledDriver(snapshot.statefulSet, ordinals, scope.classes, c, now.getTime()) ?? c;
  const reported = withUnmet(
    stalled(forWriter(decide(ctx), writer)),
    ordinals.flatMap((o) => o.claims.flatMap((c) => (c.unmet ? [c.unmet] : []))),
  );
  // Issue 36 point 6: a maxUnavailable the API server dropped is said, not silently taken as 1.
  const dropped = droppedMaxUnavailable(snapshot.statefulSet);
  const conclusion = dropped ? { ...reported, message: `${reported.message}; ${dropped}` } : reported;
  const annotations =
    conclusion.action?.type === "EvictPod"
      ? {
          [Keys.lastEviction]: lastEvictionJSON({
            pod: conclusion.action.pod,
            uid: conclusion.action.uid,
            at: now.toISOString(),
            result: "Attempted",
          }),
        }
      : undefined;
  const decision = makeDecision(snapshot, now, reports, {
    ...conclusion,
    revision: scope.revision,
    record: true,
    ...(annotations ? { annotations } : {}),
  });
  const orphaned = orphanedClaimsOf(scope.setName, snapshot.claims, snapshot.pods);
  return orphaned.length ? { ...decision, orphanedClaims: orphaned } : decision;
}

/** What every step of the table reads: the scope and what the planner derived from it, once. */
interface StepContext {
  snapshot: Snapshot;
  now: Date;
  scope: Scope;
  policy: Scope["policy"];
  /** The set asks to be re-created (`claimstep.io/finalize: Recreate`, or `claimstep finalize`). */
  wantsRecreate: boolean;
  /** A template is added or removed (reshape.ts): only a re-create does it. */
  reshaping: boolean;
  ordinals: readonly OrdinalPlan[];
  coordination: Coordination;
  pending: PodsPending;
  /** R3: how long a refused eviction charges the budget (PlanOptions). */
  budgetChargeSeconds: number;
  /** The walk of the claims (rules 8–10), computed the first time a step asks. */
  walked(): WalkConclusion;
  /** Whether the walk found every claim done (rule 10). */
  converged(): boolean;
  /** Autogrow's answer (autogrow.ts; pure, asked at most twice: by the autogrow and converged steps). */
  grow(): AutogrowStep | undefined;
  /** F1–F5 (finalize.ts): mid re-create, the record decides; once complete, it may start one. */
  recreate(converged: boolean): WalkConclusion | undefined;
}

type AutogrowStep = ReturnType<typeof autogrowStep>;

/**
 * One named step of the planner: a conclusion, or `undefined` to hand over to the next step. Its
 * name is its function's; the rules of docs/design.md it carries out are core/plan/rules.ts
 * STEP_RULES[name] (there, not here, so that the Worker bundle carries neither).
 */
type Step = (ctx: StepContext) => WalkConclusion | undefined;

// Mid re-create, the record decides (F2–F5), whatever the claims say.
const recreateInProgress: Step = (c) => (c.snapshot.recreateRecord ? c.recreate(c.converged()) : undefined);

// Adding or removing a template (reshape.ts): only a re-create does it.
const shapeNeedsRecreate: Step = (c) =>
  c.reshaping && !c.wantsRecreate
    ? blocked(
        "TemplatesNeedRecreate",
        Messages.templatesNeedRecreate(
          `${c.scope.namespace}/${c.scope.setName}`,
          c.policy.reshape.added,
          c.policy.reshape.removed,
        ),
      )
    : undefined;

// Only a class that exists binds the claims of an added template.
const addedClassExists: Step = (c) => {
  if (!c.reshaping) return undefined;
  for (const t of c.scope.templates) {
    const cls = t.spec.storageClassName;
    if (c.policy.reshape.added.includes(t.metadata.name) && cls && !c.scope.classes.has(cls))
      return blocked("StorageClassNotFound", Messages.addedClassNotFound(t.metadata.name, cls));
  }
  return undefined;
};

// After a re-create that changed the shape: the removed templates' claims labelled, the pods
// restarted one at a time from the lowest ordinal, before anything else moves the partition.
const reshapeClaimsAndPods: Step = (c) =>
  shapeStep({
    set: c.snapshot.statefulSet,
    pods: c.snapshot.pods,
    claims: c.snapshot.claims,
    classes: c.scope.classes,
    reshape: c.policy.reshape,
    maxUnavailable: c.scope.maxUnavailable,
    holding: c.coordination.holding && c.policy.pods.coordination !== "ClaimsFirst",
    // The set asks to be re-created (claimstep.io/finalize, or claimstep finalize): after a
    // re-create, a pod without its volumes holds the StatefulSet controller up for good.
    restarts: c.wantsRecreate && c.scope.rollingUpdate,
    lastEviction: c.policy.pods.lastEviction,
    nowMs: c.now.getTime(),
    budgetChargeSeconds: c.budgetChargeSeconds,
  });

// While the shape is pending, the partition is the re-create's (held before it, handed back after).
const partition: Step = (c) =>
  c.reshaping ? undefined : partitionStep(c.scope, c.coordination, c.ordinals, c.pending);

// Autogrow before the re-create: a full disk is the more urgent.
const autogrow: Step = (c) => {
  if (!c.converged()) return undefined;
  const grow = c.grow();
  return grow && "conclusion" in grow ? grow.conclusion : undefined;
};

// Before a re-create that changes the shape: only claimstep restarts pods (reshape.ts).
const holdBeforeRecreate: Step = (c) =>
  c.converged() && c.reshaping && !c.snapshot.recreateRecord
    ? holdForShape(c.snapshot.statefulSet, c.coordination.holding, c.coordination.livePartition)
    : undefined;

// Every claim done: the re-create may start (F1).
const recreateStart: Step = (c) => (c.converged() ? c.recreate(true) : undefined);

// Every claim done and nothing to re-create: Complete, with autogrow's note when it has one.
const converged: Step = (c) => {
  if (!c.converged()) return undefined;
  const walked = c.walked();
  const grow = c.grow();
  return grow && "note" in grow ? { ...walked, message: `${walked.message}; ${grow.note}` } : walked;
};

// The claims are done, and the re-create starts with the next step: worth one soon. Not
// Complete: the set itself is not what it asks for until it is re-created.
const recreateNext: Step = (c) => {
  const walked = c.walked();
  return walked.reason === "RolloutComplete" &&
    c.wantsRecreate &&
    revisionOf(c.snapshot.statefulSet.spec.volumeClaimTemplates ?? []) !== c.scope.revision
    ? { ...walked, reason: "RecreateNext", statusReason: "RecreateNext" }
    : undefined;
};

// A claim to write, or a Blocked claim: a person acts first, nothing else moves.
const claimWriteOrBlocked: Step = (c) => {
  const walked = c.walked();
  return walked.action || phaseBlocks(walked) ? walked : undefined;
};

// A claim waiting on its pod: restart it (R1–R3).
const restartPod: Step = (c) => {
  const restart = restartStep(
    c.scope,
    c.ordinals,
    inFlightOrdinals(c.scope, c.ordinals, c.pending.busy),
    c.now.getTime(),
    c.budgetChargeSeconds,
  );
  return restart && "evict" in restart ? restart.evict : restart?.wait;
};

// Otherwise what the walk of the claims says: waiting, or complete (rules 8–10).
const walkClaims: Step = (c) => c.walked();

/**
 * The planner's decision table, read top-down (as Argo Rollouts' reconcile reads): the first step
 * that concludes decides. The last always concludes.
 */
export const STEPS: readonly Step[] = [
  recreateInProgress,
  shapeNeedsRecreate,
  addedClassExists,
  reshapeClaimsAndPods,
  partition,
  autogrow,
  holdBeforeRecreate,
  recreateStart,
  converged,
  recreateNext,
  claimWriteOrBlocked,
  restartPod,
  walkClaims,
];

/** The conclusion of the first step of the table that concludes (the last always does). */
function decide(ctx: StepContext): WalkConclusion {
  let conclusion: WalkConclusion | undefined;
  for (const step of STEPS) if ((conclusion = step(ctx))) break;
  return conclusion ?? ctx.walked();
}

/** The name of the step of the table that decided: for tests and traces; not part of the Decision. */
export function decidingStep(snapshot: Snapshot, now: Date, opts: PlanOptions = {}): string | undefined {
  const scoped = scopeOf(snapshot, opts.policy ?? policyOf(snapshot.statefulSet));
  if (snapshot.setMissing || !scoped.ok) return undefined;
  const ctx = stepContext(snapshot, now, scoped.scope, opts);
  return STEPS.find((step) => step(ctx))?.name;
}

function stepContext(snapshot: Snapshot, now: Date, scope: Scope, opts: PlanOptions): StepContext {
  const { policy } = scope;
  const wantsRecreate = policy.finalize === "Recreate" || opts.finalize === true;
  const shape = policy.reshape;
  const ordinals = inScope(scope.ordinals).map((o) => evaluateOrdinal(scope, o));
  // P3: with pods coordinated, an ordinal stays in flight until its pod runs the new template.
  const coordination = coordinationOf(scope);
  const pending = podsPending(scope, coordination, ordinals);
  // Rule 21: pods not Ready use up maxUnavailable slots; an updated ordinal's stops the next one.
  const unready = podsNotReady(scope);
  let walked: WalkConclusion | undefined;
  const ctx: StepContext = {
    snapshot,
    now,
    scope,
    policy,
    wantsRecreate,
    reshaping: reshapePending(shape),
    ordinals,
    coordination,
    pending,
    budgetChargeSeconds: opts.budgetChargeSeconds ?? BUDGET_CHARGE_SECONDS,
    walked: () => {
      walked ??= walk(scope, ordinals, pending.busy, unready);
      return walked;
    },
    converged: () => ctx.walked().reason === "Converged",
    grow: () =>
      policy.autogrow
        ? autogrowStep({
            set: snapshot.statefulSet,
            policy: policy.autogrow,
            reading: snapshot.volumeUsage,
            templates: scope.templates,
            ordinals: inScope(scope.ordinals),
            revision: scope.revision,
            revisionOf,
          })
        : undefined,
    recreate: (converged) =>
      finalizeStep(snapshot, {
        wanted: wantsRecreate,
        viaPullRequest: policy.applyVia === "pull-request",
        converged,
        revision: scope.revision,
        desired: scope.templates,
        shape: {
          removed: shape.removed,
          orphaned: shape.orphaned,
          ...(shape.podTemplate ? { podTemplate: shape.podTemplate } : {}),
        },
      }),
  };
  return ctx;
}

/**
 * X2 (issue 36 point 4): claims whose failed request the template no longer needs are reported with
 * every step (status message), and with a Warning Event on each step that records Events.
 */
function withUnmet(c: WalkConclusion, unmet: readonly string[]): WalkConclusion {
  if (!unmet.length) return c;
  const events = c.events?.length
    ? [
        ...c.events,
        ...unmet.map((note) => ({ type: "Warning" as const, reason: "ResizeFailed" as const, action: "Report", note })),
      ]
    : c.events;
  return { ...c, message: `${c.message}; ${unmet.join("; ")}`, ...(events ? { events } : {}) };
}

/** A Blocked walk stops everything else: a person acts first. */
const phaseBlocks = (c: WalkConclusion): boolean => phaseOf(c.reason) === "Blocked";
