// Adding and removing claim templates (docs/design.md "Adding and removing claim templates",
// core/plan/reshape.ts), decision by decision on snapshots built from real objects.
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import type { Pod, StatefulSet } from "../../../core/kube/k8s.js";
import { planStep } from "../../../core/plan/plan.js";
import { missingMounts, podTemplateDigest, targetTemplates } from "../../../core/policy/shape.js";
import type { Decision, Snapshot } from "../../../core/types.js";
import { claimsFor, makeClaim, makeSet, snapshot, template } from "../builders.js";

const NOW = new Date("2026-12-02T06:00:00Z");
const ALL = {
  name: "direct",
  supports: [
    "PatchClaim",
    "PatchPartition",
    "EvictPod",
    "WriteRecord",
    "ArmRecord",
    "OrphanSet",
    "CreateSet",
    "RestoreOwnership",
    "DeleteRecord",
    "LabelClaim",
  ] as const,
  proposes: false,
};
const plan = (s: Snapshot): Decision => planStep(s, NOW, ALL);

const podTemplate = (mounts: string[]) => ({
  metadata: { labels: { app: "web" } },
  spec: {
    containers: [{ name: "c", image: "nginx", volumeMounts: mounts.map((m) => ({ name: m, mountPath: `/${m}` })) }],
  },
});

/** A converged set with `data` (at the revision of `live`), asking for `logs` besides. */
function addingLogs(o: { finalize?: boolean; held?: unknown; logsClass?: string } = {}): Snapshot {
  const base = makeSet({ live: [{ name: "data", storage: "1Gi" }] });
  base.spec.template = podTemplate(["data"]);
  const desired = [
    template({ name: "data", storage: "1Gi" }),
    template({ name: "logs", storage: "1Gi", storageClassName: o.logsClass ?? "fast" }),
  ];
  const first = planStep(snapshot(base, claimsFor(base)), NOW, ALL);
  base.metadata.annotations = {
    ...base.metadata.annotations,
    [Keys.templates]: JSON.stringify(desired),
    ...(o.finalize === false ? {} : { [Keys.finalize]: "Recreate" }),
    ...(o.held !== undefined ? { [Keys.podTemplate]: JSON.stringify(o.held) } : {}),
  };
  const revision = planStep(snapshot(base, claimsFor(base)), NOW, ALL).revision!;
  base.metadata.annotations[Keys.currentRevision] = revision;
  expect(first.revision).not.toBe(revision);
  return snapshot(base, claimsFor(base, { revision }));
}

/** The set after its re-create with data + logs (partition held at 3, user's 0 recorded), pods as they were. */
function recreatedWithLogs(o: { logsClaims?: number[]; ready?: boolean[]; maxUnavailable?: number } = {}): Snapshot {
  const set = makeSet({
    live: [
      { name: "data", storage: "1Gi" },
      { name: "logs", storage: "1Gi" },
    ],
    partition: 3,
  });
  if (o.maxUnavailable) set.spec.updateStrategy!.rollingUpdate!.maxUnavailable = o.maxUnavailable;
  set.spec.template = podTemplate(["data", "logs"]);
  set.metadata.annotations = { ...set.metadata.annotations, [Keys.finalize]: "Recreate", [Keys.userPartition]: "0" };
  const revision = plan(snapshot(set, [])).revision!;
  set.metadata.annotations[Keys.currentRevision] = revision;
  const claims = [
    ...[0, 1, 2].map((n) => makeClaim(`data-web-${n}`, { revision })),
    ...(o.logsClaims ?? [0]).map((n) => makeClaim(`logs-web-${n}`)),
  ];
  const s = snapshot(set, claims);
  (o.ready ?? []).forEach((ready, i) => {
    if (!ready) s.pods[i]!.status!.conditions = [{ type: "Ready", status: "False" }];
  });
  return s;
}

const withLogsVolume = (pod: Pod, n: number): Pod => {
  const p = structuredClone(pod) as Pod & { spec: { volumes: unknown[] } };
  p.spec.volumes.push({ name: "logs", persistentVolumeClaim: { claimName: `logs-web-${n}` } });
  p.metadata.uid = `new-${n}`;
  return p;
};

// docs/design.md S2: only a re-create changes the shape.
describe("adding a template: what must hold first", () => {
  it("without claimstep.io/finalize: Recreate it is Blocked, naming the template and both fixes", () => {
    const d = plan(addingLogs({ finalize: false }));
    expect(d.phase).toBe("Blocked");
    expect(d.reason).toBe("TemplatesNeedRecreate");
    expect(d.message).toMatch(/Adding claim template logs of default\/web needs the set re-created/);
    expect(d.message).toMatch(/claimstep\.io\/finalize=Recreate, or run claimstep finalize/);
    expect(d.action).toBeUndefined();
    expect(planStep(addingLogs({ finalize: false }), NOW, ALL, { finalize: true }).reason).not.toBe(
      "TemplatesNeedRecreate",
    );
  });

  it("a class that does not exist is Blocked before anything is written", () => {
    const d = plan(addingLogs({ logsClass: "nope" }));
    expect(d.reason).toBe("StorageClassNotFound");
    expect(d.message).toMatch(/"logs" names StorageClass "nope", which does not exist/);
    expect(d.action).toBeUndefined();
  });

  it("a held pod template that mounts a volume the re-created set lacks is Blocked (I14): nothing written", () => {
    const d = plan(addingLogs({ held: podTemplate(["data", "logs", "cache"]) }));
    expect(d.phase).toBe("Blocked");
    expect(d.reason).toBe("InvalidTemplates");
    expect(d.message).toMatch(/container "c" mounts "cache", a volume the set would not have/);
    expect(d.action).toBeUndefined();
  });

  it("an OnDelete set that asks for a template is Blocked with the reason, not Idle", () => {
    const s = addingLogs();
    s.statefulSet.spec.updateStrategy = { type: "OnDelete" };
    const d = plan(s);
    expect(d.phase).toBe("Blocked");
    expect(d.message).toMatch(/updateStrategy is OnDelete/);
  });

  it("a template both desired and listed for removal is refused, naming both annotations", () => {
    const s = addingLogs();
    s.statefulSet.metadata.annotations![Keys.removeTemplates] = JSON.stringify(["logs"]);
    const d = plan(s);
    expect(d.reason).toBe("InvalidTemplates");
    expect(d.message).toMatch(
      /"logs" is both in claimstep\.io\/volume-claim-templates and in claimstep\.io\/remove-claim-templates/,
    );
  });

  it("a malformed removal list is refused with the expected shape", () => {
    const s = addingLogs();
    s.statefulSet.metadata.annotations![Keys.removeTemplates] = "cache";
    expect(plan(s).message).toMatch(/remove-claim-templates .* is not valid JSON .*expected \["name", …\]/);
    s.statefulSet.metadata.annotations![Keys.removeTemplates] = '["Bad_Name"]';
    expect(plan(s).message).toMatch(/"Bad_Name" is not a claim template name/);
  });
});

describe("a held pod template against a live one that changed since", () => {
  it("is Blocked, naming the way out, when the live pod template no longer has the digest it was held against", () => {
    const s = addingLogs({ held: podTemplate(["data", "logs"]) });
    const live = s.statefulSet.spec.template;
    s.statefulSet.metadata.annotations![Keys.podTemplateBase] = podTemplateDigest(live);
    expect(plan(s).reason).toBe("PartitionHeld");
    // kubectl set image after the hold: the re-create would undo it.
    (s.statefulSet.spec.template as ReturnType<typeof podTemplate>).spec.containers[0]!.image = "nginx:2";
    const d = plan(s);
    expect(d.phase).toBe("Blocked");
    expect(d.message).toMatch(/its pod template changed after claimstep\.io\/pod-template was written/);
    expect(d.action).toBeUndefined();
  });
  it("the digest does not depend on the order of keys", () => {
    expect(podTemplateDigest({ a: 1, b: { c: 2, d: 3 } })).toBe(podTemplateDigest({ b: { d: 3, c: 2 }, a: 1 }));
    expect(podTemplateDigest({ a: 1 })).not.toBe(podTemplateDigest({ a: 2 }));
  });
});

// docs/design.md S1 (the hold) and S2 (the re-create, with the held pod template in one create).
describe("adding a template: hold, then re-create with the pod template in one create", () => {
  it("holds the partition at replicas (recording the user's) before the record", () => {
    const d = plan(addingLogs({ held: podTemplate(["data", "logs"]) }));
    expect(d.reason).toBe("PartitionHeld");
    expect(d.action).toMatchObject({ type: "PatchPartition", partition: 3, from: 0, userPartition: 0 });
  });

  it("then records a manifest with both templates and the held pod template, without the held annotation", () => {
    const s = addingLogs({ held: podTemplate(["data", "logs"]) });
    s.statefulSet.spec.updateStrategy!.rollingUpdate!.partition = 3;
    s.statefulSet.metadata.annotations![Keys.userPartition] = "0";
    const d = plan(s);
    expect(d.reason).toBe("RecordWritten");
    if (d.action?.type !== "WriteRecord") throw new Error(`expected WriteRecord, got ${d.action?.type}`);
    const manifest = JSON.parse(d.action.record.data!["statefulset.json"]!) as StatefulSet & {
      spec: { template: ReturnType<typeof podTemplate> };
    };
    expect(manifest.spec.volumeClaimTemplates!.map((t) => t.metadata.name)).toEqual(["data", "logs"]);
    expect(manifest.spec.template.spec.containers[0]!.volumeMounts.map((m) => m.name)).toEqual(["data", "logs"]);
    expect(manifest.metadata.annotations![Keys.podTemplate]).toBeUndefined();
    expect(manifest.metadata.annotations![Keys.templates]).toBeUndefined();
    expect(manifest.spec.updateStrategy!.rollingUpdate!.partition).toBe(3);
  });
});

describe("found by the property suite", () => {
  it("an annotation naming only the added template keeps the live ones (no Blocked after the hold)", () => {
    const s = addingLogs();
    s.statefulSet.metadata.annotations![Keys.templates] = JSON.stringify([template({ name: "logs", storage: "1Gi" })]);
    const d = plan(s);
    expect(d.reason).toBe("PartitionHeld");
    s.statefulSet.spec.updateStrategy!.rollingUpdate!.partition = 3;
    s.statefulSet.metadata.annotations![Keys.userPartition] = "0";
    s.statefulSet.metadata.annotations![Keys.currentRevision] = d.revision!;
    for (const c of s.claims) c.metadata.labels![Keys.revisionLabel] = d.revision!;
    const next = plan(s);
    expect(next.reason).toBe("RecordWritten");
  });

  it("a user partition already at replicas is recorded all the same, so the partition stays held through the restarts", () => {
    const s = addingLogs();
    s.statefulSet.spec.updateStrategy!.rollingUpdate!.partition = 3;
    const d = plan(s);
    expect(d.reason).toBe("PartitionHeld");
    expect(d.action).toMatchObject({ type: "PatchPartition", partition: 3, from: 3, userPartition: 3 });
  });
});

// docs/design.md S4 (the restarts, lowest first, within maxUnavailable) and S5 (the partition back).
describe("after the re-create: pods restart one at a time, lowest ordinal first", () => {
  it("evicts web-0 (the pod the StatefulSet controller is stuck on), never a higher one first", () => {
    const d = plan(recreatedWithLogs());
    expect(d.reason).toBe("PodEvicted");
    expect(d.action).toMatchObject({ type: "EvictPod", pod: "web-0", claim: "logs-web-0" });
    expect(d.message).toMatch(/lowest ordinal/);
  });

  it("waits for the controller to create the pod's new claim", () => {
    const d = plan(recreatedWithLogs({ logsClaims: [] }));
    expect(d.phase).toBe("Waiting");
    expect(d.reason).toBe("ClaimMissing");
    expect(d.message).toMatch(/create claim logs-web-0 for pod web-0/);
  });

  it("waits while the new claim of an Immediate class is not Bound", () => {
    const s = recreatedWithLogs();
    s.claims.find((c) => c.metadata.name === "logs-web-0")!.status = { phase: "Pending" };
    const d = plan(s);
    expect(d.reason).toBe("ClaimNotBound");
    expect(d.action).toBeUndefined();
  });

  it("restarts nothing while another pod is down beyond maxUnavailable; within it, goes on", () => {
    const s = recreatedWithLogs({ ready: [true, true, false] });
    const d = plan(s);
    expect(d.reason).toBe("PodUpdating");
    expect(d.message).toMatch(/web-2 is not Ready \(maxUnavailable 1\)/);
    expect(plan(recreatedWithLogs({ ready: [true, true, false], maxUnavailable: 2 })).action).toMatchObject({
      type: "EvictPod",
      pod: "web-0",
    });
  });

  it("R3: not again while a refused eviction charges the budget (two minutes, or the charge the step is given)", () => {
    const s = recreatedWithLogs();
    const at = new Date(NOW.getTime() - 30_000).toISOString();
    s.statefulSet.metadata.annotations![Keys.lastEviction] = JSON.stringify({
      pod: "web-0",
      uid: "x",
      at,
      result: "DisruptionBudget",
    });
    const d = plan(s);
    expect(d.phase).toBe("Waiting");
    expect(d.reason).toBe("DisruptionBudget");
    expect(d.requeueAfter).toBe(90);
    expect(d.action).toBeUndefined();
    expect(planStep(s, NOW, ALL, { budgetChargeSeconds: 40 }).requeueAfter).toBe(10);
    expect(planStep(s, NOW, ALL, { budgetChargeSeconds: 20 }).action).toMatchObject({ type: "EvictPod", pod: "web-0" });
  });

  it("goes up the ordinals, then waits for the last pod, then hands the partition back", () => {
    const s = recreatedWithLogs({ logsClaims: [0, 1, 2] });
    s.pods[0] = withLogsVolume(s.pods[0]!, 0);
    expect(plan(s).action).toMatchObject({ type: "EvictPod", pod: "web-1" });
    s.pods[1] = withLogsVolume(s.pods[1]!, 1);
    s.pods[2] = withLogsVolume(s.pods[2]!, 2);
    s.pods[2]!.status!.conditions = [{ type: "Ready", status: "False" }];
    const waiting = plan(s);
    expect(waiting.reason).toBe("PodUpdating");
    expect(waiting.message).toMatch(/waiting for web-2 to be Ready before handing the partition back/);
    s.pods[2]!.status!.conditions = [{ type: "Ready", status: "True" }];
    const restored = plan(s);
    expect(restored.reason).toBe("PartitionRestored");
    expect(restored.action).toMatchObject({ type: "PatchPartition", partition: 0, userPartition: null });
  });
});

// docs/design.md S3: the removed template's claims labelled, never deleted.
describe("removing a template: never a delete; the claims labelled, the pods restarted", () => {
  function recreatedWithoutCache(): Snapshot {
    const set = makeSet({ live: [{ name: "data", storage: "1Gi" }] });
    set.spec.template = podTemplate(["data"]);
    set.metadata.annotations = {
      ...set.metadata.annotations,
      [Keys.finalize]: "Recreate",
      [Keys.removeTemplates]: JSON.stringify(["cache"]),
    };
    const revision = plan(snapshot(set, [])).revision!;
    set.metadata.annotations[Keys.currentRevision] = revision;
    const claims = [
      ...[0, 1, 2].map((n) => makeClaim(`data-web-${n}`, { revision })),
      ...[0, 1, 2].map((n) => makeClaim(`cache-web-${n}`)),
    ];
    const s = snapshot(set, claims);
    s.pods = s.pods.map((p, n) => {
      const q = structuredClone(p) as Pod & { spec: { volumes: unknown[] } };
      q.spec.volumes.push({ name: "cache", persistentVolumeClaim: { claimName: `cache-web-${n}` } });
      return q;
    });
    return s;
  }

  it("a pod template that still mounts the removed template is Blocked before the re-create", () => {
    const set = makeSet({
      live: [
        { name: "data", storage: "1Gi" },
        { name: "cache", storage: "1Gi" },
      ],
    });
    set.spec.template = podTemplate(["data", "cache"]);
    set.metadata.annotations = {
      ...set.metadata.annotations,
      [Keys.finalize]: "Recreate",
      [Keys.removeTemplates]: JSON.stringify(["cache"]),
    };
    const d = plan(snapshot(set, claimsFor(set)));
    expect(d.reason).toBe("InvalidTemplates");
    expect(d.message).toMatch(/Removing cache needs a pod template that no longer mounts it/);
  });

  it("labels each claim of the removed template orphaned-from the set, one per step (a merge patch, never a delete)", () => {
    const d = plan(recreatedWithoutCache());
    expect(d.reason).toBe("ClaimOrphaned");
    expect(d.action).toMatchObject({ type: "LabelClaim", claim: "cache-web-0", orphanedFrom: "web" });
    expect(d.message).toMatch(/kubectl delete pvc -n default cache-web-0/);
  });

  it("then restarts the pods that still mount them, lowest first, and lists the kept claims", () => {
    const s = recreatedWithoutCache();
    for (const c of s.claims) if (c.metadata.name.startsWith("cache-")) c.metadata.labels![Keys.orphanedFrom] = "web";
    const d = plan(s);
    expect(d.action).toMatchObject({ type: "EvictPod", pod: "web-0", claim: "cache-web-0" });
    expect(d.message).toMatch(/no longer mounting cache-web-0/);
    expect(d.orphanedClaims).toEqual([
      { claim: "cache-web-0", template: "cache", mounted: true },
      { claim: "cache-web-1", template: "cache", mounted: true },
      { claim: "cache-web-2", template: "cache", mounted: true },
    ]);
  });

  it("a template that comes back reuses its claims: the label is removed", () => {
    const set = makeSet({
      live: [
        { name: "data", storage: "1Gi" },
        { name: "cache", storage: "1Gi" },
      ],
    });
    set.metadata.annotations = { ...set.metadata.annotations, [Keys.finalize]: "Recreate" };
    const claims = claimsFor(set);
    claims.find((c) => c.metadata.name === "cache-web-1")!.metadata.labels![Keys.orphanedFrom] = "web";
    const d = plan(snapshot(set, claims));
    expect(d.reason).toBe("ClaimReused");
    expect(d.action).toMatchObject({ type: "LabelClaim", claim: "cache-web-1", orphanedFrom: null });
  });
});

describe("the shape's pure helpers", () => {
  it("targetTemplates keeps the live defaults, drops the removed, appends the added", () => {
    const live = makeSet({
      live: [
        { name: "data", storage: "1Gi" },
        { name: "cache", storage: "1Gi" },
      ],
    }).spec.volumeClaimTemplates!;
    const out = targetTemplates(
      live,
      [template({ name: "data", storage: "2Gi" }), template({ name: "logs", storage: "1Gi" })],
      ["cache"],
    );
    expect(out.map((t) => [t.metadata.name, t.spec.resources?.requests?.storage, t.spec.volumeMode])).toEqual([
      ["data", "2Gi", "Filesystem"],
      ["logs", "1Gi", undefined],
    ]);
  });
  it("missingMounts names every container mount and device without a volume", () => {
    const pod = {
      spec: {
        initContainers: [{ name: "init", volumeMounts: [{ name: "seed" }] }],
        containers: [{ name: "c", volumeMounts: [{ name: "data" }], volumeDevices: [{ name: "raw" }] }],
        volumes: [{ name: "seed" }],
      },
    };
    expect(missingMounts(pod, ["data"])).toEqual(['container "c" mounts "raw"']);
  });
});
