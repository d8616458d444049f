// The partition hold (docs/pods.md P1, P5; the re-create's hold, docs/templates.md): the partition
// at replicas (or the live one, when higher) so the StatefulSet controller replaces no pod on its
// own, with the user's partition recorded the first time (claimstep.io/user-partition) so that it
// is handed back. The one computation of it for `set --hold-pods`, the webhook's ClaimsFirst hold
// and the planner's hold for a re-create.
import { Keys } from "../keys.js";
import type { StatefulSet } from "../kube/k8s.js";
import type { PatchPartition } from "../types.js";
import { holdsUserPartition } from "./records.js";

export interface PartitionHold {
  /** The partition written: every pod held. */
  partition: number;
  /** The partition found. */
  from: number;
  /** The user's partition to record; absent when one is recorded already. */
  userPartition?: number;
}

/** The hold of a set of `replicas` pods whose partition is `live` (`recorded`: claimstep recorded the user's already). */
export const partitionHold = (replicas: number, live: number, recorded: boolean): PartitionHold => ({
  partition: Math.max(replicas, live),
  from: live,
  ...(recorded ? {} : { userPartition: live }),
});

/**
 * The hold of every pod of `set` as its spec says (replicas, else 1; the partition, else 0), its
 * record kept when there is one: `set --hold-pods`'s and the webhook's, whose update is unvalidated.
 */
export function holdOf(set: {
  metadata: { annotations?: Record<string, string> };
  spec: { replicas?: unknown; updateStrategy?: unknown; [k: string]: unknown };
}): PartitionHold {
  const live = (set.spec.updateStrategy as { rollingUpdate?: { partition?: unknown } } | undefined)?.rollingUpdate
    ?.partition;
  const replicas = set.spec.replicas;
  return partitionHold(
    typeof replicas === "number" ? replicas : 1,
    typeof live === "number" ? live : 0,
    holdsUserPartition(set),
  );
}

/** The user's partition `hold` records (claimstep.io/user-partition), written with it; none when one is recorded already. */
export const userPartitionRecord = (hold: PartitionHold): Record<string, string> =>
  hold.userPartition === undefined ? {} : { [Keys.userPartition]: String(hold.userPartition) };

/** The PatchPartition action that writes `hold` on `set` (under the resourceVersion read). */
export const partitionPatch = (set: Pick<StatefulSet, "metadata">, hold: PartitionHold): PatchPartition => ({
  type: "PatchPartition",
  namespace: set.metadata.namespace ?? "default",
  set: set.metadata.name,
  ...hold,
  ...(set.metadata.resourceVersion !== undefined ? { resourceVersion: set.metadata.resourceVersion } : {}),
});
