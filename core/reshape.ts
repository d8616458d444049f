// Adding and removing claim templates on a running set (docs/design.md "Adding and removing claim
// templates"). The set's shape (which templates it has) changes only by a re-create (finalize.ts);
// this module says what the re-create must carry (the target templates, the held pod template), what
// can never be created (a pod template mounting a volume the set lacks: I14), and, once the set has
// its new shape, the steps after it: label the removed templates' claims, restart the pods one at a
// time from the lowest ordinal, as the StatefulSet controller can follow (it processes pods from
// ordinal start and stops at the first whose volumes do not match the set, so a higher pod evicted
// first is never re-created), then hand the partition back.
import {
  heldTemplateBaseOf,
  type PodTemplate,
  PodTemplateSchema,
  podTemplateOf,
  removeListOf,
  TEMPLATE_NAME,
} from "./annotations.js";
import { stableJSON } from "./json.js";
import type { ClaimTemplate, PersistentVolumeClaim, Pod, StatefulSet } from "./k8s.js";
import { Keys } from "./keys.js";
import { eventOf, Messages } from "./messages.js";
import { mountsWithoutVolume } from "./mounts.js";
import { partitionHold, partitionPatch } from "./partition-hold.js";
import type { WalkConclusion } from "./parts.js";
import { budgetCharged } from "./pod-policy.js";
import type { LastEviction } from "./records.js";
import { revisionOfCanonical } from "./revision.js";
import { withoutServerFields } from "./server-fields.js";
import { claimName, podName } from "./statefulset.js";
import type { EvictPod, LabelClaim, OrphanedClaim } from "./types.js";

/** What the set's annotations ask of its shape. */
export interface Reshape {
  /** Desired templates the live set lacks: the re-create adds them. */
  added: string[];
  /** Templates in `claimstep.io/remove-claim-templates` the live set still has: the re-create drops them. */
  removed: string[];
  /** Templates in that list the live set no longer has: their claims carry the orphaned-from label. */
  orphaned: string[];
  /** `claimstep.io/pod-template`: the pod template the re-create applies; absent: the live one. */
  podTemplate?: PodTemplate;
}

/** The set's shape changes with the next re-create. */
export const reshapePending = (r: Reshape): boolean => r.added.length > 0 || r.removed.length > 0;

/** The digest of a pod template (`claimstep.io/pod-template-base`): FNV-1 of its content, as the revision hash. */
export const podTemplateDigest = (template: unknown): string => revisionOfCanonical(stableJSON(template ?? null));

type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/** What the annotation parsers read of a set (the webhook's old object has an optional name). */
type Annotated = { metadata: { name?: string; namespace?: string; annotations?: Record<string, string> } };

const ref = (set: Annotated) => `StatefulSet ${set.metadata.namespace ?? "default"}/${set.metadata.name}`;

/**
 * The shape the annotations ask for, given the desired templates (templates.ts), or why it is
 * refused: a bad annotation, a template both desired and removed, or a pod template that would
 * mount a volume the re-created set lacks (the API server refuses such a set: I14).
 */
export function reshapeOf(set: StatefulSet, desired: readonly ClaimTemplate[]): Parsed<Reshape> {
  const live = new Set((set.spec.volumeClaimTemplates ?? []).map((t) => t.metadata.name));
  const removeList = removeListOf(set);
  if (!removeList.ok) return removeList;
  const held = podTemplateOf(set);
  if (!held.ok) return held;
  const desiredNames = new Set(desired.map((t) => t.metadata.name));
  const both = removeList.value.find((n) => desiredNames.has(n));
  if (both !== undefined)
    return {
      ok: false,
      message: `${ref(set)}: claim template "${both}" is both in ${Keys.templates} and in ${Keys.removeTemplates}: keep it in one of them (claimstep set ${set.metadata.name} ${both} --add or --remove writes both)`,
    };
  const badName = desired.find((t) => !live.has(t.metadata.name) && !TEMPLATE_NAME.test(t.metadata.name));
  if (badName)
    return {
      ok: false,
      message: `${ref(set)}: claim template name "${badName.metadata.name}" is not a DNS-1123 label (lower-case letters, digits and '-'): its claims could not be created`,
    };
  // A pod template held against a live one that changed since (kubectl set image, a patch): the
  // re-create would silently undo that change.
  const base = heldTemplateBaseOf(set);
  const liveTemplate = (set.spec as { template?: unknown }).template;
  if (held.value && base !== undefined && podTemplateDigest(liveTemplate) !== base)
    return { ok: false, message: Messages.heldTemplateStale(ref(set), set.metadata.name) };
  const reshape: Reshape = {
    added: desired.filter((t) => !live.has(t.metadata.name)).map((t) => t.metadata.name),
    removed: removeList.value.filter((n) => live.has(n)),
    orphaned: removeList.value.filter((n) => !live.has(n)),
    ...(held.value ? { podTemplate: held.value } : {}),
  };
  if (reshapePending(reshape) || reshape.podTemplate) {
    const names = targetTemplates(set.spec.volumeClaimTemplates ?? [], desired, reshape.removed).map(
      (t) => t.metadata.name,
    );
    const pod = reshape.podTemplate ?? (set.spec as { template?: unknown }).template;
    const missing = missingMounts(pod, names);
    if (missing.length)
      return {
        ok: false,
        message: Messages.mountsMissingVolume(ref(set), missing, reshape.podTemplate !== undefined, reshape.removed),
      };
  }
  return { ok: true, value: reshape };
}

/**
 * The templates the re-created set carries: each live one with the desired values merged onto it
 * (the server's defaults kept), those to remove left out, the added ones after them.
 */
export function targetTemplates(
  live: readonly ClaimTemplate[],
  desired: readonly ClaimTemplate[],
  removed: readonly string[] = [],
): ClaimTemplate[] {
  const liveNames = new Set(live.map((t) => t.metadata.name));
  const removing = new Set(removed);
  // By name, the first of a name winning (as mergeTemplate's `find`): one lookup per live template.
  const byName = new Map<string, ClaimTemplate>();
  for (const d of desired) if (!byName.has(d.metadata.name)) byName.set(d.metadata.name, d);
  const kept = live.filter((t) => !removing.has(t.metadata.name)).map((t) => mergeOnto(t, byName.get(t.metadata.name)));
  const added = desired.filter((t) => !liveNames.has(t.metadata.name)).map(withoutServerFields);
  return [...kept, ...added];
}

/** One live template with the desired storage, VAC, labels and annotations merged onto it. */
export function mergeTemplate(t: ClaimTemplate, desired: readonly ClaimTemplate[]): ClaimTemplate {
  return mergeOnto(
    t,
    desired.find((x) => x.metadata.name === t.metadata.name),
  );
}

/** `t` with the desired template `d` (of its name) merged onto it; a copy of `t` when there is none. */
function mergeOnto(t: ClaimTemplate, d: ClaimTemplate | undefined): ClaimTemplate {
  if (!d) return structuredClone(t);
  const merged = structuredClone(t);
  const storage = d.spec.resources?.requests?.storage;
  if (storage !== undefined)
    merged.spec.resources = { ...merged.spec.resources, requests: { ...merged.spec.resources?.requests, storage } };
  // The four fields claimstep rolls out are the desired ones, exactly (the revision hashes them).
  if (d.spec.volumeAttributesClassName) merged.spec.volumeAttributesClassName = d.spec.volumeAttributesClassName;
  else delete merged.spec.volumeAttributesClassName;
  if (d.metadata.labels) merged.metadata.labels = { ...d.metadata.labels };
  else delete merged.metadata.labels;
  if (d.metadata.annotations) merged.metadata.annotations = { ...d.metadata.annotations };
  else delete merged.metadata.annotations;
  return merged;
}

/** `container c mounts v` for every mount (or device) of a volume neither the pod template nor the templates give. */
export const missingMounts = (podTemplate: unknown, templateNames: readonly string[]): string[] =>
  PodTemplateSchema.safeParse(podTemplate).success
    ? mountsWithoutVolume(podTemplate, templateNames).map((m) => `container "${m.container}" mounts "${m.volume}"`)
    : [];

// ---------------------------------------------------------------------------------------------
// After the re-create: the claims of removed templates, the pods, the partition.

/** The claim of template `t` of this set, when `name` is one (`<t>-<set>-<ordinal>`). */
const templateOfClaim = (name: string, set: string, templates: readonly string[]): string | undefined =>
  templates.find((t) => ordinalSuffix(name, `${t}-${set}-`));
const ordinalSuffix = (name: string, prefix: string): boolean =>
  name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length));

/** Names of the claims each pod's volumes use. */
const podClaims = (pod: Pod): Map<string, string> => {
  const volumes = ((pod as { spec?: { volumes?: unknown } }).spec?.volumes ?? []) as {
    name?: string;
    persistentVolumeClaim?: { claimName?: string };
  }[];
  const out = new Map<string, string>();
  for (const v of volumes)
    if (v.name && v.persistentVolumeClaim?.claimName) out.set(v.name, v.persistentVolumeClaim.claimName);
  return out;
};

/** `cache` of `cache-web-3` (set `web`). */
const templateName = (claim: string, set: string): string => {
  const at = claim.lastIndexOf(`-${set}-`);
  return at > 0 ? claim.slice(0, at) : claim;
};

/** Claims labelled orphaned-from this set, and whether a pod of it still mounts each. */
export function orphanedClaimsOf(
  setName: string,
  claims: readonly PersistentVolumeClaim[],
  pods: readonly Pod[],
): OrphanedClaim[] {
  const mounted = new Set(pods.flatMap((p) => [...podClaims(p).values()]));
  return claims
    .filter((c) => c.metadata.labels?.[Keys.orphanedFrom] === setName && !c.metadata.deletionTimestamp)
    .map((c) => ({
      claim: c.metadata.name,
      template: templateName(c.metadata.name, setName),
      mounted: mounted.has(c.metadata.name),
    }))
    .sort((a, b) => (a.claim < b.claim ? -1 : a.claim > b.claim ? 1 : 0));
}

/** What the steps after a re-create read. */
export interface ShapeContext {
  set: StatefulSet;
  pods: readonly Pod[];
  claims: readonly PersistentVolumeClaim[];
  /** StorageClasses by name: `volumeBindingMode` says whether a new claim binds before its pod. */
  classes: ReadonlyMap<string, { volumeBindingMode?: string | undefined }>;
  reshape: Reshape;
  maxUnavailable: number;
  /** claimstep holds the partition for the re-create (`claimstep.io/user-partition` recorded, no pod coordination). */
  holding: boolean;
  /** Restart pods (the set asks to be re-created, RollingUpdate); else only the claims are labelled. */
  restarts: boolean;
  lastEviction: LastEviction | undefined;
  nowMs: number;
  /** R3: how long a refused eviction charges the budget (core/pod-policy.ts budgetCharged). */
  budgetChargeSeconds: number;
}

const isReady = (pod: Pod | undefined): boolean =>
  !!pod &&
  !pod.metadata.deletionTimestamp &&
  (pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");

/** A pod whose volumes are not the set's: a template's claim missing, or a removed template's claim still there. */
export function podMismatch(
  set: StatefulSet,
  pod: Pod,
  ordinal: number,
  orphaned: readonly string[],
): { lacks: string[]; keeps: string[] } | undefined {
  const claims = podClaims(pod);
  const lacks = (set.spec.volumeClaimTemplates ?? [])
    .map((t) => t.metadata.name)
    .filter((t) => claims.get(t) !== claimName(t, set.metadata.name, ordinal));
  const keeps = [...claims.values()].filter((c) => templateOfClaim(c, set.metadata.name, orphaned) !== undefined);
  return lacks.length || keeps.length ? { lacks, keeps } : undefined;
}

/**
 * The one step after a re-create that changed the set's shape, or undefined when there is none:
 * label (or unlabel) one claim, wait for a pod, evict the lowest pod whose volumes are not the set's.
 */
export function shapeStep(c: ShapeContext): WalkConclusion | undefined {
  const { set, reshape } = c;
  const setName = set.metadata.name;
  const namespace = set.metadata.namespace ?? "default";
  const liveNames = (set.spec.volumeClaimTemplates ?? []).map((t) => t.metadata.name);

  // The claims of a removed template are kept and labelled; a template that came back reuses its own.
  for (const claim of c.claims) {
    if (claim.metadata.deletionTimestamp) continue;
    const label = claim.metadata.labels?.[Keys.orphanedFrom];
    const orphan = templateOfClaim(claim.metadata.name, setName, reshape.orphaned) !== undefined;
    const reused = label === setName && templateOfClaim(claim.metadata.name, setName, liveNames) !== undefined;
    if ((orphan && label !== setName) || reused) {
      const action: LabelClaim = {
        type: "LabelClaim",
        namespace,
        set: setName,
        claim: claim.metadata.name,
        orphanedFrom: reused ? null : setName,
        ...(claim.metadata.uid ? { uid: claim.metadata.uid } : {}),
        ...(claim.metadata.resourceVersion ? { resourceVersion: claim.metadata.resourceVersion } : {}),
      };
      const message = reused
        ? Messages.claimReused(claim.metadata.name, setName)
        : Messages.claimOrphaned(claim.metadata.name, setName, namespace);
      const reason = reused ? "ClaimReused" : "ClaimOrphaned";
      return { reason, message, action, events: [eventOf(reason, message)] };
    }
  }

  if (!c.restarts) return undefined;
  // The pods, lowest ordinal first: the order the StatefulSet controller processes them in.
  const start = set.spec.ordinals?.start ?? 0;
  const end = start + (set.spec.replicas ?? 1);
  const pods = new Map(c.pods.map((p) => [p.metadata.name, p]));
  const down: string[] = [];
  let target: { ordinal: number; pod: Pod; lacks: string[]; keeps: string[] } | undefined;
  for (let o = start; o < end; o++) {
    const pod = pods.get(podName(setName, o));
    if (!isReady(pod)) down.push(podName(setName, o));
    if (!pod || pod.metadata.deletionTimestamp || target) continue;
    const mismatch = podMismatch(set, pod, o, reshape.orphaned);
    if (mismatch) target = { ordinal: o, pod, ...mismatch };
  }
  if (!target) {
    // Every pod has the set's volumes; while claimstep still holds the partition, the restarted
    // pods come back before it is handed back.
    if (c.holding && down.length) return { reason: "PodUpdating", message: Messages.shapeWaitsForPods(setName, down) };
    return undefined;
  }
  const name = target.pod.metadata.name;
  // Its new claims first: the controller creates them when it reaches the pod; an Immediate class
  // binds them before the pod, so a claim that does not bind is seen before the pod is restarted.
  const claimsByName = new Map(c.claims.map((x) => [x.metadata.name, x]));
  for (const t of target.lacks) {
    const cn = claimName(t, setName, target.ordinal);
    const claim = claimsByName.get(cn);
    if (!claim || claim.metadata.deletionTimestamp)
      return { reason: "ClaimMissing", ordinal: target.ordinal, message: Messages.shapeClaimMissing(cn, name) };
    const cls = claim.spec.storageClassName ?? undefined;
    const binding = cls === undefined ? undefined : c.classes.get(cls)?.volumeBindingMode;
    if (claim.status?.phase !== "Bound" && binding !== "WaitForFirstConsumer")
      return {
        reason: "ClaimNotBound",
        ordinal: target.ordinal,
        message: Messages.shapeClaimNotBound(cn, name, cls),
        events: [eventOf("ClaimNotBound", Messages.shapeClaimNotBound(cn, name, cls))],
      };
  }
  // At most maxUnavailable pods down, this one included.
  const others = down.filter((p) => p !== name);
  if (others.length + 1 > c.maxUnavailable)
    return {
      reason: "PodUpdating",
      ordinal: target.ordinal,
      message: Messages.shapeRestartWaits(name, others, c.maxUnavailable),
    };
  // R3: do not ask again while a refused eviction charges the budget.
  const charged = budgetCharged(c.lastEviction, pods, c.nowMs, c.budgetChargeSeconds);
  if (charged) return { ...charged, ordinal: target.ordinal };
  const claim = target.lacks.length
    ? claimName(target.lacks[0]!, setName, target.ordinal)
    : (target.keeps[0] ?? claimName(liveNames[0] ?? "", setName, target.ordinal));
  const action: EvictPod = {
    type: "EvictPod",
    namespace,
    pod: name,
    uid: target.pod.metadata.uid ?? "",
    ordinal: target.ordinal,
    claim,
  };
  const message = Messages.shapeRestart(
    name,
    target.lacks.map((t) => claimName(t, setName, target.ordinal)),
    target.keeps,
  );
  return { reason: "PodEvicted", ordinal: target.ordinal, message, action, events: [eventOf("PodEvicted", message)] };
}

/** Before the re-create: the partition at `replicas`, so the controller replaces no pod on its own. */
export function holdForShape(set: StatefulSet, holding: boolean, livePartition: number): WalkConclusion | undefined {
  const replicas = set.spec.replicas ?? 1;
  // Recorded even when the partition already holds every pod: the record is what keeps the
  // partition claimstep's until the restarted pods are Ready again.
  if (holding && livePartition >= replicas) return undefined;
  const action = partitionPatch(set, partitionHold(replicas, livePartition, holding));
  const message = Messages.shapePartitionHeld(set.metadata.name, action.partition, livePartition);
  return { reason: "PartitionHeld", message, action, events: [eventOf("PartitionHeld", message)] };
}
