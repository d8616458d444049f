// Autogrow (docs/design.md "Autogrow") as planner scenarios: the policy's validation, the growth
// formula min(max, roundUpGi(max(capacity × (1 + increase), desired))), the limit, one growth per
// revision, only when no rollout is in progress, and a step without metrics going on.
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import { revisionOf } from "../../../core/kube/revision.js";
import { autogrowDecision } from "../../../core/plan/autogrow.js";
import { planStep } from "../../../core/plan/plan.js";
import { autogrowOf } from "../../../core/policy/annotations.js";
import { desiredTemplates } from "../../../core/policy/templates.js";
import type { WriterCapabilities } from "../../../core/ports.js";
import type { RaiseTemplate, Snapshot, UsageReading } from "../../../core/types.js";
import { claimsFor, makeClaim, makeSet, snapshot, template } from "../builders.js";

const DIRECT: WriterCapabilities = { name: "direct", supports: ["PatchClaim", "RaiseTemplate"], proposes: false };
const NOW = new Date("2026-11-30T12:00:00Z");
const GI = 1024n ** 3n;
const POLICY = JSON.stringify({ threshold: "80%", increase: "25%", max: "10Gi" });

/** A set complete at data 2Gi (claims at the revision and ready) with autogrow, and this usage. */
function world(
  used: Record<number, number>,
  opts: { policy?: string; storage?: string; extra?: Record<string, string> } = {},
): Snapshot {
  const storage = opts.storage ?? "2Gi";
  const set = makeSet({
    desired: [{ name: "data", storage }],
    annotations: { [Keys.autogrow]: opts.policy ?? POLICY, ...opts.extra },
  });
  const d = desiredTemplates(set);
  if (!d.ok) throw new Error(d.message);
  const revision = revisionOf(d.templates);
  set.metadata.annotations = {
    ...set.metadata.annotations,
    [Keys.currentRevision]: revision,
    [Keys.updateRevision]: revision,
  };
  const s = snapshot(set, claimsFor(set, { storage, revision }));
  const cap = BigInt(Number.parseInt(storage, 10)) * GI;
  const reading: UsageReading = {
    ok: true,
    volumes: Object.entries(used).map(([o, gi]) => ({
      claim: `data-web-${o}`,
      usedBytes: BigInt(Math.round(gi * 1024)) * 1024n ** 2n,
      capacityBytes: cap,
    })),
  };
  return { ...s, volumeUsage: reading };
}

const plan = (s: Snapshot) => planStep(s, NOW, DIRECT);

describe("the policy", () => {
  it.each([
    ["{", /is not JSON/],
    ['{"threshold":"80","increase":"25%","max":"1Ti"}', /threshold: expected a percentage such as "80%"/],
    ['{"threshold":"80%","increase":"lots","max":"1Ti"}', /increase: /],
    ['{"threshold":"80%","increase":"25%","max":"-1Gi"}', /max: expected a positive quantity/],
    ['{"threshold":"180%","increase":"25%","max":"1Ti"}', /threshold 180% must be above 0% and at most 100%/],
    ['{"threshold":"80%","increase":"25%","max":"1Ti","extra":1}', /Unrecognized key|unrecognized/i],
  ])("%s is refused, naming the set and the annotation, and blocks with nothing written", (raw, message) => {
    const s = world({ 2: 1.9 }, { policy: raw });
    const d = plan(s);
    expect(d.phase).toBe("Blocked");
    expect(d.reason).toBe("InvalidPolicy");
    expect(d.message).toMatch(/StatefulSet default\/web: annotation claimstep.io\/autogrow/);
    expect(d.message).toMatch(message);
    expect(d.action).toBeUndefined();
    expect(autogrowOf(s.statefulSet).ok).toBe(false);
  });
});

describe("growth", () => {
  it("raises the template of the fullest claim over the threshold, rounded up to whole Gi", () => {
    const d = plan(world({ 0: 1.0, 1: 1.7, 2: 1.9 }));
    expect(d.reason).toBe("AutogrowTriggered");
    const a = d.action as RaiseTemplate;
    expect(a).toMatchObject({
      type: "RaiseTemplate",
      template: "data",
      from: "2Gi",
      to: "3Gi",
      fromRevision: d.revision,
    });
    expect(a.toRevision).toBe(revisionOf(a.templates));
    expect(a.templates[0]!.spec.resources!.requests!.storage).toBe("3Gi");
    expect(d.message).toMatch(/data-web-2 uses 1\.9Gi of 2Gi \(95\.0%\): raising template data 2Gi → 3Gi/);
    expect(d.events).toEqual([expect.objectContaining({ type: "Normal", reason: "AutogrowTriggered" })]);
  });

  it("increase as a quantity: capacity + increase", () => {
    const d = plan(world({ 2: 1.9 }, { policy: JSON.stringify({ threshold: "80%", increase: "5Gi", max: "1Ti" }) }));
    expect((d.action as RaiseTemplate).to).toBe("7Gi");
  });

  it("never above max", () => {
    const d = plan(world({ 2: 7.9 }, { storage: "8Gi" }));
    expect((d.action as RaiseTemplate).to).toBe("10Gi");
  });

  it("at max: Blocked/AutogrowLimit saying what to do", () => {
    const d = plan(world({ 2: 9.5 }, { storage: "10Gi" }));
    expect(d.phase).toBe("Blocked");
    expect(d.reason).toBe("AutogrowLimit");
    expect(d.message).toMatch(/already at the autogrow max 10Gi: raise max in claimstep.io\/autogrow, or free space/);
    expect(d.action).toBeUndefined();
  });

  it("nothing below the threshold", () => {
    expect(plan(world({ 0: 1.5, 1: 1.5, 2: 1.5 })).reason).toBe("Converged");
  });

  it("one growth per revision: not again from the revision it grew from", () => {
    const s = world({ 2: 1.9 });
    const revision = plan(s).revision!;
    s.statefulSet.metadata.annotations![Keys.autogrownFrom] = revision;
    expect(plan(s).reason).toBe("Converged");
  });

  it("…nor from a revision a person brings back after later growths (the record keeps every revision grown from)", () => {
    const s = world({ 2: 1.9 });
    const revision = plan(s).revision!;
    s.statefulSet.metadata.annotations![Keys.autogrownFrom] = `${revision},r-later`;
    expect(plan(s).reason).toBe("Converged");
    s.statefulSet.metadata.annotations![Keys.autogrownFrom] = "r-older,r-later";
    const d = plan(s);
    expect((d.action as RaiseTemplate).autogrownFrom).toBe(`r-older,r-later,${revision}`);
  });

  it("never while a rollout is in progress", () => {
    const s = world({ 2: 1.9 });
    s.claims[0] = makeClaim("data-web-0", { storage: "1Gi" });
    expect(plan(s).action?.type).toBe("PatchClaim");
  });

  it("only the named template's claims count", () => {
    const named = JSON.stringify({ threshold: "80%", increase: "25%", max: "1Ti", template: "wal" });
    expect(plan(world({ 2: 1.9 }, { policy: named })).reason).toBe("Converged");
  });

  it("without metrics the step goes on, saying why (not Waiting)", () => {
    const s = {
      ...world({}),
      volumeUsage: { ok: false as const, message: "Prometheus at http://prom:9090 is unreachable (ECONNREFUSED)" },
    };
    const d = plan(s);
    expect(d.phase).toBe("Complete");
    expect(d.message).toMatch(/autogrow skipped this step: Prometheus at http:\/\/prom:9090 is unreachable/);
  });
});

describe("autogrowDecision", () => {
  it("raises nothing when the desired size already exceeds capacity × (1 + increase)", () => {
    const t = [template({ name: "data", storage: "20Gi" })] as never;
    const d = autogrowDecision(
      { threshold: "50%", increase: "10%", max: "1Ti" },
      t,
      "web",
      [0],
      [{ claim: "data-web-0", usedBytes: 9n * GI, capacityBytes: 10n * GI }],
    );
    expect(d).toEqual({ kind: "none" });
  });

  it("reports the limit with the usage that hit it", () => {
    const t = [template({ name: "data", storage: "1Ti" })] as never;
    const d = autogrowDecision(
      { threshold: "50%", increase: "10%", max: "1Ti" },
      t,
      "web",
      [0],
      [{ claim: "data-web-0", usedBytes: 900n * GI, capacityBytes: 1024n * GI }],
    );
    expect(d).toMatchObject({ kind: "limit", template: "data", claim: "data-web-0", max: "1Ti" });
  });
});
