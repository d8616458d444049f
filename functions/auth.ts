// Inbound authentication: Standard Webhooks signatures (https://www.standardwebhooks.com/) or a
// bearer token. Web Crypto only, so the same code runs on Workers and Node. Every comparison of a
// secret-derived value is constant-time; no secret is ever put into a message.

/** Standard Webhooks: reject timestamps further than this from our clock (the spec's 5 minutes). */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

const encoder = new TextEncoder();

export class SecretFormatError extends Error {
  override readonly name = "SecretFormatError";
}

/** `whsec_<base64>` → the HMAC key bytes. */
export function decodeWebhookSecret(secret: string): Uint8Array {
  if (!secret.startsWith("whsec_")) throw new SecretFormatError("webhook secret must start with whsec_");
  try {
    const raw = atob(secret.slice("whsec_".length));
    const bytes = Uint8Array.from(raw, (ch) => ch.charCodeAt(0));
    if (bytes.length < 16) throw new SecretFormatError("webhook secret is shorter than 16 bytes");
    return bytes;
  } catch (err) {
    if (err instanceof SecretFormatError) throw err;
    throw new SecretFormatError("webhook secret is not valid base64 after whsec_");
  }
}

const toBase64 = (bytes: Uint8Array): string => {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
};

const fromBase64 = (s: string): Uint8Array | undefined => {
  try {
    return Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));
  } catch {
    return undefined;
  }
};

async function hmacSha256(key: Uint8Array, message: string): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey("raw", key as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, encoder.encode(message)));
}

/** Compare two byte strings in time that depends only on their lengths (never on where they differ). */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/** The `webhook-signature` value for one body: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. */
export async function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): Promise<string> {
  const mac = await hmacSha256(decodeWebhookSecret(secret), `${id}.${timestampSeconds}.${body}`);
  return `v1,${toBase64(mac)}`;
}

/** The three Standard Webhooks headers for a body. */
export async function webhookHeaders(
  secret: string,
  id: string,
  now: Date,
  body: string,
): Promise<Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string>> {
  const ts = Math.floor(now.getTime() / 1000);
  return { "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": await signWebhook(secret, id, ts, body) };
}

/** Remembers recently accepted webhook ids so a captured request cannot be replayed. */
export interface ReplayGuard {
  /** Record `id` as seen at `nowMs`; true when it was already seen within the window. */
  seen(id: string, nowMs: number): boolean;
}

/**
 * An in-memory LRU of ids, each kept for the tolerance window (after which the timestamp check
 * rejects a replay anyway). On Node there is one per process. On Workers there is one per isolate:
 * a replay that lands on another isolate within the window is not caught (a step is idempotent,
 * so the worst a replay can do is run one more step).
 */
export class RecentIds implements ReplayGuard {
  private readonly ids = new Map<string, number>();
  constructor(
    private readonly capacity = 10_000,
    private readonly windowMs = 2 * DEFAULT_TOLERANCE_SECONDS * 1000,
  ) {}

  seen(id: string, nowMs: number): boolean {
    const at = this.ids.get(id);
    if (at !== undefined && nowMs - at < this.windowMs) return true;
    this.ids.delete(id);
    this.ids.set(id, nowMs);
    while (this.ids.size > this.capacity) {
      const oldest = this.ids.keys().next().value as string;
      this.ids.delete(oldest);
    }
    return false;
  }

  get size(): number {
    return this.ids.size;
  }
}

export type WebhookFailure =
  | "MissingHeaders"
  | "BadTimestamp"
  | "TimestampOutOfTolerance"
  | "NoMatchingSignature"
  | "Replayed";

export type WebhookVerdict = { ok: true; id: string } | { ok: false; failure: WebhookFailure; message: string };

export interface WebhookInput {
  secrets: readonly string[];
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
  body: string;
  now: Date;
  replay?: ReplayGuard;
  toleranceSeconds?: number;
}

/** Verify a Standard Webhooks request. The id is recorded only once the signature is valid. */
export async function verifyWebhook(input: WebhookInput): Promise<WebhookVerdict> {
  const { id, timestamp, signature } = input;
  if (!id || !timestamp || !signature) {
    return { ok: false, failure: "MissingHeaders", message: "webhook-id, webhook-timestamp and webhook-signature are all required" };
  }
  if (!/^\d{1,12}$/.test(timestamp)) {
    return { ok: false, failure: "BadTimestamp", message: "webhook-timestamp must be integer Unix seconds" };
  }
  const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const skew = Math.abs(Math.floor(input.now.getTime() / 1000) - Number(timestamp));
  if (skew > tolerance) {
    return {
      ok: false,
      failure: "TimestampOutOfTolerance",
      message: `webhook-timestamp is ${skew}s away from the server clock (tolerance ${tolerance}s): sign requests when sending and check the sender's clock`,
    };
  }
  const candidates = signature
    .split(" ")
    .filter((part) => part.startsWith("v1,"))
    .map((part) => fromBase64(part.slice(3)))
    .filter((b): b is Uint8Array => b !== undefined);
  let match = false;
  for (const secret of input.secrets) {
    const expected = await hmacSha256(decodeWebhookSecret(secret), `${id}.${timestamp}.${input.body}`);
    // Compare against every candidate (no early exit) so timing says nothing about which matched.
    for (const candidate of candidates) match = constantTimeEqual(expected, candidate) || match;
  }
  if (!match) return { ok: false, failure: "NoMatchingSignature", message: "no webhook-signature matches the body" };
  if (input.replay?.seen(id, input.now.getTime())) {
    return { ok: false, failure: "Replayed", message: `webhook-id ${JSON.stringify(id.slice(0, 64))} was already received` };
  }
  return { ok: true, id };
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
