// Queue messages and Durable Object names (pure). One message per opted-in set per cron tick; the
// consumer routes it to the set's object, named by cluster/namespace/name, so every trigger of one
// set — cron, relay, webhook, alarm — meets the same object wherever it arrives.
import * as z from "../../core/zod.js";
import type { SetRef } from "../../core/types.js";

/** A queue message: step this set of this cluster. */
export interface StepMessage {
  v: 1;
  cluster: string;
  namespace: string;
  name: string;
}

const label = z.string().check(z.regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/));
export const StepMessage = z.strictObject({ v: z.literal(1), cluster: label, namespace: label, name: label });

export const stepMessage = (cluster: string, ref: SetRef): StepMessage => ({ v: 1, cluster, namespace: ref.namespace, name: ref.name });

/** The name of a set's Durable Object (idFromName): one object per set of a cluster. */
export const setObjectName = (cluster: string, ref: SetRef): string => `set:${cluster}/${ref.namespace}/${ref.name}`;

/** The Durable Object that keeps a cluster's backoff. */
export const clusterObjectName = (cluster: string): string => `cluster:${cluster}`;

/** Replay ids spread over this many objects, by a hash of the id (no single hot object). */
export const REPLAY_SHARDS = 8;

/** The object keeping one replay id: the same for that id whatever isolate asks. */
export function replayObjectName(id: string): string {
  let h = 2166136261; // FNV-1a
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  return `replay:${(h >>> 0) % REPLAY_SHARDS}`;
}

/** Messages in batches of at most `size` (Queues: 100 per sendBatch). */
export function batches<T>(items: readonly T[], size = 100): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
