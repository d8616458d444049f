// The pod rules of docs/design.md "Pods", one named scenario per row: P1–P5 (ClaimsFirst: the
// partition holds each pod until its claims are ready) and R1–R3 (restart a pod whose volume
// cannot finish growing while it runs). Each fails if its rule breaks.
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import type { Pod, StatefulSet } from "../../../core/kube/k8s.js";
import { planStep } from "../../../core/plan/plan.js";
import { verdict } from "../../../core/plan/verdict.js";
import { BUDGET_CHARGE_SECONDS } from "../../../core/policy/pod-policy.js";
import type { WriterCapabilities } from "../../../core/ports.js";
import { requeueAfterOf } from "../../../core/reasons.js";
import type { Decision, Snapshot } from "../../../core/types.js";
import { type ClaimSpec, claimsFor, fixture, makeClaim, makeSet, type SetSpec, snapshot } from "../builders.js";

const WITH_PODS: WriterCapabilities = {
  name: "direct",
  supports: ["PatchClaim", "PatchPartition", "EvictPod"],
  proposes: false,
};
const CLAIMS_ONLY: WriterCapabilities = { name: "direct", supports: ["PatchClaim"], proposes: false };
const PULL_REQUEST: WriterCapabilities = {
  name: "pull-request writer (github)",
  supports: ["PatchClaim", "PatchPartition", "EvictPod"],
  proposes: true,
};

const NOW = new Date("2026-11-30T12:00:00Z");
const OLD = "web-5869dd78fd";
const NEW = "web-7c4fb86845";
const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000).toISOString();

interface PodSpec {
  revision?: string;
  ready?: boolean;
  createdMinutesAgo?: number;
}

function makePod(ordinal: number, p: PodSpec = {}): Pod {
  const pod = structuredClone(fixture("pod-list.json").items[0]) as Pod;
  pod.metadata.name = `web-${ordinal}`;
  pod.metadata.uid = `uid-web-${ordinal}-${p.revision ?? OLD}`;
  pod.metadata.labels = {
    ...pod.metadata.labels,
    [Keys.podRevisionLabel]: p.revision ?? OLD,
    "statefulset.kubernetes.io/pod-name": `web-${ordinal}`,
  };
  pod.metadata.creationTimestamp = minutesAgo(p.createdMinutesAgo ?? 60);
  pod.status = { phase: "Running", conditions: [{ type: "Ready", status: p.ready === false ? "False" : "True" }] };
  return pod;
}

interface World {
  set?: SetSpec;
  /** The pod template rolls: status.updateRevision ≠ currentRevision. */
  rolling?: boolean;
  /** Claims per ordinal (default: 1Gi, not at the revision). */
  claims?: Record<number, ClaimSpec>;
  pods?: Record<number, PodSpec>;
}

/** A 3-replica set whose desired template asks 2Gi; claims and pods as the world says. */
function world(w: World = {}): Snapshot {
  const set: StatefulSet = makeSet({ desired: [{ name: "data", storage: "2Gi" }], ...w.set });
  set.status = { ...set.status, currentRevision: OLD, updateRevision: w.rolling === false ? OLD : NEW };
  const replicas = set.spec.replicas ?? 3;
  const claims = claimsFor(set).map((c) => {
    const o = Number(c.metadata.name.split("-").pop());
    return w.claims?.[o] ? makeClaim(c.metadata.name, w.claims[o]) : c;
  });
  const pods: Pod[] = [];
  for (let o = 0; o < replicas; o++) pods.push(makePod(o, w.pods?.[o] ?? {}));
  return snapshot(set, claims, { pods });
}

/** The revision of the desired templates (from a first plan). */
const revisionOf = (s: Snapshot): string => planStep(s, NOW, WITH_PODS).revision!;

/** Claims of these ordinals at the revision and ready at 2Gi. */
function done(s: Snapshot, ...ordinals: number[]): Record<number, ClaimSpec> {
  const revision = revisionOf(s);
  return Object.fromEntries(ordinals.map((o) => [o, { storage: "2Gi", revision }]));
}

const holding = (user: number, live: number, extra: Partial<SetSpec> = {}): SetSpec => ({
  partition: live,
  annotations: { [Keys.podCoordination]: "ClaimsFirst", [Keys.userPartition]: String(user) },
  ...extra,
});
const claimsFirst = (extra: Partial<SetSpec> = {}): SetSpec => ({
  annotations: { [Keys.podCoordination]: "ClaimsFirst" },
  ...extra,
});

const plan = (s: Snapshot, writer = WITH_PODS): Decision => planStep(s, NOW, writer);

describe("P1: taking the partition over", () => {
  it("holds every pod when the pod template and the claims change together, recording the user's partition", () => {
    const d = plan(world({ set: claimsFirst(), rolling: true }));
    expect(d.reason).toBe("PartitionHeld");
    expect(d.action).toMatchObject({ type: "PatchPartition", set: "web", partition: 3, from: 0, userPartition: 0 });
    expect(d.action).toHaveProperty("resourceVersion");
  });

  it("never touches the partition without ClaimsFirst, or when the pod template is not rolling (P4)", () => {
    expect(plan(world({ rolling: true })).action?.type).toBe("PatchClaim");
    expect(plan(world({ set: claimsFirst(), rolling: false })).action?.type).toBe("PatchClaim");
  });

  it("does not raise a partition the user already set above the target", () => {
    const d = plan(world({ set: claimsFirst({ partition: 3 }), rolling: true }));
    expect(d.action?.type).not.toBe("PatchPartition");
  });

  it("blocks saying what to do when the writer has no pod side", () => {
    const d = plan(world({ set: claimsFirst(), rolling: true }), CLAIMS_ONLY);
    expect(d.reason).toBe("ActionNotSupported");
    expect(d.message).toMatch(/partition patches and evictions go to the API server directly/);
  });

  it("goes direct even when claims go through pull requests", () => {
    const d = plan(world({ set: claimsFirst(), rolling: true }), PULL_REQUEST);
    expect(d.reason).toBe("PartitionHeld");
  });
});

describe("P2: lowering the partition to the ordinals whose claims are ready", () => {
  it("updates claims within the user's partition while the live one holds every pod", () => {
    const s = world({ set: holding(0, 3), rolling: true });
    const d = plan(s);
    expect(d.action).toMatchObject({ type: "PatchClaim", claim: "data-web-2" });
  });

  it("lowers it to the highest ordinal whose claims are done, one patch", () => {
    const base = world({ set: holding(0, 3), rolling: true });
    const d = plan(world({ set: holding(0, 3), rolling: true, claims: done(base, 2) }));
    expect(d.reason).toBe("PartitionLowered");
    expect(d.action).toMatchObject({ type: "PatchPartition", partition: 2, from: 3 });
    expect(d.action).not.toHaveProperty("userPartition");
  });

  it("never below the user's partition", () => {
    const base = world({ set: holding(1, 3), rolling: true });
    const d = plan(world({ set: holding(1, 3), rolling: true, claims: done(base, 0, 1, 2) }));
    expect(d.action).toMatchObject({ type: "PatchPartition", partition: 1 });
  });

  it("never below the user's partition, even one above the replicas", () => {
    const d = plan(world({ set: holding(5, 6), rolling: true }));
    expect(d.action).toMatchObject({ type: "PatchPartition", partition: 5 });
  });

  it("counts the partition from spec.ordinals.start", () => {
    const spec = holding(0, 3, { start: 5 });
    const base = world({ set: spec, rolling: true });
    const set = base.statefulSet;
    const revision = revisionOf(base);
    const claims = base.claims.map((c) =>
      c.metadata.name === "data-web-7" ? makeClaim("data-web-7", { storage: "2Gi", revision }) : c,
    );
    const d = plan({ ...base, statefulSet: set, claims });
    expect(d.action).toMatchObject({ type: "PatchPartition", partition: 2, from: 3 });
  });
});

describe("P3: an ordinal is in flight until its pod runs the new template and is Ready", () => {
  it("waits for the pod before the next ordinal's claims", () => {
    const base = world({ set: holding(0, 2), rolling: true });
    const d = plan(world({ set: holding(0, 2), rolling: true, claims: done(base, 2) }));
    expect(d.reason).toBe("PodUpdating");
    expect(d.action).toBeUndefined();
    expect(d.ordinals.find((o) => o.ordinal === 2)).toMatchObject({
      state: "InFlight",
      podRevision: OLD,
      podUpdated: false,
      podReady: true,
    });
  });

  it("waits for the replaced pod to be Ready", () => {
    const base = world({ set: holding(0, 2), rolling: true });
    const d = plan(
      world({ set: holding(0, 2), rolling: true, claims: done(base, 2), pods: { 2: { revision: NEW, ready: false } } }),
    );
    expect(d.reason).toBe("PodUpdating");
    expect(d.message).toMatch(/web-2 runs the new pod template and is not Ready/);
  });

  it("starts the next ordinal once the pod is replaced and Ready", () => {
    const base = world({ set: holding(0, 2), rolling: true });
    const d = plan(world({ set: holding(0, 2), rolling: true, claims: done(base, 2), pods: { 2: { revision: NEW } } }));
    expect(d.action).toMatchObject({ type: "PatchClaim", claim: "data-web-1" });
  });

  it("a pod held below the partition holds no slot: a higher ordinal added by a scale-up still gets its claims (no deadlock)", () => {
    // Ordinals 1 and 0 have their claims done but their pods wait for the partition (2); the
    // scale-up's ordinal 3 has claims at the old size, so the partition cannot come down past it.
    const spec = holding(0, 2, { replicas: 4 });
    const base = world({ set: spec, rolling: true });
    const d = plan(world({ set: spec, rolling: true, claims: done(base, 2, 1, 0), pods: { 2: { revision: NEW } } }));
    expect(d.action).toMatchObject({ type: "PatchClaim", claim: "data-web-3" });
    expect(d.ordinals.find((o) => o.ordinal === 1)).toMatchObject({ state: "Pending", podUpdated: false });
  });

  it("with maxUnavailable 2, a second ordinal's claims start while the first pod is replaced", () => {
    const spec = holding(0, 2, { maxUnavailable: 2 });
    const base = world({ set: spec, rolling: true });
    const d = plan(world({ set: spec, rolling: true, claims: done(base, 2) }));
    expect(d.action).toMatchObject({ type: "PatchClaim", claim: "data-web-1" });
  });
});

describe("P4: restoring the user's partition", () => {
  it("restores it and removes the record once every ordinal's claims and pod are done", () => {
    const base = world({ set: holding(0, 0), rolling: true });
    const d = plan(
      world({
        set: holding(0, 0),
        rolling: true,
        claims: done(base, 0, 1, 2),
        pods: { 0: { revision: NEW }, 1: { revision: NEW }, 2: { revision: NEW } },
      }),
    );
    expect(d.reason).toBe("PartitionRestored");
    expect(d.action).toMatchObject({ type: "PatchPartition", partition: 0, userPartition: null });
  });

  it("then completes", () => {
    const base = world({ set: claimsFirst(), rolling: false });
    const d = plan(
      world({
        set: claimsFirst(),
        rolling: false,
        claims: done(base, 0, 1, 2),
        pods: { 0: { revision: OLD }, 1: { revision: OLD }, 2: { revision: OLD } },
      }),
    );
    expect(d.phase).toBe("Complete");
  });

  it("restores it at once when ClaimsFirst is turned off while claimstep holds it", () => {
    const d = plan(world({ set: { partition: 3, annotations: { [Keys.userPartition]: "1" } }, rolling: true }));
    expect(d.action).toMatchObject({ type: "PatchPartition", partition: 1, userPartition: null });
  });

  // Issue 36 point 1. KEP-4650: "he can change volumeClaimUpdateStrategy back to OnClaimDelete to
  // unblock normal Pod rollout immediately".
  it.each([
    ["OnClaimDelete", { strategy: "OnClaimDelete" }, /volume-claim-update-strategy is OnClaimDelete/],
    ["the strategy removed", { strategy: null }, /volume-claim-update-strategy is not set/],
    ["OnDelete", { updateStrategyType: "OnDelete" }, /OnDelete/],
  ] as const)(
    "opting out (%s) while claimstep holds the partition restores the user's at once, then nothing",
    (_, opt, says) => {
      const set: SetSpec = { ...holding(1, 3), ...opt };
      const d = plan(world({ set, rolling: true }));
      expect(d.reason).toBe("PartitionRestored");
      expect(d.action).toMatchObject({ type: "PatchPartition", set: "web", partition: 1, userPartition: null });
      expect(d.action).toHaveProperty("resourceVersion");
      expect(d.message).toMatch(says);
      expect(d.message).toMatch(/restoring your partition 1/);
      // The next step finds the set as the restore left it: Idle, no write.
      const after = world({
        set: { ...set, partition: 1, annotations: { [Keys.podCoordination]: "ClaimsFirst" } },
        rolling: true,
      });
      const next = plan(after);
      expect(next.phase).toBe("Idle");
      expect(next.action).toBeUndefined();
      // (OnDelete records its Idle status once, as it always has.)
      expect(Object.keys(next.setAnnotations ?? {})).toEqual("updateStrategyType" in opt ? [Keys.status] : []);
    },
  );

  it("an opted-out set claimstep does not hold, or whose record it cannot read, is left alone", () => {
    const cases: Record<string, string>[] = [{ [Keys.podCoordination]: "ClaimsFirst" }, { [Keys.userPartition]: "x" }];
    for (const annotations of cases) {
      const d = plan(world({ set: { strategy: "OnClaimDelete", partition: 3, annotations }, rolling: true }));
      expect(d.reason).toBe("NotOptedIn");
      expect(d.action).toBeUndefined();
      expect(d.setAnnotations).toBeUndefined();
    }
  });
});

describe("bad pod annotations block and write nothing", () => {
  it.each([
    [Keys.podCoordination, "claimsfirst", /pod-coordination="claimsfirst" is not one of None, ClaimsFirst/],
    [Keys.restartPods, "Always", /restart-pods="Always" is not one of Never, WhenRequired/],
    [Keys.restartAfter, "5 minutes", /restart-after="5 minutes" is not a duration/],
    [Keys.userPartition, "-1", /user-partition="-1" is not a partition/],
  ])("%s=%s", (key, value, message) => {
    const d = plan(world({ set: { annotations: { [key]: value } }, rolling: true }));
    expect(d.phase).toBe("Blocked");
    expect(d.reason).toBe("InvalidPolicy");
    expect(d.message).toMatch(message);
    expect(d.action).toBeUndefined();
  });
});

/** A claim at the revision whose volume grew and whose file system waits on its pod. */
const waitingOnPod = (revision: string): ClaimSpec & { lastTransitionTime?: string } => ({
  storage: "2Gi",
  capacity: "1Gi",
  revision,
  allocatedResourceStatus: "NodeResizePending",
  allocated: "2Gi",
  conditions: [
    {
      type: "FileSystemResizePending",
      message: "Waiting for user to (re-)start a pod to finish file system resize of volume on node.",
    },
  ],
});

function restartWorld(
  opts: {
    waitedMinutes?: number;
    pods?: Record<number, PodSpec>;
    annotations?: Record<string, string>;
    inUse?: boolean;
  } = {},
): Snapshot {
  const annotations = { [Keys.restartPods]: "WhenRequired", ...opts.annotations };
  const base = world({ set: { annotations }, rolling: false });
  const revision = revisionOf(base);
  const s = world({
    set: { annotations },
    rolling: false,
    claims: { 2: waitingOnPod(revision) },
    ...(opts.pods ? { pods: opts.pods } : {}),
  });
  const claim = s.claims.find((c) => c.metadata.name === "data-web-2")!;
  if (opts.inUse) {
    claim.status = {
      ...claim.status,
      allocatedResourceStatuses: { storage: "ControllerResizeInProgress" },
      conditions: [
        {
          type: "ControllerResizeError",
          status: "True",
          message: "volume pvc-1 is in use by pod web-2; the driver only supports offline expansion",
        },
      ],
    };
  } else {
    claim.status!.conditions = claim.status!.conditions!.map((c) => ({
      ...c,
      lastTransitionTime: minutesAgo(opts.waitedMinutes ?? 10),
    }));
  }
  return s;
}

describe("R1–R2: restarting a pod whose volume waits on it", () => {
  it("evicts the pod (uid precondition) once the resize has waited restart-after", () => {
    const d = plan(restartWorld());
    expect(d.reason).toBe("PodEvicted");
    expect(d.action).toEqual({
      type: "EvictPod",
      namespace: "default",
      pod: "web-2",
      uid: `uid-web-2-${OLD}`,
      ordinal: 2,
      claim: "data-web-2",
    });
    // Recorded as attempted, written before the eviction (functions/step.ts); its outcome replaces it.
    expect(JSON.parse(d.setAnnotations![Keys.lastEviction]!)).toMatchObject({
      pod: "web-2",
      result: "Attempted",
      at: NOW.toISOString(),
    });
  });

  it("waits until restart-after has passed, and says when", () => {
    const d = plan(restartWorld({ waitedMinutes: 1 }));
    expect(d.action).toBeUndefined();
    expect(d.message).toMatch(/restarts pod web-2 at 2026-11-30T12:04:00.000Z/);
    expect(d.requeueAfter).toBe(240);
  });

  it("honours a restart-after of the set's own", () => {
    expect(plan(restartWorld({ waitedMinutes: 1, annotations: { [Keys.restartAfter]: "30s" } })).action?.type).toBe(
      "EvictPod",
    );
  });

  it("evicts at once when the driver reports the volume in use (offline-only expansion)", () => {
    expect(plan(restartWorld({ inUse: true })).action?.type).toBe("EvictPod");
  });

  it("rule 16: never for a claim whose driver needs no node expansion (node-expansion-not-required)", () => {
    const s = restartWorld();
    const claim = s.claims.find((c) => c.metadata.name === "data-web-2")!;
    claim.metadata.annotations = { ...claim.metadata.annotations, [Keys.nodeExpansionNotRequired]: "true" };
    const d = plan(s);
    expect(d.action).toBeUndefined();
    expect(d.reason).toBe("ClaimResizing");
    expect(d.message).not.toMatch(/restarts pod/);
  });

  it("rule 19: a claim whose class waits for its resize still gets its pod restarted", () => {
    const annotations = { [Keys.restartPods]: "WhenRequired" };
    const desired = [{ name: "data", storage: "2Gi", vac: "gold" }];
    const base = world({ set: { annotations, desired }, rolling: false });
    const revision = revisionOf(base);
    const s = world({
      set: { annotations, desired },
      rolling: false,
      claims: {
        0: { storage: "2Gi", vac: "gold", currentVac: "gold", revision },
        1: { storage: "2Gi", vac: "gold", currentVac: "gold", revision },
        2: { ...waitingOnPod(revision), vac: "silver", currentVac: "silver" },
      },
    });
    s.volumeAttributesClasses = [{ metadata: { name: "gold" }, driverName: "x" }];
    const claim = s.claims.find((c) => c.metadata.name === "data-web-2")!;
    claim.status!.conditions = claim.status!.conditions!.map((c) => ({ ...c, lastTransitionTime: minutesAgo(10) }));
    const d = plan(s);
    expect(d.reason).toBe("PodEvicted");
    expect(d.action).toMatchObject({ type: "EvictPod", pod: "web-2", claim: "data-web-2" });
  });

  it("never without restart-pods: WhenRequired", () => {
    const s = restartWorld();
    delete s.statefulSet.metadata.annotations![Keys.restartPods];
    const d = plan(s);
    expect(d.action).toBeUndefined();
    expect(d.reason).toBe("ClaimResizing");
  });

  it("never while another pod in scope is not Ready", () => {
    const d = plan(restartWorld({ pods: { 0: { ready: false } } }));
    expect(d.action).toBeUndefined();
    expect(d.message).toMatch(/not Ready: web-0/);
  });

  it("never a pod created less than restart-after ago (that restart already happened)", () => {
    expect(plan(restartWorld({ pods: { 2: { createdMinutesAgo: 2 } } })).action).toBeUndefined();
  });

  it("never twice for one wait: not again within restart-after of its own eviction", () => {
    const record = JSON.stringify({ pod: "web-2", uid: "old", at: minutesAgo(1), result: "Evicted" });
    expect(plan(restartWorld({ annotations: { [Keys.lastEviction]: record } })).action).toBeUndefined();
  });
});

describe("R3: a PodDisruptionBudget's refusal", () => {
  it("turns the 429 into Waiting/DisruptionBudget with the budget's message, recorded", () => {
    const s = restartWorld();
    const planned = plan(s);
    const d = verdict(s, NOW, planned, {
      kind: "budget",
      message: "The disruption budget web needs 3 healthy pods and has 3 currently",
    });
    expect(d.phase).toBe("Waiting");
    expect(d.reason).toBe("DisruptionBudget");
    expect(d.message).toMatch(/needs 3 healthy pods and has 3 currently/);
    expect(d.events.map((e) => [e.type, e.reason])).toEqual([["Warning", "DisruptionBudget"]]);
    expect(JSON.parse(d.setAnnotations![Keys.lastEviction]!)).toMatchObject({
      pod: "web-2",
      result: "DisruptionBudget",
    });
  });

  it("does not ask again for two minutes", () => {
    const record = JSON.stringify({
      pod: "web-2",
      uid: "x",
      at: minutesAgo(0.5),
      result: "DisruptionBudget",
      message: "The disruption budget web needs 3 healthy pods and has 3 currently",
    });
    const d = plan(restartWorld({ annotations: { [Keys.lastEviction]: record } }));
    expect(d.action).toBeUndefined();
    expect(d.reason).toBe("DisruptionBudget");
    expect(d.requeueAfter).toBe(90);
  });

  it("an attempt with no recorded outcome, its pod still there with the same uid, counts as refused for two minutes", () => {
    const record = JSON.stringify({ pod: "web-0", uid: `uid-web-0-${OLD}`, at: minutesAgo(0.5), result: "Attempted" });
    const d = plan(restartWorld({ annotations: { [Keys.lastEviction]: record } }));
    expect(d.action).toBeUndefined();
    expect(d.reason).toBe("DisruptionBudget");
    expect(d.message).toMatch(/has no recorded outcome and the pod is still there/);
  });

  it("an attempt whose pod was replaced since went through: no throttle for another pod", () => {
    const record = JSON.stringify({ pod: "web-0", uid: "an-older-uid", at: minutesAgo(0.5), result: "Attempted" });
    expect(plan(restartWorld({ annotations: { [Keys.lastEviction]: record } })).action?.type).toBe("EvictPod");
  });

  it("asks again after two minutes", () => {
    const record = JSON.stringify({ pod: "web-2", uid: "x", at: minutesAgo(2.5), result: "DisruptionBudget" });
    expect(plan(restartWorld({ annotations: { [Keys.lastEviction]: record } })).action?.type).toBe("EvictPod");
  });

  // Issue 38 point 4: the charge is the step's to give (the pod writer's; a test shortens it with
  // CLAIMSTEP_BUDGET_CHARGE_SECONDS), so that no test waits two real minutes; the rule is the same.
  it("waits the charge the step is given, then asks again; the 429's requeue is that charge", () => {
    const at = new Date(NOW.getTime() - 10_000).toISOString();
    const record = JSON.stringify({ pod: "web-2", uid: "x", at, result: "DisruptionBudget", message: "no" });
    const s = restartWorld({ annotations: { [Keys.lastEviction]: record } });
    const charged = planStep(s, NOW, WITH_PODS, { budgetChargeSeconds: 15 });
    expect(charged.reason).toBe("DisruptionBudget");
    expect(charged.requeueAfter).toBe(5);
    expect(charged.message).toBe(
      "no (evicting web-2); the refused eviction charges the budget until about 2026-11-30T12:00:05.000Z, claimstep asks again then",
    );
    expect(planStep(s, NOW, WITH_PODS, { budgetChargeSeconds: 10 }).action?.type).toBe("EvictPod");
    expect(plan(s).requeueAfter).toBe(110);

    const fresh = restartWorld();
    const refusal = { kind: "budget", message: "no" } as const;
    expect(verdict(fresh, NOW, plan(fresh), refusal).requeueAfter).toBe(120);
    expect(verdict(fresh, NOW, plan(fresh), refusal, 15).requeueAfter).toBe(15);
    // The reason's pace is the default charge.
    expect(requeueAfterOf("DisruptionBudget")).toBe(BUDGET_CHARGE_SECONDS);
  });
});

// Issue 36 point 3, rule 21. KEP-4650 table row 9: wait for the Pod and its PVCs to be ready
// before the next replica (the StatefulSet controller's OrderedReady rule); maxUnavailable counts
// unready pods as the controller does.
describe("rule 21: an ordinal's pod not Ready stops the next one", () => {
  const without = (s: Snapshot, ordinal: number, change: (p: Pod) => void): Snapshot => {
    s.pods.filter((p) => p.metadata.name === `web-${ordinal}`).forEach(change);
    return s;
  };

  it("the updated ordinal's pod not Ready: Waiting/PodNotReady naming the pod and the ordinal, no write", () => {
    const base = world({ rolling: false });
    const d = plan(world({ rolling: false, claims: done(base, 2), pods: { 2: { ready: false } } }));
    expect(d.phase).toBe("Waiting");
    expect(d.reason).toBe("PodNotReady");
    expect(d.message).toMatch(/claims of ordinal 2 ready, but pod web-2 is not Ready: the next ordinal waits/);
    expect(d.action).toBeUndefined();
    expect(d.events).toEqual([expect.objectContaining({ type: "Warning", reason: "PodNotReady" })]);
  });

  it("goes on once the pod is Ready", () => {
    const base = world({ rolling: false });
    const d = plan(world({ rolling: false, claims: done(base, 2) }));
    expect(d.action).toMatchObject({ type: "PatchClaim", claim: "data-web-1" });
  });

  it("a pod being deleted, or not there, is the controller's to re-create: not waited for", () => {
    const base = world({ rolling: false });
    const deleting = without(
      world({ rolling: false, claims: done(base, 2), pods: { 2: { ready: false } } }),
      2,
      (p) => {
        p.metadata.deletionTimestamp = minutesAgo(0);
      },
    );
    expect(plan(deleting).action).toMatchObject({ type: "PatchClaim", claim: "data-web-1" });
    const gone = world({ rolling: false, claims: done(base, 2) });
    gone.pods = gone.pods.filter((p) => p.metadata.name !== "web-2");
    expect(plan(gone).action).toMatchObject({ type: "PatchClaim", claim: "data-web-1" });
  });

  it("any pod of the set not Ready uses up a maxUnavailable slot (below the partition too): nothing starts with maxUnavailable 1", () => {
    for (const set of [{}, { partition: 1 }] as SetSpec[]) {
      const d = plan(world({ set, rolling: false, pods: { 0: { ready: false } } }));
      expect(d.reason).toBe("PodNotReady");
      expect(d.message).toMatch(/pod web-0 \(ordinal 0\) is not Ready: it uses up a maxUnavailable slot/);
      expect(d.message).toMatch(/ordinal 2 starts when/);
      expect(d.action).toBeUndefined();
    }
  });

  it("with maxUnavailable 2, one pod not Ready leaves one slot", () => {
    const d = plan(world({ set: { maxUnavailable: 2 }, rolling: false, pods: { 0: { ready: false } } }));
    expect(d.action).toMatchObject({ type: "PatchClaim", claim: "data-web-2" });
  });

  it("an ordinal's own pod not Ready takes no slot from it: its claims are written (a full disk is what the growth fixes)", () => {
    const d = plan(world({ rolling: false, pods: { 2: { ready: false } } }));
    expect(d.action).toMatchObject({ type: "PatchClaim", claim: "data-web-2" });
  });

  it("Complete (rule 10) is not said while an updated ordinal's pod is not Ready; then it is", () => {
    const base = world({ rolling: false });
    const waiting = plan(world({ rolling: false, claims: done(base, 0, 1, 2), pods: { 1: { ready: false } } }));
    expect(waiting.reason).toBe("PodNotReady");
    expect(waiting.message).toMatch(/pod web-1 is not Ready/);
    expect(waiting.setAnnotations?.[Keys.currentRevision]).toBeUndefined();
    const complete = plan(world({ rolling: false, claims: done(base, 0, 1, 2) }));
    expect(complete.reason).toBe("RolloutComplete");
  });

  it("once complete (current-revision written), a pod that fails later does not reopen the rollout", () => {
    const base = world({ rolling: false });
    const set: SetSpec = { annotations: { [Keys.currentRevision]: revisionOf(base) } };
    const d = plan(world({ set, rolling: false, claims: done(base, 0, 1, 2), pods: { 1: { ready: false } } }));
    expect(d.reason).toBe("Converged");
    expect(d.action).toBeUndefined();
  });
});
