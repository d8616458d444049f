// claimstep's step runner on the simulated cluster through its StateReader and writers.
import { describe, expect, it } from "vitest";
import { fitNote } from "../../../adapters/kube/events.js";
import { claimTemplate, SimCluster, statefulSetManifest } from "../../../adapters/sim/cluster.js";
import type { Json } from "../../../adapters/sim/store.js";
import type { StateReader } from "../../../core/ports.js";
import type { Snapshot } from "../../../core/types.js";
import { runStep } from "../../../functions/step.js";

const ref = { namespace: "default", name: "db" };

async function cluster(opts: { storageClassName?: string } = {}) {
  const c = new SimCluster({ seed: 9 });
  await c.addStorageClass("fast", { allowVolumeExpansion: true });
  await c.addStorageClass("slow", { allowVolumeExpansion: true });
  await c.createStatefulSet(
    statefulSetManifest({
      name: "db",
      replicas: 3,
      templates: [{ name: "data", storage: "10Gi", storageClassName: "fast" }],
    }),
  );
  const desired = [claimTemplate({ name: "data", storage: "20Gi", storageClassName: opts.storageClassName ?? "fast" })];
  await c.admin.mergePatch(
    "statefulsets",
    "default",
    "db",
    { metadata: { annotations: { "claimstep.io/volume-claim-templates": JSON.stringify(desired) } } },
    { fieldManager: "kubectl" },
  );
  return c;
}

const step = (c: SimCluster, reader: StateReader = c.reader) =>
  runStep({ reader, writers: c.writers, ref, now: c.now() });
const claimstepWrites = (c: SimCluster) => c.audit.filter((a) => a.actor === "claimstep" && a.outcome === "ok").length;
const events = async (c: SimCluster) =>
  (await c.admin.list("events", "default")).items.filter((e) => e.reportingController === "claimstep.io/stepper");

describe("runStep on the simulated cluster", () => {
  it("rolls out to Complete, records events, and then writes nothing", async () => {
    const c = await cluster();
    let phase = "";
    for (let i = 0; i < 50 && phase !== "Complete"; i++) {
      phase = (await step(c)).decision.phase;
      c.advance(5_000);
    }
    expect(phase).toBe("Complete");
    const claims = (await c.admin.list("persistentvolumeclaims", "default")).items;
    expect(claims.map((p) => ((p.status as Json).capacity as Json).storage)).toEqual(["20Gi", "20Gi", "20Gi"]);
    const set = await c.admin.get("statefulsets", "default", "db");
    const annotations = (set.metadata as { annotations: Record<string, string> }).annotations;
    expect(annotations["claimstep.io/current-revision"]).toBe(annotations["claimstep.io/update-revision"]);
    expect((await events(c)).map((e) => e.reason)).toContain("RolloutComplete");
    const before = c.audit.length;
    const again = await step(c);
    expect(again.decision.phase).toBe("Complete");
    expect(c.audit.slice(before).filter((a) => a.actor === "claimstep")).toEqual([]);
  });

  it("de-duplicates a repeated event by (reason, note), raising series.count", async () => {
    const c = await cluster({ storageClassName: "slow" });
    for (let i = 0; i < 3; i++) {
      const r = await step(c);
      expect(r.decision.reason).toBe("StorageClassMismatch");
    }
    const mismatch = (await events(c)).filter((e) => e.reason === "StorageClassMismatch");
    expect(mismatch).toHaveLength(1);
    expect(mismatch[0]!.series).toMatchObject({ count: 3 });
    expect(mismatch[0]!.regarding).toMatchObject({ kind: "StatefulSet", name: "db" });
    expect(c.audit.filter((a) => a.actor === "claimstep" && a.resource === "persistentvolumeclaims")).toEqual([]);
  });

  it("makes the loser of a race get a 409 and change nothing", async () => {
    const c = await cluster();
    const stale: Snapshot = await c.reader.load(ref);
    const first = await step(c);
    expect(first.outcome.kind).toBe("applied");
    const writes = claimstepWrites(c);
    const second = await step(c, { load: async () => stale });
    expect(second.outcome.kind).toBe("retry");
    expect(second.outcome.kind === "retry" && second.outcome.error.code).toBe(409);
    expect(claimstepWrites(c)).toBe(writes);
  });

  it("keeps event notes within the API server's 1 kB limit", () => {
    const long = "é".repeat(800);
    const bounded = fitNote(long);
    expect(new TextEncoder().encode(bounded).length).toBeLessThanOrEqual(1024);
    expect(bounded.endsWith("...")).toBe(true);
    expect(fitNote("short")).toBe("short");
  });
});
