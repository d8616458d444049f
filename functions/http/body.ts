// Request bodies: read at most `maxBytes` once, and media types.
//
// Why not hono/body-limit: on a body without Content-Length (Transfer-Encoding: chunked) it reads
// the stream and then rebuilds the request with `new Request(c.req.raw, { body })`. Under
// @hono/node-server started with `overrideGlobalObjects: false` (functions/server.ts), `c.req.raw`
// is the adapter's lightweight request, which the global Request constructor cannot copy
// ("Cannot read properties of undefined (reading 'window')"), so every chunked POST answered 500.
// Here the bytes read go into Hono's body cache instead: `c.req.text()`, `c.req.json()`,
// `c.req.arrayBuffer()` and `validator("json", …)` all read them from there, on every runtime.
import type { Context, MiddlewareHandler } from "hono";
import { Problem } from "./problem.js";

/** The body limit of the app's routes unless configured (CLAIMSTEP_BODY_LIMIT_BYTES). */
export const DEFAULT_BODY_LIMIT = 256 * 1024;

const tooLarge = (maxBytes: number) => new Problem(413, "PayloadTooLarge", `request body exceeds ${maxBytes} bytes`);

/**
 * How long a request body may take to arrive, from when its reading starts (its headers are in):
 * the admission webhook's timeoutSeconds (deploy/kubernetes/admission.yaml), after which the API
 * server has given up on the answer anyway. Every body claimstep takes is small (the body limit; a
 * review from inside the cluster) and sent at once; a sender slower than this is refused 408 and its
 * connection closed, so that it holds neither a connection nor memory for the server's 30 s request
 * timeout (docs/deploying.md, "The Node server").
 */
export const BODY_DEADLINE_MS = 5_000;

const tooSlow = (deadlineMs: number) =>
  new Problem(408, "RequestTimeout", `the request body did not arrive within ${deadlineMs / 1000} s: send it at once`, {
    headers: { Connection: "close" },
  });

/**
 * The bytes a route's bodies may hold together while they are read and answered: a body that would
 * take it beyond `maxBytes` is refused 503 (Retry-After 1). A sender trickling its body holds only
 * what it sent, so slow senders cannot use it up; fast, large ones are bounded in memory.
 */
export class BodyBudget {
  private held = 0;
  constructor(readonly maxBytes: number) {}
  /** Take `n` bytes; false, nothing taken, when that would go beyond `maxBytes`. */
  take(n: number): boolean {
    if (this.held + n > this.maxBytes) return false;
    this.held += n;
    return true;
  }
  give(n: number): void {
    this.held = Math.max(0, this.held - n);
  }
}

const overBudget = (budget: BodyBudget) =>
  new Problem(
    503,
    "Unavailable",
    `the bodies being read here already hold close to ${budget.maxBytes} bytes together: retry`,
    { headers: { "Retry-After": "1", Connection: "close" } },
  );

/**
 * Read the whole body once (413 beyond `maxBytes`, whether or not Content-Length is given; 408
 * when it is not in within BODY_DEADLINE_MS; 503 beyond `budget`) into Hono's body cache; a body
 * already read (by `authenticate` checking a signature) is not read again. Returns the bytes taken
 * from `budget` (0 without one): the caller gives them back once the request is answered.
 */
export async function readBodyOnce(c: Context, maxBytes: number, budget?: BodyBudget): Promise<number> {
  const raw = c.req.raw;
  if (!raw.body || Object.keys(c.req.bodyCache).length > 0) return 0;
  const declared = raw.headers.get("content-length");
  if (declared !== null && !raw.headers.has("transfer-encoding") && Number(declared) > maxBytes)
    throw tooLarge(maxBytes);

  const reader = raw.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let taken = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(tooSlow(BODY_DEADLINE_MS)), BODY_DEADLINE_MS);
  });
  try {
    for (;;) {
      // The read left pending at the deadline ends with the connection (Connection: close).
      const { done, value } = await Promise.race([reader.read(), deadline]);
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge(maxBytes);
      }
      if (budget) {
        if (!budget.take(value.byteLength)) {
          await reader.cancel().catch(() => undefined);
          throw overBudget(budget);
        }
        taken += value.byteLength;
      }
      chunks.push(value);
    }
  } catch (err) {
    budget?.give(taken);
    throw err;
  } finally {
    clearTimeout(timer);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  // Hono's request keeps the promises of parsed bodies here (typed as the values); text(),
  // json(), arrayBuffer(), formData() and parseBody() all derive from any entry.
  c.req.bodyCache.arrayBuffer = Promise.resolve(bytes.buffer) as unknown as ArrayBuffer;
  return taken;
}

/**
 * Read the whole body (413 beyond `maxBytes`, whether or not Content-Length is given; 408 beyond
 * BODY_DEADLINE_MS; 503 beyond `budget`, whose bytes the request holds until it is answered) and
 * cache it.
 * Goes after `authenticate` where the scheme is a header (a bearer token): a client without one
 * is answered 401 before any of its body is read.
 */
export function readBody(opts: { maxBytes: number; budget?: BodyBudget }): MiddlewareHandler {
  const { maxBytes, budget } = opts;
  return async function readBody(c, next) {
    const taken = await readBodyOnce(c, maxBytes, budget);
    try {
      await next();
    } finally {
      budget?.give(taken);
    }
  };
}

/** `application/json; charset=utf-8` → `application/json`. */
export const mediaTypeOf = (c: Context): string =>
  (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();

/** 415 unless the body is one of `types` (Hono's json validator would silently validate `{}` instead). */
export const requireMediaType = (types: readonly string[], hint: string): MiddlewareHandler =>
  async function requireMediaType(c, next) {
    if (!types.includes(mediaTypeOf(c))) throw new Problem(415, "UnsupportedMediaType", hint);
    return next();
  };
