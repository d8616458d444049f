// Every error the HTTP app answers is a `Problem`: Hono's HTTPException carrying the JSON body the
// docs/operating.md documents, `{"error","message","issues"?}` (plus a few route-specific fields), and its
// headers (Retry-After, Allow, WWW-Authenticate). Middleware and handlers throw; one error handler
// (`onError`) turns every thrown value into such a response, including the API server's errors.
import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError, PermissionError } from "../../adapters/api-error.js";

export type ProblemStatus = 400 | 401 | 403 | 404 | 405 | 408 | 409 | 413 | 415 | 500 | 502 | 503;

/** One problem of a request, with where it is (`name`, `[0].spec.resources`, `(body)`). */
export interface Issue {
  path: string;
  message: string;
}

export interface ProblemOptions {
  issues?: readonly Issue[];
  headers?: Record<string, string>;
  /** Extra fields of the body (e.g. `failure` of a refused signature, `upstream`). */
  extra?: Record<string, unknown>;
  cause?: unknown;
}

export class Problem extends HTTPException {
  readonly error: string;
  readonly issues: readonly Issue[] | undefined;
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;

  constructor(status: ProblemStatus, error: string, message: string, opts: ProblemOptions = {}) {
    super(status, { message, ...(opts.cause !== undefined ? { cause: opts.cause } : {}) });
    this.error = error;
    this.issues = opts.issues;
    this.headers = opts.headers ?? {};
    this.extra = opts.extra ?? {};
  }

  get body(): Record<string, unknown> {
    return { error: this.error, message: this.message, ...(this.issues ? { issues: this.issues } : {}), ...this.extra };
  }

  override getResponse(): Response {
    return Response.json(this.body, { status: this.status, headers: this.headers });
  }
}

/** The `error` word of each status, for HTTPExceptions thrown by Hono itself (e.g. malformed JSON). */
const ERROR_NAMES: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  409: "Conflict",
  413: "PayloadTooLarge",
  415: "UnsupportedMediaType",
  500: "InternalError",
  502: "UpstreamError",
  503: "Unavailable",
};

const respond = (c: Context, p: Problem) => {
  for (const [k, v] of Object.entries(p.headers)) c.header(k, v);
  return c.json(p.body, p.status as ContentfulStatusCode);
};

/** What a thrown value means for the caller. Unknown errors are 500 and their detail stays in the log. */
export function problemOf(err: unknown, log: (entry: Record<string, unknown>) => void): Problem {
  if (err instanceof Problem) return err;
  if (err instanceof HTTPException) {
    return new Problem(
      err.status as ProblemStatus,
      ERROR_NAMES[err.status] ?? "Error",
      err.message || `HTTP ${err.status}`,
    );
  }
  if (err instanceof ApiError) {
    if (err.kind === "NotFound") {
      const hint = /check the/.test(err.message)
        ? ""
        : ": check the namespace and name (kubectl get statefulsets -n <namespace>)";
      return new Problem(404, "NotFound", `${err.message}${hint}`);
    }
    if (err.kind === "Conflict" && !err.isFieldManagerConflict) {
      return new Problem(409, "Conflict", `the StatefulSet changed while claimstep wrote it: retry (${err.message})`);
    }
    if (err.isTransient) {
      return new Problem(503, "Unavailable", `the API server is busy or unreachable: ${err.message}`, {
        headers: { "Retry-After": String(err.retryAfterSeconds ?? 5) },
      });
    }
    log({ msg: "api error", code: err.code, reason: err.reason, request: err.request, message: err.message });
    const hint =
      err.code === 401
        ? "claimstep's own credentials to the API server were rejected: check KUBE_TOKEN or the kubeconfig"
        : err.message;
    return new Problem(502, "UpstreamError", hint, {
      extra: { upstream: { code: err.code, reason: err.reason ?? null } },
    });
  }
  if (err instanceof PermissionError) {
    log({ msg: "permission error", message: err.message });
    return new Problem(502, "UpstreamForbidden", err.message);
  }
  log({ msg: "internal error", error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  return new Problem(500, "InternalError", "internal error; see the server log");
}

/** The app's one error handler. */
export const onError =
  (log: (entry: Record<string, unknown>) => void): ErrorHandler =>
  (err, c) =>
    respond(c, problemOf(err, log));

export const notFound: NotFoundHandler = (c) =>
  respond(c, new Problem(404, "NotFound", `no route for ${c.req.method} ${c.req.path}`));

/** A known path with the wrong method: 405 with Allow, not 404. */
export const methodNotAllowed = (allow: string) => (c: Context) =>
  respond(
    c,
    new Problem(405, "MethodNotAllowed", `${c.req.method} is not allowed on ${c.req.path}; use ${allow}`, {
      headers: { Allow: allow },
    }),
  );
