// What every interface says of an action: the object it writes and a one-line summary.
import type { Action, ActionType } from "./types.js";

/** The re-create's requests (F1–F5 and the arming), in the order a re-create makes them. */
export const RECREATE_ACTIONS = [
  "WriteRecord",
  "ArmRecord",
  "OrphanSet",
  "CreateSet",
  "RestoreOwnership",
  "DeleteRecord",
] as const satisfies readonly ActionType[];

/** Whether an action is one of the re-create's requests. */
export const isRecreateAction = (type: ActionType): boolean => (RECREATE_ACTIONS as readonly string[]).includes(type);

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
