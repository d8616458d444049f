import { describe, expect, it } from "vitest";
import type { Writers } from "../../core/ports.js";
import type { SetRef } from "../../core/types.js";
import type { StepResult } from "../../functions/step.js";
import { runStep } from "../../functions/step.js";
import { stopOnAbort, sweep } from "../../functions/sweep.js";
import { checkInFlight, inFlight, viewOf } from "../property/invariants.js";
import { capturedSim, desiredData } from "../support/index.js";

const refs = (ns: string, names: string[]): SetRef[] => names.map((name) => ({ namespace: ns, name }));

/** Steps that each cost `cost` subrequests on a shared counter. */
const harness = (perNamespace: Record<string, string[]>, cost = 10, listCost = 1) => {
  let used = 0;
  const stepped: string[] = [];
  return {
    stepped,
    used: () => used,
    listOptedIn: async (ns: string | undefined) => {
      used += listCost;
      return ns === undefined
        ? Object.entries(perNamespace).flatMap(([n, names]) => refs(n, names))
        : refs(ns, perNamespace[ns] ?? []);
    },
    step: async (ref: SetRef) => {
      used += cost;
      stepped.push(`${ref.namespace}/${ref.name}`);
      if (ref.name === "broken") throw new Error('statefulsets.apps "broken" is forbidden');
      return {
        decision: { phase: "Progressing", reason: "ClaimUpdated", message: `updating data-${ref.name}-2` },
        outcome: { kind: "applied" },
        writer: "fake",
      } as unknown as StepResult;
    },
  };
};

describe("sweep", () => {
  it("steps every opted-in set of every namespace when the budget allows", async () => {
    const h = harness({ db: ["b", "a"], queues: ["q"] });
    const report = await sweep({
      ...h,
      namespaces: ["queues", "db"],
      tick: 7,
      budget: { limit: 1000, perStep: 10, used: h.used },
    });
    expect(h.stepped.sort()).toEqual(["db/a", "db/b", "queues/q"]);
    expect(report).toMatchObject({ found: 3, deferred: 0 });
  });

  it("each entry carries the decision's message, not only its reason (what step --all and the logs print)", async () => {
    const h = harness({ db: ["a"] });
    const report = await sweep({ ...h, namespaces: ["db"], tick: 0 });
    expect(report.stepped).toEqual([
      {
        ref: { namespace: "db", name: "a" },
        phase: "Progressing",
        reason: "ClaimUpdated",
        message: "updating data-a-2",
        outcome: "applied",
      },
    ]);
  });

  it("lists all namespaces when none are configured", async () => {
    const h = harness({ db: ["a"], queues: ["q"] });
    await sweep({ ...h, namespaces: [], tick: 0 });
    expect(h.stepped).toEqual(["db/a", "queues/q"]);
  });

  it("stops within the subrequest budget and covers every set over consecutive ticks", async () => {
    const names = ["s0", "s1", "s2", "s3", "s4", "s5", "s6"];
    const seen = new Set<string>();
    for (let tick = 100; tick < 103; tick++) {
      const h = harness({ db: names });
      // 50 subrequests: 1 list + 4 steps of 10 fit, a 5th would exceed the limit.
      const report = await sweep({ ...h, namespaces: ["db"], tick, budget: { limit: 50, perStep: 10, used: h.used } });
      expect(h.used()).toBeLessThanOrEqual(50);
      expect(h.stepped).toHaveLength(4);
      expect(report.deferred).toBe(3);
      h.stepped.forEach((s) => seen.add(s));
    }
    // 3 ticks × 4 steps ≥ 7 sets: the rotation reached all of them.
    expect([...seen].sort()).toEqual(names.map((n) => `db/${n}`));
  });

  it("rotates deterministically: the same tick starts at the same set", async () => {
    const a = harness({ db: ["a", "b", "c", "d", "e"] });
    const b = harness({ db: ["e", "d", "c", "b", "a"] });
    await sweep({ ...a, namespaces: ["db"], tick: 3, budget: { limit: 21, perStep: 10, used: a.used } });
    await sweep({ ...b, namespaces: ["db"], tick: 3, budget: { limit: 21, perStep: 10, used: b.used } });
    expect(a.stepped).toEqual(b.stepped);
    expect(a.stepped).toEqual(["db/b", "db/c"]); // capacity 2, start (3·2) mod 5 = 1
  });

  it("keeps going after a set fails, reporting its error", async () => {
    const h = harness({ db: ["a", "broken", "c"] });
    const report = await sweep({ ...h, namespaces: ["db"], tick: 0 });
    expect(h.stepped).toEqual(["db/a", "db/broken", "db/c"]);
    expect(report.stepped[1]).toEqual({
      ref: { namespace: "db", name: "broken" },
      error: 'statefulsets.apps "broken" is forbidden',
    });
  });

  it("steps nothing when the listing used up the budget, and reports an empty namespace", async () => {
    const h = harness({ db: ["a"] }, 10, 45);
    const report = await sweep({ ...h, namespaces: ["db"], tick: 0, budget: { limit: 50, perStep: 10, used: h.used } });
    expect(report).toMatchObject({ found: 1, deferred: 1, stepped: [] });
    const empty = harness({});
    expect(await sweep({ ...empty, namespaces: ["db"], tick: 0 })).toEqual({
      found: 0,
      stepped: [],
      deferred: 0,
      start: 0,
    });
  });

  it("ends the pass before the next set once `proceed` says no (the replica lost the Lease)", async () => {
    const h = harness({ db: ["a", "b", "c"] });
    let leading = true;
    const step = h.step;
    const report = await sweep({
      ...h,
      step: async (ref) => {
        const r = await step(ref);
        if (ref.name === "a") leading = false;
        return r;
      },
      namespaces: ["db"],
      tick: 0,
      proceed: () => leading,
    });
    expect(h.stepped).toEqual(["db/a"]);
    expect(report).toMatchObject({ found: 3, deferred: 2 });
  });
});

describe("a step cut off mid-way (the Lease lost), then the new holder's steps", () => {
  it("never more ordinals in flight than maxUnavailable, at any write a step is cut at, and the rollout completes", async () => {
    const sim = capturedSim(desiredData("2Gi"));
    const ref = { namespace: "default", name: "web" };
    const phases: string[] = [];
    let cutWrites = 0;
    for (let i = 0; i < 60 && phases.at(-1) !== "Complete"; i++) {
      // The old holder's step, its signal aborted right after its k-th write (k = 0: before any).
      const k = i % 4;
      const lost = new AbortController();
      let made = 0;
      const counting = new Proxy(sim.writers, {
        get(t, prop) {
          const part: unknown = Reflect.get(t, prop, t);
          if (prop === "claims" || typeof part !== "object" || part === null) return part;
          return new Proxy(part, {
            get(o, p) {
              const fn: unknown = Reflect.get(o, p, o);
              if (typeof fn !== "function") return fn;
              return async (...args: unknown[]) => {
                const r = await (fn as (...a: unknown[]) => unknown).apply(o, args);
                if (++made >= k) lost.abort(new Error("lease lost"));
                return r;
              };
            },
          });
        },
      });
      const claims = sim.writers.claims;
      const writers = {
        ...counting,
        claims:
          typeof claims === "function"
            ? claims
            : new Proxy(claims, {
                get(o, p) {
                  const fn: unknown = Reflect.get(o, p, o);
                  if (p !== "apply" || typeof fn !== "function") return fn;
                  return async (...args: unknown[]) => {
                    const r = await (fn as (...a: unknown[]) => unknown).apply(o, args);
                    if (++made >= k) lost.abort(new Error("lease lost"));
                    return r;
                  };
                },
              }),
      } as Writers;
      if (k === 0) lost.abort(new Error("lease lost"));
      const before = inFlight(viewOf(sim, ref));
      await runStep({ reader: sim.reader, writers: stopOnAbort(writers, lost.signal), ref, now: sim.now() }).catch(
        (err: Error) => {
          expect(err.message).toBe("lease lost");
          cutWrites++;
        },
      );
      expect(made).toBeLessThanOrEqual(k);
      const middle = inFlight(viewOf(sim, ref));
      expect(checkInFlight(before, middle, viewOf(sim, ref))).toEqual([]);
      // The new holder's whole step.
      const r = await runStep({ reader: sim.reader, writers: sim.writers, ref, now: sim.now() });
      phases.push(r.decision.phase);
      expect(checkInFlight(middle, inFlight(viewOf(sim, ref)), viewOf(sim, ref))).toEqual([]);
      if (i % 3 === 2) sim.completeResizes();
    }
    expect(phases.at(-1)).toBe("Complete");
    expect(cutWrites).toBeGreaterThan(0);
  });
});
