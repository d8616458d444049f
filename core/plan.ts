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
import type { WalkConclusion } from "./parts.js";
import { lastEvictionJSON } from "./pod-policy.js";
import { coordinationOf, partitionStep, podsNotReady, podsPending, releaseOnOptOut, restartStep } from "./pods.js";
import { type PolicyResult, policyOf } from "./policy.js";
import type { WriterCapabilities } from "./ports.js";
import { phaseOf } from "./reasons.js";
import { holdForShape, orphanedClaimsOf, reshapePending, shapeStep } from "./reshape.js";
import { revisionOf } from "./revision.js";
import { scopeOf } from "./scope.js";
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
  const { policy } = scope;
  const wantsRecreate = policy.finalize === "Recreate" || opts.finalize === true;
  const shape = policy.reshape;
  const reshaping = reshapePending(shape);

  // Rules 4–8: every claim of every ordinal in scope, highest first.
  const ordinals = inScope(scope.ordinals).map((o) => evaluateOrdinal(scope, o));
  // P3: with pods coordinated, an ordinal stays in flight until its pod runs the new template.
  const coordination = coordinationOf(scope);
  const pending = podsPending(scope, coordination, ordinals);
  const busy = pending.busy;
  // Rule 21: pods not Ready use up maxUnavailable slots; an updated ordinal's stops the next one.
  const unready = podsNotReady(scope);
  const reports: OrdinalReport[] = [
    ...ordinals.map((o) =>
      ordinalReport(scope, o, busy.has(o.ordinal) ? "InFlight" : pending.held.has(o.ordinal) ? "Pending" : stateOf(o)),
    ),
    ...belowPartition(scope.ordinals).map((o) => ordinalReport(scope, reportOrdinal(scope, o), "OutOfScope")),
    ...scope.condemned.map((o) => ordinalReport(scope, reportOrdinal(scope, o), "Condemned")),
  ];

  // The one thing to do now: move the partition (P1, P2, P4), else restart a pod (R1–R3), else
  // what the walk of the claims says (rules 8–10), as this writer can do it.
  // Issue 36 point 5: a wait on a claim no driver component ever took up is called off.
  const stalled = (c: WalkConclusion) =>
    stalledDriver(snapshot.statefulSet, ordinals, scope.classes, c, now.getTime()) ?? c;
  const reported = withUnmet(
    stalled(forWriter(next(), writer)),
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

  function next(): WalkConclusion {
    // F1–F4 (finalize.ts): mid re-create, the record decides; once complete, it may start one.
    const recreate = (converged: boolean) =>
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
      });
    if (snapshot.recreateRecord) {
      const walked = walk(scope, ordinals, busy, unready);
      const step = recreate(walked.reason === "Converged");
      if (step) return step;
    }
    // Adding or removing a template (reshape.ts): only a re-create does it, and only a class that exists binds.
    if (reshaping) {
      if (!wantsRecreate)
        return blockedOn(
          "TemplatesNeedRecreate",
          Messages.templatesNeedRecreate(`${scope.namespace}/${scope.setName}`, shape.added, shape.removed),
        );
      for (const t of scope.templates) {
        const cls = t.spec.storageClassName;
        if (shape.added.includes(t.metadata.name) && cls && !scope.classes.has(cls))
          return blockedOn("StorageClassNotFound", Messages.addedClassNotFound(t.metadata.name, cls));
      }
    }
    // After a re-create that changed the shape: the removed templates' claims labelled, the pods
    // restarted one at a time from the lowest ordinal, before anything else moves the partition.
    const shaped = shapeStep({
      set: snapshot.statefulSet,
      pods: snapshot.pods,
      claims: snapshot.claims,
      classes: scope.classes,
      reshape: shape,
      maxUnavailable: scope.maxUnavailable,
      holding: coordination.holding && policy.pods.coordination !== "ClaimsFirst",
      // The set asks to be re-created (claimstep.io/finalize, or claimstep finalize): after a
      // re-create, a pod without its volumes holds the StatefulSet controller up for good.
      restarts: wantsRecreate && scope.rollingUpdate,
      lastEviction: policy.pods.lastEviction,
      nowMs: now.getTime(),
    });
    if (shaped) return shaped;
    // While the shape is pending, the partition is the re-create's (held before it, handed back after).
    const partition = reshaping ? undefined : partitionStep(scope, coordination, ordinals, pending);
    if (partition) return partition;
    const walked = walk(scope, ordinals, busy, unready);
    if (walked.reason === "Converged") {
      // Autogrow (autogrow.ts) before the re-create: a full disk is the more urgent.
      const grow = policy.autogrow
        ? autogrowStep({
            set: snapshot.statefulSet,
            policy: policy.autogrow,
            reading: snapshot.volumeUsage,
            templates: scope.templates,
            ordinals: inScope(scope.ordinals),
            revision: scope.revision,
            revisionOf,
          })
        : undefined;
      if (grow && "conclusion" in grow) return grow.conclusion;
      // Before a re-create that changes the shape: only claimstep restarts pods (reshape.ts).
      const hold =
        reshaping && !snapshot.recreateRecord
          ? holdForShape(snapshot.statefulSet, coordination.holding, coordination.livePartition)
          : undefined;
      if (hold) return hold;
      const settled = recreate(true) ?? walked;
      return grow && settled === walked ? { ...walked, message: `${walked.message}; ${grow.note}` } : settled;
    }
    // The claims are done, and the re-create starts with the next step: worth one soon. Not
    // Complete: the set itself is not what it asks for until it is re-created.
    if (
      walked.reason === "RolloutComplete" &&
      wantsRecreate &&
      revisionOf(snapshot.statefulSet.spec.volumeClaimTemplates ?? []) !== scope.revision
    )
      return { ...walked, reason: "RecreateNext", statusReason: "RecreateNext" };
    if (walked.action || phaseBlocks(walked)) return walked;
    const restart = restartStep(scope, ordinals, inFlightOrdinals(scope, ordinals, busy), now.getTime());
    if (restart && "evict" in restart) return restart.evict;
    return restart?.wait ?? walked;
  }
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
