// The pull-request writer against the msw fake of GitLab: merge requests, idempotency, the
// lifecycle, and GitLab's error shapes.
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { ApiError } from "../../../adapters/api-error.js";
import { parseRepositoryConfig } from "../../../adapters/gitops/config.js";
import { GitLabProvider } from "../../../adapters/gitops/gitlab.js";
import { GitProviderError } from "../../../adapters/gitops/http.js";
import { pullRequestWriter } from "../../../adapters/gitops/writer.js";
import { FakeGitLab } from "./fake-gitlab.js";
import { growDecision, mswServer, PATH_TEMPLATE } from "./helpers.js";

const server = mswServer();
const FILE = "clusters/prod/claims/default/data-web-2.yaml";
const PROJECT = "platform/gitops/fleet";

function setup(
  opts: { files?: Record<string, string>; labels?: string[]; reviewers?: string[]; repository?: string } = {},
) {
  const gitlab = new FakeGitLab(PROJECT, "main", opts.files ?? {});
  server.use(...gitlab.handlers());
  const writer = pullRequestWriter(
    {
      provider: "gitlab",
      repository: opts.repository ?? PROJECT,
      pathTemplate: PATH_TEMPLATE,
      token: gitlab.token,
      labels: opts.labels ?? [],
      reviewers: opts.reviewers ?? [],
    },
    { now: gitlab.now },
  );
  return { gitlab, writer };
}

const writes = (gitlab: FakeGitLab) => gitlab.requests.filter((r) => !r.startsWith("GET "));

describe("GitLab pull-request writer", () => {
  it("proposes a step as one branch, one commit and one merge request with labels and reviewers", async () => {
    const { gitlab, writer } = setup({ labels: ["storage", "claimstep"], reviewers: ["alice", "12", "nobody"] });
    const decision = growDecision("2Gi");
    const outcome = await writer.apply(decision.action, decision);
    const branch = `claimstep/default/web/${decision.revision}/2`;
    const url = `https://gitlab.com/${PROJECT}/-/merge_requests/1`;
    expect(outcome).toEqual({
      kind: "proposed",
      detail: expect.stringContaining("opened pull request #1; merge it to continue"),
      url,
    });
    expect((outcome as { detail: string }).detail).toContain(
      "reviewer nobody not found on GitLab platform/gitops/fleet",
    );
    expect(gitlab.repo.commits.map((c) => [c.branch, c.path])).toEqual([[branch, FILE]]);
    expect(YAML.parse(gitlab.repo.file(branch, FILE)!.text).spec.resources.requests.storage).toBe("2Gi");
    expect(gitlab.mergeRequests).toHaveLength(1);
    expect(gitlab.mergeRequest(1)).toMatchObject({
      source_branch: branch,
      target_branch: "main",
      labels: ["storage", "claimstep"],
      reviewer_ids: [11, 12],
      state: "opened",
    });
    expect(gitlab.mergeRequest(1).description).toContain("| 2 | web-2 | Pending **← this PR** |");
  });

  it("is idempotent: three invocations give one branch, one commit, one merge request", async () => {
    const { gitlab, writer } = setup();
    const decision = growDecision("2Gi");
    for (let i = 0; i < 3; i++) expect((await writer.apply(decision.action, decision)).kind).toBe("proposed");
    expect(gitlab.repo.branches.size).toBe(2);
    expect(gitlab.repo.commits).toHaveLength(1);
    expect(gitlab.mergeRequests).toHaveLength(1);
    expect(writes(gitlab)).toEqual([
      `POST /api/v4/projects/${encodeURIComponent(PROJECT)}/repository/branches`,
      `POST /api/v4/projects/${encodeURIComponent(PROJECT)}/repository/files/${encodeURIComponent(FILE)}`,
      `POST /api/v4/projects/${encodeURIComponent(PROJECT)}/merge_requests`,
    ]);
  });

  it("costs 6 requests to open a merge request (+1 per reviewer username), 2 per repeat", async () => {
    const { gitlab, writer } = setup({ labels: ["claimstep"], reviewers: ["alice"] });
    const decision = growDecision("2Gi");
    const p = `/api/v4/projects/${encodeURIComponent(PROJECT)}`;
    const f = `${p}/repository/files/${encodeURIComponent(FILE)}`;
    await writer.apply(decision.action, decision);
    expect(gitlab.requests).toEqual([
      `GET ${p}/merge_requests`,
      `GET ${f}`,
      `POST ${p}/repository/branches`,
      `GET ${f}`,
      `POST ${f}`,
      "GET /api/v4/users",
      `POST ${p}/merge_requests`,
    ]);
    gitlab.requests.length = 0;
    await writer.apply(decision.action, decision);
    expect(gitlab.requests).toEqual([`GET ${p}/merge_requests`, `GET ${f}`]);
  });

  it("updates an existing file with PUT and last_commit_id, keeping its comments", async () => {
    const existing =
      "# keep me\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data-web-2\n  namespace: default\nspec:\n  resources:\n    requests:\n      storage: 1Gi # was\n";
    const { gitlab, writer } = setup({ files: { [FILE]: existing } });
    const decision = growDecision("2Gi");
    await writer.apply(decision.action, decision);
    const text = gitlab.repo.file(`claimstep/default/web/${decision.revision}/2`, FILE)!.text;
    expect(text).toContain("# keep me");
    expect(text).toContain("storage: 2Gi # was");
    expect(writes(gitlab)[1]).toMatch(/^PUT .*repository\/files\//);
  });

  it("pauses on a closed merge request, waits after a merge", async () => {
    const { gitlab, writer } = setup();
    const decision = growDecision("2Gi");
    await writer.apply(decision.action, decision);
    gitlab.close(1);
    expect(await writer.apply(decision.action, decision)).toMatchObject({
      kind: "refused",
      reason: "ChangeRejected",
      message: expect.stringContaining("was closed without merging"),
    });
    gitlab.reopen(1);
    gitlab.merge(1);
    expect(await writer.apply(decision.action, decision)).toMatchObject({
      kind: "proposed",
      detail: expect.stringContaining("is merged; waiting for the GitOps controller"),
    });
  });
});

describe("merge requests from forks (issue 24, item 1)", () => {
  it("a fork's merge request with claimstep's branch name is not claimstep's: no ChangeRejected, no link to it", async () => {
    const { gitlab, writer } = setup();
    const decision = growDecision("2Gi");
    const branch = `claimstep/default/web/${decision.revision}/2`;
    const fork = gitlab.openFromFork(branch, 77, "closed");
    const outcome = await writer.apply(decision.action, decision);
    expect(outcome).toMatchObject({ kind: "proposed", detail: expect.stringContaining("opened pull request") });
    expect(JSON.stringify(outcome)).not.toContain(`merge_requests/${fork.iid}`);
    // Its own merge request from its own branch, not the fork's.
    const own = gitlab.mergeRequests.filter((m) => m.source_project_id === undefined);
    expect(own).toHaveLength(1);
    expect((outcome as { url?: string }).url).toBe(`https://gitlab.com/${PROJECT}/-/merge_requests/${own[0]!.iid}`);
  });

  it("an open fork merge request is not waited on either", async () => {
    const { gitlab, writer } = setup();
    const decision = growDecision("2Gi");
    const fork = gitlab.openFromFork(`claimstep/default/web/${decision.revision}/2`, 77, "opened");
    const outcome = await writer.apply(decision.action, decision);
    expect(outcome).toMatchObject({ kind: "proposed", detail: expect.stringContaining("opened pull request") });
    expect((outcome as { url?: string }).url).not.toContain(`merge_requests/${fork.iid}`);
  });
});

describe("GitLab errors", () => {
  it("bad token: 401 Unauthorized is a configuration error", async () => {
    const { gitlab, writer } = setup();
    gitlab.token = "glpat-other";
    const decision = growDecision("2Gi");
    await expect(writer.apply(decision.action, decision)).rejects.toMatchObject({
      name: "GitProviderError",
      status: 401,
      message: expect.stringContaining("401 Unauthorized"),
    });
  });

  it("Reporter token: 403 Forbidden on the first write, nothing half-written", async () => {
    const { gitlab, writer } = setup();
    gitlab.failNext("forbidden", /^POST /);
    const decision = growDecision("2Gi");
    const err = await writer.apply(decision.action, decision).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitProviderError);
    expect((err as Error).message).toContain("403 Forbidden");
    expect(gitlab.repo.branches.size).toBe(1);
  });

  it("rate limit: 429 Retry later with Retry-After is a transient ApiError", async () => {
    const { gitlab, writer } = setup();
    gitlab.failNext("rate-limit");
    const decision = growDecision("2Gi");
    const err = await writer.apply(decision.action, decision).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      code: 429,
      kind: "TooManyRequests",
      retryAfterSeconds: 30,
      isTransient: true,
      message: expect.stringContaining("Retry later"),
    });
    expect(gitlab.repo.commits).toHaveLength(0);
  });

  it("5xx: a transient ApiError", async () => {
    const { gitlab, writer } = setup();
    gitlab.failNext("server-error");
    const decision = growDecision("2Gi");
    await expect(writer.apply(decision.action, decision)).rejects.toMatchObject({
      kind: "ServerError",
      code: 500,
      isTransient: true,
    });
  });

  it("unknown project: 404 Project Not Found names the fix", async () => {
    const { writer } = setup({ repository: "platform/other" });
    const decision = growDecision("2Gi");
    await expect(writer.apply(decision.action, decision)).rejects.toThrow(
      /404 Project Not Found .*check repository and baseBranch/,
    );
  });
});

describe("GitLab provider", () => {
  const provider = (gitlab: FakeGitLab, baseBranch = "main") =>
    new GitLabProvider(
      parseRepositoryConfig({
        provider: "gitlab",
        repository: PROJECT,
        baseBranch,
        pathTemplate: PATH_TEMPLATE,
        token: gitlab.token,
      }),
    );

  it("missing file: 404 File Not Found is undefined", async () => {
    const gitlab = new FakeGitLab(PROJECT, "main", { "a.yaml": "ü: 1\n" });
    server.use(...gitlab.handlers());
    const p = provider(gitlab);
    expect(await p.readFile("missing.yaml", "main")).toBeUndefined();
    expect(await p.readFile("a.yaml", "claimstep/deleted/after/merge/0")).toBeUndefined(); // 404 Commit Not Found
    expect(await p.readFile("a.yaml", "main")).toEqual({
      text: "ü: 1\n",
      version: gitlab.repo.file("main", "a.yaml")!.lastCommit,
    });
  });

  it("existing branch: 400 Branch already exists is fine; unknown base: 400 Invalid reference name names the fix", async () => {
    const gitlab = new FakeGitLab(PROJECT);
    server.use(...gitlab.handlers());
    await provider(gitlab).ensureBranch("claimstep/a/b/r/0");
    await provider(gitlab).ensureBranch("claimstep/a/b/r/0");
    expect(gitlab.repo.branches.size).toBe(2);
    await expect(provider(gitlab, "trunk").ensureBranch("claimstep/a/b/r/1")).rejects.toThrow(
      /base branch trunk not found \(Invalid reference name: trunk\): fix baseBranch/,
    );
  });

  it("merge request exists: 409 answers with the open one", async () => {
    const gitlab = new FakeGitLab(PROJECT);
    server.use(...gitlab.handlers());
    const p = provider(gitlab);
    await p.ensureBranch("claimstep/a/b/r/0");
    const first = await p.createPullRequest({ branch: "claimstep/a/b/r/0", title: "t", body: "b" });
    const again = await p.createPullRequest({ branch: "claimstep/a/b/r/0", title: "t", body: "b" });
    expect(again).toEqual({ ...first, notes: [] });
    expect(gitlab.mergeRequests).toHaveLength(1);
  });

  it("file changed since read: 400 is a lost race (transient)", async () => {
    const gitlab = new FakeGitLab(PROJECT, "main", { "a.yaml": "x: 1\n" });
    server.use(...gitlab.handlers());
    const p = provider(gitlab);
    await expect(
      p.writeFile({
        path: "a.yaml",
        branch: "main",
        text: "x: 2\n",
        message: "m",
        previous: { text: "x: 1\n", version: "f".repeat(40) },
      }),
    ).rejects.toMatchObject({
      kind: "Conflict",
      isTransient: true,
      message: expect.stringContaining("has changed since you started editing it"),
    });
    await expect(p.writeFile({ path: "a.yaml", branch: "main", text: "x: 2\n", message: "m" })).rejects.toMatchObject({
      isTransient: true,
      message: expect.stringContaining("A file with this name already exists"),
    });
  });
});
