// One HTTP exchange with a Git hosting API, classified the way a step needs it: rate limits,
// 5xx and network failures become transient ApiErrors (the step retries later, nothing changed);
// a rejected or under-privileged token is a configuration error naming the fix; every other
// answer goes back to the provider, which knows what its 404/409/422 mean.
import { ApiError } from "../api-error.js";

export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

export class GitProviderError extends Error {
  override readonly name = "GitProviderError";
  constructor(
    message: string,
    readonly status: number,
    /** What was being done, e.g. `POST /repos/o/r/pulls`. */
    readonly request: string,
  ) {
    super(message);
  }
}

export interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
}

export interface Exchange {
  method: "GET" | "POST" | "PUT" | "PATCH";
  url: string;
  /** For messages: method and path without the host. */
  label: string;
  headers: Record<string, string>;
  body?: unknown;
}

/** The human message of a GitHub (`message`, `errors[].message`) or GitLab (`message` string/array/object, `error`) error body. */
export function messageOf(body: unknown): string {
  if (typeof body === "string") return body.trim().slice(0, 300) || "(empty body)";
  if (!body || typeof body !== "object") return "(no body)";
  const b = body as {
    message?: unknown;
    error?: unknown;
    errors?: Array<{ message?: string; code?: string; field?: string }>;
  };
  const parts: string[] = [];
  const flat = (m: unknown): string =>
    typeof m === "string"
      ? m
      : Array.isArray(m)
        ? m.map(flat).join("; ")
        : m && typeof m === "object"
          ? Object.entries(m)
              .map(([k, v]) => `${k} ${flat(v)}`)
              .join("; ")
          : "";
  if (b.message !== undefined) parts.push(flat(b.message));
  if (typeof b.error === "string") parts.push(b.error);
  for (const e of b.errors ?? []) parts.push(e.message ?? [e.code, e.field].filter(Boolean).join(" "));
  return parts.filter(Boolean).join(": ") || JSON.stringify(body).slice(0, 300);
}

/** Seconds to wait: Retry-After, else the reset time of the exhausted window, else a minute (GitHub's advice). */
function retryAfterSeconds(h: Headers, nowMs: number): number {
  const retryAfter = h.get("retry-after");
  if (retryAfter && /^\d+$/.test(retryAfter.trim())) return Number(retryAfter);
  const reset = h.get("x-ratelimit-reset") ?? h.get("ratelimit-reset");
  if (reset && /^\d+$/.test(reset.trim())) return Math.max(1, Number(reset) - Math.floor(nowMs / 1000));
  return 60;
}

function isRateLimited(status: number, h: Headers, body: unknown): boolean {
  if (status === 429) return true;
  if (status !== 403) return false;
  return (
    h.get("x-ratelimit-remaining") === "0" ||
    h.get("ratelimit-remaining") === "0" ||
    h.has("retry-after") ||
    /rate limit/i.test(messageOf(body))
  );
}

async function bodyOf(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export const DEFAULT_TIMEOUT_MS = 30_000;

export async function exchange(
  fetchFn: Fetch,
  provider: string,
  x: Exchange,
  nowMs: () => number,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<Reply> {
  let res: Response;
  try {
    res = await fetchFn(x.url, {
      method: x.method,
      signal: AbortSignal.timeout(timeoutMs),
      headers: { ...x.headers, ...(x.body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(x.body !== undefined ? { body: JSON.stringify(x.body) } : {}),
    });
  } catch (err) {
    throw new ApiError(
      0,
      "Timeout",
      `${provider}: ${x.label} failed: ${(err as Error).message}`,
      undefined,
      undefined,
      x.label,
    );
  }
  const body = await bodyOf(res);
  const where = `${provider}: ${x.label}`;
  if (isRateLimited(res.status, res.headers, body)) {
    const wait = retryAfterSeconds(res.headers, nowMs());
    throw new ApiError(
      res.status,
      "TooManyRequests",
      `${where}: rate limited (${messageOf(body)}); retry in ${wait}s`,
      undefined,
      wait,
      x.label,
    );
  }
  if (res.status >= 500) {
    throw new ApiError(
      res.status,
      res.status === 504 ? "Timeout" : "ServerError",
      `${where}: ${res.status} ${messageOf(body)}`,
      undefined,
      undefined,
      x.label,
    );
  }
  if (res.status === 401) {
    throw new GitProviderError(
      `${where}: the token was rejected (401 ${messageOf(body)}): set a valid token in the GitOps repository config`,
      401,
      x.label,
    );
  }
  if (res.status === 403) {
    throw new GitProviderError(
      `${where}: the token may not do this (403 ${messageOf(body)}): give it write access to contents and pull/merge requests`,
      403,
      x.label,
    );
  }
  return { status: res.status, headers: res.headers, body };
}

export function unexpected(provider: string, x: Exchange, r: Reply): GitProviderError {
  return new GitProviderError(`${provider}: ${x.label} answered ${r.status}: ${messageOf(r.body)}`, r.status, x.label);
}

/** Someone else changed the branch between our read and our write: transient, the next step re-reads. */
export function lostRace(message: string, status: number, request: string): ApiError {
  return new ApiError(status, "Conflict", message, undefined, undefined, request);
}
