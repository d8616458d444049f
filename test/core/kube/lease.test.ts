// The election's core (core/kube/lease.ts): create, renew, follow, take over, conflicts,
// and the margin that keeps a holder from sweeping once a follower may take over.
import { describe, expect, it } from "vitest";
import {
  afterWrite,
  decide,
  defaultMarginMs,
  type ElectionConfig,
  type ElectionState,
  leads,
  microTime,
  releaseSpec,
} from "../../../core/kube/lease.js";
import type { ObservedLease } from "../../../core/ports.js";

const T0 = Date.parse("2026-11-30T10:00:00Z");
const s = (seconds: number) => T0 + seconds * 1000;
const me: ElectionConfig = { identity: "claimstep-a", leaseDurationMs: 15_000, marginMs: 2000 };
const held = (holder: string, rv: string, extra: Partial<ObservedLease["spec"]> = {}): ObservedLease => ({
  resourceVersion: rv,
  spec: {
    holderIdentity: holder,
    leaseDurationSeconds: 15,
    acquireTime: microTime(s(-100)),
    renewTime: microTime(s(-1)),
    leaseTransitions: 3,
    ...extra,
  },
});

describe("microTime", () => {
  it("writes RFC 3339 with six fractional digits, as metav1.MicroTime", () => {
    expect(microTime(T0 + 123)).toBe("2026-11-30T10:00:00.123000Z");
  });
});

describe("decide", () => {
  const cases: {
    name: string;
    lease: ObservedLease | undefined;
    state: ElectionState;
    now: number;
    want: Record<string, unknown>;
  }[] = [
    {
      name: "no Lease: create it, holding it, transitions 0",
      lease: undefined,
      state: {},
      now: s(0),
      want: {
        kind: "create",
        spec: {
          holderIdentity: "claimstep-a",
          leaseDurationSeconds: 15,
          acquireTime: microTime(s(0)),
          renewTime: microTime(s(0)),
          leaseTransitions: 0,
        },
      },
    },
    {
      name: "ours: renew under its resourceVersion, keeping acquireTime and transitions",
      lease: held("claimstep-a", "300"),
      state: {},
      now: s(0),
      want: {
        kind: "update",
        why: "renew",
        resourceVersion: "300",
        spec: {
          holderIdentity: "claimstep-a",
          acquireTime: microTime(s(-100)),
          renewTime: microTime(s(0)),
          leaseTransitions: 3,
          leaseDurationSeconds: 15,
        },
      },
    },
    {
      name: "another holder, first seen now: follow; it expires a whole duration from now (this clock)",
      lease: held("claimstep-b", "300"),
      state: {},
      now: s(0),
      want: { kind: "follow", holder: "claimstep-b", expiresAt: s(15) },
    },
    {
      name: "another holder, renewTime long past but first seen now: follow (never trust another clock)",
      lease: held("claimstep-b", "300", { renewTime: microTime(s(-3600)) }),
      state: {},
      now: s(0),
      want: { kind: "follow", holder: "claimstep-b", expiresAt: s(15) },
    },
    {
      name: "another holder, renewTime in this clock's future (skew): follow, same expiry",
      lease: held("claimstep-b", "300", { renewTime: microTime(s(+3600)) }),
      state: { observed: { resourceVersion: "300", holder: "claimstep-b", durationMs: 15_000, at: s(-5) } },
      now: s(0),
      want: { kind: "follow", holder: "claimstep-b", expiresAt: s(10) },
    },
    {
      name: "unchanged one second short of its duration: still follow",
      lease: held("claimstep-b", "300"),
      state: { observed: { resourceVersion: "300", holder: "claimstep-b", durationMs: 15_000, at: s(0) } },
      now: s(14),
      want: { kind: "follow", holder: "claimstep-b", expiresAt: s(15) },
    },
    {
      name: "unchanged for its whole duration: take over under its resourceVersion, one more transition",
      lease: held("claimstep-b", "300"),
      state: { observed: { resourceVersion: "300", holder: "claimstep-b", durationMs: 15_000, at: s(0) } },
      now: s(15),
      want: {
        kind: "update",
        why: "takeover",
        resourceVersion: "300",
        spec: {
          holderIdentity: "claimstep-a",
          leaseDurationSeconds: 15,
          acquireTime: microTime(s(15)),
          renewTime: microTime(s(15)),
          leaseTransitions: 4,
        },
      },
    },
    {
      name: "the holder's own (shorter) duration counts, not this replica's",
      lease: held("claimstep-b", "300", { leaseDurationSeconds: 5 }),
      state: { observed: { resourceVersion: "300", holder: "claimstep-b", durationMs: 5000, at: s(0) } },
      now: s(5),
      want: { kind: "update", why: "takeover", resourceVersion: "300" },
    },
    {
      name: "renewed meanwhile (a new resourceVersion): its clock starts again",
      lease: held("claimstep-b", "301"),
      state: { observed: { resourceVersion: "300", holder: "claimstep-b", durationMs: 15_000, at: s(0) } },
      now: s(20),
      want: { kind: "follow", holder: "claimstep-b", expiresAt: s(35) },
    },
    {
      name: "released (no holder): take over at once",
      lease: held("", "300", { leaseDurationSeconds: 1 }),
      state: {},
      now: s(0),
      want: {
        kind: "update",
        why: "takeover",
        resourceVersion: "300",
        spec: { holderIdentity: "claimstep-a", leaseTransitions: 4 },
      },
    },
    {
      name: "an empty spec (a Lease created by hand): take over at once",
      lease: { resourceVersion: "7", spec: {} },
      state: {},
      now: s(0),
      want: {
        kind: "update",
        why: "takeover",
        resourceVersion: "7",
        spec: { holderIdentity: "claimstep-a", leaseTransitions: 1 },
      },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(decide(c.lease, c.state, me, c.now).action).toMatchObject(c.want);
    });
  }

  it("a record of another holder ends this replica's lead at once", () => {
    const state: ElectionState = {
      leadingUntil: s(13),
      observed: { resourceVersion: "300", holder: "claimstep-a", durationMs: 15_000, at: s(0) },
    };
    const { state: next } = decide(held("claimstep-b", "301"), state, me, s(1));
    expect(leads(next, s(1))).toBe(false);
  });

  it("notes when a record was first seen, and keeps that time while it stays the same", () => {
    const first = decide(held("claimstep-b", "300"), {}, me, s(0)).state;
    expect(first.observed).toEqual({ resourceVersion: "300", holder: "claimstep-b", durationMs: 15_000, at: s(0) });
    expect(decide(held("claimstep-b", "300"), first, me, s(10)).state.observed?.at).toBe(s(0));
  });
});

describe("afterWrite and leads", () => {
  const written = (rv: string): ObservedLease => held("claimstep-a", rv, { renewTime: microTime(s(0)) });

  it("a landed write leads until it was sent + duration − margin: never when a follower may take over", () => {
    const state = afterWrite({}, { kind: "written", lease: written("301") }, me, s(0));
    expect(state.leadingUntil).toBe(s(13));
    expect(leads(state, s(12.999))).toBe(true);
    expect(leads(state, s(13))).toBe(false);
    // A follower reads the write at s(0) at the earliest and takes over at s(15) at the earliest.
    const follower = decide(written("301"), {}, { ...me, identity: "claimstep-b" }, s(0));
    expect(follower.action).toMatchObject({ kind: "follow", expiresAt: s(15) });
    expect(state.leadingUntil! + me.marginMs).toBeLessThanOrEqual(s(15));
  });

  it("a renewal that fails leaves the lead to run out (no renewal for 13 s: no more sweeping)", () => {
    const leading = afterWrite({}, { kind: "written", lease: written("301") }, me, s(0));
    const failed = afterWrite(leading, { kind: "failed", error: "timeout" }, me, s(5));
    expect(failed.leadingUntil).toBe(s(13));
    expect(leads(failed, s(10))).toBe(true);
    expect(leads(failed, s(13))).toBe(false);
  });

  it("a lost race (409 on the takeover or the renewal) ends the lead at once", () => {
    const leading = afterWrite({}, { kind: "written", lease: written("301") }, me, s(0));
    expect(leads(afterWrite(leading, { kind: "lost" }, me, s(5)), s(5))).toBe(false);
    expect(leads(afterWrite({}, { kind: "lost" }, me, s(5)), s(5))).toBe(false);
  });

  it("two replicas taking over the same expired record: the precondition lets one win", () => {
    const stale = held("claimstep-c", "300");
    const seen = { observed: { resourceVersion: "300", holder: "claimstep-c", durationMs: 15_000, at: s(0) } };
    const a = decide(stale, seen, me, s(15));
    const b = decide(stale, seen, { ...me, identity: "claimstep-b" }, s(15));
    expect(a.action).toMatchObject({ kind: "update", why: "takeover", resourceVersion: "300" });
    expect(b.action).toMatchObject({ kind: "update", why: "takeover", resourceVersion: "300" });
    // The API server stores a's write (rv 301) and answers b's with 409 Conflict.
    const winner = afterWrite(a.state, { kind: "written", lease: held("claimstep-a", "301") }, me, s(15));
    const loser = afterWrite(b.state, { kind: "lost" }, me, s(15));
    expect([leads(winner, s(16)), leads(loser, s(16))]).toEqual([true, false]);
  });

  it("clock skew: the holder's clock an hour ahead changes nothing (only durations on each clock count)", () => {
    const hour = 3_600_000;
    const holder = afterWrite({}, { kind: "written", lease: written("301") }, me, s(0) + hour);
    const follower = decide(
      held("claimstep-a", "301", { renewTime: microTime(s(0) + hour) }),
      {},
      { ...me, identity: "claimstep-b" },
      s(0),
    );
    // Real time t: the holder's clock reads t + 1 h. It stops at real s(13); the follower may take over at real s(15).
    expect(holder.leadingUntil! - hour).toBe(s(13));
    expect(follower.action).toMatchObject({ kind: "follow", expiresAt: s(15) });
  });

  it("the default margin: 2 s, or a fifth of a short duration", () => {
    expect(defaultMarginMs(15_000)).toBe(2000);
    expect(defaultMarginMs(5000)).toBe(1000);
  });

  it("releasing keeps the transitions and names no holder", () => {
    expect(releaseSpec(held("claimstep-a", "301"), s(0))).toEqual({
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTime: microTime(s(0)),
      renewTime: microTime(s(0)),
      leaseTransitions: 3,
    });
  });
});
