// Recovering from a failed expansion (docs/design.md "Recovering from a failed expansion"): the 1.34
// API server accepts a lowered request only strictly above status.capacity, the older one refuses
// every decrease; the resizer retries a lowered request after an infeasible one.
import { describe, expect, it } from "vitest";
import { SimCluster, statefulSetManifest } from "../../../adapters/sim/cluster.js";
import type { PersistentVolumeClaim } from "../../../core/kube/k8s.js";
import { expectFixture, fixture, fixtureCluster, refusal } from "./helpers.js";

const ns = "default";
const claim = async (c: SimCluster, name: string) =>
  (await c.admin.get("persistentvolumeclaims", ns, name)) as unknown as PersistentVolumeClaim;
const request = (c: SimCluster, name: string, storage: string, fieldManager = "curl") =>
  c.admin.mergePatch(
    "persistentvolumeclaims",
    ns,
    name,
    { spec: { resources: { requests: { storage } } } },
    { fieldManager },
  );

/** The fixtures' cluster as a 1.34 server whose driver cannot grow `fast` volumes (so capacity stays 1Gi). */
async function recoveringCluster(expansionRecovery = true): Promise<SimCluster> {
  const c = await fixtureCluster({ expansionRecovery });
  c.setDriver("fast", { resize: "infeasible" });
  await request(c, "data-web-0", "2Gi");
  return c;
}

describe("lowering a request (RecoverVolumeExpansionFailure) answers like fixtures/apiserver/", () => {
  it("refuses a decrease to status.capacity with pvc-decrease-to-capacity.txt", async () => {
    const c = await recoveringCluster();
    expectFixture(await refusal(request(c, "data-web-0", "1Gi")), "pvc-decrease-to-capacity.txt");
    expectFixture(await refusal(request(c, "data-web-0", "512Mi")), "pvc-decrease-to-capacity.txt");
  });

  it("accepts a decrease strictly above status.capacity as pvc-decrease-above-capacity.txt (merge patch) and pvc-apply-decrease-above-capacity.txt (apply)", async () => {
    const c = await recoveringCluster();
    const patched = (await request(c, "data-web-0", "2Gi")) as unknown as PersistentVolumeClaim;
    expect(patched.spec.resources?.requests?.storage).toBe(
      (fixture("pvc-decrease-above-capacity.txt").body.spec as PersistentVolumeClaim["spec"]).resources?.requests
        ?.storage,
    );
    const bigger = await request(c, "data-web-0", "3Gi");
    expect(bigger).toBeDefined();
    const lowered = (await request(c, "data-web-0", "2Gi")) as unknown as PersistentVolumeClaim;
    expect(lowered.spec.resources?.requests?.storage).toBe("2Gi");
    expect(lowered.status?.capacity).toEqual({ storage: "1Gi" });
    const manifest = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "data-web-0", namespace: ns },
      spec: { resources: { requests: { storage: "1536Mi" } } },
    };
    const applied = (await c.admin.applyClaim(manifest, {
      fieldManager: "claimstep",
      force: true,
    })) as unknown as PersistentVolumeClaim;
    const want = fixture("pvc-apply-decrease-above-capacity.txt");
    expect(want.code).toBe(200);
    expect(applied.spec.resources).toEqual((want.body.spec as PersistentVolumeClaim["spec"]).resources);
    expect(applied.status?.capacity).toEqual((want.body.status as PersistentVolumeClaim["status"])!.capacity);
  });

  it("the older server (no RecoverVolumeExpansionFailure) refuses every decrease with pvc-shrink.txt, even above capacity", async () => {
    const c = await recoveringCluster(false);
    expectFixture(await refusal(request(c, "data-web-0", "500Mi")), "pvc-shrink.txt");
    const err = await refusal(request(c, "data-web-0", "1536Mi"));
    expect(err.code).toBe(422);
    expect(err.message).toContain("field can not be less than previous value");
  });

  it("the v1.24 fixtures' profile is the older server by default; a default cluster is 1.34", async () => {
    const old = await fixtureCluster();
    await request(old, "data-web-0", "2Gi");
    expect((await refusal(request(old, "data-web-0", "1536Mi"))).message).toContain("previous value");
  });
});

describe("the older server's status", () => {
  it("reports no allocatedResources nor allocatedResourceStatuses (the failure shows as ControllerResizeError only)", async () => {
    const c = await recoveringCluster(false);
    c.advance(5 * 60_000);
    const p = await claim(c, "data-web-0");
    expect(p.status?.allocatedResourceStatuses).toBeUndefined();
    expect(p.status?.allocatedResources).toBeUndefined();
    expect(p.status?.conditions?.find((x) => x.type === "ControllerResizeError")?.message).toMatch(/not supported/);
    const recent = await recoveringCluster(true);
    recent.advance(5 * 60_000);
    expect((await claim(recent, "data-web-0")).status?.allocatedResourceStatuses).toEqual({
      storage: "ControllerResizeInfeasible",
    });
  });
});

describe("the resizer after a lowered request", () => {
  async function cluster() {
    const c = new SimCluster({ seed: 3 });
    await c.addStorageClass("fast", { allowVolumeExpansion: true, driver: { resize: "online", maxStorage: "100Gi" } });
    await c.createStatefulSet(
      statefulSetManifest({
        name: "db",
        replicas: 1,
        templates: [{ name: "data", storage: "10Gi", storageClassName: "fast" }],
      }),
    );
    return c;
  }

  it("marks a request above the driver's maxStorage infeasible, then retries a lowered one, lowering allocatedResources, and grows to it", async () => {
    const c = await cluster();
    await request(c, "data-db-0", "1Ti");
    c.advance(60_000);
    let p = await claim(c, "data-db-0");
    expect(p.status?.allocatedResourceStatuses).toEqual({ storage: "ControllerResizeInfeasible" });
    expect(p.status?.allocatedResources).toEqual({ storage: "1Ti" });
    expect(p.status?.capacity).toEqual({ storage: "10Gi" });
    expect(p.status?.conditions?.find((x) => x.type === "ControllerResizeError")?.message).toMatch(
      /^failed to expand pvc with rpc error: code = OutOfRange desc = Requested capacity 1099511627776 exceeds maximum allowed 107374182400$/,
    );
    // Nothing happens until the request changes.
    c.advance(10 * 60_000);
    expect((await claim(c, "data-db-0")).status?.allocatedResourceStatuses).toEqual({
      storage: "ControllerResizeInfeasible",
    });
    await request(c, "data-db-0", "20Gi");
    c.advance(60_000);
    p = await claim(c, "data-db-0");
    expect(p.status?.capacity).toEqual({ storage: "20Gi" });
    expect(p.status?.allocatedResources).toEqual({ storage: "20Gi" });
    expect(p.status?.allocatedResourceStatuses).toBeUndefined();
    expect(p.status?.conditions).toBeUndefined();
  });

  it("keeps allocatedResources when the expansion succeeded on the controller (NodeResizePending): a lower request does not undo it", async () => {
    const c = await cluster();
    await c.admin.mergePatch("statefulsets", ns, "db", { spec: { replicas: 0 } }, { fieldManager: "kubectl" });
    c.advance(60_000);
    await request(c, "data-db-0", "50Gi");
    c.advance(60_000);
    let p = await claim(c, "data-db-0");
    expect(p.status?.allocatedResourceStatuses).toEqual({ storage: "NodeResizePending" });
    await request(c, "data-db-0", "30Gi");
    c.advance(60_000);
    p = await claim(c, "data-db-0");
    expect(p.status?.allocatedResources).toEqual({ storage: "50Gi" });
    expect(p.status?.allocatedResourceStatuses).toEqual({ storage: "NodeResizePending" });
  });
});
