// The node model (adapters/sim/node-model.ts): which step a claim is at, what each step writes,
// and the one driver vocabulary the e2e node agent's StorageClass annotations map onto. The
// sequences the drivers produce are held to the recordings by storage-conformance.test.ts.
import { describe, expect, it } from "vitest";
import {
  controllerResizeInfeasible,
  controllerResizeStarted,
  DEFAULT_DRIVER,
  type DriverBehaviour,
  expansionRefusal,
  modifyCompleted,
  modifyInfeasible,
  modifyInProgress,
  modifyPending,
  modifyRefusal,
  modifyStage,
  mountWaitsForController,
  nodeResizePending,
  nodeStage,
  resizeFinished,
  resizeStage,
} from "../../../adapters/sim/node-model.js";
import type { PersistentVolumeClaim } from "../../../core/kube/k8s.js";
import { toBytes } from "../../../core/kube/quantity.js";
import {
  driverBehaviourOf,
  driverOfStorageClass,
  STORAGE_CLASS_ANNOTATIONS,
  storageClass,
  storageClassAnnotations,
} from "../../e2e/support/node-agent.js";

const T0 = "2026-11-30T10:00:00Z";
const T1 = "2026-11-30T10:00:05Z";

function claim(request: string, status: PersistentVolumeClaim["status"] = {}, vac?: string): PersistentVolumeClaim {
  return {
    metadata: { name: "data-web-0", namespace: "default", uid: "u1" },
    spec: {
      storageClassName: "fast",
      resources: { requests: { storage: request } },
      ...(vac ? { volumeAttributesClassName: vac } : {}),
    },
    status: { phase: "Bound", capacity: { storage: "1Gi" }, ...status },
  };
}
const types = (s: PersistentVolumeClaim["status"]) => (s?.conditions ?? []).map((c) => c.type);
const GI = toBytes("1Gi");

describe("resizeStage", () => {
  const at = (storage: string | undefined, allocated?: string) => ({
    ...(storage ? { allocatedResourceStatuses: { storage } } : {}),
    ...(allocated ? { allocatedResources: { storage: allocated } } : {}),
  });
  it.each([
    ["as large as asked", claim("1Gi"), GI, DEFAULT_DRIVER, "idle"],
    ["a larger request", claim("2Gi"), GI, DEFAULT_DRIVER, "start"],
    ["no resizer", claim("2Gi"), GI, { resize: "none" }, "idle"],
    ["in progress at the request", claim("2Gi", at("ControllerResizeInProgress", "2Gi")), GI, DEFAULT_DRIVER, "expand"],
    [
      "in progress, the request raised since",
      claim("3Gi", at("ControllerResizeInProgress", "2Gi")),
      GI,
      DEFAULT_DRIVER,
      "start",
    ],
    ["refused at this very size", claim("5Gi", at("ControllerResizeInfeasible", "5Gi")), GI, DEFAULT_DRIVER, "idle"],
    [
      "refused, then lowered (the recovery)",
      claim("2Gi", at("ControllerResizeInfeasible", "5Gi")),
      GI,
      DEFAULT_DRIVER,
      "start",
    ],
    ["the node's turn", claim("2Gi", at("NodeResizePending", "2Gi")), GI, DEFAULT_DRIVER, "node"],
    [
      "the node's turn, the volume grown",
      claim("2Gi", at("NodeResizeInProgress", "2Gi")),
      2n * GI,
      DEFAULT_DRIVER,
      "idle",
    ],
    ["the node refused", claim("2Gi", at("NodeResizeInfeasible", "2Gi")), 2n * GI, DEFAULT_DRIVER, "hand-back"],
  ] as const)("%s → %s", (_, pvc, volume, driver, stage) => {
    expect(resizeStage(pvc, volume, driver as DriverBehaviour)).toBe(stage);
  });
});

describe("modifyStage", () => {
  const mvs = (status: string, target?: string) => ({
    modifyVolumeStatus: { status, ...(target ? { targetVolumeAttributesClassName: target } : {}) },
  });
  it.each([
    [
      "the class in effect",
      claim("1Gi", { currentVolumeAttributesClassName: "gold" }, "gold"),
      undefined,
      { stage: "idle" },
    ],
    [
      "a new class",
      claim("1Gi", { currentVolumeAttributesClassName: "gold" }, "silver"),
      undefined,
      { stage: "start", target: "silver" },
    ],
    [
      "in flight: ends with its target",
      claim("1Gi", mvs("InProgress", "silver"), "bronze"),
      undefined,
      { stage: "finish", target: "silver" },
    ],
    ["no class asked any more", claim("1Gi", mvs("Infeasible", "silver")), undefined, { stage: "cancel" }],
    ["refused this very class", claim("1Gi", mvs("Infeasible", "silver"), "silver"), undefined, { stage: "refused" }],
    [
      "back to the class in effect after a refusal",
      claim("1Gi", { currentVolumeAttributesClassName: "gold", ...mvs("Infeasible", "silver") }, "gold"),
      undefined,
      { stage: "start", target: "gold" },
    ],
    ["Pending, parked on it", claim("1Gi", mvs("Pending"), "missing"), "missing", { stage: "parked" }],
    [
      "Pending, nobody parked it (the e2e agent)",
      claim("1Gi", mvs("Pending"), "missing"),
      undefined,
      { stage: "start", target: "missing" },
    ],
  ] as const)("%s", (_, pvc, parkedOn, stage) => {
    expect(modifyStage(pvc, DEFAULT_DRIVER, parkedOn)).toEqual(stage);
  });
  it("a driver without MODIFY_VOLUME writes nothing", () => {
    expect(modifyStage(claim("1Gi", {}, "gold"), { resize: "online", modify: "none" })).toEqual({
      stage: "unsupported",
    });
  });
});

describe("nodeStage and mountWaitsForController: the kubelet's part", () => {
  const pending = claim("2Gi", { allocatedResourceStatuses: { storage: "NodeResizePending" } });
  const inProgress = claim("2Gi", { allocatedResourceStatuses: { storage: "NodeResizeInProgress" } });
  const offline: DriverBehaviour = { resize: "online", nodeExpansion: "offline" };
  it.each([
    ["nothing pending", claim("2Gi"), DEFAULT_DRIVER, "running", "idle"],
    ["online, a running pod", pending, DEFAULT_DRIVER, "running", "expand"],
    ["online, in progress", inProgress, DEFAULT_DRIVER, "running", "finish"],
    ["offline on the node, a running pod", pending, offline, "running", "wait-for-mount"],
    ["offline on the node, a mount", pending, offline, "starting", "expand"],
    ["an offline-only resizer, a running pod", pending, { resize: "offline" }, "running", "wait-for-mount"],
    ["offline, a mount finishes one in progress", inProgress, offline, "starting", "finish"],
  ] as const)("%s → %s", (_, pvc, driver, pod, stage) => {
    expect(nodeStage(pvc, driver, pod)).toBe(stage);
  });
  it("a pod waits for an offline-only resizer's pending expansion, not for a refused one", () => {
    const off: DriverBehaviour = { resize: "offline" };
    expect(mountWaitsForController(claim("2Gi"), GI, off)).toBe(true);
    expect(mountWaitsForController(claim("2Gi"), 2n * GI, off)).toBe(false);
    expect(mountWaitsForController(claim("2Gi"), GI, DEFAULT_DRIVER)).toBe(false);
    const refused = claim("2Gi", { allocatedResourceStatuses: { storage: "ControllerResizeInfeasible" } });
    expect(mountWaitsForController(refused, GI, off)).toBe(false);
  });
});

describe("the writes", () => {
  it("start: allocatedResources, ControllerResizeInProgress, a fresh Resizing; a node's NodeResizeError stays; the argument unchanged", () => {
    const before = claim("2Gi", {
      conditions: [
        { type: "NodeResizeError", status: "True", message: "node" },
        { type: "ControllerResizeError", status: "True", message: "controller" },
      ],
    }).status;
    const frozen = structuredClone(before);
    const s = controllerResizeStarted(before, "2Gi", T0);
    expect(before).toEqual(frozen);
    expect(s.allocatedResources).toEqual({ storage: "2Gi" });
    expect(s.allocatedResourceStatuses).toEqual({ storage: "ControllerResizeInProgress" });
    expect(types(s)).toEqual(["NodeResizeError", "Resizing"]);
  });

  it("the whole online sequence, as the recordings show it", () => {
    const started = controllerResizeStarted(claim("2Gi").status, "2Gi", T0);
    const pending = nodeResizePending(started, T0);
    expect([pending.allocatedResourceStatuses?.storage, types(pending)]).toEqual([
      "NodeResizePending",
      ["Resizing", "FileSystemResizePending"],
    ]);
    const done = resizeFinished(pending);
    expect(done).toEqual({ phase: "Bound", capacity: { storage: "2Gi" }, allocatedResources: { storage: "2Gi" } });
  });

  it("infeasible: Resizing stays, the driver's error beside it", () => {
    const s = controllerResizeInfeasible(
      controllerResizeStarted(claim("5Gi").status, "5Gi", T0),
      "code = OutOfRange desc = no",
      T0,
    );
    expect(s.allocatedResourceStatuses).toEqual({ storage: "ControllerResizeInfeasible" });
    expect(s.conditions?.map((c) => [c.type, c.message])).toEqual([
      ["Resizing", undefined],
      ["ControllerResizeError", "failed to expand pvc with rpc error: code = OutOfRange desc = no"],
    ]);
  });

  it("modify: Pending keeps the earlier target; a refusal keeps ModifyingVolume's lastTransitionTime; completion clears", () => {
    expect(
      modifyPending({ modifyVolumeStatus: { status: "Infeasible", targetVolumeAttributesClassName: "x" } })
        .modifyVolumeStatus,
    ).toEqual({
      status: "Pending",
      targetVolumeAttributesClassName: "x",
    });
    const started = modifyInProgress({ currentVolumeAttributesClassName: "gold" }, "silver", T0);
    const refused = modifyInfeasible(started, "silver", "invalid parameters: [tier]", T1);
    expect(refused.conditions?.map((c) => [c.type, c.lastTransitionTime, c.message, c.reason])).toEqual([
      ["ModifyingVolume", T0, 'Modifying volume to "silver" failed. Waiting for retry.', undefined],
      ["ModifyVolumeError", T1, "invalid parameters: [tier]", "InvalidArgument"],
    ]);
    expect(modifyCompleted(refused, "silver")).toEqual({ currentVolumeAttributesClassName: "silver" });
  });

  it("the drivers' refusals", () => {
    expect(expansionRefusal({ resize: "online", maxStorage: "10Gi" }, toBytes("20Gi"), "fast")).toBe(
      "code = OutOfRange desc = Requested capacity 21474836480 exceeds maximum allowed 10737418240",
    );
    expect(expansionRefusal(DEFAULT_DRIVER, toBytes("20Gi"), "fast")).toBeUndefined();
    expect(modifyRefusal({ resize: "online", refusedClasses: ["broken"] }, "broken", [], "pvc-1")).toBe(
      "parameters of VolumeAttributesClass broken are not supported for volume pvc-1",
    );
    expect(modifyRefusal({ resize: "online", mutableParameters: ["iops"] }, "x", ["tier", "iops", "a"], "pvc-1")).toBe(
      "invalid parameters: [a tier]",
    );
    expect(modifyRefusal(DEFAULT_DRIVER, "x", ["tier"], "pvc-1")).toBeUndefined();
  });
});

describe("the e2e node agent's StorageClass annotations are the same vocabulary", () => {
  it("round trip: annotations → DriverBehaviour → annotations", () => {
    const b = {
      provisionLatencyMs: 10,
      resizeLatencyMs: 200,
      nodeExpansion: "offline",
      nodeResizeLatencyMs: 300,
      maxSize: "3Gi",
      modifyLatencyMs: 400,
      infeasibleVac: ["broken", "worse"],
    } as const;
    const sc = storageClass("fast", { ...b, infeasibleVac: [...b.infeasibleVac] });
    const driver = driverOfStorageClass(sc.metadata.annotations);
    expect(driver).toEqual({
      resize: "online",
      modify: "ok",
      nodeExpansion: "offline",
      provisionMs: 10,
      resizeMs: 200,
      nodeResizeMs: 300,
      maxStorage: "3Gi",
      modifyMs: 400,
      refusedClasses: ["broken", "worse"],
    });
    expect(storageClassAnnotations(driver)).toEqual(sc.metadata.annotations);
  });

  it("no annotation: the agent's driver finishes the resize on the controller, at once", () => {
    expect(driverOfStorageClass(storageClass("plain").metadata.annotations)).toEqual(driverBehaviourOf({}));
    expect(driverBehaviourOf({})).toEqual({ resize: "online", modify: "ok", nodeExpansion: "none" });
    expect(storageClass("plain", { nodeExpansion: "none" }).metadata.annotations).toEqual({
      [STORAGE_CLASS_ANNOTATIONS.nodeExpansion]: "none",
    });
  });

  it("refuses what the agent does not play", () => {
    expect(() => storageClassAnnotations({ resize: "flaky" })).toThrow(/does not play resize flaky/);
    expect(() => storageClassAnnotations({ resize: "online", nodeExpansion: "infeasible", modify: "none" })).toThrow(
      /modify none, nodeExpansion infeasible/,
    );
  });
});
