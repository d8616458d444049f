// One small REST client for the Kubernetes API over an injected fetch: it runs on Workers and
// on Node alike, and msw sees every request. It builds URLs from the route table, adds auth
// headers, times out each attempt, follows list pagination, parses `Status` bodies into
// ApiError, and retries what is safe to retry.

import { listOf } from "../../core/kube/index.js";
import type { ApiRequestRecord } from "../../core/view/index.js";
import type * as z from "../../core/zod.js";
import { ApiError, apiErrorFrom, isKubernetesStatus } from "../api-error.js";
import { describeRequest, methodOf, pathOf, type Route, type Target } from "./routes.js";

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error goes to the caller (the next step retries). */
  maxRetryAfterSeconds: number;
}

export interface KubeClientOptions {
  /** API server URL, e.g. `https://10.0.0.1:6443`; a path prefix (a proxy's) is kept. */
  server: string;
  /** Defaults to the global fetch, looked up at each call (so msw and Workers both see it). */
  fetch?: FetchLike;
  /** Headers for every request (Authorization, CF-Access-Client-Id …), or a function giving fresh ones. */
  headers?: Record<string, string> | (() => Promise<Record<string, string>> | Record<string, string>);
  /** Per attempt. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** `limit` of each list page. */
  pageSize?: number;
  /** How to wait between attempts (tests pass one that records and returns at once). */
  sleep?: (ms: number) => Promise<void>;
  /** Told of every attempt: its verb, resource, status code (or "error": no answer) and seconds (the Node server's metrics). */
  onRequest?: (record: ApiRequestRecord) => void;
  /**
   * Where `server` came from, named when the answers are not an API server's [`KUBE_API_SERVER`];
   * kubeconfig users are told of `the kubeconfig's cluster server of context "…" (kubectl config view --minify)`.
   */
  serverOrigin?: string;
}

export interface RequestOptions {
  query?: Record<string, string | undefined>;
  /** Sent as JSON (also valid YAML, for apply patches). */
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
}

/** The server answered 2xx with a body that is not what the route promises. */
export class KubeResponseError extends Error {
  override readonly name = "KubeResponseError";
}

export const DEFAULT_PAGE_SIZE = 2000;

// Building a zod schema costs more than validating a small page with it: build each once.
const pageSchemas = new WeakMap<z.ZodMiniType, z.ZodMiniType>();
const pageSchemaOf = <S extends z.ZodMiniType>(item: S) => {
  let schema = pageSchemas.get(item) as ReturnType<typeof listOf<S>> | undefined;
  if (!schema) pageSchemas.set(item, (schema = listOf(item)));
  return schema;
};
const USER_AGENT = "claimstep";
const DEFAULT_RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 250, maxDelayMs: 4000, maxRetryAfterSeconds: 10 };

// Node's TLS verification failures: retrying cannot help, the configuration must change.
const TLS_ERRORS = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

const errorCode = (err: unknown): string | undefined => {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = e?.cause?.code ?? e?.code;
  return typeof code === "string" ? code : undefined;
};

const errorText = (err: unknown): string => {
  const e = err as { message?: string; cause?: { message?: string } } | undefined;
  return e?.cause?.message ?? e?.message ?? String(err);
};

/** Go's http.NotFound body: kube-apiserver's answer for a group/version it does not serve. */
const isGoNotFound = (text: string): boolean => text.trim() === "404 page not found";

/** What came instead of a Status, in a few words. */
const describeBody = (text: string): string => {
  const t = text.trim();
  if (!t) return " (an empty body)";
  if (/^<(!doctype|html)/i.test(t)) return " (an HTML page)";
  return ` (${JSON.stringify(t.length > 80 ? `${t.slice(0, 80)}…` : t)})`;
};

/** Seconds from a Retry-After header: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** Refusals of what was asked keep the server's own words (the planner quotes them); the rest say what was being done. */
const keepsServerWords = (e: ApiError): boolean =>
  e.kind === "Invalid" ||
  e.kind === "Conflict" ||
  e.kind === "AlreadyExists" ||
  (e.kind === "Forbidden" && e.isAdmissionForbidden);

export class KubeClient {
  readonly server: string;
  readonly pageSize: number;
  private readonly retry: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly doFetch: FetchLike;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly opts: KubeClientOptions) {
    let url: URL;
    try {
      url = new URL(opts.server);
    } catch {
      throw new Error(
        `invalid Kubernetes API server URL ${JSON.stringify(opts.server)}: expected e.g. https://10.0.0.1:6443`,
      );
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      throw new Error(
        `invalid Kubernetes API server URL ${JSON.stringify(opts.server)}: the scheme must be https (or http)`,
      );
    }
    this.server = opts.server.replace(/\/+$/, "");
    this.pageSize = opts.pageSize ?? DEFAULT_PAGE_SIZE;
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.doFetch = opts.fetch ?? ((u, init) => fetch(u, init));
    this.sleep = opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** GET one object and validate it. */
  async get<S extends z.ZodMiniType>(
    route: Route,
    target: Target,
    schema: S,
    signal?: AbortSignal,
  ): Promise<z.infer<S>> {
    const body = await this.send(route, target, signal ? { signal } : {});
    return this.validate(route, target, schema, body);
  }

  /** LIST every page (limit/continue), validating each item; an expired continue token restarts the list once. */
  async list<S extends z.ZodMiniType>(
    route: Route,
    target: Target,
    item: S,
    opts: { labelSelector?: string; signal?: AbortSignal; expected?: number } = {},
  ): Promise<z.infer<S>[]> {
    // A page large enough for the expected items keeps a step at one request per list.
    const pageSize = Math.max(this.pageSize, Math.ceil((opts.expected ?? 0) * 1.25));
    const pageSchema = pageSchemaOf(item);
    const items: z.infer<S>[] = [];
    let next: string | undefined;
    let restarted = false;
    for (;;) {
      let page: unknown;
      try {
        page = await this.send(route, target, {
          query: {
            ...(opts.labelSelector ? { labelSelector: opts.labelSelector } : {}),
            limit: String(pageSize),
            ...(next ? { continue: next } : {}),
          },
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
      } catch (err) {
        if (err instanceof ApiError && err.code === 410 && next && !restarted) {
          restarted = true;
          items.length = 0;
          next = undefined;
          continue;
        }
        throw err;
      }
      const parsed = this.validate(route, target, pageSchema, page);
      items.push(...(parsed.items as z.infer<S>[]));
      next = parsed.metadata?.continue || undefined;
      if (!next) return items;
    }
  }

  /** PATCH with the given patch content type; returns the object the server answers. */
  patch(
    route: Route,
    target: Target,
    body: unknown,
    contentType: string,
    query: Record<string, string> = {},
    signal?: AbortSignal,
  ): Promise<unknown> {
    return this.send(route, target, { body, contentType, query, ...(signal ? { signal } : {}) });
  }

  /** DELETE an object with DeleteOptions (preconditions, propagationPolicy) as the body. */
  delete(route: Route, target: Target, options: unknown, signal?: AbortSignal): Promise<unknown> {
    return this.send(route, target, { body: options, contentType: "application/json", ...(signal ? { signal } : {}) });
  }

  /** POST a new object. */
  create(route: Route, target: Target, body: unknown, signal?: AbortSignal): Promise<unknown> {
    return this.send(route, target, { body, contentType: "application/json", ...(signal ? { signal } : {}) });
  }

  /** One request with retries; resolves to the parsed JSON body of a 2xx answer. */
  async send(route: Route, target: Target, opts: RequestOptions = {}): Promise<unknown> {
    const request = describeRequest(route, target);
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) query.set(k, v);
    const qs = query.toString();
    const url = `${this.server}${pathOf(route, target)}${qs ? `?${qs}` : ""}`;
    const attempts = route.retry ? Math.max(1, this.retry.attempts) : 1;

    for (let attempt = 1; ; attempt++) {
      let error: ApiError;
      try {
        return await this.attempt(url, route, request, opts);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        error = err;
      }
      const retryable = error.kind === "TooManyRequests" || error.kind === "ServerError" || error.kind === "Timeout";
      const retryAfter = error.retryAfterSeconds;
      if (
        !retryable ||
        attempt >= attempts ||
        (retryAfter !== undefined && retryAfter > this.retry.maxRetryAfterSeconds)
      ) {
        throw error;
      }
      const backoff = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempt - 1));
      await this.sleep(retryAfter !== undefined ? retryAfter * 1000 : backoff / 2 + Math.random() * (backoff / 2));
    }
  }

  private async attempt(url: string, route: Route, request: string, opts: RequestOptions): Promise<unknown> {
    const started = performance.now();
    const answer: { code: number | "error" } = { code: "error" };
    try {
      return await this.attemptOnce(url, route, request, opts, answer);
    } finally {
      const { verb, resource, subresource } = route;
      this.opts.onRequest?.({
        verb,
        resource: subresource ? `${resource}/${subresource}` : resource,
        code: answer.code,
        seconds: (performance.now() - started) / 1000,
      });
    }
  }

  private async attemptOnce(
    url: string,
    route: Route,
    request: string,
    opts: RequestOptions,
    answer: { code: number | "error" },
  ): Promise<unknown> {
    const headers: Record<string, string> = {
      Accept: "application/json",
      "User-Agent": USER_AGENT, // how the API server's audit log names the caller
      ...(typeof this.opts.headers === "function" ? await this.opts.headers() : this.opts.headers),
    };
    if (opts.body !== undefined) headers["Content-Type"] = opts.contentType ?? "application/json";
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;

    let res: Response;
    let text: string;
    try {
      res = await this.doFetch(url, {
        method: methodOf(route),
        headers,
        ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
        signal,
      });
      text = await res.text();
      answer.code = res.status;
    } catch (err) {
      if (opts.signal?.aborted) throw err; // the caller gave up: not ours to report or retry
      if (timeout.aborted) {
        return this.fail(
          new ApiError(
            0,
            "Timeout",
            `no answer from the API server within ${this.timeoutMs} ms`,
            undefined,
            undefined,
            request,
          ),
        );
      }
      const code = errorCode(err);
      if (code && TLS_ERRORS.has(code)) {
        return this.fail(
          new ApiError(
            0,
            "Other",
            `TLS verification of ${this.server} failed (${code}): give the cluster's CA (kubeconfig certificate-authority), not insecure-skip-tls-verify`,
            undefined,
            undefined,
            request,
          ),
        );
      }
      return this.fail(
        new ApiError(
          0,
          "ServerError",
          `cannot reach the API server at ${this.server}: ${errorText(err)}`,
          undefined,
          undefined,
          request,
        ),
      );
    }

    let body: unknown = text;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON (a proxy's HTML page, "404 page not found"): keep the text for the error
      }
    }
    if (res.ok) return body;
    // A real API server's 404 always carries a Status (the only exception: Go's plain "404 page
    // not found" for a group/version it does not serve). Without one, the URL is something else:
    // a web server, a proxy's page, a path prefix missing from the server URL.
    if (res.status === 404 && !isKubernetesStatus(body) && !(route.mayBeUnserved && isGoNotFound(text))) {
      const path = new URL(url).pathname;
      throw new ApiError(
        404,
        "NotKubernetes",
        `${this.server} answered 404 without a Kubernetes Status body for ${methodOf(route)} ${path}${describeBody(text)}: is this a Kubernetes API server? Check ${this.opts.serverOrigin ?? "KUBE_API_SERVER"}`,
        undefined,
        undefined,
        request,
      );
    }
    const retryAfter = parseRetryAfter(res.headers.get("Retry-After"));
    return this.fail(
      apiErrorFrom(res.status, body, {
        ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
        request,
      }),
    );
  }

  /** Throw the error, its message prefixed with what was being done unless the server's words must stay as they are. */
  private fail(err: ApiError): never {
    if (keepsServerWords(err)) throw err;
    const hint =
      err.kind === "Unauthorized"
        ? ` (the API server at ${this.server} rejected the credentials: check the token or the kubeconfig user)`
        : "";
    throw new ApiError(
      err.code,
      err.kind,
      `${err.request}: ${err.message}${hint}`,
      err.status,
      err.retryAfterSeconds,
      err.request,
    );
  }

  private validate<S extends z.ZodMiniType>(route: Route, target: Target, schema: S, body: unknown): z.infer<S> {
    const parsed = schema.safeParse(body);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0]!;
    const at = issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
    throw new KubeResponseError(
      `unexpected answer to ${describeRequest(route, target)}: ${at ? `${at.replace(/^\./, "")}: ` : ""}${issue.message}`,
    );
  }
}
