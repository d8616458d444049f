import { describe, expect, it } from "vitest";
import { planStep } from "../../../core/plan/plan.js";
import { alignColumns, renderDecision } from "../../../core/view/render.js";
import { claimsFor, DIRECT, makeClaim, makeSet, snapshot } from "../builders.js";

describe("renderDecision", () => {
  it("shows the headline, the action and one aligned row per claim", () => {
    const set = makeSet({
      live: [
        { name: "data", storage: "1Gi" },
        { name: "wal", storage: "1Gi" },
      ],
      desired: [
        { name: "data", storage: "2Gi" },
        { name: "wal", storage: "1Gi" },
      ],
    });
    const claims = claimsFor(set);
    const d = planStep(snapshot(set, claims), new Date("2026-11-30T10:00:00Z"), DIRECT);
    const text = renderDecision(d);
    const lines = text.split("\n");
    expect(lines[0]).toBe(`default/web  Progressing  ClaimUpdated  revision ${d.revision}  0/3 updated`);
    expect(lines[2]).toBe("  action: PatchClaim default/data-web-2 storage=2Gi");
    expect(lines[4]).toMatch(/^ORDINAL\s+POD\s+STATE\s+CLAIM\s+SPEC\s+CAPACITY\s+TARGET\s+VAC\s+REVISION\s+READINESS$/);
    expect(lines[5]).toMatch(/^2\s+web-2 \(Running\)\s+Pending\s+data-web-2\s+1Gi\s+1Gi\s+2Gi\s+-\s+-\s+Behind/);
    expect(lines[6]).toMatch(/^\s+wal-web-2/);
    // columns line up: CLAIM starts at the same offset in every row
    const at = lines[4]!.indexOf("CLAIM");
    expect(lines[5]!.indexOf("data-web-2")).toBe(at);
    expect(lines[6]!.indexOf("wal-web-2")).toBe(at);
  });
  it("renders a blocked set's reason", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi", storageClassName: "fixed" }] });
    const text = renderDecision(planStep(snapshot(set, [makeClaim("data-web-2")]), new Date(0), DIRECT));
    expect(text).toContain("Blocked  StorageClassMismatch");
  });
  it("alignColumns pads all but the last column", () => {
    expect(
      alignColumns([
        ["a", "bb", "c"],
        ["ccc", "d", "e"],
      ]),
    ).toBe("a    bb  c\nccc  d   e");
  });
});
