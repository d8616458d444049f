// Planted bug for rule 20 (docs/design.md, issue 36 point 2): the property suite's I17 — a claim at
// the current revision is never written again (KEP-4650, Risks: an admin or another controller may
// tune one replica) — must catch a planner that forgets a claim at the revision is done and applies
// the template to it again (what claimstep did before rule 20: it reverted a third party's class
// change and re-added a label someone removed). The planner is wrapped (core/ untouched): the bug
// hides the revision label of the claims that carry the current one, so the real planner takes them
// for not yet updated. The unbroken planner must pass the same scenario, converge, and exercise rule
// 19's two applies (size first, then class and revision). Reproducible: fixed scenario, seeded sim.
import { describe, expect, it, vi } from "vitest";
import { Keys } from "../../core/keys.js";
import type { WriterCapabilities } from "../../core/ports.js";
import type { Decision, Snapshot } from "../../core/types.js";
import type { Scenario } from "./scenario.js";

type PlanStep = (snapshot: Snapshot, now: Date, writer: WriterCapabilities) => Decision;

const planted = vi.hoisted(() => ({ on: false }));

vi.mock("../../core/plan/plan.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../core/plan/plan.js")>();
  const forgetful: PlanStep = (snapshot, now, writer) => {
    const first = real.planStep(snapshot, now, writer);
    const current = first.revision;
    if (current === undefined) return first;
    // The bug: a claim stamped with the current revision is not taken for done.
    const blind = structuredClone(snapshot);
    for (const c of blind.claims)
      if (c.metadata.labels?.[Keys.revisionLabel] === current) delete c.metadata.labels[Keys.revisionLabel];
    return real.planStep(blind, now, writer);
  };
  return {
    ...real,
    planStep: (snapshot: Snapshot, now: Date, writer: WriterCapabilities) =>
      planted.on ? forgetful(snapshot, now, writer) : real.planStep(snapshot, now, writer),
  };
});

const { runScenario } = await import("./harness.js");

/** data 1Gi → 2Gi and silver → gold on three ordinals (rule 19: two applies per claim). */
const scenario: Scenario = {
  kind: "clean",
  seed: 3636,
  replicas: 3,
  ordinalsStart: 0,
  maxUnavailable: 1,
  parallel: false,
  vacApi: true,
  classes: [{ name: "fast", allowVolumeExpansion: true, driver: { resize: "online", modify: "ok", resizeMs: 2_000 } }],
  templates: [{ name: "data", storageGi: 1, className: "fast", vac: "silver" }],
  desired: { growGi: [1], vac: ["gold"], label: true },
  edits: [],
  faults: {},
  raceRate: 0,
  latency: { resizeMs: 2_000, modifyMs: 1_000, bindMs: 500 },
  gapSeconds: [2, 4],
};

describe("planted: re-applying a claim at the current revision is caught by I17", () => {
  it("unbroken: converges with no violation", async () => {
    planted.on = false;
    const r = await runScenario(scenario);
    expect(r.violations).toEqual([]);
    expect(r.converged).toBe(true);
  });

  it("planted: forgets that a claim at the current revision is done → I17", async () => {
    planted.on = true;
    try {
      const r = await runScenario(scenario);
      const caught = r.violations.filter((v) => v.invariant === "I17");
      expect(caught.map((v) => v.message).join("\n"), JSON.stringify(r.violations).slice(0, 2000)).toMatch(
        /claimstep applied data-db-\d, which is already at the current revision/,
      );
    } finally {
      planted.on = false;
    }
  });
});
