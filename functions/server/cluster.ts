// The cluster `claimstep serve` acts on: the playground's simulated one (--cluster sim[:scenario])
// or a real one; a test's shorter R3 charge (CLAIMSTEP_BUDGET_CHARGE_SECONDS) given to its pod writer.
import type { ServeContext, ServedCluster } from "./context.js";
import { kubeCluster } from "./kube-cluster.js";
import { playground } from "./playground.js";

export async function servedCluster(ctx: ServeContext): Promise<ServedCluster> {
  const cluster = ctx.opts.cluster ? await playground(ctx, ctx.opts.cluster) : await kubeCluster(ctx);
  const { chargeSeconds } = ctx.settings;
  if (chargeSeconds && cluster.deps.writers.pods)
    Object.assign(cluster.deps.writers.pods, { budgetChargeSeconds: chargeSeconds });
  return cluster;
}
