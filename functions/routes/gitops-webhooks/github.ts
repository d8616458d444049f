// POST /v1/webhooks/github: configured → headers (the signature's shape first) → the body within
// the limit → its HMAC → the pull request. The body's replay key is its signature: the HMAC of it.
import type { Hono } from "hono";
import { parseGitHubEvent } from "../../../adapters/gitops/webhook.js";
import { githubSignature } from "./authenticity.js";
import type { WebhookContext } from "./context.js";
import { configured, forgeHeaders } from "./forge-headers.js";
import { stepPullRequest } from "./pull-request.js";

export function serveGitHub(app: Hono, ctx: WebhookContext): void {
  const { opts } = ctx;
  app.post(
    "/v1/webhooks/github",
    configured(opts, "github", "webhook secret"),
    forgeHeaders("github"),
    ctx.readTheBody,
    githubSignature(opts),
    async (c) => {
      const raw = await c.req.arrayBuffer();
      const r = await stepPullRequest(
        ctx,
        "github",
        raw,
        (body) => parseGitHubEvent(c.req.header("x-github-event"), body, opts.github?.repository),
        c.req.header("x-github-delivery"),
        c.req.header("x-hub-signature-256")!, // the HMAC of the body, checked above
      );
      return c.json(r.body, r.status);
    },
  );
}
