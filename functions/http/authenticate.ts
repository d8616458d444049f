// Authentication and authorization as Hono middleware factories:
//   authenticate(settings)  a Standard Webhooks signature (when its headers are present) or a bearer
//                           token; sets `auth` to "signature" or "bearer", else throws 401
//   requireSignature()      403 for bearer tokens (the relay's events must be signed)
//   namespaceGuard(allowed) 403 for a set outside CLAIMSTEP_NAMESPACES
import type { MiddlewareHandler, ValidationTargets } from "hono";
import { Webhook } from "standardwebhooks";
import { type AnyReplayGuard, bearerMatches, claimWebhookId, verifyWebhook } from "../auth.js";
import { readBodyOnce } from "./body.js";
import { Problem } from "./problem.js";

export interface AuthSettings {
  bearerTokens: readonly string[];
  /** `whsec_` secrets; all are accepted (a rotation). */
  webhookSecrets: readonly string[];
  replay: AnyReplayGuard;
}

export interface AuthenticateOptions {
  log?: Log;
  /**
   * A signature covers the body, so a signed request's body is read (at most this many bytes,
   * else 413) before it is verified; a bearer token is checked from its header alone, the body
   * left unread until the token is valid. Default 256 KiB.
   */
  maxBodyBytes?: number;
}

export type AuthMethod = "signature" | "bearer";
export type AuthEnv = { Variables: { auth: AuthMethod } };

type Log = (entry: Record<string, unknown>) => void;

/**
 * Standard Webhooks signature (when `webhook-signature` is present) or `Authorization: Bearer`.
 * Put it before `readBody`: without a valid token nothing of the body is read.
 */
export function authenticate(settings: AuthSettings, opts: AuthenticateOptions = {}): MiddlewareHandler<AuthEnv> {
  const log = opts.log ?? (() => {});
  const maxBodyBytes = opts.maxBodyBytes ?? 256 * 1024;
  const verifiers = settings.webhookSecrets.map((s) => new Webhook(s));
  return async function authenticate(c, next) {
    const signature = c.req.header("webhook-signature");
    if (signature !== undefined) {
      if (verifiers.length === 0) {
        throw new Problem(401, "Unauthorized", "signed requests are not accepted: no webhook secret is configured");
      }
      const timestamp = c.req.header("webhook-timestamp");
      await readBodyOnce(c, maxBodyBytes);
      const verified = verifyWebhook({
        secrets: verifiers,
        id: c.req.header("webhook-id"),
        timestamp,
        signature,
        body: await c.req.text(),
      });
      // The id is remembered only once the signature is valid (the store may be remote: the Worker's is shared by every isolate).
      const verdict = verified.ok ? await claimWebhookId(settings.replay, verified.id, timestamp!) : verified;
      if (!verdict.ok) {
        log({ msg: "auth rejected", method: "signature", failure: verdict.failure, path: c.req.path });
        // The store is full, or gave no valid answer: refused for now (fail closed), not a failed authentication.
        if (verdict.failure === "ReplayStoreFull" || verdict.failure === "ReplayStoreUnavailable") {
          throw new Problem(503, "Unavailable", verdict.message, {
            headers: { "Retry-After": String(verdict.retryAfterSeconds) },
          });
        }
        // An over-long id is a malformed request, not a failed authentication: no retry will help.
        const status = verdict.failure === "BadId" ? 400 : 401;
        throw new Problem(status, status === 400 ? "BadRequest" : "Unauthorized", verdict.message, {
          extra: { failure: verdict.failure },
        });
      }
      c.set("auth", "signature");
      return next();
    }
    const authorization = c.req.header("authorization");
    if (await bearerMatches(authorization, settings.bearerTokens)) {
      c.set("auth", "bearer");
      return next();
    }
    log({ msg: "auth rejected", method: authorization !== undefined ? "bearer" : "none", path: c.req.path });
    throw new Problem(
      401,
      "Unauthorized",
      authorization !== undefined
        ? "the bearer token is not valid"
        : "authenticate with `Authorization: Bearer <token>` or a Standard Webhooks signature (webhook-id, webhook-timestamp, webhook-signature)",
      { headers: { "WWW-Authenticate": 'Bearer realm="claimstep"' } },
    );
  };
}

/** After `authenticate()`: 403 unless the request was signed. */
export const requireSignature = (why: string): MiddlewareHandler<AuthEnv> =>
  async function requireSignature(c, next) {
    if (c.get("auth") !== "signature") throw new Problem(403, "Forbidden", why);
    return next();
  };

/**
 * 403 for a set outside `allowed` (empty = every namespace), read from what the validator of
 * `target` produced (the URL's parameters, or the JSON body): validation comes first.
 */
export function namespaceGuard<T>(
  allowed: readonly string[],
  target: keyof ValidationTargets,
  namespaceOf: (validated: T) => string,
): MiddlewareHandler {
  const set = new Set(allowed);
  return async function namespaceGuard(c, next) {
    if (set.size === 0) return next();
    const namespace = namespaceOf((c.req.valid as (t: keyof ValidationTargets) => T)(target));
    if (!set.has(namespace)) {
      throw new Problem(
        403,
        "Forbidden",
        `namespace "${namespace}" is not one claimstep manages here (CLAIMSTEP_NAMESPACES: ${[...set].join(", ")})`,
      );
    }
    return next();
  };
}
