// Planted bug for rule 15 (docs/design.md, issue 34): the property suite's I15 — never Ready, never
// Complete, while a claim's expansion is under way — must catch a readiness that takes a capacity at
// the wanted size for done while the kubelet's file system resize is still pending (what
// core/plan/readiness.ts did before rule 15). The scenario makes that state the way the real stack does:
// a rollback while a claim grows — the template is back at the old size, which the claim's capacity
// (updated only after the node's half) already reaches, and its NodeResizePending is still to come.
// The unbroken planner must pass the same scenario and converge. Reproducible: fixed scenario, seeded sim.
import { describe, expect, it, vi } from "vitest";
import type { PersistentVolumeClaim } from "../../core/kube/k8s.js";
import { toBytes } from "../../core/kube/quantity.js";
import type { ReadinessWant } from "../../core/plan/readiness.js";
import type { Scenario } from "./scenario.js";

const planted = vi.hoisted(() => ({ on: false }));

vi.mock("../../core/plan/readiness.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../core/plan/readiness.js")>();
  return {
    ...real,
    claimReadiness: (pvc: PersistentVolumeClaim | undefined, want: ReadinessWant, name?: string) => {
      const r = real.claimReadiness(pvc, want, name);
      const capacity = pvc?.status?.capacity?.storage;
      if (!planted.on || !pvc || r.state === "Ready" || capacity === undefined) return r;
      if (toBytes(capacity) < want.storageBytes) return r;
      // The bug: capacity at the want is done, the node's half of the expansion pending or not.
      const blind = structuredClone(pvc);
      delete blind.status!.allocatedResourceStatuses;
      blind.status!.conditions = (blind.status!.conditions ?? []).filter(
        (c) => c.type !== "FileSystemResizePending" && c.type !== "Resizing",
      );
      return real.claimReadiness(blind, want, name);
    },
  };
});

const { runScenario } = await import("./harness.js");

/** data 1Gi → 2Gi on three ordinals; rolled back (the live 1Gi again) while data-db-2's file system still grows. */
const scenario: Scenario = {
  kind: "clean",
  seed: 3434,
  replicas: 3,
  ordinalsStart: 0,
  maxUnavailable: 1,
  parallel: false,
  vacApi: true,
  classes: [{ name: "fast", allowVolumeExpansion: true, driver: { resize: "online", modify: "ok", resizeMs: 2_000 } }],
  templates: [{ name: "data", storageGi: 1, className: "fast" }],
  desired: { growGi: [1], vac: [undefined], label: false },
  edits: [{ atStep: 3, kind: "rollback" }],
  faults: {},
  raceRate: 0,
  latency: { resizeMs: 2_000, modifyMs: 1_000, bindMs: 500, nodeResizeMs: 90_000 },
  gapSeconds: [2, 4],
};

describe("planted: readiness blind to a pending node expansion is caught by I15", () => {
  it("unbroken: the rollback mid-expansion converges with no violation, after the node's half", async () => {
    planted.on = false;
    const lines: string[] = [];
    const r = await runScenario(scenario, { trace: (l) => lines.push(l) });
    if (process.env.PLANTED_LOG) console.log(lines.join("\n"));
    expect(r.violations).toEqual([]);
    expect(r.converged).toBe(true);
    // The scenario reaches the state the bug misreads: a claim whose capacity reaches the template
    // while its file system resize is pending, reported as waiting.
    expect(lines.join("\n")).toMatch(/capacity reached, but its file system resize pending/);
  });

  it("planted: Ready/Complete with NodeResizePending → I15", async () => {
    planted.on = true;
    try {
      const r = await runScenario(scenario);
      if (process.env.PLANTED_LOG) console.log(JSON.stringify(r.violations, null, 1));
      const caught = r.violations.filter((v) => v.invariant === "I15");
      expect(caught.map((v) => v.message).join("\n"), JSON.stringify(r.violations)).toMatch(
        /data-db-2 .*(reported Ready while its expansion is under way|has an expansion under way)/,
      );
    } finally {
      planted.on = false;
    }
  });
});
