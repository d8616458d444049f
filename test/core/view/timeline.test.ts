// The status page's rollout timeline (core/view/timeline.ts): claimstep's Events and the per-ordinal
// status → per ordinal, when its claims were written, resized and its pod replaced.
import { describe, expect, it } from "vitest";
import type { OrdinalReport, OrdinalState } from "../../../core/types.js";
import { type TimelineEvent, timelineOf } from "../../../core/view/timeline.js";

const REV = "5b48d59cf5";
const OLD = "0a0a0a0a0a";
const t = (s: number) => new Date(Date.UTC(2026, 10, 30, 10, 10, s)).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

/** One ordinal of set `web` with claims data and wal at `revision`, ready or resizing. */
function ordinal(
  n: number,
  state: OrdinalState,
  opts: { revision?: string; ready?: boolean; podUpdated?: boolean } = {},
): OrdinalReport {
  const claim = (template: string) => ({
    template,
    claim: `${template}-web-${n}`,
    exists: true,
    ...(opts.revision ? { revision: opts.revision } : {}),
    readiness:
      opts.ready === false
        ? ({ state: "Resizing", message: `${template}-web-${n}: the driver is resizing the volume` } as const)
        : ({ state: "Ready" } as const),
  });
  return {
    ordinal: n,
    pod: `web-${n}`,
    state,
    claims: [claim("data"), claim("wal")],
    ...(opts.podUpdated !== undefined ? { podUpdated: opts.podUpdated, podReady: true } : {}),
  };
}

const written = (n: number, s: number, rev = REV): TimelineEvent => ({
  time: t(s),
  reason: "ClaimUpdated",
  note: `data-web-${n}: storage 1Gi → 2Gi; revision ${rev}`,
});
const walWritten = (n: number, s: number, rev = REV): TimelineEvent => ({
  time: t(s),
  reason: "ClaimUpdated",
  note: `wal-web-${n}: volumeAttributesClassName silver → gold; revision ${rev}`,
});
const resizing = (n: number, s: number): TimelineEvent => ({
  time: t(s),
  reason: "ClaimResizing",
  note: `data-web-${n}: the driver is resizing the volume`,
});
const lowered = (n: number, s: number): TimelineEvent => ({
  time: t(s),
  reason: "PartitionLowered",
  note: `claims of ordinals ≥ ${n} are ready: partition ${n + 1} → ${n}, so the StatefulSet controller replaces pod web-${n}`,
});
const complete = (s: number): TimelineEvent => ({
  time: t(s),
  reason: "RolloutComplete",
  note: `all ordinal(s) in scope are at revision ${REV} and ready`,
});

const shuffle = <T>(xs: T[]): T[] =>
  xs
    .map((x, i) => ({ x, k: (i * 7919) % 13 }))
    .sort((a, b) => a.k - b.k)
    .map((p) => p.x);

describe("timelineOf", () => {
  it("a set of one ordinal: written, resized by the next event, complete (no pods coordinated)", () => {
    const tl = timelineOf({
      set: "web",
      revision: REV,
      pods: false,
      observedAt: t(40),
      ordinals: [ordinal(0, "Updated", { revision: REV })],
      events: [written(0, 0), walWritten(0, 10), resizing(0, 20), complete(30)],
    });
    expect(tl.ordinals).toEqual([
      { ordinal: 0, pod: "web-0", state: "Updated", stage: "resized", written: t(0), resized: t(30) },
    ]);
    expect(tl).toMatchObject({ revision: REV, start: t(0), end: t(40), otherRevisions: [], pods: false });
  });

  it("five ordinals with pods coordinated, events out of order: one row per ordinal, highest first, each at its own times", () => {
    const events: TimelineEvent[] = [];
    // ordinals 4, 3, 2 done (claims written, resized, pod replaced); 1 resizing; 0 not started.
    [4, 3, 2, 1].forEach((n, i) => {
      const s = i * 50;
      events.push(written(n, s), walWritten(n, s + 10), resizing(n, s + 20));
      if (n !== 1) events.push(lowered(n, s + 30));
    });
    const ordinals = [
      ordinal(4, "Updated", { revision: REV, podUpdated: true }),
      ordinal(3, "Updated", { revision: REV, podUpdated: true }),
      ordinal(2, "Updated", { revision: REV, podUpdated: true }),
      ordinal(1, "InFlight", { revision: REV, ready: false, podUpdated: false }),
      ordinal(0, "Pending", { podUpdated: false }),
    ];
    const tl = timelineOf({
      set: "web",
      revision: REV,
      pods: true,
      observedAt: t(175),
      ordinals,
      events: shuffle(events),
    });
    expect(tl.ordinals.map((o) => o.ordinal)).toEqual([4, 3, 2, 1, 0]);
    expect(tl.ordinals[0]).toEqual({
      ordinal: 4,
      pod: "web-4",
      state: "Updated",
      stage: "replaced",
      written: t(0),
      resized: t(30),
      replaced: t(30),
    });
    expect(tl.ordinals[2]).toMatchObject({ stage: "replaced", written: t(100), resized: t(130), replaced: t(130) });
    expect(tl.ordinals[3]).toEqual({ ordinal: 1, pod: "web-1", state: "InFlight", stage: "resizing", written: t(150) });
    expect(tl.ordinals[4]).toEqual({ ordinal: 0, pod: "web-0", state: "Pending", stage: "pending" });
    expect(tl).toMatchObject({ start: t(0), end: t(175) });
  });

  it("missing events (expired after an hour): a done ordinal is untimed, never given a made-up time", () => {
    const ordinals = [
      ordinal(2, "Updated", { revision: REV }),
      ordinal(1, "Updated", { revision: REV }),
      ordinal(0, "InFlight", { revision: REV, ready: false }),
    ];
    // Only ordinal 0's write is still there.
    const tl = timelineOf({
      set: "web",
      revision: REV,
      pods: false,
      observedAt: t(50),
      ordinals,
      events: [written(0, 20)],
    });
    expect(tl.ordinals[0]).toEqual({ ordinal: 2, pod: "web-2", state: "Updated", stage: "resized", untimed: true });
    expect(tl.ordinals[1]).toEqual({ ordinal: 1, pod: "web-1", state: "Updated", stage: "resized", untimed: true });
    expect(tl.ordinals[2]).toEqual({ ordinal: 0, pod: "web-0", state: "InFlight", stage: "resizing", written: t(20) });
    expect(tl).toMatchObject({ start: t(20), end: t(50) });
    // No event at all, and no status time: nothing to draw an axis from.
    const none = timelineOf({ set: "web", revision: REV, pods: false, ordinals: [ordinal(0, "Pending")], events: [] });
    expect(none.start).toBeUndefined();
    expect(none.end).toBeUndefined();
    expect(none.ordinals).toEqual([{ ordinal: 0, pod: "web-0", state: "Pending", stage: "pending" }]);
  });

  it("a re-targeted revision: writes of the earlier revision, and what followed them, are left out and named", () => {
    const events = [
      written(1, 0, OLD),
      walWritten(1, 10, OLD),
      resizing(1, 20), // the first rollout, to OLD
      written(1, 60),
      walWritten(1, 70), // re-targeted to REV: ordinal 1 written again
      resizing(0, 30), // ordinal 0: resizing toward OLD only, never written at REV
    ];
    const ordinals = [
      ordinal(1, "InFlight", { revision: REV, ready: false }),
      ordinal(0, "Pending", { revision: OLD }),
    ];
    const tl = timelineOf({ set: "web", revision: REV, pods: false, observedAt: t(80), ordinals, events });
    expect(tl.otherRevisions).toEqual([OLD]);
    expect(tl.ordinals[0]).toEqual({ ordinal: 1, pod: "web-1", state: "InFlight", stage: "resizing", written: t(60) });
    expect(tl.ordinals[1]).toEqual({ ordinal: 0, pod: "web-0", state: "Pending", stage: "pending" });
    expect(tl.start).toBe(t(60));
  });

  it("a blocked ordinal says so; out-of-scope ordinals are left out; an evicted pod counts as replaced", () => {
    const ordinals = [
      { ...ordinal(3, "OutOfScope"), state: "OutOfScope" as const },
      ordinal(2, "Updated", { revision: REV, podUpdated: true }),
      ordinal(1, "Blocked", { revision: REV, ready: false }),
    ];
    const events = [
      written(2, 0),
      resizing(2, 5),
      {
        time: t(12),
        reason: "PodEvicted",
        note: "evicting pod web-2 so that data-web-2 finishes growing when the pod mounts it again: x",
      },
      written(1, 20),
    ];
    const tl = timelineOf({ set: "web", revision: REV, pods: true, observedAt: t(30), ordinals, events });
    expect(tl.ordinals.map((o) => o.ordinal)).toEqual([2, 1]);
    expect(tl.ordinals[0]).toMatchObject({ stage: "replaced", written: t(0), resized: t(12), replaced: t(12) });
    expect(tl.ordinals[1]).toMatchObject({ stage: "blocked", written: t(20) });
    // A pod the status shows updated, with no event left: replaced, untimed.
    const quiet = timelineOf({
      set: "web",
      revision: REV,
      pods: true,
      ordinals: [ordinal(0, "Updated", { revision: REV, podUpdated: true })],
      events: [],
    });
    expect(quiet.ordinals[0]).toMatchObject({ stage: "replaced", untimed: true });
  });

  it("a set whose name ends like another's claim: web-1's events are not web's", () => {
    const ordinals = [ordinal(1, "Pending")];
    const tl = timelineOf({
      set: "web",
      revision: REV,
      pods: false,
      ordinals,
      events: [{ time: t(0), reason: "ClaimUpdated", note: `data-web-10: storage 1Gi → 2Gi; revision ${REV}` }],
    });
    expect(tl.ordinals[0]).toEqual({ ordinal: 1, pod: "web-1", state: "Pending", stage: "pending" });
  });
});
