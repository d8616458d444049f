// The StatefulSet rules in one place, as the StatefulSet controller has them
// (stateful_set_utils.go): the names of a set's claims and pods, the ordinals in scope, the
// maxUnavailable budget. claimstep's own per-set annotations (opt-in, apply-via) are read in
// core/policy/annotations.ts.

import { Keys } from "../keys.js";
import { Messages } from "../messages.js";
import type { StatefulSet } from "./k8s.js";

/** `<template>-<set>-`: every claim of one template of a set starts so (getPersistentVolumeClaimName). */
export const claimPrefix = (template: string, set: string): string => `${template}-${set}-`;

/** The claim of one template and ordinal: `<template>-<set>-<ordinal>`. */
export const claimName = (template: string, set: string, ordinal: number): string =>
  claimPrefix(template, set) + String(ordinal);

/** The ordinal of a claim named for this template and set, or undefined for any other name. */
export function claimOrdinal(claim: string, template: string, set: string): number | undefined {
  const prefix = claimPrefix(template, set);
  const rest = claim.startsWith(prefix) ? claim.slice(prefix.length) : "";
  return /^\d+$/.test(rest) ? Number(rest) : undefined;
}

/** The pod of one ordinal: `<set>-<ordinal>` (getPodName). */
export const podName = (set: string, ordinal: number): string => `${set}-${String(ordinal)}`;

/** The ordinal of a pod named for this set, or undefined for any other name. */
export function podOrdinal(pod: string, set: string): number | undefined {
  const prefix = `${set}-`;
  const rest = pod.startsWith(prefix) ? pod.slice(prefix.length) : "";
  return /^\d+$/.test(rest) ? Number(rest) : undefined;
}

/** The annotation that opts a set in. */
export const OPT_IN = { [Keys.strategy]: "InPlace" } as const;

/** Ordinals of a set (rule 3): the replica range `[start, end)` and the scope `[first, end)` above the partition. */
export interface Ordinals {
  start: number;
  end: number;
  /** `start + partition` (the partition counts from `spec.ordinals.start`), at most `end`. */
  first: number;
}

/** `partition`: the one that counts, when it is not the live one (the user's, while claimstep holds the live one). */
export function ordinalsOf(set: StatefulSet, partitionOverride?: number): Ordinals {
  const start = set.spec.ordinals?.start ?? 0;
  const replicas = set.spec.replicas ?? 1;
  const partition = partitionOverride ?? set.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
  return { start, end: start + replicas, first: start + Math.min(partition, replicas) };
}

/** `[hi, lo]` stepping down: ordinals are processed highest first. */
const downFrom = (hi: number, lo: number): number[] => {
  const out: number[] = [];
  for (let o = hi; o >= lo; o--) out.push(o);
  return out;
};

/** Ordinals in scope, highest first. */
export const inScope = (o: Ordinals): number[] => downFrom(o.end - 1, o.first);

/** Ordinals below the partition (never written, only reported), highest first. */
export const belowPartition = (o: Ordinals): number[] => downFrom(o.first - 1, o.start);

/** Whether an ordinal is outside the replica range (condemned: reported, never touched). */
export const isCondemned = (o: Ordinals, ordinal: number): boolean => ordinal < o.start || ordinal >= o.end;

/** `spec.updateStrategy.rollingUpdate.maxUnavailable`: int or percent of replicas rounded down, min 1; default 1. */
export function maxUnavailableOf(set: StatefulSet): { ok: true; value: number } | { ok: false; message: string } {
  const raw = set.spec.updateStrategy?.rollingUpdate?.maxUnavailable;
  const replicas = set.spec.replicas ?? 1;
  if (raw === undefined) return { ok: true, value: 1 };
  if (typeof raw === "number") return { ok: true, value: Math.max(1, raw) };
  const m = /^(\d+)%$/.exec(raw);
  if (m) return { ok: true, value: Math.max(1, Math.floor((replicas * Number(m[1])) / 100)) };
  if (/^\d+$/.test(raw)) return { ok: true, value: Math.max(1, Number(raw)) };
  return { ok: false, message: Messages.badMaxUnavailable(raw) };
}
