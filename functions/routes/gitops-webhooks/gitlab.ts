// POST /v1/webhooks/gitlab: configured → headers (the token first) → the token → the body within
// the limit → the merge request. GitLab signs nothing: the body's replay key is its SHA-256.
import type { Hono } from "hono";
import { parseGitLabEvent } from "../../../adapters/gitops/webhook.js";
import { gitlabToken } from "./authenticity.js";
import type { WebhookContext } from "./context.js";
import { configured, forgeHeaders } from "./forge-headers.js";
import { stepPullRequest } from "./pull-request.js";

const sha256Hex = async (bytes: ArrayBuffer): Promise<string> =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");

export function serveGitLab(app: Hono, ctx: WebhookContext): void {
  const { opts } = ctx;
  app.post(
    "/v1/webhooks/gitlab",
    configured(opts, "gitlab", "webhook token"),
    forgeHeaders("gitlab"),
    gitlabToken(opts),
    ctx.readTheBody,
    async (c) => {
      const raw = await c.req.arrayBuffer();
      const r = await stepPullRequest(
        ctx,
        "gitlab",
        raw,
        (body) => parseGitLabEvent(c.req.header("x-gitlab-event"), body, opts.gitlab?.repository),
        // Idempotency-Key is the same across GitLab's retries of one delivery (GitLab 17.4+);
        // X-Gitlab-Event-UUID identifies the event.
        c.req.header("idempotency-key") ?? c.req.header("x-gitlab-event-uuid"),
        await sha256Hex(raw),
      );
      return c.json(r.body, r.status);
    },
  );
}
