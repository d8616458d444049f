// Issue 36 points 5 and 6: what the storage drivers people run can and cannot do, predicted from
// what the snapshot holds rather than waited on for ever.
import { describe, expect, it } from "vitest";
import { planStep } from "../../core/plan.js";
import type { Decision, Snapshot } from "../../core/types.js";
import { claimsFor, DIRECT, makeSet, snapshot } from "./builders.js";

const NOW = new Date("2026-12-03T10:00:00Z");
const plan = (s: Snapshot): Decision => planStep(s, NOW, DIRECT);

describe("issue 36 point 5: a VolumeAttributesClass for another driver than the claim's", () => {
  const desired = [{ name: "data", storage: "1Gi", vac: "gold" }];
  const world = (driverName: string) =>
    snapshot(makeSet({ desired }), claimsFor(makeSet({ desired }), { vac: "silver", currentVac: "silver" }), {
      volumeAttributesClasses: [
        { metadata: { name: "gold" }, driverName },
        { metadata: { name: "silver" }, driverName: "example.com/fake" },
      ],
    });

  it("is Blocked before any write, naming both drivers and the fix", () => {
    const d = plan(world("ebs.csi.aws.com"));
    expect(d).toMatchObject({ phase: "Blocked", reason: "VolumeAttributesClassDriverMismatch" });
    expect(d.action).toBeUndefined();
    expect(d.message).toContain(
      "data-web-2: VolumeAttributesClass gold is for driver ebs.csi.aws.com, but the claim's StorageClass fast is provisioned by example.com/fake",
    );
    expect(d.message).toContain('Name a VolumeAttributesClass whose driverName is example.com/fake in template "data"');
    expect(d.events[0]).toMatchObject({ type: "Warning", reason: "VolumeAttributesClassDriverMismatch" });
  });

  it("a class of the claim's own driver is written", () => {
    const d = plan(world("example.com/fake"));
    expect(d).toMatchObject({ phase: "Progressing", reason: "ClaimUpdated" });
    expect(d.action).toMatchObject({ type: "PatchClaim", volumeAttributesClassName: "gold" });
  });

  it("a claim already on that class is not judged again (nothing to write)", () => {
    const set = makeSet({ desired });
    const s = snapshot(set, claimsFor(set, { vac: "gold", currentVac: "gold" }), {
      volumeAttributesClasses: [{ metadata: { name: "gold" }, driverName: "ebs.csi.aws.com" }],
    });
    expect(plan(s).reason).not.toBe("VolumeAttributesClassDriverMismatch");
  });
});
