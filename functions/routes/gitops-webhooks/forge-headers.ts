// What a forge delivery is refused from its headers alone, before any of its body is read: the
// forge is not configured (404), or a header every delivery of it carries is missing or malformed
// (401 for the credential, 400 for the rest).
import type { MiddlewareHandler } from "hono";
import { Problem } from "../../http/problem.js";
import type { GitOpsWebhookOptions, Provider } from "./context.js";

/** 404 when the forge has no secret configured. */
export const configured = (opts: GitOpsWebhookOptions, provider: Provider, what: string): MiddlewareHandler =>
  async function configured(_c, next) {
    if (!opts[provider])
      throw new Problem(
        404,
        "NotFound",
        `${provider === "github" ? "GitHub" : "GitLab"} webhooks are not configured (no ${what})`,
      );
    return next();
  };

/** A header every delivery of the forge carries, and what a missing or malformed one is answered. */
interface RequiredHeader {
  /** One of these names (GitLab's delivery id: Idempotency-Key from 17.4, X-Gitlab-Event-UUID before). */
  names: readonly string[];
  /** 401: the credential; 400: what the forge always sends. */
  status: 400 | 401;
  wellFormed?: { test: (value: string) => boolean; as: string };
}

/**
 * What GitHub and GitLab send with every delivery, checked from the headers alone before any of the
 * body is read: a client without them is refused at once and holds no connection while it trickles
 * a body (issue 37). The credential comes first, so that an unauthenticated client learns nothing else.
 */
const FORGE_HEADERS: Record<Provider, readonly RequiredHeader[]> = {
  github: [
    {
      names: ["X-Hub-Signature-256"],
      status: 401,
      wellFormed: { test: (v) => /^sha256=[0-9a-f]{64}$/i.test(v), as: "sha256=<64 hex digits>" },
    },
    { names: ["X-GitHub-Event"], status: 400 },
    { names: ["X-GitHub-Delivery"], status: 400 },
  ],
  gitlab: [
    { names: ["X-Gitlab-Token"], status: 401 },
    { names: ["X-Gitlab-Event"], status: 400 },
    { names: ["Idempotency-Key", "X-Gitlab-Event-UUID"], status: 400 },
  ],
};

/** 401/400 naming the first of FORGE_HEADERS[provider] that is missing or malformed. */
export const forgeHeaders = (provider: Provider): MiddlewareHandler =>
  async function forgeHeaders(c, next) {
    for (const h of FORGE_HEADERS[provider]) {
      const value = h.names.map((n) => c.req.header(n)).find((v) => v !== undefined && v !== "");
      const named = h.names.join(" or ");
      if (value === undefined)
        throw new Problem(
          h.status,
          h.status === 401 ? "Unauthorized" : "BadRequest",
          `${provider} webhook: the delivery has no ${named} header`,
        );
      if (h.wellFormed && !h.wellFormed.test(value))
        throw new Problem(
          h.status,
          h.status === 401 ? "Unauthorized" : "BadRequest",
          `${provider} webhook: the ${named} header is not ${h.wellFormed.as}`,
        );
    }
    return next();
  };
