// One error type for every way the API server (real, faked or simulated) says no, parsed from its
// `Status` body so callers branch on reason/code, not on message text.
import { Status } from "../core/kube/index.js";

export type ApiErrorKind =
  | "NotFound"
  | "Conflict"
  | "AlreadyExists"
  | "Invalid"
  | "Forbidden"
  | "Unauthorized"
  | "TooManyRequests"
  | "ServerError"
  | "Timeout"
  /** An answer without a Kubernetes `Status` body where the API server always sends one: not an API server. */
  | "NotKubernetes"
  | "Other";

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly code: number,
    readonly kind: ApiErrorKind,
    message: string,
    readonly status?: Status,
    /** Seconds the server asked us to wait (Retry-After header or details.retryAfterSeconds). */
    readonly retryAfterSeconds?: number,
    /** What was being done, e.g. `GET statefulsets default/web`. */
    readonly request?: string,
  ) {
    super(message);
  }

  get reason(): string | undefined {
    return this.status?.reason;
  }

  get causes(): StatusCause[] {
    return this.status?.details?.causes ?? [];
  }

  /** RBAC's refusal, read from its message: who may not do which verb on which resource. */
  get rbacRefusal(): RbacRefusal | undefined {
    if (this.code !== 403) return undefined;
    const m = RBAC_REFUSAL.exec(this.message);
    if (!m) return undefined;
    return {
      user: m[1]!,
      verb: m[2]!,
      resource: m[3]!,
      group: m[4] ?? this.status?.details?.group ?? "",
      scope: m[5] ?? "",
    };
  }

  /** 403 from an admission plugin (vs RBAC's "cannot <verb> resource"). */
  get isAdmissionForbidden(): boolean {
    return this.code === 403 && !/ cannot [a-z]+ resource /.test(this.message);
  }

  get isFieldManagerConflict(): boolean {
    return this.code === 409 && this.causes.some((c) => c.reason === "FieldManagerConflict");
  }

  /** Worth retrying later without changing anything: 409 stale/lost race, 429, 5xx, timeouts. */
  get isTransient(): boolean {
    return (
      this.kind === "TooManyRequests" ||
      this.kind === "ServerError" ||
      this.kind === "Timeout" ||
      (this.kind === "Conflict" && !this.isFieldManagerConflict)
    );
  }
}

/** Who may not do what, as RBAC's refusal says it. */
export interface RbacRefusal {
  /** `system:serviceaccount:claimstep:claimstep`, `jane`. */
  user: string;
  verb: string;
  /** The plural resource, with its subresource when there is one (`pods/eviction`). */
  resource: string;
  /** API group; "" is the core group. */
  group: string;
  /** `at the cluster scope`, `in the namespace "db"`. */
  scope: string;
}

// `statefulsets.apps is forbidden: User "system:serviceaccount:claimstep:claimstep" cannot watch
// resource "statefulsets" in API group "apps" at the cluster scope` (fixtures/apiserver/forbidden.txt).
const RBAC_REFUSAL =
  /User "([^"]+)" cannot ([a-z]+) resource "([^"]+)"(?: in API group "([^"]*)")? ?(at the cluster scope|in the namespace "[^"]*")?/;

/** Whether a body is the API server's `Status` (every refusal of a real API server carries one). */
export const isKubernetesStatus = (body: unknown): boolean =>
  typeof body === "object" && body !== null && (body as { kind?: unknown }).kind === "Status";

const kindOf = (code: number, reason: string | undefined): ApiErrorKind => {
  switch (reason) {
    case "NotFound":
    case "Conflict":
    case "AlreadyExists":
    case "Invalid":
    case "Forbidden":
    case "Unauthorized":
    case "TooManyRequests":
      return reason;
    case "Timeout":
    case "ServerTimeout":
      return "Timeout";
  }
  if (code === 404) return "NotFound";
  if (code === 409) return "Conflict";
  if (code === 422) return "Invalid";
  if (code === 403) return "Forbidden";
  if (code === 401) return "Unauthorized";
  if (code === 429) return "TooManyRequests";
  if (code === 504) return "Timeout";
  if (code >= 500) return "ServerError";
  return "Other";
};

/** Build an ApiError from an HTTP status code and a response body (a Status, or anything else). */
export function apiErrorFrom(
  code: number,
  body: unknown,
  opts: { retryAfterSeconds?: number; request?: string } = {},
): ApiError {
  const parsed = Status.safeParse(body);
  const status = parsed.success ? parsed.data : undefined;
  const message =
    status?.message ?? (typeof body === "string" && body.trim() ? body.trim().slice(0, 500) : `HTTP ${code}`);
  const retry = opts.retryAfterSeconds ?? status?.details?.retryAfterSeconds;
  return new ApiError(code, kindOf(code, status?.reason), message, status, retry, opts.request);
}

/** RBAC refusals are configuration errors, not rollout states: say which permission is missing. */
export class PermissionError extends Error {
  override readonly name = "PermissionError";
  constructor(override readonly cause: ApiError) {
    super(
      `missing permission: ${cause.message}. Grant it in the claimstep ClusterRole (deploy/kubernetes/rbac.yaml; re-creating sets needs the claimstep-finalize one, rbac-finalize.yaml).`,
    );
  }
}
