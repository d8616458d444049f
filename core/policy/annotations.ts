// The user's claimstep.io/* annotations on a set, one parser each: what a set asks of claimstep
// (opt-in, the desired templates, the shape, apply-via, the pod extensions, finalize, autogrow).
// core/policy/policy.ts policyOf composes them into the SetPolicy; core/policy/records.ts reads back what
// claimstep writes. Issue 38 point 1: these three files are the policy module, the only readers of
// a claimstep.io/* annotation (test/core/policy/annotation-readers.test.ts). Each refusal names the set,
// the annotation, the value and the fix.

import { Keys } from "../keys.js";
import { ClaimTemplate, type StatefulSet } from "../kube/k8s.js";
import { parseQuantity } from "../kube/quantity.js";
import { Messages } from "../messages.js";
import * as z from "../zod.js";

/** What the parsers read of a set (the webhook's old object has an optional name). */
type Annotated = { metadata: { name?: string; namespace?: string; annotations?: Record<string, string> } };

const ref = (set: Annotated) => `StatefulSet ${set.metadata.namespace ?? "default"}/${set.metadata.name}`;

/**
 * An annotation's text as written (undefined when absent), for a message or a dry run that quotes
 * it, or a memo keyed by it; never to act on (the parsers below do that).
 */
export const rawAnnotation = (
  annotations: Readonly<Record<string, string | null | undefined>> | undefined,
  key: keyof typeof Keys,
): string | undefined => annotations?.[Keys[key]] ?? undefined;

// Rule 1: the opt-in.

/** Whether the set opted in (`claimstep.io/volume-claim-update-strategy: InPlace`). */
export const isOptedIn = (set: Annotated): boolean => set.metadata.annotations?.[Keys.strategy] === "InPlace";

/** The strategy annotation: absent or OnClaimDelete (the KEP's default) leave the set alone. */
export type Strategy =
  | { kind: "InPlace" }
  | { kind: "OnClaimDelete"; value: string | undefined }
  | { kind: "invalid"; value: string };

export function strategyOf(set: Annotated): Strategy {
  const value = set.metadata.annotations?.[Keys.strategy];
  if (value === "InPlace") return { kind: "InPlace" };
  if (value === undefined || value === "OnClaimDelete") return { kind: "OnClaimDelete", value };
  return { kind: "invalid", value };
}

/** A set with no claim templates, live or desired: claimstep has no claims of it to update. */
export const hasNoClaimTemplates = (set: Pick<StatefulSet, "metadata" | "spec">): boolean =>
  (set.spec.volumeClaimTemplates ?? []).length === 0 && !set.metadata.annotations?.[Keys.templates];

// Rule 2: the desired templates.

const TEMPLATES = `annotation ${Keys.templates}`;

const issuePath = (path: readonly PropertyKey[]): string =>
  path
    .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
    .join("")
    .replace(/^\./, "");

/**
 * `claimstep.io/volume-claim-templates` as claim templates (undefined when absent), or why it is
 * refused: not JSON, not templates, a name twice. Their sizes are checked with the live ones'
 * (core/policy/templates.ts desiredTemplates).
 */
export function templatesAnnotationOf(
  set: StatefulSet,
): { ok: true; value: ClaimTemplate[] | undefined } | { ok: false; message: string } {
  const raw = set.metadata.annotations?.[Keys.templates];
  if (raw === undefined) return { ok: true, value: undefined };
  const setName = `${set.metadata.namespace ?? "default"}/${set.metadata.name}`;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    return {
      ok: false,
      message: `${TEMPLATES} on ${setName} is not valid JSON (${(err as Error).message}); it must be a JSON array of claim templates`,
    };
  }
  const parsed = z.array(ClaimTemplate).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = issuePath(issue.path);
    return {
      ok: false,
      message: `${TEMPLATES} on ${setName}: ${at ? `${at}: ` : ""}${issue.message}; expected a JSON array of volumeClaimTemplates ({"metadata":{"name":…},"spec":{…}})`,
    };
  }
  // A name the live set lacks is a template to add (docs/design.md "Adding and removing claim
  // templates"): the re-create adds it; policy.ts checks what adding needs.
  const seen = new Set<string>();
  for (const t of parsed.data) {
    if (seen.has(t.metadata.name))
      return { ok: false, message: `${TEMPLATES} on ${setName}: template name "${t.metadata.name}" appears twice` };
    seen.add(t.metadata.name);
  }
  return { ok: true, value: parsed.data };
}

// The set's shape (core/plan/reshape.ts): templates to remove, the held pod template.

/** A DNS-1123 label: what a template name must be for its claims `<template>-<set>-<n>` to be valid. */
export const TEMPLATE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * `claimstep.io/remove-claim-templates` as names ([] when absent), or why it is refused (with the
 * raw value, for a message that quotes it). The one parser of the annotation. `lenient`: any JSON
 * array of strings, as written (names not checked as DNS-1123 labels nor deduplicated): the
 * admission webhook carries an old list forward into the one it writes, and the planner still
 * refuses a bad name in it.
 */
export function removeListOf(
  set: Annotated,
  opts: { lenient?: boolean } = {},
): { ok: true; value: string[] } | { ok: false; message: string; raw: string } {
  const raw = set.metadata.annotations?.[Keys.removeTemplates];
  if (raw === undefined) return { ok: true, value: [] };
  const where = `annotation ${Keys.removeTemplates} on ${ref(set)}`;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    return { ok: false, raw, message: `${where} is not valid JSON (${(err as Error).message}); expected ["name", …]` };
  }
  const parsed = z.array(z.string()).safeParse(json);
  if (!parsed.success)
    return { ok: false, raw, message: `${where} must be a JSON array of template names, e.g. ["cache"]` };
  if (opts.lenient) return { ok: true, value: parsed.data };
  const bad = parsed.data.find((n) => !TEMPLATE_NAME.test(n) || n.length > 63);
  if (bad !== undefined)
    return {
      ok: false,
      raw,
      message: `${where}: ${JSON.stringify(bad)} is not a claim template name (a DNS-1123 label)`,
    };
  return { ok: true, value: [...new Set(parsed.data)] };
}

const Mount = z.looseObject({ name: z.string() });
const Container = z.looseObject({
  name: z.string(),
  volumeMounts: z.optional(z.array(Mount)),
  volumeDevices: z.optional(z.array(Mount)),
});
/** The parts of a pod template the shape rules read; everything else is carried as is. */
export const PodTemplateSchema = z.looseObject({
  metadata: z.optional(z.looseObject({})),
  spec: z.looseObject({
    containers: z.array(Container).check(z.minLength(1, "a pod template needs at least one container")),
    initContainers: z.optional(z.array(Container)),
    volumes: z.optional(z.array(z.looseObject({ name: z.string() }))),
  }),
});
export type PodTemplate = z.infer<typeof PodTemplateSchema>;

/** `claimstep.io/pod-template` (undefined when absent), or why it is refused: the one parser of the annotation. */
export function podTemplateOf(
  set: StatefulSet,
): { ok: true; value: PodTemplate | undefined } | { ok: false; message: string } {
  const raw = set.metadata.annotations?.[Keys.podTemplate];
  if (raw === undefined) return { ok: true, value: undefined };
  const where = `annotation ${Keys.podTemplate} on ${ref(set)}`;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    return { ok: false, message: `${where} is not valid JSON (${(err as Error).message}); expected a pod template` };
  }
  const parsed = PodTemplateSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return {
      ok: false,
      message: `${where}: ${issue.path.join(".") || "(root)"}: ${issue.message}; expected the StatefulSet's spec.template ({"metadata":…,"spec":{"containers":[…]}})`,
    };
  }
  return { ok: true, value: parsed.data };
}

/** `claimstep.io/pod-template-base`: the digest of the live pod template the held one was made from (undefined when absent). */
export const heldTemplateBaseOf = (set: Annotated): string | undefined =>
  set.metadata.annotations?.[Keys.podTemplateBase];

// How the set's claims are written.

/** `claimstep.io/apply-via`: how a set's claims are written (default direct). */
export const APPLY_VIA = ["direct", "pull-request"] as const;
export type ApplyVia = (typeof APPLY_VIA)[number];

/** The set's apply mode, or the message naming the set, the annotation, the value and the fix. */
export function applyViaOf(
  set: Pick<StatefulSet, "metadata">,
): { ok: true; via: ApplyVia } | { ok: false; message: string } {
  const value = set.metadata.annotations?.[Keys.applyVia];
  if (value === undefined) return { ok: true, via: "direct" };
  if ((APPLY_VIA as readonly string[]).includes(value)) return { ok: true, via: value as ApplyVia };
  return { ok: false, message: Messages.badApplyVia(set.metadata, value, APPLY_VIA) };
}

// The pod extensions (docs/design.md "Pods"): pod coordination (P1–P5), restarts (R1–R3).

export const POD_COORDINATION = ["None", "ClaimsFirst"] as const;
export const RESTART_PODS = ["Never", "WhenRequired"] as const;

/** R1: how long a file system resize may wait on its pod before claimstep restarts it. */
export const DEFAULT_RESTART_AFTER_SECONDS = 5 * 60;

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** A Go-style duration of whole seconds or more: `90s`, `5m`, `1h30m`. */
export function parseDurationSeconds(raw: string): number | undefined {
  if (!/^(\d+[hms])+$/.test(raw)) return undefined;
  let total = 0;
  for (const [, n, unit] of raw.matchAll(/(\d+)([hms])/g)) total += Number(n) * UNITS[unit!]!;
  return total;
}

const setName = (set: Annotated) => `${set.metadata.namespace ?? "default"}/${set.metadata.name}`;

type OneOf<T> = { ok: true; value: T } | { ok: false; message: string };

const oneOf = <T extends string>(set: Annotated, key: string, accepted: readonly T[], fallback: T): OneOf<T> => {
  const value = set.metadata.annotations?.[key];
  if (value === undefined) return { ok: true, value: fallback };
  if ((accepted as readonly string[]).includes(value)) return { ok: true, value: value as T };
  return {
    ok: false,
    message: `StatefulSet ${setName(set)}: annotation ${key}=${JSON.stringify(value)} is not one of ${accepted.join(", ")}: fix or remove it (absent = ${fallback})`,
  };
};

/** `claimstep.io/pod-coordination` (absent: None). */
export const podCoordinationOf = (set: Annotated): OneOf<(typeof POD_COORDINATION)[number]> =>
  oneOf(set, Keys.podCoordination, POD_COORDINATION, "None");

/** `claimstep.io/restart-pods` (absent: Never). */
export const restartPodsOf = (set: Annotated): OneOf<(typeof RESTART_PODS)[number]> =>
  oneOf(set, Keys.restartPods, RESTART_PODS, "Never");

/** `claimstep.io/restart-after` in seconds (absent: 5m), at least 1s. */
export function restartAfterOf(set: Annotated): OneOf<number> {
  const raw = set.metadata.annotations?.[Keys.restartAfter];
  const seconds = raw === undefined ? DEFAULT_RESTART_AFTER_SECONDS : parseDurationSeconds(raw);
  if (seconds === undefined || seconds < 1) {
    return {
      ok: false,
      message: `StatefulSet ${setName(set)}: annotation ${Keys.restartAfter}=${JSON.stringify(raw)} is not a duration such as 90s, 5m or 1h (at least 1s); fix or remove it (absent = 5m)`,
    };
  }
  return { ok: true, value: seconds };
}

// Re-creating the set (docs/design.md "Re-creating the set").

export const FINALIZE = ["Never", "Recreate"] as const;

/** `claimstep.io/finalize`: Recreate, Never (the default), or why the value is refused. */
export function finalizeOf(set: Annotated): { ok: true; recreate: boolean } | { ok: false; message: string } {
  const value = set.metadata.annotations?.[Keys.finalize];
  if (value === undefined || value === "Never") return { ok: true, recreate: false };
  if (value === "Recreate") return { ok: true, recreate: true };
  return {
    ok: false,
    message: `StatefulSet ${setName(set)}: annotation ${Keys.finalize}=${JSON.stringify(value)} is not one of ${FINALIZE.join(", ")}: fix or remove it (absent = Never)`,
  };
}

// Autogrow (docs/design.md "Autogrow").

/** A percentage such as `80%` or `12.5%` (of a claim's capacity). */
const Percent = z.string().check(z.regex(/^(\d{1,3})(\.\d{1,2})?%$/, 'expected a percentage such as "80%"'));
const QuantityText = z.string().check(
  z.refine((q: string) => {
    try {
      return parseQuantity(q) > 0n;
    } catch {
      return false;
    }
  }, 'expected a positive quantity such as "10Gi"'),
);

export const AutogrowPolicy = z.strictObject({
  threshold: Percent,
  increase: z.union([Percent, QuantityText]),
  max: QuantityText,
  template: z.optional(z.string().check(z.minLength(1))),
});
export type AutogrowPolicy = z.infer<typeof AutogrowPolicy>;

/** Hundredths of a percent, exactly: "12.5%" → 1250. */
export const basisPoints = (p: string): bigint => {
  const m = /^(\d+)(?:\.(\d{1,2}))?%$/.exec(p)!;
  return BigInt(m[1]!) * 100n + BigInt((m[2] ?? "").padEnd(2, "0"));
};

/** `claimstep.io/autogrow` as written, or why it is refused (absent: undefined). */
export function autogrowOf(
  set: Annotated,
): { ok: true; policy: AutogrowPolicy | undefined } | { ok: false; message: string } {
  const raw = set.metadata.annotations?.[Keys.autogrow];
  if (raw === undefined) return { ok: true, policy: undefined };
  const where = `StatefulSet ${setName(set)}: annotation ${Keys.autogrow}`;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    return {
      ok: false,
      message: `${where} is not JSON (${(err as Error).message}); expected e.g. {"threshold":"80%","increase":"25%","max":"1Ti"}`,
    };
  }
  const parsed = AutogrowPolicy.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return {
      ok: false,
      message: `${where}: ${issue.path.join(".") || "value"}: ${issue.message}; expected e.g. {"threshold":"80%","increase":"25%","max":"1Ti"}`,
    };
  }
  const threshold = basisPoints(parsed.data.threshold);
  if (threshold <= 0n || threshold > 10_000n)
    return { ok: false, message: `${where}: threshold ${parsed.data.threshold} must be above 0% and at most 100%` };
  return { ok: true, policy: parsed.data };
}
