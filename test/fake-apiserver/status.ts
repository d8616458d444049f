// `Status` bodies as kube-apiserver writes them; the ones captured in fixtures/ are checked
// against them word for word (test/fake-apiserver/status.test.ts).

export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

export interface StatusBody {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure";
  message: string;
  reason: string;
  details?: Record<string, unknown>;
  code: number;
}

/** What the fake knows of a resource type (URLs, RBAC and messages use it). */
export interface ResourceType {
  resource: string;
  group: string;
  kind: string;
  namespaced: boolean;
  /** Group shown in `<Kind>.<group> "x" is invalid` messages; events.k8s.io validates as core. */
  invalidGroup: string;
}

export const failure = (code: number, reason: string, message: string, details?: Record<string, unknown>): StatusBody => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason,
  ...(details ? { details } : {}),
  code,
});

const qualified = (r: ResourceType): string => (r.group ? `${r.resource}.${r.group}` : r.resource);
const detailsOf = (r: ResourceType, name?: string) => ({ ...(name !== undefined ? { name } : {}), ...(r.group ? { group: r.group } : {}), kind: r.resource });

export const notFound = (r: ResourceType, name: string) => failure(404, "NotFound", `${qualified(r)} "${name}" not found`, detailsOf(r, name));

/** A URL the server has no handler for (e.g. a group/version it does not serve). */
export const notServed = () => failure(404, "NotFound", "the server could not find the requested resource", {});

export const alreadyExists = (r: ResourceType, name: string) =>
  failure(409, "AlreadyExists", `${qualified(r)} "${name}" already exists`, detailsOf(r, name));

export const modified = (r: ResourceType, name: string) =>
  failure(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualified(r)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    detailsOf(r, name),
  );

export const uidMismatch = (r: ResourceType, name: string, precondition: string, actual: string) =>
  failure(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${r.kind} "${name}": the UID in the precondition (${precondition}) does not match the UID in record (${actual}). The object might have been deleted and then recreated`,
    { name, kind: r.kind },
  );

/** A server-side apply that would take fields another manager owns, without force. */
export function applyConflict(conflicts: { manager: string; field: string }[]) {
  const managers = [...new Set(conflicts.map((c) => c.manager))];
  const message =
    conflicts.length === 1
      ? `Apply failed with 1 conflict: conflict with "${conflicts[0]!.manager}" using v1: ${conflicts[0]!.field}`
      : `Apply failed with ${conflicts.length} conflicts: conflicts with ${managers.map((m) => `"${m}"`).join(", ")} using v1:\n${conflicts.map((c) => `- ${c.field}`).join("\n")}`;
  return failure(409, "Conflict", message, {
    causes: conflicts.map((c) => ({ reason: "FieldManagerConflict", message: `conflict with "${c.manager}" using v1`, field: c.field })),
  });
}

export function invalid(r: ResourceType, name: string, causes: StatusCause[]) {
  const what = r.invalidGroup ? `${r.kind}.${r.invalidGroup}` : r.kind;
  const listed = causes.map((c) => `${c.field}: ${c.message}`);
  const message = `${what} "${name}" is invalid: ${listed.length === 1 ? listed[0] : `[${listed.join(", ")}]`}`;
  return failure(422, "Invalid", message, { name, ...(r.invalidGroup ? { group: r.invalidGroup } : {}), kind: r.kind, causes });
}

/** RBAC's refusal: names the user, the verb and the resource. */
export function forbiddenByRbac(user: string, verb: string, r: ResourceType, namespace: string | undefined, name?: string) {
  const scope = namespace ? `in the namespace "${namespace}"` : "at the cluster scope";
  const subject = name !== undefined ? `${qualified(r)} "${name}"` : qualified(r);
  return failure(
    403,
    "Forbidden",
    `${subject} is forbidden: User "${user}" cannot ${verb} resource "${r.resource}" in API group "${r.group}" ${scope}`,
    detailsOf(r, name),
  );
}

/** An admission plugin's refusal of one object. */
export const forbiddenByAdmission = (r: ResourceType, name: string, why: string) =>
  failure(403, "Forbidden", `${qualified(r)} "${name}" is forbidden: ${why}`, detailsOf(r, name));

export const RESIZE_NOT_ALLOWED = "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize";

export const unauthorized = () => failure(401, "Unauthorized", "Unauthorized");

export const tooManyRequests = (retryAfterSeconds: number) =>
  failure(429, "TooManyRequests", "Too many requests, please try again later.", { retryAfterSeconds });

export const internalError = (cause = "etcdserver: request timed out") =>
  failure(500, "InternalError", `Internal error occurred: ${cause}`, { causes: [{ message: cause }] });

export const serviceUnavailable = () => failure(503, "ServiceUnavailable", "the server is currently unable to handle the request");

export const serverTimeout = () =>
  failure(504, "Timeout", "Timeout: request did not complete within requested timeout - context deadline exceeded", {});

export const continueExpired = () =>
  failure(
    410,
    "Expired",
    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
  );

export const badRequest = (message: string) => failure(400, "BadRequest", message);

export const methodNotAllowed = () => failure(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");

export const unsupportedMediaType = () =>
  failure(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
  );

// Validation messages of apimachinery, as the API server words them.
export const DNS1123_SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
export const SPEC_IMMUTABLE = "Forbidden: spec is immutable after creation except resources.requests for bound claims";
export const STS_SPEC_FORBIDDEN =
  "Forbidden: updates to statefulset spec for fields other than 'replicas', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";
export const SHRINK_FORBIDDEN = "Forbidden: field can not be less than previous value";
