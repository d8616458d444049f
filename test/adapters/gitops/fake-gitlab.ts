// msw fake of exactly the GitLab REST v4 endpoints the pull-request writer uses, answering with
// GitLab's shapes and error bodies (after GitLab's API docs): missing file 404 "404 File Not
// Found", unknown project 404 "404 Project Not Found", existing branch 400 "Branch already
// exists", unknown ref 400 "Invalid reference name", existing MR 409 ["Another open merge request
// already exists for this source branch: !N"], stale file 400, bad token 401 "401 Unauthorized",
// Reporter token 403 "403 Forbidden", and the rate limit (429 "Retry later" with RateLimit-* and
// Retry-After headers).
import { HttpResponse, http, type RequestHandler } from "msw";
import { FakeRepo } from "./fake-repo.js";

export const GITLAB_API = "https://gitlab.com/api/v4";

export interface FakeMergeRequest {
  iid: number;
  title: string;
  description: string;
  source_branch: string;
  target_branch: string;
  state: "opened" | "closed" | "merged";
  labels: string[];
  reviewer_ids: number[];
  merged_at: string | null;
  closed_at: string | null;
  /** The project the source branch is in: 42 (this one), another for a merge request from a fork. */
  source_project_id?: number;
}

/** The project id of this fake's project (`source_project_id` of its own merge requests). */
export const GITLAB_PROJECT_ID = 42;

type Fault = "bad-token" | "forbidden" | "rate-limit" | "server-error";

export const GITLAB_USERS = [
  { id: 11, username: "alice", name: "Alice" },
  { id: 12, username: "bob", name: "Bob" },
];

export class FakeGitLab {
  readonly repo: FakeRepo;
  readonly mergeRequests: FakeMergeRequest[] = [];
  readonly requests: string[] = [];
  token = "glpat-fake-token";
  private faults: Array<{ fault: Fault; match?: RegExp }> = [];
  private seq = 0;

  constructor(
    readonly projectPath: string,
    baseBranch = "main",
    files: Record<string, string> = {},
    readonly now: () => number = () => Date.parse("2026-11-30T10:00:00Z"),
  ) {
    this.repo = new FakeRepo(baseBranch, files);
  }

  failNext(fault: Fault, match?: RegExp): void {
    this.faults.push({ fault, ...(match ? { match } : {}) });
  }

  private rateHeaders(observed = 1): Record<string, string> {
    const reset = Math.floor(this.now() / 1000) + 60;
    return {
      "ratelimit-limit": "2000",
      "ratelimit-observed": String(observed),
      "ratelimit-remaining": String(2000 - observed),
      "ratelimit-reset": String(reset),
      "ratelimit-resettime": new Date(reset * 1000).toUTCString(),
    };
  }

  private json(body: unknown, status = 200) {
    return HttpResponse.json(body as never, { status, headers: this.rateHeaders() });
  }

  private message(status: number, message: unknown) {
    return this.json({ message }, status);
  }

  private faultFor(method: string, path: string): Response | undefined {
    const i = this.faults.findIndex((f) => !f.match || f.match.test(`${method} ${path}`));
    if (i < 0) return undefined;
    const [{ fault }] = this.faults.splice(i, 1) as [{ fault: Fault }];
    switch (fault) {
      case "bad-token":
        return this.message(401, "401 Unauthorized");
      case "forbidden":
        return this.message(403, "403 Forbidden");
      case "rate-limit":
        return HttpResponse.text("Retry later\n", {
          status: 429,
          headers: { ...this.rateHeaders(2000), "retry-after": "30" },
        });
      case "server-error":
        return this.message(500, "500 Internal Server Error");
    }
  }

  private webUrl(iid: number): string {
    return `https://gitlab.com/${this.projectPath}/-/merge_requests/${iid}`;
  }

  private mrJSON(m: FakeMergeRequest) {
    return {
      id: 5000 + m.iid,
      iid: m.iid,
      project_id: 42,
      title: m.title,
      description: m.description,
      state: m.state,
      created_at: new Date(this.now()).toISOString(),
      updated_at: new Date(this.now()).toISOString(),
      merged_at: m.merged_at,
      closed_at: m.closed_at,
      target_branch: m.target_branch,
      source_branch: m.source_branch,
      author: { id: 10, username: "claimstep-bot", name: "claimstep", state: "active" },
      reviewers: GITLAB_USERS.filter((u) => m.reviewer_ids.includes(u.id)).map((u) => ({ ...u, state: "active" })),
      source_project_id: m.source_project_id ?? GITLAB_PROJECT_ID,
      target_project_id: GITLAB_PROJECT_ID,
      labels: m.labels,
      draft: false,
      work_in_progress: false,
      merge_when_pipeline_succeeds: false,
      detailed_merge_status: m.state === "opened" ? "mergeable" : "not_open",
      sha: this.repo.branches.get(m.source_branch)?.head ?? null,
      merge_commit_sha: null,
      squash_commit_sha: null,
      references: { short: `!${m.iid}`, relative: `!${m.iid}`, full: `${this.projectPath}!${m.iid}` },
      web_url: this.webUrl(m.iid),
    };
  }

  private branchJSON(name: string, sha: string) {
    return {
      name,
      merged: false,
      protected: name === this.repo.baseBranch,
      default: name === this.repo.baseBranch,
      developers_can_push: false,
      developers_can_merge: false,
      can_push: true,
      web_url: `https://gitlab.com/${this.projectPath}/-/tree/${name}`,
      commit: { id: sha, short_id: sha.slice(0, 8), title: "commit", message: "commit", parent_ids: [] },
    };
  }

  handlers(): RequestHandler[] {
    const root = `${GITLAB_API}/projects/:id`;
    const guard = (request: Request, params: Record<string, unknown>, needsProject = true): Response | undefined => {
      const url = new URL(request.url);
      this.requests.push(`${request.method} ${url.pathname}`);
      const fault = this.faultFor(request.method, url.pathname);
      if (fault) return fault;
      const auth = request.headers.get("authorization") ?? "";
      if (auth !== `Bearer ${this.token}` && request.headers.get("private-token") !== this.token)
        return this.message(401, "401 Unauthorized");
      if (needsProject && decodeURIComponent(String(params.id)) !== this.projectPath)
        return this.message(404, "404 Project Not Found");
      return undefined;
    };
    const filePath = (params: Record<string, unknown>) => decodeURIComponent(String(params.path));

    return [
      http.get(`${root}/merge_requests`, ({ request, params }) => {
        const denied = guard(request, params);
        if (denied) return denied;
        const q = new URL(request.url).searchParams;
        const state = q.get("state") ?? "all";
        const list = this.mergeRequests
          .filter((m) => state === "all" || m.state === state)
          .filter((m) => !q.get("source_branch") || m.source_branch === q.get("source_branch"))
          .filter((m) => !q.get("target_branch") || m.target_branch === q.get("target_branch"))
          .sort((a, b) => b.iid - a.iid);
        return this.json(list.map((m) => this.mrJSON(m)));
      }),

      http.post(`${root}/repository/branches`, ({ request, params }) => {
        const denied = guard(request, params);
        if (denied) return denied;
        const q = new URL(request.url).searchParams;
        const name = q.get("branch");
        const ref = q.get("ref");
        if (!name) return this.json({ error: "branch is missing" }, 400);
        if (!ref) return this.json({ error: "ref is missing" }, 400);
        if (this.repo.branches.has(name)) return this.message(400, "Branch already exists");
        const from = this.repo.branches.get(ref);
        if (!from) return this.message(400, `Invalid reference name: ${ref}`);
        this.repo.branchFrom(name, from.head);
        return this.json(this.branchJSON(name, from.head), 201);
      }),

      http.get(`${root}/repository/files/:path`, ({ request, params }) => {
        const denied = guard(request, params);
        if (denied) return denied;
        const path = filePath(params);
        const ref = new URL(request.url).searchParams.get("ref");
        if (!ref) return this.json({ error: "ref is missing" }, 400);
        if (!this.repo.branches.has(ref)) return this.message(404, "404 Commit Not Found");
        const file = this.repo.file(ref, path);
        if (!file) return this.message(404, "404 File Not Found");
        const content = Buffer.from(file.text, "utf8").toString("base64");
        return this.json({
          file_name: path.split("/").at(-1),
          file_path: path,
          size: Buffer.byteLength(file.text),
          encoding: "base64",
          content,
          content_sha256: "0".repeat(64),
          ref,
          blob_id: file.blob,
          commit_id: this.repo.branches.get(ref)!.head,
          last_commit_id: file.lastCommit,
          execute_filemode: false,
        });
      }),

      ...(["post", "put"] as const).map((method) =>
        http[method](`${root}/repository/files/:path`, async ({ request, params }) => {
          const denied = guard(request, params);
          if (denied) return denied;
          const path = filePath(params);
          const body = (await request.json()) as {
            branch?: string;
            content?: string;
            commit_message?: string;
            last_commit_id?: string;
          };
          if (!body.branch) return this.json({ error: "branch is missing" }, 400);
          if (!body.commit_message) return this.json({ error: "commit_message is missing" }, 400);
          if (body.content === undefined) return this.json({ error: "content is missing" }, 400);
          if (!this.repo.branches.has(body.branch))
            return this.message(400, "You can only create or edit files when you are on a branch");
          const existing = this.repo.file(body.branch, path);
          if (method === "post" && existing) return this.message(400, "A file with this name already exists");
          if (method === "put" && !existing) return this.message(400, "A file with this name doesn't exist");
          if (method === "put" && body.last_commit_id && body.last_commit_id !== existing!.lastCommit) {
            return this.message(
              400,
              "You are attempting to update a file that has changed since you started editing it.",
            );
          }
          this.repo.write(body.branch, path, body.content, body.commit_message);
          return this.json({ file_path: path, branch: body.branch }, method === "post" ? 201 : 200);
        }),
      ),

      http.post(`${root}/merge_requests`, async ({ request, params }) => {
        const denied = guard(request, params);
        if (denied) return denied;
        const body = (await request.json()) as {
          source_branch?: string;
          target_branch?: string;
          title?: string;
          description?: string;
          labels?: string;
          reviewer_ids?: number[];
        };
        if (!body.source_branch || !body.target_branch || !body.title)
          return this.json({ error: "source_branch, target_branch, title are missing" }, 400);
        // GitLab's check is per source project: a fork's merge request from a same-named branch is another one.
        const open = this.mergeRequests.find(
          (m) =>
            m.source_project_id === undefined &&
            m.source_branch === body.source_branch &&
            m.target_branch === body.target_branch &&
            m.state === "opened",
        );
        if (open)
          return this.message(409, [`Another open merge request already exists for this source branch: !${open.iid}`]);
        if (!this.repo.branches.has(body.source_branch)) return this.message(400, ["Source branch does not exist"]);
        const mr: FakeMergeRequest = {
          iid: ++this.seq,
          title: body.title,
          description: body.description ?? "",
          source_branch: body.source_branch,
          target_branch: body.target_branch,
          state: "opened",
          labels: body.labels ? body.labels.split(",") : [],
          reviewer_ids: body.reviewer_ids ?? [],
          merged_at: null,
          closed_at: null,
        };
        this.mergeRequests.push(mr);
        return this.json(this.mrJSON(mr), 201);
      }),

      http.put(`${root}/merge_requests/:iid`, async ({ request, params }) => {
        const denied = guard(request, params);
        if (denied) return denied;
        const mr = this.mergeRequests.find((m) => m.iid === Number(params.iid));
        if (!mr) return this.message(404, "404 Not found");
        const body = (await request.json()) as { title?: string; description?: string };
        if (body.title !== undefined) mr.title = body.title;
        if (body.description !== undefined) mr.description = body.description;
        return this.json(this.mrJSON(mr));
      }),

      http.get(`${GITLAB_API}/users`, ({ request, params }) => {
        const denied = guard(request, params, false);
        if (denied) return denied;
        const username = new URL(request.url).searchParams.get("username")?.toLowerCase();
        return this.json(
          GITLAB_USERS.filter((u) => u.username === username).map((u) => ({
            ...u,
            state: "active",
            avatar_url: "",
            web_url: `https://gitlab.com/${u.username}`,
          })),
        );
      }),
    ];
  }

  /** Someone's merge request from their fork (project `sourceProjectId`) into this project, with the given source branch name. */
  openFromFork(
    sourceBranch: string,
    sourceProjectId = 77,
    state: FakeMergeRequest["state"] = "opened",
  ): FakeMergeRequest {
    const mr: FakeMergeRequest = {
      iid: ++this.seq,
      title: "from a fork",
      description: "",
      source_branch: sourceBranch,
      target_branch: this.repo.baseBranch,
      state,
      labels: [],
      reviewer_ids: [],
      merged_at: null,
      closed_at: state === "closed" ? new Date(this.now()).toISOString() : null,
      source_project_id: sourceProjectId,
    };
    this.mergeRequests.push(mr);
    return mr;
  }

  mergeRequest(iid: number): FakeMergeRequest {
    const m = this.mergeRequests.find((x) => x.iid === iid);
    if (!m) throw new Error(`no merge request !${iid}`);
    return m;
  }

  merge(iid: number): Array<{ path: string; text: string }> {
    const m = this.mergeRequest(iid);
    if (m.state !== "opened") throw new Error(`merge request !${iid} is ${m.state}`);
    const { files } = this.repo.merge(m.source_branch);
    m.state = "merged";
    m.merged_at = new Date(this.now()).toISOString();
    return files;
  }

  close(iid: number): void {
    const m = this.mergeRequest(iid);
    m.state = "closed";
    m.closed_at = new Date(this.now()).toISOString();
  }

  reopen(iid: number): void {
    const m = this.mergeRequest(iid);
    m.state = "opened";
    m.closed_at = null;
  }

  /** The Merge Request Hook payload GitLab sends for this merge request and action. */
  webhookPayload(iid: number, action: "merge" | "close" | "reopen" | "open" | "update") {
    const m = this.mergeRequest(iid);
    return {
      object_kind: "merge_request",
      event_type: "merge_request",
      user: { id: 11, name: "Alice", username: "alice" },
      project: {
        id: 42,
        name: this.projectPath.split("/").at(-1),
        path_with_namespace: this.projectPath,
        web_url: `https://gitlab.com/${this.projectPath}`,
      },
      object_attributes: {
        id: 5000 + m.iid,
        iid: m.iid,
        title: m.title,
        source_branch: m.source_branch,
        target_branch: m.target_branch,
        source_project_id: m.source_project_id ?? GITLAB_PROJECT_ID,
        target_project_id: GITLAB_PROJECT_ID,
        state: m.state,
        action,
        url: this.webUrl(m.iid),
        merge_status: "can_be_merged",
      },
      labels: m.labels.map((title) => ({ title })),
      repository: { name: this.projectPath.split("/").at(-1), homepage: `https://gitlab.com/${this.projectPath}` },
    };
  }
}
