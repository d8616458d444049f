// POST /v1/webhooks/github and POST /v1/webhooks/gitlab: a merged claimstep pull request is the
// approval of its step, so step the set named by its branch; a pull request closed unmerged (or
// reopened) also steps it, and the step records the pause (Blocked/ChangeRejected) or the resume.
// Mount with `app.route("/", gitopsWebhookRoutes({...}))`, or as the app's Mount
// `(body) => gitopsWebhookRoutes({ body, ... })` (functions/wiring.ts): the app's body reader then
// goes after the header checks.
//
// Each route: the forge is configured (else 404) → the forge's headers are there, checked before
// any of the body is read (else 401 without a well-formed signature or a token, 400 without the
// event or the delivery id) → the body is in, within the limit and BODY_DEADLINE_MS (else 413, 408)
// → the delivery is authentic (middleware, else 401) → it is a pull-request event of a claimstep branch whose head is the configured repository
// (else 202, ignored: a fork's pull request is not claimstep's, and nothing is stored) → its namespace is
// allowed (else 403) → it was not delivered before (else 401 Replayed; 503 when the replay store is
// full) → one step. A set that no longer exists is 202 (ignored), not an error: GitLab disables a
// webhook that keeps failing, and a pull request of a deleted set is nothing to retry.
// Each part in its own module (functions/routes/gitops-webhooks/): the header checks
// (forge-headers.ts), the signature and the token (authenticity.ts), replay protection (replay.ts),
// the pull request's step (pull-request.ts), and each forge's route (github.ts, gitlab.ts).
import { Hono } from "hono";
import { onError } from "../http/problem.js";
import { type GitOpsWebhookOptions, webhookContext } from "./gitops-webhooks/context.js";
import { serveGitHub } from "./gitops-webhooks/github.js";
import { serveGitLab } from "./gitops-webhooks/gitlab.js";

export type { GitOpsWebhookOptions } from "./gitops-webhooks/context.js";

/** The forges' routes on one Hono app, sharing one context; the GitHub route first, as before. */
export function gitopsWebhookRoutes(opts: GitOpsWebhookOptions): Hono {
  const ctx = webhookContext(opts);
  const app = new Hono();
  serveGitHub(app, ctx);
  serveGitLab(app, ctx);
  app.onError(onError(ctx.log));
  return app;
}
