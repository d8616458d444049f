// claimReadiness (rule 8) on each combination of the real PVC status fields.
import { describe, expect, it } from "vitest";
import { toBytes } from "../../../core/kube/quantity.js";
import { claimReadiness } from "../../../core/plan/readiness.js";
import { makeClaim } from "../builders.js";

const want = (storage: string, vac?: string) => ({
  storageBytes: toBytes(storage),
  ...(vac ? { volumeAttributesClassName: vac } : {}),
});

describe("claimReadiness", () => {
  it.each([
    ["ready", makeClaim("c", { storage: "2Gi", capacity: "2Gi" }), want("2Gi"), "Ready"],
    ["capacity above the template", makeClaim("c", { storage: "2Gi", capacity: "3Gi" }), want("2Gi"), "Ready"],
    ["missing", undefined, want("2Gi"), "Missing"],
    [
      "being deleted, however ready (rule 13)",
      {
        ...makeClaim("c", { storage: "2Gi", capacity: "2Gi" }),
        metadata: { ...makeClaim("c").metadata, deletionTimestamp: "2026-11-30T09:59:00Z" },
      },
      want("2Gi"),
      "Missing",
    ],
    ["pending claim", makeClaim("c", { phase: "Pending" }), want("1Gi"), "NotBound"],
    ["request not raised", makeClaim("c", { storage: "1Gi" }), want("2Gi"), "Behind"],
    ["resizer has not started", makeClaim("c", { storage: "2Gi", capacity: "1Gi" }), want("2Gi"), "Resizing"],
    [
      "Resizing condition",
      makeClaim("c", { storage: "2Gi", capacity: "1Gi", conditions: [{ type: "Resizing" }] }),
      want("2Gi"),
      "Resizing",
    ],
    [
      "ControllerResizeInProgress",
      makeClaim("c", { storage: "2Gi", capacity: "1Gi", allocatedResourceStatus: "ControllerResizeInProgress" }),
      want("2Gi"),
      "Resizing",
    ],
    [
      "NodeResizePending",
      makeClaim("c", { storage: "2Gi", capacity: "1Gi", allocatedResourceStatus: "NodeResizePending" }),
      want("2Gi"),
      "WaitingForPod",
    ],
    [
      "FileSystemResizePending",
      makeClaim("c", { storage: "2Gi", capacity: "1Gi", conditions: [{ type: "FileSystemResizePending" }] }),
      want("2Gi"),
      "WaitingForPod",
    ],
    [
      "ControllerResizeInfeasible",
      makeClaim("c", { storage: "2Gi", capacity: "1Gi", allocatedResourceStatus: "ControllerResizeInfeasible" }),
      want("2Gi"),
      "Failed",
    ],
    [
      "NodeResizeInfeasible",
      makeClaim("c", { storage: "2Gi", capacity: "1Gi", allocatedResourceStatus: "NodeResizeInfeasible" }),
      want("2Gi"),
      "Failed",
    ],
    [
      "NodeResizeError in progress",
      makeClaim("c", {
        storage: "2Gi",
        capacity: "1Gi",
        allocatedResourceStatus: "NodeResizeInProgress",
        conditions: [{ type: "NodeResizeError", message: "resize2fs failed" }],
      }),
      want("2Gi"),
      "Retrying",
    ],
    ["VAC reached", makeClaim("c", { vac: "gold", currentVac: "gold" }), want("1Gi", "gold"), "Ready"],
    ["VAC not set", makeClaim("c", { vac: "silver", currentVac: "silver" }), want("1Gi", "gold"), "Behind"],
    [
      "VAC modifying",
      makeClaim("c", {
        vac: "gold",
        currentVac: "silver",
        conditions: [{ type: "ModifyingVolume" }],
        modifyVolumeStatus: { status: "InProgress", targetVolumeAttributesClassName: "gold" },
      }),
      want("1Gi", "gold"),
      "Modifying",
    ],
    [
      "VAC current but status still pending",
      makeClaim("c", {
        vac: "gold",
        currentVac: "gold",
        modifyVolumeStatus: { status: "Pending", targetVolumeAttributesClassName: "gold" },
      }),
      want("1Gi", "gold"),
      "Modifying",
    ],
    [
      "VAC error",
      makeClaim("c", {
        vac: "gold",
        currentVac: "silver",
        conditions: [{ type: "ModifyVolumeError", message: "quota" }],
        modifyVolumeStatus: { status: "InProgress" },
      }),
      want("1Gi", "gold"),
      "Retrying",
    ],
    [
      "VAC infeasible",
      makeClaim("c", { vac: "gold", currentVac: "silver", modifyVolumeStatus: { status: "Infeasible" } }),
      want("1Gi", "gold"),
      "Failed",
    ],
  ])("%s", (_name, pvc, w, state) => {
    expect(claimReadiness(pvc, w, "c").state).toBe(state);
  });

  it("quotes the driver's message for a terminal failure", () => {
    const pvc = makeClaim("data-web-2", {
      storage: "2Gi",
      capacity: "1Gi",
      allocatedResourceStatus: "ControllerResizeInfeasible",
      conditions: [{ type: "ControllerResizeError", message: "disk limit exceeded" }],
    });
    const r = claimReadiness(pvc, want("2Gi"));
    expect(r).toEqual({
      state: "Failed",
      reason: "ResizeFailed",
      message: "data-web-2: resize is infeasible (ControllerResizeInfeasible): disk limit exceeded",
    });
  });

  it("a terminal failure of the storage wins over a VAC in progress", () => {
    const pvc = makeClaim("c", {
      storage: "2Gi",
      capacity: "1Gi",
      allocatedResourceStatus: "ControllerResizeInfeasible",
      vac: "gold",
      modifyVolumeStatus: { status: "InProgress" },
    });
    expect(claimReadiness(pvc, want("2Gi", "gold")).state).toBe("Failed");
  });
});
