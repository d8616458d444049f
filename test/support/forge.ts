// The fake forges behind one face, for the GitOps tests: GitHub (octo/fleet) or GitLab
// (platform/fleet) served by msw, the pull-request writer's config for it, its pull (merge)
// requests as one shape, a merge, and the signed webhook the forge then sends.
import type { SetupServer } from "msw/node";
import { signGitHubBody } from "../../adapters/gitops/webhook.js";
import { FakeGitHub } from "../adapters/gitops/fake-github.js";
import { FakeGitLab } from "../adapters/gitops/fake-gitlab.js";
import type { FakeRepo } from "../adapters/gitops/fake-repo.js";
import { PATH_TEMPLATE } from "../adapters/gitops/helpers.js";

/** The secret (GitHub) and token (GitLab) the tests' webhook routes are configured with. */
export const WEBHOOK_SECRET = "webhook-secret";

export type ForgeKind = "github" | "gitlab";

/** Whatever serves `/v1/webhooks/{github,gitlab}` (gitopsWebhookRoutes, an app). */
export interface WebhookRoutes {
  request(path: string, init: RequestInit): Response | Promise<Response>;
}

/** A pull request (GitHub) or merge request (GitLab), as the tests compare them. */
export interface ForgeRequest {
  state: string;
  branch: string;
  title: string;
  body: string;
  url: string;
}

export interface Forge {
  kind: ForgeKind;
  repo: FakeRepo;
  now: () => number;
  /** The pull-request writer's config for this forge (`pathTemplate` PATH_TEMPLATE, plus `opts.config`). */
  config: Record<string, unknown>;
  /** The numbers (GitHub) or iids (GitLab) of the open requests. */
  open(): number[];
  /** Merge one: the files it changed on the base branch. */
  merge(n: number): Array<{ path: string; text: string }>;
  close(n: number): void;
  reopen(n: number): void;
  /** The signed webhook the forge sends once request `n` is merged. */
  notifyMerged(routes: WebhookRoutes, n: number): Promise<Response>;
  requests(): ForgeRequest[];
  count(): number;
  branches(): string[];
  /** A file on the base branch. */
  file(path: string): string | undefined;
  /** Every request claimstep sent the forge but its reads. */
  writes(): string[];
}

export interface ForgeOptions {
  /** Files on the base branch (main). */
  files?: Record<string, string>;
  /** Added to the writer's config (statefulSetPathTemplate, labels, …). */
  config?: Record<string, unknown>;
}

/** GitHub's signed `pull_request` webhook for pull request `n`. */
export async function githubWebhook(
  routes: WebhookRoutes,
  gh: FakeGitHub,
  n: number,
  action: "closed" | "reopened" | "opened" | "synchronize",
  secret = WEBHOOK_SECRET,
): Promise<Response> {
  const body = JSON.stringify(gh.webhookPayload(n, action));
  return routes.request("/v1/webhooks/github", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": "pull_request",
      "x-github-delivery": crypto.randomUUID(),
      "x-hub-signature-256": await signGitHubBody(secret, body),
    },
    body,
  });
}

/** GitLab's `Merge Request Hook` for merge request `iid`, with the token. */
export async function gitlabWebhook(
  routes: WebhookRoutes,
  gl: FakeGitLab,
  iid: number,
  action: "merge" | "close" | "reopen" | "open" | "update",
  token = WEBHOOK_SECRET,
): Promise<Response> {
  return routes.request("/v1/webhooks/gitlab", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-gitlab-event": "Merge Request Hook",
      "x-gitlab-event-uuid": crypto.randomUUID(),
      "x-gitlab-token": token,
    },
    body: JSON.stringify(gl.webhookPayload(iid, action)),
  });
}

/** A fake forge of `kind`, served by `server` (msw) from now on. */
export function forge(kind: ForgeKind, server: SetupServer, opts: ForgeOptions = {}): Forge {
  const files = opts.files ?? {};
  if (kind === "github") {
    const gh = new FakeGitHub("octo", "fleet", "main", files);
    server.use(...gh.handlers());
    return {
      kind,
      repo: gh.repo,
      now: gh.now,
      config: {
        provider: "github",
        repository: "octo/fleet",
        pathTemplate: PATH_TEMPLATE,
        token: gh.token,
        ...opts.config,
      },
      open: () => gh.pulls.filter((p) => p.state === "open").map((p) => p.number),
      merge: (n) => gh.merge(n),
      close: (n) => gh.close(n),
      reopen: (n) => gh.reopen(n),
      notifyMerged: (routes, n) => githubWebhook(routes, gh, n, "closed"),
      requests: () =>
        gh.pulls.map((p) => ({
          state: p.merged_at ? "merged" : p.state,
          branch: p.head,
          title: p.title,
          body: p.body,
          url: `https://github.com/octo/fleet/pull/${p.number}`,
        })),
      count: () => gh.pulls.length,
      branches: () => gh.pulls.map((p) => p.head),
      file: (path) => gh.repo.file("main", path)?.text,
      writes: () => gh.requests.filter((r) => !r.startsWith("GET ")),
    };
  }
  const gl = new FakeGitLab("platform/fleet", "main", files);
  server.use(...gl.handlers());
  return {
    kind,
    repo: gl.repo,
    now: gl.now,
    config: {
      provider: "gitlab",
      repository: "platform/fleet",
      pathTemplate: PATH_TEMPLATE,
      token: gl.token,
      ...opts.config,
    },
    open: () => gl.mergeRequests.filter((m) => m.state === "opened").map((m) => m.iid),
    merge: (n) => gl.merge(n),
    close: (n) => gl.close(n),
    reopen: (n) => gl.reopen(n),
    notifyMerged: (routes, n) => gitlabWebhook(routes, gl, n, "merge"),
    requests: () =>
      gl.mergeRequests.map((m) => ({
        state: m.state === "opened" ? "open" : m.state,
        branch: m.source_branch,
        title: m.title,
        body: m.description,
        url: `https://gitlab.com/platform/fleet/-/merge_requests/${m.iid}`,
      })),
    count: () => gl.mergeRequests.length,
    branches: () => gl.mergeRequests.map((m) => m.source_branch),
    file: (path) => gl.repo.file("main", path)?.text,
    writes: () => gl.requests.filter((r) => !r.startsWith("GET ")),
  };
}
