// Issue 36, points 1 and 3 on the simulated cluster: random pod rollouts with an opt-out
// (I10-optout: a set opted out while claimstep holds its partition gets the user's back at once)
// and with pods made not Ready (I4-pods: an unready pod of the set uses up a maxUnavailable slot,
// so an ordinal's pod not Ready stops the next one, as the StatefulSet controller's OrderedReady
// and maxUnavailable rules do). Each invariant also runs against a planted bug (a planner wrapped
// around core/plan.ts's planStep, core/ untouched) that the suite must catch, and the unbroken
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

vi.mock("../../core/plan.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../core/plan.js")>();
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

/** A fixed pod rollout: ClaimsFirst held by `claimstep set --hold-pods`, a pod template change first. */
function fixed(o: { replicas: number; edits?: Scenario["edits"]; claimsFirst?: boolean }): Scenario {
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
    edits: [{ atStep: 0, kind: "image" }, ...(o.edits ?? [])],
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
