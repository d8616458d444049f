// The API server's refusals, as `Status` bodies shaped exactly like the captured responses in
// fixtures/apiserver/ (names substituted), turned into ApiError the way every adapter does.
import { type ApiError, apiErrorFrom } from "../api-error.js";

/** How the API server names a resource in messages: `persistentvolumeclaims`, `statefulsets.apps`. */
export interface ResourceName {
  plural: string;
  group: string;
  kind: string;
}

const qualified = (r: ResourceName): string => (r.group ? `${r.plural}.${r.group}` : r.plural);
const groupDetail = (r: ResourceName) => (r.group ? { group: r.group } : {});
/** How a precondition failure names the kind: `Pod`, `StatefulSet.apps` (sts-delete-orphan-stale-rv.txt). */
const qualifiedKind = (r: ResourceName): string => (r.group ? `${r.kind}.${r.group}` : r.kind);

/** A Status body of a refusal, as the API server writes it. */
export const failure = (code: number, reason: string, message: string, details?: Record<string, unknown>) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason,
  ...(details ? { details } : {}),
  code,
});

export function notFound(r: ResourceName, name: string): ApiError {
  return apiErrorFrom(
    404,
    failure(404, "NotFound", `${qualified(r)} "${name}" not found`, { name, ...groupDetail(r), kind: r.plural }),
  );
}

export function alreadyExists(r: ResourceName, name: string): ApiError {
  return apiErrorFrom(
    409,
    failure(409, "AlreadyExists", `${qualified(r)} "${name}" already exists`, {
      name,
      ...groupDetail(r),
      kind: r.plural,
    }),
  );
}

/** A write carrying a stale metadata.resourceVersion (pvc-patch-stale-rv.txt). */
export function staleResourceVersion(r: ResourceName, name: string): ApiError {
  return apiErrorFrom(
    409,
    failure(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${qualified(r)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      { name, ...groupDetail(r), kind: r.plural },
    ),
  );
}

/** DELETE with preconditions.uid that does not match (pod-delete-uid-mismatch.txt). */
export function uidPreconditionFailed(r: ResourceName, name: string, wanted: string, actual: string): ApiError {
  return apiErrorFrom(
    409,
    failure(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${qualifiedKind(r)} "${name}": the UID in the precondition (${wanted}) does not match the UID in record (${actual}). The object might have been deleted and then recreated`,
      { name, ...groupDetail(r), kind: r.kind },
    ),
  );
}

/** DELETE with preconditions.resourceVersion that does not match (sts-delete-orphan-stale-rv.txt). */
export function resourceVersionPreconditionFailed(
  r: ResourceName,
  name: string,
  wanted: string,
  actual: string,
): ApiError {
  return apiErrorFrom(
    409,
    failure(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${qualifiedKind(r)} "${name}": the ResourceVersion in the precondition (${wanted}) does not match the ResourceVersion in record (${actual}). The object might have been modified`,
      { name, ...groupDetail(r), kind: r.kind },
    ),
  );
}

export interface ManagerRef {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  subresource?: string;
}

/** How structured-merge-diff prints a manager: `"kube-controller-manager" using v1` for Update managers. */
export const printManager = (m: ManagerRef): string => {
  const name = `"${m.manager}"${m.subresource ? ` with subresource "${m.subresource}"` : ""}`;
  return m.operation === "Update" ? `${name} using ${m.apiVersion}` : name;
};

/** A non-forced server-side apply over fields another manager owns (pvc-apply-conflict.txt). */
export function applyConflict(conflicts: { manager: ManagerRef; field: string }[]): ApiError {
  let message: string;
  if (conflicts.length === 1) {
    const c = conflicts[0]!;
    message = `Apply failed with 1 conflict: conflict with ${printManager(c.manager)}: ${c.field}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) {
      const key = printManager(c.manager);
      byManager.set(key, [...(byManager.get(key) ?? []), c.field]);
    }
    const lines = [...byManager.keys()]
      .sort()
      .flatMap((m) => [`conflicts with ${m}:`, ...byManager.get(m)!.map((f) => `- ${f}`)]);
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join("\n")}`;
  }
  return apiErrorFrom(
    409,
    failure(409, "Conflict", message, {
      causes: conflicts.map((c) => ({
        reason: "FieldManagerConflict",
        message: `conflict with ${printManager(c.manager)}`,
        field: c.field,
      })),
    }),
  );
}

/** One field error of a validation failure (k8s.io/apimachinery field.Error). */
export type FieldError =
  | { type: "Forbidden"; field: string; detail: string }
  | { type: "Required"; field: string; detail?: string }
  /** `raw`: the value is printed as given (a number, or JSON already), not quoted as a string. */
  | { type: "Invalid"; field: string; value: string; detail: string; raw?: boolean }
  | { type: "TooLong"; field: string; limit: number }
  /** field.NotFound: the value names something that does not exist (a mount's volume). */
  | { type: "NotFound"; field: string; value: string };

const causeReason: Record<FieldError["type"], string> = {
  Forbidden: "FieldValueForbidden",
  Required: "FieldValueRequired",
  Invalid: "FieldValueInvalid",
  TooLong: "FieldValueTooLong",
  NotFound: "FieldValueNotFound",
};

const errorBody = (e: FieldError): string => {
  switch (e.type) {
    case "Forbidden":
      return `Forbidden: ${e.detail}`;
    case "Required":
      return e.detail ? `Required value: ${e.detail}` : "Required value";
    case "Invalid":
      return `Invalid value: ${e.raw ? e.value : JSON.stringify(e.value)}: ${e.detail}`;
    case "TooLong":
      return `Too long: may not be more than ${e.limit} bytes`;
    case "NotFound":
      return `Not found: ${JSON.stringify(e.value)}`;
  }
};

/** 422 Invalid: `PersistentVolumeClaim "x" is invalid: <field>: <body>` (several errors in brackets). */
export function invalid(r: ResourceName, name: string, errors: FieldError[]): ApiError {
  const texts = errors.map((e) => `${e.field}: ${errorBody(e)}`);
  const kindName = r.group ? `${r.kind}.${r.group}` : r.kind;
  const message = `${kindName} "${name}" is invalid: ${texts.length === 1 ? texts[0] : `[${texts.join(", ")}]`}`;
  return apiErrorFrom(
    422,
    failure(422, "Invalid", message, {
      name,
      ...groupDetail(r),
      kind: r.kind,
      causes: errors.map((e) => ({ reason: causeReason[e.type], message: errorBody(e), field: e.field })),
    }),
  );
}

/** 403 from an admission plugin: `persistentvolumeclaims "x" is forbidden: <why>`. */
export function admissionForbidden(r: ResourceName, name: string, why: string): ApiError {
  return apiErrorFrom(
    403,
    failure(403, "Forbidden", `${qualified(r)} "${name}" is forbidden: ${why}`, {
      name,
      ...groupDetail(r),
      kind: r.plural,
    }),
  );
}

/** 429 from API Priority and Fairness, with Retry-After. */
export function tooManyRequests(retryAfterSeconds: number, request: string): ApiError {
  return apiErrorFrom(
    429,
    failure(429, "TooManyRequests", "Too many requests, please try again later.", { retryAfterSeconds }),
    { retryAfterSeconds, request },
  );
}

export function internalError(request: string): ApiError {
  const cause = "etcdserver: leader changed";
  return apiErrorFrom(
    500,
    failure(500, "InternalError", `Internal error occurred: ${cause}`, { causes: [{ message: cause }] }),
    { request },
  );
}

export function serverTimeout(request: string): ApiError {
  return apiErrorFrom(
    504,
    failure(
      504,
      "Timeout",
      "Timeout: request did not complete within requested timeout - context deadline exceeded",
      {},
    ),
    { request },
  );
}

// The Eviction subresource (pkg/registry/core/pod/storage/eviction.go).

const EVICTION_BLOCKED = "Cannot evict pod as it would violate the pod's disruption budget.";

/** 429: the budget allows no disruption now (pod-evict-pdb-blocked.txt). */
export function evictionBlocked(budget: string, desiredHealthy: number, currentHealthy: number): ApiError {
  return apiErrorFrom(
    429,
    failure(429, "TooManyRequests", EVICTION_BLOCKED, {
      causes: [
        {
          reason: "DisruptionBudget",
          message: `The disruption budget ${budget} needs ${desiredHealthy} healthy pods and has ${currentHealthy} currently`,
        },
      ],
    }),
  );
}

/** 429 with Retry-After 10: the disruption controller has not yet observed the budget's generation. */
export function evictionBudgetNotObserved(budget: string): ApiError {
  return apiErrorFrom(
    429,
    failure(429, "TooManyRequests", EVICTION_BLOCKED, {
      causes: [
        {
          reason: "DisruptionBudget",
          message: `The disruption budget ${budget} is still being processed by the server.`,
        },
      ],
      retryAfterSeconds: 10,
    }),
    { retryAfterSeconds: 10 },
  );
}

/** The answer (a Status, code 500) when more than one budget selects the pod. */
export const evictionManyBudgets = () => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
  code: 500,
});

/** 201: the pod was evicted (pod-evict-ok.txt). */
export const evictionSucceeded = () => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Success",
  code: 201,
});

// Refusals of the HTTP layer (authentication, RBAC, routing, bodies), as Status bodies.

/** RBAC's refusal: names the user, the verb and the resource (forbidden.txt). */
export function forbiddenByRbac(
  user: string,
  verb: string,
  r: ResourceName,
  namespace: string | undefined,
  name?: string,
  subresource?: string,
): ApiError {
  const scope = namespace ? `in the namespace "${namespace}"` : "at the cluster scope";
  const subject = name !== undefined ? `${qualified(r)} "${name}"` : qualified(r);
  // The authorizer names a subresource with its resource: `pods/eviction`.
  const resource = subresource ? `${r.plural}/${subresource}` : r.plural;
  return apiErrorFrom(
    403,
    failure(
      403,
      "Forbidden",
      `${subject} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${r.group}" ${scope}`,
      {
        ...(name !== undefined ? { name } : {}),
        ...groupDetail(r),
        kind: r.plural,
      },
    ),
  );
}

/** A missing or unknown bearer token (unauthorized.txt). */
export const unauthorized = (): ApiError => apiErrorFrom(401, failure(401, "Unauthorized", "Unauthorized"));

/** A URL the server has no handler for (a group/version it does not serve). */
export const notServed = (): ApiError =>
  apiErrorFrom(404, failure(404, "NotFound", "the server could not find the requested resource", {}));

export const badRequest = (message: string): ApiError => apiErrorFrom(400, failure(400, "BadRequest", message));

export const methodNotAllowed = (): ApiError =>
  apiErrorFrom(
    405,
    failure(405, "MethodNotAllowed", "the server does not allow this method on the requested resource"),
  );

export const unsupportedMediaType = (): ApiError =>
  apiErrorFrom(
    415,
    failure(
      415,
      "UnsupportedMediaType",
      "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    ),
  );

export const serviceUnavailable = (): ApiError =>
  apiErrorFrom(503, failure(503, "ServiceUnavailable", "the server is currently unable to handle the request"));

/** A list continued with a token older than the compaction window. */
export const continueExpired = (): ApiError =>
  apiErrorFrom(
    410,
    failure(
      410,
      "Expired",
      "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    ),
  );

/** An apply without `fieldManager`. */
export const fieldManagerRequired = (): ApiError =>
  apiErrorFrom(
    422,
    failure(
      422,
      "Invalid",
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      {
        group: "meta.k8s.io",
        kind: "PatchOptions",
        causes: [
          {
            reason: "FieldValueRequired",
            message: "Required value: is required for apply patch",
            field: "fieldManager",
          },
        ],
      },
    ),
  );
