// The playground (`claimstep serve --cluster sim[:scenario]`): the scenario's simulated cluster, its
// virtual time following the wall clock, served through the production reader and writers over a
// client of the cluster's that counts its requests.

import { countingMetrics } from "../recorded-step.js";
import type { ServeContext, ServedCluster } from "./context.js";

export async function playground(ctx: ServeContext, cluster: string): Promise<ServedCluster> {
  const { config } = ctx.settings;
  const { recorder } = ctx;
  const { scenarioName } = await import("../../adapters/sim/scenarios.js");
  const { SCENARIOS } = await import("../scenarios.js");
  const { listOptedInSets } = await import("../../adapters/kube/reader.js");
  const { uiSource } = await import("../ui/source.js");
  const sim = await SCENARIOS[scenarioName(cluster)]!.build(1);
  const { KubeReader } = await import("../../adapters/kube/reader.js");
  const { kubeWriters } = await import("../../adapters/kube/writer.js");
  const client = sim.newClient({ onRequest: recorder.apiRequest });
  const wallClock = setInterval(() => sim.advance(1000), 1000);
  return {
    deps: {
      reader: new KubeReader(client),
      writers: kubeWriters(client, { reportingInstance: "claimstep-sim" }),
      runStep: ctx.recorded,
      auth: { bearerTokens: config.bearerTokens, webhookSecrets: config.webhookSecrets, replay: ctx.replay },
      now: () => sim.now(),
      namespaces: config.namespaces,
      bodyLimitBytes: config.bodyLimitBytes,
      log: ctx.log,
      ...(config.viewers?.length
        ? { ui: { viewers: config.viewers, source: uiSource(sim.client), clock: "simulated" as const } }
        : {}),
      // Autogrow reads the simulated cluster's own Prometheus (CLAIMSTEP_PROMETHEUS_URL is not used).
      metrics: countingMetrics(sim.metrics, recorder),
    },
    listOptedIn: (ns) => listOptedInSets(client, ns),
    leaseClient: sim.client,
    stopClock: () => clearInterval(wallClock),
  };
}
