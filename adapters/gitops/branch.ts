// Deterministic branch names: one branch per (set, revision, ordinal), so every invocation of the
// same step finds the same branch and pull request, and a new revision gets a fresh one. The
// proposal to re-create the set (finalize in GitOps mode) has one branch per (set, revision),
// whose last part is `recreate` instead of an ordinal; autogrow's raise of the desired templates
// has one per (set, revision grown from), whose last part is `autogrow`.
import type { SetRef } from "../../core/types.js";

export const BRANCH_PREFIX = "claimstep";

/** A branch or path would be built from a value that is not one safe segment: refused, nothing written. */
export class UnsafeNameError extends Error {
  override readonly name = "UnsafeNameError";
}
/** The last part of the branch of a re-create proposal. */
export const RECREATE_PART = "recreate";
/** The last part of the branch of an autogrow proposal (its revision is the one grown from). */
export const AUTOGROW_PART = "autogrow";

// A namespace is a DNS-1123 label, a StatefulSet's name a DNS-1123 subdomain (labels joined by
// single dots): neither holds '/' nor '..'. The revision is safe-encoded alphanumerics.
const LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const NAMESPACE = new RegExp(`^(?=.{1,63}$)${LABEL}$`);
const SET_NAME = new RegExp(`^(?=.{1,253}$)${LABEL}(\\.${LABEL})*$`);
const REVISION = /^(?!.*\.\.)[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** A claim step's branch (an ordinal), the re-create proposal's (`recreate: true`), or autogrow's (`autogrow: true`). */
export type StepBranch =
  | { ref: SetRef; revision: string; ordinal: number }
  | { ref: SetRef; revision: string; recreate: true }
  | { ref: SetRef; revision: string; autogrow: true };

/**
 * `claimstep/{namespace}/{statefulset}/{revision}/{ordinal}`, `…/{revision}/recreate` or
 * `…/{revision}/autogrow`. Each part must be one segment parseBranch reads back (a Kubernetes name,
 * a revision of letters and digits, a non-negative integer ordinal); anything else throws,
 * naming the part: a branch is never built from a value that could name another branch.
 */
export function branchName(b: StepBranch): string {
  const bad = (what: string, why: string) =>
    new UnsafeNameError(
      `cannot name the branch of StatefulSet ${JSON.stringify(`${b.ref.namespace}/${b.ref.name}`)}: ${what} ${why}`,
    );
  if (!NAMESPACE.test(b.ref.namespace))
    throw bad(
      `namespace ${JSON.stringify(b.ref.namespace)}`,
      "is not a namespace name (a DNS-1123 label: lowercase letters, digits and '-', at most 63)",
    );
  if (!SET_NAME.test(b.ref.name))
    throw bad(
      `StatefulSet name ${JSON.stringify(b.ref.name)}`,
      "is not a StatefulSet name (a DNS-1123 subdomain: lowercase labels joined by single '.', at most 253)",
    );
  if (!REVISION.test(b.revision))
    throw bad(`revision ${JSON.stringify(b.revision)}`, "is not a revision (lowercase letters, digits, '-', '.')");
  if ("ordinal" in b && !(Number.isSafeInteger(b.ordinal) && b.ordinal >= 0))
    throw bad(`ordinal ${b.ordinal}`, "is not a non-negative integer");
  const last = "ordinal" in b ? String(b.ordinal) : "recreate" in b ? RECREATE_PART : AUTOGROW_PART;
  return [BRANCH_PREFIX, b.ref.namespace, b.ref.name, b.revision, last].join("/");
}

/** The step a branch stands for, or undefined when the branch is not one of claimstep's. */
export function parseBranch(name: string): StepBranch | undefined {
  const parts = name.replace(/^refs\/heads\//, "").split("/");
  if (parts.length !== 5 || parts[0] !== BRANCH_PREFIX) return undefined;
  const [, namespace = "", set = "", revision = "", last = ""] = parts;
  if (!NAMESPACE.test(namespace) || !SET_NAME.test(set) || !REVISION.test(revision)) return undefined;
  const ref = { namespace, name: set };
  if (last === RECREATE_PART) return { ref, revision, recreate: true };
  if (last === AUTOGROW_PART) return { ref, revision, autogrow: true };
  if (!/^(0|[1-9]\d*)$/.test(last)) return undefined;
  return { ref, revision, ordinal: Number(last) };
}
