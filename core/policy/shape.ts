// The shape a set asks for (docs/design.md "Adding and removing claim templates"): the templates its
// annotations add and remove with the next re-create, the pod template that re-create applies, and
// the templates the re-created set carries. Read from the policy module's parsers
// (core/policy/annotations.ts); the re-create itself (core/plan/finalize.ts) and the steps after it
// (core/plan/reshape.ts) act on it.

import { Keys } from "../keys.js";
import { stableJSON } from "../kube/json.js";
import type { ClaimTemplate, StatefulSet } from "../kube/k8s.js";
import { mountsWithoutVolume } from "../kube/mounts.js";
import { revisionOfCanonical } from "../kube/revision.js";
import { withoutServerFields } from "../kube/server-fields.js";
import { Messages } from "../messages.js";
import {
  heldTemplateBaseOf,
  type PodTemplate,
  PodTemplateSchema,
  podTemplateOf,
  removeListOf,
  TEMPLATE_NAME,
} from "./annotations.js";

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
