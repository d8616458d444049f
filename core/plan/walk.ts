// The planner, part 3 — rules 8–10 of docs/design.md: walk the ordinals in scope highest first and
// conclude the one thing this step does: block on the first failure or obstacle, write the next
// claim while a maxUnavailable slot is free, else wait for what is in flight, else complete.

import type { PersistentVolumeClaim } from "../kube/k8s.js";
import { blocked, concluded, describeChange, eventOf, Messages } from "../messages.js";
import type { ClaimPlan, OrdinalPlan, WalkConclusion } from "../parts.js";
import type { PatchClaim } from "../types.js";
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

interface Wait {
  ordinal: number;
  message: string;
  reason: "ClaimResizing" | "ClaimNotBound" | "ClaimMissing" | "PodUpdating" | "ModifyVolumePending" | "PodNotReady";
}

/**
 * Walk the ordinals highest first (rules 8–10): the first ordinal with a failed or refused claim,
 * or a claim to write and a slot for it, concludes; after the last, what the walk found concludes:
 * no slot for the next claim, a wait, missing claims, or Complete. `unready` (rule 21): the set's
 * pods that exist, are not being deleted and are not Ready, by ordinal (core/plan/pods.ts podsNotReady).
 */
export function walk(
  scope: Scope,
  ordinals: readonly OrdinalPlan[],
  busy: ReadonlyMap<number, string> = new Map(),
  unready: ReadonlyMap<number, string> = new Map(),
): WalkConclusion {
  const inFlight = inFlightOrdinals(scope, ordinals, busy);
  // Rule 21: an unready pod of the set uses up a maxUnavailable slot, as for the StatefulSet
  // controller; an ordinal's own pod takes none from it (updating it makes nothing less available).
  const unavailable = new Set([...inFlight, ...unready.keys()]);
  const rolling = scope.currentRevision !== scope.revision;
  const waits: Wait[] = [];
  const missing: ClaimPlan[] = [];
  let noSlot: number | undefined;
  for (const o of ordinals) {
    // Rules 8 and 6: a claim failed for good, or a predicted refusal, concludes here.
    const stop = claimFailed(o) ?? claimRefused(o);
    if (stop) return stop;
    // Rules 7 and 9: the ordinal's next claim, when it already holds a slot or a slot is free;
    // highest first (rule 3): below an ordinal that found no slot, only those in flight go on.
    const next = o.claims.find((c) => c.patch);
    if (next?.patch) {
      const others = unavailable.size - (unavailable.has(o.ordinal) ? 1 : 0);
      const occupies = claimsOccupy(o, scope.revision) || busy.has(o.ordinal);
      if (occupies || (noSlot === undefined && others < scope.maxUnavailable))
        return claimUpdated(o.ordinal, next.patch, next.pvc);
      // No slot for this ordinal: a lower ordinal already in flight may still need its next claim.
      noSlot ??= o.ordinal;
      continue;
    }
    waits.push(...waitsOf(o, busy, unready, rolling));
    // Rules 4 and 13: missing claims are the StatefulSet controller's.
    missing.push(...o.claims.filter((c) => !c.report.exists));
  }
  if (noSlot !== undefined)
    return slotTaken(scope, waits[0], noSlot, unready, Math.max(inFlight.length, unavailable.size));
  return (
    (waits[0] && waiting(waits[0])) ?? (missing.length ? claimsMissing(scope, missing) : complete(scope, ordinals))
  );
}

/** Rule 8: a claim claimstep already brought to the revision whose resize failed for good → Blocked. */
function claimFailed(o: OrdinalPlan): WalkConclusion | undefined {
  const r = o.claims.find((c) => !c.needsUpdate && c.report.readiness.state === "Failed")?.report.readiness;
  return r?.state === "Failed" ? { ...blocked(r.reason, r.message), ordinal: o.ordinal } : undefined;
}

/** Rule 6: a predicted refusal → Blocked, or Waiting for the claim to bind. */
function claimRefused(o: OrdinalPlan): WalkConclusion | undefined {
  const refused = o.claims.find((c) => c.obstacle)?.obstacle;
  return refused ? { ...concluded(refused.reason, refused.message), ordinal: o.ordinal } : undefined;
}

/** Rule 7: the ordinal's next claim written. */
function claimUpdated(ordinal: number, patch: PatchClaim, pvc: PersistentVolumeClaim | undefined): WalkConclusion {
  const was = {
    storage: pvc?.spec.resources?.requests?.storage,
    volumeAttributesClassName: pvc?.spec.volumeAttributesClassName,
  };
  const note = `${patch.claim}: ${describeChange(patch, was)}`;
  return {
    reason: "ClaimUpdated",
    message: Messages.claimUpdated(note),
    ordinal,
    action: patch,
    events: [eventOf("ClaimUpdated", note, patch)],
  };
}

/**
 * What an ordinal with nothing to write waits for, in order: rule 8, its claims not ready (rule 13:
 * a claim deleted while in flight still holds its slot); P3, its pod not yet replaced and Ready
 * after its claims are done; else rule 21, its claims done in this rollout and its pod not Ready.
 */
function waitsOf(
  o: OrdinalPlan,
  busy: ReadonlyMap<number, string>,
  unready: ReadonlyMap<number, string>,
  rolling: boolean,
): Wait[] {
  const waits: Wait[] = [];
  const ordinal = o.ordinal;
  for (const c of o.claims) {
    const r = c.report.readiness;
    if (!c.report.exists) {
      if (c.inFlight)
        waits.push({ ordinal, message: r.state === "Ready" ? c.report.claim : r.message, reason: "ClaimMissing" });
    } else if (!c.done && r.state !== "Ready")
      waits.push({
        ordinal,
        message: r.message,
        // rule 18: a Pending modification says so
        reason:
          r.state === "NotBound" ? "ClaimNotBound" : r.state === "Modifying" && r.reason ? r.reason : "ClaimResizing",
      });
  }
  const pod = busy.get(ordinal);
  if (pod !== undefined) waits.push({ ordinal, message: pod, reason: "PodUpdating" });
  // KEP-4650 table row 9: the ordinal is not done; the next one waits, Complete is not said.
  else if (rolling && unready.has(ordinal) && o.claims.every((c) => c.done))
    waits.push({ ordinal, message: Messages.podNotReady(unready.get(ordinal)!, ordinal, true), reason: "PodNotReady" });
  return waits;
}

/**
 * Rule 9: at most maxUnavailable ordinals in flight: say what the next one waits for, the first
 * wait, else (rule 21) a pod not Ready holding the slot (the highest, not the ordinal waiting).
 */
function slotTaken(
  scope: Scope,
  head: Wait | undefined,
  noSlot: number,
  unready: ReadonlyMap<number, string>,
  taken: number,
): WalkConclusion {
  const [held, heldPod] = [...unready].find(([n]) => n !== noSlot) ?? [];
  const first: Wait | undefined =
    head ??
    (held !== undefined && heldPod !== undefined
      ? { ordinal: held, message: Messages.podNotReady(heldPod, held, false), reason: "PodNotReady" }
      : undefined);
  const message = Messages.noSlot(first?.message, noSlot, taken, scope.maxUnavailable);
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

/**
 * Rule 8: the claims in flight are not ready yet; P3: nor the pods that follow them; rule 21: an
 * updated ordinal's pod not Ready. A missing claim is not waited for here (claimsMissing).
 */
function waiting(head: Wait): WalkConclusion | undefined {
  const { reason, message, ordinal } = head;
  if (reason === "PodUpdating") return { reason, message, ordinal };
  if (reason === "PodNotReady") return { ...concluded(reason, message), ordinal };
  if (reason === "ClaimMissing") return undefined;
  return {
    reason,
    message,
    ordinal,
    events: [eventOf(reason === "ModifyVolumePending" ? reason : "ClaimResizing", message)],
  };
}

/** Rules 4 and 13: claims missing or being deleted; the StatefulSet controller re-creates them. */
function claimsMissing(scope: Scope, missing: readonly ClaimPlan[]): WalkConclusion {
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

/** Rule 10: every claim in scope is at the revision and ready: current-revision is written once. */
function complete(scope: Scope, ordinals: readonly OrdinalPlan[]): WalkConclusion {
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
