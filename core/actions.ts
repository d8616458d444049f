// What every interface says of an action: the object it writes and a one-line summary.
import type { Action } from "./types.js";

/** The name of the object an action writes: the claim, the StatefulSet or the pod. */
export function actionTarget(action: Action): string {
  switch (action.type) {
    case "PatchClaim":
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
    case "ProposeRecreate":
    case "RaiseTemplate":
      return action.set;
  }
}

/** `PatchClaim default/data-web-2 storage=2Gi`, `PatchPartition default/web partition 5→4`, `EvictPod default/web-4 (data-web-4)`. */
export function describeAction(action: Action): string {
  const where = `${action.namespace}/${actionTarget(action)}`;
  switch (action.type) {
    case "PatchClaim":
      return `${action.type} ${where} storage=${action.storage}${action.volumeAttributesClassName ? ` volumeAttributesClassName=${action.volumeAttributesClassName}` : ""}`;
    case "PatchPartition":
      return `${action.type} ${where} partition ${action.from}→${action.partition}${action.userPartition === null ? " (restores yours)" : action.userPartition !== undefined ? ` (records yours, ${action.userPartition})` : ""}`;
    case "EvictPod":
      return `${action.type} ${where} (for ${action.claim})`;
    case "OrphanSet":
      return `${action.type} ${where} (DELETE, propagationPolicy Orphan, uid ${action.uid})`;
    case "RaiseTemplate":
      return `${action.type} ${where} template ${action.template} ${action.from}→${action.to}`;
    default:
      return `${action.type} ${where}`;
  }
}
