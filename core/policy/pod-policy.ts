// The pod extensions' per-set settings (docs/design.md "Pods"), from the StatefulSet's annotations
// (parsed in core/policy/annotations.ts and core/policy/records.ts): pod coordination (P1–P5), restarts (R1–R3),
// the user's partition claimstep recorded, and its last eviction. Each way an annotation can be
// wrong yields one message naming the set, the annotation, the value and the fix; the planner
// blocks on it and writes nothing.

import { Keys } from "../keys.js";
import type { Pod, StatefulSet } from "../kube/k8s.js";
import { Messages } from "../messages.js";
import {
  type POD_COORDINATION,
  podCoordinationOf,
  type RESTART_PODS,
  restartAfterOf,
  restartPodsOf,
} from "./annotations.js";
import { holdOf, type PartitionHold, userPartitionRecord } from "./partition-hold.js";
import { type LastEviction, lastEvictionOf, userPartitionOf } from "./records.js";

/** R3: a failed eviction charges the budget for about two minutes (the disruption controller's DeletionTimeout). */
export const BUDGET_CHARGE_SECONDS = 120;

/**
 * R3: a refused eviction charges the budget for `chargeSeconds` (BUDGET_CHARGE_SECONDS, unless the
 * step was given less): the wait until it is free, or undefined; the planner's pod restarts
 * (core/plan/pods.ts) and the shape's (core/plan/reshape.ts) both wait on it.
 * An attempt whose outcome was never recorded counts as refused while its pod still has the uid it
 * was asked for (a pod replaced since means it went through).
 */
export function budgetCharged(
  last: LastEviction | undefined,
  pods: ReadonlyMap<string, Pod>,
  nowMs: number,
  chargeSeconds: number,
): { reason: "DisruptionBudget"; message: string; requeueAfter: number } | undefined {
  const refused =
    last?.result === "DisruptionBudget" ||
    (last?.result === "Attempted" && pods.get(last.pod)?.metadata.uid === last.uid);
  if (!last || !refused) return undefined;
  const free = Date.parse(last.at) + chargeSeconds * 1000;
  if (nowMs >= free) return undefined;
  const until = new Date(free).toISOString();
  return {
    reason: "DisruptionBudget",
    message:
      last.result === "DisruptionBudget"
        ? Messages.budgetCharged(last.message, last.pod, until)
        : Messages.evictionUnresolved(last.pod, last.at, until),
    requeueAfter: Math.ceil((free - nowMs) / 1000),
  };
}

export interface PodPolicy {
  coordination: (typeof POD_COORDINATION)[number];
  restart: (typeof RESTART_PODS)[number];
  restartAfterSeconds: number;
  /** The user's partition claimstep recorded when it took the partition over (P1); absent: not holding it. */
  userPartition?: number;
  lastEviction?: LastEviction;
}

/** The pod extensions' annotations, each parsed by its one parser (core/policy/annotations.ts, core/policy/records.ts). */
export function podPolicyOf(
  set: Pick<StatefulSet, "metadata">,
): { ok: true; policy: PodPolicy } | { ok: false; message: string } {
  const coordination = podCoordinationOf(set);
  if (!coordination.ok) return coordination;
  const restart = restartPodsOf(set);
  if (!restart.ok) return restart;
  const restartAfter = restartAfterOf(set);
  if (!restartAfter.ok) return restartAfter;
  const recorded = userPartitionOf(set);
  if (!recorded.ok) return recorded;
  const userPartition = recorded.value;
  const lastEviction = lastEvictionOf(set);

  return {
    ok: true,
    policy: {
      coordination: coordination.value,
      restart: restart.value,
      restartAfterSeconds: restartAfter.value,
      ...(userPartition !== undefined ? { userPartition } : {}),
      ...(lastEviction ? { lastEviction } : {}),
    },
  };
}

/** The record written after an eviction attempt, in a fixed key order. */
export const lastEvictionJSON = (e: LastEviction): string =>
  JSON.stringify({
    pod: e.pod,
    uid: e.uid,
    at: e.at,
    result: e.result,
    ...(e.message !== undefined ? { message: e.message } : {}),
  });

/**
 * P5 (`claimstep set … --hold-pods`): the partition hold that keeps every pod until its claims are
 * ready, and the annotations written with it in the same patch: ClaimsFirst and the user's
 * partition recorded (absent when already recorded: kept), so that a pod template change applied
 * next rolls nothing before its claims. Asked through changeOf (core/change/change.ts).
 */
export function holdPods(set: StatefulSet): { hold: PartitionHold; annotations: Record<string, string> } {
  const hold = holdOf(set);
  return {
    hold,
    annotations: { [Keys.podCoordination]: "ClaimsFirst", ...userPartitionRecord(hold) },
  };
}
