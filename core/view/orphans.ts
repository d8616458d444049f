// The claims of a removed claim template (issue 27, docs/templates.md), as `claimstep status` and
// the set's page list them: kept (claimstep never deletes a claim, I1), each with the pod that
// still mounts it, and the command a person runs to delete the ones no pod mounts.
import { claimOrdinal, podName } from "../kube/statefulset.js";
import type { OrphanedClaim, SetRef } from "../types.js";

const ORPHANS_HEADING = "Claims of removed templates (kept; claimstep never deletes a claim)";

interface OrphanRow extends OrphanedClaim {
  /** The pod that still mounts it (the claim's ordinal's pod), when mounted. */
  pod?: string;
  note: string;
}

export interface OrphansView {
  heading: string;
  /** By template, then ordinal. */
  claims: OrphanRow[];
  /** `kubectl delete pvc -n <ns> <names…>` of the claims no pod mounts; absent while every one is mounted. */
  command?: string;
}

/** The orphaned claims of a Decision (`Decision.orphanedClaims`), or undefined when there are none. */
export function orphansView(ref: SetRef, orphaned: readonly OrphanedClaim[] | undefined): OrphansView | undefined {
  if (!orphaned?.length) return undefined;
  const ordinalOf = (c: OrphanedClaim) => claimOrdinal(c.claim, c.template, ref.name);
  const claims = [...orphaned]
    .sort(
      (a, b) =>
        a.template.localeCompare(b.template) ||
        (ordinalOf(a) ?? Number.MAX_SAFE_INTEGER) - (ordinalOf(b) ?? Number.MAX_SAFE_INTEGER) ||
        a.claim.localeCompare(b.claim),
    )
    .map((c): OrphanRow => {
      const { claim, template, mounted } = c;
      if (!mounted) return { claim, template, mounted, note: "no pod mounts it" };
      const ordinal = ordinalOf(c);
      const pod = ordinal === undefined ? undefined : podName(ref.name, ordinal);
      return {
        claim,
        template,
        mounted,
        ...(pod ? { pod } : {}),
        note: `still mounted by ${pod ?? `a pod of ${ref.name}`} until it restarts`,
      };
    });
  const free = claims.filter((c) => !c.mounted).map((c) => c.claim);
  return {
    heading: ORPHANS_HEADING,
    claims,
    ...(free.length ? { command: `kubectl delete pvc -n ${ref.namespace} ${free.join(" ")}` } : {}),
  };
}
