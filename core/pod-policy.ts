// The pod extensions' per-set settings (docs/design.md "Pods"), read from the StatefulSet's
// annotations: pod coordination (P1–P5), restarts (R1–R3), the user's partition claimstep
// recorded, and its last eviction. Each way an annotation can be wrong yields one message naming
// the set, the annotation, the value and the fix; the planner blocks on it and writes nothing.

import type { StatefulSet } from "./k8s.js";
import { Keys } from "./keys.js";
import type { PatchPartition } from "./types.js";
import * as z from "./zod.js";

export const POD_COORDINATION = ["None", "ClaimsFirst"] as const;
export const RESTART_PODS = ["Never", "WhenRequired"] as const;

/** R1: how long a file system resize may wait on its pod before claimstep restarts it. */
export const DEFAULT_RESTART_AFTER_SECONDS = 5 * 60;
/** R3: a failed eviction charges the budget for about two minutes (the disruption controller's DeletionTimeout). */
export const BUDGET_CHARGE_SECONDS = 120;

/** What claimstep recorded of its last eviction attempt (`claimstep.io/last-eviction`). */
export const LastEviction = z.object({
  pod: z.string(),
  uid: z.string(),
  at: z.string(),
  /** Attempted: written before the eviction; its outcome replaces it (lost with a failed write). */
  result: z.enum(["Attempted", "Evicted", "DisruptionBudget"]),
  message: z.optional(z.string()),
});
export type LastEviction = z.infer<typeof LastEviction>;

export interface PodPolicy {
  coordination: (typeof POD_COORDINATION)[number];
  restart: (typeof RESTART_PODS)[number];
  restartAfterSeconds: number;
  /** The user's partition claimstep recorded when it took the partition over (P1); absent: not holding it. */
  userPartition?: number;
  lastEviction?: LastEviction;
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** A Go-style duration of whole seconds or more: `90s`, `5m`, `1h30m`. */
export function parseDurationSeconds(raw: string): number | undefined {
  if (!/^(\d+[hms])+$/.test(raw)) return undefined;
  let total = 0;
  for (const [, n, unit] of raw.matchAll(/(\d+)([hms])/g)) total += Number(n) * UNITS[unit!]!;
  return total;
}

const setName = (set: Pick<StatefulSet, "metadata">) => `${set.metadata.namespace ?? "default"}/${set.metadata.name}`;

const oneOf = <T extends string>(
  set: Pick<StatefulSet, "metadata">,
  key: string,
  accepted: readonly T[],
  fallback: T,
): { ok: true; value: T } | { ok: false; message: string } => {
  const value = set.metadata.annotations?.[key];
  if (value === undefined) return { ok: true, value: fallback };
  if ((accepted as readonly string[]).includes(value)) return { ok: true, value: value as T };
  return {
    ok: false,
    message: `StatefulSet ${setName(set)}: annotation ${key}=${JSON.stringify(value)} is not one of ${accepted.join(", ")}: fix or remove it (absent = ${fallback})`,
  };
};

/**
 * The user's partition claimstep recorded when it took the partition over (P1), absent when it
 * does not hold the partition. Read also for a set that is not (or no longer) opted in: such a
 * set gets its partition back (P4).
 */
export function userPartitionOf(
  set: Pick<StatefulSet, "metadata">,
): { ok: true; value: number | undefined } | { ok: false; message: string } {
  const raw = set.metadata.annotations?.[Keys.userPartition];
  if (raw === undefined) return { ok: true, value: undefined };
  if (/^\d{1,9}$/.test(raw)) return { ok: true, value: Number(raw) };
  return {
    ok: false,
    message: `StatefulSet ${setName(set)}: annotation ${Keys.userPartition}=${JSON.stringify(raw)} is not a partition (a whole number); claimstep records the partition you set there while it holds spec.updateStrategy.rollingUpdate.partition. Write your partition there, or remove the annotation and set the partition yourself`,
  };
}

export function podPolicyOf(
  set: Pick<StatefulSet, "metadata">,
): { ok: true; policy: PodPolicy } | { ok: false; message: string } {
  const coordination = oneOf(set, Keys.podCoordination, POD_COORDINATION, "None");
  if (!coordination.ok) return coordination;
  const restart = oneOf(set, Keys.restartPods, RESTART_PODS, "Never");
  if (!restart.ok) return restart;
  const annotations = set.metadata.annotations ?? {};

  const rawAfter = annotations[Keys.restartAfter];
  const restartAfterSeconds = rawAfter === undefined ? DEFAULT_RESTART_AFTER_SECONDS : parseDurationSeconds(rawAfter);
  if (restartAfterSeconds === undefined || restartAfterSeconds < 1) {
    return {
      ok: false,
      message: `StatefulSet ${setName(set)}: annotation ${Keys.restartAfter}=${JSON.stringify(rawAfter)} is not a duration such as 90s, 5m or 1h (at least 1s); fix or remove it (absent = 5m)`,
    };
  }

  const recorded = userPartitionOf(set);
  if (!recorded.ok) return recorded;
  const userPartition = recorded.value;

  // A record claimstep cannot read is its own earlier write gone wrong (or a person's edit): it
  // only throttles evictions, so an unreadable one is ignored rather than blocking the rollout.
  let lastEviction: LastEviction | undefined;
  const rawEviction = annotations[Keys.lastEviction];
  if (rawEviction !== undefined) {
    try {
      const parsed = LastEviction.safeParse(JSON.parse(rawEviction));
      if (parsed.success) lastEviction = parsed.data;
    } catch {
      lastEviction = undefined;
    }
  }

  return {
    ok: true,
    policy: {
      coordination: coordination.value,
      restart: restart.value,
      restartAfterSeconds,
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
 * P5 (`claimstep set … --hold-pods`): the partition patch that holds every pod until its claims
 * are ready, with ClaimsFirst and the user's partition recorded (kept when already recorded), so
 * that a pod template change applied next rolls nothing before its claims.
 */
export function holdPods(set: StatefulSet): { action: PatchPartition; annotations: Record<string, string> } {
  const live = set.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
  const recorded = set.metadata.annotations?.[Keys.userPartition];
  const replicas = set.spec.replicas ?? 1;
  return {
    action: {
      type: "PatchPartition",
      namespace: set.metadata.namespace ?? "default",
      set: set.metadata.name,
      partition: Math.max(replicas, live),
      from: live,
      ...(recorded === undefined ? { userPartition: live } : {}),
      ...(set.metadata.resourceVersion !== undefined ? { resourceVersion: set.metadata.resourceVersion } : {}),
    },
    annotations: { [Keys.podCoordination]: "ClaimsFirst" },
  };
}
