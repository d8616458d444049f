// Shared pieces of the GitOps tests: an msw server that refuses any request no fake answers,
// and real Decisions from the planner over the fixture-based builders.
import { afterAll, afterEach, beforeAll } from "vitest";
import { setupServer } from "msw/node";
import { planStep } from "../../../core/plan.js";
import type { Decision, PatchClaim } from "../../../core/types.js";
import { makeClaim, makeSet, snapshot } from "../../core/builders.js";

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
  const decision = planStep(snap, NOW);
  if (!decision.action) throw new Error(`expected an action, got ${decision.phase}/${decision.reason}: ${decision.message}`);
  return decision as Decision & { action: PatchClaim };
}

export const PATH_TEMPLATE = "clusters/prod/claims/{namespace}/{name}.yaml";
