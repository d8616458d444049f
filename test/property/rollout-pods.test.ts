// Property suite, part 2 (its own file so that it runs beside part 1, rollout.test.ts, on a second
// worker): random rollouts on the simulated cluster, with faults, races, retargets,
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
const { autogrowScenario, cleanScenario, podScenario } = await import("./scenario.js");

const describeViolations = (r: Awaited<ReturnType<typeof runScenario>>) =>
  r.violations.map((v) => `${v.invariant}: ${v.message}`).join("\n");

describe("claimstep on the simulated cluster (property): pods, autogrow, racing invocations", () => {
  it("coordinates pods: ClaimsFirst, restarts and budgets keep I10/I11, and converge unless a pod rule must wait", {
    timeout: 300_000,
  }, async () => {
    let partitionPatches = 0;
    let evictions = 0;
    let clean = 0;
    await fc.assert(
      fc.asyncProperty(podScenario, async (s) => {
        const r = await runScenario(s);
        partitionPatches += r.partitionPatches;
        evictions += r.evictions;
        if (s.kind === "clean") clean++;
        if (r.violations.length) throw new Error(describeViolations(r));
        if (s.kind === "clean" && !r.converged) throw new Error(`not converged: ${r.phase}/${r.reason}: ${r.message}`);
      }),
      { numRuns: Math.max(60, Math.floor(runs / 5)), seed: seed + 2, ...(planner ? { endOnFailure: true } : {}) },
    );
    // The generator really moves partitions and restarts pods, and most pod rollouts must complete.
    expect(partitionPatches).toBeGreaterThan(0);
    expect(evictions).toBeGreaterThan(0);
    expect(clean).toBeGreaterThan(Math.max(60, Math.floor(runs / 5)) / 2);
  });

  it("autogrow: usage at random, never above max, never a growth while a rollout runs, never two growths for one revision, I1–I11 still hold", {
    timeout: 600_000,
  }, async () => {
    const n = Math.max(80, Math.floor(runs / 5));
    const seen = { growths: 0, grew: 0, limited: 0, usageFailures: 0, clean: 0, settled: 0 };
    await fc.assert(
      fc.asyncProperty(autogrowScenario, async (s) => {
        const r = await runScenario(s);
        seen.growths += r.growths;
        if (r.growths) seen.grew++;
        if (r.limited) seen.limited++;
        seen.usageFailures += r.usageFailures;
        if (r.violations.length) throw new Error(describeViolations(r));
        if (s.kind === "clean") {
          seen.clean++;
          // A5 liveness: converged with no claim over the threshold, or at max.
          if (!r.converged && !r.limited) throw new Error(`not converged: ${r.phase}/${r.reason}: ${r.message}`);
          seen.settled++;
        }
      }),
      { numRuns: n, seed: seed + 3, ...(planner ? { endOnFailure: true } : {}) },
    );
    // The generator really grows claims, reaches max, and fails the query at times.
    expect(seen.grew).toBeGreaterThan(n / 5);
    expect(seen.limited).toBeGreaterThan(0);
    expect(seen.usageFailures).toBeGreaterThan(0);
    expect(seen.clean).toBeGreaterThan(n / 3);
  });

  it("reaches Complete through faults and racing invocations", { timeout: 120_000 }, async () => {
    const noisy = cleanScenario.map((s) => ({
      ...s,
      faults: { tooManyRequests: 0.05, serverError: 0.05, timeout: 0.05, retryAfterSeconds: 2 },
      raceRate: 0.5,
    }));
    let faults = 0;
    let races = 0;
    await fc.assert(
      fc.asyncProperty(noisy, async (s) => {
        const r = await runScenario(s);
        faults += r.faults;
        races += r.races;
        if (r.violations.length || !r.converged)
          throw new Error(describeViolations(r) || `not converged: ${r.phase}/${r.reason}`);
      }),
      { numRuns: 40, seed: seed + 1, ...(planner ? { endOnFailure: true } : {}) },
    );
    expect(faults).toBeGreaterThan(0);
    expect(races).toBeGreaterThan(0);
  });
});
