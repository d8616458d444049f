// The re-create's record (docs/design.md "Re-creating the set", F1; docs/finalize.md): the ConfigMap
// `claimstep-recreate-<set>` that F1 writes before the set is deleted and every later step reads
// back: the new manifest, the old set's uid and resourceVersion, the revision, the uids of the pods
// and claims it keeps, and the old set's field owners (F5). What it holds and how it is read; the
// steps that act on it are core/plan/finalize.ts's table.
import { Keys } from "../keys.js";
import type { ClaimTemplate, ConfigMap, StatefulSet } from "../kube/k8s.js";
import { StatefulSet as StatefulSetSchema } from "../kube/k8s.js";
import { ManagedFields, type ManagedFieldsEntry } from "../kube/ownership.js";
import { revisionOf } from "../kube/revision.js";
import { podName } from "../kube/statefulset.js";
import { finalizeForOf } from "../policy/records.js";
import { type Reshape, targetTemplates } from "../policy/shape.js";
import type { Replaced, Snapshot } from "../types.js";
import * as z from "../zod.js";

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

/**
 * Whether every pod and claim the set's record names is there with its uid: the only case in which
 * a set deleted mid re-create may be said to have kept them (the record unreadable, or holding no
 * uids, proves nothing).
 */
export function recordedKept(snapshot: Pick<Snapshot, "recreateRecord" | "pods" | "claims">): boolean {
  const read = snapshot.recreateRecord && readRecord(snapshot.recreateRecord);
  return !!read && read.ok && read.record.kept !== undefined && replacedSince(read.record.kept, snapshot).length === 0;
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
  // A record creates only the set it is named after, in its own namespace: a manifest naming
  // another would have claimstep create a StatefulSet nobody asked it to re-create.
  const namespace = cm.metadata.namespace ?? "default";
  const setName = cm.metadata.name.startsWith(RECORD_PREFIX) ? cm.metadata.name.slice(RECORD_PREFIX.length) : "";
  const { name: manifestName, namespace: manifestNamespace } = manifest.data.metadata;
  if (manifestName !== setName || (manifestNamespace !== undefined && manifestNamespace !== namespace))
    return {
      ok: false,
      message: `${where}: ${RecordKeys.manifest} is StatefulSet ${manifestNamespace ?? namespace}/${manifestName}, not ${namespace}/${setName || "?"} the record is named after`,
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
