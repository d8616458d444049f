// Autogrow's proposal (RaiseTemplate in GitOps mode): the set's document in Git (found as a
// re-create proposal finds it: set-manifest.ts locateSet) gets only the desired-templates
// annotation, its value raised and its YAML style kept, and the autogrown-from record;
// `spec.volumeClaimTemplates` stays as it is. What the file already says is read first, so that
// growths from one revision add up instead of undoing each other.

import YAML, { type Document, isMap, type Scalar } from "yaml";
import { Keys } from "../../core/keys.js";
import type { ClaimTemplate, StatefulSet } from "../../core/kube/index.js";
import { compareQuantity, revisionOf } from "../../core/kube/index.js";
import { lastGrownFrom } from "../../core/plan/index.js";
import { desiredTemplates } from "../../core/policy/index.js";
import type { RaiseTemplate } from "../../core/types.js";
import { type EditedManifest, ManifestError } from "./manifest.js";
import { locateSet, sameStorage, storageOf } from "./set-manifest.js";

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
  defaultNamespace?: string,
): ManifestDesired {
  const { doc } = locateSet(existing, action, path, branch, defaultNamespace);
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
  defaultNamespace?: string,
): EditedManifest {
  const { docs, doc } = locateSet(existing, action, path, branch, defaultNamespace);
  const json = JSON.stringify(templates);
  const changedTemplates = setAnnotation(doc, Keys.templates, json);
  const changedFrom = setAnnotation(doc, Keys.autogrownFrom, action.autogrownFrom);
  const changed = changedTemplates || changedFrom;
  // No folding: the JSON stays on one line, as a person (or `claimstep set`) writes it.
  return { text: changed ? docs.map((d) => d.toString({ lineWidth: 0 })).join("") : existing!, changed };
}
