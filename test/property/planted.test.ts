// Planted bugs: the property suite's pod invariants (I10, I11) must catch a planner that breaks
// the pod rules. Each case runs one focused scenario through the harness (the production reader
// and writers over the simulated API server, every invariant checked after every invocation) with
// a deliberately broken planner injected around core/plan/plan.ts's planStep (core/ is not touched),
// and expects the violation under the right invariant; the unbroken planner must pass the same
// scenario and converge. Reproducible: the scenarios are fixed, the sim is seeded.
import { describe, expect, it, vi } from "vitest";
import { Keys } from "../../core/keys.js";
import type { WriterCapabilities } from "../../core/ports.js";
import type { Decision, Snapshot } from "../../core/types.js";
import type { Scenario } from "./scenario.js";

type PlanStep = (snapshot: Snapshot, now: Date, writer: WriterCapabilities) => Decision;
type Bug = (real: PlanStep, snapshot: Snapshot, now: Date, writer: WriterCapabilities) => Decision;

const planted = vi.hoisted(() => ({ bug: undefined as Bug | undefined }));

vi.mock("../../core/plan/plan.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../core/plan/plan.js")>();
  return {
    ...real,
    planStep: (snapshot: Snapshot, now: Date, writer: WriterCapabilities) =>
      planted.bug ? planted.bug(real.planStep, snapshot, now, writer) : real.planStep(snapshot, now, writer),
  };
});

const { runScenario } = await import("./harness.js");

/** A snapshot with the set's annotations and pods edited (the planner sees a world that is not). */
function edited(
  snapshot: Snapshot,
  change: { annotations?: (a: Record<string, string>) => void; pod?: (p: Snapshot["pods"][number]) => void },
): Snapshot {
  const next = structuredClone(snapshot);
  if (change.annotations) change.annotations((next.statefulSet.metadata.annotations ??= {}));
  if (change.pod) next.pods.forEach(change.pod);
  return next;
}

/** The record of the user's partition, as the planner reads it. */
const recorded = (s: Snapshot): number | undefined => {
  const raw = s.statefulSet.metadata.annotations?.[Keys.userPartition];
  return raw === undefined ? undefined : Number(raw);
};

const BUGS: Record<string, { bug: Bug; scenario: Scenario; invariant: "I10" | "I11"; says: RegExp }> = {
  // Off by one: the partition goes one ordinal further than the claims that are ready, so the
  // controller replaces the next pod before its claims are at the revision and ready.
  "replaces a pod before its claims are ready (lowers the partition early)": {
    bug: (real, s, now, w) => {
      const d = real(s, now, w);
      const a = d.action;
      if (a?.type !== "PatchPartition" || d.reason !== "PartitionLowered") return d;
      const floor = recorded(s) ?? 0;
      return a.partition - 1 >= floor ? { ...d, action: { ...a, partition: a.partition - 1 } } : d;
    },
    scenario: scenario({ replicas: 4, pods: { claimsFirst: true, hold: true } }),
    invariant: "I10",
    says: /letting the controller replace pod db-\d although/,
  },
  // The last lowering goes one below the user's partition (a pod the user keeps back is replaced).
  "lowers the partition below the user's": {
    bug: (real, s, now, w) => {
      const d = real(s, now, w);
      const a = d.action;
      const user = recorded(s);
      if (a?.type !== "PatchPartition" || user === undefined || a.partition !== user || a.partition === 0) return d;
      return { ...d, action: { ...a, partition: user - 1 } };
    },
    scenario: scenario({ replicas: 5, partition: 2, pods: { claimsFirst: true, hold: true } }),
    invariant: "I10",
    says: /below the user's/,
  },
  // The planner forgets that it holds the partition once the rollout is done: no restore, the
  // record stays, Complete is reported.
  "forgets to restore the user's partition (skips the restore)": {
    bug: (real, s, now, w) => {
      const d = real(s, now, w);
      if (d.reason !== "PartitionRestored") return d;
      return real(edited(s, { annotations: (a) => delete a[Keys.userPartition] }), now, w);
    },
    scenario: scenario({ replicas: 3, partition: 1, pods: { claimsFirst: true, hold: true } }),
    invariant: "I10",
    says: /still recorded/,
  },
  // R2 without its readiness check: evicts while another pod in scope is down.
  "evicts while another pod is not Ready": {
    bug: (real, s, now, w) => {
      const d = real(s, now, w);
      if (d.action) return d;
      const ready = (p: Snapshot["pods"][number]) => {
        delete p.metadata.deletionTimestamp;
        p.status = { ...p.status, phase: "Running", conditions: [{ type: "Ready", status: "True" }] };
      };
      const blind = real(edited(s, { pod: ready }), now, w);
      return blind.action?.type === "EvictPod" ? blind : d;
    },
    scenario: scenario({
      replicas: 4,
      maxUnavailable: 2,
      nodeExpansion: "offline",
      pods: { claimsFirst: false, hold: false, restartAfter: "30s" },
      podStartMs: 20_000,
      image: false,
    }),
    invariant: "I11",
    says: /another pod in scope is not Ready/,
  },
  // R2 without its memory: neither claimstep's own last eviction nor the new pod's age stops a
  // second eviction while the first restart is still under way.
  "evicts twice for one resize": {
    bug: (real, s, now, w) => {
      const d = real(s, now, w);
      if (d.action) return d;
      const forgetful = edited(s, {
        annotations: (a) => delete a[Keys.lastEviction],
        pod: (p) => void (p.metadata.creationTimestamp = "2000-01-01T00:00:00Z"),
      });
      const again = real(forgetful, now, w);
      return again.action?.type === "EvictPod" ? again : d;
    },
    scenario: scenario({
      replicas: 2,
      maxUnavailable: 1,
      nodeExpansion: "offline",
      pods: { claimsFirst: false, hold: false, restartAfter: "30s" },
      podStartMs: 20_000,
      image: false,
    }),
    invariant: "I11",
    says: /evicting twice for one resize/,
  },
};

function scenario(o: {
  replicas: number;
  partition?: number;
  maxUnavailable?: number;
  nodeExpansion?: "offline";
  pods: NonNullable<Scenario["pods"]>;
  podStartMs?: number;
  /** A pod template change before the first step (default true). */
  image?: boolean;
}): Scenario {
  return {
    kind: "clean",
    seed: 1313,
    replicas: o.replicas,
    ordinalsStart: 0,
    ...(o.partition !== undefined ? { partition: o.partition } : {}),
    maxUnavailable: o.maxUnavailable ?? 1,
    parallel: false,
    vacApi: true,
    classes: [
      {
        name: "fast",
        allowVolumeExpansion: true,
        driver: {
          resize: "online",
          modify: "ok",
          resizeMs: 4_000,
          ...(o.nodeExpansion ? { nodeExpansion: o.nodeExpansion } : {}),
        },
      },
    ],
    templates: [{ name: "data", storageGi: 1, className: "fast" }],
    desired: { growGi: [1], vac: [undefined], label: false },
    edits: o.image === false ? [] : [{ atStep: 0, kind: "image" }],
    faults: {},
    raceRate: 0,
    latency: { resizeMs: 4_000, modifyMs: 1_000, bindMs: 500, podStartMs: o.podStartMs ?? 3_000 },
    gapSeconds: [1, 4],
    pods: o.pods,
  };
}

describe("planted pod bugs are caught by the property suite", () => {
  for (const [name, { bug, scenario: s, invariant, says }] of Object.entries(BUGS)) {
    it(`unbroken: the scenario for "${name}" converges with no violation`, async () => {
      planted.bug = undefined;
      const r = await runScenario(s);
      expect(r.violations).toEqual([]);
      expect(r.converged).toBe(true);
      // The scenario exercises what the bug breaks.
      if (invariant === "I10") expect(r.partitionPatches).toBeGreaterThan(0);
      else expect(r.evictions).toBeGreaterThan(0);
    });

    it(`planted: ${name} → ${invariant}`, async () => {
      planted.bug = bug;
      try {
        const r = await runScenario(s);
        const caught = r.violations.filter((v) => v.invariant === invariant);
        if (process.env.PLANTED_LOG) console.log(name, JSON.stringify(r.violations, null, 1));
        expect(caught.map((v) => v.message).join("\n"), `violations: ${JSON.stringify(r.violations)}`).toMatch(says);
      } finally {
        planted.bug = undefined;
      }
    });
  }
});
