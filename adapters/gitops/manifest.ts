// The partial PVC manifest a step writes: only the fields claimstep owns plus the revision label,
// fit for server-side apply by Argo CD (ServerSideApply=true) or Flux. An existing file is edited
// in place with the yaml Document API, so the comments and layout people keep there survive.
import YAML, { type Document } from "yaml";
import { claimApplyBody, compareQuantity } from "../../core/kube/index.js";
import type { PatchClaim } from "../../core/types.js";
import { YAML_LIMITS, yamlOverLimits } from "../yaml-bounds.js";

export class ManifestError extends Error {
  override readonly name = "ManifestError";
}

/** A repository file beyond the YAML bounds (adapters/yaml-bounds.ts): never parsed. */
export class ManifestBoundsError extends ManifestError {}

export interface EditedManifest {
  text: string;
  /** False when the file already carries every field of the action: nothing to commit. */
  changed: boolean;
}

const HEADER =
  " Written by claimstep: a partial PersistentVolumeClaim for server-side apply\n" +
  " (Argo CD ServerSideApply=true, or Flux). Only these fields are claimstep's; the rest of the claim stays as it is.";

/**
 * The fields one action writes, as [path, value] pairs: the leaves of the claim's apply body
 * (core/kube/apply-body.ts), without the resourceVersion precondition, which has no place in Git.
 */
function ownedFields(action: PatchClaim): Array<[string[], string]> {
  const fields: Array<[string[], string]> = [];
  const walk = (value: unknown, path: string[]): void => {
    if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) walk(v, [...path, k]);
    } else if (value !== undefined) {
      fields.push([path, String(value)]);
    }
  };
  walk(claimApplyBody(action, { precondition: false }), []);
  // An empty class name is no class: a manifest does not write one.
  return fields.filter(([path, value]) => !(path.join(".") === "spec.volumeAttributesClassName" && value === ""));
}

// Storage compares as a quantity (20Gi = 21474836480); everything else as text.
function sameValue(path: string[], current: unknown, wanted: string): boolean {
  if (typeof current !== "string" && typeof current !== "number") return false;
  if (path.at(-1) === "storage") {
    try {
      return compareQuantity(String(current), wanted) === 0;
    } catch {
      return false;
    }
  }
  return String(current) === wanted;
}

/**
 * A file claimstep creates also tells the GitOps controllers never to prune the claim: deleting
 * the file later must not delete the volume (claimstep never deletes a PVC, nor lets its files do it).
 */
export const NO_PRUNE: Record<string, string> = {
  "argocd.argoproj.io/sync-options": "Prune=false",
  "kustomize.toolkit.fluxcd.io/prune": "disabled",
};

/** The manifest of a claim written from scratch. */
export function newClaimManifest(action: PatchClaim): string {
  const doc = new YAML.Document({});
  for (const [path, value] of ownedFields(action)) doc.setIn(path, value);
  for (const [k, v] of Object.entries(NO_PRUNE))
    if (!doc.hasIn(["metadata", "annotations", k])) doc.setIn(["metadata", "annotations", k], v);
  doc.commentBefore = HEADER;
  return doc.toString();
}

/**
 * The documents of a file read from the repository, within the same bounds as a YAML body of the
 * HTTP routes (adapters/yaml-bounds.ts), checked before parsing: a huge or deeply nested file is a
 * clear error in microseconds, not seconds of CPU or a stack overflow. Throws ManifestError.
 */
export function parseRepositoryYaml(text: string, path: string): Document[] {
  const over = yamlOverLimits(text, YAML_LIMITS, path);
  if (over) {
    throw new ManifestBoundsError(
      `${over}: claimstep reads a file from the repository within the bounds of its API (${YAML_LIMITS.maxDepth} levels, ${YAML_LIMITS.maxNodes} nodes; a manifest holds a few hundred): split the file or fix it by hand, then step again`,
    );
  }
  const docs = YAML.parseAllDocuments(text);
  if (!Array.isArray(docs)) throw new ManifestError(`${path} is not YAML documents: fix the file by hand`);
  const broken = docs.find((d) => d.errors.length);
  if (broken)
    throw new ManifestError(
      `${path} is not valid YAML (${broken.errors[0]?.message.split("\n")[0]}): fix the file by hand, then step again`,
    );
  // Aliases are not expanded by the lexer's bounds: ten levels of ten aliases are 120 nodes in the
  // file and 10^10 once read. The yaml library refuses those (a ReferenceError) when a document is
  // read as data; every document is read so once here, so the refusal names the file wherever it is.
  for (const doc of docs) {
    try {
      doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      if (!(err instanceof ReferenceError)) throw err;
      throw new ManifestBoundsError(
        `${path} holds YAML aliases that would expand beyond ${MAX_ALIAS_COUNT} nodes (an alias bomb): claimstep reads a file from the repository within the bounds of its API: write the values out or fix the file by hand, then step again`,
      );
    }
  }
  return docs;
}

/** The yaml library's own bound on what aliases may expand to (its default), set here so the message can say it. */
const MAX_ALIAS_COUNT = 100;

const isClaimDoc = (doc: Document, claim: string): boolean =>
  doc.getIn(["kind"]) === "PersistentVolumeClaim" && doc.getIn(["metadata", "name"]) === claim;

/**
 * Apply the action to the text of a manifest file (undefined = no file yet). A file may hold
 * several documents; the one of this claim is edited and the others are kept as they are.
 */
export function editClaimManifest(existing: string | undefined, action: PatchClaim, path: string): EditedManifest {
  if (existing === undefined || existing.trim() === "") return { text: newClaimManifest(action), changed: true };
  const docs = parseRepositoryYaml(existing, path);
  const doc = docs.find((d) => isClaimDoc(d, action.claim));
  if (!doc) {
    throw new ManifestError(
      `${path} holds no PersistentVolumeClaim named ${action.claim}: point pathTemplate at the claim's own file, or remove the file so claimstep writes it`,
    );
  }
  const ns = doc.getIn(["metadata", "namespace"]);
  if (ns !== undefined && ns !== action.namespace) {
    throw new ManifestError(
      `${path} declares ${action.claim} in namespace ${String(ns)}, not ${action.namespace}: fix pathTemplate`,
    );
  }
  let changed = false;
  for (const [fieldPath, value] of ownedFields(action)) {
    if (sameValue(fieldPath, doc.getIn(fieldPath), value)) continue;
    doc.setIn(fieldPath, value);
    changed = true;
  }
  return { text: changed ? docs.map((d) => d.toString()).join("") : existing, changed };
}

/** Whether a file already says what the action says (used to check a merged change is still on the base branch). */
export function carriesAction(existing: string | undefined, action: PatchClaim, path: string): boolean {
  if (existing === undefined) return false;
  try {
    return !editClaimManifest(existing, action, path).changed;
  } catch (err) {
    // A file beyond the bounds is reported, never taken for a file without the change.
    if (err instanceof ManifestError && !(err instanceof ManifestBoundsError)) return false;
    throw err;
  }
}
