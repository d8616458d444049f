// The StatefulSet manifest a re-create proposal edits (finalize in GitOps mode): the document of
// the set in the file of `statefulSetPathTemplate` gets the desired claim templates — only the
// four fields claimstep rolls out (storage, volumeAttributesClassName, labels, annotations) — and
// loses claimstep's desired-templates annotation. Edited in place with the yaml Document API, so
// comments, key order and every other field stay as they are, in a multi-document file too.
//
// Autogrow's proposal (RaiseTemplate in GitOps mode) edits the same document otherwise: only the
// desired-templates annotation (its value raised, its YAML style kept) and the autogrown-from
// record; `spec.volumeClaimTemplates` stays as it is.

import YAML, { type Document, isMap, type Scalar } from "yaml";
import { lastGrownFrom } from "../../core/autogrow.js";
import type { ClaimTemplate, StatefulSet } from "../../core/k8s.js";
import { Keys } from "../../core/keys.js";
import { compareQuantity } from "../../core/quantity.js";
import { revisionOf } from "../../core/revision.js";
import { desiredTemplates } from "../../core/templates.js";
import type { ProposeRecreate, RaiseTemplate } from "../../core/types.js";
import { type EditedManifest, ManifestError, parseRepositoryYaml } from "./manifest.js";

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

/** claimstep's annotations a re-create proposal removes from the set's manifest. */
export const DROPPED_ANNOTATIONS = [Keys.templates, Keys.recreateApproved] as const;

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

function sameStorage(current: unknown, wanted: string): boolean {
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

/** The documents of the file and the one of the set; throws ManifestError saying what to fix. */
function locateSet(
  existing: string | undefined,
  ref: { namespace: string; set: string },
  path: string,
  branch: string,
): { docs: Document[]; doc: Document } {
  const set = `${ref.namespace}/${ref.set}`;
  if (existing === undefined) {
    throw new ManifestError(
      `${path} does not exist on ${branch}: statefulSetPathTemplate must name the file that holds StatefulSet ${set}'s manifest (placeholders {namespace} {statefulset})`,
    );
  }
  const docs = parseRepositoryYaml(existing, path);
  const named = docs.filter((d) => isSetDoc(d, ref.set));
  const doc = named.find((d) => (d.getIn(["metadata", "namespace"]) ?? ref.namespace) === ref.namespace);
  if (!doc) {
    const elsewhere = named.map((d) => String(d.getIn(["metadata", "namespace"])));
    throw new ManifestError(
      elsewhere.length
        ? `${path} declares StatefulSet ${ref.set} in namespace ${elsewhere.join(", ")}, not ${ref.namespace}: fix statefulSetPathTemplate`
        : `${path} holds no StatefulSet named ${ref.set}: point statefulSetPathTemplate at the file of StatefulSet ${set}`,
    );
  }
  return { docs, doc };
}

/** The documents of the file and the one of this set, with its templates by name; throws ManifestError saying what to fix. */
function findSet(
  existing: string | undefined,
  action: ProposeRecreate,
  path: string,
  branch: string,
): { docs: Document[]; doc: Document; templates: Map<string, number> } {
  const set = `${action.namespace}/${action.set}`;
  const { docs, doc } = locateSet(existing, action, path, branch);
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
  const missing = action.templates.map((t) => t.metadata.name).filter((n) => !templates.has(n));
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
      const same =
        JSON.stringify(Object.entries(want ?? {}).sort()) === JSON.stringify(Object.entries(have ?? {}).sort());
      if (same) continue; // an empty map is no map
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
): TemplateChange[] {
  const { doc, templates } = findSet(existing, action, path, branch);
  return templateEdits(doc, action.templates, templates).map(({ edit: _edit, ...change }) => change);
}

/** Whether the set's manifest carries the desired templates (claimstep's annotations aside). Throws ManifestError as the edit does. */
export function carriesTemplates(
  existing: string | undefined,
  action: ProposeRecreate,
  path: string,
  branch: string,
): boolean {
  return templateChanges(existing, action, path, branch).length === 0;
}

/**
 * The file with the set's document carrying the desired templates and without claimstep's
 * desired-templates (and recreate-approved) annotation; unchanged text when it already does.
 */
export function editSetManifest(
  existing: string | undefined,
  action: ProposeRecreate,
  path: string,
  branch: string,
): EditedManifest {
  const { docs, doc, templates } = findSet(existing, action, path, branch);
  let changed = false;
  for (const change of templateEdits(doc, action.templates, templates)) {
    change.edit();
    changed = true;
  }
  for (const key of DROPPED_ANNOTATIONS) {
    if (!doc.hasIn(["metadata", "annotations", key])) continue;
    doc.deleteIn(["metadata", "annotations", key]);
    changed = true;
  }
  const left = doc.getIn(["metadata", "annotations"], true);
  if (changed && isMap(left) && left.items.length === 0) doc.deleteIn(["metadata", "annotations"]);
  return { text: changed ? docs.map((d) => d.toString()).join("") : existing!, changed };
}

// Autogrow (RaiseTemplate in GitOps mode).

/** What the set's manifest in Git says autogrow needs: its desired templates (annotation, else spec), their revision, and the autogrown-from record. */
export interface ManifestDesired {
  templates: ClaimTemplate[];
  revision: string;
  autogrownFrom: string | undefined;
  /** The `claimstep.io/autogrow` policy as written there, if any. */
  policy: string | undefined;
}

/** The desired templates of the set's manifest in the file; throws ManifestError saying what to fix. */
export function manifestDesired(
  existing: string | undefined,
  action: RaiseTemplate,
  path: string,
  branch: string,
): ManifestDesired {
  const { doc } = locateSet(existing, action, path, branch);
  const set = `${action.namespace}/${action.set}`;
  if (!YAML.isSeq(doc.getIn(["spec", "volumeClaimTemplates"], true)))
    throw new ManifestError(
      `StatefulSet ${set} in ${path} has no spec.volumeClaimTemplates list: fix the manifest by hand`,
    );
  const manifest = doc.toJS() as StatefulSet;
  const desired = desiredTemplates(manifest);
  if (!desired.ok)
    throw new ManifestError(
      `StatefulSet ${set} in ${path} on ${branch}: ${desired.message}: fix the manifest by hand, then step again`,
    );
  const text = (key: string): string | undefined => {
    const v: unknown = manifest.metadata.annotations?.[key];
    return v === undefined || v === null ? undefined : String(v);
  };
  return {
    templates: desired.templates,
    revision: revisionOf(desired.templates),
    autogrownFrom: text(Keys.autogrownFrom),
    policy: text(Keys.autogrow),
  };
}

const storageOf = (t: ClaimTemplate | undefined): string | undefined => {
  const s = t?.spec.resources?.requests?.storage;
  return s === undefined ? undefined : String(s);
};

const withStorage = (t: ClaimTemplate, storage: string): ClaimTemplate => ({
  ...t,
  spec: { ...t.spec, resources: { ...t.spec.resources, requests: { ...t.spec.resources?.requests, storage } } },
});

/**
 * The templates a raise writes into a file: the action's, except that a template the file already
 * grew from the same revision (an earlier step's proposal) keeps the larger size — a later step's
 * larger growth replaces it, another template's growth adds to it, a smaller one changes nothing.
 */
export function raisedTemplates(onFile: ManifestDesired | undefined, action: RaiseTemplate): ClaimTemplate[] {
  if (!onFile || lastGrownFrom(onFile.autogrownFrom) !== action.fromRevision) return action.templates;
  return action.templates.map((t) => {
    const there = storageOf(onFile.templates.find((f) => f.metadata.name === t.metadata.name));
    const mine = storageOf(t);
    if (there === undefined || mine === undefined) return t;
    try {
      return compareQuantity(there, mine) > 0 ? withStorage(t, there) : t;
    } catch {
      return t;
    }
  });
}

/** The desired templates before the raise: the action's, its template at `from`. */
export const templatesBefore = (action: RaiseTemplate): ClaimTemplate[] =>
  action.templates.map((t) => (t.metadata.name === action.template ? withStorage(t, action.from) : t));

/** One template a raise grows: `data 10Gi → 13Gi`. */
export interface Growth {
  template: string;
  from: string;
  to: string;
}

/** The templates whose storage `after` raises over `before`. */
export function growths(before: readonly ClaimTemplate[], after: readonly ClaimTemplate[]): Growth[] {
  const out: Growth[] = [];
  for (const t of after) {
    const from = storageOf(before.find((b) => b.metadata.name === t.metadata.name));
    const to = storageOf(t);
    if (from !== undefined && to !== undefined && !sameStorage(from, to))
      out.push({ template: t.metadata.name, from, to });
  }
  return out;
}

/**
 * Whether the set's manifest carries the growth from this revision: its desired templates are the
 * raised ones, or it records a growth from `fromRevision` (its templates moved on from it) — one
 * growth per revision, as the planner counts them.
 */
export function carriesRaise(onFile: ManifestDesired, action: RaiseTemplate): boolean {
  return (
    onFile.revision === action.toRevision ||
    (lastGrownFrom(onFile.autogrownFrom) === action.fromRevision && onFile.revision !== action.fromRevision)
  );
}

/** Set one annotation of the document, keeping its YAML style (block `|`, quotes) and comments. Whether it changed. */
function setAnnotation(doc: Document, key: string, value: string): boolean {
  const path = ["metadata", "annotations", key];
  const node = doc.getIn(path, true);
  if (YAML.isScalar(node)) {
    const current = node.value === null || node.value === undefined ? "" : String(node.value);
    const block = node.type === "BLOCK_LITERAL" || node.type === "BLOCK_FOLDED";
    // A block scalar's value ends with its line break (`|`); keep that chomping.
    const want = block && current.endsWith("\n") ? `${value}\n` : value;
    if (current === want) return false;
    node.value = want;
    return true;
  }
  if (!isMap(doc.getIn(["metadata", "annotations"], true))) doc.setIn(["metadata", "annotations"], doc.createNode({}));
  const scalar = doc.createNode(value) as Scalar;
  if (/^[[{]/.test(value)) scalar.type = "QUOTE_SINGLE"; // JSON, as the guide writes it
  doc.setIn(path, scalar);
  return true;
}

/**
 * The file with the set's document carrying `templates` in the desired-templates annotation (as
 * `JSON.stringify` writes them) and the autogrown-from record; unchanged text when it already does.
 */
export function editRaiseManifest(
  existing: string | undefined,
  action: RaiseTemplate,
  templates: readonly ClaimTemplate[],
  path: string,
  branch: string,
): EditedManifest {
  const { docs, doc } = locateSet(existing, action, path, branch);
  const json = JSON.stringify(templates);
  const changedTemplates = setAnnotation(doc, Keys.templates, json);
  const changedFrom = setAnnotation(doc, Keys.autogrownFrom, action.autogrownFrom);
  const changed = changedTemplates || changedFrom;
  // No folding: the JSON stays on one line, as a person (or `claimstep set`) writes it.
  return { text: changed ? docs.map((d) => d.toString({ lineWidth: 0 })).join("") : existing!, changed };
}
