// The simulated cluster's memory over a long `serve --cluster sim` (issue 24, item 12): the
// playground's loop (the virtual clock one second on, every opted-in set stepped) run STEPS times
// without waiting, heap and RSS printed before and after (after a GC when node runs with
// --expose-gc). The loop runs far faster than real time, so the "after" figure is taken once the
// timers of its last requests (the KubeClient's 10 s request timeout, one AbortSignal.timeout
// each) have fired, as they would have long before in a real `serve`.
// Run: node --expose-gc --import tsx bench/sim-memory.ts [steps] [scenario] [--unbounded]
// (--unbounded: a request log that keeps everything, as before REQUEST_LOG_LIMIT, to compare.)

import { listOptedInSets } from "../adapters/kube/reader.js";
import { Ring } from "../adapters/sim/ring.js";
import { scenarioName } from "../adapters/sim/scenarios.js";
import { SCENARIOS } from "../functions/scenarios.js";
import { runStep } from "../functions/step.js";

const args = process.argv.slice(2).filter((a) => a !== "--unbounded");
const unbounded = process.argv.includes("--unbounded");
const steps = Number(args[0] ?? 15_000);
const scenario = scenarioName(args[1] ?? "sim");
const gc = (globalThis as { gc?: () => void }).gc;
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
const measure = () => {
  gc?.();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
};

const sim = await SCENARIOS[scenario]!.build(1);
if (unbounded) (sim.http as unknown as { log: Ring<unknown> }).log = new Ring(Number.MAX_SAFE_INTEGER);
const sets = await listOptedInSets(sim.client, undefined);
const before = measure();
for (let i = 0; i < steps; i++) {
  sim.advance(1000);
  for (const ref of sets)
    await runStep({ reader: sim.reader, writers: sim.writers, metrics: sim.metrics, ref, now: sim.now() });
}
await new Promise((resolve) => setTimeout(resolve, 11_000));
const after = measure();
const c = sim.http.counters();
console.log(
  `${unbounded ? "unbounded log: " : ""}${steps} steps of sim:${scenario} (${c.total} API requests): heap ${mb(before.heap)} -> ${mb(after.heap)}, RSS ${mb(before.rss)} -> ${mb(after.rss)}; request log holds ${sim.http.requests().length}`,
);
