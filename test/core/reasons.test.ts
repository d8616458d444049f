// The Reason constants: every reason has one phase; the events of the user-facing contract
// (docs/design.md) have their documented type.
import { describe, expect, it } from "vitest";
import { eventOf } from "../../core/messages.js";
import { phaseOf, REASONS, requeueAfterOf } from "../../core/reasons.js";

describe("REASONS", () => {
  it("records the documented Event types", () => {
    for (const r of ["ClaimUpdated", "ClaimResizing", "RolloutComplete"] as const)
      expect(REASONS[r]).toMatchObject({ event: "Normal" });
    for (const r of [
      "StorageClassMismatch",
      "ImmutableFieldMismatch",
      "ExpansionNotAllowed",
      "ClaimNotBound",
      "ResizeFailed",
      "ModifyVolumeFailed",
      "QuotaExceeded",
      "ApplyRejected",
    ] as const) {
      expect(REASONS[r]).toMatchObject({ event: "Warning" });
    }
  });
  it("every Blocked reason records a Warning and asks for no requeue; Idle and Complete never requeue", () => {
    for (const [reason, info] of Object.entries(REASONS) as [
      keyof typeof REASONS,
      (typeof REASONS)[keyof typeof REASONS],
    ][]) {
      if (info.phase === "Blocked") expect("event" in info && info.event, reason).toBe("Warning");
      if (info.phase === "Blocked" || info.phase === "Idle" || info.phase === "Complete")
        expect(requeueAfterOf(reason), reason).toBeUndefined();
      if (info.phase === "Progressing" || info.phase === "Waiting")
        expect(requeueAfterOf(reason), reason).toBeGreaterThan(0);
    }
  });
  it("eventOf takes its type from the reason and its verb from the phase, or the action written", () => {
    expect(eventOf("ResizeFailed", "n")).toEqual({
      type: "Warning",
      reason: "ResizeFailed",
      action: "Block",
      note: "n",
    });
    expect(eventOf("ClaimNotBound", "n")).toEqual({
      type: "Warning",
      reason: "ClaimNotBound",
      action: "Wait",
      note: "n",
    });
    expect(eventOf("RolloutComplete", "n")).toMatchObject({ type: "Normal", action: "Complete" });
    expect(phaseOf("Converged")).toBe("Complete");
  });
});
