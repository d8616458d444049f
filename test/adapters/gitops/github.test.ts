// The pull-request writer against the msw fake of GitHub: the happy path, idempotency, the
// lifecycle of a pull request (open, closed, reopened, merged, reverted) and every error shape.
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { ApiError } from "../../../adapters/api-error.js";
import { parseRepositoryConfig } from "../../../adapters/gitops/config.js";
import { GitHubProvider } from "../../../adapters/gitops/github.js";
import { GitProviderError } from "../../../adapters/gitops/http.js";
import { pullRequestWriter } from "../../../adapters/gitops/writer.js";
import { FakeGitHub } from "./fake-github.js";
import { growDecision, mswServer, PATH_TEMPLATE, twoClaimDecisions } from "./helpers.js";

const server = mswServer();
const BRANCH = (rev: string, ordinal = 2) => `claimstep/default/web/${rev}/${ordinal}`;
const FILE = "clusters/prod/claims/default/data-web-2.yaml";

const EXISTING = `# data-web-2, managed in Git since the migration
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-web-2
  namespace: default
  labels:
    app: web # selector
spec:
  accessModes: ["ReadWriteOnce"]
  storageClassName: fast
  resources:
    requests:
      storage: 1Gi # initial size
`;

function setup(opts: { files?: Record<string, string>; labels?: string[]; reviewers?: string[] } = {}) {
  const github = new FakeGitHub("octo", "fleet", "main", opts.files ?? {});
  server.use(...github.handlers());
  const writer = pullRequestWriter(
    {
      provider: "github",
      repository: "octo/fleet",
      pathTemplate: PATH_TEMPLATE,
      token: github.token,
      labels: opts.labels ?? [],
      reviewers: opts.reviewers ?? [],
    },
    { now: github.now },
  );
  return { github, writer };
}

const writes = (github: FakeGitHub) => github.requests.filter((r) => !r.startsWith("GET "));

describe("GitHub pull-request writer", () => {
  it("proposes a step as one branch, one commit and one pull request", async () => {
    const { github, writer } = setup({ labels: ["storage", "claimstep"], reviewers: ["alice", "octo/platform"] });
    const decision = growDecision("2Gi");
    const outcome = await writer.apply(decision.action, decision);

    const branch = BRANCH(decision.revision!);
    expect(outcome).toEqual({
      kind: "proposed",
      detail: expect.stringContaining(
        "opened pull request #1; merge it to continue: default/data-web-2 (ordinal 2) → storage 2Gi",
      ),
      url: "https://github.com/octo/fleet/pull/1",
    });
    expect([...github.repo.branches.keys()]).toEqual(["main", branch]);
    expect(github.repo.commits.map((c) => [c.branch, c.path])).toEqual([[branch, FILE]]);
    const manifest = YAML.parse(github.repo.file(branch, FILE)!.text);
    expect(manifest).toEqual({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: {
        name: "data-web-2",
        namespace: "default",
        labels: { "claimstep.io/revision": decision.revision },
        annotations: {
          "argocd.argoproj.io/sync-options": "Prune=false",
          "kustomize.toolkit.fluxcd.io/prune": "disabled",
        },
      },
      spec: { resources: { requests: { storage: "2Gi" } } },
    });
    expect(github.repo.file("main", FILE)).toBeUndefined();

    const [pr] = github.pulls;
    expect(github.pulls).toHaveLength(1);
    expect(pr).toMatchObject({
      head: branch,
      base: "main",
      state: "open",
      labels: ["storage", "claimstep"],
      reviewers: ["alice"],
      team_reviewers: ["platform"],
    });
    expect(pr!.title).toBe(
      `claimstep: default/data-web-2 → storage 2Gi (web ordinal 2, revision ${decision.revision})`,
    );
    expect(pr!.body).toContain("**Merging** this pull request changes `clusters/prod/claims/default/data-web-2.yaml`");
    expect(pr!.body).toContain(
      "**Closing** it without merging pauses the rollout of `default/web` (Blocked, reason ChangeRejected)",
    );
    expect(pr!.body).toContain(
      "| ordinal | pod | state | claim | spec | capacity | target | volume attributes class | revision | readiness |",
    );
    expect(pr!.body).toContain(
      "| 2 | web-2 | Pending **← this PR** | data-web-2 | 1Gi | 1Gi | 2Gi | – | – | Behind: data-web-2: not yet at revision",
    );
    expect(pr!.body).toContain("| 0 | web-0 | Pending | data-web-0 | 1Gi | 1Gi | 2Gi |");
  });

  it("is idempotent: three invocations give one branch, one commit, one pull request, and the repeats write nothing", async () => {
    const { github, writer } = setup();
    const decision = growDecision("2Gi");
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push(await writer.apply(decision.action, decision));

    expect(github.repo.branches.size).toBe(2);
    expect(github.repo.commits).toHaveLength(1);
    expect(github.pulls).toHaveLength(1);
    expect(writes(github)).toEqual([
      "POST /repos/octo/fleet/git/refs",
      "PUT /repos/octo/fleet/contents/clusters/prod/claims/default/data-web-2.yaml",
      "POST /repos/octo/fleet/pulls",
    ]);
    expect(outcomes[1]).toEqual({
      kind: "proposed",
      detail: expect.stringMatching(/^waiting for pull request #1 to be merged/),
      url: "https://github.com/octo/fleet/pull/1",
    });
    expect(outcomes[2]).toEqual(outcomes[1]);
  });

  it("costs 7 requests to open a pull request (+1 for labels, +1 for reviewers), 2 per repeat, 2 after the merge", async () => {
    const { github, writer } = setup({ labels: ["claimstep"], reviewers: ["alice"] });
    const decision = growDecision("2Gi");
    const f = "/repos/octo/fleet/contents/clusters/prod/claims/default/data-web-2.yaml";
    await writer.apply(decision.action, decision);
    expect(github.requests).toEqual([
      "GET /repos/octo/fleet/pulls",
      `GET ${f}`,
      "GET /repos/octo/fleet/git/ref/heads/main",
      "POST /repos/octo/fleet/git/refs",
      `GET ${f}`,
      `PUT ${f}`,
      "POST /repos/octo/fleet/pulls",
      "POST /repos/octo/fleet/issues/1/labels",
      "POST /repos/octo/fleet/pulls/1/requested_reviewers",
    ]);
    github.requests.length = 0;
    await writer.apply(decision.action, decision);
    expect(github.requests).toEqual(["GET /repos/octo/fleet/pulls", `GET ${f}`]);
    github.merge(1);
    github.requests.length = 0;
    await writer.apply(decision.action, decision);
    expect(github.requests).toEqual(["GET /repos/octo/fleet/pulls", `GET ${f}`]);
  });

  it("edits an existing manifest in place, keeping its comments", async () => {
    const { github, writer } = setup({ files: { [FILE]: EXISTING } });
    const decision = growDecision("2Gi");
    await writer.apply(decision.action, decision);
    const text = github.repo.file(BRANCH(decision.revision!), FILE)!.text;
    expect(text).toContain("# data-web-2, managed in Git since the migration");
    expect(text).toContain("app: web # selector");
    expect(text).toContain("storage: 2Gi # initial size");
    expect(text).toContain(`claimstep.io/revision: ${decision.revision}`);
    expect(YAML.parse(text).spec.storageClassName).toBe("fast");
  });

  it("finishes a half-done earlier attempt: existing branch (422 Reference already exists) and commit are reused", async () => {
    const { github, writer } = setup();
    const decision = growDecision("2Gi");
    const branch = BRANCH(decision.revision!);
    github.failNext("server-error", /^POST \/repos\/octo\/fleet\/pulls$/);
    await expect(writer.apply(decision.action, decision)).rejects.toMatchObject({
      kind: "ServerError",
      isTransient: true,
    });
    expect(github.repo.commits).toHaveLength(1);
    expect(github.pulls).toHaveLength(0);

    const outcome = await writer.apply(decision.action, decision);
    expect(outcome.kind).toBe("proposed");
    expect(github.repo.commits).toHaveLength(1);
    expect(github.pulls.map((p) => p.head)).toEqual([branch]);
  });

  it("proposes nothing new when the base branch already carries the change", async () => {
    const { github, writer } = setup();
    const decision = growDecision("2Gi");
    const first = await writer.apply(decision.action, decision);
    expect(first.kind).toBe("proposed");
    github.merge(1);
    github.pulls.length = 0; // e.g. someone committed the same change straight to main
    const outcome = await writer.apply(decision.action, decision);
    expect(outcome).toEqual({ kind: "proposed", detail: expect.stringContaining(`${FILE} on main already carries`) });
    expect(github.pulls).toHaveLength(0);
  });

  it("pauses when the pull request is closed unmerged, resumes when it is reopened", async () => {
    const { github, writer } = setup();
    const decision = growDecision("2Gi");
    await writer.apply(decision.action, decision);
    github.close(1);
    const before = github.requests.length;

    const paused = await writer.apply(decision.action, decision);
    expect(paused).toEqual({
      kind: "refused",
      reason: "ChangeRejected",
      message: expect.stringContaining(
        "pull request #1 (https://github.com/octo/fleet/pull/1) for data-web-2 was closed without merging: the rollout of default/web is paused",
      ),
      url: "https://github.com/octo/fleet/pull/1",
    });
    expect(github.requests.slice(before)).toEqual(["GET /repos/octo/fleet/pulls"]);
    expect(github.pulls).toHaveLength(1);

    github.reopen(1);
    expect(await writer.apply(decision.action, decision)).toMatchObject({
      kind: "proposed",
      url: "https://github.com/octo/fleet/pull/1",
    });
  });

  it("a pull request from a fork with claimstep's branch name is not claimstep's: no ChangeRejected, no link to it (issue 24, item 1)", async () => {
    const { github, writer } = setup();
    const decision = growDecision("2Gi");
    // A fork in the same organization: GitHub's `head=octo:branch` filter does not tell it apart.
    const fork = github.openFromFork("octo/fleet-fork", BRANCH(decision.revision!), "closed");
    const outcome = await writer.apply(decision.action, decision);
    expect(outcome).toMatchObject({ kind: "proposed", detail: expect.stringContaining("opened pull request") });
    expect((outcome as { url?: string }).url).not.toBe(`https://github.com/octo/fleet/pull/${fork.number}`);
    expect(JSON.stringify(outcome)).not.toContain(`pull/${fork.number})`);
    expect(github.pulls.filter((p) => p.headRepo === undefined)).toHaveLength(1);
  });

  it("a claim file on the base branch beyond the YAML bounds: ApplyRejected naming the file and the bound, nothing written (issue 24, item 10)", async () => {
    const deep = `apiVersion: v1\nkind: PersistentVolumeClaim\nspec: ${"[".repeat(50_000)}${"]".repeat(50_000)}\n`;
    const { github, writer } = setup({ files: { [FILE]: deep } });
    const decision = growDecision("2Gi");
    expect(await writer.apply(decision.action, decision)).toEqual({
      kind: "refused",
      reason: "ApplyRejected",
      message: expect.stringContaining(
        `${FILE} nests deeper than 64 levels: claimstep reads a file from the repository within the bounds of its API`,
      ),
    });
    expect(writes(github)).toEqual([]);
  });

  it("a claim name that is not one path segment: ApplyRejected naming it, nothing written (issue 24, item 8)", async () => {
    const { github, writer } = setup();
    const decision = growDecision("2Gi");
    const action = { ...decision.action, claim: "../../../.github/workflows/x" };
    expect(await writer.apply(action, { ...decision, action })).toEqual({
      kind: "refused",
      reason: "ApplyRejected",
      message: expect.stringContaining('{name} is "../../../.github/workflows/x", not a single path segment'),
    });
    expect(writes(github)).toEqual([]);
  });

  it("opens a new pull request on a new branch for a new revision after a rejection", async () => {
    const { github, writer } = setup();
    const old = growDecision("2Gi");
    await writer.apply(old.action, old);
    github.close(1);
    const next = growDecision("3Gi");
    expect(next.revision).not.toBe(old.revision);
    const outcome = await writer.apply(next.action, next);
    expect(outcome).toMatchObject({ kind: "proposed", url: "https://github.com/octo/fleet/pull/2" });
    expect(github.pull(2).head).toBe(BRANCH(next.revision!));
    expect(YAML.parse(github.repo.file(BRANCH(next.revision!), FILE)!.text).spec.resources.requests.storage).toBe(
      "3Gi",
    );
  });

  it("waits for the GitOps controller after a merge, and blocks if the change was reverted on the base branch", async () => {
    const { github, writer } = setup();
    const decision = growDecision("2Gi");
    await writer.apply(decision.action, decision);
    github.merge(1);
    expect(YAML.parse(github.repo.file("main", FILE)!.text).spec.resources.requests.storage).toBe("2Gi");

    const waiting = await writer.apply(decision.action, decision);
    expect(waiting).toEqual({
      kind: "proposed",
      detail: expect.stringContaining(`pull request #1 is merged; waiting for the GitOps controller to apply ${FILE}`),
      url: "https://github.com/octo/fleet/pull/1",
    });

    github.repo.write("main", FILE, EXISTING, "Revert claimstep");
    const reverted = await writer.apply(decision.action, decision);
    expect(reverted).toMatchObject({
      kind: "refused",
      reason: "ChangeRejected",
      message: expect.stringContaining("no longer carries"),
    });
  });

  it("proposes the second claim of an ordinal on the same branch once the first one's pull request is merged", async () => {
    const { github, writer } = setup();
    const [data, wal] = twoClaimDecisions();
    const branch = BRANCH(data.revision!);
    await writer.apply(data.action, data);
    github.merge(1);
    const outcome = await writer.apply(wal.action, wal);
    expect(outcome).toMatchObject({ kind: "proposed", url: "https://github.com/octo/fleet/pull/2" });
    expect(github.pulls.map((p) => [p.number, p.head, p.state, p.merged_at !== null])).toEqual([
      [1, branch, "closed", true],
      [2, branch, "open", false],
    ]);
    expect(github.repo.changes(branch).map((c) => c.path)).toEqual(["clusters/prod/claims/default/wal-web-2.yaml"]);
    // A late repeat of the first claim's step points at the branch's open request and writes nothing.
    const commits = github.repo.commits.length;
    expect(await writer.apply(data.action, data)).toMatchObject({
      kind: "proposed",
      url: "https://github.com/octo/fleet/pull/2",
    });
    expect(github.repo.commits).toHaveLength(commits);
  });

  it("blocks with ApplyRejected, naming the file, when the manifest cannot be edited", async () => {
    const { github, writer } = setup({ files: { [FILE]: "kind: ConfigMap\nmetadata:\n  name: oops\n" } });
    const decision = growDecision("2Gi");
    const outcome = await writer.apply(decision.action, decision);
    expect(outcome).toMatchObject({
      kind: "refused",
      reason: "ApplyRejected",
      message: expect.stringContaining(`${FILE} holds no PersistentVolumeClaim named data-web-2`),
    });
    expect(github.pulls).toHaveLength(0);
  });

  it("reports a reviewer GitHub refuses (422) without failing the step", async () => {
    const { github, writer } = setup({ reviewers: ["mallory"] });
    const decision = growDecision("2Gi");
    const outcome = await writer.apply(decision.action, decision);
    expect(outcome).toMatchObject({
      kind: "proposed",
      detail: expect.stringContaining(
        "reviewers not requested: GitHub octo/fleet: POST /repos/octo/fleet/pulls/1/requested_reviewers answered 422: Reviews may only be requested from collaborators",
      ),
    });
    expect(github.pull(1).reviewers).toEqual([]);
  });

  it("is a claim writer only: it proposes, writes nothing to the cluster, and has no status or event writes of its own", () => {
    const github = new FakeGitHub("octo", "fleet");
    const writer = pullRequestWriter({
      provider: "github",
      repository: "octo/fleet",
      pathTemplate: PATH_TEMPLATE,
      token: github.token,
    });
    expect(writer.supports).toEqual(["PatchClaim", "ProposeRecreate", "RaiseTemplate"]);
    expect(writer.proposes).toBe(true);
    expect(writer.name).toBe("pull-request writer (GitHub octo/fleet)");
    expect("annotateSet" in writer || "recordEvents" in writer).toBe(false);
  });
});

describe("GitHub errors", () => {
  it("bad token: 401 Bad credentials is a configuration error naming the fix", async () => {
    const { github, writer } = setup();
    github.token = "ghp_other";
    const decision = growDecision("2Gi");
    const err = await writer.apply(decision.action, decision).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitProviderError);
    expect(err).toMatchObject({
      status: 401,
      message: expect.stringContaining("the token was rejected (401 Bad credentials): set a valid token"),
    });
  });

  it("read-only token: 403 Resource not accessible is a configuration error, nothing half-written", async () => {
    const { github, writer } = setup();
    github.failNext("read-only", /^POST /);
    const decision = growDecision("2Gi");
    const err = await writer.apply(decision.action, decision).catch((e: unknown) => e);
    expect(err).toMatchObject({
      name: "GitProviderError",
      status: 403,
      message: expect.stringContaining("Resource not accessible by personal access token"),
    });
    expect(github.repo.branches.size).toBe(1);
  });

  it.each([
    ["primary-rate-limit", 403, 1800],
    ["secondary-rate-limit-403", 403, 60],
    ["secondary-rate-limit-429", 429, 120],
  ] as const)(
    "%s: a transient ApiError with the wait GitHub asked for (%i, %is), nothing written",
    async (fault, code, wait) => {
      const { github, writer } = setup();
      github.failNext(fault);
      const decision = growDecision("2Gi");
      const err = await writer.apply(decision.action, decision).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ code, kind: "TooManyRequests", retryAfterSeconds: wait, isTransient: true });
      expect((err as Error).message).toContain("rate limit");
      expect(github.repo.commits).toHaveLength(0);
      expect(github.pulls).toHaveLength(0);
    },
  );

  it("a 403 that is not a rate limit is not retried", async () => {
    const { github, writer } = setup();
    github.failNext("read-only");
    const decision = growDecision("2Gi");
    await expect(writer.apply(decision.action, decision)).rejects.toBeInstanceOf(GitProviderError);
  });

  it("missing base branch: says which branch and how to fix it", async () => {
    const github = new FakeGitHub("octo", "fleet", "trunk");
    server.use(...github.handlers());
    const writer = pullRequestWriter({
      provider: "github",
      repository: "octo/fleet",
      pathTemplate: PATH_TEMPLATE,
      token: github.token,
    });
    const decision = growDecision("2Gi");
    await expect(writer.apply(decision.action, decision)).rejects.toThrow(
      /base branch main not found .*: fix baseBranch or the token/,
    );
  });

  it("unknown repository: GitHub's 404 is reported, not taken for a missing file", async () => {
    const github = new FakeGitHub("octo", "fleet");
    server.use(...github.handlers());
    const writer = pullRequestWriter({
      provider: "github",
      repository: "octo/elsewhere",
      pathTemplate: PATH_TEMPLATE,
      token: github.token,
    });
    const decision = growDecision("2Gi");
    await expect(writer.apply(decision.action, decision)).rejects.toThrow(
      /GET \/repos\/octo\/elsewhere\/pulls answered 404: Not Found/,
    );
  });

  it("network failure: a transient ApiError", async () => {
    const config = parseRepositoryConfig({
      provider: "github",
      repository: "octo/fleet",
      pathTemplate: PATH_TEMPLATE,
      token: "t",
    });
    const provider = new GitHubProvider(config, {
      fetch: async () => {
        throw new TypeError("fetch failed");
      },
    });
    await expect(provider.findPullRequests("b")).rejects.toMatchObject({
      kind: "Timeout",
      isTransient: true,
      message: expect.stringContaining("fetch failed"),
    });
  });
});

describe("GitHub request timeout", () => {
  it("a request that never answers is abandoned as a transient timeout", async () => {
    const config = parseRepositoryConfig({
      provider: "github",
      repository: "octo/fleet",
      pathTemplate: PATH_TEMPLATE,
      token: "t",
    });
    const hanging = (_url: string, init?: RequestInit) =>
      new Promise<Response>((_, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason)));
    const provider = new GitHubProvider(config, { fetch: hanging, timeoutMs: 20 });
    await expect(provider.findPullRequests("b")).rejects.toMatchObject({
      kind: "Timeout",
      isTransient: true,
      request: "GET /repos/octo/fleet/pulls",
    });
  });
});

describe("GitHub provider", () => {
  const provider = (github: FakeGitHub) =>
    new GitHubProvider(
      parseRepositoryConfig({
        provider: "github",
        repository: "octo/fleet",
        pathTemplate: PATH_TEMPLATE,
        token: github.token,
      }),
    );

  it("missing file: 404 is undefined; the file API round-trips UTF-8", async () => {
    const github = new FakeGitHub("octo", "fleet", "main", { "a/b.yaml": "name: Zoë — ✓\n" });
    server.use(...github.handlers());
    const p = provider(github);
    expect(await p.readFile("a/missing.yaml", "main")).toBeUndefined();
    expect(await p.readFile("a/b.yaml", "main")).toEqual({
      text: "name: Zoë — ✓\n",
      version: github.repo.file("main", "a/b.yaml")!.blob,
    });
  });

  it("stale file sha: 409 does not match is a lost race (transient); missing sha is too", async () => {
    const github = new FakeGitHub("octo", "fleet", "main", { "a.yaml": "x: 1\n" });
    server.use(...github.handlers());
    const p = provider(github);
    const stale = { text: "x: 1\n", version: "0".repeat(40) };
    await expect(
      p.writeFile({ path: "a.yaml", branch: "main", text: "x: 2\n", message: "m", previous: stale }),
    ).rejects.toMatchObject({
      code: 409,
      kind: "Conflict",
      isTransient: true,
      message: expect.stringContaining(`a.yaml does not match ${"0".repeat(40)}`),
    });
    await expect(p.writeFile({ path: "a.yaml", branch: "main", text: "x: 2\n", message: "m" })).rejects.toMatchObject({
      code: 422,
      isTransient: true,
    });
    expect(github.repo.commits).toHaveLength(0);
  });

  it("pull request already exists: 422 answers with the open one", async () => {
    const github = new FakeGitHub("octo", "fleet");
    server.use(...github.handlers());
    const p = provider(github);
    await p.ensureBranch("claimstep/default/web/r/1");
    await p.writeFile({ path: "f.yaml", branch: "claimstep/default/web/r/1", text: "a: 1\n", message: "m" });
    const first = await p.createPullRequest({ branch: "claimstep/default/web/r/1", title: "t", body: "b" });
    const again = await p.createPullRequest({ branch: "claimstep/default/web/r/1", title: "t", body: "b" });
    expect(again).toEqual({ ...first, notes: [] });
    expect(github.pulls).toHaveLength(1);
    expect(github.requests.filter((r) => r === "POST /repos/octo/fleet/pulls")).toHaveLength(2);
  });

  it("existing branch: 422 Reference already exists leaves it as it is", async () => {
    const github = new FakeGitHub("octo", "fleet");
    server.use(...github.handlers());
    const p = provider(github);
    await p.ensureBranch("claimstep/x/y/r/0");
    await p.writeFile({ path: "f.yaml", branch: "claimstep/x/y/r/0", text: "a: 1\n", message: "m" });
    const head = github.repo.branches.get("claimstep/x/y/r/0")!.head;
    await p.ensureBranch("claimstep/x/y/r/0");
    expect(github.repo.branches.get("claimstep/x/y/r/0")!.head).toBe(head);
  });
});
