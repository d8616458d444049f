// Queue messages and Durable Object names (pure). One message per opted-in set per cron tick; the
// consumer routes it to the set's object, named by cluster/namespace/name, so every trigger of one
// set — cron, relay, webhook, alarm — meets the same object wherever it arrives.

import type { SetRef } from "../../core/types.js";
import * as z from "../../core/zod.js";

/** A queue message: step this set of this cluster. */
export interface StepMessage {
  v: 1;
  cluster: string;
  namespace: string;
  name: string;
}

const label = z.string().check(z.regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/));
export const StepMessage = z.strictObject({ v: z.literal(1), cluster: label, namespace: label, name: label });

/** What a set object's /poke and /step take: its set, and what triggered it. */
export const SetRequest = z.strictObject({
  cluster: label,
  namespace: label,
  name: label,
  via: z.optional(z.string().check(z.maxLength(32))),
});

export const stepMessage = (cluster: string, ref: SetRef): StepMessage => ({
  v: 1,
  cluster,
  namespace: ref.namespace,
  name: ref.name,
});

/** The name of a set's Durable Object (idFromName): one object per set of a cluster. */
export const setObjectName = (cluster: string, ref: SetRef): string => `set:${cluster}/${ref.namespace}/${ref.name}`;

/** The Durable Object that keeps a cluster's backoff. */
export const clusterObjectName = (cluster: string): string => `cluster:${cluster}`;

/**
 * The longest replay key (claimstep's prefix such as `standard-webhooks:` plus the delivery id), in
 * UTF-8 bytes, that the ledger keeps. Standard Webhooks ids are short (`msg_` and 27 characters);
 * GitHub's and GitLab's delivery ids are UUIDs. A longer key is refused (400) before it reaches the
 * ledger, and by the ledger itself (a Durable Object key over 2 KiB throws).
 */
export const MAX_REPLAY_KEY_BYTES = 256;

export const utf8Length = (s: string): number => new TextEncoder().encode(s).length;

/** Replay ids spread over this many objects, by a hash of the id (no single hot object). */
export const REPLAY_SHARDS = 8;

/** The object keeping one replay id: the same for that id whatever isolate asks. */
export function replayObjectName(id: string, kind = "replay"): string {
  let h = 2166136261; // FNV-1a
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  return `${kind}:${(h >>> 0) % REPLAY_SHARDS}`;
}

/** Messages in batches of at most `size` (Queues: 100 per sendBatch). */
export function batches<T>(items: readonly T[], size = 100): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
