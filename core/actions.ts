// What every interface says of an action: the object it writes and a one-line summary.
import type { Action } from "./types.js";

/** The name of the object an action writes: the claim, the StatefulSet or the pod. */
export function actionTarget(action: Action): string {
  switch (action.type) {
    case "PatchClaim":
    case "LabelClaim":
      return action.claim;
    case "PatchPartition":
      return action.set;
    case "EvictPod":
      return action.pod;
    case "WriteRecord":
      return `configmaps/${action.record.metadata.name}`;
    case "DeleteRecord":
    case "ArmRecord":
      return `configmaps/${action.name}`;
    case "OrphanSet":
    case "CreateSet":
    case "RestoreOwnership":
    case "ProposeRecreate":
    case "RaiseTemplate":
      return action.set;
  }
}
