// msw fake of exactly the GitHub REST endpoints the pull-request writer uses, answering with
// GitHub's response shapes, status codes, headers and error bodies (after octokit/fixtures and
// GitHub's docs): missing file 404, existing branch 422 "Reference already exists", existing PR
// 422 "A pull request already exists for owner:branch.", stale sha 409, missing sha 422,
// bad token 401, read-only token 403, primary (403, x-ratelimit-remaining: 0) and secondary
// (403/429 with retry-after) rate limits.
import { HttpResponse, http, type RequestHandler } from "msw";
import { FakeRepo } from "./fake-repo.js";

export const GITHUB_API = "https://api.github.com";
const DOCS = "https://docs.github.com/rest";

export interface FakePull {
  number: number;
  title: string;
  body: string;
  head: string;
  base: string;
  state: "open" | "closed";
  merged_at: string | null;
  closed_at: string | null;
  labels: string[];
  reviewers: string[];
  team_reviewers: string[];
  /** `owner/repo` of the head branch when it is a fork's (absent: this repository). */
  headRepo?: string;
}

type Fault =
  | "bad-token"
  | "read-only"
  | "primary-rate-limit"
  | "secondary-rate-limit-403"
  | "secondary-rate-limit-429"
  | "server-error";

const b64 = (s: string) =>
  Buffer.from(s, "utf8")
    .toString("base64")
    .replace(/(.{60})/g, "$1\n");
const unb64 = (s: string) => Buffer.from(s, "base64").toString("utf8");

export class FakeGitHub {
  readonly repo: FakeRepo;
  readonly pulls: FakePull[] = [];
  /** Every request as `METHOD /path` (no host, no query). */
  readonly requests: string[] = [];
  token = "ghp_fake_token";
  /** Logins that may be requested as reviewers. */
  collaborators = new Set(["alice", "bob"]);
  private faults: Array<{ fault: Fault; match?: RegExp }> = [];
  private seq = 0;

  constructor(
    readonly owner: string,
    readonly name: string,
    baseBranch = "main",
    files: Record<string, string> = {},
    readonly now: () => number = () => Date.parse("2026-11-30T10:00:00Z"),
  ) {
    this.repo = new FakeRepo(baseBranch, files);
  }

  get fullName(): string {
    return `${this.owner}/${this.name}`;
  }

  /** The next request (matching `match`, if given) answers with this fault instead. */
  failNext(fault: Fault, match?: RegExp): void {
    this.faults.push({ fault, ...(match ? { match } : {}) });
  }

  private rateHeaders(remaining = 4999): Record<string, string> {
    return {
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": String(remaining),
      "x-ratelimit-reset": String(Math.floor(this.now() / 1000) + 1800),
      "x-ratelimit-used": String(5000 - remaining),
      "x-ratelimit-resource": "core",
      "x-github-media-type": "github.v3; format=json",
      "x-github-api-version-selected": "2022-11-28",
    };
  }

  private json(body: unknown, status = 200, headers: Record<string, string> = {}) {
    return HttpResponse.json(body as never, { status, headers: { ...this.rateHeaders(), ...headers } });
  }

  private error(
    status: number,
    message: string,
    doc: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    return this.json(
      { message, ...extra, documentation_url: `${DOCS}/${doc}`, status: String(status) },
      status,
      headers,
    );
  }

  private faultFor(method: string, path: string): Response | undefined {
    const i = this.faults.findIndex((f) => !f.match || f.match.test(`${method} ${path}`));
    if (i < 0) return undefined;
    const [{ fault }] = this.faults.splice(i, 1) as [{ fault: Fault }];
    const secondary =
      "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:00000:0000000:0000000:00000000.";
    switch (fault) {
      case "bad-token":
        return this.error(401, "Bad credentials", "");
      case "read-only":
        return this.error(
          403,
          "Resource not accessible by personal access token",
          "git/refs#create-a-reference",
          {},
          {
            "x-accepted-github-permissions": "contents=write",
          },
        );
      case "primary-rate-limit":
        return this.error(
          403,
          "API rate limit exceeded for user ID 1.",
          "overview/rate-limits-for-the-rest-api#about-the-primary-rate-limit",
          {},
          this.rateHeaders(0),
        );
      case "secondary-rate-limit-403":
        return this.error(
          403,
          secondary,
          "overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
          {},
          { "retry-after": "60" },
        );
      case "secondary-rate-limit-429":
        return this.error(
          429,
          secondary,
          "overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
          {},
          { "retry-after": "120" },
        );
      case "server-error":
        return HttpResponse.text("", { status: 502 });
    }
  }

  private pullJSON(p: FakePull) {
    const repoUrl = `${GITHUB_API}/repos/${this.fullName}`;
    const head = this.repo.branches.get(p.head)?.head ?? "0".repeat(40);
    return {
      url: `${repoUrl}/pulls/${p.number}`,
      id: 1000 + p.number,
      node_id: `PR_kwDO${p.number}`,
      html_url: `https://github.com/${this.fullName}/pull/${p.number}`,
      diff_url: `https://github.com/${this.fullName}/pull/${p.number}.diff`,
      number: p.number,
      state: p.state,
      locked: false,
      title: p.title,
      user: { login: "claimstep-bot", id: 1, type: "User" },
      body: p.body,
      labels: p.labels.map((name, i) => ({
        id: i + 1,
        node_id: `LA_${i}`,
        url: `${repoUrl}/labels/${name}`,
        name,
        color: "ededed",
        default: false,
        description: null,
      })),
      created_at: new Date(this.now()).toISOString(),
      updated_at: new Date(this.now()).toISOString(),
      closed_at: p.closed_at,
      merged_at: p.merged_at,
      merge_commit_sha: null,
      requested_reviewers: p.reviewers.map((login) => ({ login, type: "User" })),
      requested_teams: p.team_reviewers.map((slug) => ({ slug, name: slug })),
      head: {
        label: `${(p.headRepo ?? this.fullName).split("/")[0]}:${p.head}`,
        ref: p.head,
        sha: head,
        repo: { full_name: p.headRepo ?? this.fullName },
      },
      base: {
        label: `${this.owner}:${p.base}`,
        ref: p.base,
        sha: this.repo.branches.get(p.base)?.head,
        repo: { full_name: this.fullName },
      },
      draft: false,
      author_association: "MEMBER",
      auto_merge: null,
    };
  }

  private refJSON(branch: string, sha: string) {
    const repoUrl = `${GITHUB_API}/repos/${this.fullName}`;
    return {
      ref: `refs/heads/${branch}`,
      node_id: "MDA6RW50aXR5MQ==",
      url: `${repoUrl}/git/refs/heads/${branch}`,
      object: { sha, type: "commit", url: `${repoUrl}/git/commits/${sha}` },
    };
  }

  private contentJSON(path: string, ref: string, text: string, blob: string) {
    const repoUrl = `${GITHUB_API}/repos/${this.fullName}`;
    const name = path.split("/").at(-1)!;
    const links = {
      self: `${repoUrl}/contents/${path}?ref=${ref}`,
      git: `${repoUrl}/git/blobs/${blob}`,
      html: `https://github.com/${this.fullName}/blob/${ref}/${path}`,
    };
    return {
      name,
      path,
      sha: blob,
      size: Buffer.byteLength(text),
      url: links.self,
      html_url: links.html,
      git_url: links.git,
      download_url: `https://raw.githubusercontent.com/${this.fullName}/${ref}/${path}`,
      type: "file",
      _links: links,
    };
  }

  handlers(): RequestHandler[] {
    const root = `${GITHUB_API}/repos/:owner/:repo`;
    // Authentication, repository existence and injected faults come first, as on GitHub.
    const guard = (request: Request, params: Record<string, unknown>): Response | undefined => {
      const url = new URL(request.url);
      this.requests.push(`${request.method} ${url.pathname}`);
      const fault = this.faultFor(request.method, url.pathname);
      if (fault) return fault;
      const auth = request.headers.get("authorization");
      if (auth !== `Bearer ${this.token}` && auth !== `token ${this.token}`)
        return this.error(401, "Bad credentials", "");
      if (params.owner !== this.owner || params.repo !== this.name)
        return this.error(404, "Not Found", "repos/repos#get-a-repository");
      return undefined;
    };
    const pathAfter = (request: Request, marker: string) =>
      decodeURIComponent(new URL(request.url).pathname.split(marker).slice(1).join(marker));

    return [
      http.get(`${root}/pulls`, ({ request, params }) => {
        const denied = guard(request, params);
        if (denied) return denied;
        const q = new URL(request.url).searchParams;
        const state = q.get("state") ?? "open";
        const head = q.get("head");
        const base = q.get("base");
        const list = this.pulls
          .filter((p) => state === "all" || p.state === state)
          .filter((p) => !head || `${(p.headRepo ?? this.fullName).split("/")[0]}:${p.head}` === head)
          .filter((p) => !base || p.base === base)
          .sort((a, b) => b.number - a.number);
        return this.json(list.map((p) => this.pullJSON(p)));
      }),

      http.get(`${root}/git/ref/*`, ({ request, params }) => {
        const denied = guard(request, params);
        if (denied) return denied;
        const ref = pathAfter(request, "/git/ref/");
        const branch = this.repo.branches.get(ref.replace(/^heads\//, ""));
        if (!ref.startsWith("heads/") || !branch) return this.error(404, "Not Found", "git/refs#get-a-reference");
        return this.json(this.refJSON(ref.slice("heads/".length), branch.head));
      }),

      http.post(`${root}/git/refs`, async ({ request, params }) => {
        const denied = guard(request, params);
        if (denied) return denied;
        const body = (await request.json()) as { ref?: string; sha?: string };
        if (!body.ref?.startsWith("refs/") || body.ref.split("/").length < 3) {
          return this.error(
            422,
            "Reference name must start with 'refs/' and have at least two slashes.",
            "git/refs#create-a-reference",
          );
        }
        const name = body.ref.slice("refs/heads/".length);
        if (this.repo.branches.has(name))
          return this.error(422, "Reference already exists", "git/refs#create-a-reference");
        if (!body.sha || !this.repo.hasCommit(body.sha))
          return this.error(422, "Object does not exist", "git/refs#create-a-reference");
        this.repo.branchFrom(name, body.sha);
        return this.json(this.refJSON(name, body.sha), 201, {
          location: `${GITHUB_API}/repos/${this.fullName}/git/refs/heads/${name}`,
        });
      }),

      http.get(`${root}/contents/*`, ({ request, params }) => {
        const denied = guard(request, params);
        if (denied) return denied;
        const path = pathAfter(request, "/contents/");
        const ref = new URL(request.url).searchParams.get("ref") ?? this.repo.baseBranch;
        if (!this.repo.branches.has(ref))
          return this.error(404, `No commit found for the ref ${ref}`, "repos/contents#get-repository-content");
        const file = this.repo.file(ref, path);
        if (!file) return this.error(404, "Not Found", "repos/contents#get-repository-content");
        return this.json({
          ...this.contentJSON(path, ref, file.text, file.blob),
          encoding: "base64",
          content: b64(file.text),
        });
      }),

      http.put(`${root}/contents/*`, async ({ request, params }) => {
        const denied = guard(request, params);
        if (denied) return denied;
        const path = pathAfter(request, "/contents/");
        const body = (await request.json()) as { message?: string; content?: string; branch?: string; sha?: string };
        if (!body.message || body.content === undefined) {
          return this.error(
            422,
            "Invalid request.\n\nFor 'links/0/schema', nil is not an object.",
            "repos/contents#create-or-update-file-contents",
          );
        }
        const branch = body.branch ?? this.repo.baseBranch;
        if (!this.repo.branches.has(branch))
          return this.error(404, `Branch ${branch} not found`, "repos/contents#create-or-update-file-contents");
        const existing = this.repo.file(branch, path);
        if (existing && body.sha === undefined) {
          return this.error(
            422,
            'Invalid request.\n\n"sha" wasn\'t supplied.',
            "repos/contents#create-or-update-file-contents",
          );
        }
        if (existing && body.sha !== existing.blob) {
          return this.error(409, `${path} does not match ${body.sha}`, "repos/contents#create-or-update-file-contents");
        }
        const text = unb64(body.content);
        const commit = this.repo.write(branch, path, text, body.message);
        const file = this.repo.file(branch, path)!;
        return this.json(
          {
            content: this.contentJSON(path, branch, text, file.blob),
            commit: {
              sha: commit.sha,
              url: `${GITHUB_API}/repos/${this.fullName}/git/commits/${commit.sha}`,
              html_url: `https://github.com/${this.fullName}/commit/${commit.sha}`,
              message: body.message,
              parents: [],
              verification: { verified: false, reason: "unsigned", signature: null, payload: null },
            },
          },
          existing ? 200 : 201,
        );
      }),

      http.post(`${root}/pulls`, async ({ request, params }) => {
        const denied = guard(request, params);
        if (denied) return denied;
        const body = (await request.json()) as { title?: string; head?: string; base?: string; body?: string };
        const validation = (errors: unknown[]) =>
          this.error(422, "Validation Failed", "pulls/pulls#create-a-pull-request", { errors });
        if (!body.title) return validation([{ resource: "PullRequest", code: "missing_field", field: "title" }]);
        if (!body.base || !this.repo.branches.has(body.base))
          return validation([{ resource: "PullRequest", field: "base", code: "invalid" }]);
        if (!body.head || !this.repo.branches.has(body.head))
          return validation([{ resource: "PullRequest", field: "head", code: "invalid" }]);
        if (this.pulls.some((p) => p.head === body.head && p.base === body.base && p.state === "open")) {
          return validation([
            {
              resource: "PullRequest",
              code: "custom",
              message: `A pull request already exists for ${this.owner}:${body.head}.`,
            },
          ]);
        }
        if (this.repo.changes(body.head, body.base).length === 0) {
          return validation([
            { resource: "PullRequest", code: "custom", message: `No commits between ${body.base} and ${body.head}` },
          ]);
        }
        const pull: FakePull = {
          number: ++this.seq,
          title: body.title,
          body: body.body ?? "",
          head: body.head,
          base: body.base,
          state: "open",
          merged_at: null,
          closed_at: null,
          labels: [],
          reviewers: [],
          team_reviewers: [],
        };
        this.pulls.push(pull);
        return this.json(this.pullJSON(pull), 201);
      }),

      http.patch(`${root}/pulls/:number`, async ({ request, params }) => {
        const denied = guard(request, params);
        if (denied) return denied;
        const pull = this.pulls.find((p) => p.number === Number(params.number));
        if (!pull) return this.error(404, "Not Found", "pulls/pulls#update-a-pull-request");
        const body = (await request.json()) as { title?: string; body?: string };
        if (body.title !== undefined) pull.title = body.title;
        if (body.body !== undefined) pull.body = body.body;
        return this.json(this.pullJSON(pull));
      }),

      http.post(`${root}/issues/:number/labels`, async ({ request, params }) => {
        const denied = guard(request, params);
        if (denied) return denied;
        const pull = this.pulls.find((p) => p.number === Number(params.number));
        if (!pull) return this.error(404, "Not Found", "issues/labels#add-labels-to-an-issue");
        const body = (await request.json()) as { labels?: string[] };
        for (const l of body.labels ?? []) if (!pull.labels.includes(l)) pull.labels.push(l);
        return this.json(this.pullJSON(pull).labels);
      }),

      http.post(`${root}/pulls/:number/requested_reviewers`, async ({ request, params }) => {
        const denied = guard(request, params);
        if (denied) return denied;
        const pull = this.pulls.find((p) => p.number === Number(params.number));
        if (!pull) return this.error(404, "Not Found", "pulls/review-requests#request-reviewers-for-a-pull-request");
        const body = (await request.json()) as { reviewers?: string[]; team_reviewers?: string[] };
        if ((body.reviewers ?? []).some((r) => !this.collaborators.has(r))) {
          return this.error(
            422,
            `Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the ${this.fullName} repository.`,
            "pulls/review-requests#request-reviewers-for-a-pull-request",
          );
        }
        pull.reviewers.push(...(body.reviewers ?? []));
        pull.team_reviewers.push(...(body.team_reviewers ?? []));
        return this.json(this.pullJSON(pull), 201);
      }),
    ];
  }

  // What people do in the web UI.

  /** Someone's pull request from their fork `headRepo` (owner/repo) into this repository, with the given head branch name. */
  openFromFork(headRepo: string, head: string, state: FakePull["state"] = "open"): FakePull {
    const p: FakePull = {
      number: ++this.seq,
      title: "from a fork",
      body: "",
      head,
      base: this.repo.baseBranch,
      state,
      merged_at: null,
      closed_at: state === "closed" ? new Date(this.now()).toISOString() : null,
      labels: [],
      reviewers: [],
      team_reviewers: [],
      headRepo,
    };
    this.pulls.push(p);
    return p;
  }

  pull(number: number): FakePull {
    const p = this.pulls.find((x) => x.number === number);
    if (!p) throw new Error(`no pull request #${number}`);
    return p;
  }

  /** Merge: the branch's changed files land on the base branch. Returns them. */
  merge(number: number): Array<{ path: string; text: string }> {
    const p = this.pull(number);
    if (p.state !== "open") throw new Error(`pull request #${number} is ${p.state}`);
    const { files } = this.repo.merge(p.head);
    p.state = "closed";
    p.merged_at = p.closed_at = new Date(this.now()).toISOString();
    return files;
  }

  close(number: number): void {
    const p = this.pull(number);
    p.state = "closed";
    p.closed_at = new Date(this.now()).toISOString();
  }

  reopen(number: number): void {
    const p = this.pull(number);
    if (p.merged_at) throw new Error(`pull request #${number} is merged`);
    p.state = "open";
    p.closed_at = null;
  }

  /** The `pull_request` webhook payload GitHub sends for this pull request and action. */
  webhookPayload(number: number, action: "closed" | "reopened" | "opened" | "synchronize") {
    const p = this.pull(number);
    return {
      action,
      number,
      pull_request: { ...this.pullJSON(p), merged: p.merged_at !== null },
      repository: { id: 1, name: this.name, full_name: this.fullName, owner: { login: this.owner } },
      sender: { login: "alice", id: 2, type: "User" },
    };
  }
}
