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
import { applyConflict, invalid, notFound, staleResourceVersion } from "./errors.js";
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

const status = (code: number, reason: string, message: string): Json => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason,
  code,
});
const badRequest = (message: string) => apiErrorFrom(400, status(400, "BadRequest", message));

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
  const body = err.status ?? status(err.code || 500, "InternalError", err.message);
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
  const namespace = r.namespace!;
  const name = r.name!;
  const dryRunValue = r.query.get("dryRun");
  if (dryRunValue !== null && dryRunValue !== "All")
    throw badRequest(`dryRun: Unsupported value: ${JSON.stringify(dryRunValue)}: supported values: "All"`);
  const dryRun = dryRunValue === "All";
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

  let next: Json;
  let precondition: string | undefined;
  let forward: Json | undefined; // the request's own merge patch, when admission changed nothing
  if (r.verb === "patch" && r.contentType === MERGE) {
    if (!isObject(r.body)) throw badRequest("a merge patch must be a JSON object");
    if (!liveView)
      return respond(
        await ctx.api.mergePatch("statefulsets", namespace, name, r.body, { fieldManager: actor }),
        200,
        warnings,
      );
    forward = r.body;
    precondition = isObject(r.body.metadata) ? (r.body.metadata.resourceVersion as string | undefined) : undefined;
    next = mergePatchJson(liveView, r.body) as Json;
  } else if (r.verb === "update") {
    const body = r.body;
    if (!isObject(body) || !isObject(body.metadata))
      throw badRequest("the body of a PUT must be a StatefulSet with metadata");
    if (body.kind !== undefined && body.kind !== STS.kind)
      throw badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (StatefulSet)`);
    if (body.metadata.name !== name)
      throw badRequest(
        `the name of the object (${String(body.metadata.name)}) does not match the name on the URL (${name})`,
      );
    if (body.metadata.namespace !== undefined && body.metadata.namespace !== namespace)
      throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
    if (!liveView) {
      audit(404, body);
      throw notFound(STS, name);
    }
    precondition = body.metadata.resourceVersion as string | undefined;
    next = { ...structuredClone(body), metadata: { ...structuredClone(body.metadata), namespace } };
  } else if (r.verb === "patch" && r.contentType === APPLY) {
    const applied = r.body;
    if (!isObject(applied) || !isObject(applied.metadata))
      throw badRequest("the apply patch must be an object with metadata");
    if (applied.apiVersion !== STS.apiVersion || applied.kind !== STS.kind)
      throw badRequest(
        `the apply configuration must be apiVersion: apps/v1, kind: StatefulSet, not ${String(applied.apiVersion)} ${String(applied.kind)}`,
      );
    if (applied.metadata.name !== name)
      throw badRequest(
        `the name of the object (${String(applied.metadata.name)}) does not match the name on the URL (${name})`,
      );
    if (applied.metadata.namespace !== undefined && applied.metadata.namespace !== namespace)
      throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
    const config = structuredClone(applied);
    delete config.apiVersion;
    delete config.kind;
    delete config.status;
    const cm: Json = { ...(config.metadata as Json), namespace };
    precondition = cm.resourceVersion as string | undefined;
    delete cm.resourceVersion;
    config.metadata = cm;
    if (!liveView) return create(ctx, config, actor, dryRun, warnings);
    const owners = ctx.store.owners("statefulsets", namespace, name)!.clone();
    const { merged, conflicts } = owners.apply(
      { manager: actor, operation: "Apply", apiVersion: STS.apiVersion },
      live!,
      config,
      r.query.get("force") === "true",
      ctx.clock.stamp(),
    );
    if (conflicts.length) {
      audit(409, applied);
      throw applyConflict(conflicts);
    }
    next = { apiVersion: STS.apiVersion, kind: STS.kind, ...structuredClone(merged) };
  } else {
    throw apiErrorFrom(
      415,
      status(
        415,
        "UnsupportedMediaType",
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
      ),
    );
  }

  if (precondition !== undefined && precondition !== (liveView.metadata as Json).resourceVersion) {
    audit(409, isObject(r.body) ? r.body : undefined);
    throw staleResourceVersion(STS, name);
  }
  // As the API server decodes it: defaulted, the status the stored one's (the main resource ignores it).
  next.apiVersion = STS.apiVersion;
  next.kind = STS.kind;
  next.metadata = {
    ...(next.metadata as Json),
    name,
    namespace,
    uid: (liveView.metadata as Json).uid,
    resourceVersion: (liveView.metadata as Json).resourceVersion,
    creationTimestamp: (liveView.metadata as Json).creationTimestamp,
  };
  if (liveView.status !== undefined) next.status = structuredClone(liveView.status);
  else delete next.status;
  defaultStatefulSet(next);

  let admitted = next;
  if (ctx.webhooks.any()) {
    const result = await ctx.webhooks.admit({
      operation: "UPDATE",
      group: "apps",
      version: "v1",
      kind: STS.kind,
      resource: "statefulsets",
      namespace,
      name,
      object: next,
      oldObject: liveView,
      dryRun,
      userInfo: user,
      fieldManager: actor,
      ...(fieldValidation ? { fieldValidation } : {}),
    });
    warnings.push(...result.warnings);
    admitted = alignTo(result.object, liveView) as Json;
  }
  let patch: Json;
  if (forward && celEquals(admitted, next)) patch = forward;
  else {
    patch = mergePatchFor(comparable(liveView), comparable(admitted)) as Json;
    if (precondition !== undefined)
      patch.metadata = { ...((patch.metadata as Json | undefined) ?? {}), resourceVersion: precondition };
  }
  const stored = await ctx.api.mergePatch("statefulsets", namespace, name, patch, {
    fieldManager: actor,
    ...(dryRun ? { dryRun } : {}),
  });
  return respond(stored, 200, warnings);
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
