// planStep: the single next safe action for one StatefulSet (docs/design.md rules 1–14 and the pod
// rules P1–P5, R1–R3), final when it returns. Pure: a function of the snapshot, the time it is
// given and the capabilities of the writer that will carry the action out. The rules live in
// parts, each read top-down as the decision table: scope (rules 1–3), claim evaluation (rules
// 4–8, 13, 14), the pods (core/pods.ts), the walk (8–10).

import { autogrowStep } from "./autogrow.js";
import { evaluateOrdinal, ordinalReport, reportOrdinal, stateOf } from "./claims.js";
import { droppedMaxUnavailable, stalledDriver } from "./cluster-support.js";
import { makeDecision } from "./decision.js";
import { finalizeStep } from "./finalize.js";
import { Keys } from "./keys.js";
import { eventOf, Messages } from "./messages.js";
import type { OrdinalPlan, WalkConclusion } from "./parts.js";
import { lastEvictionJSON } from "./pod-policy.js";
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
import { type PolicyResult, policyOf } from "./policy.js";
import type { WriterCapabilities } from "./ports.js";
import { phaseOf } from "./reasons.js";
import { holdForShape, orphanedClaimsOf, reshapePending, shapeStep } from "./reshape.js";
import { revisionOf } from "./revision.js";
import { type Scope, scopeOf } from "./scope.js";
import { belowPartition, inScope } from "./statefulset.js";
import type { Decision, OrdinalReport, Snapshot } from "./types.js";
import { forWriter } from "./verdict.js";
import { inFlightOrdinals, walk } from "./walk.js";

export interface PlanOptions {
  /** Re-create the set with the new templates once complete, whatever `claimstep.io/finalize` says (`claimstep finalize`). */
  finalize?: boolean;
  /** The set's policy, when the caller parsed it already (core/policy.ts; the step runner does, once). */
  policy?: PolicyResult;
}

/** Compute the single next safe step for one StatefulSet, as the given writer can carry it out. */
export function planStep(snapshot: Snapshot, now: Date, writer: WriterCapabilities, opts: PlanOptions = {}): Decision {
  // F3: the set is gone mid re-create; its record holds the one to create.
  if (snapshot.setMissing) {
    const created = finalizeStep(snapshot, { wanted: true, converged: true, revision: "", desired: [] });
    if (created) return makeDecision(snapshot, now, [], { ...forWriter(created, writer), record: false });
  }

  // Rules 1–3 and every annotation's policy (core/policy.ts): opt-in, desired templates, scope;
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
            Messages.optedOut(reason === "OnDelete" ? "OnDelete" : set.metadata.annotations?.[Keys.strategy]),
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
    stalled(forWriter(decide(ctx).conclusion, writer)),
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
  /** The walk of the claims (rules 8–10), computed the first time a step asks. */
  walked(): WalkConclusion;
  /** Whether the walk found every claim done (rule 10). */
  converged(): boolean;
  /** Autogrow's answer (autogrow.ts), computed the first time a step asks. */
  grow(): AutogrowStep | undefined;
  /** F1–F5 (finalize.ts): mid re-create, the record decides; once complete, it may start one. */
  recreate(converged: boolean): WalkConclusion | undefined;
}

type AutogrowStep = ReturnType<typeof autogrowStep>;

/** One named step of the planner: a conclusion, or `undefined` to hand over to the next step. */
export interface PlanStepRow {
  readonly name: string;
  /** The rules of docs/design.md the step carries out. */
  readonly rules: readonly string[];
  run(ctx: StepContext): WalkConclusion | undefined;
}

/**
 * The planner's decision table, read top-down (as Argo Rollouts' reconcile reads): the first step
 * that concludes decides. The last always concludes.
 */
export const STEPS: readonly PlanStepRow[] = [
  {
    // Mid re-create, the record decides (F2–F5), whatever the claims say.
    name: "recreate-in-progress",
    rules: ["F2", "F3", "F4", "F5"],
    run: (c) => (c.snapshot.recreateRecord ? c.recreate(c.converged()) : undefined),
  },
  {
    // Adding or removing a template (reshape.ts): only a re-create does it.
    name: "shape-needs-recreate",
    rules: ["S2"],
    run: (c) =>
      c.reshaping && !c.wantsRecreate
        ? blockedOn(
            "TemplatesNeedRecreate",
            Messages.templatesNeedRecreate(
              `${c.scope.namespace}/${c.scope.setName}`,
              c.policy.reshape.added,
              c.policy.reshape.removed,
            ),
          )
        : undefined,
  },
  {
    // Only a class that exists binds the claims of an added template.
    name: "added-class-exists",
    rules: ["S4"],
    run: (c) => {
      if (!c.reshaping) return undefined;
      for (const t of c.scope.templates) {
        const cls = t.spec.storageClassName;
        if (c.policy.reshape.added.includes(t.metadata.name) && cls && !c.scope.classes.has(cls))
          return blockedOn("StorageClassNotFound", Messages.addedClassNotFound(t.metadata.name, cls));
      }
      return undefined;
    },
  },
  {
    // After a re-create that changed the shape: the removed templates' claims labelled, the pods
    // restarted one at a time from the lowest ordinal, before anything else moves the partition.
    name: "reshape-claims-and-pods",
    rules: ["S3", "S4", "S5"],
    run: (c) =>
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
      }),
  },
  {
    // While the shape is pending, the partition is the re-create's (held before it, handed back after).
    name: "partition",
    rules: ["P1", "P2", "P4"],
    run: (c) => (c.reshaping ? undefined : partitionStep(c.scope, c.coordination, c.ordinals, c.pending)),
  },
  {
    // Autogrow before the re-create: a full disk is the more urgent.
    name: "autogrow",
    rules: ["autogrow"],
    run: (c) => {
      if (!c.converged()) return undefined;
      const grow = c.grow();
      return grow && "conclusion" in grow ? grow.conclusion : undefined;
    },
  },
  {
    // Before a re-create that changes the shape: only claimstep restarts pods (reshape.ts).
    name: "hold-for-shape",
    rules: ["S1"],
    run: (c) =>
      c.converged() && c.reshaping && !c.snapshot.recreateRecord
        ? holdForShape(c.snapshot.statefulSet, c.coordination.holding, c.coordination.livePartition)
        : undefined,
  },
  {
    // Every claim done: the re-create may start (F1).
    name: "recreate-start",
    rules: ["F1"],
    run: (c) => (c.converged() ? c.recreate(true) : undefined),
  },
  {
    // Every claim done and nothing to re-create: Complete, with autogrow's note when it has one.
    name: "converged",
    rules: ["10"],
    run: (c) => {
      if (!c.converged()) return undefined;
      const walked = c.walked();
      const grow = c.grow();
      return grow && "note" in grow ? { ...walked, message: `${walked.message}; ${grow.note}` } : walked;
    },
  },
  {
    // The claims are done, and the re-create starts with the next step: worth one soon. Not
    // Complete: the set itself is not what it asks for until it is re-created.
    name: "recreate-next",
    rules: ["10"],
    run: (c) => {
      const walked = c.walked();
      return walked.reason === "RolloutComplete" &&
        c.wantsRecreate &&
        revisionOf(c.snapshot.statefulSet.spec.volumeClaimTemplates ?? []) !== c.scope.revision
        ? { ...walked, reason: "RecreateNext", statusReason: "RecreateNext" }
        : undefined;
    },
  },
  {
    // A claim to write, or a Blocked claim: a person acts first, nothing else moves.
    name: "claim-write-or-blocked",
    rules: ["6", "7", "9"],
    run: (c) => {
      const walked = c.walked();
      return walked.action || phaseBlocks(walked) ? walked : undefined;
    },
  },
  {
    // A claim waiting on its pod: restart it (R1–R3).
    name: "restart-pod",
    rules: ["R1", "R2", "R3"],
    run: (c) => {
      const restart = restartStep(
        c.scope,
        c.ordinals,
        inFlightOrdinals(c.scope, c.ordinals, c.pending.busy),
        c.now.getTime(),
      );
      return restart && "evict" in restart ? restart.evict : restart?.wait;
    },
  },
  {
    // Otherwise what the walk of the claims says: waiting, or complete (rules 8–10).
    name: "walk",
    rules: ["8", "9", "10"],
    run: (c) => c.walked(),
  },
];

/** The first step of the table that concludes, and its conclusion. */
function decide(ctx: StepContext): { step: PlanStepRow; conclusion: WalkConclusion } {
  for (const step of STEPS) {
    const conclusion = step.run(ctx);
    if (conclusion) return { step, conclusion };
  }
  // The last step always concludes.
  throw new Error("planStep: no step concluded");
}

/** The name of the step of the table that decided: for tests and traces; not part of the Decision. */
export function decidingStep(snapshot: Snapshot, now: Date, opts: PlanOptions = {}): string | undefined {
  const scoped = scopeOf(snapshot, opts.policy ?? policyOf(snapshot.statefulSet));
  if (snapshot.setMissing || !scoped.ok) return undefined;
  return decide(stepContext(snapshot, now, scoped.scope, opts)).step.name;
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
  let grown: { value: AutogrowStep | undefined } | undefined;
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
    walked: () => {
      walked ??= walk(scope, ordinals, pending.busy, unready);
      return walked;
    },
    converged: () => ctx.walked().reason === "Converged",
    grow: () => {
      grown ??= {
        value: policy.autogrow
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
      };
      return grown.value;
    },
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

const blockedOn = (reason: "TemplatesNeedRecreate" | "StorageClassNotFound", message: string): WalkConclusion => ({
  reason,
  message,
  events: [eventOf(reason, message)],
});

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
