// Writes of a StatefulSet over HTTP — `PUT` (update), `PATCH` with a JSON merge patch, and
// server-side apply (`application/apply-patch+yaml`) — as the API server handles them: the
// request is merged onto the stored object and defaulted, then goes through the mutating
// admission webhooks (admission-webhooks.ts), then through validation (SimApi: the 422 of a
// claim template change) and into the store, unless `?dryRun=All`. Webhook warnings go back as
// `Warning: 299 - "…"` headers, refusals included. The write itself is SimApi.mergePatch (faults,
// preconditions, audit), given the merge patch from the stored object to the admitted one.
import { ApiError, apiErrorFrom } from "../api-error.js";
import { celEquals, type SimWebhooks, type UserInfo, warningHeader } from "./admission-webhooks.js";
import { mergePatchFor, mergePatchJson, type SimApi } from "./api.js";
import { validateSetVolumes } from "./apiserver-checks.js";
import type { VirtualClock } from "./clock.js";
import { defaultRetentionPolicy, defaultStatefulSet } from "./defaults.js";
import { applyConflict, failure, invalid, notFound, staleResourceVersion } from "./errors.js";
import type { RequestInfo } from "./http.js";
import { type Json, RESOURCES, type Store } from "./store.js";

export interface SetWriteContext {
  /** The API with faults (what HTTP requests reach). */
  api: SimApi;
  store: Store;
  clock: VirtualClock;
  webhooks: SimWebhooks;
}

const APPLY = "application/apply-patch+yaml";
const MERGE = "application/merge-patch+json";
const STS = RESOURCES.statefulsets;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

const badRequest = (message: string) => apiErrorFrom(400, failure(400, "BadRequest", message));

function respond(
  body: unknown,
  code: number,
  warnings: readonly string[],
  extra: Record<string, string> = {},
): Response {
  const headers = new Headers({ "Content-Type": "application/json", ...extra });
  for (const w of warnings) headers.append("Warning", warningHeader(w));
  return new Response(JSON.stringify(body), { status: code, headers });
}

function refusal(err: ApiError, warnings: readonly string[]): Response {
  const body = err.status ?? failure(err.code || 500, "InternalError", err.message);
  return respond(
    body,
    err.code || 500,
    warnings,
    err.retryAfterSeconds !== undefined ? { "Retry-After": String(err.retryAfterSeconds) } : {},
  );
}

/** What a write may not carry over from the stored object: the server's own metadata and the status. */
function comparable(o: Json): Json {
  const { apiVersion: _a, kind: _k, status: _s, ...rest } = structuredClone(o);
  const m = { ...((rest.metadata as Json | undefined) ?? {}) };
  for (const k of ["managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink"])
    delete m[k];
  return { ...rest, metadata: m };
}

/**
 * `value` with every part equal in content to the same part of `reference` replaced by the
 * reference's (its key order): a webhook's answer comes back through JSON parsers that reorder
 * keys, and the merge patch to store must not see a change where there is none.
 */
export function alignTo(value: unknown, reference: unknown): unknown {
  if (celEquals(value, reference)) return structuredClone(reference);
  if (Array.isArray(value) && Array.isArray(reference))
    return value.map((v, i) => (i < reference.length ? alignTo(v, reference[i]) : v));
  if (isObject(value) && isObject(reference))
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, Object.hasOwn(reference, k) ? alignTo(v, reference[k]) : v]),
    );
  return value;
}

/** `PUT` or `PATCH` of `statefulsets/<name>`. */
export async function writeStatefulSet(
  ctx: SetWriteContext,
  r: RequestInfo,
  actor: string,
  user: UserInfo,
): Promise<Response> {
  const warnings: string[] = [];
  try {
    return await write(ctx, r, actor, user, warnings);
  } catch (err) {
    if (err instanceof ApiError) return refusal(err, warnings);
    throw err;
  }
}

async function write(
  ctx: SetWriteContext,
  r: RequestInfo,
  actor: string,
  user: UserInfo,
  warnings: string[],
): Promise<Response> {
  const w = setWrite(ctx, r, actor, user, warnings);
  const requested = await requestedSet(w);
  if (requested instanceof Response) return requested;
  checkPrecondition(w, requested);
  decode(w, requested);
  const admitted = await admit(w, requested);
  const stored = await ctx.api.mergePatch("statefulsets", w.namespace, w.name, patchToStore(requested, admitted), {
    fieldManager: actor,
    ...(w.dryRun ? { dryRun: w.dryRun } : {}),
  });
  return respond(stored, 200, warnings);
}

/** One write of a set: the request, who sends it, and the stored set it meets. */
interface SetWrite {
  ctx: SetWriteContext;
  r: RequestInfo;
  namespace: string;
  name: string;
  actor: string;
  user: UserInfo;
  warnings: string[];
  dryRun: boolean;
  fieldValidation: string | undefined;
  live: Json | undefined;
  liveView: Json | undefined;
  /** Records the write's refusal in the audit log. */
  audit: (outcome: number, body?: Json) => void;
}

/** What the request asks of a set that exists: the set as it would be, the resourceVersion it requires. */
interface Requested {
  next: Json;
  liveView: Json;
  precondition: string | undefined;
  /** The request's own merge patch, stored as it is when admission changed nothing. */
  forward?: Json;
}

function setWrite(ctx: SetWriteContext, r: RequestInfo, actor: string, user: UserInfo, warnings: string[]): SetWrite {
  const namespace = r.namespace!;
  const name = r.name!;
  const dryRunValue = r.query.get("dryRun");
  if (dryRunValue !== null && dryRunValue !== "All")
    throw badRequest(`dryRun: Unsupported value: ${JSON.stringify(dryRunValue)}: supported values: "All"`);
  const fieldValidation = r.query.get("fieldValidation") ?? undefined;
  const live = ctx.store.peek("statefulsets", namespace, name);
  const liveView = live ? (structuredClone(ctx.store.view("statefulsets", live)) as Json) : undefined;
  const audit = (outcome: number, body?: Json) =>
    ctx.store.record({
      actor,
      verb: r.contentType === APPLY ? "apply" : r.verb === "update" ? "update" : "patch",
      resource: "statefulsets",
      namespace,
      name,
      outcome,
      ...(body ? { body } : {}),
      ...(live ? { before: structuredClone(live) } : {}),
    });
  const dryRun = dryRunValue === "All";
  return { ctx, r, namespace, name, actor, user, warnings, dryRun, fieldValidation, live, liveView, audit };
}

/** The set the request asks for, by its kind of write; or the answer when there is no set to update. */
async function requestedSet(w: SetWrite): Promise<Requested | Response> {
  const { r } = w;
  if (r.verb === "patch" && r.contentType === MERGE) return mergePatched(w);
  if (r.verb === "update") return updated(w);
  if (r.verb === "patch" && r.contentType === APPLY) return applied(w);
  throw apiErrorFrom(
    415,
    failure(
      415,
      "UnsupportedMediaType",
      `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
    ),
  );
}

async function mergePatched(w: SetWrite): Promise<Requested | Response> {
  const patch = w.r.body;
  if (!isObject(patch)) throw badRequest("a merge patch must be a JSON object");
  // No set: SimApi's merge patch gives the answer (its 404) and records it.
  if (!w.liveView)
    return respond(
      await w.ctx.api.mergePatch("statefulsets", w.namespace, w.name, patch, { fieldManager: w.actor }),
      200,
      w.warnings,
    );
  return {
    liveView: w.liveView,
    forward: patch,
    precondition: isObject(patch.metadata) ? (patch.metadata.resourceVersion as string | undefined) : undefined,
    next: mergePatchJson(w.liveView, patch) as Json,
  };
}

function updated(w: SetWrite): Requested {
  const body = w.r.body;
  if (!isObject(body) || !isObject(body.metadata))
    throw badRequest("the body of a PUT must be a StatefulSet with metadata");
  if (body.kind !== undefined && body.kind !== STS.kind)
    throw badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (StatefulSet)`);
  checkNamed(w, body.metadata);
  if (!w.liveView) {
    w.audit(404, body);
    throw notFound(STS, w.name);
  }
  return {
    liveView: w.liveView,
    precondition: body.metadata.resourceVersion as string | undefined,
    next: { ...structuredClone(body), metadata: { ...structuredClone(body.metadata), namespace: w.namespace } },
  };
}

async function applied(w: SetWrite): Promise<Requested | Response> {
  const applied = w.r.body;
  if (!isObject(applied) || !isObject(applied.metadata))
    throw badRequest("the apply patch must be an object with metadata");
  if (applied.apiVersion !== STS.apiVersion || applied.kind !== STS.kind)
    throw badRequest(
      `the apply configuration must be apiVersion: apps/v1, kind: StatefulSet, not ${String(applied.apiVersion)} ${String(applied.kind)}`,
    );
  checkNamed(w, applied.metadata);
  const { config, precondition } = applyConfiguration(applied, w.namespace);
  if (!w.liveView) return create(w.ctx, config, w.actor, w.dryRun, w.warnings);
  return { liveView: w.liveView, precondition, next: appliedOntoLive(w, applied, config) };
}

/** The body's name and namespace against the URL's (a PUT's and an apply's). */
function checkNamed(w: SetWrite, metadata: Json): void {
  if (metadata.name !== w.name)
    throw badRequest(
      `the name of the object (${String(metadata.name)}) does not match the name on the URL (${w.name})`,
    );
  if (metadata.namespace !== undefined && metadata.namespace !== w.namespace)
    throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
}

/** An apply configuration as field ownership takes it: no type, no status, its resourceVersion a precondition. */
function applyConfiguration(applied: Json, namespace: string): { config: Json; precondition: string | undefined } {
  const config = structuredClone(applied);
  delete config.apiVersion;
  delete config.kind;
  delete config.status;
  const cm: Json = { ...(config.metadata as Json), namespace };
  const precondition = cm.resourceVersion as string | undefined;
  delete cm.resourceVersion;
  config.metadata = cm;
  return { config, precondition };
}

/** The configuration applied onto the stored set by field ownership; a 409 on conflicts unless forced. */
function appliedOntoLive(w: SetWrite, applied: Json, config: Json): Json {
  const owners = w.ctx.store.owners("statefulsets", w.namespace, w.name)!.clone();
  const { merged, conflicts } = owners.apply(
    { manager: w.actor, operation: "Apply", apiVersion: STS.apiVersion },
    w.live!,
    config,
    w.r.query.get("force") === "true",
    w.ctx.clock.stamp(),
  );
  if (conflicts.length) {
    w.audit(409, applied);
    throw applyConflict(conflicts);
  }
  return { apiVersion: STS.apiVersion, kind: STS.kind, ...structuredClone(merged) };
}

function checkPrecondition(w: SetWrite, { precondition, liveView }: Requested): void {
  if (precondition !== undefined && precondition !== (liveView.metadata as Json).resourceVersion) {
    w.audit(409, isObject(w.r.body) ? w.r.body : undefined);
    throw staleResourceVersion(STS, w.name);
  }
}

/** As the API server decodes it: defaulted, the status the stored one's (the main resource ignores it). */
function decode(w: SetWrite, { next, liveView }: Requested): void {
  next.apiVersion = STS.apiVersion;
  next.kind = STS.kind;
  next.metadata = {
    ...(next.metadata as Json),
    name: w.name,
    namespace: w.namespace,
    uid: (liveView.metadata as Json).uid,
    resourceVersion: (liveView.metadata as Json).resourceVersion,
    creationTimestamp: (liveView.metadata as Json).creationTimestamp,
  };
  if (liveView.status !== undefined) next.status = structuredClone(liveView.status);
  else delete next.status;
  defaultStatefulSet(next);
}

/** The set after the mutating webhooks (the same object when there are none). */
async function admit(w: SetWrite, { next, liveView }: Requested): Promise<Json> {
  if (!w.ctx.webhooks.any()) return next;
  const result = await w.ctx.webhooks.admit({
    operation: "UPDATE",
    group: "apps",
    version: "v1",
    kind: STS.kind,
    resource: "statefulsets",
    namespace: w.namespace,
    name: w.name,
    object: next,
    oldObject: liveView,
    dryRun: w.dryRun,
    userInfo: w.user,
    fieldManager: w.actor,
    ...(w.fieldValidation ? { fieldValidation: w.fieldValidation } : {}),
  });
  w.warnings.push(...result.warnings);
  return alignTo(result.object, liveView) as Json;
}

/** The merge patch to store: the request's own when admission changed nothing, else stored → admitted. */
function patchToStore({ next, liveView, precondition, forward }: Requested, admitted: Json): Json {
  if (forward && celEquals(admitted, next)) return forward;
  const patch = mergePatchFor(comparable(liveView), comparable(admitted)) as Json;
  if (precondition !== undefined)
    patch.metadata = { ...((patch.metadata as Json | undefined) ?? {}), resourceVersion: precondition };
  return patch;
}

/** Server-side apply of a set that does not exist: a create (no UPDATE webhook applies). */
async function create(
  ctx: SetWriteContext,
  config: Json,
  actor: string,
  dryRun: boolean,
  warnings: string[],
): Promise<Response> {
  const obj = { apiVersion: STS.apiVersion, kind: STS.kind, ...config };
  if (dryRun) {
    const preview = structuredClone(obj);
    defaultStatefulSet(preview);
    defaultRetentionPolicy(preview);
    const errors = validateSetVolumes(preview);
    if (errors.length) throw invalid(STS, String((config.metadata as Json | undefined)?.name ?? ""), errors);
    return respond(preview, 201, warnings);
  }
  return respond(await ctx.api.create("statefulsets", obj, { fieldManager: actor }), 201, warnings);
}
