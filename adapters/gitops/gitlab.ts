// GitLab REST v4 (gitlab.com or self-managed) behind the GitProvider seam. Endpoints: merge
// requests (list, create), repository branches (create), repository files (get, create, update),
// users (to turn reviewer usernames into ids). Error bodies are GitLab's: {"message": …}.
import * as z from "../../core/zod.js";
import { decodeBase64 } from "./base64.js";
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

const GitLabMergeRequest = z.looseObject({
  iid: z.int(),
  state: z.enum(["opened", "closed", "merged", "locked"]),
  web_url: z.string(),
  source_branch: z.string(),
  // null once the source project (a fork) is deleted: then it is not claimstep's.
  source_project_id: z.nullable(z.int()),
  target_project_id: z.int(),
});
const GitLabFile = z.looseObject({ encoding: z.string(), content: z.string(), last_commit_id: z.string() });
const GitLabUser = z.looseObject({ id: z.int(), username: z.string() });

// `locked` is GitLab's transient state while a merge is being carried out.
const STATE = { opened: "open", locked: "open", merged: "merged", closed: "closed" } as const;

export class GitLabProvider implements GitProvider {
  readonly name: string;
  readonly baseBranch: string;
  private readonly api: string;
  private readonly fetchFn: Fetch;
  private readonly now: () => number;
  private readonly timeoutMs: number | undefined;

  constructor(
    private readonly config: RepositoryConfig,
    opts: ProviderOptions = {},
  ) {
    this.name = `GitLab ${config.repository}`;
    this.baseBranch = config.baseBranch;
    this.api = apiUrlOf(config);
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init));
    this.now = opts.now ?? Date.now;
    this.timeoutMs = opts.timeoutMs;
  }

  private project(path: string): string {
    return `/projects/${encodeURIComponent(this.config.repository)}${path}`;
  }

  private async call(method: Exchange["method"], path: string, body?: unknown): Promise<[Exchange, Reply]> {
    const x: Exchange = {
      method,
      url: `${this.api}${path}`,
      label: `${method} ${path.split("?")[0]}`,
      headers: { authorization: `Bearer ${this.config.token}`, accept: "application/json", "user-agent": "claimstep" },
      ...(body !== undefined ? { body } : {}),
    };
    return [x, await exchange(this.fetchFn, this.name, x, this.now, this.timeoutMs)];
  }

  private notFound(x: Exchange, r: Reply): GitProviderError {
    return new GitProviderError(
      `${this.name}: ${messageOf(r.body)} (${x.label}): check repository and baseBranch, and that the token can read the project`,
      404,
      x.label,
    );
  }

  private toPullRequest(m: z.infer<typeof GitLabMergeRequest>): PullRequest {
    return { number: m.iid, state: STATE[m.state], url: m.web_url, branch: m.source_branch };
  }

  async findPullRequests(branch: string): Promise<PullRequest[]> {
    const q = new URLSearchParams({
      source_branch: branch,
      target_branch: this.baseBranch,
      state: "all",
      per_page: "100",
    });
    const [x, r] = await this.call("GET", this.project(`/merge_requests?${q}`));
    if (r.status === 404) throw this.notFound(x, r);
    if (r.status !== 200) throw unexpected(this.name, x, r);
    // Only claimstep's own: the list holds merge requests from forks into this project too, and one
    // with claimstep's branch name is someone else's (its source project is the fork).
    return z
      .array(GitLabMergeRequest)
      .parse(r.body)
      .filter((m) => m.source_branch === branch && m.source_project_id === m.target_project_id)
      .map((m) => this.toPullRequest(m));
  }

  async ensureBranch(branch: string): Promise<void> {
    const q = new URLSearchParams({ branch, ref: this.baseBranch });
    const [x, r] = await this.call("POST", this.project(`/repository/branches?${q}`));
    if (r.status === 201) return;
    const message = messageOf(r.body);
    if (r.status === 400 && /already exists/i.test(message)) return;
    if (r.status === 400 && /invalid reference/i.test(message)) {
      throw new GitProviderError(
        `${this.name}: base branch ${this.baseBranch} not found (${message}): fix baseBranch`,
        400,
        x.label,
      );
    }
    if (r.status === 404) throw this.notFound(x, r);
    throw unexpected(this.name, x, r);
  }

  async readFile(path: string, ref: string): Promise<RepoFile | undefined> {
    const [x, r] = await this.call(
      "GET",
      this.project(`/repository/files/${encodeURIComponent(path)}?${new URLSearchParams({ ref })}`),
    );
    // "File Not Found": no such file at the ref; "Commit Not Found": no such ref (e.g. a merged branch GitLab deleted).
    if (r.status === 404 && /(file|commit) not found/i.test(messageOf(r.body))) return undefined;
    if (r.status === 404) throw this.notFound(x, r);
    if (r.status !== 200) throw unexpected(this.name, x, r);
    const file = GitLabFile.parse(r.body);
    const text = file.encoding === "base64" ? decodeBase64(file.content) : file.content;
    return { text, version: file.last_commit_id };
  }

  async writeFile(w: FileWrite): Promise<void> {
    const body = {
      branch: w.branch,
      content: w.text,
      commit_message: w.message,
      ...(w.previous ? { last_commit_id: w.previous.version } : {}),
    };
    const [x, r] = await this.call(
      w.previous ? "PUT" : "POST",
      this.project(`/repository/files/${encodeURIComponent(w.path)}`),
      body,
    );
    if (r.status === 200 || r.status === 201) return;
    // GitLab answers 400 when the file changed since it was read, or appeared meanwhile: a lost race.
    if (r.status === 400) {
      throw lostRace(
        `${this.name}: ${w.path} on ${w.branch} could not be written (${messageOf(r.body)}); the next step re-reads it`,
        400,
        x.label,
      );
    }
    if (r.status === 404) throw this.notFound(x, r);
    throw unexpected(this.name, x, r);
  }

  async createPullRequest(pr: NewPullRequest): Promise<CreatedPullRequest> {
    const notes: string[] = [];
    const reviewerIds = await this.reviewerIds(notes);
    const [x, r] = await this.call("POST", this.project("/merge_requests"), {
      source_branch: pr.branch,
      target_branch: this.baseBranch,
      title: pr.title,
      description: pr.body,
      ...(this.config.labels.length ? { labels: this.config.labels.join(",") } : {}),
      ...(reviewerIds.length ? { reviewer_ids: reviewerIds } : {}),
    });
    if (r.status === 409 && /already exists/i.test(messageOf(r.body))) {
      const open = (await this.findPullRequests(pr.branch)).find((p) => p.state === "open");
      if (open) return { ...open, notes: [] };
    }
    if (r.status === 404) throw this.notFound(x, r);
    if (r.status !== 201) throw unexpected(this.name, x, r);
    return { ...this.toPullRequest(GitLabMergeRequest.parse(r.body)), notes };
  }

  async updatePullRequest(number: number, text: { title: string; body: string }): Promise<void> {
    const [x, r] = await this.call("PUT", this.project(`/merge_requests/${number}`), {
      title: text.title,
      description: text.body,
    });
    if (r.status === 404) throw this.notFound(x, r);
    if (r.status !== 200) throw unexpected(this.name, x, r);
  }

  /** Numeric ids stay; usernames are looked up. An unknown username is reported, not fatal. */
  private async reviewerIds(notes: string[]): Promise<number[]> {
    const ids: number[] = [];
    for (const reviewer of this.config.reviewers) {
      if (/^\d+$/.test(reviewer)) {
        ids.push(Number(reviewer));
        continue;
      }
      const [x, r] = await this.call("GET", `/users?${new URLSearchParams({ username: reviewer })}`);
      if (r.status !== 200) throw unexpected(this.name, x, r);
      const user = z
        .array(GitLabUser)
        .parse(r.body)
        .find((u) => u.username.toLowerCase() === reviewer.toLowerCase());
      if (user) ids.push(user.id);
      else notes.push(`reviewer ${reviewer} not found on ${this.name}`);
    }
    return ids;
  }
}
