// Ready-made simulated clusters for `--cluster sim[:scenario]`: try claimstep (and test the CLI)
// without a cluster. Each holds StatefulSet `web` (3 replicas, claim template `data`, 1Gi) in
// namespace `default`.
import { Keys } from "../core/types.js";
import { SimCluster, claimTemplate, statefulSetManifest, type SetSpec } from "../adapters/sim/cluster.js";

export interface Scenario {
  summary: string;
  build(): Promise<SimCluster>;
}

const base: SetSpec = { name: "web", replicas: 3, templates: [{ name: "data", storage: "1Gi", storageClassName: "fast" }] };

/** A cluster with class `fast` (set up by `classes`) and `web`, desiring `desired` when given. */
async function cluster(
  classes: (sim: SimCluster) => Promise<void>,
  opts: { strategy?: string; desired?: SetSpec["templates"] } = {},
): Promise<SimCluster> {
  const sim = new SimCluster();
  await classes(sim);
  const manifest = statefulSetManifest({ ...base, ...(opts.strategy ? { strategy: opts.strategy } : {}) }) as any;
  if (opts.desired) manifest.metadata.annotations[Keys.templates] = JSON.stringify(opts.desired.map(claimTemplate));
  await sim.createStatefulSet(manifest);
  return sim;
}

const grown = (extra: Partial<SetSpec["templates"][number]> = {}) => [{ name: "data", storage: "2Gi", storageClassName: "fast", ...extra }];

export const SCENARIOS: Record<string, Scenario> = {
  grow: {
    summary: "web desires data 1Gi → 2Gi on an expandable class: a rollout that completes",
    build: () => cluster((sim) => sim.addStorageClass("fast", { allowVolumeExpansion: true }), { desired: grown() }),
  },
  vac: {
    summary: "web desires data 2Gi with VolumeAttributesClass gold",
    build: () =>
      cluster(
        async (sim) => {
          await sim.addStorageClass("fast", { allowVolumeExpansion: true });
          await sim.addVolumeAttributesClass("gold", { iops: "6000" });
        },
        { desired: grown({ volumeAttributesClassName: "gold" }) },
      ),
  },
  blocked: {
    summary: "web desires 2Gi but its class does not allow expansion: Blocked/ExpansionNotAllowed",
    build: () => cluster((sim) => sim.addStorageClass("fast", { allowVolumeExpansion: false }), { desired: grown() }),
  },
  infeasible: {
    summary: "the driver rejects the expansion: Blocked/ResizeFailed after the first claim",
    build: () => cluster((sim) => sim.addStorageClass("fast", { allowVolumeExpansion: true, driver: { resize: "infeasible" } }), { desired: grown() }),
  },
  "opted-out": {
    summary: "web is not opted in and desires nothing: try `claimstep set web data --storage 2Gi --cluster sim:opted-out`",
    build: () => cluster((sim) => sim.addStorageClass("fast", { allowVolumeExpansion: true }), { strategy: "OnClaimDelete" }),
  },
};

export const DEFAULT_SCENARIO = "grow";

/** `sim` or `sim:<scenario>` → the scenario's name; throws listing the scenarios for anything else. */
export function scenarioName(cluster: string): string {
  const m = /^sim(?::(.+))?$/.exec(cluster);
  const name = m ? (m[1] ?? DEFAULT_SCENARIO) : undefined;
  if (!name || !SCENARIOS[name]) {
    throw new Error(`unknown --cluster ${JSON.stringify(cluster)}: use sim or sim:<scenario>, with scenario one of ${Object.keys(SCENARIOS).join(", ")}`);
  }
  return name;
}
