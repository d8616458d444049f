// What claimstep writes on a set and reads back on a later step, one reader each: the status
// record, the recorded revisions, the user's partition it holds (P1), its last eviction (R3),
// autogrow's record, and the re-create's records (F1–F5). Part of the policy module with
// core/policy/annotations.ts and core/policy/policy.ts, the only readers of a claimstep.io/* annotation
// (test/core/policy/annotation-readers.test.ts).

import { Keys } from "../keys.js";
import type { StatefulSet } from "../kube/k8s.js";
import type { StatusRecord } from "../types.js";
import * as z from "../zod.js";

/** What the readers read of a set (the webhook's old object has an optional name). */
type Annotated = { metadata: { name?: string; namespace?: string; annotations?: Record<string, string> } };

const setName = (set: Annotated) => `${set.metadata.namespace ?? "default"}/${set.metadata.name}`;

/**
 * `claimstep.io/status` as the last step wrote it: a JSON object, else undefined (absent, empty,
 * not JSON, or JSON but not an object). Its fields are not checked: a record written by an older
 * claimstep or edited by hand may lack some, so read each as possibly absent.
 */
export function recordedStatusOf(set: StatefulSet): StatusRecord | undefined {
  const raw = set.metadata.annotations?.[Keys.status];
  if (!raw) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as StatusRecord)
      : undefined;
  } catch {
    return undefined;
  }
}

/** `claimstep.io/current-revision` and `claimstep.io/update-revision` as the last step wrote them (absent: undefined). */
export function recordedRevisionsOf(set: Annotated): { current?: string; update?: string } {
  const a = set.metadata.annotations ?? {};
  return {
    ...(a[Keys.currentRevision] !== undefined ? { current: a[Keys.currentRevision] } : {}),
    ...(a[Keys.updateRevision] !== undefined ? { update: a[Keys.updateRevision] } : {}),
  };
}

/** Whether claimstep recorded the user's partition (`claimstep.io/user-partition`): it holds the live one (P1). */
export const holdsUserPartition = (set: Annotated): boolean =>
  set.metadata.annotations?.[Keys.userPartition] !== undefined;

/**
 * The user's partition claimstep recorded when it took the partition over (P1), absent when it
 * does not hold the partition. Read also for a set that is not (or no longer) opted in: such a
 * set gets its partition back (P4).
 */
export function userPartitionOf(
  set: Annotated,
): { ok: true; value: number | undefined } | { ok: false; message: string } {
  const raw = set.metadata.annotations?.[Keys.userPartition];
  if (raw === undefined) return { ok: true, value: undefined };
  if (/^\d{1,9}$/.test(raw)) return { ok: true, value: Number(raw) };
  return {
    ok: false,
    message: `StatefulSet ${setName(set)}: annotation ${Keys.userPartition}=${JSON.stringify(raw)} is not a partition (a whole number); claimstep records the partition you set there while it holds spec.updateStrategy.rollingUpdate.partition. Write your partition there, or remove the annotation and set the partition yourself`,
  };
}

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

/**
 * The last eviction claimstep recorded, undefined when absent or unreadable: a record claimstep
 * cannot read is its own earlier write gone wrong (or a person's edit); it only throttles
 * evictions, so an unreadable one is ignored rather than blocking the rollout.
 */
export function lastEvictionOf(set: Annotated): LastEviction | undefined {
  const raw = set.metadata.annotations?.[Keys.lastEviction];
  if (raw === undefined) return undefined;
  try {
    const parsed = LastEviction.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** `claimstep.io/autogrown-from` as written: the revisions autogrow grew from (core/plan/autogrow.ts grownFrom reads the list). */
export const autogrownFromOf = (set: Annotated): string | undefined => set.metadata.annotations?.[Keys.autogrownFrom];

// The re-create's records (docs/design.md "Re-creating the set", F1–F5).

/** `claimstep.io/finalize-for`: the revision a Recreate claimstep wrote on the user's behalf was written for (absent: the user's own, or none). */
export const finalizeForOf = (set: Annotated): string | undefined => set.metadata.annotations?.[Keys.finalizeFor];

/** `claimstep.io/recreate-record`: the stamp F1 writes on the set before its record. */
export const recreateStampOf = (set: Annotated): string | undefined => set.metadata.annotations?.[Keys.recreateRecord];

/** `claimstep.io/recreate-approved`: the revision whose re-create a merged pull request approved (GitOps). */
export const recreateApprovedOf = (set: Annotated): string | undefined =>
  set.metadata.annotations?.[Keys.recreateApproved];

/** `claimstep.io/recreated-from`: the uid of the record claimstep created this set from (F4). */
export const recreatedFromOf = (set: Annotated): string | undefined => set.metadata.annotations?.[Keys.recreatedFrom];

/** `claimstep.io/ownership-restored`: the uid of the record whose managers got their fields back (F5). */
export const ownershipRestoredOf = (set: Annotated): string | undefined =>
  set.metadata.annotations?.[Keys.ownershipRestored];
