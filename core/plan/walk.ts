// The planner, part 3 — rules 8–10 of docs/design.md: walk the ordinals in scope highest first and
// conclude the one thing this step does: block on the first failure or obstacle, write the next
// claim while a maxUnavailable slot is free, else wait for what is in flight, else complete.

import { blocked, concluded, describeChange, eventOf, Messages } from "../messages.js";
import type { ClaimPlan, OrdinalPlan, WalkConclusion } from "../parts.js";
import type { Scope } from "./scope.js";

/**
 * An ordinal holds a slot from its first claim at the revision until it is done: a half-updated
 * ordinal stays in flight even when the claims written so far are ready.
 */
const claimsOccupy = (o: OrdinalPlan, revision: string): boolean =>
  o.claims.some((c) => c.inFlight) ||
  (o.claims.some((c) => c.report.revision === revision) && !o.claims.every((c) => c.done));

/**
 * Ordinals in flight (rule 9): by their claims, or (P3, pods coordinated) by a pod not yet
 * replaced and Ready after its claims are done: `busy`, with what each waits for.
 */
export const inFlightOrdinals = (
  scope: Scope,
  ordinals: readonly OrdinalPlan[],
  busy: ReadonlyMap<number, string> = new Map(),
): number[] => ordinals.filter((o) => claimsOccupy(o, scope.revision) || busy.has(o.ordinal)).map((o) => o.ordinal);

export const inFlightCount = (
  scope: Scope,
  ordinals: readonly OrdinalPlan[],
  busy: ReadonlyMap<number, string> = new Map(),
): number => inFlightOrdinals(scope, ordinals, busy).length;

interface Wait {
  ordinal: number;
  message: string;
  reason: "ClaimResizing" | "ClaimNotBound" | "ClaimMissing" | "PodUpdating" | "ModifyVolumePending" | "PodNotReady";
}

/**
 * `unready` (rule 21): the set's pods that exist, are not being deleted and are not Ready, by
 * ordinal (core/plan/pods.ts podsNotReady).
 */
export function walk(
  scope: Scope,
  ordinals: readonly OrdinalPlan[],
  busy: ReadonlyMap<number, string> = new Map(),
  unready: ReadonlyMap<number, string> = new Map(),
): WalkConclusion {
  const occupies = (o: OrdinalPlan, revision: string): boolean => claimsOccupy(o, revision) || busy.has(o.ordinal);
  const inFlight = inFlightCount(scope, ordinals, busy);
  // Rule 21: an unready pod of the set uses up a maxUnavailable slot, as for the StatefulSet
  // controller; an ordinal's own pod takes none from it (updating it makes nothing less available).
  const unavailable = new Set([...inFlightOrdinals(scope, ordinals, busy), ...unready.keys()]);
  const rolling = scope.currentRevision !== scope.revision;
  const waits: Wait[] = [];
  const missing: ClaimPlan[] = [];
  let noSlot: number | undefined;

  for (const o of ordinals) {
    // Rule 8: a claim claimstep already brought to the revision whose resize failed for good → Blocked.
    const failed = o.claims.find((c) => !c.needsUpdate && c.report.readiness.state === "Failed");
    if (failed?.report.readiness.state === "Failed") {
      const { reason, message } = failed.report.readiness;
      return { ...blocked(reason, message), ordinal: o.ordinal };
    }

    // Rule 6: a predicted refusal → Blocked, or Waiting for the claim to bind.
    const refused = o.claims.find((c) => c.obstacle);
    if (refused?.obstacle) {
      const { reason, message } = refused.obstacle;
      return { ...concluded(reason, message), ordinal: o.ordinal };
    }

    // Rules 7 and 9: the ordinal's next claim, when it already holds a slot or a slot is free.
    const next = o.claims.find((c) => c.patch);
    if (next?.patch) {
      const others = unavailable.size - (unavailable.has(o.ordinal) ? 1 : 0);
      // Highest first (rule 3): below an ordinal that found no slot, only those in flight go on.
      if (occupies(o, scope.revision) || (noSlot === undefined && others < scope.maxUnavailable)) {
        const note = `${next.patch.claim}: ${describeChange(next.patch, { storage: next.pvc?.spec.resources?.requests?.storage, volumeAttributesClassName: next.pvc?.spec.volumeAttributesClassName })}`;
        return {
          reason: "ClaimUpdated",
          message: Messages.claimUpdated(note),
          ordinal: o.ordinal,
          action: next.patch,
          events: [eventOf("ClaimUpdated", note, next.patch)],
        };
      }
      // No slot for this ordinal: a lower ordinal already in flight may still need its next claim.
      noSlot ??= o.ordinal;
      continue;
    }

    // Rule 4 and 13: missing claims are the StatefulSet controller's; rule 8: the rest is waited for.
    for (const c of o.claims) {
      const r = c.report.readiness;
      if (!c.report.exists) {
        missing.push(c);
        // A claim deleted while in flight still holds its slot: what the next ordinal waits for.
        if (c.inFlight)
          waits.push({
            ordinal: o.ordinal,
            message: r.state === "Ready" ? c.report.claim : r.message,
            reason: "ClaimMissing",
          });
      } else if (!c.done && r.state !== "Ready")
        waits.push({
          ordinal: o.ordinal,
          message: r.message,
          reason:
            r.state === "NotBound"
              ? "ClaimNotBound"
              : r.state === "Modifying" && r.reason
                ? r.reason // rule 18
                : "ClaimResizing",
        });
    }
    // P3: claims done, the pod not yet replaced and Ready.
    const pod = busy.get(o.ordinal);
    if (pod !== undefined) waits.push({ ordinal: o.ordinal, message: pod, reason: "PodUpdating" });
    // Rule 21 (KEP-4650 table row 9): claims done in this rollout, the pod (there, not being
    // deleted) not Ready: the ordinal is not done; the next one waits, Complete is not said.
    else if (rolling && unready.has(o.ordinal) && o.claims.every((c) => c.done))
      waits.push({
        ordinal: o.ordinal,
        message: Messages.podNotReady(unready.get(o.ordinal)!, o.ordinal, true),
        reason: "PodNotReady",
      });
  }

  // Rule 9: at most maxUnavailable ordinals in flight; say what the next one waits for.
  const head = waits[0];
  if (noSlot !== undefined) {
    // Rule 21: else a pod not Ready holds the slot (the highest, not the ordinal waiting).
    const [held, heldPod] = [...unready].find(([n]) => n !== noSlot) ?? [];
    const first: Wait | undefined =
      head ??
      (held !== undefined && heldPod !== undefined
        ? { ordinal: held, message: Messages.podNotReady(heldPod, held, false), reason: "PodNotReady" }
        : undefined);
    const message = Messages.noSlot(first?.message, noSlot, Math.max(inFlight, unavailable.size), scope.maxUnavailable);
    const reason =
      first?.reason === "ClaimMissing" || first?.reason === "PodUpdating" || first?.reason === "PodNotReady"
        ? first.reason
        : "ClaimResizing";
    return {
      reason,
      message,
      ordinal: first?.ordinal ?? noSlot,
      ...(reason === "ClaimResizing" || reason === "PodNotReady" ? { events: [eventOf(reason, message)] } : {}),
    };
  }
  // Rule 8: the claims in flight are not ready yet; P3: nor the pods that follow them.
  if (head && head.reason === "PodUpdating")
    return { reason: head.reason, message: head.message, ordinal: head.ordinal };
  // Rule 21: an updated ordinal's pod not Ready.
  if (head && head.reason === "PodNotReady") return { ...concluded(head.reason, head.message), ordinal: head.ordinal };
  if (head && head.reason !== "ClaimMissing") {
    return {
      reason: head.reason,
      message: head.message,
      ordinal: head.ordinal,
      events: [eventOf(head.reason === "ModifyVolumePending" ? head.reason : "ClaimResizing", head.message)],
    };
  }
  // Rules 4 and 13: claims missing or being deleted; the StatefulSet controller re-creates them.
  if (missing.length) {
    const deleting = missing.filter((c) => scope.deleting.has(c.report.claim));
    const first = deleting[0]?.report.readiness;
    return {
      reason: "ClaimMissing",
      message: deleting.length
        ? Messages.claimBeingDeleted(
            first?.state === "Missing" ? first.message : deleting[0]!.report.claim,
            missing.length,
          )
        : Messages.claimsMissing(missing.length),
    };
  }

  // Rule 10: every claim in scope is at the revision and ready: current-revision is written once.
  const alreadyComplete = scope.currentRevision === scope.revision;
  const message = Messages.complete(ordinals.length, scope.revision);
  return {
    reason: alreadyComplete ? "Converged" : "RolloutComplete",
    statusReason: "RolloutComplete",
    message,
    currentRevision: scope.revision,
    events: alreadyComplete ? [] : [eventOf("RolloutComplete", message)],
  };
}
