// Editing the desired claim templates of a StatefulSet (the templates route and `claimstep set`):
// read the templates a document carries, merge them into the current desired templates, validate
// the result exactly as the planner will (core/templates.ts), and produce the annotations to
// merge-patch, which also opt the set in.

import { ClaimTemplate, StatefulSet } from "./k8s.js";
import { Keys } from "./keys.js";
import { revisionOf } from "./revision.js";
import { isOptedIn, OPT_IN } from "./statefulset.js";
import { desiredTemplates } from "./templates.js";
import type { SetRef } from "./types.js";
import * as z from "./zod.js";

export interface Issue {
  path: string;
  message: string;
}

const pathOf = (path: readonly PropertyKey[]): string =>
  path
    .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
    .join("")
    .replace(/^\./, "") || "(body)";

const issuesOf = (error: z.core.$ZodError): Issue[] =>
  error.issues.map((i) => ({ path: pathOf(i.path), message: i.message }));

const StatefulSetManifest = z.extend(StatefulSet, { kind: z.literal("StatefulSet") });

/**
 * The templates a body carries: a JSON/YAML array of claim templates, or a whole StatefulSet
 * manifest (whose name and namespace, when given, must be the set of the URL).
 */
export function templatesFromDocument(
  value: unknown,
  ref: SetRef,
): { ok: true; templates: ClaimTemplate[] } | { ok: false; issues: Issue[] } {
  if (Array.isArray(value)) {
    const parsed = z
      .array(ClaimTemplate)
      .check(z.minLength(1, "at least one claim template is needed"))
      .safeParse(value);
    return parsed.success ? { ok: true, templates: parsed.data } : { ok: false, issues: issuesOf(parsed.error) };
  }
  if (typeof value === "object" && value !== null && "kind" in value) {
    const parsed = StatefulSetManifest.safeParse(value);
    if (!parsed.success) return { ok: false, issues: issuesOf(parsed.error) };
    const set = parsed.data;
    const issues: Issue[] = [];
    if (set.metadata.name !== ref.name) {
      issues.push({
        path: "metadata.name",
        message: `manifest is for StatefulSet "${set.metadata.name}", the URL names "${ref.name}"`,
      });
    }
    if (set.metadata.namespace !== undefined && set.metadata.namespace !== ref.namespace) {
      issues.push({
        path: "metadata.namespace",
        message: `manifest is in namespace "${set.metadata.namespace}", the URL names "${ref.namespace}"`,
      });
    }
    const templates = set.spec.volumeClaimTemplates ?? [];
    if (templates.length === 0)
      issues.push({ path: "spec.volumeClaimTemplates", message: "the manifest has no volumeClaimTemplates" });
    return issues.length ? { ok: false, issues } : { ok: true, templates };
  }
  return {
    ok: false,
    issues: [
      { path: "(body)", message: "expected an array of claim templates or a StatefulSet manifest (kind: StatefulSet)" },
    ],
  };
}

/** A template as written into the annotation: no status, no server-filled metadata. */
/** The template as the annotation holds it: the server's additions (status, creationTimestamp) removed. */
export const cleanTemplate = (t: ClaimTemplate): ClaimTemplate => {
  const { status: _status, ...rest } = t as ClaimTemplate & { status?: unknown };
  const { creationTimestamp: _ts, ...metadata } = rest.metadata as ClaimTemplate["metadata"] & {
    creationTimestamp?: unknown;
  };
  return { ...rest, metadata };
};

/** JSON with object keys sorted, so documents compare by content, not by key order. */
export const stableJSON = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(stableJSON).join(",")}]`
    : v && typeof v === "object"
      ? `{${Object.keys(v)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${stableJSON((v as Record<string, unknown>)[k])}`)
          .join(",")}}`
      : JSON.stringify(v);

const sameDocument = (raw: string | undefined, value: unknown): boolean => {
  if (raw === undefined) return false;
  try {
    return stableJSON(JSON.parse(raw)) === stableJSON(value);
  } catch {
    return false;
  }
};

export type DesiredChange =
  | { ok: true; templates: ClaimTemplate[]; revision: string; annotations: Record<string, string>; changed: boolean }
  | { ok: false; message: string };

/**
 * Merge `posted` into the set's current desired templates (by name; templates not posted keep
 * their current desired value), validate as the planner does, and return the annotations that
 * write them and opt the set in.
 */
export function desiredChange(set: StatefulSet, posted: readonly ClaimTemplate[]): DesiredChange {
  const name = `${set.metadata.namespace ?? "default"}/${set.metadata.name}`;
  const seen = new Set<string>();
  for (const t of posted) {
    if (seen.has(t.metadata.name)) return { ok: false, message: `claim template "${t.metadata.name}" is given twice` };
    seen.add(t.metadata.name);
  }
  const current = desiredTemplates(set);
  // An invalid annotation is replaced as a whole by the live templates plus what is posted.
  const base = current.ok ? current.templates : (set.spec.volumeClaimTemplates ?? []);
  const byName = new Map(posted.map((t) => [t.metadata.name, t]));
  const merged = base.map((t) => cleanTemplate(byName.get(t.metadata.name) ?? t));
  const known = new Set(base.map((t) => t.metadata.name));
  for (const t of posted) {
    if (!known.has(t.metadata.name)) {
      return {
        ok: false,
        message: `StatefulSet ${name} has no claim template "${t.metadata.name}" (it has: ${[...known].join(", ") || "none"}); claimstep updates existing claims, it cannot add a template`,
      };
    }
  }
  const annotations = { [Keys.templates]: JSON.stringify(merged), ...OPT_IN };
  const check = desiredTemplates({
    ...set,
    metadata: { ...set.metadata, annotations: { ...set.metadata.annotations, ...annotations } },
  });
  if (!check.ok) return { ok: false, message: check.message };
  const existing = set.metadata.annotations ?? {};
  const changed = !isOptedIn(set) || !sameDocument(existing[Keys.templates], merged);
  return { ok: true, templates: merged, revision: revisionOf(merged), annotations, changed };
}

export interface ClaimEdit {
  storage?: string;
  volumeAttributesClassName?: string;
}

/** `claimstep set <set> <claim> --storage 20Gi [--vac gold]`: one claim's new desired values. */
export function claimEdit(set: StatefulSet, claim: string, edit: ClaimEdit): DesiredChange {
  if (edit.storage === undefined && edit.volumeAttributesClassName === undefined) {
    return { ok: false, message: "nothing to change: give --storage and/or --vac" };
  }
  const current = desiredTemplates(set);
  const base = current.ok ? current.templates : (set.spec.volumeClaimTemplates ?? []);
  const template = base.find((t) => t.metadata.name === claim);
  if (!template) {
    const names = base.map((t) => t.metadata.name);
    return {
      ok: false,
      message: `StatefulSet ${set.metadata.namespace ?? "default"}/${set.metadata.name} has no claim template "${claim}" (it has: ${names.join(", ") || "none"})`,
    };
  }
  const spec = { ...template.spec };
  if (edit.storage !== undefined) {
    spec.resources = { ...spec.resources, requests: { ...spec.resources?.requests, storage: edit.storage } };
  }
  if (edit.volumeAttributesClassName !== undefined) spec.volumeAttributesClassName = edit.volumeAttributesClassName;
  return desiredChange(set, [{ ...template, spec }]);
}
