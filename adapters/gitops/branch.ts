// Deterministic branch names: one branch per (set, revision, ordinal), so every invocation of the
// same step finds the same branch and pull request, and a new revision gets a fresh one.
import type { SetRef } from "../../core/types.js";

export const BRANCH_PREFIX = "claimstep";

export interface StepBranch {
  ref: SetRef;
  revision: string;
  ordinal: number;
}

/** `claimstep/{namespace}/{statefulset}/{revision}/{ordinal}` */
export function branchName(b: StepBranch): string {
  return [BRANCH_PREFIX, b.ref.namespace, b.ref.name, b.revision, String(b.ordinal)].join("/");
}

// Kubernetes names are DNS subdomains/labels (no '/'); the revision is safe-encoded alphanumerics.
const PART = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The step a branch stands for, or undefined when the branch is not one of claimstep's. */
export function parseBranch(name: string): StepBranch | undefined {
  const parts = name.replace(/^refs\/heads\//, "").split("/");
  if (parts.length !== 5 || parts[0] !== BRANCH_PREFIX) return undefined;
  const [, namespace = "", set = "", revision = "", ordinal = ""] = parts;
  if (![namespace, set, revision].every((p) => PART.test(p)) || !/^(0|[1-9]\d*)$/.test(ordinal)) return undefined;
  return { ref: { namespace, name: set }, revision, ordinal: Number(ordinal) };
}
