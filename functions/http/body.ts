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

const tooLarge = (maxBytes: number) => new Problem(413, "PayloadTooLarge", `request body exceeds ${maxBytes} bytes`);

/**
 * Read the whole body once (413 beyond `maxBytes`, whether or not Content-Length is given) into
 * Hono's body cache; a body already read (by `authenticate` checking a signature) is not read again.
 */
export async function readBodyOnce(c: Context, maxBytes: number): Promise<void> {
  const raw = c.req.raw;
  if (!raw.body || Object.keys(c.req.bodyCache).length > 0) return;
  const declared = raw.headers.get("content-length");
  if (declared !== null && !raw.headers.has("transfer-encoding") && Number(declared) > maxBytes)
    throw tooLarge(maxBytes);

  const reader = raw.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
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
}

/**
 * Read the whole body (413 beyond `maxBytes`, whether or not Content-Length is given) and cache it.
 * Goes after `authenticate` where the scheme is a header (a bearer token): a client without one
 * is answered 401 before any of its body is read.
 */
export function readBody(opts: { maxBytes: number }): MiddlewareHandler {
  const { maxBytes } = opts;
  return async function readBody(c, next) {
    await readBodyOnce(c, maxBytes);
    return next();
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
