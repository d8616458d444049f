// Rule 20 of docs/design.md (issue 36 point 2): a claim stamped with the current revision is done.
// KEP-4650 (Risks): a PVC whose revision label matches the current revision is not updated again,
// so that an admin or another controller can tune one replica. claimstep never writes such a claim
// again, whatever its class, labels or size now; its readiness still counts (capacity ≥ min(template,
// spec), at the class it has now).
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import { revisionOf } from "../../../core/kube/revision.js";
import { planStep } from "../../../core/plan/plan.js";
import type { Decision, Snapshot } from "../../../core/types.js";
import {
  applyPatch,
  claimsFor,
  DIRECT,
  makeClaim,
  makeSet,
  patchOf,
  settle,
  snapshot,
  type TemplateSpec,
  template,
} from "../builders.js";

const NOW = new Date("2026-12-03T10:00:00Z");
const plan = (s: Snapshot): Decision => planStep(s, NOW, DIRECT);
const rev = (...t: TemplateSpec[]) => revisionOf(t.map(template) as never);
const vacs = ["gold", "silver", "platinum"].map((name) => ({ metadata: { name }, driverName: "example.com/fake" }));

describe("rule 20: a claim at the current revision is never written again", () => {
  const desired = [{ name: "data", storage: "2Gi", vac: "gold", labels: { tier: "db" } }];
  const done = { storage: "2Gi", vac: "gold", currentVac: "gold", revision: rev(...desired), labels: { tier: "db" } };

  it("a third party moved one claim to another VolumeAttributesClass: not reverted, the set is Complete", () => {
    const set = makeSet({ desired });
    const claims = claimsFor(set, done);
    claims[1] = makeClaim("data-web-1", { ...done, vac: "platinum", currentVac: "platinum" });
    const d = plan(snapshot(set, claims, { volumeAttributesClasses: vacs }));
    expect(d.action).toBeUndefined();
    expect(d).toMatchObject({ phase: "Complete" });
    expect(d.ordinals.find((o) => o.ordinal === 1)!.state).toBe("Updated");
  });

  it("…and while that modification is under way, the claim is waited for (readiness at its own class), not written", () => {
    const set = makeSet({ desired });
    const claims = claimsFor(set, done);
    claims[1] = makeClaim("data-web-1", {
      ...done,
      vac: "platinum",
      currentVac: "gold",
      modifyVolumeStatus: { status: "InProgress", targetVolumeAttributesClassName: "platinum" },
    });
    const d = plan(snapshot(set, claims, { volumeAttributesClasses: vacs }));
    expect(d.action).toBeUndefined();
    expect(d.phase).toBe("Waiting");
    expect(d.message).toContain("modifying volume to platinum");
  });

  it("a template label someone removed is not added back", () => {
    const set = makeSet({ desired });
    const claims = claimsFor(set, done);
    claims[0] = makeClaim("data-web-0", { ...done, labels: {} });
    const d = plan(snapshot(set, claims, { volumeAttributesClasses: vacs }));
    expect(d.action).toBeUndefined();
    expect(d.phase).toBe("Complete");
  });

  it("a request someone lowered after a failed expansion (above capacity, below the template) is not raised again; ready at min(template, spec)", () => {
    const d2 = [{ name: "data", storage: "20Gi" }];
    const set = makeSet({ desired: d2 });
    const claims = claimsFor(set, { storage: "20Gi", revision: rev(...d2) });
    claims[2] = makeClaim("data-web-2", { storage: "15Gi", capacity: "15Gi", revision: rev(...d2) });
    const d = plan(snapshot(set, claims));
    expect(d.action).toBeUndefined();
    expect(d.phase).toBe("Complete");
    expect(d.ordinals.find((o) => o.ordinal === 2)!.claims[0]!.target).toBe("15Gi");
  });

  it("readiness still counts: a claim at the revision below min(template, spec) holds the rollout (Waiting, no write)", () => {
    const d2 = [{ name: "data", storage: "20Gi" }];
    const set = makeSet({ desired: d2 });
    const claims = claimsFor(set, { storage: "20Gi", revision: rev(...d2) });
    claims[2] = makeClaim("data-web-2", {
      storage: "20Gi",
      capacity: "1Gi",
      revision: rev(...d2),
      allocatedResourceStatus: "ControllerResizeInProgress",
      conditions: [{ type: "Resizing" }],
    });
    const d = plan(snapshot(set, claims));
    expect(d.action).toBeUndefined();
    expect(d).toMatchObject({ phase: "Waiting", reason: "ClaimResizing" });
  });

  it("a claim not at the revision is still written (labels, class), and never asked for less (rule 5)", () => {
    const set = makeSet({ desired });
    const claims = claimsFor(set, done);
    claims[2] = makeClaim("data-web-2", { storage: "5Gi", vac: "gold", currentVac: "gold", revision: "old" });
    const d = plan(snapshot(set, claims, { volumeAttributesClasses: vacs }));
    expect(patchOf(d.action)).toMatchObject({
      claim: "data-web-2",
      storage: "5Gi",
      labels: { tier: "db", [Keys.revisionLabel]: rev(...desired) },
    });
  });

  it("rule 19 with rule 20: the size-first apply keeps the claim's old revision, the class apply stamps the new one; then nothing", () => {
    const d2 = [{ name: "data", storage: "2Gi", vac: "gold" }];
    const set = makeSet({ desired: d2 });
    let s = snapshot(set, claimsFor(set, { vac: "silver", currentVac: "silver", revision: "old" }), {
      volumeAttributesClasses: vacs,
    });
    const first = plan(s);
    expect(patchOf(first.action)).toMatchObject({
      claim: "data-web-2",
      storage: "2Gi",
      volumeAttributesClassName: "silver",
    });
    expect(patchOf(first.action).labels[Keys.revisionLabel]).toBe("old");
    s = settle(applyPatch(s, first.action!), "data-web-2");
    const second = plan(s);
    expect(patchOf(second.action)).toMatchObject({
      claim: "data-web-2",
      volumeAttributesClassName: "gold",
      labels: { [Keys.revisionLabel]: rev(...d2) },
    });
    s = settle(applyPatch(s, second.action!), "data-web-2");
    const third = plan(s);
    expect(patchOf(third.action).claim).not.toBe("data-web-2");
  });
});
