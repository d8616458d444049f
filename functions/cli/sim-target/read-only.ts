// The simulated cluster for a command that only reads (`status`, `status --watch`): no lock,
// nothing saved, and each pause is real time after which the file is read again (what other
// commands saved meanwhile), as `kubectl rollout status` beside a controller.
import { listOptedInSets, listStatefulSetNames } from "../../../adapters/kube/reader.js";
import { serveClaimstepWebhook } from "../../../adapters/sim/claimstep-webhook.js";
import { SIM_SERVER } from "../../../adapters/sim/http.js";
import { admissionRoutes } from "../../routes/admission.js";
import { SCENARIOS } from "../../scenarios.js";
import type { Target } from "../target.js";
import { loadSaved, type StateFile } from "./saved.js";
import { scenarioTarget } from "./scenario-target.js";

/** A stand-in that always answers with the current value of `get()` (the cluster a watcher read last). */
const current = <T extends object>(get: () => T): T =>
  new Proxy({} as T, {
    get: (_target, key) => {
      const now = get() as Record<PropertyKey, unknown>;
      const v = now[key];
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(now) : v;
    },
  });

/** A real sleep that ends early when `signal` aborts. */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });

/** The cluster in the file (or the scenario afresh when none is saved), read again after each pause. */
export async function readOnlyTarget(state: StateFile): Promise<Target> {
  let now = loadSaved(state);
  const fresh = now ? undefined : await SCENARIOS[state.fresh]!.build(state.seed ?? 1);
  let sim = now?.sim ?? fresh!;
  const name = now?.name ?? state.fresh;
  let lastRead = state.realNow();
  return scenarioTarget(sim, name, {
    reader: current(() => sim.reader),
    writers: current(() => sim.writers),
    metrics: current(() => sim.metrics),
    api: () => ({ server: SIM_SERVER, fetch: sim.http.fetchLike }),
    listOptedIn: (namespace, selector) => listOptedInSets(sim.client, namespace, undefined, selector),
    listSets: (namespace, signal) => listStatefulSetNames(sim.client, namespace, signal),
    now: () => sim.now(),
    // A reader moves no clock: real time passes, then the file says what the cluster is now.
    pause: async (ms, signal) => {
      await sleep(ms, signal);
      now = loadSaved(state);
      if (now) {
        sim = now.sim;
        serveClaimstepWebhook(sim, admissionRoutes().fetch);
      } else {
        // Nothing saved (yet, or reset meanwhile): the scenario as it is, its clock on the wall's.
        sim.advance(Math.max(0, state.realNow() - lastRead));
      }
      lastRead = state.realNow();
    },
  });
}
