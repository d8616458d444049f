// A GitOps rollout on the simulated cluster, as the rollout tests stand it up: set prod/db (3
// replicas, StorageClass fast) with claimstep's annotations applied by a GitOps tool, the step
// runner writing claims through the forge's pull requests, and the webhook routes that step it.
import { writerFor } from "../../adapters/gitops/apply-via.js";
import { pullRequestWriter } from "../../adapters/gitops/writer.js";
import { SimCluster, statefulSetManifest } from "../../adapters/sim/cluster.js";
import type { MetricsReader } from "../../core/ports.js";
import type { SetRef } from "../../core/types.js";
import { gitopsWebhookRoutes } from "../../functions/routes/gitops-webhooks.js";
import { runStep, type StepResult } from "../../functions/step.js";
import { WEBHOOK_SECRET } from "./forge.js";

/** The set every GitOps rollout test steps. */
export const ROLLOUT_REF: SetRef = { namespace: "prod", name: "db" };

/** The field manager of the GitOps tool (Argo CD) applying what was merged. */
export const ARGO = "argocd-controller";

export type RolloutTemplate = { name: string; storage: string; storageClassName: string };

/** Set prod/db's manifest as first created: 3 replicas, these live templates. */
export const rolloutManifest = (templates: readonly RolloutTemplate[]) =>
  statefulSetManifest({ name: "db", namespace: "prod", replicas: 3, templates: [...templates] });

/**
 * The simulated cluster (`seed`) with StorageClass fast (expandable) and set prod/db on the live
 * `templates`, then `annotations` merged onto it by `fieldManager` (the GitOps tool, or a person).
 */
export async function rolloutCluster(o: {
  seed: number;
  templates: readonly RolloutTemplate[];
  annotations: Record<string, string>;
  fieldManager?: string;
}): Promise<SimCluster> {
  const c = new SimCluster({ seed: o.seed });
  await c.addStorageClass("fast", { allowVolumeExpansion: true });
  await c.createStatefulSet(rolloutManifest(o.templates));
  await c.admin.mergePatch(
    "statefulsets",
    "prod",
    "db",
    { metadata: { annotations: o.annotations } },
    { fieldManager: o.fieldManager ?? ARGO },
  );
  return c;
}

/**
 * The step as cron and the webhooks run it: the sim's writers with claims going through the
 * pull-request writer of `forgeConfig` where the set asks for it, and the forge webhook routes.
 */
export function gitopsStepper(
  sim: SimCluster,
  forgeConfig: Record<string, unknown>,
  opts: { metrics?: MetricsReader } = {},
) {
  const writers = {
    ...sim.writers,
    claims: writerFor({ direct: sim.writers.claims, pullRequest: pullRequestWriter(forgeConfig) }),
  };
  const step = (ref: SetRef): Promise<StepResult> =>
    runStep({ reader: sim.reader, writers, ref, now: sim.now(), ...(opts.metrics ? { metrics: opts.metrics } : {}) });
  const routes = gitopsWebhookRoutes({ github: { secret: WEBHOOK_SECRET }, gitlab: { token: WEBHOOK_SECRET }, step });
  return { writers, step, routes };
}
