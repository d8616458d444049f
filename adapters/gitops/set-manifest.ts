// The StatefulSet manifest a re-create proposal edits (finalize in GitOps mode): the document of
// the set in the file of `statefulSetPathTemplate` gets the desired claim templates — only the
// four fields claimstep rolls out (storage, volumeAttributesClassName, labels, annotations) — and
// loses claimstep's desired-templates annotation. Edited in place with the yaml Document API, so
// comments, key order and every other field stay as they are, in a multi-document file too.
// Adding or removing a template (issue 27): a desired template Git lacks is appended whole (without
// what the server adds: status, creationTimestamp), a template of `removed` is taken out, and the
// held pod template (`claimstep.io/pod-template`) replaces spec.template node by node — a field
// that stays keeps its node and comments, a field the server defaults is not written where Git
// leaves it unset; the result must not mount a volume it lacks (the API server refuses that set).
//
// Autogrow's proposal edits the same document otherwise: raise-manifest.ts. Replacing spec.template
// node by node: yaml-reconcile.ts.

import YAML, { type Document, isMap } from "yaml";
import { Keys } from "../../core/keys.js";
import type { ClaimTemplate, StatefulSet } from "../../core/kube/index.js";
import { compareQuantity, mountsWithoutVolume, sameJson, withoutServerFields } from "../../core/kube/index.js";
import { PodTemplateSchema } from "../../core/policy/index.js";
import type { ProposeRecreate } from "../../core/types.js";
import { YAML_LIMITS } from "../yaml-bounds.js";
import { type EditedManifest, ManifestError, parseRepositoryYaml } from "./manifest.js";
import { isPlain, type Json, reconcile } from "./yaml-reconcile.js";

/** The fields of a claim template a re-create proposal writes. */
export const TEMPLATE_FIELDS = ["storage", "volumeAttributesClassName", "labels", "annotations"] as const;
export type TemplateField = (typeof TEMPLATE_FIELDS)[number];

/** One field of one template that Git holds otherwise than desired (values as shown: `–` = unset). */
export interface TemplateChange {
  template: string;
  field: TemplateField;
  before: string;
  after: string;
}

/** A template the proposal appends to the manifest, and what it asks for (`storage 1Gi, storageClassName fast, …`). */
interface AddedTemplate {
  template: string;
  summary: string;
}

/** Everything a re-create proposal changes in the set's manifest (claimstep's annotations aside). */
export interface ManifestChanges {
  /** Fields of templates Git already has. */
  fields: TemplateChange[];
  /** Desired templates Git lacks, appended. */
  added: AddedTemplate[];
  /** Templates of `removed` that Git has, taken out. */
  removed: string[];
  /** Where spec.template changes to become the held pod template, e.g. `spec.containers[app].volumeMounts[logs]`. */
  podTemplate: string[];
}

/**
 * claimstep's annotations a re-create proposal removes from the set's manifest. The remove list
 * (`claimstep.io/remove-claim-templates`) stays where Git has it — the record of what was removed,
 * as on the re-created set — and is never added.
 */
export const DROPPED_ANNOTATIONS = [
  Keys.templates,
  Keys.recreateApproved,
  Keys.podTemplate,
  Keys.podTemplateBase,
] as const;

type Path = Array<string | number>;
type StringMap = Record<string, string>;

const UNSET = "–";
const showMap = (m: StringMap | undefined): string =>
  m && Object.keys(m).length
    ? Object.entries(m)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")
    : UNSET;

const nonEmpty = (m: StringMap | undefined): StringMap | undefined => (m && Object.keys(m).length ? m : undefined);

export function sameStorage(current: unknown, wanted: string): boolean {
  if (typeof current !== "string" && typeof current !== "number") return false;
  try {
    return compareQuantity(String(current), wanted) === 0;
  } catch {
    return false;
  }
}

/** A string map as the document holds it (non-string values shown as text), or undefined. */
function mapAt(doc: Document, path: Path): StringMap | undefined {
  const node = doc.getIn(path, true);
  if (!isMap(node)) return undefined;
  const out: StringMap = {};
  for (const pair of node.items) {
    const key = YAML.isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    const value = YAML.isScalar(pair.value) ? pair.value.value : pair.value;
    out[key] = value === null || value === undefined ? "" : String(value);
  }
  return out;
}

const isSetDoc = (doc: Document, name: string): boolean =>
  doc.getIn(["kind"]) === "StatefulSet" && doc.getIn(["metadata", "name"]) === name;

/** `statefulSetDefaultNamespace`'s placeholder: the namespace the file was chosen for (statefulSetPathTemplate's `{namespace}`). */
export const DEFAULT_NAMESPACE_OF_PATH = "{namespace}";

const list = (numbers: number[]): string =>
  numbers.length > 1 ? `${numbers.slice(0, -1).join(", ")} and ${numbers.at(-1)}` : String(numbers[0]);

/**
 * The documents of the file and the one of the set; throws ManifestError saying what to fix.
 * A document is the set's when its kind, name and namespace match. A document without a namespace
 * is in `defaultNamespace` (statefulSetDefaultNamespace; `{namespace}`: the set's) when it is
 * configured; when it is not, such a document is the set's only if no document of the file names
 * the set's namespace. Two candidates are refused, nothing written.
 */
export function locateSet(
  existing: string | undefined,
  ref: { namespace: string; set: string },
  path: string,
  branch: string,
  defaultNamespace?: string,
): { docs: Document[]; doc: Document } {
  const set = `${ref.namespace}/${ref.set}`;
  if (existing === undefined) {
    throw new ManifestError(
      `${path} does not exist on ${branch}: statefulSetPathTemplate must name the file that holds StatefulSet ${set}'s manifest (placeholders {namespace} {statefulset})`,
    );
  }
  const docs = parseRepositoryYaml(existing, path);
  const fallback = defaultNamespace === DEFAULT_NAMESPACE_OF_PATH ? ref.namespace : defaultNamespace;
  const named = docs.flatMap((doc, i) => {
    if (!isSetDoc(doc, ref.set)) return [];
    const own = doc.getIn(["metadata", "namespace"]);
    const explicit = own === undefined || own === null || own === "" ? undefined : String(own);
    return [{ doc, number: i + 1, explicit, namespace: explicit ?? fallback }];
  });
  const exact = named.filter((d) => d.namespace === ref.namespace);
  const candidates = exact.length || fallback !== undefined ? exact : named.filter((d) => d.namespace === undefined);
  if (candidates.length > 1) {
    const bare = candidates.filter((d) => d.explicit === undefined).length;
    const which =
      bare === 0
        ? `both in namespace ${ref.namespace}`
        : fallback === undefined
          ? "without a namespace"
          : `${bare === 1 ? "one" : bare} without a namespace, which statefulSetDefaultNamespace puts in ${fallback}`;
    const fixes = [
      "give each its metadata.namespace",
      ...(bare && fallback === undefined ? ["set statefulSetDefaultNamespace"] : []),
      `keep one StatefulSet ${ref.set} per file`,
    ];
    throw new ManifestError(
      `${path} on ${branch} holds ${candidates.length} StatefulSet documents that may be ${set} (documents ${list(candidates.map((d) => d.number))}, ${which}): refused, nothing written: ${fixes.slice(0, -1).join(", ")}, or ${fixes.at(-1)}`,
    );
  }
  const found = candidates[0];
  if (!found) {
    const elsewhere = [...new Set(named.map((d) => String(d.namespace)))];
    const defaulted = named.some((d) => d.explicit === undefined);
    throw new ManifestError(
      !elsewhere.length
        ? `${path} holds no StatefulSet named ${ref.set}: point statefulSetPathTemplate at the file of StatefulSet ${set}`
        : defaulted
          ? `${path} declares StatefulSet ${ref.set} in namespace ${elsewhere.join(", ")} (statefulSetDefaultNamespace, for a document without one), not ${ref.namespace}: fix statefulSetPathTemplate, or give the document metadata.namespace: ${ref.namespace}`
          : `${path} declares StatefulSet ${ref.set} in namespace ${elsewhere.join(", ")}, not ${ref.namespace}: fix statefulSetPathTemplate`,
    );
  }
  return { docs, doc: found.doc };
}

/** The documents of the file and the one of this set, with its templates by name; throws ManifestError saying what to fix. */
function findSet(
  existing: string | undefined,
  action: ProposeRecreate,
  path: string,
  branch: string,
  defaultNamespace?: string,
): { docs: Document[]; doc: Document; templates: Map<string, number> } {
  const set = `${action.namespace}/${action.set}`;
  const { docs, doc } = locateSet(existing, action, path, branch, defaultNamespace);
  const seq = doc.getIn(["spec", "volumeClaimTemplates"], true);
  if (!YAML.isSeq(seq))
    throw new ManifestError(
      `StatefulSet ${set} in ${path} has no spec.volumeClaimTemplates list: fix the manifest by hand`,
    );
  const templates = new Map<string, number>();
  seq.items.forEach((item, i) => {
    const name = isMap(item) ? item.getIn(["metadata", "name"]) : undefined;
    if (typeof name === "string") templates.set(name, i);
  });
  const both = (action.removed ?? []).filter((n) => action.templates.some((t) => t.metadata.name === n));
  if (both.length) {
    throw new ManifestError(
      `StatefulSet ${set}: template ${both.join(", ")} is both desired and to be removed (${Keys.removeTemplates}): keep it in one of the two, then step again`,
    );
  }
  // A desired template Git lacks is appended when it is whole (an added template); a partial one
  // (only the fields claimstep rolls out) names a template the live set has and Git lost.
  const missing = action.templates
    .filter((t) => !templates.has(t.metadata.name) && !isWhole(t))
    .map((t) => t.metadata.name);
  if (missing.length) {
    throw new ManifestError(
      `StatefulSet ${set} in ${path} has no volumeClaimTemplate named ${missing.join(", ")}: add ${missing.length > 1 ? "them" : "it"} to the manifest as the live set has ${missing.length > 1 ? "them" : "it"}, then step again (claimstep changes only ${TEMPLATE_FIELDS.join(", ")} of existing templates)`,
    );
  }
  return { docs, doc, templates };
}

/**
 * What differs between the templates in the document and the desired ones, each as a change to
 * make: `edit` runs it on the document. Templates in Git that are not desired are left alone.
 */
function templateEdits(
  doc: Document,
  desired: readonly ClaimTemplate[],
  templates: Map<string, number>,
): Array<TemplateChange & { edit: () => void }> {
  const out: Array<TemplateChange & { edit: () => void }> = [];
  for (const d of desired) {
    const name = d.metadata.name;
    if (!templates.has(name)) continue; // appended whole (an added template)
    const at = (...rest: string[]): Path => ["spec", "volumeClaimTemplates", templates.get(name)!, ...rest];

    const storage = d.spec.resources?.requests?.storage;
    const currentStorage = doc.getIn(at("spec", "resources", "requests", "storage"));
    if (storage !== undefined && !sameStorage(currentStorage, String(storage))) {
      out.push({
        template: name,
        field: "storage",
        before: currentStorage === undefined ? UNSET : String(currentStorage),
        after: String(storage),
        edit: () => doc.setIn(at("spec", "resources", "requests", "storage"), String(storage)),
      });
    }

    const vac = d.spec.volumeAttributesClassName || undefined;
    const vacPath = at("spec", "volumeAttributesClassName");
    const currentVac = doc.getIn(vacPath);
    const currentVacText =
      currentVac === undefined || currentVac === null || currentVac === "" ? undefined : String(currentVac);
    if (vac !== currentVacText || (vac === undefined && doc.hasIn(vacPath))) {
      out.push({
        template: name,
        field: "volumeAttributesClassName",
        before: currentVacText ?? UNSET,
        after: vac ?? UNSET,
        edit: () => (vac === undefined ? doc.deleteIn(vacPath) : doc.setIn(vacPath, vac)),
      });
    }

    for (const field of ["labels", "annotations"] as const) {
      const path = at("metadata", field);
      const want = nonEmpty(d.metadata[field]);
      const have = mapAt(doc, path);
      if (sameJson(want ?? {}, have ?? {})) continue; // an empty map is no map
      out.push({
        template: name,
        field,
        before: showMap(have),
        after: showMap(want),
        edit: () => {
          if (want === undefined) return void doc.deleteIn(path);
          // Key by key, so the comments of the entries that stay are kept.
          if (!isMap(doc.getIn(path, true))) doc.setIn(path, doc.createNode({}));
          for (const k of Object.keys(have ?? {})) if (!(k in want)) doc.deleteIn([...path, k]);
          for (const [k, v] of Object.entries(want)) if (have?.[k] !== v) doc.setIn([...path, k], v);
        },
      });
    }
  }
  return out;
}

/** The fields of the templates that the file on `branch` holds otherwise than the proposal wants. */
export function templateChanges(
  existing: string | undefined,
  action: ProposeRecreate,
  path: string,
  branch: string,
  defaultNamespace?: string,
): TemplateChange[] {
  return proposedManifest(existing, action, path, branch, defaultNamespace).changes.fields;
}

/** Everything the proposal changes in the file on `branch`: fields, added and removed templates, the pod template. */
export function manifestChanges(
  existing: string | undefined,
  action: ProposeRecreate,
  path: string,
  branch: string,
  defaultNamespace?: string,
): ManifestChanges {
  return proposedManifest(existing, action, path, branch, defaultNamespace).changes;
}

/**
 * Whether the set's manifest carries the proposal (claimstep's annotations aside): the desired
 * templates, none of the removed ones, the held pod template. Throws ManifestError as the edit does.
 */
export function carriesTemplates(
  existing: string | undefined,
  action: ProposeRecreate,
  path: string,
  branch: string,
  defaultNamespace?: string,
): boolean {
  const { fields, added, removed, podTemplate } = proposedManifest(
    existing,
    action,
    path,
    branch,
    defaultNamespace,
  ).changes;
  return fields.length + added.length + removed.length + podTemplate.length === 0;
}

/**
 * The file with the set's document carrying the proposal — the desired templates (added ones
 * appended), without the removed ones, spec.template as held — and without claimstep's
 * desired-templates, pod-template (and recreate-approved) annotations; unchanged text when it
 * already does.
 */
export function editSetManifest(
  existing: string | undefined,
  action: ProposeRecreate,
  path: string,
  branch: string,
  defaultNamespace?: string,
): EditedManifest {
  const { docs, doc, changes } = proposedManifest(existing, action, path, branch, defaultNamespace);
  let changed = changes.fields.length + changes.added.length + changes.removed.length + changes.podTemplate.length > 0;
  for (const key of DROPPED_ANNOTATIONS) {
    if (!doc.hasIn(["metadata", "annotations", key])) continue;
    doc.deleteIn(["metadata", "annotations", key]);
    changed = true;
  }
  const left = doc.getIn(["metadata", "annotations"], true);
  if (changed && isMap(left) && left.items.length === 0) doc.deleteIn(["metadata", "annotations"]);
  return { text: changed ? docs.map((d) => d.toString()).join("") : existing!, changed };
}

/**
 * The file parsed, the set's document edited to carry the proposal (its annotations aside), and
 * what changed. Throws ManifestError saying what to fix — also when the edited pod template would
 * mount a volume the set lacks.
 */
function proposedManifest(
  existing: string | undefined,
  action: ProposeRecreate,
  path: string,
  branch: string,
  defaultNamespace?: string,
): { docs: Document[]; doc: Document; changes: ManifestChanges } {
  const set = `${action.namespace}/${action.set}`;
  const held = action.podTemplate === undefined ? undefined : heldPodTemplate(action.podTemplate, set);
  const { docs, doc, templates } = findSet(existing, action, path, branch, defaultNamespace);
  const changes: ManifestChanges = { fields: [], added: [], removed: [], podTemplate: [] };

  for (const { edit, ...change } of templateEdits(doc, action.templates, templates)) {
    edit();
    changes.fields.push(change);
  }
  const seq = doc.getIn(["spec", "volumeClaimTemplates"], true) as YAML.YAMLSeq;
  const removed = new Set(action.removed ?? []);
  if (removed.size) {
    seq.items = seq.items.filter((item) => {
      const name = isMap(item) ? item.getIn(["metadata", "name"]) : undefined;
      if (typeof name !== "string" || !removed.has(name)) return true;
      changes.removed.push(name);
      return false;
    });
  }
  for (const t of action.templates) {
    if (templates.has(t.metadata.name)) continue;
    seq.items.push(doc.createNode(withoutServerFields(t)));
    changes.added.push({ template: t.metadata.name, summary: templateSummary(t) });
  }
  if (held !== undefined) {
    if (!isMap(doc.getIn(["spec", "template"], true))) doc.setIn(["spec", "template"], doc.createNode({}));
    reconcile(doc, doc.getIn(["spec", "template"], true), held, "", changes.podTemplate);
  }
  if (held !== undefined || removed.size || changes.added.length) {
    const lacking = unmountable(doc.toJS() as StatefulSet);
    if (lacking.length) {
      const many = lacking.length > 1;
      throw new ManifestError(
        `StatefulSet ${set} in ${path}: after this change its pod template (spec.template) would mount volume${many ? "s" : ""} ${lacking.join(", ")}, which neither spec.template.spec.volumes nor spec.volumeClaimTemplates has, and the API server refuses such a set (volumeMounts name: Not found): remove the mount${many ? "s" : ""} from the pod template in ${path} (or hold a pod template without ${many ? "them" : "it"} in ${Keys.podTemplate}), or keep the claim template, then step again`,
      );
    }
  }
  return { docs, doc, changes };
}

// Adding a template, and the held pod template.

/** A template to add is whole: access modes and a size (a partial one only says the fields claimstep rolls out). */
const isWhole = (t: ClaimTemplate): boolean =>
  Array.isArray(t.spec?.accessModes) && t.spec.accessModes.length > 0 && storageOf(t) !== undefined;

/** `storage 1Gi, storageClassName fast, accessModes ReadWriteOnce`. */
function templateSummary(t: ClaimTemplate): string {
  const parts = [`storage ${storageOf(t) ?? UNSET}`];
  if (t.spec.storageClassName) parts.push(`storageClassName ${t.spec.storageClassName}`);
  if (t.spec.volumeAttributesClassName) parts.push(`volumeAttributesClassName ${t.spec.volumeAttributesClassName}`);
  parts.push(`accessModes ${(t.spec.accessModes ?? []).join(", ")}`);
  return parts.join(", ");
}

/**
 * The held pod template, checked: a pod template as the planner reads one (core/policy/annotations.ts
 * PodTemplateSchema: a spec with named containers), nested no deeper than a YAML file may be.
 */
function heldPodTemplate(value: unknown, set: string): Json {
  if (!isPlain(value) || !PodTemplateSchema.safeParse(value).success) {
    throw new ManifestError(
      `StatefulSet ${set}: the held pod template (${Keys.podTemplate}) is not an object with a spec: set it to the JSON of a spec.template, or remove it, then step again`,
    );
  }
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > YAML_LIMITS.maxDepth) {
      throw new ManifestError(
        `StatefulSet ${set}: the held pod template (${Keys.podTemplate}) nests deeper than ${YAML_LIMITS.maxDepth} levels: set it to the JSON of a spec.template, or remove it, then step again`,
      );
    }
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return value;
}

/** The volumes the set's pod template mounts that neither its volumes nor its claim templates provide (core/kube/mounts.ts). */
function unmountable(set: StatefulSet): string[] {
  const templates = (Array.isArray(set.spec?.volumeClaimTemplates) ? set.spec.volumeClaimTemplates : []) as unknown[];
  const names = templates.flatMap((t) =>
    isPlain(t) && isPlain(t.metadata) && typeof t.metadata.name === "string" ? [t.metadata.name] : [],
  );
  return [...new Set(mountsWithoutVolume(set.spec?.template, names).map((m) => m.volume))];
}

/** A template's storage request as text, if it has one. */
export const storageOf = (t: ClaimTemplate | undefined): string | undefined => {
  const s = t?.spec.resources?.requests?.storage;
  return s === undefined ? undefined : String(s);
};
