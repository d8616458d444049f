// Issue 36 points 5 and 6: what the storage drivers people run can and cannot do, predicted from
// what the snapshot holds rather than waited on for ever.
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import { revisionOf } from "../../../core/kube/revision.js";
import { planStep } from "../../../core/plan/plan.js";
import { resizeBlockedByPod } from "../../../core/plan/readiness.js";
import type { Decision, Snapshot } from "../../../core/types.js";
import {
  type ClaimSpec,
  claimsFor,
  DIRECT,
  makeClaim,
  makeSet,
  snapshot,
  type TemplateSpec,
  template,
} from "../builders.js";

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

describe("issue 36 point 5: a driver with no resizer or no ControllerModifyVolume", () => {
  const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000).toISOString();
  const world = (desired: TemplateSpec[], claim: ClaimSpec, waitedMinutes: number) => {
    const set = makeSet({ desired });
    const revision = revisionOf(desired.map(template) as never);
    set.metadata.annotations![Keys.status] = JSON.stringify({
      phase: "Waiting",
      reason: "ClaimResizing",
      message: "data-web-2: waiting for the resizer to pick up the new request",
      ordinal: 2,
      revision,
      counts: { updated: 0, inFlight: 1, pending: 2, blocked: 0, total: 3 },
      since: minutesAgo(waitedMinutes),
      observedAt: minutesAgo(1),
    });
    const claims = claimsFor(set, claim.vac ? { vac: "silver", currentVac: "silver" } : {});
    claims[2] = makeClaim("data-web-2", { ...claim, revision });
    return snapshot(set, claims, {
      volumeAttributesClasses: ["gold", "silver"].map((name) => ({
        metadata: { name },
        driverName: "example.com/fake",
      })),
    });
  };
  const grow = [{ name: "data", storage: "2Gi" }];
  const grown: ClaimSpec = { storage: "2Gi", capacity: "1Gi" };

  it("local-path: 2Gi asked 11 minutes ago, nothing picked it up → Blocked/DriverNotResponding with what to check", () => {
    const d = plan(world(grow, grown, 11));
    expect(d).toMatchObject({ phase: "Blocked", reason: "DriverNotResponding" });
    expect(d.action).toBeUndefined();
    expect(d.message).toBe(
      "data-web-2 requests 2Gi but has stayed at 1Gi for more than 10 minutes with no sign of a resizer (no Resizing condition, no allocatedResourceStatuses). StorageClass fast allows expansion, but example.com/fake may have no resizer (local-path has none). Check: kubectl get csidriver example.com/fake (none: not a CSI driver, nothing expands its volumes); that the driver's controller runs a csi-resizer sidecar and what its logs say; kubectl -n default describe pvc data-web-2 (ExternalExpanding, VolumeResizeFailed events). The rollout goes on by itself once the claim's status moves; to stop waiting, set the template back to what the claim has",
    );
    expect(d.events[0]).toMatchObject({ type: "Warning", reason: "DriverNotResponding" });
  });

  it("once blocked it stays so (no flapping) while the claim shows nothing", () => {
    const s = world(grow, grown, 11);
    const first = plan(s);
    s.statefulSet.metadata.annotations![Keys.status] = first.setAnnotations![Keys.status]!;
    const again = planStep(s, new Date(NOW.getTime() + 30_000), DIRECT);
    expect(again).toMatchObject({ phase: "Blocked", reason: "DriverNotResponding", message: first.message });
    expect(again.setAnnotations?.[Keys.status]).toBeUndefined();
  });

  it("before 10 minutes it waits", () => {
    expect(plan(world(grow, grown, 9))).toMatchObject({ phase: "Waiting", reason: "ClaimResizing" });
  });

  it("a resizer at work (Resizing condition, or an allocation status) is waited for, however long", () => {
    expect(plan(world(grow, { ...grown, conditions: [{ type: "Resizing" }] }, 60)).reason).toBe("ClaimResizing");
    expect(plan(world(grow, { ...grown, allocatedResourceStatus: "ControllerResizeInProgress" }, 60)).reason).toBe(
      "ClaimResizing",
    );
  });

  it("ceph-csi RBD / TopoLVM: a class asked, no modifyVolumeStatus after 10 minutes → Blocked naming ControllerModifyVolume", () => {
    const d = plan(world([{ name: "data", storage: "1Gi", vac: "gold" }], { vac: "gold", currentVac: "silver" }, 15));
    expect(d).toMatchObject({ phase: "Blocked", reason: "DriverNotResponding" });
    expect(d.message).toContain(
      "data-web-2 asks for VolumeAttributesClass gold but for more than 10 minutes nothing has started the modification (no modifyVolumeStatus). example.com/fake may not support ControllerModifyVolume (ceph-csi RBD and TopoLVM do not), or its csi-resizer runs without --feature-gates=VolumeAttributesClass=true",
    );
  });

  it("a modification the resizer took up (InProgress) is waited for", () => {
    const d = plan(
      world(
        [{ name: "data", storage: "1Gi", vac: "gold" }],
        {
          vac: "gold",
          currentVac: "silver",
          modifyVolumeStatus: { status: "InProgress", targetVolumeAttributesClassName: "gold" },
        },
        60,
      ),
    );
    expect(d.reason).toBe("ClaimResizing");
  });
});

describe("issue 36 point 5: AWS EBS's per-volume modification limit", () => {
  const ec2 =
    'rpc error: code = Internal desc = Could not resize volume "vol-0abc": operation error EC2: ModifyVolume, https response error StatusCode: 400, RequestID: 1f2e, api error VolumeModificationRateExceeded: You\'ve reached the maximum modification rate per volume limit. Wait at least 6 hours between modifications per EBS volume.';

  it("a resize refused within the cooldown: Waiting, EC2's text kept and said plainly", () => {
    const desired = [{ name: "data", storage: "2Gi" }];
    const set = makeSet({ desired });
    const claims = claimsFor(set);
    claims[2] = makeClaim("data-web-2", {
      storage: "2Gi",
      capacity: "1Gi",
      revision: revisionOf(desired.map(template) as never),
      allocated: "2Gi",
      allocatedResourceStatus: "ControllerResizeInProgress",
      conditions: [
        { type: "Resizing" },
        { type: "ControllerResizeError", message: `failed to expand pvc with ${ec2}` },
      ],
    });
    const d = plan(snapshot(set, claims));
    expect(d.phase).toBe("Waiting");
    expect(d.message).toContain("Wait at least 6 hours between modifications per EBS volume.");
    expect(d.message).toContain(
      "AWS EBS allows a limited number of modifications per volume (EC2 ModifyVolume's cooldown, VolumeModificationRateExceeded): the driver tries again by itself",
    );
  });

  it("other driver errors are passed on as they are", () => {
    const desired = [{ name: "data", storage: "2Gi" }];
    const set = makeSet({ desired });
    const claims = claimsFor(set);
    claims[2] = makeClaim("data-web-2", {
      storage: "2Gi",
      capacity: "1Gi",
      revision: revisionOf(desired.map(template) as never),
      allocated: "2Gi",
      allocatedResourceStatus: "ControllerResizeInProgress",
      conditions: [
        { type: "ControllerResizeError", message: "failed to expand pvc with rpc error: code = Internal desc = boom" },
      ],
    });
    const d = plan(snapshot(set, claims));
    expect(d.message).toContain("boom");
    expect(d.message).not.toContain("AWS EBS");
  });
});
