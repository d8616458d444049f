// Leader election over a coordination.k8s.io/v1 Lease, as client-go's tools/leaderelection does
// it, as pure functions (the loop is functions/lease/elector.ts; the Lease, behind LeaseApi in
// core/ports.ts, is adapters/kube/lease.ts): given the Lease as read (or its absence), what this replica saw before,
// its identity and the time, decide whether to create the Lease, take it over, renew it, or
// follow its holder; and after a write, until when this replica may act as the leader.
//
// Time and clock skew. A follower never compares the Lease's renewTime with its own clock: it
// takes over only once it has seen the same record (the same resourceVersion) unchanged for a
// whole leaseDurationSeconds, measured on its own clock (client-go's observedTime). The holder
// stops leading at `sentAt + duration − margin`, where sentAt is its own clock's time when it SENT
// the write that renewed the Lease (the write lands after that, and every follower reads it later
// still). So the holder stops before any follower can take over, whatever the wall clocks say; the
// margin absorbs the clocks' rates, timers firing late and the time a pass needs to notice.
//
// `now` is a MONOTONIC clock (performance.now() in the Elector, as Go's time.Now() carries a
// monotonic reading that client-go's observedTime comparisons use): a step of the wall clock (NTP,
// a resumed VM) never moves an expiry. The wall clock only writes acquireTime and renewTime, which
// are for people (kubectl) and never decide anything.
import type { LeaseSpec, LeaseWriteOutcome, ObservedLease } from "../ports.js";

export interface ElectionConfig {
  /** This replica (the pod name). */
  identity: string;
  /** How long a Lease written by this replica is valid. */
  leaseDurationMs: number;
  /** The holder stops leading this long before its Lease could expire for a follower. */
  marginMs: number;
}

/** What one replica remembers between passes (starts as `{}`). */
export interface ElectionState {
  /** The record last seen, and when it was first seen at that resourceVersion (this replica's monotonic clock, ms). */
  observed?: { resourceVersion: string; holder: string; durationMs: number; at: number };
  /** This replica leads until then (ms, this replica's monotonic clock); absent: it does not lead. */
  leadingUntil?: number;
}

export type Action =
  /** No Lease yet: create it, holding it. */
  | { kind: "create"; spec: LeaseSpec }
  /** Write the Lease under `resourceVersion` (a precondition: a 409 means someone else wrote first). */
  | { kind: "update"; spec: LeaseSpec; resourceVersion: string; why: "renew" | "takeover" }
  /** Someone else holds a valid Lease: do nothing; it expires for this replica at `expiresAt` unless renewed. */
  | { kind: "follow"; holder: string; expiresAt: number };

/** Kubernetes' MicroTime: RFC 3339 with exactly six fractional digits (metav1.RFC3339Micro). */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

/** The margin for a lease duration: 2 s, or a fifth of a short duration. */
export const defaultMarginMs = (leaseDurationMs: number): number => Math.min(2000, Math.floor(leaseDurationMs / 5));

/** Does this replica lead at `now`? */
export const leads = (state: ElectionState, now: number): boolean =>
  state.leadingUntil !== undefined && now < state.leadingUntil;

/**
 * The next action, and the state with the record noted as observed. `now` is this replica's
 * monotonic clock (ms): every expiry is measured on it. `wall` (ms since the epoch, default `now`)
 * only dates the record written (acquireTime, renewTime). `lease` undefined: the Lease does not
 * exist (404).
 */
export function decide(
  lease: ObservedLease | undefined,
  state: ElectionState,
  cfg: ElectionConfig,
  now: number,
  wall: number = now,
): { action: Action; state: ElectionState } {
  const durationSeconds = Math.max(1, Math.ceil(cfg.leaseDurationMs / 1000));
  const mine = (transitions: number, acquireTime: string): LeaseSpec => ({
    holderIdentity: cfg.identity,
    leaseDurationSeconds: durationSeconds,
    acquireTime,
    renewTime: microTime(wall),
    leaseTransitions: transitions,
  });
  if (!lease) {
    const { observed: _gone, ...rest } = state;
    return { action: { kind: "create", spec: mine(0, microTime(wall)) }, state: rest };
  }

  const spec = lease.spec;
  const holder = spec.holderIdentity ?? "";
  const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
  // A record not seen before (another resourceVersion) starts its clock now, on this replica's clock.
  const seen = state.observed;
  const observed =
    seen && seen.resourceVersion === lease.resourceVersion
      ? seen
      : { resourceVersion: lease.resourceVersion, holder, durationMs, at: now };
  const next: ElectionState = { ...state, observed };
  const transitions = spec.leaseTransitions ?? 0;

  if (holder === cfg.identity) {
    // Ours (a renewal, or our own record after a restart with the same name): renew it.
    return {
      action: {
        kind: "update",
        resourceVersion: lease.resourceVersion,
        why: "renew",
        spec: mine(transitions, spec.acquireTime ?? microTime(wall)),
      },
      state: next,
    };
  }
  // Someone else's record: ours no longer counts, whatever was thought before.
  delete next.leadingUntil;
  const expiresAt = observed.at + durationMs;
  // Released (no holder) or unchanged for a whole duration (or a duration of 0): take it over,
  // counting one more transition (client-go counts every change of holder).
  if (holder === "" || now >= expiresAt) {
    return {
      action: {
        kind: "update",
        resourceVersion: lease.resourceVersion,
        why: "takeover",
        spec: mine(transitions + 1, microTime(wall)),
      },
      state: next,
    };
  }
  return { action: { kind: "follow", holder, expiresAt }, state: next };
}

/**
 * The state after a write that was SENT at `sentAt` (this replica's monotonic clock, ms). A landed write leads until
 * `sentAt + duration − margin`; a lost race ends leading at once (the next pass re-reads); a failed
 * write changes nothing: a lead runs out by itself.
 */
export function afterWrite(
  state: ElectionState,
  outcome: LeaseWriteOutcome,
  cfg: ElectionConfig,
  sentAt: number,
): ElectionState {
  switch (outcome.kind) {
    case "written": {
      const spec = outcome.lease.spec;
      const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
      return {
        observed: {
          resourceVersion: outcome.lease.resourceVersion,
          holder: spec.holderIdentity ?? "",
          durationMs,
          at: sentAt,
        },
        leadingUntil: sentAt + Math.min(durationMs, cfg.leaseDurationMs) - cfg.marginMs,
      };
    }
    case "lost": {
      const { leadingUntil: _lost, ...rest } = state;
      return rest;
    }
    case "failed":
      return state;
  }
}

/**
 * The spec that gives the Lease up on shutdown (client-go's ReleaseOnCancel): no holder, so a
 * follower takes over at its next pass instead of waiting for the Lease to expire.
 */
export function releaseSpec(lease: ObservedLease, wall: number): LeaseSpec {
  return {
    holderIdentity: "",
    leaseDurationSeconds: 1,
    acquireTime: microTime(wall),
    renewTime: microTime(wall),
    leaseTransitions: lease.spec.leaseTransitions ?? 0,
  };
}
