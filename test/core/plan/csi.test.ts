// Rules 15–19 of docs/design.md: what the real CSI components do (kubelet v1.34.2, external-resizer
// v2.0.0, the CSI hostpath driver), as the claim's status fields show it, step by step.
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import { toBytes } from "../../../core/kube/quantity.js";
import { revisionOf } from "../../../core/kube/revision.js";
import { planStep } from "../../../core/plan/plan.js";
import { claimReadiness } from "../../../core/plan/readiness.js";
import type { Decision, Snapshot } from "../../../core/types.js";
import {
  type ClaimSpec,
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
const want = (storage: string, vac?: string, exists?: boolean) => ({
  storageBytes: toBytes(storage),
  ...(vac ? { volumeAttributesClassName: vac } : {}),
  ...(exists !== undefined ? { volumeAttributesClassExists: exists } : {}),
});
const FS_PENDING = {
  type: "FileSystemResizePending",
  message: "Waiting for user to (re-)start a pod to finish file system resize of volume on node.",
};
const NOT_REQUIRED = { [Keys.nodeExpansionNotRequired]: "true" };

describe("rule 15: Complete only after the node's file system expansion", () => {
  // The measured sequence of a 1Gi → 2Gi expansion of a mounted claim.
  it.each([
    [
      "+0.005 ControllerResizeInProgress, Resizing",
      { allocatedResourceStatus: "ControllerResizeInProgress", conditions: [{ type: "Resizing" }] },
      "Resizing",
    ],
    [
      "+0.018 NodeResizePending, FileSystemResizePending (the PV at 2Gi, the claim's capacity still 1Gi)",
      { allocatedResourceStatus: "NodeResizePending", conditions: [{ type: "Resizing" }, FS_PENDING] },
      "WaitingForPod",
    ],
    ["+6.3 NodeResizeInProgress", { allocatedResourceStatus: "NodeResizeInProgress" }, "WaitingForPod"],
    ["+6.4 capacity 2Gi, statuses and conditions removed", { capacity: "2Gi" }, "Ready"],
  ])("%s → %s", (_at, c: ClaimSpec, state) => {
    const pvc = makeClaim("c", { storage: "2Gi", capacity: "1Gi", allocated: "2Gi", ...c });
    expect(claimReadiness(pvc, want("2Gi")).state).toBe(state);
  });

  it.each([
    ["FileSystemResizePending", { conditions: [FS_PENDING] }, "WaitingForPod"],
    ["NodeResizePending", { allocatedResourceStatus: "NodeResizePending" }, "WaitingForPod"],
    ["NodeResizeInProgress", { allocatedResourceStatus: "NodeResizeInProgress" }, "WaitingForPod"],
    ["ControllerResizeInProgress", { allocatedResourceStatus: "ControllerResizeInProgress" }, "Resizing"],
  ])("capacity already at the want, %s: not Ready", (_s, c: ClaimSpec, state) => {
    const pvc = makeClaim("c", { storage: "3Gi", capacity: "2Gi", allocated: "3Gi", ...c });
    const r = claimReadiness(pvc, want("2Gi"));
    expect(r.state).toBe(state);
    if (state === "WaitingForPod") expect(r).toMatchObject({ message: expect.stringContaining("capacity reached") });
  });

  it("a rollback while a claim grows: never Complete before the node's half is done", () => {
    // data 1Gi → 2Gi rolled back to 1Gi: data-web-2 asks 2Gi, capacity 1Gi (the template's), its file system pending.
    const set = makeSet({ desired: [{ name: "data", storage: "1Gi" }] });
    const r = rev({ name: "data", storage: "1Gi" });
    const claims = claimsFor(set, { revision: r });
    claims[2] = makeClaim("data-web-2", {
      storage: "2Gi",
      capacity: "1Gi",
      allocated: "2Gi",
      revision: r,
      allocatedResourceStatus: "NodeResizePending",
      conditions: [FS_PENDING],
    });
    const s = snapshot(set, claims);
    const d = plan(s);
    expect(d).toMatchObject({ phase: "Waiting", reason: "ClaimResizing" });
    expect(d.ordinals.find((o) => o.ordinal === 2)!.claims[0]!.readiness.state).toBe("WaitingForPod");
    expect(d.setAnnotations?.[Keys.currentRevision]).toBeUndefined();
    expect(plan(settle(s, "data-web-2"))).toMatchObject({ phase: "Complete", reason: "RolloutComplete" });
  });
});

describe("rule 16: a driver that needs no node expansion", () => {
  it("capacity set at once and the claim annotated: Ready at once", () => {
    const pvc = makeClaim("c", { storage: "2Gi", capacity: "2Gi", allocated: "2Gi", annotations: NOT_REQUIRED });
    expect(claimReadiness(pvc, want("2Gi")).state).toBe("Ready");
  });

  it("annotated: a node status or FileSystemResizePending left on it waits for nothing (the kubelet skips the node half)", () => {
    const pvc = makeClaim("c", {
      storage: "2Gi",
      capacity: "2Gi",
      annotations: NOT_REQUIRED,
      allocatedResourceStatus: "NodeResizePending",
      conditions: [FS_PENDING],
    });
    expect(claimReadiness(pvc, want("2Gi")).state).toBe("Ready");
  });

  it("annotated, capacity not yet set: the controller's half, never waiting for a pod", () => {
    const pvc = makeClaim("c", {
      storage: "2Gi",
      capacity: "1Gi",
      annotations: NOT_REQUIRED,
      conditions: [FS_PENDING],
    });
    expect(claimReadiness(pvc, want("2Gi")).state).toBe("Resizing");
  });
});

describe("rule 17: NodeResizeError, the lasting node-side failure", () => {
  /** The claim ~20 ms after NodeResizeInfeasible: the status gone, the condition stays. */
  const failed = (c: ClaimSpec = {}): ClaimSpec => ({
    storage: "2Gi",
    capacity: "1Gi",
    allocated: "2Gi",
    conditions: [{ type: "NodeResizeError", message: "resize2fs: Permission denied" }],
    ...c,
  });

  it("no expansion in progress, capacity below the request: Failed/NodeResizeFailed with the error and what to do", () => {
    const r = claimReadiness(makeClaim("data-web-2", failed()), want("2Gi"));
    expect(r).toMatchObject({ state: "Failed", reason: "NodeResizeFailed" });
    const message = (r as { message: string }).message;
    expect(message).toContain("resize2fs: Permission denied");
    expect(message).toContain("Fix the cause on the node");
    expect(message).toContain("above 1Gi and below 2Gi (claimstep lowers the request, X1)");
  });

  it("a stale NodeResizeError with the capacity at the want and nothing pending does not block", () => {
    expect(claimReadiness(makeClaim("c", failed({ capacity: "2Gi" })), want("2Gi")).state).toBe("Ready");
  });

  it("the request changed since (lowered or raised): waiting for the resizer, not Failed", () => {
    const r = claimReadiness(makeClaim("c", failed({ storage: "1536Mi" })), want("1536Mi"));
    expect(r.state).toBe("Resizing");
  });

  it("handed back to the node (NodeResizePending, the kubelet retrying at the same size): still Failed, not Retrying for ever", () => {
    const r = claimReadiness(makeClaim("c", failed({ allocatedResourceStatus: "NodeResizePending" })), want("2Gi"));
    expect(r).toMatchObject({ state: "Failed", reason: "NodeResizeFailed" });
  });

  it("the resizer's new attempt (ControllerResizeInProgress): Retrying, the error quoted", () => {
    const r = claimReadiness(
      makeClaim("c", failed({ allocatedResourceStatus: "ControllerResizeInProgress" })),
      want("2Gi"),
    );
    expect(r).toMatchObject({ state: "Retrying", message: expect.stringContaining("resize2fs") });
  });

  it("an error older than the resizer's current attempt (after a lowering, at the new size): not Failed", () => {
    const pvc = makeClaim("c", failed({ allocatedResourceStatus: "NodeResizePending" }));
    pvc.status!.conditions = [
      { type: "NodeResizeError", status: "True", lastTransitionTime: "2026-11-30T09:00:00Z", message: "old" },
      { type: "Resizing", status: "True", lastTransitionTime: "2026-11-30T09:30:00Z" },
    ];
    expect(claimReadiness(pvc, want("2Gi")).state).toBe("Retrying");
  });

  const world = (desired: string, c: ClaimSpec = {}) => {
    const set = makeSet({ desired: [{ name: "data", storage: desired }] });
    const claims = claimsFor(set, { storage: desired, revision: rev({ name: "data", storage: desired }) });
    claims[2] = makeClaim("data-web-2", failed({ revision: rev({ name: "data", storage: "2Gi" }), ...c }));
    return snapshot(set, claims);
  };

  it("the claim claimstep grew: Blocked/NodeResizeFailed (Warning), not Waiting for ever", () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    const claims = claimsFor(set, { storage: "2Gi", revision: rev({ name: "data", storage: "2Gi" }) });
    claims[2] = makeClaim("data-web-2", failed({ revision: rev({ name: "data", storage: "2Gi" }) }));
    const d = plan(snapshot(set, claims));
    expect(d).toMatchObject({ phase: "Blocked", reason: "NodeResizeFailed" });
    expect(d.action).toBeUndefined();
    expect(d.events[0]).toMatchObject({ type: "Warning", reason: "NodeResizeFailed" });
  });

  it("X1: a template lowered above the capacity brings the request down, the condition notwithstanding", () => {
    const d = plan(world("1536Mi"));
    expect(d).toMatchObject({ phase: "Progressing", reason: "ClaimUpdated" });
    expect(patchOf(d.action)).toMatchObject({ claim: "data-web-2", storage: "1536Mi" });
  });

  it("X2 (issue 36 point 4): a template at the capacity: the rollout goes on, the request reported with NodeResizeError", () => {
    const d = plan(world("1Gi"));
    expect(d.phase).not.toBe("Blocked");
    expect(d.message).toContain("could not provide (NodeResizeError)");
  });

  it("after the lowering the condition stays: the claim is ready once its capacity reaches the request", () => {
    const lowered = world("1536Mi", { storage: "1536Mi", allocated: "1536Mi", capacity: "1536Mi" });
    lowered.claims[2]!.metadata.labels![Keys.revisionLabel] = rev({ name: "data", storage: "1536Mi" });
    expect(plan(lowered)).toMatchObject({ phase: "Complete" });
  });
});

describe("rule 18: a VolumeAttributesClass modification Pending on a class that exists now", () => {
  const gold = [{ metadata: { name: "gold" }, driverName: "hostpath.csi.k8s.io" }];
  const pending = (c: ClaimSpec = {}) =>
    makeClaim("data-web-2", { vac: "gold", modifyVolumeStatus: { status: "Pending" }, ...c });

  it("readiness: Modifying with reason ModifyVolumePending and the exact fix (back to the current class, then again)", () => {
    const r = claimReadiness(pending({ currentVac: "silver" }), want("1Gi", "gold", true));
    expect(r).toMatchObject({ state: "Modifying", reason: "ModifyVolumePending" });
    const message = (r as { message: string }).message;
    expect(message).toContain("not woken by the class appearing");
    expect(message).toContain(
      `kubectl -n default patch pvc data-web-2 --type merge -p '{"spec":{"volumeAttributesClassName":"silver"}}' && kubectl -n default patch pvc data-web-2 --type merge -p '{"spec":{"volumeAttributesClassName":"gold"}}'`,
    );
  });

  it("no current class: the fix removes it (allowed while none is current), then sets it again", () => {
    const r = claimReadiness(pending(), want("1Gi", "gold", true));
    expect((r as { message: string }).message).toContain(`{"spec":{"volumeAttributesClassName":null}}`);
  });

  it("the class still missing: says to create it", () => {
    const r = claimReadiness(pending(), want("1Gi", "gold", false));
    expect((r as { message: string }).message).toContain("the class does not exist. Create it");
  });

  it("plan: Waiting/ModifyVolumePending (Warning), no claim write (no nudge)", () => {
    const desired = [{ name: "data", storage: "1Gi", vac: "gold" }];
    const set = makeSet({ desired });
    const claims = claimsFor(set, { vac: "gold", currentVac: "gold", revision: rev(...desired) });
    claims[2] = pending({ revision: rev(...desired) });
    const d = plan(snapshot(set, claims, { volumeAttributesClasses: gold }));
    expect(d).toMatchObject({ phase: "Waiting", reason: "ModifyVolumePending", requeueAfter: 60 });
    expect(d.action).toBeUndefined();
    expect(d.events[0]).toMatchObject({ type: "Warning", reason: "ModifyVolumePending" });
    expect(d.message).toContain("retries on its resync (up to 10 minutes)");
  });
});

describe("rule 19: size first, the class once the resize is done", () => {
  const desired = [{ name: "data", storage: "2Gi", vac: "gold" }];
  const vacs = [
    { metadata: { name: "gold" }, driverName: "example.com/fake" },
    { metadata: { name: "silver" }, driverName: "example.com/fake" },
  ];
  const start = (c: ClaimSpec) => {
    const set = makeSet({ desired });
    return snapshot(set, claimsFor(set, c), { volumeAttributesClasses: vacs });
  };

  it("a template changing both: the size, the claim's class kept; then the class once the claim is resized", () => {
    let s = start({ vac: "silver", currentVac: "silver" });
    const first = plan(s);
    expect(patchOf(first.action)).toMatchObject({
      claim: "data-web-2",
      storage: "2Gi",
      volumeAttributesClassName: "silver",
    });
    expect(first.message).toContain("storage 1Gi → 2Gi");
    expect(first.message).not.toContain("silver → gold");
    // Rule 20: the revision is stamped with the class, else the claim would be done without it.
    expect(patchOf(first.action).labels[Keys.revisionLabel]).toBeUndefined();
    expect(first.message).toContain("volumeAttributesClassName gold and the revision follow once resized");
    // The resizer at work: the class waits.
    s = {
      ...s,
      claims: s.claims.map((c) =>
        c.metadata.name === "data-web-2"
          ? makeClaim("data-web-2", {
              storage: "2Gi",
              capacity: "1Gi",
              vac: "silver",
              currentVac: "silver",
              allocatedResourceStatus: "NodeResizePending",
              conditions: [FS_PENDING],
            })
          : c,
      ),
    };
    const held = plan(s);
    expect(held).toMatchObject({ phase: "Waiting", reason: "ClaimResizing" });
    expect(held.action).toBeUndefined();
    expect(held.message).toContain("volumeAttributesClassName gold is written once this resize is done");
    expect(held.ordinals.find((o) => o.ordinal === 2)!.state).toBe("InFlight");
    // Resized: now the class, alone.
    s = settle(s, "data-web-2");
    const second = plan(s);
    expect(patchOf(second.action)).toMatchObject({
      claim: "data-web-2",
      storage: "2Gi",
      volumeAttributesClassName: "gold",
    });
    expect(second.message).toContain("volumeAttributesClassName silver → gold");
    expect(second.message).not.toContain("storage");
  });

  it("a claim with no class yet: the size apply names none", () => {
    const d = plan(start({}));
    expect(patchOf(d.action).volumeAttributesClassName).toBeUndefined();
    expect(patchOf(d.action).storage).toBe("2Gi");
  });

  it("only the class changing, no resize under way: one apply of the class at once", () => {
    const set = makeSet({ desired });
    const d = plan(
      snapshot(set, claimsFor(set, { storage: "2Gi", vac: "silver", currentVac: "silver" }), {
        volumeAttributesClasses: vacs,
      }),
    );
    expect(patchOf(d.action)).toMatchObject({ claim: "data-web-2", volumeAttributesClassName: "gold" });
  });
});
