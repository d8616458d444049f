// The opted-in sets a command lists (`status`, `step --all`): of a namespace or of all, with a label
// selector (-l). A listing of all namespaces the API server forbids (RBAC confined to namespaces)
// says what to do instead: use -n.
import { ApiError } from "../../adapters/api-error.js";
import type { SetRef } from "../../core/types.js";
import type { Target } from "./target.js";

export class ClusterScopeForbidden extends Error {
  override readonly name = "ClusterScopeForbidden";
  constructor(override readonly cause: ApiError) {
    const user = /\bUser "([^"]+)"/.exec(cause.message)?.[1];
    super(
      `claimstep cannot list statefulsets in all namespaces (forbidden${user ? ` for ${user}` : ""}): use -n <namespace>`,
    );
  }
}

/** The opted-in sets of `namespace` (undefined: every namespace) whose labels match `selector`. */
export async function optedIn(target: Target, namespace: string | undefined, selector?: string): Promise<SetRef[]> {
  try {
    return await target.listOptedIn(namespace, selector);
  } catch (err) {
    if (namespace === undefined && err instanceof ApiError && err.code === 403) throw new ClusterScopeForbidden(err);
    throw err;
  }
}
