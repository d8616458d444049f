// Issue 36 points 5 and 6: what the storage drivers people run can and cannot do, predicted from
// what the snapshot holds rather than waited on for ever.
import { describe, expect, it } from "vitest";
import { planStep } from "../../core/plan.js";
import { resizeBlockedByPod } from "../../core/readiness.js";
import type { Decision, Snapshot } from "../../core/types.js";
import { claimsFor, DIRECT, makeClaim, makeSet, snapshot } from "./builders.js";

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

describe("issue 36 point 6: what the API server does not serve or drops", () => {
  it("a VAC change on a cluster without the API names the version and the flags it needs", () => {
    const desired = [{ name: "data", storage: "1Gi", vac: "gold" }];
    const set = makeSet({ desired });
    const d = plan(snapshot(set, claimsFor(set), { volumeAttributesClasses: undefined }));
    expect(d).toMatchObject({ phase: "Blocked", reason: "VolumeAttributesClassNotFound" });
    expect(d.message).toContain("storage.k8s.io/v1 and v1beta1 both answer 404");
    expect(d.message).toContain("GA and on by default from Kubernetes 1.34");
    expect(d.message).toContain(
      "--feature-gates=VolumeAttributesClass=true --runtime-config=storage.k8s.io/v1beta1=true",
    );
  });

  const growing = () => {
    const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }] });
    // As the API server returns it with MaxUnavailableStatefulSet off: no maxUnavailable.
    set.spec.updateStrategy = { type: "RollingUpdate", rollingUpdate: { partition: 0 } };
    delete (set.metadata as Record<string, unknown>).managedFields; // the fixture's own the field
    return { set, s: snapshot(set, claimsFor(set)) };
  };
  const lastApplied = (maxUnavailable: unknown) =>
    JSON.stringify({ spec: { updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable } } } });

  it("maxUnavailable 3 in kubectl's last-applied manifest but absent from the set: said in the message", () => {
    const { set, s } = growing();
    set.metadata.annotations!["kubectl.kubernetes.io/last-applied-configuration"] = lastApplied(3);
    const d = plan(s);
    expect(d.reason).toBe("ClaimUpdated");
    expect(d.message).toContain(
      "spec.updateStrategy.rollingUpdate.maxUnavailable 3 was asked for (kubectl.kubernetes.io/last-applied-configuration) but the API server dropped it: its MaxUnavailableStatefulSet feature gate is off",
    );
    expect(d.status.message).toContain("MaxUnavailableStatefulSet");
  });

  it("…and from a managedFields entry that owns the field (server-side apply)", () => {
    const { set, s } = growing();
    (set.metadata as Record<string, unknown>).managedFields = [
      {
        manager: "flux",
        operation: "Apply",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:spec": { "f:updateStrategy": { "f:rollingUpdate": { "f:maxUnavailable": {} } } } },
      },
    ];
    expect(plan(s).message).toContain("was asked for (managedFields (flux)) but the API server dropped it");
  });

  it("nothing said when the set has it, when 1 was asked, or when nothing asked for it", () => {
    const { set, s } = growing();
    expect(plan(s).message).not.toContain("MaxUnavailableStatefulSet");
    set.metadata.annotations!["kubectl.kubernetes.io/last-applied-configuration"] = lastApplied(1);
    expect(plan(s).message).not.toContain("MaxUnavailableStatefulSet");
    set.metadata.annotations!["kubectl.kubernetes.io/last-applied-configuration"] = lastApplied("50%");
    set.spec.updateStrategy = { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "50%" } };
    expect(plan(s).message).not.toContain("MaxUnavailableStatefulSet");
  });
});

describe("issue 36 point 5: offline-only expansion, as the external-resizer and the drivers say it", () => {
  const erroring = (message: string) =>
    makeClaim("data-web-2", {
      storage: "2Gi",
      capacity: "1Gi",
      conditions: [{ type: "ControllerResizeError", message }],
    });

  it("FailedPrecondition (the resizer's inUseError), whatever the driver's words", () => {
    expect(
      resizeBlockedByPod(
        erroring(
          "failed to expand pvc with rpc error: code = FailedPrecondition desc = volume vol-0abc is attached to i-0123; the driver supports offline expansion only",
        ),
      ),
    ).toBe(true);
  });

  it("the resizer's own wording (its VolumeResizeFailed event)", () => {
    expect(
      resizeBlockedByPod(
        erroring(
          "Unable to expand default/data-web-2 because CSI driver ebs.csi.aws.com only supports offline expansion and volume is currently in-use",
        ),
      ),
    ).toBe(true);
  });

  it("Azure Disk without LiveResize (code Internal)", () => {
    expect(
      resizeBlockedByPod(
        erroring(
          "failed to expand pvc with rpc error: code = Internal desc = failed to resize disk(/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/disks/pvc-1) with error(azureDisk - disk resize is only supported on Unattached disk, current disk state: Attached, already attached to /subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/node-1)",
        ),
      ),
    ).toBe(true);
  });

  it("any other driver error is not", () => {
    expect(
      resizeBlockedByPod(
        erroring("failed to expand pvc with rpc error: code = Internal desc = could not modify volume: quota exceeded"),
      ),
    ).toBe(false);
    expect(
      resizeBlockedByPod(erroring("failed to expand pvc with rpc error: code = OutOfRange desc = 20Gi above 8Gi")),
    ).toBe(false);
  });

  it("an older server (no allocatedResourceStatuses): a FailedPrecondition claim is no failed expansion, nothing blocks", () => {
    const desired = [{ name: "data", storage: "1Gi" }];
    const set = makeSet({ desired });
    const claims = claimsFor(set);
    claims[2] = makeClaim("data-web-2", {
      storage: "2Gi",
      capacity: "1Gi",
      conditions: [
        {
          type: "ControllerResizeError",
          message: "failed to expand pvc with rpc error: code = FailedPrecondition desc = volume is attached",
        },
      ],
    });
    expect(plan(snapshot(set, claims)).reason).not.toBe("ResizeFailed");
  });
});
