// Re-creating the set with the new templates (docs/design.md "Re-creating the set", F1–F4): the
// `kubectl delete sts --cascade=orphan` + re-apply dance, one request per step, each step
// starting from what it finds, so a crash between any two requests is finished by the next
// invocation. The manifest is never only in memory: it is in the record (a ConfigMap) before the
// set is deleted, and the record goes only once the new set has adopted its pods.

import { Keys } from "../keys.js";
import { stableJSON } from "../kube/json.js";
import type { ClaimTemplate, ConfigMap, StatefulSet } from "../kube/k8s.js";
import { StatefulSet as StatefulSetSchema } from "../kube/k8s.js";
import { ManagedFields, type ManagedFieldsEntry, ownersOf, restoredManagedFields } from "../kube/ownership.js";
import { revisionOf } from "../kube/revision.js";
import { podName, podOrdinal } from "../kube/statefulset.js";
import { blocked, concluded, eventOf, Messages } from "../messages.js";
import type { WalkConclusion } from "../parts.js";
import { rawAnnotation } from "../policy/annotations.js";
import {
  finalizeForOf,
  ownershipRestoredOf,
  recreateApprovedOf,
  recreatedFromOf,
  recreateStampOf,
} from "../policy/records.js";
import { mergeTemplate, type Reshape, targetTemplates } from "../policy/shape.js";
import { AT_ONCE } from "../reasons.js";
import type { ArmRecord, DeleteRecord, Replaced, Snapshot } from "../types.js";
import * as z from "../zod.js";
import { podMismatch } from "./reshape.js";

export const RECORD_PREFIX = "claimstep-recreate-";
export const recordName = (set: string): string => `${RECORD_PREFIX}${set}`;

/** Keys of the record's data. */
export const RecordKeys = {
  manifest: "statefulset.json",
  oldUid: "old-uid",
  oldResourceVersion: "old-resource-version",
  revision: "revision",
  armed: "armed",
  kept: "kept-uids.json",
  managedFields: "managed-fields.json",
} as const;

/** The uids of the set's pods and claims when the record was written: F4 checks they are the same ones. */
export interface KeptUids {
  pods: Record<string, string>;
  claims: Record<string, string>;
}

const KeptUidsSchema = z.object({ pods: z.record(z.string(), z.string()), claims: z.record(z.string(), z.string()) });

/** The pods of the set's ordinals and the claims of its templates, by name → uid (F1). */
export function keptUidsOf(snapshot: Pick<Snapshot, "statefulSet" | "pods" | "claims">): KeptUids {
  const set = snapshot.statefulSet;
  const start = set.spec.ordinals?.start ?? 0;
  const ordinals = Array.from({ length: set.spec.replicas ?? 1 }, (_, i) => start + i);
  const podNames = new Set(ordinals.map((o) => podName(set.metadata.name, o)));
  const claimNames = new Set(
    (set.spec.volumeClaimTemplates ?? []).flatMap((t) =>
      ordinals.map((o) => `${t.metadata.name}-${podName(set.metadata.name, o)}`),
    ),
  );
  const pick = (
    objects: readonly {
      metadata: { name: string; uid?: string | undefined; deletionTimestamp?: string | undefined };
    }[],
    names: Set<string>,
  ) =>
    Object.fromEntries(
      objects
        .filter((o) => names.has(o.metadata.name) && o.metadata.uid && !o.metadata.deletionTimestamp)
        .map((o) => [o.metadata.name, o.metadata.uid!] as const)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
  return { pods: pick(snapshot.pods, podNames), claims: pick(snapshot.claims, claimNames) };
}

/** What is not the pod or claim F1 recorded: gone, being deleted, or another uid. */
export function replacedSince(kept: KeptUids, snapshot: Pick<Snapshot, "pods" | "claims">): Replaced[] {
  const out: Replaced[] = [];
  const check = (
    kind: Replaced["kind"],
    recorded: Record<string, string>,
    objects: readonly {
      metadata: { name: string; uid?: string | undefined; deletionTimestamp?: string | undefined };
    }[],
  ) => {
    const live = new Map(objects.map((o) => [o.metadata.name, o.metadata]));
    for (const [name, uid] of Object.entries(recorded)) {
      const now = live.get(name);
      if (!now) out.push({ kind, name, state: "gone", uid });
      else if (now.uid !== uid) out.push({ kind, name, state: "re-created", uid, newUid: now.uid ?? "?" });
      else if (now.deletionTimestamp) out.push({ kind, name, state: "deleting", uid });
    }
  };
  check("pod", kept.pods, snapshot.pods);
  check("claim", kept.claims, snapshot.claims);
  return out;
}

/** Metadata the API server sets: never part of a manifest to create. */
const SERVER_SET = [
  "uid",
  "resourceVersion",
  "creationTimestamp",
  "generation",
  "managedFields",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "selfLink",
] as const;

/** The live templates with the desired storage, VAC, labels and annotations merged onto them. */
export const mergeTemplates = (live: readonly ClaimTemplate[], desired: readonly ClaimTemplate[]): ClaimTemplate[] =>
  live.map((t) => mergeTemplate(t, desired));

/**
 * The set to re-create (F1): the live one without its server-set metadata and status, without
 * claimstep's desired-templates annotation, with the desired templates merged onto the live ones.
 */
export function recreatedManifest(
  set: StatefulSet,
  desired: readonly ClaimTemplate[],
  shape: Pick<Reshape, "removed" | "podTemplate"> = { removed: [] },
): StatefulSet {
  const manifest = structuredClone(set) as StatefulSet & Record<string, unknown>;
  delete manifest.status;
  const meta = manifest.metadata as Record<string, unknown>;
  for (const k of SERVER_SET) delete meta[k];
  const annotations = { ...set.metadata.annotations };
  delete annotations[Keys.templates];
  // The held pod template is applied by this create (it mounts what the new templates give).
  delete annotations[Keys.podTemplate];
  delete annotations[Keys.podTemplateBase];
  // F5 writes it on the set it restored: a set re-created again has its ownership restored anew.
  delete annotations[Keys.ownershipRestored];
  manifest.metadata.annotations = annotations;
  manifest.spec.volumeClaimTemplates = targetTemplates(set.spec.volumeClaimTemplates ?? [], desired, shape.removed);
  if (shape.podTemplate) (manifest.spec as Record<string, unknown>).template = structuredClone(shape.podTemplate);
  // A Recreate claimstep wrote on the user's behalf is spent by this re-create: the new set names
  // the revision it was re-created at, and a later change re-creates no more (policy.ts finalizeSpent).
  if (finalizeForOf(set) !== undefined) annotations[Keys.finalizeFor] = revisionOf(manifest.spec.volumeClaimTemplates);
  return manifest;
}

/** F1's record: the manifest plus the old uid, resourceVersion and the revision it carries. */
export function recordOf(set: StatefulSet, manifest: StatefulSet, revision: string, kept: KeptUids): ConfigMap {
  // The approval of a pull request is spent by this re-create: the new set does not carry it.
  if (manifest.metadata.annotations) delete manifest.metadata.annotations[Keys.recreateApproved];
  // Who owned which field of the old set: F5 hands it back to them on the new one.
  const owners = ManagedFields.safeParse(set.metadata.managedFields);
  return {
    metadata: {
      name: recordName(set.metadata.name),
      namespace: set.metadata.namespace ?? "default",
      labels: { "app.kubernetes.io/managed-by": "claimstep", [Keys.revisionLabel]: revision },
      annotations: { "claimstep.io/statefulset": set.metadata.name },
    },
    data: {
      [RecordKeys.manifest]: JSON.stringify(manifest),
      [RecordKeys.oldUid]: set.metadata.uid ?? "",
      [RecordKeys.oldResourceVersion]: set.metadata.resourceVersion ?? "",
      [RecordKeys.revision]: revision,
      [RecordKeys.kept]: JSON.stringify(kept),
      ...(owners.success && owners.data.length ? { [RecordKeys.managedFields]: JSON.stringify(owners.data) } : {}),
    },
  };
}

export interface Record_ {
  manifest: StatefulSet;
  oldUid: string;
  /** The set's resourceVersion the record was made from (the stamp names it: Keys.recreateRecord). */
  oldResourceVersion: string;
  revision: string;
  uid: string;
  resourceVersion: string;
  /** Armed for the orphan delete (see ArmRecord). */
  armed: boolean;
  /** The pods and claims at F1; absent in a record written before claimstep recorded them. */
  kept?: KeptUids;
  /** The old set's managedFields at F1 (F5); absent when the set had none or an older claimstep wrote the record. */
  managedFields?: ManagedFieldsEntry[];
}

const RecordData = z.object({
  [RecordKeys.manifest]: z.string(),
  [RecordKeys.oldUid]: z.string().check(z.minLength(1)),
  [RecordKeys.oldResourceVersion]: z.optional(z.string()),
  [RecordKeys.revision]: z.string().check(z.minLength(1)),
  [RecordKeys.armed]: z.optional(z.string()),
  [RecordKeys.kept]: z.optional(z.string()),
  [RecordKeys.managedFields]: z.optional(z.string()),
});

/** The record as claimstep wrote it, or why it cannot be read. */
export function readRecord(cm: ConfigMap): { ok: true; record: Record_ } | { ok: false; message: string } {
  const where = `ConfigMap ${cm.metadata.namespace ?? "default"}/${cm.metadata.name}`;
  const data = RecordData.safeParse(cm.data ?? {});
  if (!data.success)
    return {
      ok: false,
      message: `${where}: ${data.error.issues[0]!.path.join(".") || "data"}: ${data.error.issues[0]!.message}`,
    };
  let json: unknown;
  try {
    json = JSON.parse(data.data[RecordKeys.manifest]);
  } catch (err) {
    return { ok: false, message: `${where}: ${RecordKeys.manifest} is not JSON (${(err as Error).message})` };
  }
  const manifest = StatefulSetSchema.safeParse(json);
  if (!manifest.success)
    return {
      ok: false,
      message: `${where}: ${RecordKeys.manifest} is not a StatefulSet (${manifest.error.issues[0]!.message})`,
    };
  let kept: KeptUids | undefined;
  const keptText = data.data[RecordKeys.kept];
  if (keptText !== undefined) {
    let keptJson: unknown;
    try {
      keptJson = JSON.parse(keptText);
    } catch (err) {
      return { ok: false, message: `${where}: ${RecordKeys.kept} is not JSON (${(err as Error).message})` };
    }
    const parsed = KeptUidsSchema.safeParse(keptJson);
    if (!parsed.success)
      return {
        ok: false,
        message: `${where}: ${RecordKeys.kept} is not {pods, claims} of name → uid (${parsed.error.issues[0]!.message})`,
      };
    kept = parsed.data;
  }
  let managedFields: ManagedFieldsEntry[] | undefined;
  const ownersText = data.data[RecordKeys.managedFields];
  if (ownersText !== undefined) {
    let ownersJson: unknown;
    try {
      ownersJson = JSON.parse(ownersText);
    } catch (err) {
      return { ok: false, message: `${where}: ${RecordKeys.managedFields} is not JSON (${(err as Error).message})` };
    }
    const parsed = ManagedFields.safeParse(ownersJson);
    if (!parsed.success)
      return {
        ok: false,
        message: `${where}: ${RecordKeys.managedFields} is not a list of managedFields entries (${parsed.error.issues[0]!.path.join(".")}: ${parsed.error.issues[0]!.message})`,
      };
    managedFields = parsed.data;
  }
  return {
    ok: true,
    record: {
      manifest: manifest.data,
      oldUid: data.data[RecordKeys.oldUid],
      oldResourceVersion: data.data[RecordKeys.oldResourceVersion] ?? "",
      revision: data.data[RecordKeys.revision],
      uid: cm.metadata.uid ?? "",
      resourceVersion: cm.metadata.resourceVersion ?? "",
      armed: data.data[RecordKeys.armed] === "true",
      ...(kept ? { kept } : {}),
      ...(managedFields ? { managedFields } : {}),
    },
  };
}

/** The stamp F1 writes on the set before the record (Keys.recreateRecord): the revision and the resourceVersion read. */
export const recordStampOf = (revision: string, resourceVersion: string | undefined): string =>
  `${revision}/${resourceVersion ?? ""}`;

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

const ref = (set: StatefulSet) => ({ namespace: set.metadata.namespace ?? "default", set: set.metadata.name });

/**
 * F1–F4: the one request of the re-create this step makes, or what it waits for; undefined when
 * there is nothing to re-create (the live templates already are the desired ones, or it is not wanted).
 */
export function finalizeStep(snapshot: Snapshot, c: FinalizeContext): WalkConclusion | undefined {
  const set = snapshot.statefulSet;
  const cm = snapshot.recreateRecord;
  const name = recordName(set.metadata.name);
  const namespace = set.metadata.namespace ?? "default";

  // F3: the old set is gone; the record holds the new one.
  if (snapshot.setMissing) {
    if (!cm) return undefined;
    const read = readRecord(cm);
    if (!read.ok) return unreadable(Messages.recordUnreadableSetGone(read.message, namespace, set.metadata.name));
    const refused = refusedWhileMissing(read.record, snapshot);
    if (refused) return refused;
    const message = Messages.setCreating(namespace, set.metadata.name, name);
    // The new set names the record it came from: F4 tells it from a set someone else created.
    const manifest = structuredClone(read.record.manifest);
    manifest.metadata.annotations = { ...manifest.metadata.annotations, [Keys.recreatedFrom]: read.record.uid };
    return {
      ...concluded("SetCreated", message),
      action: { type: "CreateSet", ...ref(set), manifest },
    };
  }

  if (cm) {
    const read = readRecord(cm);
    if (!read.ok) return unreadable(Messages.recordUnreadable(read.message));
    const { record } = read;
    // Never discard an armed record: a step that read it armed may be older than the orphan delete
    // it allowed. Disarming changes its resourceVersion; only then can it go, and only as read.
    const disarm: ArmRecord = {
      type: "ArmRecord",
      ...ref(set),
      name,
      armed: false,
      resourceVersion: record.resourceVersion,
    };
    const discard = (why: string): WalkConclusion => {
      const message = Messages.recordDiscarded(name, why, record.armed);
      const action: DeleteRecord | ArmRecord = record.armed
        ? disarm
        : { type: "DeleteRecord", ...ref(set), name, uid: record.uid, resourceVersion: record.resourceVersion };
      return { ...concluded("RecordDiscarded", message), action };
    };
    if (set.metadata.uid !== record.oldUid) {
      // F4: a new set exists. Only one claimstep created from this record is followed; one anybody
      // else created (a GitOps self-heal, a person) is reported with what differs, the record disarmed.
      if (recreatedFromOf(set) !== record.uid) {
        const message = Messages.recreatedByOther(
          namespace,
          set.metadata.name,
          name,
          set.metadata.uid ?? "?",
          record.revision,
          differencesFromRecord(set, record.manifest),
        );
        return { ...blocked("RecreatedByOther", message), ...(record.armed ? { action: disarm } : {}) };
      }
      // The record goes once the new set has adopted every pod.
      const waiting = notAdopted(snapshot);
      if (waiting.length) return { reason: "Recreating", message: Messages.awaitingAdoption(waiting) };
      // "Kept" is said only of what was compared: the pods and claims F1 recorded, by uid. One
      // replaced means the orphan delete did not orphan (a DELETE body lost on the way: the set
      // went in the background and the garbage collector took its dependents): the record stays.
      if (record.kept) {
        const replaced = replacedSince(record.kept, snapshot);
        if (replaced.length) {
          return blocked("RecreateReplaced", Messages.recreateReplaced(namespace, set.metadata.name, replaced, name));
        }
      }
      // F5: the fields go back to the managers that owned them, before the record (which holds
      // who they were) goes. Done once per record: the annotation is written with the managedFields.
      if (record.managedFields && ownershipRestoredOf(set) !== record.uid) {
        const live = ManagedFields.safeParse(set.metadata.managedFields);
        const message = Messages.ownershipRestored(namespace, set.metadata.name, name, ownersOf(record.managedFields));
        return {
          ...concluded("OwnershipRestored", message),
          action: {
            type: "RestoreOwnership",
            ...ref(set),
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
      }
      const kept = record.kept
        ? { pods: Object.keys(record.kept.pods).length, claims: Object.keys(record.kept.claims).length }
        : undefined;
      const message = Messages.setRecreated(
        namespace,
        set.metadata.name,
        record.oldUid,
        set.metadata.uid ?? "?",
        record.revision,
        kept,
      );
      // Complete only when nothing is left: after a re-create that added or removed a template, the
      // pods still mount the old volumes until each is restarted (reshape.ts), and that is progress.
      const restartsLeft = snapshot.pods.some((pod) => {
        const ordinal = podOrdinal(pod.metadata.name, set.metadata.name);
        return ordinal !== undefined && podMismatch(set, pod, ordinal, c.shape?.orphaned ?? []) !== undefined;
      });
      return {
        ...(restartsLeft
          ? { reason: "RecreatedPodsNext" as const }
          : { reason: "SetRecreated" as const, statusReason: "Finalized" as const }),
        message,
        action: { type: "DeleteRecord", ...ref(set), name, uid: record.uid },
        events: [eventOf("SetRecreated", message)],
      };
    }
    // The old set, being deleted: the garbage collector orphans its pods and claims, then it goes.
    if (set.metadata.deletionTimestamp)
      return { reason: "Recreating", message: Messages.setFinalizing(set.metadata.name), requeueAfter: AT_ONCE };
    // Only a record the set's own stamp names is claimstep's: whoever can create ConfigMaps but not
    // write the set cannot make one. Not ours: reported, never acted on, never deleted.
    const stamp = recreateStampOf(set);
    if (stamp !== recordStampOf(record.revision, record.oldResourceVersion))
      return notOurs(
        namespace,
        name,
        set.metadata.name,
        stamp === undefined
          ? `the StatefulSet carries no ${Keys.recreateRecord} stamp, which claimstep writes on it just before it writes its record`
          : `the StatefulSet's ${Keys.recreateRecord} stamp (${stamp}) names another record (revision ${record.revision}, resourceVersion ${record.oldResourceVersion || "none"})`,
      );
    if (!record.kept)
      return notOurs(
        namespace,
        name,
        set.metadata.name,
        `it holds no ${RecordKeys.kept}: claimstep records the uids of every pod and claim it keeps`,
      );
    // F2, guarded: still wanted, still complete at the record's revision, approved (GitOps), the
    // record in full what claimstep would write from the set now (templates, pod template, service
    // account, annotations, the pods and claims by uid); else the record is discarded (nothing
    // acted on it yet: the set still exists with the uid it names).
    if (!c.wanted) return discard(`${Keys.finalize} is no longer Recreate`);
    if (!c.converged || c.revision !== record.revision)
      return discard(`the rollout is no longer complete at revision ${record.revision}`);
    if (c.viaPullRequest && recreateApprovedOf(set) !== record.revision)
      return discard(`no merged pull request approves the re-create at revision ${record.revision}`);
    const changed = unexpectedDifferences(record.manifest, recreatedManifest(set, c.desired, c.shape));
    if (changed.length) return discard(`the StatefulSet changed since it was written (${changed.join(", ")})`);
    if (stableJSON(record.kept) !== stableJSON(keptUidsOf(snapshot)))
      return discard("its pods or claims are not the ones it recorded (uids)");
    if (!rolloutAtRest(set)) return { reason: "Recreating", message: Messages.podsNotAtRest(set.metadata.name) };
    if (!record.armed) {
      const message = Messages.recordArmed(name, set.metadata.name);
      return {
        reason: "RecordArmed",
        message,
        action: { type: "ArmRecord", ...ref(set), name, armed: true, resourceVersion: record.resourceVersion },
      };
    }
    const message = Messages.setOrphaned(namespace, set.metadata.name, name);
    return {
      ...concluded("SetOrphaned", message),
      action: {
        type: "OrphanSet",
        ...ref(set),
        uid: set.metadata.uid ?? "",
        resourceVersion: set.metadata.resourceVersion ?? "",
      },
    };
  }

  // F1: only when wanted, complete, the live templates behind, the pods at rest.
  if (!c.wanted || !c.converged) return undefined;
  const live = set.spec.volumeClaimTemplates ?? [];
  if (revisionOf(targetTemplates(live, c.desired, c.shape?.removed)) !== c.revision)
    return unreadable(Messages.recreateWouldDiffer(set.metadata.name));
  if (revisionOf(live) === c.revision) return undefined;
  if (!rolloutAtRest(set)) return { reason: "Recreating", message: Messages.podsNotAtRest(set.metadata.name) };
  // GitOps: the manifest in Git must carry the new templates first; merging that is the approval.
  if (c.viaPullRequest && recreateApprovedOf(set) !== c.revision) {
    return {
      reason: "Recreating",
      message: Messages.recreateProposed(set.metadata.name, c.revision),
      action: {
        type: "ProposeRecreate",
        ...ref(set),
        revision: c.revision,
        templates: [...c.desired],
        ...(c.shape?.podTemplate ? { podTemplate: structuredClone(c.shape.podTemplate) } : {}),
        ...(c.shape?.removed.length ? { removed: [...c.shape.removed] } : {}),
      },
    };
  }
  const manifest = recreatedManifest(set, c.desired, c.shape);
  const message = Messages.recordWritten(name, set.metadata.name, c.revision);
  return {
    ...concluded("RecordWritten", message),
    action: { type: "WriteRecord", ...ref(set), record: recordOf(set, manifest, c.revision, keptUidsOf(snapshot)) },
    // Written on the set before the record (functions/step.ts): the stamp F2 requires.
    annotations: { [Keys.recreateRecord]: recordStampOf(c.revision, set.metadata.resourceVersion) },
  };
}

/**
 * Why a record found with its set gone is not acted on (F3), or undefined. claimstep orphan-deletes
 * only after arming a record that holds the uids of the pods and claims it keeps: a record not
 * armed or holding none was not written for this set. One whose pods and claims are all gone
 * proves nothing either (a planted record for a set that never existed looks the same), and a set
 * created from it would start on new, empty claims: a person decides.
 */
function refusedWhileMissing(record: Record_, snapshot: Snapshot): WalkConclusion | undefined {
  const set = snapshot.statefulSet;
  const namespace = set.metadata.namespace ?? "default";
  const name = recordName(set.metadata.name);
  if (!record.armed)
    return notOurs(
      namespace,
      name,
      set.metadata.name,
      "it is not armed, so claimstep never orphan-deleted the StatefulSet from it (someone else deleted the set); nothing is created from it",
    );
  if (!record.kept)
    return notOurs(namespace, name, set.metadata.name, `it holds no ${RecordKeys.kept}; nothing is created from it`);
  const replaced = replacedSince(record.kept, snapshot);
  if (replaced.length < Object.keys(record.kept.pods).length + Object.keys(record.kept.claims).length) return undefined;
  return blocked("RecreateReplaced", Messages.recreateReplacedSetGone(namespace, set.metadata.name, replaced, name));
}

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

const notOurs = (namespace: string, record: string, set: string, why: string): WalkConclusion =>
  blocked("RecordNotOurs", Messages.recordNotOurs(namespace, record, set, why));

const unreadable = (message: string): WalkConclusion => blocked("RecordUnreadable", message);
