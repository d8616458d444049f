// A scenario's simulated cluster as the Target a command acts on, with claimstep's admission
// webhook answering in it.
import { listOptedInSets, listStatefulSetNames } from "../../../adapters/kube/reader.js";
import { serveClaimstepWebhook } from "../../../adapters/sim/claimstep-webhook.js";
import type { SimCluster } from "../../../adapters/sim/cluster.js";
import { SIM_SERVER } from "../../../adapters/sim/http.js";
import { SET } from "../../../adapters/sim/scenario-names.js";
import { admissionRoutes } from "../../routes/admission.js";
import { SCENARIOS } from "../../scenarios.js";
import type { Target } from "../target.js";

/** `sim` of scenario `name` as a Target; `extra` replaces its parts (a saved cluster's pause, a watcher's reader). */
export function scenarioTarget(sim: SimCluster, name: string, extra: Partial<Target> = {}): Target {
  const scenario = SCENARIOS[name]!;
  // claimstep's admission route answers the webhook Service (a saved cluster keeps the configuration, not the server).
  serveClaimstepWebhook(sim, admissionRoutes().fetch);
  return {
    label: `simulated cluster (${name})`,
    story: {
      name,
      summary: scenario.summary,
      lesson: scenario.lesson,
      // The set as the scenario builds it (cheap: a few ms), for run to tell whether its story still holds.
      initial: async () => (await (await scenario.build()).reader.load(SET)).statefulSet,
    },
    namespace: "default",
    reader: sim.reader,
    writers: sim.writers,
    // Autogrow reads the simulated cluster's own Prometheus (its kubelets' volume stats).
    metrics: sim.metrics,
    api: () => ({ server: SIM_SERVER, fetch: sim.http.fetchLike }),
    // As on a real cluster: the opted-in sets and the sets of re-create records (one deleted mid re-create).
    listOptedIn: (namespace, selector) => listOptedInSets(sim.client, namespace, undefined, selector),
    listSets: (namespace, signal) => listStatefulSetNames(sim.client, namespace, signal),
    now: () => sim.now(),
    pause: async (ms) => sim.advance(ms),
    // Virtual time passes at once: slow the terminal view down enough to watch the rollout.
    frameMs: 120,
    ...extra,
  };
}
