// The KEP's interface on today's clusters (docs/design.md "Admission"): a mutating admission webhook
// answers an UPDATE of an opted-in StatefulSet whose claim templates changed with a JSONPatch that
// puts the stored templates back into `spec` (so the API server accepts the update) and writes the
// requested ones into claimstep.io/volume-claim-templates, for the planner to roll out. An update
// that adds or removes a template (issue 27) also lists the removed names in
// claimstep.io/remove-claim-templates and holds back its pod template change (which may mount the
// new volume: the API server refuses that) in claimstep.io/pod-template, for the re-create. Pure:
// an AdmissionReview in, the response's parts out (the shell encodes the patch).

import { desiredChange, cleanTemplate as normalizedTemplate, recreateFor } from "./desired.js";
import type { ClaimTemplate, StatefulSet } from "./k8s.js";
import { ClaimTemplate as ClaimTemplateSchema } from "./k8s.js";
import { Keys } from "./keys.js";
import { recreateOutlook } from "./outlook.js";
import { compareQuantity } from "./quantity.js";
import { podTemplateDigest, removeListOf } from "./reshape.js";
import { revisionOf } from "./revision.js";
import { desiredTemplates } from "./templates.js";
import * as z from "./zod.js";

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
 * Kubernetes' limit on the total size of an object's annotations, keys and values in bytes
 * (apimachinery's TotalAnnotationSizeLimitB): a patch that goes over it is refused by the API
 * server, so claimstep refuses the update itself, saying which of its annotations and the fix.
 */
const ANNOTATIONS_MAX_BYTES = 256 * 1024;

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
  const strategy = set.metadata.annotations?.[Keys.strategy];
  const optedIn =
    strategy !== "OnClaimDelete" &&
    (opts.namespaceOptedIn === true ||
      set.metadata.labels?.[ADMISSION_LABEL] === ADMISSION_ENABLED ||
      strategy === "InPlace");

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
  if (parsedNew.success && sameJson(parsedNew.data.map(normalizedTemplate), parsedOld.data.map(normalizedTemplate)))
    return pass("TemplatesUnchanged");

  if (!optedIn) return pass("NotOptedIn");

  if (!parsedNew.success) {
    const issue = parsedNew.error.issues[0]!;
    return deny(
      uid,
      `claimstep: spec.volumeClaimTemplates.${issue.path.join(".")} of StatefulSet ${name}: ${issue.message}; fix the template`,
    );
  }
  const requested = parsedNew.data.map(normalizedTemplate);
  const stored = parsedOld.data;
  const setName = request.name ?? set.metadata.name ?? "";
  // The stored set as the planner sees it, with its desired templates replaced by the requested ones.
  const base = {
    metadata: {
      ...old.metadata,
      name: old.metadata.name ?? request.name ?? "",
      namespace: old.metadata.namespace ?? request.namespace ?? "default",
    },
    spec: { ...old.spec, volumeClaimTemplates: stored },
  } as StatefulSet;
  const names = (ts: readonly ClaimTemplate[]) =>
    ts
      .map((t) => t.metadata.name)
      .sort()
      .join(",");
  const namesChanged = names(requested) !== names(stored);
  if (namesChanged || pendingTemplateSetChange(base, stored))
    return templateSetChange({ uid, name, setName, set, old, base, rawOld, stored, requested, namesChanged });

  const change = desiredChange(base, requested);
  if (!change.ok) return deny(uid, `claimstep: ${change.message}`);

  const annotations: Record<string, string> = {
    [Keys.templates]: JSON.stringify(change.templates),
    [Keys.strategy]: "InPlace",
  };
  // Templates moved here are re-created into spec once complete, so that Git and the set agree,
  // unless the set says otherwise: a Recreate claimstep writes names the revision it is for
  // (claimstep.io/finalize-for), and a Recreate claimstep wrote before is written for this one.
  if (claimstepsFinalize(set)) Object.assign(annotations, recreateFor(set, change.revision));
  const patch: JsonPatchOp[] = [{ op: "replace", path: "/spec/volumeClaimTemplates", value: rawOld }];
  const warnings = changeWarnings(setName, stored, change.templates);
  // Said before it happens: the change ends in a re-create (and why), or a Recreate claimstep wrote is spent.
  const outlook = recreateOutlook(storedWith(base, set, annotations, []));
  if (outlook) warnings.push(`claimstep: ${outlook.text}`);
  if (!warnings.length)
    warnings.push(
      `claimstep recorded the claim templates of ${name} in ${Keys.templates}; see \`claimstep status ${setName}\``,
    );
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
  return finish(uid, name, set, patch, annotations, [], warnings);
}

/** UTF-8 bytes of a string, as Go's len() counts the API server's limits. */
const utf8Bytes = (s: string): number => new TextEncoder().encode(s).length;

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

/**
 * The patch with claimstep's annotations written (`annotations`) and removed (`remove`, only those
 * the request carries: a remove of a missing path fails the request), or a refusal when the set's
 * annotations would exceed ANNOTATIONS_MAX_BYTES (the API server would refuse the patched object).
 */
function finish(
  uid: string,
  name: string,
  set: SetLike,
  patch: JsonPatchOp[],
  annotations: Record<string, string>,
  remove: readonly string[],
  warnings: string[],
): AdmissionVerdict {
  const carried = set.metadata.annotations;
  const after: Record<string, string> = { ...carried, ...annotations };
  for (const key of remove) delete after[key];
  let total = 0;
  for (const [k, v] of Object.entries(after)) total += utf8Bytes(k) + utf8Bytes(v);
  if (total > ANNOTATIONS_MAX_BYTES) {
    const held = annotations[Keys.podTemplate];
    const limit = `over Kubernetes' limit of ${ANNOTATIONS_MAX_BYTES} bytes (256 KiB); nothing was written`;
    return deny(
      uid,
      held !== undefined
        ? `claimstep: StatefulSet ${name}: holding back the pod template change in ${Keys.podTemplate} (${utf8Bytes(held)} bytes) would bring the set's annotations to ${total} bytes, ${limit}. Fix: apply the claim template change without the pod template change first, then the pod template change once claimstep has re-created the set (\`claimstep status\` says Complete)`
        : `claimstep: StatefulSet ${name}: writing the requested claim templates into ${Keys.templates} (${utf8Bytes(annotations[Keys.templates] ?? "")} bytes) would bring the set's annotations to ${total} bytes, ${limit}. Fix: make the set's other annotations smaller (kubectl's last-applied-configuration copies the whole manifest: \`kubectl apply --server-side\` does not)`,
    );
  }
  if (!carried) patch.push({ op: "add", path: "/metadata/annotations", value: annotations });
  else {
    for (const [key, value] of Object.entries(annotations))
      patch.push({ op: "add", path: `/metadata/annotations/${pointerToken(key)}`, value });
    for (const key of remove)
      if (Object.hasOwn(carried, key) && !Object.hasOwn(annotations, key))
        patch.push({ op: "remove", path: `/metadata/annotations/${pointerToken(key)}` });
  }
  return { kind: "patch", uid, patch, warnings };
}

/** The set has an addition (a desired template the live set lacks) or a removal (a live template listed) pending. */
function pendingTemplateSetChange(set: StatefulSet, stored: readonly ClaimTemplate[]): boolean {
  const live = new Set(stored.map((t) => t.metadata.name));
  const desired = desiredTemplates(set);
  if (desired.ok && desired.templates.some((t) => !live.has(t.metadata.name))) return true;
  const listed = removeListOf(set, { lenient: true });
  return (listed.ok ? listed.value : []).some((n) => live.has(n));
}

/** "the claim template logs" / "the claim templates logs, wal" */
const templatesNamed = (ns: readonly string[]) => `the claim template${ns.length === 1 ? "" : "s"} ${ns.join(", ")}`;

/**
 * An update that adds or removes claim templates (issue 27, docs/admission.md): the stored
 * templates (and, when the update changes it too, the pod template) restored; the requested
 * templates, the names to remove and the held pod template in claimstep's annotations, for the
 * re-create (finalize) to apply in one create.
 */
function templateSetChange(c: {
  uid: string;
  name: string;
  setName: string;
  set: SetLike;
  old: SetLike;
  base: StatefulSet;
  rawOld: unknown[];
  stored: readonly ClaimTemplate[];
  requested: ClaimTemplate[];
  /** The request's names differ from the live set's (else it only undoes a pending addition or removal). */
  namesChanged: boolean;
}): AdmissionVerdict {
  const { uid, name, setName, set, old, requested } = c;
  const refuse = (message: string): AdmissionVerdict => deny(uid, message);
  const seen = new Set<string>();
  for (const t of requested) {
    if (seen.has(t.metadata.name))
      return refuse(
        `claimstep: spec.volumeClaimTemplates of StatefulSet ${name} names the claim template "${t.metadata.name}" twice; give each template a name of its own`,
      );
    seen.add(t.metadata.name);
  }
  const templatesJson = JSON.stringify(requested);
  // Validated as the planner will read them (storage given, positive, not absurd).
  const check = desiredTemplates({
    ...c.base,
    metadata: { ...c.base.metadata, annotations: { ...c.base.metadata.annotations, [Keys.templates]: templatesJson } },
  });
  if (!check.ok) return refuse(`claimstep: ${check.message}`);

  const live = c.stored.map((t) => t.metadata.name);
  const liveNames = new Set(live);
  const wanted = new Set(requested.map((t) => t.metadata.name));
  const added = requested.map((t) => t.metadata.name).filter((n) => !liveNames.has(n));
  const dropped = live.filter((n) => !wanted.has(n));
  const oldList = removeListOf(old, { lenient: true });
  const listed = oldList.ok ? oldList.value : undefined;
  const removing = [...new Set([...(listed ?? []), ...dropped])].filter((n) => !wanted.has(n)).sort();
  const broughtBack = [...new Set(listed ?? [])].filter((n) => wanted.has(n)).sort();
  const pendingAdds: string[] = [];
  const oldDesired = desiredTemplates(c.base);
  if (oldDesired.ok && oldDesired.source === "annotation")
    for (const t of oldDesired.templates)
      if (!liveNames.has(t.metadata.name) && !wanted.has(t.metadata.name)) pendingAdds.push(t.metadata.name);

  const warnings: string[] = [];
  if (added.length)
    warnings.push(
      `claimstep will add ${templatesNamed(added)} to StatefulSet ${name}: it re-creates the set with ${added.length === 1 ? "it" : "them"}, then replaces the pods one at a time, lowest ordinal first, each once its new claims exist; see \`claimstep status ${setName}\``,
    );
  if (dropped.length)
    warnings.push(
      `claimstep will remove ${templatesNamed(dropped)} from StatefulSet ${name}: it re-creates the set without ${dropped.length === 1 ? "it" : "them"}, then replaces the pods one at a time; the claims ${dropped.map((n) => `${n}-${setName}-*`).join(", ")} are kept, labelled ${Keys.orphanedFrom}=${setName} (claimstep never deletes a claim); see \`claimstep status ${setName}\``,
    );
  if (broughtBack.length)
    warnings.push(
      `claimstep no longer removes ${templatesNamed(broughtBack)} from StatefulSet ${name}; ${broughtBack.length === 1 ? "its" : "their"} claims are kept and used again`,
    );
  if (pendingAdds.length)
    warnings.push(`claimstep no longer adds ${templatesNamed(pendingAdds)} to StatefulSet ${name}`);
  if (!oldList.ok)
    warnings.push(
      `claimstep replaced ${Keys.removeTemplates} of ${name}, which was not a JSON array of names (${JSON.stringify(oldList.raw.slice(0, 80))})`,
    );
  warnings.push(...changeWarnings(setName, c.stored, requested));

  const annotations: Record<string, string> = { [Keys.templates]: templatesJson, [Keys.strategy]: "InPlace" };
  const remove: string[] = [];
  if (removing.length) annotations[Keys.removeTemplates] = JSON.stringify(removing);
  else remove.push(Keys.removeTemplates);
  const patch: JsonPatchOp[] = [{ op: "replace", path: "/spec/volumeClaimTemplates", value: c.rawOld }];

  // The pod template of the same request may mount the added volume (or stop mounting a removed
  // one): the API server refuses a pod template that mounts a volume the set lacks (422
  // volumeMounts[0].name: Not found), so it is held back whole for the re-create to apply.
  const template = (s: SetLike) => (s.spec as { template?: unknown }).template;
  const requestedTemplate = template(set);
  const carriesHeld = set.metadata.annotations?.[Keys.podTemplate] !== undefined;
  if (!c.namesChanged) {
    // Back to the live names: nothing is added or removed, so the pod template of this update
    // passes (the live set has every volume it can mount) and a held one is moot.
    if (carriesHeld) {
      remove.push(Keys.podTemplate);
      if (set.metadata.annotations?.[Keys.podTemplateBase] !== undefined) remove.push(Keys.podTemplateBase);
      warnings.push(
        `claimstep dropped the pod template it held in ${Keys.podTemplate} for ${name}: no claim template is added or removed any more, and this update's pod template applies as it is`,
      );
    }
  } else if (
    requestedTemplate !== undefined &&
    template(old) !== undefined &&
    !sameJson(requestedTemplate, template(old))
  ) {
    patch.push({ op: "replace", path: "/spec/template", value: template(old) });
    annotations[Keys.podTemplate] = JSON.stringify(requestedTemplate);
    annotations[Keys.podTemplateBase] = podTemplateDigest(template(old));
    warnings.push(
      `claimstep holds back this update's pod template change of ${name} (the API server refuses a pod template that mounts a volume the set does not have yet): it is kept in ${Keys.podTemplate} and applied when claimstep re-creates the set; the pods keep the current template until then`,
    );
  } else if (carriesHeld)
    warnings.push(
      `the pod template ${Keys.podTemplate} holds for ${name} stays held (this update does not change spec.template); claimstep applies it when it re-creates the set`,
    );

  // Templates moved here are re-created into spec once complete (as for any template change).
  const finalize = set.metadata.annotations?.[Keys.finalize];
  const recreates = added.length > 0 || removing.some((n) => liveNames.has(n));
  if (claimstepsFinalize(set)) Object.assign(annotations, recreateFor(set, revisionOf(requested)));
  if (!recreates) {
    if (!warnings.length)
      warnings.push(
        `claimstep recorded the claim templates of ${name} in ${Keys.templates}; see \`claimstep status ${setName}\``,
      );
  } else if (finalize === undefined || finalize === "Recreate") {
    // Said before it happens: the re-create, when, and why (who wrote Recreate, and for how long).
    const outlook = recreateOutlook(storedWith(c.base, set, annotations, remove));
    if (outlook) warnings.push(`claimstep: ${outlook.text}`);
  } else {
    const ns = name.slice(0, name.indexOf("/"));
    warnings.push(
      `StatefulSet ${name} says ${Keys.finalize}: ${finalize}; adding or removing a claim template needs the set re-created: the change waits until you set ${Keys.finalize}: Recreate (\`kubectl annotate sts -n ${ns} ${setName} ${Keys.finalize}=Recreate --overwrite\`) or run \`claimstep finalize ${setName}\``,
    );
  }
  return finish(uid, name, set, patch, annotations, remove, warnings);
}

type SetLike = z.infer<typeof SetShape>;

/** The set as stored once the patch applied: the stored templates, the request's annotations with claimstep's. */
function storedWith(
  base: StatefulSet,
  set: SetLike,
  annotations: Record<string, string>,
  remove: readonly string[],
): StatefulSet {
  const after: Record<string, string> = { ...set.metadata.annotations, ...annotations };
  for (const key of remove) delete after[key];
  return { ...base, metadata: { ...base.metadata, annotations: after } };
}

/** `claimstep.io/finalize` is absent, or a Recreate claimstep wrote (with `claimstep.io/finalize-for`): the webhook writes it for each change. */
const claimstepsFinalize = (set: SetLike): boolean => {
  const a = set.metadata.annotations ?? {};
  return a[Keys.finalize] === undefined || (a[Keys.finalize] === "Recreate" && a[Keys.finalizeFor] !== undefined);
};
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
  setName: string,
  stored: readonly ClaimTemplate[],
  desired: readonly ClaimTemplate[],
): string[] {
  const out: string[] = [];
  const byName = firstByName(stored);
  for (const d of desired) {
    const s = byName.get(d.metadata.name);
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
  return out;
}

/** Templates by name, the first of a name winning (as `find` does). */
function firstByName(ts: readonly ClaimTemplate[]): Map<string, ClaimTemplate> {
  const out = new Map<string, ClaimTemplate>();
  for (const t of ts) if (!out.has(t.metadata.name)) out.set(t.metadata.name, t);
  return out;
}
