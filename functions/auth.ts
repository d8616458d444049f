// Inbound authentication primitives: Standard Webhooks (https://www.standardwebhooks.com/) signing
// and verification through the official `standardwebhooks` package, bearer tokens, and the
// replay store. No Node-only code: the Worker and the Node server share it. No secret is ever put
// into a message.
import { Webhook, WebhookVerificationError } from "standardwebhooks";

/** Standard Webhooks' tolerance, fixed by the library: a timestamp further than this from our clock is refused. */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

const encoder = new TextEncoder();

export class SecretFormatError extends Error {
  override readonly name = "SecretFormatError";
}

/**
 * Check one `whsec_<base64>` secret the way the library will read it, and return its key bytes.
 * Throws SecretFormatError naming what is wrong (never the secret).
 */
export function decodeWebhookSecret(secret: string): Uint8Array {
  if (!secret.startsWith("whsec_")) throw new SecretFormatError("webhook secret must start with whsec_");
  let bytes: Uint8Array;
  try {
    new Webhook(secret); // what signing and verification will use: refuses bad base64 and empty keys
    bytes = Uint8Array.from(atob(secret.slice("whsec_".length)), (ch) => ch.charCodeAt(0));
  } catch {
    throw new SecretFormatError("webhook secret is not valid base64 after whsec_");
  }
  if (bytes.length < 16) throw new SecretFormatError("webhook secret is shorter than 16 bytes");
  return bytes;
}

/**
 * `CLAIMSTEP_WEBHOOK_SECRET` as a list: one or more `whsec_` secrets separated by spaces or commas.
 * During a rotation every one is accepted; signing uses the first.
 */
export const webhookSecretList = (raw: string | undefined): string[] => (raw ?? "").split(/[\s,]+/).filter(Boolean);

/** The `webhook-signature` value for one body: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  return new Webhook(secret).sign(id, new Date(timestampSeconds * 1000), body);
}

/** The three Standard Webhooks headers for a body, signed with `secret` (the first of a rotation). */
export function webhookHeaders(
  secret: string,
  id: string,
  now: Date,
  body: string,
): Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string> {
  const ts = Math.floor(now.getTime() / 1000);
  return { "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": signWebhook(secret, id, ts, body) };
}

// ---------------------------------------------------------------------------------------------
// Replay store

export type ReplayClaim =
  | { ok: true }
  | { ok: false; reason: "replayed" }
  | { ok: false; reason: "full"; retryAfterSeconds: number };

/** Remembers accepted delivery ids so that a captured request cannot be replayed. */
export interface ReplayGuard {
  /**
   * Remember `id` until `expiresAtMs`. Refused when it is already remembered (a replay), or when
   * the store is full of ids that have not expired yet (the caller answers 503 + Retry-After).
   */
  claim(id: string, nowMs: number, expiresAtMs: number): ReplayClaim;
  /** Forget `id`: its delivery failed before doing anything, so a redelivery must be accepted. */
  release(id: string): void;
}

/** A replay store that answers asynchronously (the Worker's: Durable Objects, shared by every isolate). */
export interface AsyncReplayGuard {
  claim(id: string, nowMs: number, expiresAtMs: number): Promise<ReplayClaim>;
  release(id: string): void | Promise<void>;
}

export type AnyReplayGuard = ReplayGuard | AsyncReplayGuard;

/**
 * An in-memory store of ids, each kept until its own expiry (for Standard Webhooks, the end of the
 * timestamp's tolerance window, after which the timestamp check refuses a replay by itself). It
 * never forgets an id early: when `capacity` ids are live, new ones are refused until the oldest
 * expire. On Node there is one per process; on Workers one per isolate (docs/deploying.md: a replay landing on
 * another isolate is not caught; a step is idempotent, so the worst it can do is one more step).
 */
export class RecentIds implements ReplayGuard {
  private readonly ids = new Map<string, number>();
  constructor(readonly capacity = 10_000) {}

  claim(id: string, nowMs: number, expiresAtMs: number): ReplayClaim {
    this.dropExpiredHead(nowMs);
    const until = this.ids.get(id);
    if (until !== undefined) {
      if (until > nowMs) return { ok: false, reason: "replayed" };
      this.ids.delete(id);
    }
    if (this.ids.size >= this.capacity) {
      this.dropExpired(nowMs);
      if (this.ids.size >= this.capacity) {
        let soonest = Infinity;
        for (const at of this.ids.values()) soonest = Math.min(soonest, at);
        return { ok: false, reason: "full", retryAfterSeconds: Math.max(1, Math.ceil((soonest - nowMs) / 1000)) };
      }
    }
    this.ids.set(id, expiresAtMs);
    return { ok: true };
  }

  release(id: string): void {
    this.ids.delete(id);
  }

  get size(): number {
    return this.ids.size;
  }

  /** Insertion order is roughly expiry order: drop expired ids from the front, cheaply. */
  private dropExpiredHead(nowMs: number): void {
    for (const [id, at] of this.ids) {
      if (at > nowMs) return;
      this.ids.delete(id);
    }
  }

  private dropExpired(nowMs: number): void {
    for (const [id, at] of this.ids) if (at <= nowMs) this.ids.delete(id);
  }
}

// ---------------------------------------------------------------------------------------------
// Standard Webhooks verification

export type WebhookFailure =
  | "MissingHeaders"
  | "BadId"
  | "BadTimestamp"
  | "TimestampOutOfTolerance"
  | "NoMatchingSignature"
  | "Replayed";

export type WebhookVerdict =
  | { ok: true; id: string }
  | { ok: false; failure: WebhookFailure; message: string }
  | { ok: false; failure: "ReplayStoreFull" | "ReplayStoreUnavailable"; message: string; retryAfterSeconds: number };

export interface WebhookInput {
  /** The accepted secrets (a rotation holds several), or verifiers built from them once. */
  secrets: readonly (string | Webhook)[];
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
  body: string;
  replay?: ReplayGuard;
}

/** Key of a Standard Webhooks id in a replay store shared with other kinds of deliveries. */
export const webhookReplayKey = (id: string): string => `standard-webhooks:${id}`;

/**
 * Verify a Standard Webhooks request with the official library: timestamp within 5 minutes of this
 * machine's clock, one `v1,` signature matching one of the secrets. The id is recorded only once
 * the signature is valid, and kept until the timestamp leaves the tolerance window.
 */
/**
 * The longest `webhook-id` accepted, in UTF-8 bytes: with claimstep's key prefix it stays within the
 * fleet ledger's 256-byte keys (Standard Webhooks ids are ~30 bytes).
 */
export const MAX_WEBHOOK_ID_BYTES = 200;

export function verifyWebhook(input: WebhookInput): WebhookVerdict {
  const { id, timestamp, signature } = input;
  if (!id || !timestamp || !signature) {
    return {
      ok: false,
      failure: "MissingHeaders",
      message: "webhook-id, webhook-timestamp and webhook-signature are all required",
    };
  }
  // Ids are remembered for the replay window: a bounded length bounds the store.
  const idBytes = encoder.encode(id).length;
  if (idBytes > MAX_WEBHOOK_ID_BYTES) {
    return {
      ok: false,
      failure: "BadId",
      message: `webhook-id is ${idBytes} bytes; at most ${MAX_WEBHOOK_ID_BYTES} are accepted: send a shorter id`,
    };
  }
  // The library reads the timestamp with parseInt, which takes "12abc": be strict first.
  if (!/^\d{1,12}$/.test(timestamp)) {
    return { ok: false, failure: "BadTimestamp", message: "webhook-timestamp must be integer Unix seconds" };
  }
  const headers = { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": signature };
  let matched = false;
  for (const secret of input.secrets) {
    const verifier = typeof secret === "string" ? new Webhook(secret) : secret;
    try {
      verifier.verify(input.body, headers, { jsonParse: false });
      matched = true;
      break;
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      if (/timestamp too (old|new)/i.test(err.message)) {
        const skew = Math.abs(Math.floor(Date.now() / 1000) - Number(timestamp));
        return {
          ok: false,
          failure: "TimestampOutOfTolerance",
          message: `webhook-timestamp is ${skew}s away from the server clock (tolerance ${DEFAULT_TOLERANCE_SECONDS}s): sign requests when sending and check the sender's clock`,
        };
      }
      // "No matching signature found": try the next secret of the rotation.
    }
  }
  if (!matched) return { ok: false, failure: "NoMatchingSignature", message: "no webhook-signature matches the body" };
  if (input.replay)
    return replayVerdict(id, input.replay.claim(webhookReplayKey(id), Date.now(), replayExpiry(timestamp)));
  return { ok: true, id };
}

const replayExpiry = (timestamp: string) => (Number(timestamp) + DEFAULT_TOLERANCE_SECONDS + 1) * 1000;

/** How long a client is asked to wait when the replay store gave no valid answer. */
const REPLAY_STORE_RETRY_AFTER_SECONDS = 5;

/**
 * The verdict of a store's answer, read strictly (fail closed): accepted only on `{ ok: true }`;
 * `replayed`, and `full` with a non-negative retryAfterSeconds, as they are; anything else (another
 * shape, a store of another kind or version) refuses the request, never accepts it unchecked.
 */
export function replayVerdict(id: string, claim: ReplayClaim): WebhookVerdict {
  const answer: unknown = claim;
  const a = (typeof answer === "object" && answer !== null ? answer : {}) as Record<string, unknown>;
  if (a.ok === true) return { ok: true, id };
  if (a.ok === false && a.reason === "replayed") {
    return {
      ok: false,
      failure: "Replayed",
      message: `webhook-id ${JSON.stringify(id.slice(0, 64))} was already received`,
    };
  }
  const after = a.retryAfterSeconds;
  if (a.ok === false && a.reason === "full" && typeof after === "number" && Number.isFinite(after) && after >= 0) {
    return {
      ok: false,
      failure: "ReplayStoreFull",
      message: "too many signed requests within the replay window: retry later",
      retryAfterSeconds: Math.max(1, Math.ceil(after)),
    };
  }
  return {
    ok: false,
    failure: "ReplayStoreUnavailable",
    message: `the replay store gave no valid answer (${JSON.stringify(answer)?.slice(0, 120) ?? "no answer"}): the signed request was refused, not accepted unchecked; retry later`,
    retryAfterSeconds: REPLAY_STORE_RETRY_AFTER_SECONDS,
  };
}

/**
 * The replay part of verifyWebhook for a store of any kind (verify the signature first, without a
 * store): the id of a verified request, remembered until its timestamp leaves the window.
 */
export async function claimWebhookId(replay: AnyReplayGuard, id: string, timestamp: string): Promise<WebhookVerdict> {
  return replayVerdict(id, await replay.claim(webhookReplayKey(id), Date.now(), replayExpiry(timestamp)));
}

// ---------------------------------------------------------------------------------------------
// Bearer tokens

/** Compare two byte strings in time that depends only on their lengths (never on where they differ). */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

async function sha256(s: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(s)));
}

/**
 * Whether an `Authorization` header carries one of the tokens. Both sides are hashed first, so
 * the comparison is constant-time whatever the lengths.
 */
export async function bearerMatches(authorization: string | undefined, tokens: readonly string[]): Promise<boolean> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  if (!m?.[1] || tokens.length === 0) return false;
  const presented = await sha256(m[1]);
  let match = false;
  for (const token of tokens) match = constantTimeEqual(presented, await sha256(token)) || match;
  return match;
}
