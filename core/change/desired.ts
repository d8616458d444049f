// Editing the desired claim templates of a StatefulSet (the templates route and `claimstep set`):
// read the templates a document carries, merge them into the current desired templates, validate
// the result exactly as the planner will (core/policy/templates.ts), and produce the annotations to
// merge-patch, which also opt the set in.

import { Keys } from "../keys.js";
import { sameDocument } from "../kube/json.js";
import { ClaimTemplate, StatefulSet } from "../kube/k8s.js";
import { revisionOf } from "../kube/revision.js";
import { withoutServerFields } from "../kube/server-fields.js";
import { OPT_IN } from "../kube/statefulset.js";
import {
  heldTemplateBaseOf,
  isOptedIn,
  type PodTemplate,
  podTemplateOf,
  rawAnnotation,
  removeListOf,
} from "../policy/annotations.js";
import { finalizeForOf } from "../policy/records.js";
import { podTemplateDigest } from "../policy/shape.js";
import { desiredTemplates } from "../policy/templates.js";
import type { SetRef } from "../types.js";
import * as z from "../zod.js";

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
  const merged = base.map((t) => withoutServerFields(byName.get(t.metadata.name) ?? t));
  const known = new Set(base.map((t) => t.metadata.name));
  for (const t of posted) {
    if (!known.has(t.metadata.name)) {
      return {
        ok: false,
        message: `StatefulSet ${name} has no claim template "${t.metadata.name}" (it has: ${[...known].join(", ") || "none"}); this updates existing templates: to add one, ${addCommand(set, t.metadata.name)} (a re-create; docs/templates.md)`,
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
  const changed = !isOptedIn(set) || !sameDocument(rawAnnotation(existing, "templates"), merged);
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
      message: `StatefulSet ${set.metadata.namespace ?? "default"}/${set.metadata.name} has no claim template "${claim}" (it has: ${names.join(", ") || "none"}); to add one: ${addCommand(set, claim)}`,
    };
  }
  const spec = { ...template.spec };
  if (edit.storage !== undefined) {
    spec.resources = { ...spec.resources, requests: { ...spec.resources?.requests, storage: edit.storage } };
  }
  if (edit.volumeAttributesClassName !== undefined) spec.volumeAttributesClassName = edit.volumeAttributesClassName;
  return desiredChange(set, [{ ...template, spec }]);
}

// ---------------------------------------------------------------------------------------------
// Adding and removing claim templates (docs/templates.md): both are a re-create of the set.

const setNameOf = (set: StatefulSet) => `${set.metadata.namespace ?? "default"}/${set.metadata.name}`;

const addCommand = (set: StatefulSet, template: string) =>
  `claimstep set ${set.metadata.name} ${template} --add --storage <size>${set.metadata.namespace && set.metadata.namespace !== "default" ? ` -n ${set.metadata.namespace}` : ""}`;

/** A claim template's name is a volume name (a DNS-1123 label) and the start of every claim's name. */
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** The longest DNS-1123 label (a volume name). */
const MAX_LABEL = 63;
/** The longest object name (a claim, `<template>-<set>-<ordinal>`: a DNS-1123 subdomain). */
const MAX_NAME = 253;

/** The pod template the re-create would apply: the one held in `claimstep.io/pod-template`, else the live one. */
function targetPodTemplate(
  set: StatefulSet,
): { ok: true; template: PodTemplate; held: boolean } | { ok: false; message: string } {
  const held = podTemplateOf(set);
  if (!held.ok) return { ok: false, message: `${held.message}; correct or remove it` };
  if (held.value === undefined) {
    // The live one as the API server stored it (unread: the server validated it).
    const live = (set.spec as { template?: PodTemplate }).template ?? ({} as PodTemplate);
    return { ok: true, template: structuredClone(live), held: false };
  }
  return { ok: true, template: held.value, held: true };
}

/** The names in `claimstep.io/remove-claim-templates` (the policy's reading), or why they cannot be read. */
function removedNames(
  set: StatefulSet,
): { ok: true; names: string[]; present: boolean } | { ok: false; message: string } {
  const list = removeListOf(set);
  if (!list.ok) return list;
  return {
    ok: true,
    names: list.value,
    present: rawAnnotation(set.metadata.annotations, "removeTemplates") !== undefined,
  };
}

export interface TemplateAddOptions {
  /** Mount the new volume at this path in the held pod template. */
  mountPath?: string;
  /** The container to mount it in (default: the first). */
  container?: string;
}

/** What adding or removing a template writes: the annotations, and the pod template held, when one is. */
export type TemplateChange =
  | (Extract<DesiredChange, { ok: true }> & {
      /** The pod template the re-create applies (`claimstep.io/pod-template`), when this change holds one. */
      podTemplate?: unknown;
      /** The containers whose mounts this change edits in the held pod template. */
      containers: string[];
    })
  | { ok: false; message: string };

function templateChangeOf(
  set: StatefulSet,
  templates: ClaimTemplate[],
  extra: Record<string, string>,
  held: { template: PodTemplate; containers: string[] } | undefined,
): TemplateChange {
  const annotations: Record<string, string> = {
    [Keys.templates]: JSON.stringify(templates),
    ...OPT_IN,
    [Keys.finalize]: "Recreate",
    ...extra,
    ...(held
      ? {
          [Keys.podTemplate]: JSON.stringify(held.template),
          // Held against the live template as it is now, or as it was when first held.
          [Keys.podTemplateBase]:
            rawAnnotation(set.metadata.annotations, "podTemplate") !== undefined
              ? (heldTemplateBaseOf(set) ?? podTemplateDigest((set.spec as { template?: unknown }).template))
              : podTemplateDigest((set.spec as { template?: unknown }).template),
        }
      : {}),
  };
  const check = desiredTemplates({
    ...set,
    metadata: { ...set.metadata, annotations: { ...set.metadata.annotations, ...annotations } },
  });
  if (!check.ok) return { ok: false, message: check.message };
  // Valid now: the revision the re-create's Recreate is written for.
  delete annotations[Keys.finalize];
  Object.assign(annotations, recreateFor(set, revisionOf(templates)));
  const existing = set.metadata.annotations ?? {};
  const changed = Object.entries(annotations).some(([k, v]) =>
    k === Keys.templates || k === Keys.podTemplate || k === Keys.removeTemplates
      ? !sameDocument(existing[k], JSON.parse(v))
      : existing[k] !== v,
  );
  return {
    ok: true,
    templates,
    revision: revisionOf(templates),
    annotations,
    changed,
    containers: held?.containers ?? [],
    ...(held ? { podTemplate: held.template } : {}),
  };
}

/**
 * The `claimstep.io/finalize: Recreate` a change that needs a re-create writes on the user's
 * behalf, with the revision it is written for (`claimstep.io/finalize-for`): spent once the set
 * was re-created at it (policy.ts finalizeSpent). A Recreate of the user's own (no finalize-for)
 * is left as it is: it stays, for every change.
 */
export function recreateFor(
  set: { metadata: { annotations?: Record<string, string> | undefined } },
  revision: string,
): Record<string, string> {
  if (rawAnnotation(set.metadata.annotations, "finalize") === "Recreate" && finalizeForOf(set) === undefined) return {};
  return { [Keys.finalize]: "Recreate", [Keys.finalizeFor]: revision };
}

/**
 * `claimstep set <set> <template> --add`: the desired templates gain `template`, a removal of the
 * same name pending is called off (its claims are reused), the re-create is asked for
 * (`claimstep.io/finalize: Recreate`) and, with `mountPath`, a pod template that mounts the new
 * volume is held for the re-create (the API server refuses a set that mounts a volume it lacks).
 */
export function templateAdd(set: StatefulSet, template: ClaimTemplate, opts: TemplateAddOptions): TemplateChange {
  const setName = setNameOf(set);
  const name = template.metadata.name;
  if (!DNS1123_LABEL.test(name) || name.length > MAX_LABEL) {
    return {
      ok: false,
      message: `claim template name "${name}" is not a valid volume name: it must be a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit, at most ${MAX_LABEL} characters)`,
    };
  }
  const start = set.spec.ordinals?.start ?? 0;
  const highest = `${name}-${set.metadata.name}-${start + Math.max((set.spec.replicas ?? 1) - 1, 0)}`;
  if (highest.length > MAX_NAME) {
    return {
      ok: false,
      message: `claim template name "${name}" makes claim names such as ${highest} longer than ${MAX_NAME} characters; pick a shorter name`,
    };
  }
  const live = set.spec.volumeClaimTemplates ?? [];
  const current = desiredTemplates(set);
  const base = current.ok ? current.templates : live;
  if (live.some((t) => t.metadata.name === name) || base.some((t) => t.metadata.name === name)) {
    const pending = !live.some((t) => t.metadata.name === name);
    return {
      ok: false,
      message: pending
        ? `StatefulSet ${setName} already has claim template "${name}" (to be added by the re-create); change it with claimstep set ${set.metadata.name} ${name} --storage <size>, or remove it with --remove first`
        : `StatefulSet ${setName} already has claim template "${name}"; change its size with claimstep set ${set.metadata.name} ${name} --storage <size>, or pick another name`,
    };
  }
  const removed = removedNames(set);
  if (!removed.ok) return removed;
  const extra: Record<string, string> = removed.names.includes(name)
    ? { [Keys.removeTemplates]: JSON.stringify(removed.names.filter((n) => n !== name)) }
    : {};
  let held: { template: PodTemplate; containers: string[] } | undefined;
  if (opts.container !== undefined && opts.mountPath === undefined)
    return { ok: false, message: "--container goes with --mount-path: give the path to mount the new volume at" };
  if (opts.mountPath !== undefined) {
    if (!opts.mountPath.startsWith("/"))
      return {
        ok: false,
        message: `--mount-path ${JSON.stringify(opts.mountPath)} must be an absolute path (such as /${name})`,
      };
    const target = targetPodTemplate(set);
    if (!target.ok) return target;
    const pod = target.template;
    const containers = pod.spec?.containers ?? [];
    const container = opts.container === undefined ? containers[0] : containers.find((c) => c.name === opts.container);
    if (!container) {
      return {
        ok: false,
        message: `StatefulSet ${setName} has no container "${opts.container ?? ""}" (it has: ${containers.map((c) => c.name).join(", ") || "none"}); name one with --container`,
      };
    }
    const path = opts.mountPath.replace(/(.)\/+$/, "$1");
    const clash = (container.volumeMounts ?? []).find(
      (m) => String(m.mountPath ?? "").replace(/(.)\/+$/, "$1") === path,
    );
    if (clash) {
      return {
        ok: false,
        message: `StatefulSet ${setName}: container "${container.name}" already mounts volume "${clash.name}" at ${clash.mountPath}; give another --mount-path`,
      };
    }
    if ((pod.spec?.volumes ?? []).some((v) => v.name === name)) {
      return {
        ok: false,
        message: `StatefulSet ${setName}: the pod template already has a volume named "${name}" (the claim template would replace it); pick another name`,
      };
    }
    container.volumeMounts = [...(container.volumeMounts ?? []), { name, mountPath: opts.mountPath }];
    held = { template: pod, containers: [container.name] };
  }
  return templateChangeOf(set, [...base.map(withoutServerFields), withoutServerFields(template)], extra, held);
}

/**
 * `claimstep set <set> <template> --remove`: `template` is listed in
 * `claimstep.io/remove-claim-templates` and dropped from the desired templates, the re-create is
 * asked for and, when the pod template mounts the volume, a pod template without those mounts is
 * held for it. The claims are kept (labelled `claimstep.io/orphaned-from`); removing the last
 * template is allowed (the pods then run without claims of claimstep's). A template the live set
 * lacks but the desired templates add is only dropped from them.
 */
export function templateRemove(set: StatefulSet, name: string): TemplateChange {
  const setName = setNameOf(set);
  const live = set.spec.volumeClaimTemplates ?? [];
  const current = desiredTemplates(set);
  const base = current.ok ? current.templates : live;
  const removed = removedNames(set);
  if (!removed.ok) return removed;
  const inLive = live.some((t) => t.metadata.name === name);
  const inDesired = base.some((t) => t.metadata.name === name);
  if (!inLive && !inDesired) {
    const names = [...new Set([...live, ...base].map((t) => t.metadata.name))];
    return {
      ok: false,
      message: `StatefulSet ${setName} has no claim template "${name}" (it has: ${names.join(", ") || "none"}); nothing to remove`,
    };
  }
  // A live template is listed; a list already there is written again as the policy reads it.
  const extra: Record<string, string> =
    inLive && !removed.names.includes(name)
      ? { [Keys.removeTemplates]: JSON.stringify([...removed.names, name]) }
      : inLive && removed.present
        ? { [Keys.removeTemplates]: JSON.stringify(removed.names) }
        : {};
  const target = targetPodTemplate(set);
  if (!target.ok) return target;
  const pod = target.template;
  const edited: string[] = [];
  for (const key of ["initContainers", "containers"] as const) {
    for (const c of pod.spec?.[key] ?? []) {
      const mounts = c.volumeMounts?.filter((m) => m.name !== name);
      const devices = c.volumeDevices?.filter((m) => m.name !== name);
      if (mounts && mounts.length !== c.volumeMounts!.length) {
        c.volumeMounts = mounts;
        edited.push(c.name);
      }
      if (devices && devices.length !== c.volumeDevices!.length) {
        c.volumeDevices = devices;
        if (!edited.includes(c.name)) edited.push(c.name);
      }
    }
  }
  const held = edited.length || target.held ? { template: pod, containers: edited } : undefined;
  return templateChangeOf(set, base.filter((t) => t.metadata.name !== name).map(withoutServerFields), extra, held);
}
