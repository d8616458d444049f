// Shared pieces of the GitOps tests: an msw server that refuses any request no fake answers,
// and real Decisions from the planner over the fixture-based builders.
import { afterAll, afterEach, beforeAll } from "vitest";
import { setupServer } from "msw/node";
import { planStep } from "../../../core/plan.js";
import type { Decision, PatchClaim } from "../../../core/types.js";
import { DIRECT, annotate, applyPatch, makeClaim, makeSet, settle, snapshot, patchOf } from "../../core/builders.js";

export const NOW = new Date("2026-11-30T10:00:00Z");

/** One msw server per test file; a request to an endpoint no fake serves fails the test. */
export function mswServer() {
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
  afterEach(() => server.resetHandlers());
  afterAll(() => server.close());
  return server;
}

/** The planner's decision for set `web` (3 replicas, claims at 1Gi) growing `data` to `storage`. */
export function growDecision(storage = "2Gi", extra: { vac?: string } = {}): Decision & { action: PatchClaim } {
  const set = makeSet({ desired: [{ name: "data", storage, ...(extra.vac ? { vac: extra.vac } : {}) }] });
  const snap = snapshot(
    set,
    [0, 1, 2].map((i) => makeClaim(`data-web-${i}`)),
    extra.vac ? { volumeAttributesClasses: [{ metadata: { name: extra.vac }, driverName: "csi.example.com" }] } : {},
  );
  const decision = planStep(snap, NOW, DIRECT);
  if (!decision.action) throw new Error(`expected an action, got ${decision.phase}/${decision.reason}: ${decision.message}`);
  return decision as Decision & { action: PatchClaim };
}

export const PATH_TEMPLATE = "clusters/prod/claims/{namespace}/{name}.yaml";

/**
 * Two claim templates (data, wal) grown to 2Gi: the planner's decisions for ordinal 2, first for
 * one claim, then — once that claim is applied and resized — for the other. Both share a branch.
 */
export function twoClaimDecisions(): [Decision & { action: PatchClaim }, Decision & { action: PatchClaim }] {
  const set = makeSet({
    live: [
      { name: "data", storage: "1Gi" },
      { name: "wal", storage: "1Gi" },
    ],
    desired: [
      { name: "data", storage: "2Gi" },
      { name: "wal", storage: "2Gi" },
    ],
  });
  const claims = ["data", "wal"].flatMap((t) => [0, 1, 2].map((i) => makeClaim(`${t}-web-${i}`)));
  let snap = snapshot(set, claims);
  const first = planStep(snap, NOW, DIRECT);
  if (!first.action) throw new Error(`expected an action, got ${first.phase}: ${first.message}`);
  snap = annotate(settle(applyPatch(snap, first.action), patchOf(first.action).claim), first.setAnnotations);
  const second = planStep(snap, NOW, DIRECT);
  if (!second.action) throw new Error(`expected a second action, got ${second.phase}: ${second.message}`);
  return [first as Decision & { action: PatchClaim }, second as Decision & { action: PatchClaim }];
}
