// Issue 38 (the live divergence): for a set with a pending removal the planner's revision and what
// the status surfaces show (the summary's desiredRevision, the page's templates and timeline, the
// recorder's desired sizes, `claimstep set`'s previous revision) come from one computation, the
// policy's (core/policy/policy.ts desiredOf). Before, the views read desiredTemplates(set) alone: with no
// templates annotation the removed template stayed desired there (797ff49979 against the planner's
// 6b8969fc69 for web with data and cache, cache being removed).
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import { planStep } from "../../../core/plan/plan.js";
import { desiredOf, policyOf } from "../../../core/policy/policy.js";
import { observeSet } from "../../../core/view/recorder.js";
import { summaryOf } from "../../../core/view/summary.js";
import { setPage } from "../../../core/view/view.js";
import { claimsFor, DIRECT, makeSet, snapshot } from "../builders.js";

const NOW = new Date("2026-12-03T15:00:00Z");
const DATA = { name: "data", storage: "1Gi", storageClassName: "fast" };
const CACHE = { name: "cache", storage: "1Gi", storageClassName: "fast" };
const LOGS = { name: "logs", storage: "1Gi", storageClassName: "fast" };

/** Every revision a surface shows of the set, beside the planner's. */
function revisions(set: ReturnType<typeof makeSet>) {
  const s = snapshot(set, claimsFor(set));
  const policy = policyOf(set);
  if (!policy.ok) throw new Error(policy.message);
  const planned = planStep(s, NOW, DIRECT, { policy });
  const summary = summaryOf(s, planned, policy);
  const page = setPage(s, planned, summary, []);
  const desired = desiredOf(set);
  if (!desired.ok) throw new Error(desired.message);
  return {
    policy,
    planned,
    summary,
    page,
    desired,
    recorded: observeSet(s, planned)
      .templates.filter((t) => t.desiredBytes !== undefined)
      .map((t) => t.template),
  };
}

describe("a set with a pending removal: one desired revision on every surface", () => {
  const cases = {
    "remove-claim-templates alone (the live templates less the removed one)": makeSet({
      live: [DATA, CACHE],
      annotations: { [Keys.removeTemplates]: JSON.stringify(["cache"]), [Keys.finalize]: "Recreate" },
    }),
    "the sim's remove-template (the annotation names data, cache is removed)": makeSet({
      live: [DATA, CACHE],
      desired: [DATA],
      annotations: { [Keys.removeTemplates]: JSON.stringify(["cache"]), [Keys.finalize]: "Recreate" },
    }),
    "a live template the annotation does not name is kept": makeSet({
      live: [DATA, CACHE, LOGS],
      desired: [DATA],
      annotations: { [Keys.removeTemplates]: JSON.stringify(["cache"]), [Keys.finalize]: "Recreate" },
    }),
  };
  for (const [name, set] of Object.entries(cases)) {
    it(name, () => {
      const r = revisions(set);
      expect(r.planned.revision).toBe(r.policy.policy.revision);
      expect(r.desired.revision).toBe(r.policy.policy.revision);
      expect(r.desired.templates).toEqual(r.policy.policy.templates);
      expect(r.summary.desiredRevision).toBe(r.policy.policy.revision);
      expect(r.summary.revision).toBe(r.policy.policy.revision);
      expect(r.page.timeline.revision).toBe(r.policy.policy.revision);
      // The removed template is desired nowhere: not by the recorder's gauges either.
      expect(r.recorded.sort()).toEqual(r.policy.policy.templates.map((t) => t.metadata.name).sort());
      expect(r.recorded).not.toContain("cache");
      expect(r.page.templates.templates.find((t) => t.name === "cache")).toMatchObject({ change: "removed" });
    });
  }

  it("the first case is the issue's: data and cache live, cache removed, no templates annotation", () => {
    const r = revisions(cases["remove-claim-templates alone (the live templates less the removed one)"]);
    expect(r.desired.source).toBe("spec");
    expect(r.desired.templates.map((t) => t.metadata.name)).toEqual(["data"]);
  });
});
