// What the forge webhook routes share, built once per app (functions/routes/gitops-webhooks.ts):
// the options, and the replay store, the log and the body reader with their defaults.
import type { MiddlewareHandler } from "hono";
import type { PullRequestEvent } from "../../../adapters/gitops/webhook.js";
import type { SetRef } from "../../../core/types.js";
import { type AnyReplayGuard, RecentIds } from "../../auth.js";
import { DEFAULT_BODY_LIMIT, readBody } from "../../http/body.js";
import type { StepResult } from "../../step.js";

export interface GitOpsWebhookOptions {
  /**
   * The secret of the GitHub webhook (X-Hub-Signature-256). Absent: the GitHub route answers 404.
   * `repository` (`owner/repo`, the GitOps repository): only pull requests whose head is in it step
   * (absent: the repository the hook is on); one from a fork is ignored.
   */
  github?: { secret: string; repository?: string };
  /**
   * The secret token of the GitLab webhook (X-Gitlab-Token). Absent: the GitLab route answers 404.
   * `repository` (project path or id, the GitOps repository): only its merge requests step; any
   * merge request from a fork (source project ≠ target project) is ignored.
   */
  gitlab?: { token: string; repository?: string };
  /** Run one step of a set (typically runStep with the per-set writer choice). */
  step: (ref: SetRef, event: PullRequestEvent) => Promise<StepResult>;
  /** Namespaces a branch may name; empty or absent = all (as the app's own allow list). */
  namespaces?: readonly string[];
  /**
   * Delivery ids already acted on; default: a store of its own. Give it a store of its own, not the
   * relay's (Standard Webhooks): forge deliveries must not use up the relay's budget.
   */
  replay?: AnyReplayGuard;
  log?: (entry: Record<string, unknown>) => void;
  /**
   * Reads the body once the headers passed (the app's, with its body limit: functions/app.ts
   * mounts these routes so); default readBody within DEFAULT_BODY_LIMIT.
   */
  body?: MiddlewareHandler;
}

export type Provider = "github" | "gitlab";

/** GitOpsWebhookOptions with the defaults filled in: what every route reads. */
export interface WebhookContext {
  opts: GitOpsWebhookOptions;
  replay: AnyReplayGuard;
  log: (entry: Record<string, unknown>) => void;
  readTheBody: MiddlewareHandler;
}

/** Throws on a forge configured with an empty secret: it would accept anyone's deliveries. */
export function webhookContext(opts: GitOpsWebhookOptions): WebhookContext {
  if (opts.github && !opts.github.secret)
    throw new Error("GitHub webhook secret is empty: set it, or leave github out to disable the route");
  if (opts.gitlab && !opts.gitlab.token)
    throw new Error("GitLab webhook token is empty: set it, or leave gitlab out to disable the route");
  return {
    opts,
    replay: opts.replay ?? new RecentIds(),
    log: opts.log ?? (() => {}),
    readTheBody: opts.body ?? readBody({ maxBytes: DEFAULT_BODY_LIMIT }),
  };
}
