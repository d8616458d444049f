// `--cluster sim[:<scenario>]`: a scenario of the simulated cluster as a Target.
import { SCENARIOS, scenarioName } from "../../adapters/sim/scenarios.js";
import { isOptedIn } from "../../core/statefulset.js";
import { UsageError, type Target } from "./context.js";

/** The simulated cluster of a scenario as a Target. */
export async function simTarget(cluster: string, seed?: string): Promise<Target> {
  const name = scenarioName(cluster);
  const seedValue = seed === undefined ? 1 : Number(seed);
  if (!Number.isSafeInteger(seedValue)) throw new UsageError(`--seed ${JSON.stringify(seed)}: expected an integer`);
  const scenario = SCENARIOS[name]!;
  const sim = await scenario.build(seedValue);
  return {
    label: `simulated cluster (${name})`,
    story: { name, summary: scenario.summary, lesson: scenario.lesson },
    namespace: "default",
    reader: sim.reader,
    writers: sim.writers,
    async listOptedIn(namespace) {
      const list = await sim.admin.list("statefulsets", namespace);
      return list.items
        .filter((s: any) => isOptedIn(s))
        .map((s: any) => ({ namespace: s.metadata.namespace, name: s.metadata.name }));
    },
    now: () => sim.now(),
    pause: async (ms) => sim.advance(ms),
    // Virtual time passes at once: slow the terminal view down enough to watch the rollout.
    frameMs: 120,
  };
}
