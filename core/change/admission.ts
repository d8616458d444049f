// The KEP's interface on today's clusters (docs/design.md "Admission"): a mutating admission webhook
// answers an UPDATE of an opted-in StatefulSet whose claim templates changed with a JSONPatch that
// puts the stored templates back into `spec` (so the API server accepts the update) and writes the
// requested ones into claimstep.io/volume-claim-templates, for the planner to roll out. An update
// that adds or removes a template (issue 27) also lists the removed names in
// claimstep.io/remove-claim-templates and holds back its pod template change (which may mount the
// new volume: the API server refuses that) in claimstep.io/pod-template, for the re-create. Pure:
// an AdmissionReview in, the response's parts out (the shell encodes the patch).

import { Keys } from "../keys.js";
import { sameJson } from "../kube/json.js";
import type { StatefulSet } from "../kube/k8s.js";
import { ClaimTemplate as ClaimTemplateSchema } from "../kube/k8s.js";
import { withoutServerFields } from "../kube/server-fields.js";
import { strategyOf } from "../policy/annotations.js";
import * as z from "../zod.js";
import { ANNOTATIONS_MAX_BYTES, type Change, changeOf, type SetLike, utf8Bytes } from "./change.js";

/** The label that opts a StatefulSet (objectSelector) or a namespace (namespaceSelector) in. */
export const ADMISSION_LABEL = "claimstep.io/admission";
export const ADMISSION_ENABLED = "enabled";

/** One RFC 6902 operation, as the patch carries them. */
export type JsonPatchOp =
  | { op: "add" | "replace"; path: string; value: unknown }
  | { op: "remove"; path: string }
  | { op: "test"; path: string; value: unknown };

export type AdmissionVerdict =
  /** Not ours to change: the update goes on as it would without claimstep. */
  | { kind: "pass"; uid: string; why: PassReason; warnings: string[] }
  /** The templates move into the annotation. */
  | { kind: "patch"; uid: string; patch: JsonPatchOp[]; warnings: string[] }
  /** The update is refused with claimstep's reason (it would be refused anyway: the templates are not valid). */
  | { kind: "deny"; uid: string; code: typeof DENY_CODE; message: string };

export type PassReason = "NotAStatefulSetUpdate" | "TemplatesUnchanged" | "NotOptedIn";

/** Every refusal's code (400 BadRequest): Flux's force and `kubectl --force` take a 409 or 422 for an immutable field and delete the object. */
export const DENY_CODE = 400;

/**
 * A refusal. Its message never says "is immutable" or "immutable field", in any case (Flux's
 * force, fluxcd/pkg ssa/errors/immutable.go IsImmutableError, matches those words whatever the
 * code): what the request itself carries (a template's name, a quantity) could say them, so they
 * are reworded here, once for every refusal.
 */
function deny(uid: string, message: string): AdmissionVerdict {
  const said = message
    .replace(/(is\s+)immutable/gi, "$1unchangeable")
    .replace(/immutable(\s+field)/gi, "unchangeable$1");
  return { kind: "deny", uid, code: DENY_CODE, message: said };
}

/**
 * The most a StatefulSet can really hold, checked on a review's object and oldObject before any
 * template is parsed or compared (issue 37: an unauthenticated review of 20,000 + 20,000 templates
 * held the server for seconds). A review over them is not from an API server, or asks for what
 * claimstep could never write: it is refused (400, as every refusal) when the set is opted in, and
 * passes untouched when not. Sources:
 * - `templates` (the update's object): claimstep writes every requested template into
 *   claimstep.io/volume-claim-templates, and the set's annotations together stay within
 *   256 KiB (ANNOTATIONS_MAX_BYTES). The smallest template the API server accepts, a one-letter
 *   name with the access mode and storage request ValidatePersistentVolumeClaimSpec requires
 *   (`{"metadata":{"name":"a"},"spec":{"accessModes":["ReadOnlyMany"],"resources":{"requests":{"storage":"1"}}}}`),
 *   is 106 bytes of JSON, 107 with its comma: 262,144 / 107 = 2,449, so no more than 2,449
 *   templates can ever be written, whatever else the set carries.
 * - `storedTemplates` (oldObject, as etcd holds it): etcd refuses an object over 1.5 MiB
 *   (its --max-request-bytes default; "etcdserver: request is too large"). Measured on
 *   kube-apiserver v1.34.2 + etcd (2026-12, issue 37): with templates as small as above (names
 *   of 2–4 letters, the server adding volumeMode and status), 18,960 were stored and 18,961
 *   refused; 20,480 leaves room for shorter names.
 * - `containers` (containers + initContainers of spec.template, of each object): likewise
 *   measured with the smallest container (`{"name":…,"image":"i"}`, the server adding its
 *   defaults): 25,799 stored, 25,800 refused; 32,768 leaves the same room.
 * - `annotationsBytes`: Kubernetes' own limit (ANNOTATIONS_MAX_BYTES): the API server refuses a
 *   set whose annotations exceed it (metadata.annotations: Too long).
 */
export const ADMISSION_CAPS = {
  templates: 2_449,
  storedTemplates: 20_480,
  containers: 32_768,
  annotationsBytes: ANNOTATIONS_MAX_BYTES,
} as const;

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
  const strategy = strategyOf(set as Pick<StatefulSet, "metadata">);
  const optedIn =
    !(strategy.kind === "OnClaimDelete" && strategy.value !== undefined) &&
    (opts.namespaceOptedIn === true ||
      set.metadata.labels?.[ADMISSION_LABEL] === ADMISSION_ENABLED ||
      strategy.kind === "InPlace");

  // More than any set Kubernetes can store: refused before any template is read (a set not opted
  // in passes, as it would: claimstep has nothing to change in it).
  const over = overCap(set, old);
  if (over)
    return optedIn
      ? deny(uid, `claimstep: StatefulSet ${name}: ${over}; claimstep changed nothing`)
      : pass("NotOptedIn");

  // Unchanged (as the server defaulted both): nothing to do, whatever else the update changes.
  const parsedNew = z.array(ClaimTemplateSchema).safeParse(rawNew);
  const parsedOld = z.array(ClaimTemplateSchema).safeParse(rawOld);
  if (!parsedOld.success)
    return pass("NotAStatefulSetUpdate", [
      `claimstep: the stored claim templates of ${name} are not readable; claimstep changed nothing`,
    ]);
  if (parsedNew.success && sameJson(parsedNew.data.map(withoutServerFields), parsedOld.data.map(withoutServerFields)))
    return pass("TemplatesUnchanged");

  if (!optedIn) return pass("NotOptedIn");

  if (!parsedNew.success) {
    const issue = parsedNew.error.issues[0]!;
    return deny(
      uid,
      `claimstep: spec.volumeClaimTemplates.${issue.path.join(".")} of StatefulSet ${name}: ${issue.message}; fix the template`,
    );
  }
  const stored = parsedOld.data;
  // The stored set as the planner sees it.
  const base = {
    metadata: {
      ...old.metadata,
      name: old.metadata.name ?? request.name ?? "",
      namespace: old.metadata.namespace ?? request.namespace ?? "default",
    },
    spec: { ...old.spec, volumeClaimTemplates: stored },
  } as StatefulSet;
  const change = changeOf(base, {
    kind: "spec",
    update: set,
    requested: parsedNew.data.map(withoutServerFields),
    name,
    setName: request.name ?? set.metadata.name ?? "",
  });
  if (!change.ok) return deny(uid, change.message);
  return { kind: "patch", uid, patch: patchOf(change, set, old), warnings: change.warnings };
}

/**
 * The change as a JSONPatch of the update: the stored templates put back into spec, the stored pod
 * template too when the change holds the update's back, the partition hold, then claimstep's
 * annotations written and removed (a remove only of what the update carries: a remove of a missing
 * path fails the request).
 */
function patchOf(change: Extract<Change, { ok: true }>, set: SetLike, old: SetLike): JsonPatchOp[] {
  const patch: JsonPatchOp[] = [
    { op: "replace", path: "/spec/volumeClaimTemplates", value: old.spec.volumeClaimTemplates ?? [] },
  ];
  if (change.podTemplate !== undefined)
    patch.push({ op: "replace", path: "/spec/template", value: (old.spec as { template?: unknown }).template });
  if (change.hold) {
    const strategy = (set.spec as { updateStrategy?: { rollingUpdate?: unknown } }).updateStrategy;
    const partition = change.hold.partition;
    patch.push(
      !strategy
        ? { op: "add", path: "/spec/updateStrategy", value: { type: "RollingUpdate", rollingUpdate: { partition } } }
        : !strategy.rollingUpdate
          ? { op: "add", path: "/spec/updateStrategy/rollingUpdate", value: { partition } }
          : { op: "add", path: "/spec/updateStrategy/rollingUpdate/partition", value: partition },
    );
  }
  const carried = set.metadata.annotations;
  if (!carried) patch.push({ op: "add", path: "/metadata/annotations", value: change.annotations });
  else {
    for (const [key, value] of Object.entries(change.annotations))
      patch.push({ op: "add", path: `/metadata/annotations/${pointerToken(key)}`, value });
    for (const key of change.removals)
      if (Object.hasOwn(carried, key) && !Object.hasOwn(change.annotations, key))
        patch.push({ op: "remove", path: `/metadata/annotations/${pointerToken(key)}` });
  }
  return patch;
}

/** The length of an array (0 when it is not one), read without walking it. */
const countOf = (v: unknown): number => (Array.isArray(v) ? v.length : 0);

/** Containers and initContainers of a set's pod template, counted without walking them. */
function containersOf(s: SetLike): number {
  const pod = (s.spec as { template?: { spec?: { containers?: unknown; initContainers?: unknown } } }).template;
  return countOf(pod?.spec?.containers) + countOf(pod?.spec?.initContainers);
}

/** What of the review's sets is over ADMISSION_CAPS, in words, or undefined: counts and sums only, no template read. */
function overCap(set: SetLike, old: SetLike): string | undefined {
  const c = ADMISSION_CAPS;
  const stored = "Kubernetes could not store such a set";
  const templates = countOf(set.spec.volumeClaimTemplates);
  if (templates > c.templates)
    return `the update carries ${templates} claim templates, over claimstep's cap of ${c.templates}: ${stored} with its templates in ${Keys.templates} (over the 256 KiB of annotations Kubernetes allows)`;
  const storedTemplates = countOf(old.spec.volumeClaimTemplates);
  if (storedTemplates > c.storedTemplates)
    return `the stored set (oldObject) carries ${storedTemplates} claim templates, over claimstep's cap of ${c.storedTemplates}: ${stored} (etcd refuses an object over 1.5 MiB)`;
  for (const [which, s] of [
    ["the update", set],
    ["the stored set (oldObject)", old],
  ] as const) {
    const containers = containersOf(s);
    if (containers > c.containers)
      return `${which} carries ${containers} containers in spec.template, over claimstep's cap of ${c.containers}: ${stored} (etcd refuses an object over 1.5 MiB)`;
    let bytes = 0;
    for (const [k, v] of Object.entries(s.metadata.annotations ?? {})) bytes += utf8Bytes(k) + utf8Bytes(v);
    if (bytes > c.annotationsBytes)
      return `${which} carries ${bytes} bytes of annotations, over claimstep's cap of ${c.annotationsBytes}: ${stored} (Kubernetes allows 256 KiB of annotations)`;
  }
  return undefined;
}
