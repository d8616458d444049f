// Issue 36 point 5 on the simulated cluster: a class whose driver has no resizer (local-path) or
// no ControllerModifyVolume (ceph-csi RBD, TopoLVM) leaves the claim's status untouched; claimstep
// stops waiting after 10 minutes (Blocked/DriverNotResponding) and goes on once the driver works.
import { describe, expect, it } from "vitest";
import { claimTemplate, SimCluster, statefulSetManifest } from "../../../adapters/sim/cluster.js";
import type { DriverBehaviour } from "../../../adapters/sim/controllers/context.js";
import { runStep } from "../../../functions/step.js";

const ref = { namespace: "default", name: "db" };

async function cluster(driver: DriverBehaviour, desired: { storage: string; vac?: string }) {
  const c = new SimCluster({ seed: 11 });
  await c.addStorageClass("fast", { allowVolumeExpansion: true, driver });
  await c.addVolumeAttributesClass("silver");
  await c.addVolumeAttributesClass("gold");
  await c.createStatefulSet(
    statefulSetManifest({
      name: "db",
      replicas: 2,
      templates: [{ name: "data", storage: "10Gi", storageClassName: "fast" }],
    }),
  );
  const templates = [
    {
      ...claimTemplate({ name: "data", storage: desired.storage, storageClassName: "fast" }),
      ...(desired.vac ? {} : {}),
    },
  ];
  if (desired.vac) (templates[0]!.spec as Record<string, unknown>).volumeAttributesClassName = desired.vac;
  await c.admin.mergePatch(
    "statefulsets",
    "default",
    "db",
    { metadata: { annotations: { "claimstep.io/volume-claim-templates": JSON.stringify(templates) } } },
    { fieldManager: "kubectl" },
  );
  return c;
}

const stepFor = async (c: SimCluster, minutes: number) => {
  let last = await runStep({ reader: c.reader, writers: c.writers, ref, now: c.now() });
  for (let i = 0; i < minutes * 2; i++) {
    c.advance(30_000);
    last = await runStep({ reader: c.reader, writers: c.writers, ref, now: c.now() });
  }
  return last.decision;
};
const claimWrites = (c: SimCluster) =>
  c.audit.filter((a) => a.actor === "claimstep" && a.outcome === "ok" && a.resource === "persistentvolumeclaims");

describe("issue 36 point 5: drivers that never take a claim's change up", () => {
  it("no resizer: Waiting, then Blocked/DriverNotResponding after 10 minutes; one claim written; goes on once a resizer works", async () => {
    const c = await cluster({ resize: "none" }, { storage: "20Gi" });
    expect((await stepFor(c, 5)).reason).toBe("ClaimResizing");
    const d = await stepFor(c, 7);
    expect(d).toMatchObject({ phase: "Blocked", reason: "DriverNotResponding" });
    expect(d.message).toContain("data-db-1 requests 20Gi but has stayed at 10Gi");
    expect(d.message).toContain("kubectl get csidriver sim.csi.claimstep.io");
    expect(claimWrites(c)).toHaveLength(1);
    c.setDriver("fast", { resize: "online" });
    let phase = "";
    for (let i = 0; i < 60 && phase !== "Complete"; i++) {
      c.advance(5_000);
      phase = (await runStep({ reader: c.reader, writers: c.writers, ref, now: c.now() })).decision.phase;
    }
    expect(phase).toBe("Complete");
  });

  it("no ControllerModifyVolume: the class is written, nothing answers, Blocked after 10 minutes", async () => {
    const c = await cluster({ resize: "online", modify: "none" }, { storage: "10Gi", vac: "gold" });
    const d = await stepFor(c, 12);
    expect(d).toMatchObject({ phase: "Blocked", reason: "DriverNotResponding" });
    expect(d.message).toContain("data-db-1 asks for VolumeAttributesClass gold but for");
    expect(d.message).toContain("may not support ControllerModifyVolume (ceph-csi RBD and TopoLVM do not)");
    const pvc = c.get("persistentvolumeclaims", "default", "data-db-1") as unknown as {
      status: Record<string, unknown>;
    };
    expect(pvc.status.modifyVolumeStatus).toBeUndefined();
  });
});

describe("issue 36 point 5: AWS EBS's modification cooldown", () => {
  it("a second growth within 6 hours: the resizer's ControllerResizeError carries EC2's text; claimstep waits and says it plainly", async () => {
    const c = await cluster(
      { resize: "online", nodeExpansion: "none", modificationCooldownMs: 6 * 3_600_000 },
      {
        storage: "20Gi",
      },
    );
    let d = await stepFor(c, 5);
    expect(d.phase).toBe("Complete");
    const templates = [claimTemplate({ name: "data", storage: "30Gi", storageClassName: "fast" })];
    await c.admin.mergePatch(
      "statefulsets",
      "default",
      "db",
      { metadata: { annotations: { "claimstep.io/volume-claim-templates": JSON.stringify(templates) } } },
      { fieldManager: "kubectl" },
    );
    d = await stepFor(c, 2);
    expect(d.phase).toBe("Waiting");
    expect(d.message).toContain(
      "VolumeModificationRateExceeded: You've reached the maximum modification rate per volume limit",
    );
    expect(d.message).toContain("AWS EBS allows a limited number of modifications per volume");
    const events = (await c.admin.list("events", "default")).items.filter((e) => e.reason === "VolumeResizeFailed");
    expect(String(events[0]?.note)).toContain("Wait at least 6 hours between modifications per EBS volume.");
    // After the cooldown the driver's retry succeeds.
    c.advance(6 * 3_600_000);
    expect((await stepFor(c, 5)).phase).toBe("Complete");
  });
});
