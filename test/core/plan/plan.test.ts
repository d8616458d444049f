// planStep, one named scenario per behaviour of docs/design.md rules 1–14. Each scenario fails if
// its rule breaks.
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import { revisionOf } from "../../../core/kube/revision.js";
import { planStep } from "../../../core/plan/plan.js";
import type { Decision, Snapshot } from "../../../core/types.js";
import {
  annotate,
  applyPatch,
  claimsFor,
  DIRECT,
  makeClaim,
  makeSet,
  patchOf,
  settle,
  snapshot,
  template,
} from "../builders.js";

const NOW = new Date("2026-11-30T10:00:00Z");
const plan = (s: Snapshot): Decision => planStep(s, NOW, DIRECT);
const rev = (...t: Parameters<typeof template>[0][]) => revisionOf(t.map(template) as never);

/** Run steps as a perfect cluster would (apply, then settle at once) until no action remains. */
function rollout(s: Snapshot, max = 100): { order: string[]; final: Decision; snapshot: Snapshot } {
  const order: string[] = [];
  for (let i = 0; i < max; i++) {
    const d = plan(s);
    s = annotate(s, d.setAnnotations);
    if (!d.action) return { order, final: d, snapshot: s };
    order.push(patchOf(d.action).claim);
    s = settle(applyPatch(s, d.action), patchOf(d.action).claim);
  }
  throw new Error("no convergence");
}

describe("rule 1: opt-in and OnDelete", () => {
  it("no-annotation: a set without the strategy annotation is Idle and records nothing", () => {
    const d = plan(
      snapshot(makeSet({ strategy: null, desired: [{ name: "data", storage: "2Gi" }] }), claimsFor(makeSet())),
    );
    expect(d.phase).toBe("Idle");
    expect(d.action).toBeUndefined();
    expect(d.setAnnotations).toBeUndefined();
    expect(d.events).toEqual([]);
  });
  it("on-claim-delete: the KEP default leaves the set alone", () => {
    const d = plan(
      snapshot(
        makeSet({ strategy: "OnClaimDelete", desired: [{ name: "data", storage: "2Gi" }] }),
        claimsFor(makeSet()),
      ),
    );
    expect(d.phase).toBe("Idle");
    expect(d.action).toBeUndefined();
  });
  it("on-delete: updateStrategy OnDelete is Idle with a message, no claim write", () => {
    const set = makeSet({ updateStrategyType: "OnDelete", desired: [{ name: "data", storage: "2Gi" }] });
    const d = plan(snapshot(set, claimsFor(set)));
    expect(d.phase).toBe("Idle");
    expect(d.reason).toBe("OnDelete");
    expect(d.message).toMatch(/OnDelete/);
    expect(d.action).toBeUndefined();
  });
  it("bad-strategy: an unknown strategy value blocks with the accepted values", () => {
    const d = plan(snapshot(makeSet({ strategy: "Inplace" }), claimsFor(makeSet())));
    expect(d.phase).toBe("Blocked");
    expect(d.message).toContain("InPlace or OnClaimDelete");
  });
});

/** The plan of a set desiring `desired`: Blocked/InvalidTemplates, no write, a warning naming it. */
const invalidTemplates = (desired: string, pattern: RegExp) => {
  const set = makeSet({ desired });
  const d = plan(snapshot(set, claimsFor(set)));
  expect(d.phase).toBe("Blocked");
  expect(d.reason).toBe("InvalidTemplates");
  expect(d.action).toBeUndefined();
  expect(d.message).toMatch(pattern);
  expect(d.events[0]).toMatchObject({ type: "Warning", reason: "InvalidTemplates" });
  return d;
};

describe("rule 2: desired templates", () => {
  const blocked = (desired: string, pattern: RegExp) => {
    expect(invalidTemplates(desired, pattern).setAnnotations?.[Keys.status]).toBeDefined();
  };
  it("bad-json: names the annotation and the JSON error", () =>
    blocked("[{", /volume-claim-templates on default\/web is not valid JSON/));
  it("not-an-array: schema errors name the expectation", () => blocked(`{"metadata":{}}`, /expected a JSON array/));
  it("bad-quantity: names the template and the string", () =>
    blocked(
      JSON.stringify([template({ name: "data", storage: "20Gb" })]),
      /template "data" spec.resources.requests.storage: invalid quantity "20Gb"/,
    ));
  it("unknown-template: a name not in the live set is a template to add, which needs the re-create", () => {
    const set = makeSet({
      desired: [
        { name: "data", storage: "1Gi" },
        { name: "logs", storage: "2Gi" },
      ],
    });
    const d = plan(snapshot(set, claimsFor(set)));
    expect(d.phase).toBe("Blocked");
    expect(d.reason).toBe("TemplatesNeedRecreate");
    expect(d.message).toMatch(/Adding claim template logs of default\/web needs the set re-created/);
    expect(d.action).toBeUndefined();
  });
  it("duplicate-template: the same name twice", () =>
    blocked(
      JSON.stringify([template({ name: "data", storage: "2Gi" }), template({ name: "data", storage: "3Gi" })]),
      /"data" appears twice/,
    ));
  it("no-annotation-uses-live: without the annotation the live templates are desired", () => {
    const set = makeSet({ live: [{ name: "data", storage: "1Gi" }] });
    const d = plan(snapshot(set, claimsFor(set)));
    expect(d.revision).toBe(rev({ name: "data", storage: "1Gi" }));
  });
});

describe("rules 3–4, 7: scope, order, the one action", () => {
  it("fresh-opt-in: stamps the revision label on each claim without changing storage", () => {
    const set = makeSet();
    const { order, final, snapshot: end } = rollout(snapshot(set, claimsFor(set)));
    expect(order).toEqual(["data-web-2", "data-web-1", "data-web-0"]);
    for (const c of end.claims) {
      expect(c.metadata.labels?.[Keys.revisionLabel]).toBe(final.revision);
      expect(c.spec.resources?.requests?.storage).toBe("1Gi");
    }
    expect(final.phase).toBe("Complete");
  });
  it("grow-in-order: 3 replicas grow 2→1→0, one PVC per step, with a server-side-apply action", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    const s = snapshot(set, claimsFor(set));
    const first = plan(s);
    expect(first.action).toMatchObject({
      type: "PatchClaim",
      namespace: "default",
      claim: "data-web-2",
      template: "data",
      ordinal: 2,
      storage: "2Gi",
      labels: { [Keys.revisionLabel]: rev({ name: "data", storage: "2Gi" }) },
      uid: "uid-data-web-2",
    });
    expect(first.phase).toBe("Progressing");
    expect(first.events).toEqual([
      expect.objectContaining({ type: "Normal", reason: "ClaimUpdated", action: "PatchClaim" }),
    ]);
    const { order, final } = rollout(s);
    expect(order).toEqual(["data-web-2", "data-web-1", "data-web-0"]);
    expect(final.phase).toBe("Complete");
  });
  it("next-ordinal-waits: ordinal 1 is not touched until ordinal 2 is ready", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    let s = snapshot(set, claimsFor(set));
    s = applyPatch(s, plan(s).action!); // 2 is now resizing
    const d = plan(s);
    expect(d.action).toBeUndefined();
    expect(d.phase).toBe("Waiting");
    expect(d.status.ordinal).toBe(2);
  });
  it("two-templates: each claim of an ordinal is applied before the next ordinal", () => {
    const live = [
      { name: "data", storage: "1Gi" },
      { name: "wal", storage: "1Gi" },
    ];
    const set = makeSet({
      live,
      desired: [
        { name: "data", storage: "2Gi" },
        { name: "wal", storage: "3Gi" },
      ],
    });
    const { order } = rollout(snapshot(set, claimsFor(set)));
    expect(order).toEqual(["data-web-2", "wal-web-2", "data-web-1", "wal-web-1", "data-web-0", "wal-web-0"]);
  });
  it("label-drift: a template label removed from a claim at the revision is not applied again (rule 20)", () => {
    const desired = [{ name: "data", storage: "1Gi", labels: { tier: "db" } }];
    const set = makeSet({ desired });
    const claims = claimsFor(set, { revision: rev(...desired), labels: { tier: "db" } });
    claims[1] = makeClaim("data-web-1", { revision: rev(...desired) }); // someone removed tier=db
    const d = plan(snapshot(set, claims));
    expect(d.action).toBeUndefined();
    expect(d.phase).toBe("Complete");
  });
  it("partition-1: leaves ordinal 0 alone", () => {
    const set = makeSet({ partition: 1, desired: [{ name: "data", storage: "2Gi" }] });
    const { order, final } = rollout(snapshot(set, claimsFor(set)));
    expect(order).toEqual(["data-web-2", "data-web-1"]);
    expect(final.phase).toBe("Complete");
    expect(final.ordinals.find((o) => o.ordinal === 0)?.state).toBe("OutOfScope");
  });
  it("ordinals-start-5: claims are named from 5 and the partition counts from start", () => {
    const set = makeSet({ start: 5, partition: 1, desired: [{ name: "data", storage: "2Gi" }] });
    const { order } = rollout(snapshot(set, claimsFor(set)));
    expect(order).toEqual(["data-web-7", "data-web-6"]);
  });
  it("missing-pvc: a claim not created yet is left to the StatefulSet controller", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    const claims = claimsFor(set).filter((c) => c.metadata.name !== "data-web-1");
    const { order, final } = rollout(snapshot(set, claims));
    expect(order).toEqual(["data-web-2", "data-web-0"]);
    expect(final.phase).toBe("Waiting");
    expect(final.reason).toBe("ClaimMissing");
  });
  it("condemned: claims of ordinals beyond replicas are reported and never written", () => {
    const set = makeSet({ replicas: 2, desired: [{ name: "data", storage: "2Gi" }] });
    const claims = [...claimsFor(set), makeClaim("data-web-2"), makeClaim("data-web-3")];
    const { order, final } = rollout(snapshot(set, claims));
    expect(order).toEqual(["data-web-1", "data-web-0"]);
    expect(final.ordinals.filter((o) => o.state === "Condemned").map((o) => o.ordinal)).toEqual([3, 2]);
  });
  it("zero-replicas: nothing in scope is Complete at once", () => {
    const set = makeSet({ replicas: 0, desired: [{ name: "data", storage: "2Gi" }] });
    const d = plan(snapshot(set, []));
    expect(d.phase).toBe("Complete");
    expect(d.action).toBeUndefined();
  });
});

describe("rule 5: target = max(template, PVC spec)", () => {
  it("template-smaller: a PVC larger than the template is satisfied, never lowered", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "1Gi" }] });
    const { order, final, snapshot: end } = rollout(snapshot(set, claimsFor(set, { storage: "5Gi" })));
    expect(order).toHaveLength(3);
    expect(end.claims.every((c) => c.spec.resources?.requests?.storage === "5Gi")).toBe(true);
    expect(final.phase).toBe("Complete");
  });
  it("equal-bytes: 2Gi and 2147483648 are the same request; the PVC's string is kept", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2147483648" }] });
    const d = plan(snapshot(set, claimsFor(set, { storage: "2Gi" })));
    expect(patchOf(d.action)?.storage).toBe("2Gi");
  });
  it("larger-failed-expansion: someone else's failed larger resize does not hold the rollout", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    const claims = claimsFor(set, { storage: "2Gi", capacity: "2Gi" });
    claims[2] = makeClaim("data-web-2", {
      storage: "9Gi",
      capacity: "2Gi",
      allocatedResourceStatus: "ControllerResizeInfeasible",
    });
    const { final } = rollout(snapshot(set, claims));
    expect(final.phase).toBe("Complete");
  });
});

describe("rule 6: predicted rejections, no write", () => {
  const noWrite = (d: Decision) => expect(d.action).toBeUndefined();
  it("class-mismatch: template class differs from the PVC's", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi", storageClassName: "fixed" }] });
    const d = plan(snapshot(set, claimsFor(set)));
    expect(d).toMatchObject({ phase: "Blocked", reason: "StorageClassMismatch" });
    expect(d.message).toContain('data-web-2 has storage class fast but template "data" asks for fixed');
    noWrite(d);
  });
  it("beta-class-annotation: the beta annotation is the effective class", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi", storageClassName: "fast" }] });
    const d = plan(snapshot(set, claimsFor(set, { betaClass: "fixed" })));
    expect(d.reason).toBe("StorageClassMismatch");
    noWrite(d);
  });
  it("immutable-access-modes: other immutable fields block", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi", accessModes: ["ReadWriteMany"] }] });
    const d = plan(snapshot(set, claimsFor(set)));
    expect(d).toMatchObject({ phase: "Blocked", reason: "ImmutableFieldMismatch" });
    expect(d.message).toContain("accessModes");
    noWrite(d);
  });
  it("expansion-not-allowed: class with allowVolumeExpansion false blocks without a write", () => {
    const set = makeSet({
      live: [{ name: "data", storage: "1Gi", storageClassName: "fixed" }],
      desired: [{ name: "data", storage: "2Gi", storageClassName: "fixed" }],
    });
    const d = plan(snapshot(set, claimsFor(set, { storageClassName: "fixed" })));
    expect(d).toMatchObject({ phase: "Blocked", reason: "ExpansionNotAllowed" });
    expect(d.message).toContain("StorageClass fixed does not set allowVolumeExpansion: true");
    noWrite(d);
  });
  it("missing-class: a class that does not exist cannot expand", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi", storageClassName: null }] });
    const d = plan(snapshot(set, claimsFor(set, { storageClassName: "gone" })));
    expect(d).toMatchObject({ phase: "Blocked", reason: "ExpansionNotAllowed" });
    noWrite(d);
  });
  it("unbound-waits: expansion of a Pending claim waits for it to bind", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    const d = plan(snapshot(set, claimsFor(set, { phase: "Pending" })));
    expect(d).toMatchObject({ phase: "Waiting", reason: "ClaimNotBound" });
    noWrite(d);
  });
  it("unbound-vac-waits: a VAC change of a Pending claim waits for it to bind (its spec is immutable)", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "1Gi", vac: "gold" }] });
    const vacs = [{ metadata: { name: "gold" }, driverName: "example.com/fake" }];
    const d = plan(snapshot(set, claimsFor(set, { phase: "Pending" }), { volumeAttributesClasses: vacs }));
    expect(d).toMatchObject({ phase: "Waiting", reason: "ClaimNotBound" });
    expect(d.message).toContain("moved to another VolumeAttributesClass");
    noWrite(d);
  });
  it("missing-vac: a VolumeAttributesClass that does not exist blocks", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "1Gi", vac: "gold" }] });
    const vacs = [{ metadata: { name: "silver" }, driverName: "example.com/fake" }];
    const d = plan(snapshot(set, claimsFor(set), { volumeAttributesClasses: vacs }));
    expect(d).toMatchObject({ phase: "Blocked", reason: "VolumeAttributesClassNotFound" });
    expect(d.message).toContain("VolumeAttributesClass gold does not exist");
    noWrite(d);
  });
  it("no-vac-api: naming a VAC on a cluster without the API blocks", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "1Gi", vac: "gold" }] });
    const d = plan(snapshot(set, claimsFor(set)));
    expect(d.message).toContain("no VolumeAttributesClass API");
    noWrite(d);
  });
});

describe("rule 8: readiness from the real status fields", () => {
  const desired = [{ name: "data", storage: "2Gi" }];
  const at = (c: Parameters<typeof makeClaim>[1]) => {
    const set = makeSet({ desired });
    const r = rev(...desired);
    const claims = claimsFor(set, { storage: "1Gi" });
    claims[2] = makeClaim("data-web-2", { storage: "2Gi", capacity: "1Gi", revision: r, ...c });
    return plan(snapshot(set, claims));
  };
  it("resizing: ControllerResizeInProgress waits", () => {
    const d = at({ allocatedResourceStatus: "ControllerResizeInProgress", conditions: [{ type: "Resizing" }] });
    expect(d).toMatchObject({ phase: "Waiting", reason: "ClaimResizing" });
    expect(d.ordinals[0]!.claims[0]!.readiness.state).toBe("Resizing");
    expect(d.action).toBeUndefined();
  });
  it("fs-resize-pending: reported as waiting for the pod", () => {
    const d = at({
      allocatedResourceStatus: "NodeResizePending",
      conditions: [{ type: "FileSystemResizePending", message: "Waiting for user to (re-)start a pod" }],
    });
    expect(d.phase).toBe("Waiting");
    expect(d.ordinals[0]!.claims[0]!.readiness.state).toBe("WaitingForPod");
    expect(d.message).toContain("file system resize pending until a pod mounts it");
  });
  it("infeasible: ControllerResizeInfeasible blocks with the driver's message", () => {
    const d = at({
      allocatedResourceStatus: "ControllerResizeInfeasible",
      conditions: [{ type: "ControllerResizeError", message: "requested size exceeds the disk limit of 16Ti" }],
    });
    expect(d).toMatchObject({ phase: "Blocked", reason: "ResizeFailed" });
    expect(d.message).toContain("requested size exceeds the disk limit of 16Ti");
    expect(d.events[0]).toMatchObject({ type: "Warning", reason: "ResizeFailed" });
  });
  it("resize-error-retrying: a controller error with resize in progress waits, quoting the error", () => {
    const d = at({
      allocatedResourceStatus: "ControllerResizeInProgress",
      conditions: [{ type: "ControllerResizeError", message: "rpc error: timeout" }],
    });
    expect(d.phase).toBe("Waiting");
    expect(d.message).toContain("rpc error: timeout");
  });
  it("vac-waits-for-current: a VAC change waits for currentVolumeAttributesClassName", () => {
    const vDesired = [{ name: "data", storage: "1Gi", vac: "gold" }];
    const set = makeSet({ desired: vDesired });
    const vacs = [{ metadata: { name: "gold" }, driverName: "example.com/fake" }];
    let s = snapshot(set, claimsFor(set, { vac: "silver", currentVac: "silver" }), { volumeAttributesClasses: vacs });
    const first = plan(s);
    expect(first.action).toMatchObject({ claim: "data-web-2", volumeAttributesClassName: "gold" });
    s = applyPatch(s, first.action!);
    const second = plan(s);
    expect(second.phase).toBe("Waiting");
    expect(second.action).toBeUndefined();
    expect(second.ordinals[0]!.claims[0]!.readiness.state).toBe("Modifying");
    s = settle(s, "data-web-2");
    expect(patchOf(plan(s).action)?.claim).toBe("data-web-1");
  });
  it("vac-kept: a template that names no VAC carries the claim's class so the apply never clears it", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    const d = plan(snapshot(set, claimsFor(set, { vac: "gold", currentVac: "gold" })));
    expect(d.action).toMatchObject({ claim: "data-web-2", volumeAttributesClassName: "gold" });
  });
  it("modify-infeasible: modifyVolumeStatus Infeasible blocks", () => {
    const vDesired = [{ name: "data", storage: "1Gi", vac: "gold" }];
    const set = makeSet({ desired: vDesired });
    const claims = claimsFor(set, { vac: "silver", currentVac: "silver" });
    claims[2] = makeClaim("data-web-2", {
      vac: "gold",
      currentVac: "silver",
      revision: rev(...vDesired),
      modifyVolumeStatus: { status: "Infeasible", targetVolumeAttributesClassName: "gold" },
    });
    const d = plan(
      snapshot(set, claims, { volumeAttributesClasses: [{ metadata: { name: "gold" }, driverName: "x" }] }),
    );
    expect(d).toMatchObject({ phase: "Blocked", reason: "ModifyVolumeFailed" });
  });
});

describe("rule 9: maxUnavailable", () => {
  const inFlightAfter = (maxUnavailable: number | string, replicas: number) => {
    const set = makeSet({ replicas, maxUnavailable, desired: [{ name: "data", storage: "2Gi" }] });
    let s = snapshot(set, claimsFor(set));
    const written: string[] = [];
    for (let i = 0; i < replicas; i++) {
      const d = plan(s);
      if (!d.action) break;
      written.push(patchOf(d.action).claim);
      s = applyPatch(s, d.action); // never settles
    }
    return written;
  };
  it("max-unavailable-2: two ordinals in flight at once, not three", () => {
    expect(inFlightAfter(2, 3)).toEqual(["data-web-2", "data-web-1"]);
  });
  it("max-unavailable-wait-message: says what the next ordinal waits for", () => {
    const set = makeSet({ replicas: 3, maxUnavailable: 2, desired: [{ name: "data", storage: "2Gi" }] });
    let s = snapshot(set, claimsFor(set));
    for (let i = 0; i < 2; i++) s = applyPatch(s, plan(s).action!);
    const d = plan(s);
    expect(d.phase).toBe("Waiting");
    expect(d.message).toMatch(
      /^data-web-2: .*; ordinal 0 starts when 1 of the 2 ordinals in flight is ready \(maxUnavailable 2\)$/,
    );
  });
  it("half-updated-ordinal-holds-a-slot: an ordinal with some claims at the revision is finished before a new one starts", () => {
    const live = [
      { name: "data", storage: "1Gi" },
      { name: "wal", storage: "1Gi" },
    ];
    const desired = [
      { name: "data", storage: "2Gi" },
      { name: "wal", storage: "2Gi" },
    ];
    const set = makeSet({ live, desired });
    const claims = claimsFor(set);
    // ordinal 1 was started (e.g. before ordinal 2's claims existed): data done, wal not yet written
    const i = claims.findIndex((c) => c.metadata.name === "data-web-1");
    claims[i] = makeClaim("data-web-1", { storage: "2Gi", revision: rev(...desired) });
    const d = plan(snapshot(set, claims));
    expect(patchOf(d.action)?.claim).toBe("wal-web-1");
  });
  it("max-unavailable-50%: percent of replicas rounded down", () => {
    expect(inFlightAfter("50%", 5)).toEqual(["data-web-4", "data-web-3"]);
  });
  it("max-unavailable-percent-min-1: 10% of 3 rounds to 0, then to the minimum 1", () => {
    expect(inFlightAfter("10%", 3)).toEqual(["data-web-2"]);
  });
});

describe("rules 10–11: completion, convergence, retarget", () => {
  it("complete: writes current-revision and emits RolloutComplete once", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    const { final } = rollout(snapshot(set, claimsFor(set)));
    expect(final.phase).toBe("Complete");
    expect(final.reason).toBe("RolloutComplete");
    expect(final.setAnnotations?.[Keys.currentRevision]).toBe(final.revision);
    expect(final.events).toEqual([expect.objectContaining({ reason: "RolloutComplete" })]);
  });
  it("converged: a repeat invocation on a complete set does nothing at all", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    const { snapshot: end } = rollout(snapshot(set, claimsFor(set)));
    const again = planStep(end, new Date("2026-12-01T00:00:00Z"), DIRECT);
    expect(again.phase).toBe("Complete");
    expect(again.reason).toBe("Converged");
    expect(again.action).toBeUndefined();
    expect(again.setAnnotations).toBeUndefined();
    expect(again.events).toEqual([]);
  });
  it("status-only-when-changed: a second identical wait writes no annotation", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    let s = snapshot(set, claimsFor(set));
    const d1 = plan(s);
    s = applyPatch(annotate(s, d1.setAnnotations), d1.action!);
    const d2 = plan(s);
    s = annotate(s, d2.setAnnotations);
    expect(d2.setAnnotations?.[Keys.status]).toBeDefined();
    // (within 10 minutes: after that, a claim no resizer took up is Blocked/DriverNotResponding, issue 36 point 5)
    expect(planStep(s, new Date("2026-11-30T10:05:00Z"), DIRECT).setAnnotations).toBeUndefined();
  });
  it("retarget: a new revision mid-rollout restarts from the top; larger claims stay larger", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "5Gi" }] });
    let s = snapshot(set, claimsFor(set));
    for (let i = 0; i < 1; i++) {
      const d = plan(s);
      s = settle(applyPatch(annotate(s, d.setAnnotations), d.action!), patchOf(d.action).claim);
    }
    expect(s.claims.find((c) => c.metadata.name === "data-web-2")!.spec.resources!.requests!.storage).toBe("5Gi");
    // the user retargets to 3Gi (e.g. rollout undo of a too-large change)
    const retargeted = makeSet({ desired: [{ name: "data", storage: "3Gi" }] });
    s = {
      ...s,
      statefulSet: {
        ...retargeted,
        metadata: {
          ...retargeted.metadata,
          annotations: {
            ...s.statefulSet.metadata.annotations,
            [Keys.templates]: retargeted.metadata.annotations![Keys.templates]!,
          },
        },
      },
    };
    const { order, final, snapshot: end } = rollout(s);
    expect(final.revision).toBe(rev({ name: "data", storage: "3Gi" }));
    expect(order).toEqual(["data-web-2", "data-web-1", "data-web-0"]);
    const sizes = Object.fromEntries(end.claims.map((c) => [c.metadata.name, c.spec.resources!.requests!.storage]));
    expect(sizes).toEqual({ "data-web-0": "3Gi", "data-web-1": "3Gi", "data-web-2": "5Gi" });
    expect(final.phase).toBe("Complete");
  });
});

describe("rule 12: never lowers, never writes out of scope", () => {
  it("every action of a rollout requests at least the PVC's spec and stays in scope", () => {
    const set = makeSet({ replicas: 5, partition: 2, desired: [{ name: "data", storage: "3Gi" }] });
    const claims = claimsFor(set).map((c, i) => (i % 2 ? makeClaim(c.metadata.name, { storage: "4Gi" }) : c));
    let s = snapshot(set, [...claims, makeClaim("data-web-5")]);
    for (let i = 0; i < 20; i++) {
      const d = plan(s);
      s = annotate(s, d.setAnnotations);
      if (!d.action) break;
      const before = s.claims.find((c) => c.metadata.name === patchOf(d.action).claim)!;
      expect(Number(patchOf(d.action).claim.split("-").pop())).toBeGreaterThanOrEqual(2);
      expect(Number(patchOf(d.action).claim.split("-").pop())).toBeLessThan(5);
      expect(
        BigInt(patchOf(d.action).storage.replace("Gi", "")) >=
          BigInt(before.spec.resources!.requests!.storage!.replace("Gi", "")),
      ).toBe(true);
      s = settle(applyPatch(s, d.action), patchOf(d.action).claim);
    }
  });
});

describe("rule 13: a claim being deleted is treated as missing", () => {
  const desired = [{ name: "data", storage: "2Gi" }];
  const DELETED_AT = "2026-11-30T09:59:00Z";
  const deleting = <T extends { metadata: { deletionTimestamp?: string } }>(c: T): T => {
    c.metadata.deletionTimestamp = DELETED_AT;
    return c;
  };
  it("terminating-not-written: no write ever targets it; the others proceed; the step waits for the re-created claim", () => {
    const set = makeSet({ desired });
    const claims = claimsFor(set).map((c) => (c.metadata.name === "data-web-1" ? deleting(c) : c));
    const { order, final } = rollout(snapshot(set, claims));
    expect(order).toEqual(["data-web-2", "data-web-0"]);
    expect(final.phase).toBe("Waiting");
    expect(final.reason).toBe("ClaimMissing");
    expect(final.action).toBeUndefined();
    expect(final.message).toBe(
      `data-web-1 is being deleted (deletionTimestamp ${DELETED_AT}); the StatefulSet controller re-creates it, then claimstep updates it`,
    );
    const o1 = final.ordinals.find((o) => o.ordinal === 1)!;
    expect(o1.state).toBe("Pending");
    expect(o1.claims[0]).toMatchObject({ claim: "data-web-1", exists: false, readiness: { state: "Missing" } });
  });
  it("terminating-not-complete: a terminating claim at the revision and ready does not count; no current-revision", () => {
    const set = makeSet({ desired });
    const claims = claimsFor(set, { storage: "2Gi", revision: rev(...desired) }).map((c) =>
      c.metadata.name === "data-web-2" ? deleting(c) : c,
    );
    const d = plan(snapshot(set, claims));
    expect(d.phase).toBe("Waiting");
    expect(d.reason).toBe("ClaimMissing");
    expect(d.action).toBeUndefined();
    expect(d.setAnnotations?.[Keys.currentRevision]).toBeUndefined();
    expect(d.events.map((e) => e.reason)).not.toContain("RolloutComplete");
    expect(d.status.counts.updated).toBe(2);
  });
  it("terminating-holds-its-slot: a claim claimstep wrote, deleted while resizing, keeps its ordinal in flight (I4, found by the soak)", () => {
    const set = makeSet({ desired, maxUnavailable: 1 });
    const claims = claimsFor(set, { storage: "1Gi" });
    claims[2] = deleting(
      makeClaim("data-web-2", {
        storage: "2Gi",
        capacity: "1Gi",
        revision: rev(...desired),
        allocatedResourceStatus: "ControllerResizeInProgress",
      }),
    );
    const d = plan(snapshot(set, claims));
    expect(d.action).toBeUndefined();
    expect(d.phase).toBe("Waiting");
    expect(d.ordinals.find((o) => o.ordinal === 1)!.state).toBe("Pending");
    // With a second slot, the next ordinal may start.
    const two = plan(snapshot(makeSet({ desired, maxUnavailable: 2 }), claims));
    expect(patchOf(two.action)?.claim).toBe("data-web-1");
  });
  it("several-missing: the count says how many are missing or being deleted", () => {
    const set = makeSet({ desired });
    const claims = claimsFor(set, { storage: "2Gi", revision: rev(...desired) })
      .filter((c) => c.metadata.name !== "data-web-0")
      .map((c) => (c.metadata.name === "data-web-1" ? deleting(c) : c));
    const d = plan(snapshot(set, claims));
    expect(d.reason).toBe("ClaimMissing");
    expect(d.message).toMatch(/^data-web-1 is being deleted .*\(2 claim\(s\) in scope are missing or being deleted\)$/);
  });
});

describe("rule 14: quantities as JSON numbers; nothing above 2^63−1 bytes", () => {
  const blocked = invalidTemplates;
  const withStorage = (storage: unknown) => {
    const t = template({ name: "data", storage: "1Gi" });
    return JSON.stringify([{ ...t, spec: { ...t.spec, resources: { requests: { storage } } } }]);
  };

  it('number-in-annotation: `"storage": 2147483648` is 2Gi: same revision, the claim is grown', () => {
    const set = makeSet({ desired: withStorage(2147483648) });
    const d = plan(snapshot(set, claimsFor(set)));
    expect(d.phase).toBe("Progressing");
    expect(d.revision).toBe(rev({ name: "data", storage: "2Gi" }));
    expect(d.action).toMatchObject({ type: "PatchClaim", claim: "data-web-2", storage: "2147483648" });
  });
  it('number-in-annotation-small: `"storage": 10` is accepted (and then kept at the claim\'s larger request)', () => {
    const set = makeSet({ desired: withStorage(10) });
    const d = plan(snapshot(set, claimsFor(set)));
    expect(d.phase).toBe("Progressing");
    expect(d.revision).toBe(rev({ name: "data", storage: "10" }));
    expect(d.action).toMatchObject({ claim: "data-web-2", storage: "1Gi" });
  });
  it("numbers-in-live-templates-and-claims: a rollout over objects whose quantities are JSON numbers completes", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    (set.spec.volumeClaimTemplates![0]!.spec.resources!.requests as Record<string, unknown>).storage = 1073741824;
    const claims = claimsFor(set).map((c) => {
      (c.spec.resources!.requests as Record<string, unknown>).storage = 1073741824;
      (c.status!.capacity as Record<string, unknown>).storage = 1073741824;
      return c;
    });
    const { order, final } = rollout(snapshot(set, claims));
    expect(order).toEqual(["data-web-2", "data-web-1", "data-web-0"]);
    expect(final.phase).toBe("Complete");

    // Without the annotation the live template (a number) is desired; the claims already match it.
    const live = makeSet();
    (live.spec.volumeClaimTemplates![0]!.spec.resources!.requests as Record<string, unknown>).storage = 1073741824;
    const d = plan(snapshot(live, claims));
    expect(d.revision).toBe(rev({ name: "data", storage: "1Gi" }));
    expect(d.action).toMatchObject({ claim: "data-web-2", storage: "1073741824" });
  });
  it.each([
    [1.5, /invalid quantity 1\.5: .*whole number/],
    [-1, /invalid quantity -1: .*must not be negative/],
    [true, /expected a quantity/],
  ])("bad-number %j: blocked, naming the annotation and the field", (storage, pattern) => {
    const d = blocked(withStorage(storage), pattern);
    expect(d.message).toMatch(
      /^annotation claimstep\.io\/volume-claim-templates on default\/web: \[0\]\.spec\.resources\.requests\.storage: /,
    );
  });
  it.each([["8Ei"], ["9223372036854775808"], ["1e19"], ["10E"]])(
    "above-8Ei %s: blocked, naming the annotation, the template and the fix",
    (storage) => {
      const d = blocked(
        withStorage(storage),
        /^annotation claimstep\.io\/volume-claim-templates on default\/web: template "data" requests .*more than the largest volume a CSI driver can be asked for \(9223372036854775807 bytes/,
      );
      expect(d.message).toMatch(
        /Fix: correct spec\.resources\.requests\.storage of template "data" in annotation claimstep\.io\/volume-claim-templates/,
      );
    },
  );
  it("above-8Ei-as-number: a JSON number of 2^63 is refused too", () => {
    blocked(
      withStorage(2 ** 63),
      /template "data" requests 9223372036854775808 \(9223372036854775808 bytes\), more than/,
    );
  });
  it("at-most-2^63−1: 7Ei and 8Ei less one byte are written", () => {
    for (const storage of ["7Ei", "9223372036854775807"]) {
      const set = makeSet({ desired: withStorage(storage) });
      const d = plan(snapshot(set, claimsFor(set)));
      expect(d.phase, storage).toBe("Progressing");
      expect(d.action).toMatchObject({ claim: "data-web-2", storage });
    }
  });
  it("above-8Ei-in-live-template: blocked with the way out (spec.volumeClaimTemplates cannot change)", () => {
    const set = makeSet({ live: [{ name: "data", storage: "16Ei" }] });
    const d = plan(snapshot(set, claimsFor(set)));
    expect(d.phase).toBe("Blocked");
    expect(d.reason).toBe("InvalidTemplates");
    expect(d.action).toBeUndefined();
    expect(d.message).toMatch(
      /^spec\.volumeClaimTemplates on default\/web: template "data" requests 16Ei .*Fix: spec\.volumeClaimTemplates cannot be changed: set annotation claimstep\.io\/volume-claim-templates/,
    );
  });
});

describe("claimstep.io/apply-via", () => {
  it("bad-apply-via: a value claimstep does not know blocks, naming the set, the annotation and the fix; no claim write", () => {
    const set = makeSet({
      desired: [{ name: "data", storage: "2Gi" }],
      annotations: { [Keys.applyVia]: "PullRequest" },
    });
    const d = plan(snapshot(set, claimsFor(set)));
    expect(d).toMatchObject({ phase: "Blocked", reason: "InvalidApplyVia" });
    expect(d.message).toBe(
      'StatefulSet default/web: annotation claimstep.io/apply-via="PullRequest" is not one of direct, pull-request: fix or remove it (absent = direct)',
    );
    expect(d.action).toBeUndefined();
    expect(d.events).toEqual([{ type: "Warning", reason: "InvalidApplyVia", action: "Block", note: d.message }]);
    expect(JSON.parse(d.setAnnotations![Keys.status]!)).toMatchObject({ phase: "Blocked", reason: "InvalidApplyVia" });
    expect(d.requeueAfter).toBeUndefined();
  });
  it("apply-via-not-opted-in: a set that is not opted in stays Idle whatever the annotation says", () => {
    const set = makeSet({ strategy: null, annotations: { [Keys.applyVia]: "PullRequest" } });
    expect(plan(snapshot(set, claimsFor(set)))).toMatchObject({ phase: "Idle", reason: "NotOptedIn" });
  });
  it("apply-via-known: direct and pull-request plan as usual", () => {
    for (const via of ["direct", "pull-request"]) {
      const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }], annotations: { [Keys.applyVia]: via } });
      expect(patchOf(plan(snapshot(set, claimsFor(set))).action).claim, via).toBe("data-web-2");
    }
  });
});

describe("the writer's capabilities", () => {
  const growing = () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    return snapshot(set, claimsFor(set));
  };
  it("action-not-supported: a writer without PatchClaim makes the planner block, saying what a person must do", () => {
    const d = planStep(growing(), NOW, { name: "read-only", supports: [], proposes: false });
    expect(d).toMatchObject({ phase: "Blocked", reason: "ActionNotSupported", status: { ordinal: 2 } });
    expect(d.message).toBe(
      "read-only cannot apply PatchClaim of data-web-2: apply it by hand (kubectl apply --server-side --field-manager=claimstep --force-conflicts) or switch the set to claimstep.io/apply-via: direct",
    );
    expect(d.action).toBeUndefined();
    expect(d.events).toEqual([{ type: "Warning", reason: "ActionNotSupported", action: "Block", note: d.message }]);
    expect(JSON.parse(d.setAnnotations![Keys.status]!)).toMatchObject({
      phase: "Blocked",
      reason: "ActionNotSupported",
    });
    // The per-ordinal table is still the plan's.
    expect(d.ordinals.map((o) => o.state)).toEqual(["Pending", "Pending", "Pending"]);
  });
  it("writer-unavailable: a writer that can do nothing says why instead", () => {
    const d = planStep(growing(), NOW, {
      name: "pull-request writer (not configured)",
      supports: [],
      proposes: false,
      unavailable: "configure a repository",
    });
    expect(d).toMatchObject({
      phase: "Blocked",
      reason: "ActionNotSupported",
      message: "pull-request writer (not configured) cannot apply PatchClaim of data-web-2: configure a repository",
    });
  });
  it("no-action-no-capability-needed: a writer without PatchClaim does not block a set with nothing to write", () => {
    const d = planStep(rolloutEnd(), NOW, { name: "read-only", supports: [], proposes: false });
    expect(d).toMatchObject({ phase: "Complete", reason: "Converged" });
  });
  it("proposes: a writer that proposes makes the planned write Waiting/AwaitingApproval, keeping the action", () => {
    const d = planStep(growing(), NOW, {
      name: "pull-request writer (GitHub octo/fleet)",
      supports: ["PatchClaim"],
      proposes: true,
    });
    expect(d).toMatchObject({
      phase: "Waiting",
      reason: "AwaitingApproval",
      action: { claim: "data-web-2" },
      requeueAfter: 60,
    });
    expect(d.message).toMatch(
      /^pull-request writer \(GitHub octo\/fleet\) proposes the change for approval; once approved: updating data-web-2: storage 1Gi → 2Gi/,
    );
  });
});

/** A set rolled out to Complete. */
function rolloutEnd(): Snapshot {
  const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
  return rollout(snapshot(set, claimsFor(set))).snapshot;
}

describe("status since and requeueAfter", () => {
  const at = (minutes: number) => new Date(NOW.getTime() + minutes * 60_000);
  const status = (d: Decision) =>
    JSON.parse(d.setAnnotations![Keys.status]!) as { phase: string; reason: string; since: string; observedAt: string };
  it("since-kept: while phase and reason stay, since is the first step's time, even as the message changes", () => {
    const set = makeSet({ replicas: 3, desired: [{ name: "data", storage: "2Gi" }] });
    let s = snapshot(set, claimsFor(set));
    // Step 1 writes data-web-2 (Progressing/ClaimUpdated).
    const d1 = planStep(s, at(0), DIRECT);
    expect(status(d1)).toMatchObject({ phase: "Progressing", reason: "ClaimUpdated", since: at(0).toISOString() });
    s = settle(applyPatch(annotate(s, d1.setAnnotations), d1.action!), patchOf(d1.action).claim);
    // Step 2 writes data-web-1: same phase and reason, another message: since stays.
    const d2 = planStep(s, at(1), DIRECT);
    expect(d2.reason).toBe("ClaimUpdated");
    expect(status(d2)).toMatchObject({ since: at(0).toISOString(), observedAt: at(1).toISOString() });
    expect(d2.status.since).toBe(at(0).toISOString());
  });
  it("since-reset: a change of phase or reason resets since", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    let s = snapshot(set, claimsFor(set));
    const d1 = planStep(s, at(0), DIRECT);
    s = applyPatch(annotate(s, d1.setAnnotations), d1.action!);
    // The claim is not resized yet: Waiting/ClaimResizing from now on.
    const d2 = planStep(s, at(1), DIRECT);
    expect(status(d2)).toMatchObject({ phase: "Waiting", reason: "ClaimResizing", since: at(1).toISOString() });
    s = annotate(s, d2.setAnnotations);
    // Still resizing a minute later: nothing written, since kept.
    const d3 = planStep(s, at(2), DIRECT);
    expect(d3.setAnnotations).toBeUndefined();
    expect(d3.status.since).toBe(at(1).toISOString());
    // Resized: the next write is Progressing again, since now.
    const d4 = planStep(settle(s, patchOf(d1.action).claim), at(3), DIRECT);
    expect(status(d4)).toMatchObject({ phase: "Progressing", reason: "ClaimUpdated", since: at(3).toISOString() });
  });
  it("since-legacy: a record written before since existed is not rewritten for it; its observedAt stands in", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    let s = snapshot(set, claimsFor(set));
    const d1 = planStep(s, at(0), DIRECT);
    s = applyPatch(annotate(s, d1.setAnnotations), d1.action!);
    const d2 = planStep(s, at(1), DIRECT);
    const { since: _since, ...legacy } = status(d2);
    s = annotate(s, { ...d2.setAnnotations, [Keys.status]: JSON.stringify(legacy) });
    const d3 = planStep(s, at(5), DIRECT);
    expect(d3.setAnnotations).toBeUndefined();
    expect(d3.status.since).toBe(at(1).toISOString());
  });
  it("requeue-after: short while Progressing, the driver's pace while Waiting, none when Complete, Blocked or Idle", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    let s = snapshot(set, claimsFor(set));
    const d1 = plan(s);
    expect(d1).toMatchObject({ phase: "Progressing", requeueAfter: 2 });
    s = applyPatch(annotate(s, d1.setAnnotations), d1.action!);
    expect(plan(s)).toMatchObject({ phase: "Waiting", reason: "ClaimResizing", requeueAfter: 10 });
    expect(plan(rolloutEnd()).phase).toBe("Complete");
    expect(plan(rolloutEnd()).requeueAfter).toBeUndefined();
    expect(plan(snapshot(makeSet({ desired: "[{" }), claimsFor(makeSet()))).requeueAfter).toBeUndefined();
    expect(plan(snapshot(makeSet({ strategy: null }), claimsFor(makeSet()))).requeueAfter).toBeUndefined();
  });
});
