// The simulated controllers move the real status fields, in the real order.
import { describe, expect, it } from "vitest";
import { type SetSpec, SimCluster, statefulSetManifest } from "../../../adapters/sim/cluster.js";
import type { DriverBehaviour } from "../../../adapters/sim/controllers/context.js";
import type { PersistentVolumeClaim, Pod } from "../../../core/kube/k8s.js";

const ns = "default";

async function cluster(driver: DriverBehaviour = { resize: "online" }, spec: Partial<SetSpec> = {}) {
  const c = new SimCluster({ seed: 3 });
  await c.addStorageClass("fast", { allowVolumeExpansion: true, driver });
  await c.addVolumeAttributesClass("gold");
  await c.createStatefulSet(
    statefulSetManifest({
      name: "db",
      replicas: 2,
      templates: [{ name: "data", storage: "10Gi", storageClassName: "fast" }],
      ...spec,
    }),
  );
  return c;
}

const claim = async (c: SimCluster, name: string) =>
  (await c.admin.get("persistentvolumeclaims", ns, name)) as unknown as PersistentVolumeClaim;
const grow = (c: SimCluster, name: string, storage: string) =>
  c.admin.mergePatch(
    "persistentvolumeclaims",
    ns,
    name,
    { spec: { resources: { requests: { storage } } } },
    { fieldManager: "kubectl" },
  );
const conditionTypes = (p: PersistentVolumeClaim) => (p.status?.conditions ?? []).map((x) => x.type);

/** Advance in 50 ms steps (the kubelet's NodeResizeInProgress lasts 100 ms), recording each distinct (statuses, conditions, capacity) state of a claim. */
async function trace(c: SimCluster, name: string, ms: number): Promise<string[]> {
  const seen: string[] = [];
  for (let t = 0; t < ms; t += 50) {
    const p = await claim(c, name);
    const state = `${p.status?.allocatedResourceStatuses?.storage ?? "-"} [${conditionTypes(p).join(",")}] cap=${p.status?.capacity?.storage}`;
    if (seen[seen.length - 1] !== state) seen.push(state);
    c.advance(50);
  }
  return seen;
}

describe("StatefulSet controller", () => {
  it("creates claims <template>-<set>-<ordinal> with the selector labels, then pods, honouring ordinals.start", async () => {
    const c = await cluster(undefined, { replicas: 3, ordinalsStart: 5 });
    const claims = (await c.admin.list("persistentvolumeclaims", ns)).items as unknown as PersistentVolumeClaim[];
    expect(claims.map((p) => p.metadata.name)).toEqual(["data-db-5", "data-db-6", "data-db-7"]);
    expect(claims.every((p) => p.metadata.labels?.app === "db" && p.status?.phase === "Bound")).toBe(true);
    const pods = (await c.admin.list("pods", ns, { labelSelector: "app=db" })).items as unknown as Pod[];
    expect(pods.map((p) => `${p.metadata.name}:${p.status?.phase}`)).toEqual([
      "db-5:Running",
      "db-6:Running",
      "db-7:Running",
    ]);
    expect(pods[0]!.metadata.labels).toMatchObject({
      "statefulset.kubernetes.io/pod-name": "db-5",
      "apps.kubernetes.io/pod-index": "5",
    });
  });

  it("scales down highest first keeping the claims, and back up reusing them", async () => {
    const c = await cluster(undefined, { replicas: 3 });
    await c.admin.mergePatch("statefulsets", ns, "db", { spec: { replicas: 1 } }, { fieldManager: "kubectl" });
    c.advance(60_000);
    expect((await c.admin.list("pods", ns)).items.map((p) => (p.metadata as { name: string }).name)).toEqual(["db-0"]);
    expect((await c.admin.list("persistentvolumeclaims", ns)).items).toHaveLength(3);
    const deletes = c.audit.filter((a) => a.verb === "delete" && a.resource === "pods").map((a) => a.name);
    expect(deletes).toEqual(["db-2", "db-1"]);
    await c.admin.mergePatch("statefulsets", ns, "db", { spec: { replicas: 3 } }, { fieldManager: "kubectl" });
    c.advance(60_000);
    expect((await c.admin.list("pods", ns)).items).toHaveLength(3);
    expect(c.audit.filter((a) => a.verb === "create" && a.resource === "persistentvolumeclaims")).toHaveLength(3);
  });

  it("creates pods one at a time under OrderedReady", async () => {
    const c = new SimCluster({ seed: 4 });
    await c.addStorageClass("fast", { allowVolumeExpansion: true });
    await c.admin.create(
      "statefulsets",
      statefulSetManifest({
        name: "db",
        replicas: 3,
        templates: [{ name: "data", storage: "1Gi", storageClassName: "fast" }],
      }),
      { fieldManager: "kubectl" },
    );
    c.settle();
    expect((await c.admin.list("pods", ns)).items).toHaveLength(1);
    c.advance(60_000);
    expect((await c.admin.list("pods", ns)).items).toHaveLength(3);
  });
});

describe("CSI resizer and kubelet", () => {
  it("online: Resizing/ControllerResizeInProgress → Resizing+FileSystemResizePending/NodeResizePending → NodeResizeInProgress → capacity, cleared", async () => {
    const c = await cluster();
    await grow(c, "data-db-1", "20Gi");
    expect(await trace(c, "data-db-1", 30_000)).toEqual([
      "- [] cap=10Gi",
      "ControllerResizeInProgress [Resizing] cap=10Gi",
      "NodeResizePending [Resizing,FileSystemResizePending] cap=10Gi",
      "NodeResizeInProgress [Resizing,FileSystemResizePending] cap=10Gi",
      "- [] cap=20Gi",
    ]);
    const p = await claim(c, "data-db-1");
    expect(p.status?.allocatedResources).toEqual({ storage: "20Gi" });
    expect(p.status?.allocatedResourceStatuses).toBeUndefined();
  });

  it("offline: refuses while the pod uses the volume (ControllerResizeError), grows once it is gone and finishes at the next mount", async () => {
    const c = await cluster({ resize: "offline", driverName: "offline.csi.example.com" });
    await grow(c, "data-db-1", "20Gi");
    c.advance(60_000);
    let p = await claim(c, "data-db-1");
    expect(p.status?.allocatedResourceStatuses?.storage).toBe("ControllerResizeInProgress");
    const error = p.status?.conditions?.find((x) => x.type === "ControllerResizeError");
    expect(error?.message).toMatch(
      /FailedPrecondition desc = volume pvc-.* is in use by pod db-1; the driver only supports offline expansion/,
    );
    const events = (await c.admin.list("events", ns)).items.filter((e) => e.reason === "VolumeResizeFailed");
    expect(events[0]?.note).toBe(
      "Unable to expand default/data-db-1 because CSI driver offline.csi.example.com only supports offline expansion and volume is currently in-use",
    );
    // Stop the pod: scale down, the resize proceeds; the file system grows when the pod mounts it again.
    await c.admin.mergePatch("statefulsets", ns, "db", { spec: { replicas: 1 } }, { fieldManager: "kubectl" });
    c.advance(60_000);
    p = await claim(c, "data-db-1");
    expect(p.status?.allocatedResourceStatuses?.storage).toBe("NodeResizePending");
    expect(conditionTypes(p)).toEqual(["Resizing", "FileSystemResizePending"]);
    await c.admin.mergePatch("statefulsets", ns, "db", { spec: { replicas: 2 } }, { fieldManager: "kubectl" });
    c.advance(60_000);
    p = await claim(c, "data-db-1");
    expect(p.status?.capacity?.storage).toBe("20Gi");
    expect(p.status?.conditions).toBeUndefined();
  });

  it("infeasible: ControllerResizeInfeasible with Resizing and the driver's message, until a new request", async () => {
    const c = await cluster({ resize: "infeasible" });
    await grow(c, "data-db-0", "20Gi");
    c.advance(60_000);
    const p = await claim(c, "data-db-0");
    expect(p.status?.allocatedResourceStatuses?.storage).toBe("ControllerResizeInfeasible");
    expect(p.status?.capacity?.storage).toBe("10Gi");
    expect(conditionTypes(p)).toEqual(["Resizing", "ControllerResizeError"]);
    expect(p.status?.conditions?.find((x) => x.type === "ControllerResizeError")?.message).toBe(
      "failed to expand pvc with rpc error: code = OutOfRange desc = requested size 20Gi is not supported by the backend of class fast",
    );
    const failed = (await c.admin.list("events", ns)).items.filter((e) => e.reason === "VolumeResizeFailed");
    expect(failed.map((e) => e.note)).toEqual([
      `resize volume "pvc-${p.metadata.uid}" by resizer "sim.csi.claimstep.io" failed: rpc error: code = OutOfRange desc = requested size 20Gi is not supported by the backend of class fast`,
    ]);
  });

  it("flaky: transient failures are events only, then the resize succeeds", async () => {
    const c = await cluster({ resize: "flaky", flakyFailures: 2 });
    await grow(c, "data-db-0", "20Gi");
    c.advance(120_000);
    expect((await claim(c, "data-db-0")).status?.capacity?.storage).toBe("20Gi");
    const failed = (await c.admin.list("events", ns)).items.filter((e) => e.reason === "VolumeResizeFailed");
    expect(failed).toHaveLength(1);
    expect(failed[0]!.series).toMatchObject({ count: 2 });
  });

  it("block volumes finish without a node step", async () => {
    const c = new SimCluster({ seed: 5 });
    await c.addStorageClass("fast", { allowVolumeExpansion: true });
    await c.createStatefulSet(
      statefulSetManifest({
        name: "db",
        replicas: 1,
        templates: [{ name: "raw", storage: "1Gi", storageClassName: "fast", volumeMode: "Block" }],
      }),
    );
    await grow(c, "raw-db-0", "2Gi");
    expect(await trace(c, "raw-db-0", 20_000)).toEqual([
      "- [] cap=1Gi",
      "ControllerResizeInProgress [Resizing] cap=1Gi",
      "- [] cap=2Gi",
    ]);
  });
});

describe("VolumeAttributesClass modification", () => {
  const modify = (c: SimCluster, vac: string) =>
    c.admin.mergePatch(
      "persistentvolumeclaims",
      ns,
      "data-db-0",
      { spec: { volumeAttributesClassName: vac } },
      { fieldManager: "kubectl" },
    );

  it("ModifyingVolume + modifyVolumeStatus InProgress → currentVolumeAttributesClassName", async () => {
    const c = await cluster();
    await modify(c, "gold");
    c.advance(1_000);
    let p = await claim(c, "data-db-0");
    expect(p.status?.modifyVolumeStatus).toEqual({ targetVolumeAttributesClassName: "gold", status: "InProgress" });
    expect(p.status?.conditions?.find((x) => x.type === "ModifyingVolume")?.message).toBe(
      'Modifying volume to "gold" is in progress.',
    );
    c.advance(30_000);
    p = await claim(c, "data-db-0");
    expect(p.status?.currentVolumeAttributesClassName).toBe("gold");
    expect(p.status?.modifyVolumeStatus).toBeUndefined();
    expect(p.status?.conditions).toBeUndefined();
  });

  it("a missing class is accepted by the API server and stays Pending, even once it exists, until the spec's class changes", async () => {
    const c = await cluster();
    await modify(c, "platinum");
    c.advance(30_000);
    expect((await claim(c, "data-db-0")).status?.modifyVolumeStatus).toEqual({ status: "Pending" });
    await c.addVolumeAttributesClass("platinum");
    c.advance(30 * 60_000);
    expect((await claim(c, "data-db-0")).status?.modifyVolumeStatus).toEqual({ status: "Pending" });
    await modify(c, "gold");
    c.advance(30_000);
    await modify(c, "platinum");
    c.advance(30_000);
    const p = await claim(c, "data-db-0");
    expect(p.status?.currentVolumeAttributesClassName).toBe("platinum");
    expect(p.status?.modifyVolumeStatus).toBeUndefined();
  });

  it("a spec back at the class in use while a modification runs: the running one ends, then the spec's class is applied again", async () => {
    const c = await cluster();
    await modify(c, "gold");
    c.advance(60_000);
    await c.addVolumeAttributesClass("silver");
    await modify(c, "silver");
    c.advance(1_000);
    expect((await claim(c, "data-db-0")).status?.modifyVolumeStatus).toEqual({
      targetVolumeAttributesClassName: "silver",
      status: "InProgress",
    });
    await modify(c, "gold");
    c.advance(7_000);
    let p = await claim(c, "data-db-0");
    expect(p.status?.currentVolumeAttributesClassName).toBe("silver");
    expect(p.status?.modifyVolumeStatus).toEqual({ targetVolumeAttributesClassName: "gold", status: "InProgress" });
    c.advance(30_000);
    p = await claim(c, "data-db-0");
    expect(p.status?.currentVolumeAttributesClassName).toBe("gold");
    expect(p.status?.modifyVolumeStatus).toBeUndefined();
    expect(p.status?.conditions).toBeUndefined();
  });

  it("an infeasible modification is reported as such, and not retried while the spec names that class", async () => {
    const c = await cluster({ resize: "online", modify: "infeasible" });
    await modify(c, "gold");
    c.advance(30_000);
    const p = await claim(c, "data-db-0");
    expect(p.status?.modifyVolumeStatus).toEqual({ targetVolumeAttributesClassName: "gold", status: "Infeasible" });
    expect(p.status?.conditions?.map((x) => [x.type, x.reason, x.message])).toEqual([
      ["ModifyingVolume", undefined, 'Modifying volume to "gold" failed. Waiting for retry.'],
      [
        "ModifyVolumeError",
        "InvalidArgument",
        `parameters of VolumeAttributesClass gold are not supported for volume pvc-${p.metadata.uid}`,
      ],
    ]);
    const writes = c.audit.length;
    c.advance(60 * 60_000);
    expect(c.audit.slice(writes).filter((e) => e.resource === "persistentvolumeclaims")).toEqual([]);
  });

  it("a driver that accepts some parameters only refuses a class with others (InvalidArgument invalid parameters)", async () => {
    const c = await cluster({ resize: "online", mutableParameters: ["iops"] });
    await c.addVolumeAttributesClass("odd", { tier: "gold", iops: "3000", burst: "on" });
    await modify(c, "odd");
    c.advance(30_000);
    const p = await claim(c, "data-db-0");
    expect(p.status?.modifyVolumeStatus).toEqual({ targetVolumeAttributesClassName: "odd", status: "Infeasible" });
    expect(p.status?.conditions?.find((x) => x.type === "ModifyVolumeError")?.message).toBe(
      "invalid parameters: [burst tier]",
    );
    await modify(c, "gold");
    c.advance(30_000);
    expect((await claim(c, "data-db-0")).status?.currentVolumeAttributesClassName).toBe("gold");
  });
});
