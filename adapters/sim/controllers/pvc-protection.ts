// The PVC protection controller: a claim deleted while a pod mounted it keeps its
// deletionTimestamp until no pod uses it, then its finalizer goes and the claim with it.
import { type ControllerContext, podsUsing } from "./context.js";

const CONTROLLER = "pvc-protection-controller";

export function syncClaimProtection(ctx: ControllerContext): void {
  for (const pvc of ctx.store.all("persistentvolumeclaims")) {
    const m = pvc.metadata as { name: string; namespace?: string; deletionTimestamp?: string };
    if (!m.deletionTimestamp) continue;
    if (podsUsing(ctx, pvc as never).length) continue;
    ctx.store.remove("persistentvolumeclaims", m.namespace, m.name, CONTROLLER);
  }
}
