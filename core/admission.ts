// The KEP's interface on today's clusters (docs/design.md "Admission"): a mutating admission webhook
// answers an UPDATE of an opted-in StatefulSet whose claim templates changed with a JSONPatch that
// puts the stored templates back into `spec` (so the API server accepts the update) and writes the
// requested ones into claimstep.io/volume-claim-templates, for the planner to roll out. Pure: an
// AdmissionReview in, the response's parts out (the shell encodes the patch).

import { desiredChange, cleanTemplate as normalizedTemplate } from "./desired.js";
import type { ClaimTemplate } from "./k8s.js";
import { ClaimTemplate as ClaimTemplateSchema } from "./k8s.js";
import { Keys } from "./keys.js";
import { compareQuantity } from "./quantity.js";
import * as z from "./zod.js";

/** The label that opts a StatefulSet (objectSelector) or a namespace (namespaceSelector) in. */
export const ADMISSION_LABEL = "claimstep.io/admission";
export const ADMISSION_ENABLED = "enabled";

/** One RFC 6902 operation, as the patch carries them. */
export type JsonPatchOp =
  | { op: "add" | "replace"; path: string; value: unknown }
  | { op: "test"; path: string; value: unknown };

export type AdmissionVerdict =
  /** Not ours to change: the update goes on as it would without claimstep. */
  | { kind: "pass"; uid: string; why: PassReason; warnings: string[] }
  /** The templates move into the annotation. */
  | { kind: "patch"; uid: string; patch: JsonPatchOp[]; warnings: string[] }
  /** The update is refused with claimstep's reason (it would be refused anyway: the templates are not valid). */
  | { kind: "deny"; uid: string; code: number; message: string };

export type PassReason = "NotAStatefulSetUpdate" | "TemplatesUnchanged" | "NotOptedIn" | "TemplatesAddedOrRemoved";

/** A review that is not an AdmissionReview v1 with a request: the caller gets a 400 and the API server's failurePolicy decides. */
export class AdmissionReviewError extends Error {
  override readonly name = "AdmissionReviewError";
}

const GroupVersionKind = z.object({ group: z.string(), version: z.string(), kind: z.string() });
const Meta = z.looseObject({
  name: z.optional(z.string()),
  namespace: z.optional(z.string()),
  labels: z.optional(z.record(z.string(), z.string())),
  annotations: z.optional(z.record(z.string(), z.string())),
});
const SetShape = z.looseObject({
  metadata: Meta,
  spec: z.looseObject({ volumeClaimTemplates: z.optional(z.array(z.unknown())) }),
});
const Review = z.object({
  apiVersion: z.literal("admission.k8s.io/v1"),
  kind: z.literal("AdmissionReview"),
  request: z.looseObject({
    uid: z.string().check(z.minLength(1), z.maxLength(128)),
    kind: GroupVersionKind,
    operation: z.string(),
    name: z.optional(z.string()),
    namespace: z.optional(z.string()),
    object: z.optional(z.unknown()),
    oldObject: z.optional(z.unknown()),
  }),
});

export interface AdmissionOptions {
  /** The request came through the webhook entry whose namespaceSelector matched the namespace's opt-in label. */
  namespaceOptedIn?: boolean;
}

/** The review's request, or why it is not one (AdmissionReviewError). */
export function parseReview(body: unknown): z.infer<typeof Review>["request"] {
  const parsed = Review.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AdmissionReviewError(
      `not an admission.k8s.io/v1 AdmissionReview with a request: ${issue.path.join(".") || "(body)"}: ${issue.message}`,
    );
  }
  return parsed.data.request;
}

/** JSON values equal whatever their keys' order (cheaper than comparing sorted serialisations). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every(
    (k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

/** RFC 6901: `~` → `~0`, `/` → `~1`. */
export const pointerToken = (s: string): string => s.replace(/~/g, "~0").replace(/\//g, "~1");

/**
 * What claimstep answers to one review. A set is opted in by the label claimstep.io/admission:
 * enabled on the set or its namespace, or by claimstep.io/volume-claim-update-strategy: InPlace;
 * an explicit OnClaimDelete (the KEP's default) keeps it out.
 */
export function admitStatefulSetUpdate(body: unknown, opts: AdmissionOptions = {}): AdmissionVerdict {
  const request = parseReview(body);
  const uid = request.uid;
  const pass = (why: PassReason, warnings: string[] = []): AdmissionVerdict => ({ kind: "pass", uid, why, warnings });
  const k = request.kind;
  if (k.group !== "apps" || k.version !== "v1" || k.kind !== "StatefulSet" || request.operation !== "UPDATE")
    return pass("NotAStatefulSetUpdate");
  const object = SetShape.safeParse(request.object);
  const oldObject = SetShape.safeParse(request.oldObject);
  if (!object.success || !oldObject.success) {
    return pass("NotAStatefulSetUpdate", [
      `claimstep: the review carries no ${object.success ? "oldObject" : "object"} StatefulSet; claimstep changed nothing`,
    ]);
  }
  const set = object.data;
  const old = oldObject.data;
  const name = `${request.namespace ?? set.metadata.namespace ?? "default"}/${request.name ?? set.metadata.name ?? "?"}`;
  const rawNew = set.spec.volumeClaimTemplates ?? [];
  const rawOld = old.spec.volumeClaimTemplates ?? [];

  // Unchanged (as the server defaulted both): nothing to do, whatever else the update changes.
  const parsedNew = z.array(ClaimTemplateSchema).safeParse(rawNew);
  const parsedOld = z.array(ClaimTemplateSchema).safeParse(rawOld);
  if (!parsedOld.success)
    return pass("NotAStatefulSetUpdate", [
      `claimstep: the stored claim templates of ${name} are not readable; claimstep changed nothing`,
    ]);
  if (parsedNew.success && sameJson(parsedNew.data.map(normalizedTemplate), parsedOld.data.map(normalizedTemplate)))
    return pass("TemplatesUnchanged");

  const strategy = set.metadata.annotations?.[Keys.strategy];
  const optedIn =
    strategy !== "OnClaimDelete" &&
    (opts.namespaceOptedIn === true ||
      set.metadata.labels?.[ADMISSION_LABEL] === ADMISSION_ENABLED ||
      strategy === "InPlace");
  if (!optedIn) return pass("NotOptedIn");

  if (!parsedNew.success) {
    const issue = parsedNew.error.issues[0]!;
    return {
      kind: "deny",
      uid,
      code: 422,
      message: `claimstep: spec.volumeClaimTemplates.${issue.path.join(".")} of StatefulSet ${name}: ${issue.message}; fix the template`,
    };
  }
  const requested = parsedNew.data.map(normalizedTemplate);
  const stored = parsedOld.data;
  const names = (ts: readonly ClaimTemplate[]) =>
    ts
      .map((t) => t.metadata.name)
      .sort()
      .join(",");
  if (names(requested) !== names(stored)) {
    // Adding or removing a template is not a rollout of existing claims: left to the API server
    // (which refuses it as before), never dropped silently.
    return pass("TemplatesAddedOrRemoved", [
      `claimstep: StatefulSet ${name} adds or removes claim templates (${names(stored) || "none"} → ${names(requested) || "none"}); claimstep only changes existing templates, so it left this update alone`,
    ]);
  }

  // The stored set as the planner sees it, with its desired templates replaced by the requested ones.
  const base = {
    metadata: {
      ...old.metadata,
      name: old.metadata.name ?? request.name ?? "",
      namespace: old.metadata.namespace ?? request.namespace ?? "default",
    },
    spec: { ...old.spec, volumeClaimTemplates: stored },
  };
  const change = desiredChange(base as Parameters<typeof desiredChange>[0], requested);
  if (!change.ok) return { kind: "deny", uid, code: 422, message: `claimstep: ${change.message}` };

  const annotations: Record<string, string> = {
    [Keys.templates]: JSON.stringify(change.templates),
    [Keys.strategy]: "InPlace",
  };
  // Templates moved here are re-created into spec once complete, so that Git and the set agree, unless the set says otherwise.
  if (set.metadata.annotations?.[Keys.finalize] === undefined) annotations[Keys.finalize] = "Recreate";
  const patch: JsonPatchOp[] = [{ op: "replace", path: "/spec/volumeClaimTemplates", value: rawOld }];
  const warnings = changeWarnings(name, request.name ?? set.metadata.name ?? "", stored, change.templates);
  // ClaimsFirst with a pod template change in the same request (docs/pods.md P5): the StatefulSet
  // controller would replace the pods as soon as this update is stored, before any claim grows;
  // hold them here, as `claimstep set --hold-pods` does, and the planner lowers the partition one
  // ordinal at a time once its claims are ready, then restores the user's (found on the real
  // server, test/e2e/admission.test.ts: without it every pod ran the new image on the old disk).
  const hold = claimsFirstHold(set, old);
  if (hold) {
    patch.push(hold.op);
    if (hold.userPartition !== undefined) annotations[Keys.userPartition] = String(hold.userPartition);
    warnings.push(
      `claimstep holds the pods of ${name} (partition ${hold.partition}) and replaces each once its claims are ready (${Keys.podCoordination}: ClaimsFirst)`,
    );
  }
  if (!set.metadata.annotations) patch.push({ op: "add", path: "/metadata/annotations", value: annotations });
  else
    for (const [key, value] of Object.entries(annotations))
      patch.push({ op: "add", path: `/metadata/annotations/${pointerToken(key)}`, value });
  return { kind: "patch", uid, patch, warnings };
}

type SetLike = z.infer<typeof SetShape>;
const rollingUpdateOf = (s: SetLike) =>
  (s.spec as { updateStrategy?: { type?: string; rollingUpdate?: { partition?: number } } }).updateStrategy;

/** The partition hold of a ClaimsFirst set whose pod template changes in the same request (RollingUpdate only), or undefined. */
function claimsFirstHold(
  set: SetLike,
  old: SetLike,
): { op: JsonPatchOp; partition: number; userPartition?: number } | undefined {
  if (set.metadata.annotations?.[Keys.podCoordination] !== "ClaimsFirst") return undefined;
  const strategy = rollingUpdateOf(set);
  if (strategy?.type !== undefined && strategy.type !== "RollingUpdate") return undefined;
  const template = (s: SetLike) => (s.spec as { template?: unknown }).template ?? null;
  if (sameJson(template(set), template(old))) return undefined;
  const requested = typeof strategy?.rollingUpdate?.partition === "number" ? strategy.rollingUpdate.partition : 0;
  const replicas =
    typeof (set.spec as { replicas?: unknown }).replicas === "number" ? (set.spec as { replicas: number }).replicas : 1;
  const partition = Math.max(replicas, requested);
  if (partition === requested) return undefined;
  const recorded = set.metadata.annotations?.[Keys.userPartition];
  const op: JsonPatchOp = !strategy
    ? { op: "add", path: "/spec/updateStrategy", value: { type: "RollingUpdate", rollingUpdate: { partition } } }
    : !strategy.rollingUpdate
      ? { op: "add", path: "/spec/updateStrategy/rollingUpdate", value: { partition } }
      : { op: "add", path: "/spec/updateStrategy/rollingUpdate/partition", value: partition };
  return { op, partition, ...(recorded === undefined ? { userPartition: requested } : {}) };
}

/** What claimstep will do, one short warning per template that changes (kubectl prints each). */
function changeWarnings(
  name: string,
  setName: string,
  stored: readonly ClaimTemplate[],
  desired: readonly ClaimTemplate[],
): string[] {
  const out: string[] = [];
  for (const d of desired) {
    const s = stored.find((t) => t.metadata.name === d.metadata.name);
    if (!s) continue;
    const claims = `${d.metadata.name}-${setName}-*`;
    const from = s.spec.resources?.requests?.storage;
    const to = d.spec.resources?.requests?.storage;
    if (from !== undefined && to !== undefined && String(from) !== String(to)) {
      const cmp = compareQuantity(String(to), String(from));
      out.push(
        cmp > 0
          ? `claimstep will grow ${claims} to ${to} one ordinal at a time; see \`claimstep status ${setName}\``
          : `claimstep: ${claims} stay at ${from} (claims never shrink); the smaller template ${to} applies to new claims after the re-create`,
      );
    }
    if ((s.spec.volumeAttributesClassName ?? "") !== (d.spec.volumeAttributesClassName ?? "")) {
      out.push(
        `claimstep will move ${claims} to VolumeAttributesClass ${d.spec.volumeAttributesClassName ?? "(none)"} one ordinal at a time; see \`claimstep status ${setName}\``,
      );
    }
    if (!sameJson(s.metadata.labels ?? {}, d.metadata.labels ?? {}))
      out.push(`claimstep will relabel ${claims} one ordinal at a time`);
  }
  if (!out.length)
    out.push(
      `claimstep recorded the claim templates of ${name} in ${Keys.templates}; see \`claimstep status ${setName}\``,
    );
  return out;
}
