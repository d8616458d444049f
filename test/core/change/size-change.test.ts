// Rule 5 and X1 as one predicate (core/plan/claims.ts sizeChangeOf), asked by three doors: the planner's
// target, `claimstep set`'s refusal (core/change/set-size.ts sizeCheck) and the admission webhook's warning
// (core/change/change.ts). The same cases, fed to each, must get the same answer.
import { describe, expect, it } from "vitest";
import { changeOf } from "../../../core/change/change.js";
import { sizeCheck } from "../../../core/change/set-size.js";
import { type SizeChange, sizeChangeOf } from "../../../core/plan/claims.js";
import { planStep } from "../../../core/plan/plan.js";
import { type ClaimSpec, claimsFor, DIRECT, makeClaim, makeSet, snapshot, template } from "../builders.js";

const NOW = new Date("2026-11-30T10:00:00Z");
const GI = 1_073_741_824n;

const infeasible: ClaimSpec = {
  allocatedResourceStatus: "ControllerResizeInfeasible",
  conditions: [{ type: "ControllerResizeError", message: "requested size 1Ti is not supported by the backend" }],
};

interface Case {
  what: string;
  /** data-web-2's request (the others request 1Gi, as the live template does). */
  claim: ClaimSpec & { storage: string };
  template: string;
  size: SizeChange;
}

const CASES: Case[] = [
  { what: "a larger template", claim: { storage: "10Gi" }, template: "20Gi", size: "grow" },
  { what: "the claim's own size", claim: { storage: "10Gi" }, template: "10Gi", size: "same" },
  { what: "a smaller template (rule 5)", claim: { storage: "20Gi" }, template: "10Gi", size: "kept" },
  {
    what: "above a failed claim's capacity (X1)",
    claim: { storage: "1Ti", capacity: "10Gi", allocated: "1Ti", ...infeasible },
    template: "20Gi",
    size: "recover",
  },
  {
    what: "not above a failed claim's capacity (X2)",
    claim: { storage: "1Ti", capacity: "10Gi", allocated: "1Ti", ...infeasible },
    template: "8Gi",
    size: "stuck",
  },
];

/** The three doors on set web (replicas 3, live template data 1Gi), data-web-2 as the case says. */
function doors(c: Case) {
  const set = makeSet({ desired: [{ name: "data", storage: c.template }] });
  const claims = claimsFor(set);
  claims[2] = makeClaim("data-web-2", c.claim);
  const s = snapshot(set, claims);
  const decision = planStep(s, NOW, DIRECT);
  const target = decision.ordinals.find((o) => o.ordinal === 2)!.claims[0]!.target;
  const set_ = sizeCheck(s, { namespace: "default", name: "web" }, "data", c.template);
  // The webhook sees templates only: the stored one at the claim's request, the update's at the case's.
  const stored = makeSet({ live: [{ name: "data", storage: c.claim.storage }] });
  const update = { metadata: { ...stored.metadata }, spec: { ...stored.spec } };
  const webhook = changeOf(stored, {
    kind: "spec",
    update,
    requested: [template({ name: "data", storage: c.template })] as never,
    name: "default/web",
    setName: "web",
  });
  if (!webhook.ok) throw new Error(webhook.message);
  return { target, set: set_, warnings: webhook.warnings.join("\n") };
}

describe("never shrink, one predicate behind three doors (rule 5, X1)", () => {
  it("sizeChangeOf: grow, same, kept, recover, stuck; a failed claim of unknown capacity is kept", () => {
    expect(sizeChangeOf(20n * GI, { request: 10n * GI })).toBe("grow");
    expect(sizeChangeOf(10n * GI, { request: 10n * GI })).toBe("same");
    expect(sizeChangeOf(10n * GI, { request: 20n * GI })).toBe("kept");
    expect(sizeChangeOf(10n * GI, { request: 20n * GI, capacity: 5n * GI })).toBe("kept");
    expect(sizeChangeOf(20n * GI, { request: 1024n * GI, failed: true, capacity: 10n * GI })).toBe("recover");
    expect(sizeChangeOf(10n * GI + 1n, { request: 1024n * GI, failed: true, capacity: 10n * GI })).toBe("recover");
    expect(sizeChangeOf(10n * GI, { request: 1024n * GI, failed: true, capacity: 10n * GI })).toBe("stuck");
    expect(sizeChangeOf(10n * GI, { request: 1024n * GI, failed: true })).toBe("kept");
  });

  it.each(CASES)("$what: the planner's target, set's refusal and the webhook's warning agree ($size)", (c) => {
    const { target, set, warnings } = doors(c);
    // The planner: the template's size when it grows or recovers, else the claim keeps its request.
    expect(target).toBe(c.size === "grow" || c.size === "recover" ? c.template : c.claim.storage);
    // set: refused when the claim would be kept above the template (or cannot come down), the
    // recovery named when it comes down, nothing said when it grows or stays.
    expect(set.refusal !== undefined).toBe(c.size === "kept" || c.size === "stuck");
    if (c.size === "kept") expect(set.refusal).toContain(`claims data-web-2 ${c.claim.storage}`);
    if (c.size === "stuck") expect(set.refusal).toContain("data-web-2's expansion to 1Ti failed");
    expect(set.recovers.map((r) => r.split(":")[0])).toEqual(c.size === "recover" ? ["data-web-2"] : []);
    // The webhook (no claims, no failure seen): says it grows exactly when the planner grows.
    if (c.size === "grow" || c.size === "same" || c.size === "kept") {
      expect(warnings.includes(`claimstep will grow data-web-* to ${c.template}`)).toBe(c.size === "grow");
      expect(warnings.includes(`stay at ${c.claim.storage} (claims never shrink)`)).toBe(c.size === "kept");
    }
  });
});
