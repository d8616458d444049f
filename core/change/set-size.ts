// What `claimstep set --storage` would do to a claim template's claims: refused when it is below
// the live template or a claim's request (rule 5: claims never shrink), except a claim whose
// expansion failed that it brings back down (X1), reported instead. The comparison is rule 5's
// (core/plan/claims.ts sizeChangeOf); this module words set's refusal and its recoveries.

import {
  compareQuantity,
  formatBytes,
  parseQuantity,
  type QuantityInput,
  quantityString,
  roundSizeAbove,
  toBytes,
} from "../kube/quantity.js";
import { claimOrdinal } from "../kube/statefulset.js";
import { failedExpansionOf, sizeChangeOf } from "../plan/claims.js";
import type { SetRef, Snapshot } from "../types.js";

/** At most this many claims are named in a refusal. */
const NAMED_CLAIMS = 10;

type Storage = QuantityInput | undefined;
const storageOf = (
  spec: { resources?: { requests?: { storage?: Storage } | undefined } | undefined } | undefined,
): Storage => spec?.resources?.requests?.storage;

export interface SizeCheck {
  /** Why `storage` would shrink claim template `claim`: refused. */
  refusal?: string;
  /** Claims whose expansion failed that `storage` brings back down (X1 of docs/design.md), one line each. */
  recovers: string[];
}

/**
 * Would `storage` shrink claim template `claim` (its live size, its claims' requests)? A claim
 * whose expansion failed does not count when `storage` is strictly above its capacity: claimstep
 * lowers it to `storage` (Kubernetes ≥ 1.34, X1); that is reported instead.
 */
export function sizeCheck(snapshot: Snapshot, ref: SetRef, claim: string, storage: string): SizeCheck {
  const wanted = parseQuantity(storage);
  const live = storageOf(snapshot.statefulSet.spec.volumeClaimTemplates?.find((t) => t.metadata.name === claim)?.spec);
  const all = snapshot.claims
    .map((c) => ({
      name: c.metadata.name,
      ordinal: claimOrdinal(c.metadata.name, claim, ref.name),
      storage: storageOf(c.spec),
      // X1: the planner's reading of a failed expansion (core/plan/claims.ts).
      allocation: failedExpansionOf(c),
      capacity: c.status?.capacity?.storage as Storage,
    }))
    .filter(
      (
        c,
      ): c is {
        name: string;
        ordinal: number;
        storage: QuantityInput;
        allocation: string | undefined;
        capacity: Storage;
      } => c.ordinal !== undefined && c.storage !== undefined,
    )
    .sort((a, b) => a.ordinal - b.ordinal)
    // Rule 5 and X1, the planner's comparison (core/plan/claims.ts), in parseQuantity's exact units.
    .map((c) => ({
      ...c,
      size: sizeChangeOf(wanted, {
        request: parseQuantity(c.storage),
        failed: c.allocation !== undefined,
        capacity: c.allocation !== undefined && c.capacity !== undefined ? parseQuantity(c.capacity) : undefined,
      }),
    }));
  const recovers = all
    .filter((c) => c.size === "recover")
    .map(
      (c) =>
        `${c.name}: its expansion to ${quantityString(c.storage)} failed (${c.allocation}); claimstep brings it back down to ${storage} (above its capacity ${quantityString(c.capacity!)})`,
    );
  // Failed claims that cannot come down this far (issue 36 point 7): the server lowers a failed
  // request only to more than the claim's capacity, whatever the failed request was.
  const stuck = all.filter((c) => c.size === "stuck");
  const liveLarger = live !== undefined && sizeChangeOf(wanted, { request: parseQuantity(live) }) === "kept";
  const largerClaims = all.filter((c) => c.size === "kept");
  if (!liveLarger && largerClaims.length === 0 && stuck.length === 0) return { recovers };
  const sizes = [...(liveLarger ? [live!] : []), ...largerClaims.map((c) => c.storage)];
  const largest = sizes.length ? sizes.reduce((a, b) => (compareQuantity(a, b) >= 0 ? a : b)) : undefined;
  const named = largerClaims.slice(0, NAMED_CLAIMS).map((c) => `${c.name} ${quantityString(c.storage)}`);
  if (largerClaims.length > NAMED_CLAIMS) named.push(`and ${largerClaims.length - NAMED_CLAIMS} more`);
  const what = [
    ...(liveLarger ? [`live template ${claim} ${quantityString(live!)} (spec.volumeClaimTemplates)`] : []),
    ...(named.length ? [`claims ${named.join(", ")}`] : []),
  ].join("; ");
  const shrinks = what
    ? `--storage ${storage} is below the current size (${what}): claims never shrink (Kubernetes refuses to lower a claim's storage request)`
    : "";
  const failures = stuck
    .slice(0, NAMED_CLAIMS)
    .map(
      (c) =>
        `${c.name}'s expansion to ${quantityString(c.storage)} failed (${c.allocation}) and it stays at ${quantityString(c.capacity!)}`,
    );
  const highest = stuck.length ? stuck.map((c) => toBytes(c.capacity!)).reduce((a, b) => (a >= b ? a : b)) : undefined;
  const stuckText = stuck.length
    ? `${failures.join("; ")}: Kubernetes lowers a failed request only to more than the claim's capacity, so --storage ${storage} cannot bring ${stuck.length > 1 ? "them" : "it"} back down`
    : "";
  // The smallest size that does both: at least the largest current size, more than every failed claim's capacity.
  const advice =
    highest !== undefined && (largest === undefined || highest >= toBytes(largest))
      ? `Give more than ${formatBytes(highest)}, a size the storage can provide (e.g. --storage ${roundSizeAbove(highest)}): claimstep then lowers the failed request${stuck.length > 1 ? "s" : ""} to it (X1, Kubernetes ≥ 1.34)`
      : `Give at least ${quantityString(largest!)}`;
  return {
    recovers,
    refusal: `set: ${[shrinks, stuckText].filter(Boolean).join("; ")}. ${advice}, or --allow-smaller to write it anyway; nothing written`,
  };
}
