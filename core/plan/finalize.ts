// Re-creating the set with the new templates (docs/design.md "Re-creating the set", F1–F5): the
// `kubectl delete sts --cascade=orphan` + re-apply dance, one request per step, each step
// starting from what it finds, so a crash between any two requests is finished by the next
// invocation: an ordered table of named steps (FINALIZE_STEPS). The manifest is never only in
// memory: it is in the record (a ConfigMap, core/plan/recreate-record.ts) before the set is
// deleted, and the record goes only once the new set has adopted its pods.

import { Keys } from "../keys.js";
import { stableJSON } from "../kube/json.js";
import type { ClaimTemplate, StatefulSet } from "../kube/k8s.js";
import { ManagedFields, ownersOf, restoredManagedFields } from "../kube/ownership.js";
import { revisionOf } from "../kube/revision.js";
import { podName, podOrdinal } from "../kube/statefulset.js";
import { blocked, concluded, eventOf, Messages } from "../messages.js";
import type { WalkConclusion } from "../parts.js";
import { rawAnnotation } from "../policy/annotations.js";
import { ownershipRestoredOf, recreateApprovedOf, recreatedFromOf, recreateStampOf } from "../policy/records.js";
import { type Reshape, targetTemplates } from "../policy/shape.js";
import { AT_ONCE } from "../reasons.js";
import type { ArmRecord, DeleteRecord, Snapshot } from "../types.js";
import {
  keptUidsOf,
  type Record_,
  RecordKeys,
  readRecord,
  recordName,
  recordOf,
  recordStampOf,
  recreatedManifest,
  replacedSince,
} from "./recreate-record.js";
import { podMismatch } from "./reshape.js";

/**
 * claimstep's annotations that its own steps write on the set between F1 and F2 (the status, the
 * revisions, an eviction's record, the stamp, a pull request's approval): the only ones the record
 * may differ in. Everything else, claimstep's other annotations included, must be as recorded.
 */
const WRITTEN_BETWEEN = new Set<string>([
  Keys.status,
  Keys.updateRevision,
  Keys.currentRevision,
  Keys.lastEviction,
  Keys.recreateRecord,
  Keys.recreateApproved,
]);

/**
 * Paths where two manifests differ, in full (templates, pod template, service account, labels,
 * every annotation), but for the annotations claimstep's own steps write between F1 and F2.
 */
export function unexpectedDifferences(a: StatefulSet, b: StatefulSet): string[] {
  const strip = (s: StatefulSet): unknown => {
    const copy = structuredClone(s) as StatefulSet;
    copy.metadata.annotations = Object.fromEntries(
      Object.entries(copy.metadata.annotations ?? {}).filter(([k]) => !WRITTEN_BETWEEN.has(k)),
    );
    return copy;
  };
  const out: string[] = [];
  diff(strip(a), strip(b), "", out);
  return out;
}

function diff(a: unknown, b: unknown, path: string, out: string[]): void {
  if (out.length >= 5) return;
  if (a && b && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of [...keys].sort())
      diff((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], path ? `${path}.${k}` : k, out);
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push(path || "(root)");
}

/** The set's pod rollout is at rest: nothing for the StatefulSet controller to do (before F1, F2). */
export function rolloutAtRest(set: StatefulSet): boolean {
  const s = set.status;
  return (
    s !== undefined &&
    s.currentRevision === s.updateRevision &&
    (s.readyReplicas ?? 0) === (set.spec.replicas ?? 1) &&
    s.observedGeneration === set.metadata.generation
  );
}

/** Pods of the set's ordinals that the set (this uid) does not own yet. */
function notAdopted(snapshot: Snapshot): string[] {
  const set = snapshot.statefulSet;
  const start = set.spec.ordinals?.start ?? 0;
  const pods = new Map(snapshot.pods.map((p) => [p.metadata.name, p]));
  const out: string[] = [];
  for (let o = start; o < start + (set.spec.replicas ?? 1); o++) {
    const name = podName(set.metadata.name, o);
    const owner = pods.get(name)?.metadata.ownerReferences?.find((r) => r.controller);
    if (owner?.uid !== set.metadata.uid) out.push(name);
  }
  return out;
}

export interface FinalizeContext {
  /** `claimstep.io/finalize: Recreate`, or `claimstep finalize` asking for it. */
  wanted: boolean;
  /** The set's claims go through pull requests: the re-create is proposed and approved first. */
  viaPullRequest?: boolean;
  /** The claim rollout is Complete at `revision` (rule 10) and recorded so. */
  converged: boolean;
  revision: string;
  desired: readonly ClaimTemplate[];
  /** Templates added or removed with this re-create and the pod template it applies (core/plan/reshape.ts). */
  shape?: Pick<Reshape, "removed" | "podTemplate"> & Partial<Pick<Reshape, "orphaned">>;
}

/** Where the re-create stands, from the set and its record (read once): which steps of the table apply. */
type Stage =
  // Nothing to re-create: no record, and the set gone, or the re-create not wanted or not complete.
  | { stage: "nothing" }
  // A record claimstep cannot read: blocked, saying why (with the set gone, the way out).
  | { stage: "unreadable"; message: string }
  // F1: no record yet; the re-create is wanted and the claims complete.
  | {
      stage: "noRecord";
      /** The live templates are not at the revision yet: there is something to re-create. */
      behind: boolean;
    }
  // F1's arming, F2: the record and the set it was written from (the same uid).
  | { stage: "oldSet"; record: Record_ }
  // F3: the old set is gone; the record holds the new one.
  | { stage: "setGone"; record: Record_ }
  // F4, F5: a set of another uid than the record's exists.
  | { stage: "newSet"; record: Record_ };

/** What every step of the table reads: what the planner asks, the set, its record read, computed once. */
type RecreateStepContext = FinalizeContext &
  Stage & {
    snapshot: Snapshot;
    set: StatefulSet;
    setName: string;
    namespace: string;
    /** The record's name: ConfigMap claimstep-recreate-<set>. */
    recordName: string;
    /** The set every action names. */
    ref: { namespace: string; set: string };
  };

/**
 * One named step of the re-create: a conclusion, or `undefined` to hand over to the next step. Its
 * name is its function's; the rules of docs/design.md it carries out are core/plan/rules.ts RULES'
 * F1–F5 (there, not here, so that the Worker bundle carries neither).
 */
type RecreateStep = (c: RecreateStepContext) => WalkConclusion | undefined;

function stageOf(snapshot: Snapshot, c: FinalizeContext): Stage {
  const set = snapshot.statefulSet;
  const cm = snapshot.recreateRecord;
  if (!cm) {
    if (snapshot.setMissing || !c.wanted || !c.converged) return { stage: "nothing" };
    return { stage: "noRecord", behind: revisionOf(set.spec.volumeClaimTemplates ?? []) !== c.revision };
  }
  const read = readRecord(cm);
  if (!read.ok) {
    const namespace = set.metadata.namespace ?? "default";
    return {
      stage: "unreadable",
      message: snapshot.setMissing
        ? Messages.recordUnreadableSetGone(read.message, namespace, set.metadata.name)
        : Messages.recordUnreadable(read.message),
    };
  }
  const { record } = read;
  if (snapshot.setMissing) return { stage: "setGone", record };
  return set.metadata.uid === record.oldUid ? { stage: "oldSet", record } : { stage: "newSet", record };
}

function recreateStepContext(snapshot: Snapshot, c: FinalizeContext): RecreateStepContext {
  const set = snapshot.statefulSet;
  const namespace = set.metadata.namespace ?? "default";
  return {
    ...c,
    ...stageOf(snapshot, c),
    snapshot,
    set,
    setName: set.metadata.name,
    namespace,
    recordName: recordName(set.metadata.name),
    ref: { namespace, set: set.metadata.name },
  };
}

// Any stage: a record claimstep cannot read is never acted on.
const recordUnreadable: RecreateStep = (c) => (c.stage === "unreadable" ? unreadable(c.message) : undefined);

// F1: the record's manifest must carry the revision planned.
const recreateWouldDiffer: RecreateStep = (c) =>
  c.stage === "noRecord" &&
  revisionOf(targetTemplates(c.set.spec.volumeClaimTemplates ?? [], c.desired, c.shape?.removed)) !== c.revision
    ? unreadable(Messages.recreateWouldDiffer(c.setName))
    : undefined;

// F1: only with the pods at rest.
const awaitRestBeforeRecord: RecreateStep = (c) =>
  c.stage === "noRecord" && c.behind && !rolloutAtRest(c.set)
    ? { reason: "Recreating", message: Messages.podsNotAtRest(c.setName) }
    : undefined;

// F1, GitOps: the manifest in Git must carry the new templates first; merging that is the approval.
const proposeRecreate: RecreateStep = (c) => {
  if (c.stage !== "noRecord" || !c.behind || !c.viaPullRequest || recreateApprovedOf(c.set) === c.revision)
    return undefined;
  return {
    reason: "Recreating",
    message: Messages.recreateProposed(c.setName, c.revision),
    action: {
      type: "ProposeRecreate",
      ...c.ref,
      revision: c.revision,
      templates: [...c.desired],
      ...(c.shape?.podTemplate ? { podTemplate: structuredClone(c.shape.podTemplate) } : {}),
      ...(c.shape?.removed.length ? { removed: [...c.shape.removed] } : {}),
    },
  };
};

// F1: the record, the set stamped first.
const writeRecord: RecreateStep = (c) => {
  if (c.stage !== "noRecord" || !c.behind) return undefined;
  const manifest = recreatedManifest(c.set, c.desired, c.shape);
  const message = Messages.recordWritten(c.recordName, c.setName, c.revision);
  return {
    ...concluded("RecordWritten", message),
    action: {
      type: "WriteRecord",
      ...c.ref,
      record: recordOf(c.set, manifest, c.revision, keptUidsOf(c.snapshot)),
    },
    // Written on the set before the record (functions/step.ts): the stamp F2 requires.
    annotations: { [Keys.recreateRecord]: recordStampOf(c.revision, c.set.metadata.resourceVersion) },
  };
};

// F2 done: the old set, being deleted: the garbage collector orphans its pods and claims, then it goes.
const oldSetFinalizing: RecreateStep = (c) =>
  c.stage === "oldSet" && c.set.metadata.deletionTimestamp
    ? { reason: "Recreating", message: Messages.setFinalizing(c.setName), requeueAfter: AT_ONCE }
    : undefined;

// F1's stamp: only a record the set's own stamp names is claimstep's (whoever can create ConfigMaps
// but not write the set cannot make one). Not ours: reported, never acted on, never deleted.
const recordNotStamped: RecreateStep = (c) => {
  if (c.stage !== "oldSet") return undefined;
  const { record } = c;
  const stamp = recreateStampOf(c.set);
  if (stamp === recordStampOf(record.revision, record.oldResourceVersion)) return undefined;
  return notOurs(
    c,
    stamp === undefined
      ? `the StatefulSet carries no ${Keys.recreateRecord} stamp, which claimstep writes on it just before it writes its record`
      : `the StatefulSet's ${Keys.recreateRecord} stamp (${stamp}) names another record (revision ${record.revision}, resourceVersion ${record.oldResourceVersion || "none"})`,
  );
};

// F1: claimstep's record holds the uids of what it keeps.
const recordWithoutKept: RecreateStep = (c) =>
  c.stage === "oldSet" && !c.record.kept
    ? notOurs(c, `it holds no ${RecordKeys.kept}: claimstep records the uids of every pod and claim it keeps`)
    : undefined;

// F2, guarded: a record no longer what claimstep would write now is discarded (nothing acted on it
// yet: the set still exists with the uid it names). Never an armed one: a step that read it armed
// may be older than the orphan delete it allowed. Disarming changes its resourceVersion; only then
// can it go, and only as read.
const discardStale: RecreateStep = (c) => {
  if (c.stage !== "oldSet") return undefined;
  const { record } = c;
  const why = staleBecause(c, record);
  if (why === undefined) return undefined;
  const action: DeleteRecord | ArmRecord = record.armed
    ? disarmed(c, record)
    : { type: "DeleteRecord", ...c.ref, name: c.recordName, uid: record.uid, resourceVersion: record.resourceVersion };
  return { ...concluded("RecordDiscarded", Messages.recordDiscarded(c.recordName, why, record.armed)), action };
};

/**
 * Why F2 may not act on the record, or undefined: still wanted, still complete at the record's
 * revision, approved (GitOps), the record in full what claimstep would write from the set now
 * (templates, pod template, service account, annotations, the pods and claims by uid).
 */
function staleBecause(c: RecreateStepContext, record: Record_): string | undefined {
  if (!c.wanted) return `${Keys.finalize} is no longer Recreate`;
  if (!c.converged || c.revision !== record.revision)
    return `the rollout is no longer complete at revision ${record.revision}`;
  if (c.viaPullRequest && recreateApprovedOf(c.set) !== record.revision)
    return `no merged pull request approves the re-create at revision ${record.revision}`;
  const changed = unexpectedDifferences(record.manifest, recreatedManifest(c.set, c.desired, c.shape));
  if (changed.length) return `the StatefulSet changed since it was written (${changed.join(", ")})`;
  if (stableJSON(record.kept) !== stableJSON(keptUidsOf(c.snapshot)))
    return "its pods or claims are not the ones it recorded (uids)";
  return undefined;
}

// F2: only with the pods at rest.
const awaitRestBeforeArm: RecreateStep = (c) =>
  c.stage === "oldSet" && !rolloutAtRest(c.set)
    ? { reason: "Recreating", message: Messages.podsNotAtRest(c.setName) }
    : undefined;

// F1, then: the record armed, in a request of its own (docs/finalize.md: why).
const armRecord: RecreateStep = (c) =>
  c.stage === "oldSet" && !c.record.armed
    ? {
        reason: "RecordArmed",
        message: Messages.recordArmed(c.recordName, c.setName),
        action: {
          type: "ArmRecord",
          ...c.ref,
          name: c.recordName,
          armed: true,
          resourceVersion: c.record.resourceVersion,
        },
      }
    : undefined;

// F2: the orphan delete, under the set's uid and resourceVersion as read.
const orphanDelete: RecreateStep = (c) =>
  c.stage === "oldSet"
    ? {
        ...concluded("SetOrphaned", Messages.setOrphaned(c.namespace, c.setName, c.recordName)),
        action: {
          type: "OrphanSet",
          ...c.ref,
          uid: c.set.metadata.uid ?? "",
          resourceVersion: c.set.metadata.resourceVersion ?? "",
        },
      }
    : undefined;

// F3's guards: claimstep orphan-deletes only after arming a record that holds the uids of the pods
// and claims it keeps: a record not armed or holding none was not written for this set. One whose
// pods and claims are all gone proves nothing either (a planted record for a set that never existed
// looks the same), and a set created from it would start on new, empty claims: a person decides.
const createRefused: RecreateStep = (c) => {
  if (c.stage !== "setGone") return undefined;
  const { record } = c;
  if (!record.armed)
    return notOurs(
      c,
      "it is not armed, so claimstep never orphan-deleted the StatefulSet from it (someone else deleted the set); nothing is created from it",
    );
  if (!record.kept) return notOurs(c, `it holds no ${RecordKeys.kept}; nothing is created from it`);
  const replaced = replacedSince(record.kept, c.snapshot);
  if (replaced.length < Object.keys(record.kept.pods).length + Object.keys(record.kept.claims).length) return undefined;
  return blocked("RecreateReplaced", Messages.recreateReplacedSetGone(c.namespace, c.setName, replaced, c.recordName));
};

// F3: the set from the record, naming the record it came from: F4 tells it from a set someone else created.
const createFromRecord: RecreateStep = (c) => {
  if (c.stage !== "setGone") return undefined;
  const manifest = structuredClone(c.record.manifest);
  manifest.metadata.annotations = { ...manifest.metadata.annotations, [Keys.recreatedFrom]: c.record.uid };
  return {
    ...concluded("SetCreated", Messages.setCreating(c.namespace, c.setName, c.recordName)),
    action: { type: "CreateSet", ...c.ref, manifest },
  };
};

// F4: only a set claimstep created from this record is followed; one anybody else created (a GitOps
// self-heal, a person) is reported with what differs, the record disarmed.
const recreatedByOther: RecreateStep = (c) => {
  if (c.stage !== "newSet" || recreatedFromOf(c.set) === c.record.uid) return undefined;
  const { record } = c;
  const message = Messages.recreatedByOther(
    c.namespace,
    c.setName,
    c.recordName,
    c.set.metadata.uid ?? "?",
    record.revision,
    differencesFromRecord(c.set, record.manifest),
  );
  return { ...blocked("RecreatedByOther", message), ...(record.armed ? { action: disarmed(c, record) } : {}) };
};

// F4: the record goes once the new set has adopted every pod.
const awaitAdoption: RecreateStep = (c) => {
  if (c.stage !== "newSet") return undefined;
  const waiting = notAdopted(c.snapshot);
  return waiting.length ? { reason: "Recreating", message: Messages.awaitingAdoption(waiting) } : undefined;
};

// F4: "kept" is said only of what was compared: the pods and claims F1 recorded, by uid. One
// replaced means the orphan delete did not orphan (a DELETE body lost on the way: the set went in
// the background and the garbage collector took its dependents): the record stays.
const keptReplaced: RecreateStep = (c) => {
  if (c.stage !== "newSet" || !c.record.kept) return undefined;
  const replaced = replacedSince(c.record.kept, c.snapshot);
  return replaced.length
    ? blocked("RecreateReplaced", Messages.recreateReplaced(c.namespace, c.setName, replaced, c.recordName))
    : undefined;
};

// F5: the fields go back to the managers that owned them, before the record (which holds who they
// were) goes. Done once per record: the annotation is written with the managedFields.
const restoreOwnership: RecreateStep = (c) => {
  if (c.stage !== "newSet") return undefined;
  const { record, set } = c;
  if (!record.managedFields || ownershipRestoredOf(set) === record.uid) return undefined;
  const live = ManagedFields.safeParse(set.metadata.managedFields);
  const message = Messages.ownershipRestored(c.namespace, c.setName, c.recordName, ownersOf(record.managedFields));
  return {
    ...concluded("OwnershipRestored", message),
    action: {
      type: "RestoreOwnership",
      ...c.ref,
      uid: set.metadata.uid ?? "",
      resourceVersion: set.metadata.resourceVersion ?? "",
      record: record.uid,
      managedFields: restoredManagedFields(
        record.managedFields,
        live.success ? live.data : [],
        set.metadata.annotations ?? {},
      ),
    },
  };
};

// F4: the record goes. Complete only when nothing is left: after a re-create that added or removed a
// template, the pods still mount the old volumes until each is restarted (reshape.ts), and that is progress.
const deleteRecord: RecreateStep = (c) => {
  if (c.stage !== "newSet") return undefined;
  const { record, set } = c;
  const kept = record.kept
    ? { pods: Object.keys(record.kept.pods).length, claims: Object.keys(record.kept.claims).length }
    : undefined;
  const message = Messages.setRecreated(
    c.namespace,
    c.setName,
    record.oldUid,
    set.metadata.uid ?? "?",
    record.revision,
    kept,
  );
  const restartsLeft = c.snapshot.pods.some((pod) => {
    const ordinal = podOrdinal(pod.metadata.name, c.setName);
    return ordinal !== undefined && podMismatch(set, pod, ordinal, c.shape?.orphaned ?? []) !== undefined;
  });
  return {
    ...(restartsLeft
      ? { reason: "RecreatedPodsNext" as const }
      : { reason: "SetRecreated" as const, statusReason: "Finalized" as const }),
    message,
    action: { type: "DeleteRecord", ...c.ref, name: c.recordName, uid: record.uid },
    events: [eventOf("SetRecreated", message)],
  };
};

/**
 * The re-create's decision table, in the order its requests are made (docs/finalize.md's request
 * table: F1, arm, F2, F3, F5, F4): each stage's steps guard its request, and the first step that
 * concludes decides. The stages exclude each other (stageOf), so the order matters within a stage.
 */
export const FINALIZE_STEPS: readonly RecreateStep[] = [
  recordUnreadable,
  // F1: no record yet.
  recreateWouldDiffer,
  awaitRestBeforeRecord,
  proposeRecreate,
  writeRecord,
  // Arming, F2: the record and the set it was written from.
  oldSetFinalizing,
  recordNotStamped,
  recordWithoutKept,
  discardStale,
  awaitRestBeforeArm,
  armRecord,
  orphanDelete,
  // F3: the old set gone.
  createRefused,
  createFromRecord,
  // F4, F5: the new set.
  recreatedByOther,
  awaitAdoption,
  keptReplaced,
  restoreOwnership,
  deleteRecord,
];

/**
 * F1–F5: the one request of the re-create this step makes, or what it waits for (the first step of
 * FINALIZE_STEPS that concludes); undefined when there is nothing to re-create (the live templates
 * already are the desired ones, or it is not wanted).
 */
export function finalizeStep(snapshot: Snapshot, c: FinalizeContext): WalkConclusion | undefined {
  const ctx = recreateStepContext(snapshot, c);
  let conclusion: WalkConclusion | undefined;
  for (const step of FINALIZE_STEPS) if ((conclusion = step(ctx))) break;
  return conclusion;
}

/** The record disarmed, as read: an armed record is only disarmed, never deleted. */
const disarmed = (c: RecreateStepContext, record: Record_): ArmRecord => ({
  type: "ArmRecord",
  ...c.ref,
  name: c.recordName,
  armed: false,
  resourceVersion: record.resourceVersion,
});

/** What differs between a set someone else created and the one claimstep recorded, briefly. */
function differencesFromRecord(set: StatefulSet, recorded: StatefulSet): string[] {
  const out: string[] = [];
  const live = new Map((set.spec.volumeClaimTemplates ?? []).map((t) => [t.metadata.name, t]));
  const want = new Map((recorded.spec.volumeClaimTemplates ?? []).map((t) => [t.metadata.name, t]));
  for (const [n, t] of want) {
    const l = live.get(n);
    if (!l) out.push(`claim template ${n} is missing`);
    else if (revisionOf([l]) !== revisionOf([t])) {
      const size = (x: ClaimTemplate) => x.spec.resources?.requests?.storage ?? "-";
      const cls = (x: ClaimTemplate) => x.spec.volumeAttributesClassName ?? "-";
      out.push(
        `claim template ${n}: ${size(l)} here, ${size(t)} recorded${cls(l) !== cls(t) ? `; volumeAttributesClassName ${cls(l)} here, ${cls(t)} recorded` : ""}`,
      );
    }
  }
  for (const n of live.keys()) if (!want.has(n)) out.push(`claim template ${n} was removed in the record`);
  if (stableJSON(set.spec.template) !== stableJSON(recorded.spec.template)) out.push("the pod template differs");
  const optIn = (s: StatefulSet) => rawAnnotation(s.metadata.annotations, "strategy");
  if (optIn(set) !== optIn(recorded))
    out.push(`${Keys.strategy} is ${optIn(set) ?? "not set"} (was ${optIn(recorded)})`);
  return out;
}

/** The record is not claimstep's: reported, saying why, never acted on. */
const notOurs = (c: RecreateStepContext, why: string): WalkConclusion =>
  blocked("RecordNotOurs", Messages.recordNotOurs(c.namespace, c.recordName, c.setName, why));

const unreadable = (message: string): WalkConclusion => blocked("RecordUnreadable", message);
