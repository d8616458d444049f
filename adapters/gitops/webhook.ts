// Incoming pull-request webhooks: authenticity checks (Web Crypto, constant time) and the
// reduction of GitHub's and GitLab's payloads to the one thing claimstep cares about — which
// claimstep branch was merged, closed or reopened.
import * as z from "../../core/zod.js";
import { parseBranch, type StepBranch } from "./branch.js";

const encoder = new TextEncoder();

/** Compare two byte strings in time independent of where they differ (lengths here are fixed digests). */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

const hexToBytes = (hex: string): Uint8Array | undefined =>
  /^(?:[0-9a-f]{2})+$/i.test(hex) ? Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16)) : undefined;

/** GitHub's `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`. */
export async function verifyGitHubSignature(
  secret: string,
  body: Uint8Array,
  header: string | undefined | null,
): Promise<boolean> {
  if (!secret || !header?.startsWith("sha256=")) return false;
  const given = hexToBytes(header.slice("sha256=".length));
  if (!given) return false;
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const expected = new Uint8Array(await crypto.subtle.sign("HMAC", key, new Uint8Array(body)));
  return constantTimeEqual(expected, given);
}

/** GitHub's signature header for a body (what a sender, or a test, puts in X-Hub-Signature-256). */
export async function signGitHubBody(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(body)));
  return `sha256=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** GitLab's `X-Gitlab-Token` is the shared secret itself; compare digests so length leaks nothing either. */
export async function verifyGitLabToken(secret: string, header: string | undefined | null): Promise<boolean> {
  if (!secret || !header) return false;
  const digest = async (s: string) => new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(s)));
  return constantTimeEqual(await digest(secret), await digest(header));
}

export type PullRequestOutcome = "merged" | "closed" | "reopened";

export interface PullRequestEvent {
  outcome: PullRequestOutcome;
  branch: string;
  step: StepBranch;
  number: number;
  url: string;
}

const GitHubPullRequestPayload = z.looseObject({
  action: z.string(),
  pull_request: z.looseObject({
    number: z.int(),
    html_url: z.string(),
    merged: z.optional(z.nullable(z.boolean())),
    // `repo` is null once the head repository (a fork) is deleted.
    head: z.looseObject({ ref: z.string(), repo: z.optional(z.nullable(z.looseObject({ full_name: z.string() }))) }),
  }),
  repository: z.optional(z.looseObject({ full_name: z.string() })),
});

const GitLabMergeRequestPayload = z.looseObject({
  object_kind: z.literal("merge_request"),
  object_attributes: z.looseObject({
    iid: z.int(),
    url: z.string(),
    action: z.optional(z.string()),
    state: z.string(),
    source_branch: z.string(),
    // null once the source project (a fork) is deleted.
    source_project_id: z.optional(z.nullable(z.int())),
    target_project_id: z.optional(z.int()),
  }),
  project: z.optional(z.looseObject({ id: z.optional(z.int()), path_with_namespace: z.optional(z.string()) })),
});

/** Why a delivery is ignored, or the event it carries. */
export type Parsed = { event: PullRequestEvent } | { ignored: string };

function forBranch(
  outcome: PullRequestOutcome | undefined,
  branch: string,
  number: number,
  url: string,
  what: string,
): Parsed {
  if (!outcome) return { ignored: `${what} is not a merge, close or reopen` };
  const step = parseBranch(branch);
  if (!step) return { ignored: `branch ${branch} is not a claimstep branch` };
  return { event: { outcome, branch, step, number, url } };
}

const sameName = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/**
 * A GitHub delivery (`X-GitHub-Event` and the parsed body). Only a pull request whose head is
 * `repository` (the configured `owner/repo`; absent: the repository the hook is on) is claimstep's:
 * one from a fork with claimstep's branch name is someone else's, and ignored.
 */
export function parseGitHubEvent(eventName: string | undefined | null, body: unknown, repository?: string): Parsed {
  if (eventName !== "pull_request") return { ignored: `event ${eventName ?? "(none)"} is not pull_request` };
  const p = GitHubPullRequestPayload.safeParse(body);
  if (!p.success) return { ignored: "pull_request payload without pull_request.head.ref" };
  const { action, pull_request: pr } = p.data;
  const own = repository ?? p.data.repository?.full_name;
  const head = pr.head.repo?.full_name;
  if (!own || !head || !sameName(head, own)) {
    return {
      ignored: `pull request #${pr.number} comes from ${head ?? "a deleted repository"}, not ${own ?? "the repository of the hook"}: not claimstep's`,
    };
  }
  const outcome =
    action === "closed" ? (pr.merged ? "merged" : "closed") : action === "reopened" ? "reopened" : undefined;
  return forBranch(outcome, pr.head.ref, pr.number, pr.html_url, `action ${action}`);
}

/**
 * A GitLab delivery (`X-Gitlab-Event` and the parsed body). Only a merge request whose source
 * project is its target project is claimstep's (one from a fork with claimstep's branch name is
 * someone else's), and, with `repository` (the configured project path or numeric id), only one in
 * that project (a group hook delivers every project's).
 */
export function parseGitLabEvent(eventName: string | undefined | null, body: unknown, repository?: string): Parsed {
  if (eventName !== "Merge Request Hook")
    return { ignored: `event ${eventName ?? "(none)"} is not Merge Request Hook` };
  const p = GitLabMergeRequestPayload.safeParse(body);
  if (!p.success) return { ignored: "merge_request payload without object_attributes.source_branch" };
  const mr = p.data.object_attributes;
  const project = p.data.project;
  if (repository !== undefined) {
    const inProject = /^\d+$/.test(repository)
      ? project?.id === Number(repository)
      : project?.path_with_namespace !== undefined && sameName(project.path_with_namespace, repository);
    if (!inProject)
      return {
        ignored: `merge request !${mr.iid} is in project ${project?.path_with_namespace ?? project?.id ?? "(unnamed)"}, not ${repository}: not claimstep's`,
      };
  }
  if (
    mr.source_project_id === undefined ||
    mr.source_project_id === null ||
    mr.source_project_id !== mr.target_project_id
  ) {
    const target = `${repository ?? project?.path_with_namespace ?? "the target project"}${mr.target_project_id !== undefined ? ` (${mr.target_project_id})` : ""}`;
    return {
      ignored: `merge request !${mr.iid} comes from project ${mr.source_project_id ?? "(unknown)"}, not ${target}: not claimstep's`,
    };
  }
  const outcome =
    mr.action === "merge"
      ? "merged"
      : mr.action === "close"
        ? "closed"
        : mr.action === "reopen"
          ? "reopened"
          : undefined;
  return forBranch(outcome, mr.source_branch, mr.iid, mr.url, `action ${mr.action ?? "(none)"}`);
}
