// Shared pieces of the GitOps tests: an msw server that refuses any request no fake answers,
// and real Decisions from the planner over the fixture-based builders.

import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll } from "vitest";
import { Keys } from "../../../core/keys.js";
import { planStep } from "../../../core/plan/plan.js";
import { policyOf } from "../../../core/policy/policy.js";
import type { WriterCapabilities } from "../../../core/ports.js";
import type { Decision, PatchClaim, ProposeRecreate } from "../../../core/types.js";
import {
  annotate,
  applyPatch,
  claimsFor,
  DIRECT,
  makeClaim,
  makeSet,
  patchOf,
  settle,
  snapshot,
} from "../../core/builders.js";

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
    extra.vac ? { volumeAttributesClasses: [{ metadata: { name: extra.vac }, driverName: "example.com/fake" }] } : {},
  );
  const decision = planStep(snap, NOW, DIRECT);
  if (!decision.action)
    throw new Error(`expected an action, got ${decision.phase}/${decision.reason}: ${decision.message}`);
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

/** What the planner knows of the pull-request writer (it proposes; the re-create's requests go direct). */
export const PULL_REQUESTS: WriterCapabilities = {
  name: "pull-request writer (GitHub octo/fleet)",
  supports: [
    "PatchClaim",
    "ProposeRecreate",
    "RaiseTemplate",
    "WriteRecord",
    "OrphanSet",
    "CreateSet",
    "RestoreOwnership",
    "DeleteRecord",
  ],
  proposes: true,
};

/** `{namespace}/{statefulset}`: where the re-create proposal finds each set's manifest. */
export const SET_PATH_TEMPLATE = "clusters/prod/apps/{namespace}/{statefulset}.yaml";

/**
 * The planner's decision for set `web` (3 replicas, pull-request mode, finalize Recreate) whose
 * claims are all at the desired 2Gi while its live templates still say 1Gi: propose the re-create.
 */
export function recreateDecision(
  desired: { storage?: string; vac?: string } = {},
): Decision & { action: ProposeRecreate } {
  const set = makeSet({
    desired: [{ name: "data", storage: desired.storage ?? "2Gi", ...(desired.vac ? { vac: desired.vac } : {}) }],
    annotations: { [Keys.finalize]: "Recreate", [Keys.applyVia]: "pull-request" },
  });
  const parsed = policyOf(set);
  if (!parsed.ok) throw new Error(parsed.message);
  const { revision } = parsed.policy;
  set.metadata.annotations = {
    ...set.metadata.annotations,
    [Keys.currentRevision]: revision,
    [Keys.updateRevision]: revision,
  };
  set.metadata.generation = 1;
  set.status = { ...set.status, observedGeneration: 1 };
  const snap = snapshot(
    set,
    claimsFor(set, {
      storage: desired.storage ?? "2Gi",
      revision,
      ...(desired.vac ? { vac: desired.vac, currentVac: desired.vac } : {}),
    }),
    desired.vac
      ? { volumeAttributesClasses: [{ metadata: { name: desired.vac }, driverName: "example.com/fake" }] }
      : {},
  );
  const decision = planStep(snap, NOW, PULL_REQUESTS);
  if (decision.action?.type !== "ProposeRecreate")
    throw new Error(`expected ProposeRecreate, got ${decision.phase}/${decision.reason}: ${decision.message}`);
  return decision as Decision & { action: ProposeRecreate };
}

/** Set `web`'s manifest as a person keeps it in Git: the live templates (1Gi) and claimstep's annotations. */
export function webManifest(desiredJson: string): string {
  return `# web — the storefront's database
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  namespace: default
  annotations:
    claimstep.io/volume-claim-update-strategy: InPlace
    claimstep.io/apply-via: pull-request
    claimstep.io/finalize: Recreate
    claimstep.io/volume-claim-templates: '${desiredJson}'
spec:
  replicas: 3
  serviceName: web
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: app
          image: registry.k8s.io/pause:3.9
  volumeClaimTemplates:
    - metadata:
        name: data # the only volume
      spec:
        accessModes: [ReadWriteOnce]
        storageClassName: fast
        resources:
          requests:
            storage: 1Gi # as created
`;
}
