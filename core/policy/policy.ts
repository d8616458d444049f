// The set's policy, parsed once (docs/design.md rules 1–3 and the extensions' annotations): every
// annotation claimstep reads to plan a step, checked in rule order so that one fault always wins,
// into one typed value the planner reads ("parse, don't validate"). The per-annotation parsers are
// imported here and nowhere else on a step's path; an invalid annotation is one refusal, which
// scope.ts turns into one Blocked decision.

import type { ClaimTemplate, StatefulSet } from "../kube/k8s.js";
import { revisionOf } from "../kube/revision.js";
import { maxUnavailableOf, type Ordinals, ordinalsOf } from "../kube/statefulset.js";
import { Messages } from "../messages.js";
import type { Reason } from "../reasons.js";
import type { Snapshot } from "../types.js";
import {
  type ApplyVia,
  type AutogrowPolicy,
  applyViaOf,
  autogrowOf,
  finalizeOf,
  hasNoClaimTemplates,
  rawAnnotation,
  removeListOf,
  strategyOf,
} from "./annotations.js";
import { type PodPolicy, podPolicyOf } from "./pod-policy.js";
import { finalizeForOf } from "./records.js";
import { type Reshape, reshapeOf, reshapePending } from "./shape.js";
import { type DesiredTemplates, desiredTemplates } from "./templates.js";

/** What one set asks of claimstep, once every annotation it reads has been parsed and found valid. */
export interface SetPolicy {
  /** Rule 1: only an opted-in set has a policy. */
  strategy: "InPlace";
  /** Rule 2: the desired templates (the annotation, else the live ones) and where they came from. */
  templates: ClaimTemplate[];
  templatesSource: "annotation" | "spec";
  /** The desired templates' revision. */
  revision: string;
  /** Rule 9: how many ordinals may be in flight at once. */
  maxUnavailable: number;
  /** Rule 3: the ordinals in scope (the user's recorded partition counting while claimstep holds the live one, P1). */
  ordinals: Ordinals;
  /** `claimstep.io/apply-via`. */
  applyVia: ApplyVia;
  /** The pod extensions' settings (pod coordination, restarts). */
  pods: PodPolicy;
  /** `claimstep.io/finalize`, as it applies to this revision (a Recreate claimstep wrote for an earlier change is spent: finalizeSpent). */
  finalize: "Never" | "Recreate";
  /** `claimstep.io/autogrow`; undefined when absent. */
  autogrow: AutogrowPolicy | undefined;
  /** Templates to add or remove with the next re-create, and the pod template it applies (core/plan/reshape.ts). */
  reshape: Reshape;
}

/**
 * The revision a `claimstep.io/finalize: Recreate` that claimstep wrote on the user's behalf
 * (`claimstep.io/finalize-for`) was written for, when that Recreate is spent: the set was
 * re-created at that revision (its live templates are it) and the desired templates moved on
 * since. A spent Recreate re-creates no more (docs/finalize.md "Who wrote Recreate"); undefined:
 * not spent (the user's own Recreate, or the change it was written for is still to be re-created).
 */
export function finalizeSpent(set: StatefulSet, revision: string): string | undefined {
  const writtenFor = finalizeForOf(set);
  if (writtenFor === undefined || writtenFor === revision) return undefined;
  return revisionOf(set.spec.volumeClaimTemplates ?? []) === writtenFor ? writtenFor : undefined;
}

/** Why a set has no policy: Idle (rule 1) or Blocked on an invalid annotation (rule 2 and the extensions). */
export type PolicyFault = Extract<
  Reason,
  "NotOptedIn" | "OnDelete" | "InvalidTemplates" | "InvalidApplyVia" | "InvalidPolicy"
>;

export type PolicyResult = { ok: true; policy: SetPolicy } | { ok: false; reason: PolicyFault; message: string };

/** The live templates less those listed in `claimstep.io/remove-claim-templates` (when it parses; reshapeOf refuses it otherwise). */
function withoutRemoved(
  set: StatefulSet,
  live: ClaimTemplate[],
): { ok: true; source: "spec"; templates: ClaimTemplate[] } {
  const list = removeListOf(set);
  const removed = new Set(list.ok ? list.value : []);
  return { ok: true, source: "spec", templates: live.filter((t) => !removed.has(t.metadata.name)) };
}

const fault = (reason: PolicyFault, message: string): PolicyResult => ({ ok: false, reason, message });

/**
 * Rule 2 and the set's shape, as the planner reads them: the desired templates (the annotation,
 * else the live templates less those listed for removal; with a change of shape pending, every
 * live template the annotation neither names nor removes kept) and the reshape they imply. One
 * computation for the planner (policyOf) and every surface that shows the desired templates or
 * their revision (desiredOf): a set with a pending removal has one desired revision everywhere.
 */
function desiredShapeOf(set: StatefulSet): {
  templates: DesiredTemplates;
  shape: ReturnType<typeof reshapeOf> | undefined;
} {
  // Rule 2: desired templates = the annotation, else the live templates; invalid → Blocked. With
  // the spec as the source, a template listed for removal is not desired.
  const desired = desiredTemplates(set);
  let templates: DesiredTemplates =
    desired.ok && desired.source === "spec" ? withoutRemoved(set, desired.templates) : desired;
  // A change of the set's shape (core/plan/reshape.ts): the annotations it reads, the pod template it
  // applies. The set keeps every live template the annotation does not name and does not remove.
  let shape = templates.ok ? reshapeOf(set, templates.templates) : undefined;
  if (templates.ok && shape?.ok && reshapePending(shape.value)) {
    const named = new Set([...templates.templates.map((t) => t.metadata.name), ...shape.value.removed]);
    const kept = (set.spec.volumeClaimTemplates ?? []).filter((t) => !named.has(t.metadata.name));
    if (kept.length) {
      templates = { ...templates, templates: [...kept, ...templates.templates] };
      shape = reshapeOf(set, templates.templates);
    }
  }
  return { templates, shape };
}

/**
 * The desired templates and their revision as the planner reads them (rule 2 with the set's shape:
 * desiredShapeOf), for the surfaces that show them whatever else the policy holds: the status page's
 * templates, the recorder's desired sizes, `claimstep set`'s previous revision. `policyOf(set).policy.revision`
 * when the set has a policy.
 */
export function desiredOf(
  set: StatefulSet,
):
  | { ok: true; source: "annotation" | "spec"; templates: ClaimTemplate[]; revision: string }
  | { ok: false; message: string } {
  const { templates } = desiredShapeOf(set);
  return templates.ok ? { ...templates, revision: revisionOf(templates.templates) } : templates;
}

/**
 * Everything desiredOf reads of a set, as one string: equal keys, equal desired templates (the
 * recorder remembers them by it across steps).
 */
export const desiredKeyOf = (set: StatefulSet): string => {
  const a = set.metadata.annotations;
  return [
    rawAnnotation(a, "templates") ?? "\u0001",
    rawAnnotation(a, "removeTemplates") ?? "\u0001",
    rawAnnotation(a, "podTemplate") ?? "\u0001",
    rawAnnotation(a, "podTemplateBase") ?? "\u0001",
    JSON.stringify(set.spec.volumeClaimTemplates ?? []),
    // A held pod template is checked against the live one (reshapeOf): it decides whether kept templates count.
    rawAnnotation(a, "podTemplate") === undefined ? "" : JSON.stringify(set.spec.template ?? null),
  ].join("\u0000");
};

/**
 * A snapshot with the set's policy, as a reader returns it: parsed once, right after the set was
 * loaded (adapters/kube/reader.ts); the step reads it for the usage read and hands it to the
 * planner. Absent in a snapshot built by hand; dropped by whoever plans another set than the one
 * read (a dry run's preview, an edited copy): the policy is of the set it was parsed from.
 */
export type PolicySnapshot = Snapshot & { policy?: PolicyResult };

/** The snapshot's policy: the reader's, else parsed from its set. */
export const policyOfSnapshot = (snapshot: PolicySnapshot): PolicyResult =>
  snapshot.policy ?? policyOf(snapshot.statefulSet);

/** The set's policy, or the first fault in rule order (the order the planner has always checked them in). */
export function policyOf(set: StatefulSet): PolicyResult {
  // Rule 1: strategy annotation absent or OnClaimDelete → Idle; OnDelete → Idle.
  const strategy = strategyOf(set);
  if (strategy.kind === "OnClaimDelete")
    return fault(
      "NotOptedIn",
      hasNoClaimTemplates(set) ? Messages.noClaimTemplates(set.metadata.name) : Messages.notOptedIn(strategy.value),
    );
  if (strategy.kind === "invalid") return fault("InvalidTemplates", Messages.badStrategy(strategy.value));

  const { templates, shape } = desiredShapeOf(set);
  if (set.spec.updateStrategy?.type === "OnDelete") {
    if (shape?.ok && reshapePending(shape.value))
      return fault(
        "InvalidPolicy",
        Messages.shapeOnDelete(
          `${set.metadata.namespace ?? "default"}/${set.metadata.name}`,
          shape.value.added,
          shape.value.removed,
        ),
      );
    return fault("OnDelete", Messages.onDelete());
  }
  if (!templates.ok) return fault("InvalidTemplates", templates.message);
  if (!shape!.ok) return fault("InvalidTemplates", shape!.message);
  const maxUnavailable = maxUnavailableOf(set);
  if (!maxUnavailable.ok) return fault("InvalidTemplates", maxUnavailable.message);

  // How the set's claims are written (claimstep.io/apply-via), then the pod extensions, re-creating
  // and autogrow: a value claimstep does not know → Blocked.
  const via = applyViaOf(set);
  if (!via.ok) return fault("InvalidApplyVia", via.message);
  const pods = podPolicyOf(set);
  if (!pods.ok) return fault("InvalidPolicy", pods.message);
  const finalize = finalizeOf(set);
  if (!finalize.ok) return fault("InvalidPolicy", finalize.message);
  const autogrow = autogrowOf(set);
  if (!autogrow.ok) return fault("InvalidPolicy", autogrow.message);

  const revision = revisionOf(templates.templates);
  return {
    ok: true,
    policy: {
      strategy: "InPlace",
      templates: templates.templates,
      templatesSource: templates.source,
      revision,
      maxUnavailable: maxUnavailable.value,
      ordinals: ordinalsOf(set, pods.policy.userPartition),
      applyVia: via.via,
      pods: pods.policy,
      finalize: finalize.recreate && finalizeSpent(set, revision) === undefined ? "Recreate" : "Never",
      autogrow: autogrow.policy,
      reshape: shape!.value,
    },
  };
}
