// Issue 36, points 1 and 3 on the simulated cluster: random pod rollouts with an opt-out
// (I10-optout: a set opted out while claimstep holds its partition gets the user's back at once)
// and with pods made not Ready (I4-pods: an unready pod of the set uses up a maxUnavailable slot,
// so an ordinal's pod not Ready stops the next one, as the StatefulSet controller's OrderedReady
// and maxUnavailable rules do). Each invariant also runs against a planted bug (a planner wrapped
// around core/plan/plan.ts's planStep, core/ untouched) that the suite must catch, and the unbroken
// planner must pass the same fixed scenario.
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { Keys } from "../../core/keys.js";
import type { WriterCapabilities } from "../../core/ports.js";
import type { Decision, Snapshot } from "../../core/types.js";
import type { InvariantId } from "./invariants.js";
import type { Scenario } from "./scenario.js";

type PlanStep = (snapshot: Snapshot, now: Date, writer: WriterCapabilities) => Decision;
type Bug = (real: PlanStep, snapshot: Snapshot, now: Date, writer: WriterCapabilities) => Decision;

const planted = vi.hoisted(() => ({ bug: undefined as Bug | undefined }));

vi.mock("../../core/plan/plan.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../core/plan/plan.js")>();
  return {
    ...real,
    planStep: (snapshot: Snapshot, now: Date, writer: WriterCapabilities) =>
      planted.bug ? planted.bug(real.planStep, snapshot, now, writer) : real.planStep(snapshot, now, writer),
  };
});

const { runScenario } = await import("./harness.js");
const { podScenario } = await import("./scenario.js");

const runs = Number(process.env.CLAIMSTEP_PROPERTY_RUNS ?? 500);
const seed = Number(process.env.CLAIMSTEP_PROPERTY_SEED ?? 20261130);

const describeViolations = (r: Awaited<ReturnType<typeof runScenario>>) =>
  r.violations.map((v) => `${v.invariant}: ${v.message}`).join("\n");

/** A fixed pod rollout: ClaimsFirst held by `claimstep set --hold-pods` (unless not), a pod template change first (unless not). */
function fixed(o: { replicas: number; edits?: Scenario["edits"]; claimsFirst?: boolean; image?: boolean }): Scenario {
  const claimsFirst = o.claimsFirst ?? true;
  return {
    kind: "clean",
    seed: 3636,
    replicas: o.replicas,
    ordinalsStart: 0,
    maxUnavailable: 1,
    parallel: false,
    vacApi: true,
    classes: [
      { name: "fast", allowVolumeExpansion: true, driver: { resize: "online", modify: "ok", resizeMs: 4_000 } },
    ],
    templates: [{ name: "data", storageGi: 1, className: "fast" }],
    desired: { growGi: [1], vac: [undefined], label: false },
    edits: [...(o.image === false ? [] : [{ atStep: 0, kind: "image" as const }]), ...(o.edits ?? [])],
    faults: {},
    raceRate: 0,
    latency: { resizeMs: 4_000, modifyMs: 1_000, bindMs: 500, podStartMs: 3_000 },
    gapSeconds: [1, 4],
    pods: { claimsFirst, hold: claimsFirst },
  };
}

describe("issue 36 point 1: opting out releases a held partition (I10-optout)", () => {
  it("random pod rollouts opted out mid-way: the user's partition back in one write, nothing else written", {
    timeout: 300_000,
  }, async () => {
    let released = 0;
    const n = Math.max(30, Math.floor(runs / 15));
    await fc.assert(
      fc.asyncProperty(podScenario, fc.integer({ min: 0, max: 25 }), async (s, at) => {
        const r = await runScenario({ ...s, edits: [...s.edits, { atStep: at, kind: "optOut" }] });
        if (r.violations.length) throw new Error(describeViolations(r));
        if (r.optedOut && s.pods?.hold) released++;
      }),
      { numRuns: n, seed: seed + 36 },
    );
    // The generator really opts out sets whose partition claimstep holds.
    expect(released).toBeGreaterThan(0);
  });

  const optOut = fixed({ replicas: 3, edits: [{ atStep: 3, kind: "optOut" }] });

  it("unbroken: ClaimsFirst holding, then opted out: restored, then Idle", async () => {
    planted.bug = undefined;
    const r = await runScenario(optOut);
    expect(r.violations).toEqual([]);
    expect(r.optedOut).toBe(true);
    expect(r.reason).toBe("NotOptedIn");
    // The hold (P5 is the request's own patch) and the restore.
    expect(r.partitionPatches).toBeGreaterThan(0);
  });

  it("planted: keeps the partition on opt-out → I10-optout", async () => {
    // The planner that ignores the record on a set no longer opted in (the bug issue 36 found).
    planted.bug = (real, s, now, w) => {
      const d = real(s, now, w);
      if (d.reason !== "PartitionRestored" || s.statefulSet.metadata.annotations?.[Keys.strategy] === "InPlace")
        return d;
      const forgetful = structuredClone(s);
      delete forgetful.statefulSet.metadata.annotations?.[Keys.userPartition];
      return real(forgetful, now, w);
    };
    try {
      const r = await runScenario(optOut);
      expect(caught(r.violations, "I10-optout")).toMatch(/still holds its partition/);
    } finally {
      planted.bug = undefined;
    }
  });
});

const caught = (violations: readonly { invariant: InvariantId; message: string }[], id: InvariantId): string =>
  violations
    .filter((v) => v.invariant === id)
    .map((v) => v.message)
    .join("\n");

describe("issue 36 point 3: an ordinal's pod not Ready stops the next one (I4-pods)", () => {
  it("random pod rollouts with pods failing their readiness probe for a while: I1–I11 and I4-pods hold, clean ones converge", {
    timeout: 300_000,
  }, async () => {
    const n = Math.max(30, Math.floor(runs / 15));
    let waited = 0;
    await fc.assert(
      fc.asyncProperty(
        podScenario,
        fc.array(
          fc.record({
            atStep: fc.integer({ min: 0, max: 30 }),
            index: fc.nat(8),
            forSeconds: fc.integer({ min: 5, max: 180 }),
          }),
          { minLength: 1, maxLength: 3 },
        ),
        async (s, flaps) => {
          const lines: string[] = [];
          const edits = [...s.edits, ...flaps.map((f) => ({ ...f, kind: "podNotReady" as const }))];
          const r = await runScenario({ ...s, edits }, { trace: (l) => lines.push(l) });
          if (lines.some((l) => l.includes("Waiting/PodNotReady"))) waited++;
          if (r.violations.length) throw new Error(describeViolations(r));
          if (s.kind === "clean" && !r.converged)
            throw new Error(`not converged: ${r.phase}/${r.reason}: ${r.message}`);
        },
      ),
      { numRuns: n, seed: seed + 37 },
    );
    // The generator really makes rollouts wait on a pod.
    expect(waited).toBeGreaterThan(0);
  });

  // Pod web-2 fails its probe for two minutes from the first step: its own claims are written (its
  // slot is its own), then the next ordinal waits until it is Ready again.
  const flapping = fixed({
    replicas: 3,
    claimsFirst: false,
    image: false,
    edits: [{ atStep: 0, kind: "podNotReady", index: 2, forSeconds: 120 }],
  });

  it("unbroken: the rollout waits (Waiting/PodNotReady), then completes", async () => {
    planted.bug = undefined;
    const lines: string[] = [];
    const r = await runScenario(flapping, { trace: (l) => lines.push(l) });
    expect(r.violations).toEqual([]);
    expect(r.converged).toBe(true);
    expect(lines.filter((l) => l.includes("Waiting/PodNotReady")).length).toBeGreaterThan(0);
  });

  it("planted: moves on with a pod not Ready → I4-pods", async () => {
    // The planner that reads every pod as Ready (what claimstep did before rule 21).
    planted.bug = (real, s, now, w) => {
      const d = real(s, now, w);
      if (d.reason !== "PodNotReady") return d;
      const blind = structuredClone(s);
      for (const p of blind.pods)
        p.status = { ...p.status, phase: "Running", conditions: [{ type: "Ready", status: "True" }] };
      return real(blind, now, w);
    };
    try {
      const r = await runScenario(flapping);
      expect(caught(r.violations, "I4-pods")).toMatch(
        /started ordinal 1 \(wrote data-db-1\) while pod db-2 \(ordinal 2\) not Ready/,
      );
    } finally {
      planted.bug = undefined;
    }
  });
});
