// The RULES index (issue 38 point 3): every rule of docs/design.md by its id, the function that
// carries it out, the tests that hold it and its anchor in docs/design.md, where it is stated once
// (the other docs link there). test/core/plan/rules.test.ts checks it against the code: the rules that
// planStep's steps (core/plan/plan.ts STEPS) and core's comments cite, the functions, the tests, the
// anchors. Types and data only: nothing here runs in a step.

interface Rule {
  /** What the rule says, in a few words (docs/design.md says it in full). */
  readonly what: string;
  /** `module#function`: where the rule is carried out (the first is the main one). */
  readonly fns: readonly string[];
  /** The test files that hold the rule; each names it. */
  readonly tests: readonly string[];
  /** The rule's anchor in docs/design.md: `<a id="…">` before its statement, or a heading's slug. */
  readonly anchor: string;
}

const PLAN = "test/core/plan/plan.test.ts";
const CSI = "test/core/plan/csi.test.ts";
const PODS = "test/core/plan/pods.test.ts";
const FINALIZE = "test/core/plan/finalize.test.ts";
const RECOVERY = "test/core/plan/recovery.test.ts";
const RESHAPE = "test/core/plan/reshape.test.ts";

const rule = (what: string, fns: readonly string[], tests: readonly string[], anchor: string): Rule => ({
  what,
  fns,
  tests,
  anchor,
});

export const RULES = {
  // Planner semantics: the claims (docs/design.md rules 1–21).
  "1": rule(
    "opt-in: Idle unless OnClaimDelete is left; OnDelete Idle",
    ["core/plan/scope.ts#scopeOf", "core/plan/pods.ts#releaseOnOptOut"],
    [PLAN],
    "rule-1",
  ),
  "2": rule(
    "desired templates: the annotation, else the live ones; invalid → Blocked",
    ["core/policy/policy.ts#policyOf"],
    [PLAN],
    "rule-2",
  ),
  "3": rule(
    "ordinals in scope, highest first; condemned never touched",
    ["core/kube/statefulset.ts#ordinalsOf", "core/plan/scope.ts#scopeOf"],
    [PLAN],
    "rule-3",
  ),
  "4": rule(
    "the claim's name; a missing one is the controller's",
    ["core/plan/claims.ts#evaluateClaim", "core/plan/claims.ts#claimMissing", "core/plan/walk.ts#claimsMissing"],
    [PLAN],
    "rule-4",
  ),
  "5": rule(
    "target = max(template, claim spec)",
    ["core/plan/claims.ts#targetOf", "core/plan/claims.ts#sizeChangeOf"],
    [PLAN],
    "rule-5",
  ),
  "6": rule(
    "predict the API server's refusal, never provoke it",
    ["core/plan/claims.ts#obstacleOf", "core/plan/claims.ts#CHECKS", "core/plan/walk.ts#claimRefused"],
    [PLAN],
    "rule-6",
  ),
  "7": rule(
    "one server-side apply of one claim",
    ["core/plan/claims.ts#patchOf", "core/plan/walk.ts#claimUpdated"],
    [PLAN],
    "rule-7",
  ),
  "8": rule(
    "ready from the real status fields",
    [
      "core/plan/readiness.ts#claimReadiness",
      "core/plan/claims.ts#readinessOf",
      "core/plan/walk.ts#claimFailed",
      "core/plan/walk.ts#waiting",
    ],
    [PLAN, "test/core/plan/readiness.test.ts"],
    "rule-8",
  ),
  "9": rule(
    "ordinals in order, up to maxUnavailable in flight",
    ["core/plan/walk.ts#walk", "core/plan/walk.ts#slotTaken", "core/plan/claims.ts#inFlightOf"],
    [PLAN],
    "rule-9",
  ),
  "10": rule(
    "Complete when every claim is done, and only of a set that is what it asks for",
    ["core/plan/walk.ts#complete", "core/plan/plan.ts#STEPS"],
    [PLAN],
    "rule-10",
  ),
  "11": rule(
    "a new revision mid-rollout retargets",
    ["core/plan/claims.ts#claimOf", "core/plan/claims.ts#targetOf"],
    [PLAN],
    "rule-11",
  ),
  "12": rule(
    "never delete a claim, lower a request, or write out of scope",
    ["core/plan/claims.ts#targetOf", "core/plan/claims.ts#classMismatch", "core/kube/statefulset.ts#inScope"],
    [PLAN],
    "rule-12",
  ),
  "13": rule(
    "a claim being deleted is missing",
    ["core/plan/readiness.ts#claimReadiness", "core/plan/claims.ts#claimMissing", "core/plan/walk.ts#claimsMissing"],
    [PLAN],
    "rule-13",
  ),
  "14": rule(
    "quantities as strings or numbers; nothing above 2^63−1 bytes",
    ["core/kube/quantity.ts#parseQuantity", "core/plan/claims.ts#specOf"],
    [PLAN],
    "rule-14",
  ),
  "15": rule(
    "Complete only after the node's file system expansion",
    ["core/plan/readiness.ts#nodeExpansionPending"],
    [CSI],
    "rule-15",
  ),
  "16": rule("the controller-only path", ["core/plan/readiness.ts#nodeExpansionNotRequired"], [CSI], "rule-16"),
  "17": rule(
    "NodeResizeError is the lasting node-side failure",
    ["core/plan/readiness.ts#nodeExpansionFailed"],
    [CSI],
    "rule-17",
  ),
  "18": rule(
    "a Pending VolumeAttributesClass modification",
    ["core/plan/readiness.ts#volumeClassReadiness"],
    [CSI],
    "rule-18",
  ),
  "19": rule(
    "size first, the class once the resize is done",
    ["core/plan/claims.ts#claimOf", "core/plan/claims.ts#patchOf"],
    [CSI],
    "rule-19",
  ),
  "20": rule(
    "a claim at the current revision is done",
    ["core/plan/claims.ts#evaluateClaim", "core/plan/claims.ts#targetOf", "core/plan/claims.ts#readinessOf"],
    ["test/core/plan/done-claims.test.ts"],
    "rule-20",
  ),
  "21": rule(
    "an ordinal is done when its pod is Ready too",
    ["core/plan/pods.ts#podsNotReady", "core/plan/walk.ts#walk", "core/plan/walk.ts#waitsOf"],
    [PODS],
    "rule-21",
  ),
  // Pods: the partition (P1–P5) and the restarts (R1–R3).
  P1: rule("record the user's partition before taking it over", ["core/plan/pods.ts#partitionStep"], [PODS], "rule-P1"),
  P2: rule("the partition target", ["core/plan/pods.ts#partitionTarget"], [PODS], "rule-P2"),
  P3: rule("in flight until the pod runs the new template", ["core/plan/pods.ts#podsPending"], [PODS], "rule-P3"),
  P4: rule(
    "the user's partition back when done",
    ["core/plan/pods.ts#partitionStep", "core/plan/pods.ts#releaseOnOptOut"],
    [PODS],
    "rule-P4",
  ),
  P5: rule("--hold-pods", ["core/policy/pod-policy.ts#holdPods"], [PODS], "rule-P5"),
  R1: rule("a claim waiting on its pod", ["core/plan/pods.ts#restartStep"], [PODS], "rule-R1"),
  R2: rule("EvictPod through the Eviction API", ["core/plan/pods.ts#restartStep"], [PODS], "rule-R2"),
  R3: rule(
    "a budget's 429 waits; one eviction per budget charge",
    ["core/plan/verdict.ts#verdict", "core/plan/pods.ts#restartStep"],
    [PODS],
    "rule-R3",
  ),
  // Re-creating the set (F1–F5).
  // Each names the steps of the re-create's table (core/plan/finalize.ts FINALIZE_STEPS) that carry it out.
  F1: rule(
    "the record, then arming it",
    [
      "core/plan/finalize.ts#recordUnreadable",
      "core/plan/finalize.ts#recreateWouldDiffer",
      "core/plan/finalize.ts#awaitRestBeforeRecord",
      "core/plan/finalize.ts#proposeRecreate",
      "core/plan/finalize.ts#writeRecord",
      "core/plan/finalize.ts#recordNotStamped",
      "core/plan/finalize.ts#recordWithoutKept",
      "core/plan/finalize.ts#armRecord",
    ],
    [FINALIZE],
    "rule-F1",
  ),
  F2: rule(
    "the orphan delete",
    [
      "core/plan/finalize.ts#discardStale",
      "core/plan/finalize.ts#awaitRestBeforeArm",
      "core/plan/finalize.ts#orphanDelete",
      "core/plan/finalize.ts#oldSetFinalizing",
    ],
    [FINALIZE],
    "rule-F2",
  ),
  F3: rule(
    "the create from the record",
    ["core/plan/finalize.ts#createRefused", "core/plan/finalize.ts#createFromRecord"],
    [FINALIZE],
    "rule-F3",
  ),
  F4: rule(
    "the record goes once the new set adopted every pod",
    [
      "core/plan/finalize.ts#recreatedByOther",
      "core/plan/finalize.ts#awaitAdoption",
      "core/plan/finalize.ts#keptReplaced",
      "core/plan/finalize.ts#deleteRecord",
    ],
    [FINALIZE],
    "rule-F4",
  ),
  F5: rule(
    "the field ownership handed back",
    ["core/kube/ownership.ts#restoredManagedFields", "core/plan/finalize.ts#restoreOwnership"],
    [FINALIZE],
    "rule-F5",
  ),
  // Recovering from a failed expansion (X1–X3).
  X1: rule(
    "a failed expansion comes down to the template",
    ["core/plan/claims.ts#recoveryOf", "core/plan/claims.ts#sizeChangeOf"],
    [RECOVERY],
    "rule-X1",
  ),
  X2: rule("at or below capacity: ready as the KEP says", ["core/plan/claims.ts#recoveryOf"], [RECOVERY], "rule-X2"),
  X3: rule(
    "never while in progress, never to or below capacity",
    ["core/plan/claims.ts#recoveryOf"],
    [RECOVERY],
    "rule-X3",
  ),
  // Adding and removing claim templates (S1–S5).
  S1: rule(
    "hold the partition at replicas before the re-create",
    ["core/plan/reshape.ts#holdForShape"],
    [RESHAPE],
    "rule-S1",
  ),
  S2: rule(
    "only a re-create changes the shape: the target templates and the held pod template in one create",
    ["core/plan/plan.ts#STEPS", "core/plan/finalize.ts#finalizeStep"],
    [RESHAPE],
    "rule-S2",
  ),
  S3: rule(
    "label the removed template's claims, never delete them",
    ["core/plan/reshape.ts#labelOneClaim"],
    [RESHAPE],
    "rule-S3",
  ),
  S4: rule(
    "restart the pods lowest first, within maxUnavailable",
    [
      "core/plan/reshape.ts#restartTarget",
      "core/plan/reshape.ts#newClaimsNotReady",
      "core/plan/reshape.ts#slotTaken",
      "core/plan/reshape.ts#evict",
    ],
    [RESHAPE],
    "rule-S4",
  ),
  S5: rule(
    "hand the partition back once every pod has its volumes",
    ["core/plan/reshape.ts#shapeStep", "core/plan/reshape.ts#awaitRestartedPods"],
    [RESHAPE],
    "rule-S5",
  ),
  // Autogrow: one section, no numbered rules.
  Autogrow: rule(
    "raise a full claim's template, up to max, once per revision",
    ["core/plan/autogrow.ts#autogrowStep"],
    ["test/core/plan/autogrow.test.ts"],
    "autogrow",
  ),
} as const satisfies Record<string, Rule>;

/** A rule of docs/design.md, by its id. */
export type RuleId = keyof typeof RULES;

/**
 * The rules each step of planStep's table (core/plan/plan.ts STEPS) carries out, by the step's name (its
 * function's). Here rather than in the table so that the Worker bundle does not carry them.
 */
export const STEP_RULES = {
  recreateInProgress: ["F2", "F3", "F4", "F5"],
  shapeNeedsRecreate: ["S2"],
  addedClassExists: ["S4"],
  reshapeClaimsAndPods: ["S3", "S4", "S5"],
  partition: ["P1", "P2", "P4"],
  autogrow: ["Autogrow"],
  holdBeforeRecreate: ["S1"],
  recreateStart: ["F1"],
  converged: ["10"],
  recreateNext: ["10"],
  claimWriteOrBlocked: ["6", "7", "9"],
  restartPod: ["R1", "R2", "R3"],
  walkClaims: ["8", "9", "10"],
} as const satisfies Record<string, readonly RuleId[]>;
