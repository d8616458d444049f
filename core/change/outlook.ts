// Before a change is made (`claimstep set`, `set --dry-run`, `claimstep apply`, the admission
// webhook's warning, `claimstep plan`): whether the set's desired templates, as the change leaves
// them, end in a re-create of the StatefulSet (orphan delete + create; pods and claims kept), and
// why: `claimstep.io/finalize: Recreate` (the user's own, or one claimstep wrote for a change), or
// a template added or removed, which only a re-create does. From the one parsed policy. Pure.

import { Keys } from "../keys.js";
import type { StatefulSet } from "../kube/k8s.js";
import { revisionOf } from "../kube/revision.js";
import { rawAnnotation } from "../policy/annotations.js";
import { finalizeSpent, policyOf } from "../policy/policy.js";
import { finalizeForOf } from "../policy/records.js";
import { reshapePending } from "../policy/shape.js";

export interface RecreateOutlook {
  /** The change ends in a re-create of the set. */
  recreate: boolean;
  /** Why it does (`claimstep.io/finalize: Recreate`, templates added or removed) or why not. */
  why: string;
  /** One sentence saying both. */
  text: string;
}

const listed = (verb: string, names: readonly string[]) =>
  names.length ? [`claim template${names.length === 1 ? "" : "s"} ${names.join(", ")} ${verb}`] : [];

/**
 * Whether the set, with the desired templates it carries now, ends in a re-create and why;
 * undefined when there is nothing to re-create (the live templates are the desired ones) or the
 * change rolls out in place as it always does (no Recreate asked for or needed).
 */
export function recreateOutlook(set: StatefulSet): RecreateOutlook | undefined {
  const parsed = policyOf(set);
  if (!parsed.ok) return undefined;
  const p = parsed.policy;
  const name = `${set.metadata.namespace ?? "default"}/${set.metadata.name}`;
  const live = revisionOf(set.spec.volumeClaimTemplates ?? []);
  const reshaping = reshapePending(p.reshape);
  if (!reshaping && p.revision === live) return undefined;
  const writtenFor = finalizeForOf(set);
  const spent = finalizeSpent(set, p.revision);
  const ends = `ends in a re-create of StatefulSet ${name} once its claims are at revision ${p.revision} (orphan delete + create; its pods and claims are kept)`;
  const whose =
    writtenFor === undefined
      ? `${Keys.finalize}: Recreate on the set (yours: every change of its claim templates ends in a re-create)`
      : writtenFor === p.revision
        ? `${Keys.finalize}: Recreate, written by claimstep for this change only (${Keys.finalizeFor}: ${writtenFor}; later changes roll out in place)`
        : `${Keys.finalize}: Recreate, written by claimstep for the change to revision ${writtenFor}, not re-created yet: this change goes with it`;
  if (reshaping) {
    const shape = [...listed("added", p.reshape.added), ...listed("removed", p.reshape.removed)].join(" and ");
    if (p.finalize === "Recreate") {
      const why = `${shape}, which only a re-create does (the API server forbids editing spec.volumeClaimTemplates); ${whose}`;
      return { recreate: true, why, text: `This change ${ends}: ${why}.` };
    }
    const why = `${shape} needs a re-create, and ${Keys.finalize} is ${spent ? `a Recreate claimstep wrote for revision ${spent}, spent` : (rawAnnotation(set.metadata.annotations, "finalize") ?? "absent (Never)")}: the change waits until you annotate the set ${Keys.finalize}=Recreate or run claimstep finalize ${set.metadata.name} -n ${set.metadata.namespace ?? "default"}`;
    return { recreate: false, why, text: `No re-create yet: ${why}.` };
  }
  if (p.finalize === "Recreate") return { recreate: true, why: whose, text: `This change ${ends}: ${whose}.` };
  if (spent) {
    const why = `${Keys.finalize}: Recreate was written by claimstep for revision ${spent}, and the set was re-created at it; this change rolls out in place (the live spec.volumeClaimTemplates stay at revision ${live}; claimstep finalize ${set.metadata.name} -n ${set.metadata.namespace ?? "default"} re-creates it on demand)`;
    return { recreate: false, why, text: `No re-create: ${why}.` };
  }
  return undefined;
}
