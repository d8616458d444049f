// Deterministic branch names: one branch per (set, revision, ordinal), so every invocation of the
// same step finds the same branch and pull request, and a new revision gets a fresh one. The
// proposal to re-create the set (finalize in GitOps mode) has one branch per (set, revision),
// whose last part is `recreate` instead of an ordinal.
import type { SetRef } from "../../core/types.js";

export const BRANCH_PREFIX = "claimstep";
/** The last part of the branch of a re-create proposal. */
export const RECREATE_PART = "recreate";

/** A claim step's branch (an ordinal), or the re-create proposal's (`recreate: true`). */
export type StepBranch = { ref: SetRef; revision: string; ordinal: number } | { ref: SetRef; revision: string; recreate: true };

/** `claimstep/{namespace}/{statefulset}/{revision}/{ordinal}`, or `…/{revision}/recreate`. */
export function branchName(b: StepBranch): string {
  return [BRANCH_PREFIX, b.ref.namespace, b.ref.name, b.revision, "ordinal" in b ? String(b.ordinal) : RECREATE_PART].join("/");
}

// Kubernetes names are DNS subdomains/labels (no '/'); the revision is safe-encoded alphanumerics.
const PART = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The step a branch stands for, or undefined when the branch is not one of claimstep's. */
export function parseBranch(name: string): StepBranch | undefined {
  const parts = name.replace(/^refs\/heads\//, "").split("/");
  if (parts.length !== 5 || parts[0] !== BRANCH_PREFIX) return undefined;
  const [, namespace = "", set = "", revision = "", last = ""] = parts;
  if (![namespace, set, revision].every((p) => PART.test(p))) return undefined;
  const ref = { namespace, name: set };
  if (last === RECREATE_PART) return { ref, revision, recreate: true };
  if (!/^(0|[1-9]\d*)$/.test(last)) return undefined;
  return { ref, revision, ordinal: Number(last) };
}
