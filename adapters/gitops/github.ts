// GitHub REST (api.github.com or GitHub Enterprise's /api/v3) behind the GitProvider seam.
// Endpoints: pulls (list, create), git refs (get, create), contents (get, put), issue labels,
// requested reviewers. Error bodies are GitHub's: {message, errors?, documentation_url, status}.
import * as z from "../../core/zod.js";
import { decodeBase64, encodeBase64 } from "./base64.js";
import { apiUrlOf, type RepositoryConfig } from "./config.js";
import {
  type Exchange,
  exchange,
  type Fetch,
  GitProviderError,
  lostRace,
  messageOf,
  type Reply,
  unexpected,
} from "./http.js";
import type {
  CreatedPullRequest,
  FileWrite,
  GitProvider,
  NewPullRequest,
  ProviderOptions,
  PullRequest,
  RepoFile,
} from "./provider.js";

const GitHubPull = z.looseObject({
  number: z.int(),
  state: z.enum(["open", "closed"]),
  merged_at: z.optional(z.nullable(z.string())),
  html_url: z.string(),
  // `repo` is null when the head repository (a fork) was deleted.
  head: z.looseObject({ ref: z.string(), repo: z.optional(z.nullable(z.looseObject({ full_name: z.string() }))) }),
});
const GitHubRef = z.looseObject({ object: z.looseObject({ sha: z.string() }) });
const GitHubFile = z.looseObject({
  type: z.literal("file"),
  encoding: z.string(),
  content: z.string(),
  sha: z.string(),
});

/** GitHub repository names are case-insensitive. */
export const sameRepository = (fullName: string | undefined, configured: string): boolean =>
  fullName !== undefined && fullName.toLowerCase() === configured.toLowerCase();

const segments = (p: string): string => p.split("/").map(encodeURIComponent).join("/");

export class GitHubProvider implements GitProvider {
  readonly name: string;
  readonly baseBranch: string;
  private readonly owner: string;
  private readonly api: string;
  private readonly fetchFn: Fetch;
  private readonly now: () => number;
  private readonly timeoutMs: number | undefined;

  constructor(
    private readonly config: RepositoryConfig,
    opts: ProviderOptions = {},
  ) {
    this.name = `GitHub ${config.repository}`;
    this.baseBranch = config.baseBranch;
    this.owner = config.repository.split("/")[0] ?? "";
    this.api = `${apiUrlOf(config)}/repos/${config.repository}`;
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init));
    this.now = opts.now ?? Date.now;
    this.timeoutMs = opts.timeoutMs;
  }

  private async call(method: Exchange["method"], path: string, body?: unknown): Promise<[Exchange, Reply]> {
    const x: Exchange = {
      method,
      url: `${this.api}${path}`,
      label: `${method} /repos/${this.config.repository}${path.split("?")[0]}`,
      headers: {
        authorization: `Bearer ${this.config.token}`,
        accept: "application/vnd.github+json",
        "x-github-api-version": "2022-11-28",
        "user-agent": "claimstep",
      },
      ...(body !== undefined ? { body } : {}),
    };
    return [x, await exchange(this.fetchFn, this.name, x, this.now, this.timeoutMs)];
  }

  private toPullRequest(p: z.infer<typeof GitHubPull>): PullRequest {
    return { number: p.number, state: p.merged_at ? "merged" : p.state, url: p.html_url, branch: p.head.ref };
  }

  async findPullRequests(branch: string): Promise<PullRequest[]> {
    const q = new URLSearchParams({
      head: `${this.owner}:${branch}`,
      base: this.baseBranch,
      state: "all",
      per_page: "100",
    });
    const [x, r] = await this.call("GET", `/pulls?${q}`);
    if (r.status !== 200) throw unexpected(this.name, x, r);
    // Only claimstep's own: a pull request from a fork (even one of the same owner, which the `head`
    // filter lets through) with claimstep's branch name is someone else's.
    return z
      .array(GitHubPull)
      .parse(r.body)
      .filter((p) => p.head.ref === branch && sameRepository(p.head.repo?.full_name, this.config.repository))
      .map((p) => this.toPullRequest(p));
  }

  async ensureBranch(branch: string): Promise<void> {
    const [bx, base] = await this.call("GET", `/git/ref/heads/${segments(this.baseBranch)}`);
    if (base.status === 404) {
      throw new GitProviderError(
        `${this.name}: base branch ${this.baseBranch} not found (or the token cannot read the repository): fix baseBranch or the token`,
        404,
        bx.label,
      );
    }
    if (base.status !== 200) throw unexpected(this.name, bx, base);
    const sha = GitHubRef.parse(base.body).object.sha;
    const [x, r] = await this.call("POST", "/git/refs", { ref: `refs/heads/${branch}`, sha });
    if (r.status === 201) return;
    if (r.status === 422 && /reference already exists/i.test(messageOf(r.body))) return;
    throw unexpected(this.name, x, r);
  }

  async readFile(path: string, ref: string): Promise<RepoFile | undefined> {
    const [x, r] = await this.call("GET", `/contents/${segments(path)}?${new URLSearchParams({ ref })}`);
    if (r.status === 404) return undefined;
    if (r.status !== 200) throw unexpected(this.name, x, r);
    const file = GitHubFile.safeParse(r.body);
    if (!file.success)
      throw new GitProviderError(`${this.name}: ${path} at ${ref} is not a file: fix pathTemplate`, r.status, x.label);
    if (file.data.encoding !== "base64") {
      throw new GitProviderError(
        `${this.name}: ${path} is too large for the contents API (encoding ${file.data.encoding})`,
        r.status,
        x.label,
      );
    }
    return { text: decodeBase64(file.data.content), version: file.data.sha };
  }

  async writeFile(w: FileWrite): Promise<void> {
    const [x, r] = await this.call("PUT", `/contents/${segments(w.path)}`, {
      message: w.message,
      content: encodeBase64(w.text),
      branch: w.branch,
      ...(w.previous ? { sha: w.previous.version } : {}),
    });
    if (r.status === 200 || r.status === 201) return;
    // The file changed (or appeared) since it was read: a lost race, the next step starts over.
    if (r.status === 409 || (r.status === 422 && /sha/i.test(messageOf(r.body)))) {
      throw lostRace(
        `${this.name}: ${w.path} on ${w.branch} changed while claimstep wrote it (${messageOf(r.body)})`,
        r.status,
        x.label,
      );
    }
    throw unexpected(this.name, x, r);
  }

  async createPullRequest(pr: NewPullRequest): Promise<CreatedPullRequest> {
    const [x, r] = await this.call("POST", "/pulls", {
      title: pr.title,
      head: pr.branch,
      base: this.baseBranch,
      body: pr.body,
    });
    if (r.status === 422 && /pull request already exists/i.test(messageOf(r.body))) {
      const open = (await this.findPullRequests(pr.branch)).find((p) => p.state === "open");
      if (open) return { ...open, notes: [] };
    }
    if (r.status !== 201) throw unexpected(this.name, x, r);
    const created = this.toPullRequest(GitHubPull.parse(r.body));
    return { ...created, notes: await this.decorate(created.number) };
  }

  async updatePullRequest(number: number, text: { title: string; body: string }): Promise<void> {
    const [x, r] = await this.call("PATCH", `/pulls/${number}`, { title: text.title, body: text.body });
    if (r.status !== 200) throw unexpected(this.name, x, r);
  }

  /** Labels and reviewers; a refusal here is reported, not fatal: the pull request exists. */
  private async decorate(number: number): Promise<string[]> {
    const notes: string[] = [];
    if (this.config.labels.length) {
      const [x, r] = await this.call("POST", `/issues/${number}/labels`, { labels: this.config.labels });
      if (r.status !== 200) notes.push(`labels not added: ${unexpected(this.name, x, r).message}`);
    }
    if (this.config.reviewers.length) {
      const teams = this.config.reviewers.filter((n) => n.includes("/")).map((n) => n.split("/")[1] ?? n);
      const users = this.config.reviewers.filter((n) => !n.includes("/"));
      const [x, r] = await this.call("POST", `/pulls/${number}/requested_reviewers`, {
        reviewers: users,
        ...(teams.length ? { team_reviewers: teams } : {}),
      });
      if (r.status !== 201) notes.push(`reviewers not requested: ${unexpected(this.name, x, r).message}`);
    }
    return notes;
  }
}
