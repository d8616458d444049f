// POST one `statefulset.changed` event to the app, signed with Standard Webhooks (the official
// library, through functions/auth.ts), each attempt bounded by a timeout, retried with backoff.
import { webhookHeaders } from "../auth.js";
import { backoffMs, type RelayClock, sleep } from "./clock.js";
import type { RelayEvent } from "./event.js";
import { deliveryFailure } from "./explain.js";

/**
 * How long one attempt may take, answer and body (else undici's 300 s: a hung app held each
 * delivery five minutes). The app answers once it has stepped the set, and one step may wait on
 * the API server (10 s per request): 30 s leaves room for that and still gives up on a hung app.
 */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 30_000;

export interface DeliveryOptions {
  url: string;
  secret: string;
  fetch: typeof fetch;
  clock: RelayClock;
  newId: () => string;
  maxAttempts?: number;
  backoff?: { baseMs: number; maxMs: number };
  /** One attempt gives up after this long [DEFAULT_DELIVERY_TIMEOUT_MS]; a timeout is retried like a network error. */
  timeoutMs?: number;
  log(entry: Record<string, unknown>): void;
}

export type DeliveryResult =
  | { ok: true; status: number; attempts: number }
  | { ok: false; status?: number; attempts: number; error: string };

/**
 * POST one event, signed, retrying network errors, 429 and 5xx with backoff (honouring
 * Retry-After). Each attempt is signed afresh with its own webhook-id, so the receiver's replay
 * guard accepts the retry of a request it failed to process.
 */
export async function deliver(event: RelayEvent, opts: DeliveryOptions): Promise<DeliveryResult> {
  const body = JSON.stringify(event);
  const maxAttempts = opts.maxAttempts ?? 6;
  const { baseMs, maxMs } = opts.backoff ?? { baseMs: 1000, maxMs: 60_000 };
  const timeoutMs = opts.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
  let last: { status?: number; error: string } = { error: "not sent" };
  // Why the last attempt got no answer: undici's `cause` (a TLS code, ECONNREFUSED) and what fixes it.
  let why: Record<string, string> = {};
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    let retryAfterMs: number | undefined;
    // The answer and its body: an app that sends its headers and hangs is given up too.
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const headers = {
        "content-type": "application/json",
        ...(await webhookHeaders(opts.secret, opts.newId(), opts.clock.now(), body)),
      };
      const res = await opts.fetch(opts.url, { method: "POST", headers, body, signal: timeout });
      const read = await res.arrayBuffer().then(
        () => true,
        () => false,
      );
      if (!read && timeout.aborted) throw timeout.reason;
      if (res.ok) return { ok: true, status: res.status, attempts: attempt + 1 };
      last = { status: res.status, error: `HTTP ${res.status}` };
      why = {};
      if (res.status !== 429 && res.status < 500) {
        opts.log({
          msg: "relay event refused",
          status: res.status,
          namespace: event.data.namespace,
          name: event.data.name,
        });
        return { ok: false, status: res.status, attempts: attempt + 1, error: last.error };
      }
      const ra = Number(res.headers.get("retry-after"));
      if (Number.isFinite(ra) && ra > 0) retryAfterMs = ra * 1000;
    } catch (err) {
      why = timeout.aborted ? {} : deliveryFailure(err, opts.url);
      last = { error: timeout.aborted ? `no answer within ${timeoutMs} ms` : (why.error ?? String(err)) };
    }
    if (attempt + 1 < maxAttempts) {
      const wait = Math.min(maxMs, retryAfterMs ?? backoffMs(attempt, baseMs, maxMs));
      opts.log({
        msg: "relay delivery failed: retrying",
        ...why,
        error: last.error,
        retryInMs: wait,
        namespace: event.data.namespace,
        name: event.data.name,
      });
      await sleep(opts.clock, wait);
    }
  }
  opts.log({
    msg: "relay delivery gave up",
    ...why,
    error: last.error,
    namespace: event.data.namespace,
    name: event.data.name,
  });
  return { ok: false, attempts: maxAttempts, ...last };
}
