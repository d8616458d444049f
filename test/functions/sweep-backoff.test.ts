// `serve`'s sweep and a write the server refused (issue 24 item 19): the QuotaExceeded Event's count
// went 2 → 11 in 20 s because every 2-second pass tried the refused write again. A set whose write
// was refused is now left alone for a growing pause (core/plan/backoff.ts), then tried again, and steps
// as before once a step of it is not refused.
import { describe, expect, it } from "vitest";
import { listOptedInSets } from "../../adapters/kube/reader.js";
import { REFUSAL_BACKOFF, refusalPauseSeconds } from "../../core/plan/backoff.js";
import { RefusalBackoff } from "../../functions/backoff.js";
import { SCENARIOS } from "../../functions/scenarios.js";
import { runStep } from "../../functions/step.js";
import { sweep } from "../../functions/sweep.js";

const REF = { namespace: "default", name: "web" };

describe("refusalPauseSeconds", () => {
  it("doubles from the first pause to the longest, and never goes past it", () => {
    expect(refusalPauseSeconds(1)).toBe(REFUSAL_BACKOFF.firstSeconds);
    expect(refusalPauseSeconds(2)).toBe(REFUSAL_BACKOFF.firstSeconds * 2);
    expect(refusalPauseSeconds(60)).toBe(REFUSAL_BACKOFF.maxSeconds);
    expect(refusalPauseSeconds(1_000_000)).toBe(REFUSAL_BACKOFF.maxSeconds);
  });
});

describe("serve's sweep after a refused write", () => {
  it("does not try the refused write again every pass: the QuotaExceeded Event's count grows by at most 2 in 20 s of 2-second passes", async () => {
    const sim = await SCENARIOS.quota!.build(1);
    const backoff = new RefusalBackoff(() => sim.now().getTime());
    const pass = (tick: number) =>
      sweep({
        listOptedIn: (ns) => listOptedInSets(sim.client, ns),
        namespaces: [],
        step: (ref) => runStep({ reader: sim.reader, writers: sim.writers, ref, now: sim.now() }),
        tick,
        backoff,
      });
    // Until the quota refuses a write (bounded: it does at ~1 minute of cluster time).
    let tick = 0;
    for (; tick < 100; tick++) {
      const r = await pass(tick);
      sim.advance(2_000);
      const e = r.stepped[0];
      if (e && "reason" in e && e.reason === "QuotaExceeded") break;
    }
    expect(tick).toBeLessThan(100);
    const count = () =>
      Number(
        sim.events("default").find((e: any) => e.reason === "QuotaExceeded")?.series?.count ??
          (sim.events("default").some((e: any) => e.reason === "QuotaExceeded") ? 1 : 0),
      );
    const before = count();
    expect(before).toBe(1);
    const skipped: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await pass(++tick);
      skipped.push(r.backedOff ?? 0);
      sim.advance(2_000);
    }
    expect(count() - before).toBeLessThanOrEqual(2);
    expect(skipped.filter((n) => n === 1).length).toBeGreaterThanOrEqual(7);
    // The set is still tried again after the pause (the quota may have been raised meanwhile).
    expect(backoff.pausedUntil(REF)).toBeGreaterThan(sim.now().getTime());
  });

  it("forgets the pause once a step is not refused, and a set never refused is never paused", async () => {
    let now = 0;
    const backoff = new RefusalBackoff(() => now);
    const refused = {
      decision: { phase: "Blocked", reason: "QuotaExceeded" },
      outcome: { kind: "refused" },
      writer: "direct",
    } as any;
    const applied = {
      decision: { phase: "Progressing", reason: "ClaimUpdated" },
      outcome: { kind: "applied" },
      writer: "direct",
    } as any;
    expect(backoff.paused(REF)).toBe(false);
    backoff.record(REF, refused);
    expect(backoff.paused(REF)).toBe(true);
    now += REFUSAL_BACKOFF.firstSeconds * 1000;
    expect(backoff.paused(REF)).toBe(false);
    backoff.record(REF, refused);
    expect(backoff.pausedUntil(REF)).toBe(now + 2 * REFUSAL_BACKOFF.firstSeconds * 1000);
    now = backoff.pausedUntil(REF)!;
    backoff.record(REF, applied);
    expect(backoff.pausedUntil(REF)).toBeUndefined();
    backoff.record(REF, refused);
    expect(backoff.pausedUntil(REF)).toBe(now + REFUSAL_BACKOFF.firstSeconds * 1000);
  });
});
