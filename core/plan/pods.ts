// The planner's pod rules (docs/design.md "Pods"): claims first, then the pod (P1–P5), through the one
// lever the StatefulSet controller obeys, spec.updateStrategy.rollingUpdate.partition; and
// restarting a pod whose volume cannot finish growing while it runs (R1–R3), through the Eviction
// API. Pure: a function of the scope, the evaluated claims and the time it is given.

import { Keys } from "../keys.js";
import type { Pod, StatefulSet } from "../kube/k8s.js";
import { podName } from "../kube/statefulset.js";
import { concluded, Messages } from "../messages.js";
import type { ClaimPlan, OrdinalPlan, WalkConclusion } from "../parts.js";
import { budgetCharged } from "../policy/pod-policy.js";
import { userPartitionOf } from "../policy/records.js";
import type { EvictPod, OrdinalReport, PatchPartition } from "../types.js";
import { nodeExpansionNotRequired, resizeBlockedByPod } from "./readiness.js";
import type { Scope } from "./scope.js";

/** One ordinal's pod as the pod rules read it. */
export interface PodState {
  name: string;
  pod?: Pod;
  ready: boolean;
  /** `controller-revision-hash`. */
  revision?: string;
  /** At the set's status.updateRevision (true when the set reports none). */
  updated: boolean;
}

const isReady = (pod: Pod): boolean =>
  !pod.metadata.deletionTimestamp &&
  (pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");

export function podStateOf(scope: Scope, ordinal: number): PodState {
  const name = podName(scope.setName, ordinal);
  const pod = scope.pods.get(name);
  if (!pod) return { name, ready: false, updated: false };
  const revision = pod.metadata.labels?.[Keys.podRevisionLabel];
  return {
    name,
    pod,
    ready: isReady(pod),
    ...(revision !== undefined ? { revision } : {}),
    updated: scope.podUpdateRevision === undefined || revision === scope.podUpdateRevision,
  };
}

/** The pod columns of one row of the per-ordinal table. */
export function podColumns(
  scope: Scope,
  ordinal: number,
): Pick<OrdinalReport, "podReady" | "podRevision" | "podUpdated"> {
  const p = podStateOf(scope, ordinal);
  if (!p.pod) return {};
  return {
    podReady: p.ready,
    ...(p.revision !== undefined ? { podRevision: p.revision } : {}),
    ...(scope.podUpdateRevision !== undefined ? { podUpdated: p.updated } : {}),
  };
}

const claimsDone = (o: OrdinalPlan): boolean => o.claims.every((c) => c.done);

/**
 * Rule 21: the set's pods (every ordinal in `[start, start + replicas)`, in scope or not) that exist,
 * are not being deleted and are not Ready, by ordinal, with their names: each uses up a
 * maxUnavailable slot, as an unhealthy pod does for the StatefulSet controller.
 */
export function podsNotReady(scope: Scope): Map<number, string> {
  const out = new Map<number, string>();
  for (let o = scope.ordinals.end - 1; o >= scope.ordinals.start; o--) {
    const p = podStateOf(scope, o);
    if (p.pod && !p.pod.metadata.deletionTimestamp && !p.ready) out.set(o, p.name);
  }
  return out;
}

/** Whether claimstep orders this set's pods after its claims in this step (P1–P4). */
export interface Coordination {
  /** ClaimsFirst applies: a claim rollout and a pod rollout at once, or claimstep still holds the partition. */
  active: boolean;
  /** claimstep holds the partition (the user's is recorded in `claimstep.io/user-partition`). */
  holding: boolean;
  /** The user's partition: the recorded one while holding, else the live one. */
  userPartition: number;
  /** spec.updateStrategy.rollingUpdate.partition as read (0 when unset). */
  livePartition: number;
}

export function coordinationOf(scope: Scope): Coordination {
  const holding = scope.policy.pods.userPartition !== undefined;
  const eligible =
    scope.policy.pods.coordination === "ClaimsFirst" &&
    scope.rollingUpdate &&
    scope.currentRevision !== scope.revision &&
    scope.podsRolling;
  return {
    active: eligible || (holding && scope.policy.pods.coordination === "ClaimsFirst" && scope.rollingUpdate),
    holding,
    userPartition: scope.policy.pods.userPartition ?? scope.livePartition,
    livePartition: scope.livePartition,
  };
}

/** What P3 makes of the ordinals whose claims are done but whose pod is not yet replaced and Ready. */
export interface PodsPending {
  /** In flight (rule 9): the controller may replace the pod (at or above the live partition), or it is not Ready. */
  busy: Map<number, string>;
  /**
   * Held below the live partition with a Ready pod: waiting for the partition to reach them, they
   * disrupt nothing and hold no slot (else a higher ordinal whose claims are not done — a scale-up,
   * a new revision — could never get one, and the partition never come down: a deadlock).
   */
  held: Map<number, string>;
}

/** P3: ordinals whose claims are done and whose pod does not yet run the update revision or is not Ready. */
export function podsPending(scope: Scope, c: Coordination, ordinals: readonly OrdinalPlan[]): PodsPending {
  const busy = new Map<number, string>();
  const held = new Map<number, string>();
  if (!c.active) return { busy, held };
  const partitionOrdinal = scope.ordinals.start + c.livePartition;
  for (const o of ordinals) {
    if (!claimsDone(o)) continue;
    const p = podStateOf(scope, o.ordinal);
    if (p.updated && p.ready) continue;
    const below = o.ordinal < partitionOrdinal;
    (below && p.ready ? held : busy).set(
      o.ordinal,
      Messages.podPending(p.name, scope.podUpdateRevision, p.updated, !!p.pod, below),
    );
  }
  return { busy, held };
}

/** P2: the partition that lets the controller replace exactly the pods whose claims are done. */
export function partitionTarget(scope: Scope, c: Coordination, ordinals: readonly OrdinalPlan[]): number {
  const { start, end } = scope.ordinals;
  let lowest = end;
  for (const o of ordinals) {
    // Highest first: stop at the first ordinal whose claims are not done.
    if (!claimsDone(o)) break;
    lowest = o.ordinal;
  }
  return Math.max(lowest - start, c.userPartition);
}

const targetOf = (scope: Scope): PartitionTarget => ({
  namespace: scope.namespace,
  set: scope.setName,
  resourceVersion: scope.setResourceVersion,
});

const partitionPatch = (scope: Scope, c: Coordination, partition: number, userPartition?: number): PatchPartition => ({
  type: "PatchPartition",
  namespace: scope.namespace,
  set: scope.setName,
  partition,
  from: c.livePartition,
  ...(userPartition !== undefined ? { userPartition } : {}),
  ...(scope.setResourceVersion !== undefined ? { resourceVersion: scope.setResourceVersion } : {}),
});

/** The set a partition patch goes to, as read: its name and the resourceVersion precondition. */
interface PartitionTarget {
  namespace: string;
  set: string;
  resourceVersion: string | undefined;
}

/**
 * P4, the one home of the restore: the user's partition back and claimstep's record of it removed,
 * in one patch. Every ordinal done, ClaimsFirst turned off or no longer applying, or the set no
 * longer opted in (rule 1: the KEP's "change volumeClaimUpdateStrategy back to OnClaimDelete to
 * unblock normal Pod rollout immediately").
 */
function restorePartition(target: PartitionTarget, user: number, live: number, why: string): WalkConclusion {
  const message = Messages.partitionRestored(user, live, why);
  return {
    ...concluded("PartitionRestored", message),
    action: {
      type: "PatchPartition",
      namespace: target.namespace,
      set: target.set,
      partition: user,
      from: live,
      userPartition: null,
      ...(target.resourceVersion !== undefined ? { resourceVersion: target.resourceVersion } : {}),
    },
  };
}

/**
 * Rule 1 with P4: a set that is not (or no longer) opted in, whose partition claimstep still holds
 * (its record of the user's is there), gets the user's partition back in one write; then nothing.
 * A record claimstep cannot read is left to the person (nothing written, as before).
 */
export function releaseOnOptOut(set: StatefulSet, why: string): WalkConclusion | undefined {
  const recorded = userPartitionOf(set);
  if (!recorded.ok || recorded.value === undefined) return undefined;
  const target = {
    namespace: set.metadata.namespace ?? "default",
    set: set.metadata.name,
    resourceVersion: set.metadata.resourceVersion,
  };
  return restorePartition(target, recorded.value, set.spec.updateStrategy?.rollingUpdate?.partition ?? 0, why);
}

/**
 * P1, P2 and P4: the partition patch this step makes, if any: take the partition over (recording
 * the user's), lower it to the ordinals whose claims are done, or restore the user's once every
 * ordinal is done (or once ClaimsFirst no longer applies while claimstep holds it).
 */
export function partitionStep(
  scope: Scope,
  c: Coordination,
  ordinals: readonly OrdinalPlan[],
  pending: PodsPending,
): WalkConclusion | undefined {
  const stillApplies = scope.policy.pods.coordination === "ClaimsFirst" && scope.rollingUpdate;
  if (c.holding && !stillApplies) {
    // Held without pod coordination: for a re-create that changed the claim templates (reshape.ts),
    // whose restarts are done by now (they come before this step).
    const why =
      scope.policy.pods.coordination === "ClaimsFirst"
        ? "pod coordination no longer applies"
        : "every pod has the set's volumes and is Ready";
    return restorePartition(targetOf(scope), c.userPartition, c.livePartition, why);
  }
  if (!c.active) return undefined;

  const target = partitionTarget(scope, c, ordinals);
  const allDone = ordinals.every(claimsDone) && pending.busy.size === 0 && pending.held.size === 0;
  if (c.holding && allDone)
    return restorePartition(
      targetOf(scope),
      c.userPartition,
      c.livePartition,
      "every ordinal's claims and pod are done",
    );
  if (!c.holding && target > c.livePartition) {
    const message = Messages.partitionHeld(target, c.livePartition);
    return {
      ...concluded("PartitionHeld", message),
      action: partitionPatch(scope, c, target, c.livePartition),
    };
  }
  // Only ever lowered while held, one patch per step, never below the user's (target ≥ it).
  if (c.holding && c.livePartition > target) {
    const message = Messages.partitionLowered(target, c.livePartition, scope.ordinals.start + target, scope.setName);
    return {
      ...concluded("PartitionLowered", message),
      ordinal: scope.ordinals.start + target,
      action: partitionPatch(scope, c, target),
    };
  }
  return undefined;
}

/** The moment a claim started waiting on its pod (R1), or "now" when the resizer reports the volume in use. */
function waitingOnPodSince(c: ClaimPlan): number | "in-use" | undefined {
  const pvc = c.pvc;
  const state = c.report.readiness.state;
  // Rule 16: a claim whose driver needs no node expansion never waits on its pod.
  if (!pvc || nodeExpansionNotRequired(pvc)) return undefined;
  const conditions = pvc.status?.conditions ?? [];
  if (state === "Retrying") return resizeBlockedByPod(pvc) ? "in-use" : undefined;
  if (state !== "WaitingForPod") return undefined;
  const pending = conditions.find((x) => x.type === "FileSystemResizePending" && x.status === "True");
  const since = pending?.lastTransitionTime ? Date.parse(pending.lastTransitionTime) : NaN;
  return Number.isNaN(since) ? undefined : since;
}

/** What R1–R3 conclude: evict a pod now, or wait (a budget's charge, or the restart's due time). */
export type RestartStep = { evict: WalkConclusion } | { wait: WalkConclusion } | undefined;

/**
 * R1–R3: the one pod to restart, if a claim at the revision waits on it long enough, every other
 * pod in scope is Ready, the ordinal fits in maxUnavailable, and the pod was not itself created
 * (or evicted by claimstep) less than restart-after ago.
 */
export function restartStep(
  scope: Scope,
  ordinals: readonly OrdinalPlan[],
  inFlight: readonly number[],
  nowMs: number,
  budgetChargeSeconds: number,
): RestartStep {
  if (scope.policy.pods.restart !== "WhenRequired") return undefined;
  const after = scope.policy.pods.restartAfterSeconds * 1000;
  let dueWait: WalkConclusion | undefined;
  for (const o of ordinals) {
    for (const c of o.claims) {
      // A claim whose class waits for its resize (rule 19) waits on the pod as much as one done.
      if ((c.needsUpdate && !c.classHeld) || c.report.revision !== scope.revision) continue;
      const since = waitingOnPodSince(c);
      if (since === undefined) continue;
      const p = podStateOf(scope, o.ordinal);
      if (!p.pod?.metadata.uid) continue; // being re-created: the mount finishes the resize
      const created = Date.parse(p.pod.metadata.creationTimestamp ?? "");
      const due = Math.max(since === "in-use" ? nowMs : since + after, Number.isNaN(created) ? nowMs : created + after);
      const last = scope.policy.pods.lastEviction;
      // R3: do not ask again while a refused eviction charges the budget.
      const charged = budgetCharged(last, scope.pods, nowMs, budgetChargeSeconds);
      if (charged) return { wait: { ...charged, ordinal: o.ordinal } };
      // R2: one restart per wait: never again within restart-after of claimstep's own eviction.
      const evictedAt =
        (last?.result === "Evicted" || last?.result === "Attempted") && last.pod === p.name
          ? Date.parse(last.at) + after
          : 0;
      const at = Math.max(due, evictedAt);
      if (nowMs < at) {
        dueWait ??= {
          reason: "ClaimResizing",
          message: Messages.restartDue(
            c.report.readiness.state === "Ready" ? c.report.claim : (c.report.readiness as { message: string }).message,
            p.name,
            new Date(at).toISOString(),
          ),
          ordinal: o.ordinal,
          requeueAfter: Math.max(1, Math.ceil((at - nowMs) / 1000)),
        };
        continue;
      }
      const notReady = inScopeOrdinals(scope).filter((n) => n !== o.ordinal && !podStateOf(scope, n).ready);
      if (notReady.length) {
        dueWait ??= {
          reason: "ClaimResizing",
          message: Messages.restartWaitsForPods(
            p.name,
            notReady.map((n) => podName(scope.setName, n)),
          ),
          ordinal: o.ordinal,
        };
        continue;
      }
      // Within maxUnavailable: one of the highest maxUnavailable ordinals in flight (ordinals are in
      // flight highest first; after maxUnavailable is lowered more may be, and restarting the
      // highest is how they come back within it).
      const flying = [...new Set([...inFlight, o.ordinal])].sort((a, b) => b - a);
      if (flying.indexOf(o.ordinal) >= scope.maxUnavailable) {
        dueWait ??= {
          reason: "ClaimResizing",
          message: Messages.restartWaitsForSlot(p.name, flying.length, scope.maxUnavailable),
          ordinal: o.ordinal,
        };
        continue;
      }
      const action: EvictPod = {
        type: "EvictPod",
        namespace: scope.namespace,
        pod: p.name,
        uid: p.pod.metadata.uid,
        ordinal: o.ordinal,
        claim: c.report.claim,
      };
      const message = Messages.podEvicted(
        p.name,
        c.report.claim,
        since === "in-use"
          ? "the driver expands it only while no pod uses it"
          : `its file system resize has waited since ${new Date(since).toISOString()}`,
      );
      return {
        evict: { ...concluded("PodEvicted", message), ordinal: o.ordinal, action },
      };
    }
  }
  return dueWait ? { wait: dueWait } : undefined;
}

const inScopeOrdinals = (scope: Scope): number[] => {
  const out: number[] = [];
  for (let o = scope.ordinals.first; o < scope.ordinals.end; o++) out.push(o);
  return out;
};
