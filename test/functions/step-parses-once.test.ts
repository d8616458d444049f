// One step parses the set's annotations once (core/policy/policy.ts): runStep computes the policy for its
// usage read and for the planner, and no rule parses an annotation again. Each parser is wrapped to
// count its calls; the step's own reader is a fake, so only the step and the planner count.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { writerFor } from "../../adapters/gitops/apply-via.js";
import { Keys } from "../../core/keys.js";
import { revisionOf } from "../../core/kube/revision.js";
import type { Writers } from "../../core/ports.js";
import { runStep } from "../../functions/step.js";
import { claimsFor, makeSet, snapshot } from "../core/builders.js";

const { calls, counted } = vi.hoisted(() => {
  const calls = new Map<string, number>();
  const counted = <F extends (...a: any[]) => any>(name: string, f: F): F =>
    ((...a: any[]) => {
      calls.set(name, (calls.get(name) ?? 0) + 1);
      return f(...a);
    }) as F;
  return { calls, counted };
});

vi.mock("../../core/policy/templates.js", async (load) => {
  const m = await load<typeof import("../../core/policy/templates.js")>();
  return { ...m, desiredTemplates: counted("desiredTemplates", m.desiredTemplates) };
});
vi.mock("../../core/policy/annotations.js", async (load) => {
  const m = await load<typeof import("../../core/policy/annotations.js")>();
  return {
    ...m,
    strategyOf: counted("strategyOf", m.strategyOf),
    applyViaOf: counted("applyViaOf", m.applyViaOf),
    finalizeOf: counted("finalizeOf", m.finalizeOf),
    autogrowOf: counted("autogrowOf", m.autogrowOf),
  };
});
vi.mock("../../core/kube/statefulset.js", async (load) => {
  const m = await load<typeof import("../../core/kube/statefulset.js")>();
  return {
    ...m,
    maxUnavailableOf: counted("maxUnavailableOf", m.maxUnavailableOf),
    ordinalsOf: counted("ordinalsOf", m.ordinalsOf),
  };
});
vi.mock("../../core/policy/pod-policy.js", async (load) => {
  const m = await load<typeof import("../../core/policy/pod-policy.js")>();
  return { ...m, podPolicyOf: counted("podPolicyOf", m.podPolicyOf) };
});

const PARSERS = [
  "strategyOf",
  "desiredTemplates",
  "maxUnavailableOf",
  "ordinalsOf",
  "applyViaOf",
  "podPolicyOf",
  "finalizeOf",
  "autogrowOf",
];
const ref = { namespace: "default", name: "web" };
const writers: Writers = {
  claims: { name: "recording", supports: ["PatchClaim"], proposes: false, apply: async () => ({ kind: "applied" }) },
  status: { annotateSet: async () => undefined },
  events: { recordEvents: async () => {} },
};

/** A set asking for every extension, at its revision (so the step reads usage for autogrow). */
function everyExtension() {
  const set = makeSet({
    annotations: {
      [Keys.podCoordination]: "ClaimsFirst",
      [Keys.applyVia]: "direct",
      [Keys.finalize]: "Recreate",
      [Keys.autogrow]: JSON.stringify({ threshold: "80%", increase: "25%", max: "10Gi" }),
    },
  });
  set.metadata.annotations![Keys.currentRevision] = revisionOf(set.spec.volumeClaimTemplates ?? []);
  return snapshot(set, claimsFor(set));
}

describe("one step parses the set's annotations once", () => {
  beforeEach(() => calls.clear());

  it("calls each annotation parser exactly once when a converged rollout comes to re-creating the set", async () => {
    const set = makeSet({
      desired: [{ name: "data", storage: "2Gi" }],
      annotations: { [Keys.applyVia]: "pull-request", [Keys.finalize]: "Recreate" },
    });
    const revision = revisionOf(JSON.parse(set.metadata.annotations![Keys.templates]!));
    set.metadata.annotations![Keys.currentRevision] = revision;
    const s = snapshot(set, claimsFor(set, { storage: "2Gi", revision }));
    const r = await runStep({
      reader: { load: async () => s },
      writers,
      ref,
      now: new Date("2026-11-30T10:00:00Z"),
      dryRun: true,
    });
    expect(r.decision.message).toContain("ProposeRecreate");
    expect(Object.fromEntries(PARSERS.map((p) => [p, calls.get(p) ?? 0]))).toEqual(
      Object.fromEntries(PARSERS.map((p) => [p, 1])),
    );
  });

  it("calls each annotation parser exactly once when the claim writer is chosen per set (writerFor, claimstep.io/apply-via)", async () => {
    const s = everyExtension();
    const perSet = { ...writers, claims: writerFor({ direct: writers.claims as never }) };
    const r = await runStep({
      reader: { load: async () => s },
      writers: perSet,
      ref,
      now: new Date("2026-11-30T10:00:00Z"),
      dryRun: true,
    });
    expect(r.writer).toBe("recording");
    expect(Object.fromEntries(PARSERS.map((p) => [p, calls.get(p) ?? 0]))).toEqual(
      Object.fromEntries(PARSERS.map((p) => [p, 1])),
    );
  });

  it("calls each annotation parser exactly once per step (usage read and planner together)", async () => {
    let usageRead = 0;
    const metrics = { usage: async () => (usageRead++, { ok: true as const, volumes: [] }) };
    const s = everyExtension();
    await runStep({
      reader: { load: async () => s },
      writers,
      ref,
      now: new Date("2026-11-30T10:00:00Z"),
      dryRun: true,
      metrics,
    });
    expect(usageRead).toBe(1);
    expect(Object.fromEntries(PARSERS.map((p) => [p, calls.get(p) ?? 0]))).toEqual(
      Object.fromEntries(PARSERS.map((p) => [p, 1])),
    );
  });
});
