// Planted autogrow bugs (issue 18): the property suite's autogrow invariants (A1–A3) must catch a
// planner that grows while a rollout is in progress, grows above max, or grows twice from one
// revision. As in planted.test.ts, each runs one fixed scenario through the harness (the production
// reader, writers and PrometheusMetrics over the simulated cluster, every invariant checked after
// every invocation) with a deliberately broken planner around core/plan/plan.ts's planStep (core/ is
// not touched); the unbroken planner must pass the same scenario, grow, and settle.
import { describe, expect, it, vi } from "vitest";
import { Keys } from "../../core/keys.js";
import { toBytes } from "../../core/kube/quantity.js";
import { revisionOf } from "../../core/kube/revision.js";
import { autogrowStep } from "../../core/plan/autogrow.js";
import { autogrowOf } from "../../core/policy/annotations.js";
import { desiredTemplates } from "../../core/policy/templates.js";
import type { WriterCapabilities } from "../../core/ports.js";
import type { Decision, Snapshot, UsageReading } from "../../core/types.js";
import type { InvariantId } from "./invariants.js";
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

/** The snapshot with the set's annotations edited (the planner sees a world that is not). */
function edited(snapshot: Snapshot, change: (a: Record<string, string>) => void): Snapshot {
  const next = structuredClone(snapshot);
  change((next.statefulSet.metadata.annotations ??= {}));
  return next;
}

const isAutogrow = (d: Decision) => d.reason === "AutogrowTriggered" || d.reason === "AutogrowLimit";

const BUGS: Record<string, { bug: Bug; scenario: Scenario; invariant: InvariantId; says: RegExp; limited?: boolean }> =
  {
    // No wait for the rollout: as soon as a claim is full, raise its template — here mid-rollout,
    // on a usage the planner makes up (every claim full: no query is made while a rollout runs).
    "grows while a rollout is in progress": {
      bug: (real, s, now, w) => {
        const d = real(s, now, w);
        if (d.action?.type !== "PatchClaim") return d;
        const policy = autogrowOf(s.statefulSet);
        const desired = desiredTemplates(s.statefulSet);
        if (!policy.ok || !policy.policy || !desired.ok) return d;
        // Every claim full at its desired size.
        const sizeOf = (claim: string) =>
          desired.templates.find((t) => claim.startsWith(`${t.metadata.name}-`))?.spec.resources?.requests?.storage;
        const full: UsageReading = {
          ok: true,
          volumes: s.claims.map((c) => {
            const capacity = toBytes(String(sizeOf(c.metadata.name) ?? "1Gi"));
            return { claim: c.metadata.name, usedBytes: capacity, capacityBytes: capacity };
          }),
        };
        const start = s.statefulSet.spec.ordinals?.start ?? 0;
        const ordinals = Array.from({ length: s.statefulSet.spec.replicas ?? 1 }, (_, i) => start + i);
        const grow = autogrowStep({
          set: s.statefulSet,
          policy: policy.policy,
          reading: full,
          templates: desired.templates,
          ordinals,
          revision: revisionOf(desired.templates),
          revisionOf,
        });
        if (!grow || !("conclusion" in grow) || !grow.conclusion.action) return d;
        return {
          ...d,
          reason: "AutogrowTriggered",
          message: grow.conclusion.message,
          action: grow.conclusion.action,
          events: grow.conclusion.events ?? [],
        };
      },
      scenario: scenario({
        growGi: 1,
        policy: { threshold: "60%", increase: "50%", max: "8Gi" },
        bytesPerSecond: 2 * 2 ** 20,
        startUsedMi: 700,
        stopAt: 40,
      }),
      invariant: "A2",
      says: /grew while the rollout is in progress/,
    },
    // The limit forgotten: the growth goes to the formula's size, whatever max says.
    "grows above max": {
      bug: (real, s, now, w) => {
        const d = real(s, now, w);
        if (!isAutogrow(d)) return d;
        const raw = s.statefulSet.metadata.annotations?.[Keys.autogrow];
        if (raw === undefined) return d;
        return real(
          edited(s, (a) => void (a[Keys.autogrow] = JSON.stringify({ ...JSON.parse(raw), max: "1Pi" }))),
          now,
          w,
        );
      },
      scenario: scenario({
        growGi: 0,
        policy: { threshold: "70%", increase: "50%", max: "3Gi" },
        bytesPerSecond: 8 * 2 ** 20,
        startUsedMi: 600,
        stopAt: 80,
      }),
      invariant: "A1",
      says: /above the autogrow max/,
      limited: true,
    },
    // The record ignored: once the user's manifest brings the revision back (a GitOps tool re-applying
    // it), the planner grows from it again, and again.
    "grows twice from one revision": {
      bug: (real, s, now, w) => {
        const d = real(s, now, w);
        if (d.phase !== "Complete") return d;
        const forgetful = real(
          edited(s, (a) => delete a[Keys.autogrownFrom]),
          now,
          w,
        );
        return forgetful.action?.type === "RaiseTemplate" ? forgetful : d;
      },
      scenario: scenario({
        growGi: 0,
        policy: { threshold: "75%", increase: "1Gi", max: "6Gi" },
        bytesPerSecond: 2 ** 20,
        startUsedMi: 700,
        stopAt: 60,
        reapplyAt: 20,
        fasterAt: 20,
      }),
      invariant: "A3",
      says: /a second growth from revision \w+ \(claimstep\.io\/autogrown-from already says/,
    },
  };

function scenario(o: {
  growGi: number;
  policy: NonNullable<Scenario["autogrow"]>["policy"];
  bytesPerSecond: number;
  startUsedMi: number;
  stopAt: number;
  reapplyAt?: number;
  /** The application writes 8 MiB/s from this step on. */
  fasterAt?: number;
}): Scenario {
  return {
    kind: "clean",
    seed: 1818,
    replicas: 3,
    ordinalsStart: 0,
    maxUnavailable: 1,
    parallel: false,
    vacApi: false,
    classes: [
      { name: "fast", allowVolumeExpansion: true, driver: { resize: "online", modify: "ok", resizeMs: 4_000 } },
    ],
    templates: [{ name: "data", storageGi: 1, className: "fast" }],
    desired: { growGi: [o.growGi], vac: [undefined], label: false },
    edits: [
      { atStep: 0, kind: "workload", index: 0 },
      { atStep: o.stopAt, kind: "workloadStop" },
      ...(o.reapplyAt !== undefined ? [{ atStep: o.reapplyAt, kind: "reapply" as const }] : []),
      ...(o.fasterAt !== undefined ? [{ atStep: o.fasterAt, kind: "workload" as const, index: 1 }] : []),
    ],
    faults: {},
    raceRate: 0,
    latency: { resizeMs: 4_000, modifyMs: 1_000, bindMs: 500 },
    gapSeconds: [5, 10],
    autogrow: {
      policy: o.policy,
      workloads: [
        { template: 0, bytesPerSecond: o.bytesPerSecond, startUsedMi: o.startUsedMi },
        { template: 0, bytesPerSecond: 8 * 2 ** 20 },
      ],
      metricsFailure: 0,
      maxReached: false,
    },
  };
}

describe("planted autogrow bugs are caught by the property suite", () => {
  for (const [name, { bug, scenario: s, invariant, says, limited }] of Object.entries(BUGS)) {
    it(`unbroken: the scenario for "${name}" grows and settles with no violation`, async () => {
      planted.bug = undefined;
      const r = await runScenario(s);
      expect(r.violations).toEqual([]);
      expect(r.knownBugHits).toEqual([]);
      expect(r.growths).toBeGreaterThan(0);
      if (limited) expect(r.limited, `${r.phase}/${r.reason}: ${r.message}`).toBe(true);
      else expect(r.converged, `${r.phase}/${r.reason}: ${r.message}`).toBe(true);
    });

    it(`planted: ${name} → ${invariant}`, async () => {
      planted.bug = bug;
      try {
        const r = await runScenario(s, process.env.PLANTED_TRACE ? { trace: (l) => console.log(l.slice(0, 400)) } : {});
        const caught = r.violations.filter((v) => v.invariant === invariant);
        if (process.env.PLANTED_LOG) console.log(name, JSON.stringify(r.violations, null, 1));
        expect(caught.map((v) => v.message).join("\n"), `violations: ${JSON.stringify(r.violations)}`).toMatch(says);
      } finally {
        planted.bug = undefined;
      }
    });
  }
});
