// POST /v1/webhooks/github and POST /v1/webhooks/gitlab: a merged claimstep pull request is the
// approval of its step, so step the set named by its branch; a pull request closed unmerged (or
// reopened) also steps it, and the step records the pause (Blocked/ChangeRejected) or the resume.
// Mount with `app.route("/", gitopsWebhookRoutes({...}))`.
import { Hono } from "hono";
import type { SetRef } from "../../core/types.js";
import {
  type Parsed,
  type PullRequestEvent,
  parseGitHubEvent,
  parseGitLabEvent,
  verifyGitHubSignature,
  verifyGitLabToken,
} from "../../adapters/gitops/webhook.js";
import type { StepResult } from "../step.js";

export interface GitOpsWebhookOptions {
  /** The secret of the GitHub webhook (X-Hub-Signature-256). Absent: the GitHub route answers 404. */
  github?: { secret: string };
  /** The secret token of the GitLab webhook (X-Gitlab-Token). Absent: the GitLab route answers 404. */
  gitlab?: { token: string };
  /** Run one step of a set (typically runStep with the per-set writer choice). */
  step: (ref: SetRef, event: PullRequestEvent) => Promise<StepResult>;
  /** Namespaces a branch may name; empty or absent = all (as the app's own allow list). */
  namespaces?: readonly string[];
}

type Provider = "github" | "gitlab";

export function gitopsWebhookRoutes(opts: GitOpsWebhookOptions): Hono {
  if (opts.github && !opts.github.secret) throw new Error("GitHub webhook secret is empty: set it, or leave github out to disable the route");
  if (opts.gitlab && !opts.gitlab.token) throw new Error("GitLab webhook token is empty: set it, or leave gitlab out to disable the route");
  const app = new Hono();

  const handle = async (
    provider: Provider,
    raw: Uint8Array,
    authentic: (raw: Uint8Array) => Promise<boolean>,
    parse: (body: unknown) => Parsed,
  ) => {
    if (!(await authentic(raw))) {
      return { status: 401 as const, body: { error: `${provider} webhook: missing or wrong signature/token` } };
    }
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder().decode(raw));
    } catch {
      return { status: 400 as const, body: { error: `${provider} webhook: the body is not JSON (set the webhook content type to application/json)` } };
    }
    const parsed = parse(body);
    if ("ignored" in parsed) return { status: 202 as const, body: { ignored: parsed.ignored } };
    const { event } = parsed;
    if (opts.namespaces?.length && !opts.namespaces.includes(event.step.ref.namespace)) {
      return { status: 403 as const, body: { error: `branch ${event.branch} names namespace ${event.step.ref.namespace}, which claimstep may not act in` } };
    }
    try {
      const result = await opts.step(event.step.ref, event);
      return {
        status: 200 as const,
        body: {
          provider,
          pullRequest: { number: event.number, url: event.url, outcome: event.outcome, branch: event.branch },
          set: event.step.ref,
          phase: result.decision.phase,
          reason: result.decision.reason,
          message: result.decision.message,
          outcome: result.outcome.kind,
        },
      };
    } catch (err) {
      return { status: 500 as const, body: { error: `step of ${event.step.ref.namespace}/${event.step.ref.name} failed: ${(err as Error).message}` } };
    }
  };

  app.post("/v1/webhooks/github", async (c) => {
    const github = opts.github;
    if (!github) return c.json({ error: "GitHub webhooks are not configured (no webhook secret)" }, 404);
    const raw = new Uint8Array(await c.req.arrayBuffer());
    const r = await handle(
      "github",
      raw,
      (b) => verifyGitHubSignature(github.secret, b, c.req.header("x-hub-signature-256")),
      (body) => parseGitHubEvent(c.req.header("x-github-event"), body),
    );
    return c.json(r.body, r.status);
  });

  app.post("/v1/webhooks/gitlab", async (c) => {
    const gitlab = opts.gitlab;
    if (!gitlab) return c.json({ error: "GitLab webhooks are not configured (no webhook token)" }, 404);
    const raw = new Uint8Array(await c.req.arrayBuffer());
    const r = await handle(
      "gitlab",
      raw,
      () => verifyGitLabToken(gitlab.token, c.req.header("x-gitlab-token")),
      (body) => parseGitLabEvent(c.req.header("x-gitlab-event"), body),
    );
    return c.json(r.body, r.status);
  });

  return app;
}
