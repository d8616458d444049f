// Property suite: random rollouts on the simulated cluster, with faults, races, retargets,
// rollbacks and scaling mid-rollout, and the pod rules of issue 13 (ClaimsFirst, user partitions,
// pod template changes, restarts, budgets) and autogrow (issue 18: applications filling the claims
// at random, Prometheus failing at times); docs/design.md invariants I1–I11 and autogrow's A1–A4
// (invariants.ts) after every invocation, and convergence (I6, A5) when nothing blocks. CLAIMSTEP_PROPERTY_RUNS sets the number of cases (≥ 500)
// and CLAIMSTEP_PROPERTY_SEED the seed (fixed by default so CI is reproducible; `npm run soak`
// explores many more).
// CLAIMSTEP_PLANNER=<path> swaps core/plan/plan.ts for another planner module (used to check that
// deliberately broken planners are caught).
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";

const runs = Number(process.env.CLAIMSTEP_PROPERTY_RUNS ?? 500);
const seed = Number(process.env.CLAIMSTEP_PROPERTY_SEED ?? 20261130);
const planner = process.env.CLAIMSTEP_PLANNER;
if (planner) vi.doMock("../../core/plan/plan.js", () => import(/* @vite-ignore */ planner));

const { runScenario } = await import("./harness.js");
const { anyScenario } = await import("./scenario.js");

const describeViolations = (r: Awaited<ReturnType<typeof runScenario>>) =>
  r.violations.map((v) => `${v.invariant}: ${v.message}`).join("\n");

describe("claimstep on the simulated cluster (property)", () => {
  it(`keeps I1–I11 on ${runs} random rollouts with faults, races and edits mid-rollout`, {
    timeout: 600_000,
  }, async () => {
    let clean = 0;
    let converged = 0;
    await fc.assert(
      fc.asyncProperty(anyScenario, async (s) => {
        const r = await runScenario(s);
        if (s.kind === "clean") {
          clean++;
          // An autogrow case may end at its max (Blocked/AutogrowLimit), which A5 checks is real.
          if (r.converged || r.limited) converged++;
        }
        if (r.violations.length) throw new Error(describeViolations(r));
      }),
      { numRuns: runs, seed, ...(planner ? { endOnFailure: true } : {}) },
    );
    // The generator really produces rollouts that complete.
    expect(clean).toBeGreaterThan(runs / 2);
    expect(converged).toBe(clean);
  });
});
