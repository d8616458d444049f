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
import { Hono, type MiddlewareHandler } from "hono";
import { ApiError, PermissionError } from "../../adapters/api-error.js";
import {
  type Parsed,
  type PullRequestEvent,
  parseGitHubEvent,
  parseGitLabEvent,
  verifyGitHubSignature,
  verifyGitLabToken,
} from "../../adapters/gitops/webhook.js";
import type { SetRef } from "../../core/types.js";
import { type AnyReplayGuard, RecentIds, replayVerdict } from "../auth.js";
import { DEFAULT_BODY_LIMIT, readBody } from "../http/body.js";
import { onError, Problem } from "../http/problem.js";
import type { StepResult } from "../step.js";

/**
 * How long a forge delivery is remembered. GitHub and GitLab sign no timestamp, so there is no
 * tolerance window to match: an hour covers their own retries and redeliveries.
 */
export const FORGE_REPLAY_WINDOW_MS = 60 * 60 * 1000;

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

type Provider = "github" | "gitlab";

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
const forgeHeaders = (provider: Provider): MiddlewareHandler =>
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

const sha256Hex = async (bytes: ArrayBuffer): Promise<string> =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");

export function gitopsWebhookRoutes(opts: GitOpsWebhookOptions): Hono {
  if (opts.github && !opts.github.secret)
    throw new Error("GitHub webhook secret is empty: set it, or leave github out to disable the route");
  if (opts.gitlab && !opts.gitlab.token)
    throw new Error("GitLab webhook token is empty: set it, or leave gitlab out to disable the route");
  const replay = opts.replay ?? new RecentIds();
  const log = opts.log ?? (() => {});
  const readTheBody = opts.body ?? readBody({ maxBytes: DEFAULT_BODY_LIMIT });
  const app = new Hono();

  /** 404 when the forge has no secret configured. */
  const configured = (provider: Provider, what: string): MiddlewareHandler =>
    async function configured(_c, next) {
      if (!opts[provider])
        throw new Problem(
          404,
          "NotFound",
          `${provider === "github" ? "GitHub" : "GitLab"} webhooks are not configured (no ${what})`,
        );
      return next();
    };

  const unauthentic = (provider: Provider) =>
    new Problem(401, "Unauthorized", `${provider} webhook: missing or wrong signature/token`);

  /** X-Hub-Signature-256: HMAC-SHA256 of the raw body with the webhook secret. */
  const githubSignature: MiddlewareHandler = async function githubSignature(c, next) {
    const raw = new Uint8Array(await c.req.arrayBuffer());
    if (!(await verifyGitHubSignature(opts.github!.secret, raw, c.req.header("x-hub-signature-256"))))
      throw unauthentic("github");
    return next();
  };

  /** X-Gitlab-Token: the shared secret itself. */
  const gitlabToken: MiddlewareHandler = async function gitlabToken(c, next) {
    if (!(await verifyGitLabToken(opts.gitlab!.token, c.req.header("x-gitlab-token")))) throw unauthentic("gitlab");
    return next();
  };

  /**
   * Record a stepping delivery (by its id and by its body, so that neither a verbatim replay nor one
   * with a new id header gets through) and return what to release if the step fails.
   */
  const claim = async (provider: Provider, keys: string[]): Promise<() => Promise<void>> => {
    const now = Date.now();
    const claimed: string[] = [];
    const releaseAll = async () => void (await Promise.all(claimed.map((k) => replay.release(k))));
    for (const key of keys) {
      // A store that fails (an unreachable ledger) must not keep the keys claimed before it:
      // the forge's redelivery would be refused as a replay for the whole window.
      let r: Awaited<ReturnType<AnyReplayGuard["claim"]>>;
      try {
        r = await replay.claim(key, now, now + FORGE_REPLAY_WINDOW_MS);
      } catch (err) {
        await releaseAll();
        throw err;
      }
      // Read strictly, as every signed route reads its store (functions/auth.ts): only { ok: true } accepts.
      const verdict = replayVerdict(key, r);
      if (verdict.ok) {
        claimed.push(key);
        continue;
      }
      await releaseAll();
      if (verdict.failure === "ReplayStoreFull" || verdict.failure === "ReplayStoreUnavailable") {
        const message =
          verdict.failure === "ReplayStoreFull"
            ? "too many webhook deliveries within the replay window: retry later"
            : verdict.message;
        throw new Problem(503, "Unavailable", message, {
          headers: { "Retry-After": String(verdict.retryAfterSeconds) },
        });
      }
      log({ msg: "webhook replayed", provider });
      throw new Problem(401, "Unauthorized", `${provider} webhook: this delivery was already received`, {
        extra: { failure: "Replayed" },
      });
    }
    return releaseAll;
  };

  const handle = async (
    provider: Provider,
    raw: ArrayBuffer,
    parse: (body: unknown) => Parsed,
    deliveryId: string | undefined,
    bodyKey: string,
  ) => {
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder().decode(raw));
    } catch {
      throw new Problem(
        400,
        "BadRequest",
        `${provider} webhook: the body is not JSON (set the webhook content type to application/json)`,
      );
    }
    const parsed = parse(body);
    if ("ignored" in parsed) return { status: 202 as const, body: { ignored: parsed.ignored } };
    const { event } = parsed;
    const ref = event.step.ref;
    if (opts.namespaces?.length && !opts.namespaces.includes(ref.namespace)) {
      throw new Problem(
        403,
        "Forbidden",
        `branch ${event.branch} names namespace ${ref.namespace}, which claimstep may not act in`,
      );
    }
    if (!deliveryId) {
      throw new Problem(
        400,
        "BadRequest",
        `${provider} webhook: the delivery has no ${provider === "github" ? "X-GitHub-Delivery" : "Idempotency-Key or X-Gitlab-Event-UUID"} header`,
      );
    }
    const release = await claim(provider, [`${provider}:delivery:${deliveryId}`, `${provider}:body:${bodyKey}`]);
    let result: StepResult;
    try {
      result = await opts.step(ref, event);
    } catch (err) {
      if (err instanceof ApiError && err.kind === "NotFound") {
        log({ msg: "webhook for a missing set", provider, namespace: ref.namespace, name: ref.name });
        return {
          status: 202 as const,
          body: { ignored: `StatefulSet ${ref.namespace}/${ref.name} does not exist (branch ${event.branch})` },
        };
      }
      await release(); // nothing was done: a redelivery must be accepted
      if (err instanceof ApiError || err instanceof PermissionError) throw err; // 503, 502, 409 as the app answers them
      throw new Problem(
        500,
        "InternalError",
        `step of ${ref.namespace}/${ref.name} failed: ${(err as Error).message}`,
        { cause: err },
      );
    }
    return {
      status: 200 as const,
      body: {
        provider,
        pullRequest: { number: event.number, url: event.url, outcome: event.outcome, branch: event.branch },
        set: ref,
        phase: result.decision.phase,
        reason: result.decision.reason,
        message: result.decision.message,
        outcome: result.outcome.kind,
      },
    };
  };

  app.post(
    "/v1/webhooks/github",
    configured("github", "webhook secret"),
    forgeHeaders("github"),
    readTheBody,
    githubSignature,
    async (c) => {
      const raw = await c.req.arrayBuffer();
      const r = await handle(
        "github",
        raw,
        (body) => parseGitHubEvent(c.req.header("x-github-event"), body, opts.github?.repository),
        c.req.header("x-github-delivery"),
        c.req.header("x-hub-signature-256")!, // the HMAC of the body, checked above
      );
      return c.json(r.body, r.status);
    },
  );

  app.post(
    "/v1/webhooks/gitlab",
    configured("gitlab", "webhook token"),
    forgeHeaders("gitlab"),
    gitlabToken,
    readTheBody,
    async (c) => {
      const raw = await c.req.arrayBuffer();
      const r = await handle(
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

  app.onError(onError(log));
  return app;
}
