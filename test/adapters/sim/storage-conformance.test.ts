// The simulated storage controllers answer as the real ones (issue 34): the states a claim goes
// through in the simulated cluster — the order, and each state's statuses, condition types,
// statuses, reasons and messages, annotations — are those a real kubelet v1.34.2 and
// external-resizer v2.0.0 with the CSI hostpath driver v1.17.1 wrote, recorded event by event in
// test/fixtures/storage/ (see its README.md). Times, names, uids and resourceVersions aside; a
// quantity is compared by its bytes. The simulation's latencies are its own, so each recording is
// replayed with the simulation's defaults and with latencies close to the rig's.
import { describe, expect, it } from "vitest";
import { SimCluster, statefulSetManifest } from "../../../adapters/sim/cluster.js";
import type { DriverBehaviour, Latencies } from "../../../adapters/sim/controllers/context.js";
import { type ClaimState, distinct, recording, stateOf } from "../../support/claim-states.js";

type Json = Record<string, any>;

/** The driver of the recordings' class csi-hostpath, as the rig starts it. */
const HOSTPATH: DriverBehaviour = {
  resize: "online",
  modify: "ok",
  maxStorage: "10Gi",
  mutableParameters: ["iops", "throughput"],
  driverName: "hostpath.csi.k8s.io",
};

/** About the rig's: the resizer and modifier answer within tens of ms, the kubelet's next pod sync within 10 s. */
const RIG_LATENCIES: Partial<Latencies> = { reactMs: 5, resizeMs: 15, modifyMs: 20, nodeResizeMs: 6_300 };

const ns = "default";

/** The recordings' cluster: StatefulSet web, 3 replicas of pods mounting claim data (1Gi, csi-hostpath), Running. */
async function rig(latencies: Partial<Latencies> = {}, driver: DriverBehaviour = HOSTPATH): Promise<SimCluster> {
  const sim = new SimCluster({ seed: 11, latencies });
  await sim.addStorageClass("csi-hostpath", { allowVolumeExpansion: true, provisioner: "hostpath.csi.k8s.io", driver });
  await sim.addVolumeAttributesClass("hostpath-fast", { iops: "3000", throughput: "125" }, "hostpath.csi.k8s.io");
  await sim.addVolumeAttributesClass("hostpath-bad", { tier: "gold" }, "hostpath.csi.k8s.io");
  await sim.createStatefulSet(
    statefulSetManifest({
      name: "web",
      replicas: 3,
      templates: [{ name: "data", storage: "1Gi", storageClassName: "csi-hostpath" }],
    }),
  );
  for (const o of [0, 1, 2]) expect(sim.get("pods", ns, `web-${o}`)?.status?.phase).toBe("Running");
  return sim;
}

const patchClaim = (sim: SimCluster, name: string, patch: Json, fieldManager = "kubectl-patch") =>
  sim.admin.mergePatch("persistentvolumeclaims", ns, name, patch, { fieldManager });
const request = (storage: string) => ({ spec: { resources: { requests: { storage } } } });
const klass = (name: string | null) => ({ spec: { volumeAttributesClassName: name } });

/**
 * A claim's states from now on, as a watch sees them: the claim as it is, then the claim after
 * each write the API server audited (the person's patches and every controller's status write).
 */
function watch(sim: SimCluster, name: string): () => ClaimState[] {
  const from = sim.audit.length;
  const initial = stateOf(sim.get("persistentvolumeclaims", ns, name) as Json);
  return () =>
    distinct([
      initial,
      ...sim.audit
        .slice(from)
        .filter((e) => e.resource === "persistentvolumeclaims" && e.name === name && e.outcome === "ok" && e.after)
        .map((e) => stateOf(e.after as Json)),
    ]);
}

const LATENCIES: [string, Partial<Latencies>][] = [
  ["the simulation's default latencies", {}],
  ["the rig's latencies", RIG_LATENCIES],
];

describe.each(LATENCIES)("the recordings, replayed with %s", (_, latencies) => {
  it("expand.watch.jsonl: a mounted claim grows 1Gi → 2Gi (controller, then the kubelet's next sync)", async () => {
    const sim = await rig(latencies);
    const seen = watch(sim, "data-web-0");
    await patchClaim(sim, "data-web-0", request("2Gi"));
    sim.advance(60_000);
    expect(seen()).toEqual(recording("expand"));
  });

  it("infeasible.watch.jsonl: 20Gi above the driver's 10Gi is infeasible and not retried; lowered to 3Gi it grows", async () => {
    const sim = await rig(latencies);
    const seen = watch(sim, "data-web-1");
    await patchClaim(sim, "data-web-1", request("20Gi"));
    sim.advance(10 * 60_000);
    await patchClaim(sim, "data-web-1", request("3Gi"));
    sim.advance(60_000);
    expect(seen()).toEqual(recording("infeasible"));
  });

  it("vac.watch.jsonl: hostpath-fast applied; hostpath-bad refused (Infeasible); back to hostpath-fast while Infeasible", async () => {
    const sim = await rig(latencies);
    const seen = watch(sim, "data-web-2");
    await patchClaim(sim, "data-web-2", klass("hostpath-fast"));
    sim.advance(60_000);
    await patchClaim(sim, "data-web-2", klass("hostpath-bad"));
    sim.advance(10 * 60_000);
    await patchClaim(sim, "data-web-2", klass("hostpath-fast"));
    sim.advance(60_000);
    expect(seen()).toEqual(recording("vac"));
  });
});

describe("what the recordings say in words", () => {
  it("expand: the PV is grown with NodeResizePending; the claim's capacity only once the kubelet is done", () => {
    const states = recording("expand");
    expect(states.map((s) => s.allocation?.storage ?? "-")).toEqual([
      "-",
      "-",
      "ControllerResizeInProgress",
      "NodeResizePending",
      "NodeResizeInProgress",
      "-",
    ]);
    expect(states.at(-1)).toMatchObject({ capacity: String(2n << 30n), allocated: String(2n << 30n), conditions: [] });
  });

  it("the recordings' messages are the ones the simulation writes", () => {
    const messages = ["expand", "infeasible", "vac"].flatMap((r) =>
      recording(r).flatMap((s) => s.conditions.map((c) => `${c.type}: ${c.message ?? ""}`)),
    );
    expect([...new Set(messages)].sort()).toEqual([
      "ControllerResizeError: failed to expand pvc with rpc error: code = OutOfRange desc = Requested capacity 21474836480 exceeds maximum allowed 10737418240",
      "FileSystemResizePending: Waiting for user to (re-)start a pod to finish file system resize of volume on node.",
      "ModifyVolumeError: invalid parameters: [tier]",
      'ModifyingVolume: Modifying volume to "hostpath-bad" failed. Waiting for retry.',
      'ModifyingVolume: Modifying volume to "hostpath-bad" is in progress.',
      'ModifyingVolume: Modifying volume to "hostpath-fast" is in progress.',
      "Resizing: ",
    ]);
  });
});

describe("measured on the rig, not recorded: a VolumeAttributesClass that does not exist yet", () => {
  it("leaves modifyVolumeStatus exactly {status: Pending}; the class created later, or an annotation changed, does not wake the modifier; a change of the spec's class does", async () => {
    const sim = await rig();
    const seen = watch(sim, "data-web-2");
    await patchClaim(sim, "data-web-2", klass("hostpath-later"));
    sim.advance(60_000);
    let pvc = sim.get("persistentvolumeclaims", ns, "data-web-2")!;
    expect(pvc.status?.modifyVolumeStatus).toEqual({ status: "Pending" });
    expect(pvc.status?.conditions).toBeUndefined();
    expect(pvc.status?.currentVolumeAttributesClassName).toBeUndefined();

    await sim.addVolumeAttributesClass("hostpath-later", { iops: "6000" }, "hostpath.csi.k8s.io");
    sim.advance(30 * 60_000);
    await patchClaim(sim, "data-web-2", { metadata: { annotations: { "example.com/poke": "1" } } });
    sim.advance(30 * 60_000);
    pvc = sim.get("persistentvolumeclaims", ns, "data-web-2")!;
    expect(pvc.status?.modifyVolumeStatus).toEqual({ status: "Pending" });

    // The class set to null and back: the update event of the second write queues the claim. The
    // API server accepts the null here, no class ever having been applied (measured on v1.34.2).
    await patchClaim(sim, "data-web-2", klass(null));
    await patchClaim(sim, "data-web-2", klass("hostpath-later"));
    sim.advance(60_000);
    pvc = sim.get("persistentvolumeclaims", ns, "data-web-2")!;
    expect(pvc.status?.currentVolumeAttributesClassName).toBe("hostpath-later");
    expect(pvc.status?.modifyVolumeStatus).toBeUndefined();
    expect(pvc.status?.conditions).toBeUndefined();
    expect(seen().map((s) => [s.class, s.modify, s.current, s.conditions.map((c) => c.type)])).toEqual([
      [null, null, null, []],
      ["hostpath-later", null, null, []],
      ["hostpath-later", { status: "Pending" }, null, []],
      [null, { status: "Pending" }, null, []],
      ["hostpath-later", { status: "Pending" }, null, []],
      [
        "hostpath-later",
        { status: "InProgress", targetVolumeAttributesClassName: "hostpath-later" },
        null,
        ["ModifyingVolume"],
      ],
      ["hostpath-later", null, "hostpath-later", []],
    ]);
  });

  it("another class in the spec wakes it too: Pending on a missing class, then the class in effect", async () => {
    const sim = await rig();
    await patchClaim(sim, "data-web-2", klass("hostpath-later"));
    sim.advance(60_000);
    await patchClaim(sim, "data-web-2", klass("hostpath-fast"));
    sim.advance(60_000);
    const pvc = sim.get("persistentvolumeclaims", ns, "data-web-2")!;
    expect(pvc.status?.currentVolumeAttributesClassName).toBe("hostpath-fast");
    expect(pvc.status?.modifyVolumeStatus).toBeUndefined();
  });

  it("a saved and restored simulation keeps the claim waiting for a change of its spec (as the CLI's state file does between steps)", async () => {
    const sim = await rig();
    await patchClaim(sim, "data-web-2", klass("hostpath-later"));
    sim.advance(60_000);
    await sim.addVolumeAttributesClass("hostpath-later", { iops: "6000" }, "hostpath.csi.k8s.io");
    const restored = SimCluster.restore(JSON.parse(JSON.stringify(sim.toJSON())));
    restored.advance(30 * 60_000);
    expect(restored.get("persistentvolumeclaims", ns, "data-web-2")!.status?.modifyVolumeStatus).toEqual({
      status: "Pending",
    });
    // A state saved without the Pending claims (before they were kept) is a restarted resizer:
    // it looks at every claim once, and applies the class that exists by then.
    const older = JSON.parse(JSON.stringify(sim.toJSON()));
    delete older.storage.parked;
    const restarted = SimCluster.restore(older);
    restarted.advance(60_000);
    expect(restarted.get("persistentvolumeclaims", ns, "data-web-2")!.status?.currentVolumeAttributesClassName).toBe(
      "hostpath-later",
    );
  });
});

describe("a driver that needs no node expansion", () => {
  it("finishes the resize on the controller: capacity at once, the claim annotated node-expansion-not-required", async () => {
    const sim = await rig({}, { ...HOSTPATH, nodeExpansion: "none" });
    const seen = watch(sim, "data-web-0");
    await patchClaim(sim, "data-web-0", request("2Gi"));
    sim.advance(60_000);
    const gi = (n: bigint) => String(n << 30n);
    expect(seen()).toEqual([
      stateOf(statefulClaim("1Gi", "1Gi")),
      stateOf(statefulClaim("2Gi", "1Gi")),
      {
        ...stateOf(statefulClaim("2Gi", "1Gi")),
        allocated: gi(2n),
        allocation: { storage: "ControllerResizeInProgress" },
        conditions: [{ type: "Resizing", status: "True", reason: null, message: null, probed: false }],
      },
      {
        ...stateOf(statefulClaim("2Gi", "2Gi")),
        allocated: gi(2n),
        annotations: { "volume.kubernetes.io/node-expansion-not-required": "true" },
      },
    ]);
  });
});

describe("a node that refuses to grow the file system (measured on the rig, not recorded)", () => {
  it("NodeResizeInfeasible lasts until the resizer hands the expansion back; the lasting signal is NodeResizeError, which a lowered request does not clear", async () => {
    const sim = await rig(RIG_LATENCIES, { ...HOSTPATH, nodeExpansion: "infeasible" });
    const seen = watch(sim, "data-web-0");
    await patchClaim(sim, "data-web-0", request("2Gi"));
    sim.advance(10_000);
    const brief = () =>
      seen().map((s) => `${s.allocation?.storage ?? "-"} [${s.conditions.map((c) => c.type).join(",")}] ${s.capacity}`);
    const gi = String(1n << 30n);
    expect(brief()).toEqual([
      `- [] ${gi}`,
      `- [] ${gi}`, // the request raised
      `ControllerResizeInProgress [Resizing] ${gi}`,
      `NodeResizePending [Resizing,FileSystemResizePending] ${gi}`,
      `NodeResizeInProgress [Resizing,FileSystemResizePending] ${gi}`,
      `NodeResizeInfeasible [Resizing,FileSystemResizePending,NodeResizeError] ${gi}`,
      `NodeResizePending [Resizing,NodeResizeError,FileSystemResizePending] ${gi}`,
    ]);
    const infeasibleFor = sim.audit
      .filter((e) => e.name === "data-web-0" && e.after)
      .map((e) => ({ at: Date.parse(e.at), storage: (e.after as Json).status?.allocatedResourceStatuses?.storage }))
      .filter((e, i, all) => e.storage === "NodeResizeInfeasible" || all[i - 1]?.storage === "NodeResizeInfeasible");
    expect(infeasibleFor[1]!.at - infeasibleFor[0]!.at).toBeLessThanOrEqual(20);

    await patchClaim(sim, "data-web-0", request("1536Mi"));
    sim.advance(5 * 60_000);
    const pvc = sim.get("persistentvolumeclaims", ns, "data-web-0")!;
    expect(pvc.status?.capacity).toEqual({ storage: "1Gi" });
    expect(pvc.status?.allocatedResources).toEqual({ storage: "2Gi" });
    expect(pvc.status?.conditions?.find((c: Json) => c.type === "NodeResizeError")?.message).toMatch(
      /^failed to expand pvc with rpc error: code = OutOfRange desc = /,
    );

    // Once the node grows it, the resize finishes and every resize condition goes.
    sim.setDriver("csi-hostpath", HOSTPATH);
    sim.advance(60_000);
    const done = sim.get("persistentvolumeclaims", ns, "data-web-0")!;
    expect(done.status?.capacity).toEqual({ storage: "2Gi" });
    expect(done.status?.allocatedResourceStatuses).toBeUndefined();
    expect(done.status?.conditions).toBeUndefined();
  });
});

describe("size and class changed in one patch", () => {
  it("the resizer and the modifier both carry it out (on the rig they conflict, 409, and retry: modelled as converging)", async () => {
    for (const latencies of [{}, RIG_LATENCIES]) {
      const sim = await rig(latencies);
      await patchClaim(sim, "data-web-0", {
        spec: { ...request("2Gi").spec, volumeAttributesClassName: "hostpath-fast" },
      });
      sim.advance(60_000);
      const pvc = sim.get("persistentvolumeclaims", ns, "data-web-0")!;
      expect(pvc.status?.capacity).toEqual({ storage: "2Gi" });
      expect(pvc.status?.allocatedResourceStatuses).toBeUndefined();
      expect(pvc.status?.currentVolumeAttributesClassName).toBe("hostpath-fast");
      expect(pvc.status?.modifyVolumeStatus).toBeUndefined();
      expect(pvc.status?.conditions).toBeUndefined();
    }
  });
});

/** A bound claim of the rig with this request and capacity, nothing else in its status. */
function statefulClaim(request: string, capacity: string): Json {
  return {
    spec: { resources: { requests: { storage: request } } },
    status: { phase: "Bound", capacity: { storage: capacity } },
  };
}
