// What the pull-request writer needs from a Git hosting service. GitHub and GitLab implement it
// over plain fetch, so the same writer runs on Workers and on Node.
import type { Fetch } from "./http.js";

export interface ProviderOptions {
  /** Defaults to the global fetch (Workers and Node 20 both have one). */
  fetch?: Fetch;
  /** Clock for rate-limit reset arithmetic. */
  now?: () => number;
  /** Give up on one request after this long (a transient failure). Default 30 s. */
  timeoutMs?: number;
}

export type PullRequestState = "open" | "merged" | "closed";

export interface PullRequest {
  /** GitHub number / GitLab iid: the number people see. */
  number: number;
  state: PullRequestState;
  url: string;
  branch: string;
}

export interface RepoFile {
  text: string;
  /** What a conditional update needs: GitHub's blob sha, GitLab's last_commit_id. */
  version: string;
}

export interface FileWrite {
  path: string;
  branch: string;
  text: string;
  message: string;
  /** The file as read, when it exists (an update conditional on it); absent creates the file. */
  previous?: RepoFile;
}

export interface NewPullRequest {
  branch: string;
  title: string;
  body: string;
}

export interface CreatedPullRequest extends PullRequest {
  /** What could not be done but does not stop the step (e.g. a reviewer who cannot be requested). */
  notes: string[];
}

export interface GitProvider {
  /** e.g. `GitHub octo/fleet`, for messages. */
  readonly name: string;
  readonly baseBranch: string;
  /** Pull requests from this branch into the base branch, any state. */
  findPullRequests(branch: string): Promise<PullRequest[]>;
  /** Create the branch from the base branch's head; an existing branch is left as it is. */
  ensureBranch(branch: string): Promise<void>;
  /** A file at a branch, or undefined when it does not exist there. */
  readFile(path: string, ref: string): Promise<RepoFile | undefined>;
  /** One commit writing one file. */
  writeFile(write: FileWrite): Promise<void>;
  /** Open a pull request with the configured labels and reviewers; if one is already open for the branch, return it. */
  createPullRequest(pr: NewPullRequest): Promise<CreatedPullRequest>;
  /** Rewrite an open request's title and body (when a later step changes what its branch proposes). */
  updatePullRequest(number: number, text: { title: string; body: string }): Promise<void>;
}

/** The request that speaks for the branch now: an open one, else the latest. */
export function currentPullRequest(prs: readonly PullRequest[]): PullRequest | undefined {
  return [...prs].sort((a, b) => Number(b.state === "open") - Number(a.state === "open") || b.number - a.number)[0];
}
