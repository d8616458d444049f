// Whether a delivery comes from the forge: GitHub signs the body (checked once it is read),
// GitLab sends the shared token (checked from the headers, before the body). Both compare in
// constant time (adapters/gitops/webhook.ts); either failure is the same 401.
import type { MiddlewareHandler } from "hono";
import { verifyGitHubSignature, verifyGitLabToken } from "../../../adapters/gitops/webhook.js";
import { Problem } from "../../http/problem.js";
import type { GitOpsWebhookOptions, Provider } from "./context.js";

const unauthentic = (provider: Provider) =>
  new Problem(401, "Unauthorized", `${provider} webhook: missing or wrong signature/token`);

/** X-Hub-Signature-256: HMAC-SHA256 of the raw body with the webhook secret. */
export const githubSignature = (opts: GitOpsWebhookOptions): MiddlewareHandler =>
  async function githubSignature(c, next) {
    const raw = new Uint8Array(await c.req.arrayBuffer());
    if (!(await verifyGitHubSignature(opts.github!.secret, raw, c.req.header("x-hub-signature-256"))))
      throw unauthentic("github");
    return next();
  };

/** X-Gitlab-Token: the shared secret itself. */
export const gitlabToken = (opts: GitOpsWebhookOptions): MiddlewareHandler =>
  async function gitlabToken(c, next) {
    if (!(await verifyGitLabToken(opts.gitlab!.token, c.req.header("x-gitlab-token")))) throw unauthentic("gitlab");
    return next();
  };
