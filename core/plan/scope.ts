// The planner, part 1 — rules 1–3 of docs/design.md: is the set claimstep's to step, what does it
// desire, which ordinals are in scope. Either a conclusion that ends the step here (Idle, or
// Blocked on invalid input: nothing is written to any claim), or the scope that claim
// evaluation (core/plan/claims.ts) and the walk (core/plan/walk.ts) work in.

import type { ClaimTemplate, PersistentVolumeClaim, Pod, StorageClass } from "../kube/k8s.js";
import { claimOrdinal, isCondemned, type Ordinals } from "../kube/statefulset.js";
import { blocked } from "../messages.js";
import type { DecisionParts } from "../parts.js";
import { type PolicyResult, policyOf, type SetPolicy } from "../policy/policy.js";
import { recordedRevisionsOf } from "../policy/records.js";
import type { Snapshot } from "../types.js";

/** What one step of one set works in once rules 1–3 hold. */
export interface Scope {
  setName: string;
  namespace: string;
  /** The desired templates (the revision's). */
  templates: ClaimTemplate[];
  /** The desired templates the live set has: the ones whose claims exist to evaluate (an added one's come after the re-create). */
  claimTemplates: ClaimTemplate[];
  revision: string;
  maxUnavailable: number;
  ordinals: Ordinals;
  /** Ordinals outside `[start, end)` that still have claims (condemned), highest first. */
  condemned: number[];
  /** Claims by name, without those being deleted. */
  claims: Map<string, PersistentVolumeClaim>;
  /** Claims with a deletionTimestamp, by name: treated as missing (rule 13), kept only to say so. */
  deleting: Map<string, PersistentVolumeClaim>;
  classes: Map<string, StorageClass>;
  /** VolumeAttributesClasses by name → driverName; undefined when the cluster has no VolumeAttributesClass API. */
  vacs: Map<string, string> | undefined;
  /** Pod phases by pod name, for the report. */
  podPhases: Map<string, string | undefined>;
  /** Pods by name. */
  pods: Map<string, Pod>;
  /** The set's `claimstep.io/current-revision`. */
  currentRevision: string | undefined;
  /** The set's policy, parsed once (core/policy/policy.ts): its annotations as the planner reads them. */
  policy: SetPolicy;
  /** `spec.updateStrategy.type` is RollingUpdate (the default). */
  rollingUpdate: boolean;
  /** spec.updateStrategy.rollingUpdate.partition as read (0 when unset). */
  livePartition: number;
  /** The pod template revision the StatefulSet controller rolls out (status.updateRevision). */
  podUpdateRevision: string | undefined;
  /** The pod template is rolling: status.updateRevision ≠ status.currentRevision. */
  podsRolling: boolean;
  /** The set's resourceVersion as read: the precondition of a partition patch. */
  setResourceVersion: string | undefined;
}

export type ScopeResult = { ok: true; scope: Scope } | { ok: false; conclusion: DecisionParts };

const stop = (conclusion: DecisionParts): ScopeResult => ({ ok: false, conclusion });

/**
 * Rule 1 → Idle (recorded only under OnDelete); an invalid annotation (rule 2 and the extensions)
 * → Blocked with the message and a Warning event saying it: the one place a policy fault becomes a
 * conclusion.
 */
function refused(fault: Extract<PolicyResult, { ok: false }>): ScopeResult {
  const { reason, message } = fault;
  if (reason === "NotOptedIn") return stop({ reason, message, record: false });
  if (reason === "OnDelete") return stop({ reason, message, record: true });
  return stop({ ...blocked(reason, message), record: true });
}

/** `parsed`: the set's policy when the caller has it already (the step runner: the reader's). */
export function scopeOf(snapshot: Snapshot, parsed: PolicyResult = policyOf(snapshot.statefulSet)): ScopeResult {
  const set = snapshot.statefulSet;

  // Rules 1–2 and the extensions' annotations (core/policy/policy.ts, in rule order): Idle or Blocked here.
  if (!parsed.ok) return refused(parsed);
  const { policy } = parsed;

  // Rule 3: ordinals in scope [start + partition, start + replicas); condemned ones are reported,
  // never touched. While claimstep holds the partition (P1), the user's recorded one counts.
  const ordinals = policy.ordinals;
  const setName = set.metadata.name;

  // Rule 13: a claim with a deletionTimestamp is going away. It is left out of the index every
  // rule reads, so it is treated as missing: never written, never ready, never at the revision.
  const claims = new Map<string, PersistentVolumeClaim>();
  const deleting = new Map<string, PersistentVolumeClaim>();
  for (const c of snapshot.claims) (c.metadata.deletionTimestamp ? deleting : claims).set(c.metadata.name, c);

  return {
    ok: true,
    scope: {
      setName,
      namespace: set.metadata.namespace ?? "default",
      templates: policy.templates,
      claimTemplates: policy.templates.filter((t) => !policy.reshape.added.includes(t.metadata.name)),
      revision: policy.revision,
      maxUnavailable: policy.maxUnavailable,
      ordinals,
      condemned: condemnedOrdinals(snapshot.claims, policy.templates, setName, ordinals),
      claims,
      deleting,
      classes: new Map(snapshot.storageClasses.map((c) => [c.metadata.name, c])),
      vacs: snapshot.volumeAttributesClasses
        ? new Map(snapshot.volumeAttributesClasses.map((v) => [v.metadata.name, v.driverName]))
        : undefined,
      podPhases: new Map(snapshot.pods.map((p) => [p.metadata.name, p.status?.phase])),
      pods: new Map(snapshot.pods.map((p) => [p.metadata.name, p])),
      currentRevision: recordedRevisionsOf(set).current,
      policy,
      rollingUpdate: (set.spec.updateStrategy?.type ?? "RollingUpdate") === "RollingUpdate",
      livePartition: set.spec.updateStrategy?.rollingUpdate?.partition ?? 0,
      podUpdateRevision: set.status?.updateRevision,
      podsRolling:
        set.status?.updateRevision !== undefined &&
        set.status.currentRevision !== undefined &&
        set.status.updateRevision !== set.status.currentRevision,
      setResourceVersion: set.metadata.resourceVersion,
    },
  };
}

/** Ordinals outside [start, end) that still have claims of this set (condemned, rule 3), highest first. */
function condemnedOrdinals(
  pvcs: readonly PersistentVolumeClaim[],
  templates: readonly ClaimTemplate[],
  setName: string,
  ordinals: Ordinals,
): number[] {
  const found = new Set<number>();
  for (const pvc of pvcs) {
    for (const t of templates) {
      const n = claimOrdinal(pvc.metadata.name, t.metadata.name, setName);
      if (n !== undefined && isCondemned(ordinals, n)) found.add(n);
    }
  }
  return [...found].sort((a, b) => b - a);
}
