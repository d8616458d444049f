// The Git side of the fake GitHub and GitLab: branches as snapshots of files, commits with
// real-looking shas, and merges that carry a branch's changes onto the base branch.
import { createHash } from "node:crypto";

export interface StoredFile {
  text: string;
  /** Git blob sha of the text. */
  blob: string;
  /** The commit that last changed the file on this branch. */
  lastCommit: string;
}

export interface Branch {
  head: string;
  files: Map<string, StoredFile>;
  /** The files at the merge base (where it was branched, or last merged): what a merge compares against. */
  mergeBase?: Map<string, StoredFile>;
}

export interface Commit {
  sha: string;
  branch: string;
  path: string;
  message: string;
}

const sha1 = (s: string): string => createHash("sha1").update(s).digest("hex");
export const blobSha = (text: string): string => sha1(`blob ${Buffer.byteLength(text)}\0${text}`);

export class FakeRepo {
  readonly branches = new Map<string, Branch>();
  readonly commits: Commit[] = [];
  private counter = 0;

  constructor(
    readonly baseBranch: string,
    files: Record<string, string> = {},
  ) {
    const head = this.newSha("initial");
    this.branches.set(baseBranch, {
      head,
      files: new Map(Object.entries(files).map(([p, text]) => [p, { text, blob: blobSha(text), lastCommit: head }])),
    });
  }

  newSha(seed: string): string {
    return sha1(`${seed}:${++this.counter}`);
  }

  hasCommit(sha: string): boolean {
    return [...this.branches.values()].some((b) => b.head === sha) || this.commits.some((c) => c.sha === sha);
  }

  /** A new branch at the commit `sha` (a branch whose head it is). */
  branchFrom(name: string, sha: string): void {
    const source = [...this.branches.values()].find((b) => b.head === sha);
    if (!source) throw new Error(`no branch at ${sha}`);
    this.branches.set(name, { head: sha, files: new Map(source.files), mergeBase: new Map(source.files) });
  }

  file(branch: string, path: string): StoredFile | undefined {
    return this.branches.get(branch)?.files.get(path);
  }

  /** One commit writing one file. */
  write(branch: string, path: string, text: string, message: string): Commit {
    const b = this.branches.get(branch);
    if (!b) throw new Error(`no branch ${branch}`);
    const sha = this.newSha(`${branch}:${path}:${text}`);
    b.head = sha;
    b.files.set(path, { text, blob: blobSha(text), lastCommit: sha });
    const commit = { sha, branch, path, message };
    this.commits.push(commit);
    return commit;
  }

  /** Files of `branch` that differ from `base`. */
  changes(branch: string, base = this.baseBranch): Array<{ path: string; text: string }> {
    const from = this.branches.get(branch)?.files ?? new Map<string, StoredFile>();
    const to = this.branches.get(base)?.files ?? new Map<string, StoredFile>();
    return [...from].filter(([p, f]) => to.get(p)?.blob !== f.blob).map(([path, f]) => ({ path, text: f.text }));
  }

  /**
   * Carry the branch's changed files onto the base branch as one merge commit. As Git's three-way
   * merge: only the files the branch changed since its merge base, so that a branch reused after a
   * merge does not bring back files the base branch changed since (a re-create's manifest).
   */
  merge(branch: string): { sha: string; files: Array<{ path: string; text: string }> } {
    const b = this.branches.get(branch);
    const files = this.changes(branch).filter((f) => b?.mergeBase?.get(f.path)?.blob !== blobSha(f.text));
    if (b) b.mergeBase = new Map(b.files);
    const base = this.branches.get(this.baseBranch)!;
    const sha = this.newSha(`merge:${branch}`);
    for (const f of files) base.files.set(f.path, { text: f.text, blob: blobSha(f.text), lastCommit: sha });
    base.head = sha;
    return { sha, files };
  }
}
