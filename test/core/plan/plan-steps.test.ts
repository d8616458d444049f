// planStep's decision table (core/plan/plan.ts STEPS): ordered, named, and the step that decided is
// known without changing the Decision.
import { describe, expect, it } from "vitest";
import { decidingStep, planStep, STEPS } from "../../../core/plan/plan.js";
import { annotate, applyPatch, claimsFor, DIRECT, makeSet, patchOf, settle, snapshot } from "../builders.js";

const NOW = new Date("2026-11-30T10:00:00Z");

describe("planStep's table of steps", () => {
  it("names each step once, and ends with the walk, which always concludes", () => {
    const names = STEPS.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.at(-1)).toBe("walkClaims");
    expect(names.every((n) => /^[a-z][A-Za-z]+$/.test(n))).toBe(true);
  });

  it("a claim below its template: the walk's claim write decides", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    const s = snapshot(set, claimsFor(makeSet()));
    expect(planStep(s, NOW, DIRECT).action?.type).toBe("PatchClaim");
    expect(decidingStep(s, NOW)).toBe("claimWriteOrBlocked");
  });

  it("every claim done: the walk says RolloutComplete once, then the converged step decides", () => {
    let s = snapshot(makeSet({ desired: [{ name: "data", storage: "2Gi" }] }), claimsFor(makeSet()));
    for (let d = planStep(s, NOW, DIRECT); d.action; d = planStep(s, NOW, DIRECT)) {
      const claim = patchOf(d.action).claim;
      s = settle(applyPatch(annotate(s, d.setAnnotations), d.action), claim);
    }
    const last = planStep(s, NOW, DIRECT);
    expect(last.reason).toBe("RolloutComplete");
    expect(decidingStep(s, NOW)).toBe("walkClaims");
    s = annotate(s, last.setAnnotations);
    expect(planStep(s, NOW, DIRECT).reason).toBe("Converged");
    expect(decidingStep(s, NOW)).toBe("converged");
  });

  it("a set that is not opted in is decided before the table", () => {
    const set = makeSet({ strategy: null });
    expect(decidingStep(snapshot(set, claimsFor(set)), NOW)).toBeUndefined();
  });
});
