// A scenario's simulated cluster kept by a CLI test and offered to `main` as its Target, with the
// few views of it the tests assert on.

import type { SimCluster } from "../../adapters/sim/cluster.js";
import type { Target } from "../../functions/cli.js";
import { SCENARIOS } from "../../functions/scenarios.js";
import { runStep } from "../../functions/step.js";

const ref = { namespace: "default", name: "web" };

/** `onPause` runs in each pause of `run`/`status -w`, after virtual time moved (e.g. a controller's step). */
export async function simOf(scenario: string, onPause?: (sim: SimCluster) => Promise<void>) {
  const sim = await SCENARIOS[scenario]!.build();
  const target: Target = {
    label: `sim ${scenario}`,
    namespace: "default",
    reader: sim.reader,
    writers: sim.writers,
    listOptedIn: async () => [ref],
    now: () => sim.now(),
    pause: async (ms) => {
      sim.advance(ms);
      await onPause?.(sim);
    },
  };
  /** Requests claimstep made that reached the store (writes and refusals). */
  const writes = () => sim.audit.filter((e) => e.actor === "claimstep").length;
  // Typed loosely, as the tests read keys they just wrote.
  const annotations = async (): Promise<Record<string, any>> =>
    ((await sim.admin.get("statefulsets", ref.namespace, ref.name)) as any).metadata.annotations ?? {};
  const step = () => runStep({ reader: sim.reader, writers: sim.writers, ref, now: sim.now() });
  return { sim, target, connect: async () => target, writes, claimstepWrites: writes, annotations, step };
}
