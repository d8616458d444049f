// `--cluster sim[:<scenario>]`: a scenario of the simulated cluster as a Target. A command keeps
// it in a state file (`--sim-state`, default under the user's state directory), so that `set`,
// then `run`, then `status` act on one cluster as they would on a real one; between commands its
// virtual clock moves on by the real time that passed (at most an hour), its controllers running.
// `claimstep sim reset` forgets it. `serve --cluster sim` keeps its cluster in memory.
// A command that writes holds the file's lock from before it reads until it ends (a second one is
// refused at once); a command that only reads (`status`, `status --watch`) takes no lock, never
// saves, and a watcher reads the file again at each poll, as `kubectl rollout status` beside a
// controller.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { listOptedInSets, listStatefulSetNames } from "../../adapters/kube/reader.js";
import { serveClaimstepWebhook } from "../../adapters/sim/claimstep-webhook.js";
import type { SimCluster } from "../../adapters/sim/cluster.js";
import { SIM_SERVER } from "../../adapters/sim/http.js";
import { SET } from "../../adapters/sim/scenario-names.js";
import { scenarioName } from "../../adapters/sim/scenarios.js";
import {
  checkRemovable,
  defaultSimStatePath,
  lockSimState,
  readSimState,
  removeSimState,
  writeSimState,
} from "../../adapters/sim/state-file.js";
import { admissionRoutes } from "../routes/admission.js";
import { SCENARIOS } from "../scenarios.js";
import type { Context } from "./context.js";
import { EXIT } from "./exit-codes.js";
import { type Flags, UsageError } from "./flags.js";
import { type CliIO, print } from "./io.js";
import type { Target } from "./target.js";

/** `--sim-state none`: keep nothing (the scenario starts afresh and is forgotten at exit). */
export const NO_SIM_STATE = "none";

/** The most real time one command catches up on: an old file does not jump the cluster days ahead. */
export const MAX_CATCH_UP_MS = 60 * 60_000;

const seedOf = (seed: string | undefined): number | undefined => {
  if (seed === undefined) return undefined;
  const n = Number(seed);
  if (!Number.isSafeInteger(n)) throw new UsageError(`--seed ${JSON.stringify(seed)}: expected an integer`);
  return n;
};

function targetOf(sim: SimCluster, name: string, extra: Partial<Target> = {}): Target {
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

/** The simulated cluster of a scenario as a Target, fresh and in memory (`serve --cluster sim`, tests). */
export async function simTarget(cluster: string, seed?: string): Promise<Target> {
  const name = scenarioName(cluster);
  const sim = await SCENARIOS[name]!.build(seedOf(seed) ?? 1);
  return targetOf(sim, name);
}

/** The state file `--cluster`/`--sim-state` name: undefined for `--sim-state none`. */
export function simStateFile(flags: Pick<Flags, "cluster" | "sim-state">, env: CliIO["env"]): string | undefined {
  const given = flags["sim-state"];
  if (given === NO_SIM_STATE) return undefined;
  if (given !== undefined) {
    if (!given) throw new UsageError("--sim-state: name a file (or none, to keep nothing)");
    return given;
  }
  return defaultSimStatePath(env, scenarioName(flags.cluster ?? "sim"));
}

/** The command line that forgets the cluster these flags name. */
export function resetCommand(flags: Pick<Flags, "cluster" | "sim-state">): string {
  const parts = ["claimstep sim reset"];
  if (flags.cluster && flags.cluster !== "sim") parts.push(`--cluster ${flags.cluster}`);
  if (flags["sim-state"] !== undefined) parts.push(`--sim-state ${flags["sim-state"]}`);
  return parts.join(" ");
}

export interface SimStateOptions {
  /** Real time, ms since the epoch; default Date.now (tests pass their own). */
  realNow?: () => number;
  /** The most real time a command catches up on; default MAX_CATCH_UP_MS. */
  maxCatchUpMs?: number;
  /**
   * The command only reads (`status`, `status --watch`): no lock, nothing saved, and each pause is
   * real time after which the file is read again (what other commands saved meanwhile).
   */
  readOnly?: boolean;
  /** What the command is, e.g. `run web`: named in the lock, so that a refused command says who holds it. */
  command?: string;
}

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

/**
 * `--cluster sim[:<scenario>]` for a command: the cluster saved in its state file (moved on by
 * the real time since it was saved), or the scenario afresh when there is none. The Target saves
 * it after each pause of `run` (an interrupted run keeps its progress) and, through `save`, once
 * the command ended.
 */
export async function persistentSimTarget(
  flags: Flags,
  env: CliIO["env"],
  opts: SimStateOptions = {},
): Promise<Target> {
  const cluster = flags.cluster ?? "sim";
  const file = simStateFile(flags, env);
  if (file === undefined) return simTarget(cluster, flags.seed);
  const realNow = opts.realNow ?? Date.now;
  const seed = seedOf(flags.seed);
  const asked = cluster === "sim" && flags["sim-state"] !== undefined ? undefined : scenarioName(cluster);
  const reset = resetCommand(flags);

  /** The cluster in the file, moved on by the real time since it was saved; undefined: none saved. */
  const load = () => {
    const loaded = readSimState(file, `run ${reset} to start over`);
    if (!loaded) return undefined;
    const saved = loaded.file;
    if (asked !== undefined && asked !== saved.scenario) {
      throw new UsageError(
        `${file} holds the simulated cluster of scenario ${saved.scenario}, not ${asked}: use --cluster sim:${saved.scenario}, another --sim-state, or ${reset} to start over`,
      );
    }
    if (!Object.hasOwn(SCENARIOS, saved.scenario)) {
      throw new UsageError(
        `${file} holds the simulated cluster of scenario ${JSON.stringify(saved.scenario)}, which this claimstep does not know; run ${reset} to start over`,
      );
    }
    if (seed !== undefined && seed !== saved.seed) {
      throw new UsageError(
        `--seed ${seed}: the simulated cluster in ${file} was started with seed ${saved.seed}; run ${reset} to start it over with another seed`,
      );
    }
    // Time went on while nobody looked: as much virtual time passes, the controllers acting in it.
    const elapsed = Math.min(Math.max(0, realNow() - Date.parse(saved.savedAt)), opts.maxCatchUpMs ?? MAX_CATCH_UP_MS);
    if (elapsed > 0) loaded.sim.advance(elapsed);
    return { sim: loaded.sim, name: saved.scenario, seed: saved.seed, generation: saved.generation };
  };

  if (opts.readOnly) {
    let now = load();
    const fresh = now ? undefined : await SCENARIOS[asked ?? scenarioName(cluster)]!.build(seed ?? 1);
    let sim = now?.sim ?? fresh!;
    const name = now?.name ?? asked ?? scenarioName(cluster);
    let lastRead = realNow();
    return targetOf(sim, name, {
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
        now = load();
        if (now) {
          sim = now.sim;
          serveClaimstepWebhook(sim, admissionRoutes().fetch);
        } else {
          // Nothing saved (yet, or reset meanwhile): the scenario as it is, its clock on the wall's.
          sim.advance(Math.max(0, realNow() - lastRead));
        }
        lastRead = realNow();
      },
    });
  }

  const release = lockSimState(file, opts.command ?? "a claimstep command");
  let sim: SimCluster;
  let name: string;
  let seedValue: number;
  let generation = 0;
  try {
    const loaded = load();
    if (loaded) {
      ({ sim, name, generation } = loaded);
      seedValue = loaded.seed;
    } else {
      name = asked ?? scenarioName(cluster);
      seedValue = seed ?? 1;
      sim = await SCENARIOS[name]!.build(seedValue);
    }
  } catch (err) {
    release();
    throw err;
  }

  // A save that failed was reported by the command it ended; the final save does not repeat it.
  let failed = false;
  const save = () => {
    if (failed) return;
    try {
      writeSimState(file, { scenario: name, seed: seedValue, sim, savedAt: new Date(realNow()), generation });
    } catch (err) {
      failed = true;
      throw err;
    }
    generation++;
  };
  return targetOf(sim, name, {
    pause: async (ms) => {
      sim.advance(ms);
      save();
    },
    save: async () => {
      try {
        save();
      } finally {
        release();
      }
    },
  });
}

/** `claimstep sim reset`: forget the saved simulated cluster (`--cluster sim:<scenario>`, `--sim-state`, or `--all` of them). */
export async function sim(ctx: Context): Promise<number> {
  const [sub, ...rest] = ctx.args;
  if (sub !== "reset" || rest.length) {
    throw new UsageError(
      `sim: ${sub === undefined ? "say what to do" : `unknown subcommand ${JSON.stringify([sub, ...rest].join(" "))}`}; usage: claimstep sim reset [--cluster sim:<scenario> | --sim-state <file> | --all]`,
    );
  }
  let files: string[];
  if (ctx.flags.all) {
    if (ctx.flags.cluster !== undefined || ctx.flags["sim-state"] !== undefined)
      throw new UsageError(
        "sim reset --all forgets every scenario's state in the state directory: give no --cluster or --sim-state",
      );
    const dir = join(defaultSimStatePath(ctx.io.env, "x"), "..");
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      // No state directory: nothing saved.
    }
    files = names
      .filter((n) => /^sim-.+\.json$/.test(n))
      .sort()
      .map((n) => join(dir, n));
  } else {
    if (ctx.flags.cluster !== undefined) scenarioName(ctx.flags.cluster);
    const file = simStateFile(ctx.flags, ctx.io.env);
    if (file === undefined) throw new UsageError(`sim reset: --sim-state ${NO_SIM_STATE} keeps nothing to forget`);
    files = [file];
  }
  // Every file is checked (a claimstep state file, no command using it) before any is removed.
  for (const file of files) checkRemovable(file);
  const releases: (() => void)[] = [];
  let results: { file: string; removed: boolean }[];
  try {
    for (const file of files) if (existsSync(file)) releases.push(lockSimState(file, "sim reset"));
    results = files.map((file) => ({ file, removed: removeSimState(file) }));
  } finally {
    for (const release of releases) release();
  }
  if (ctx.json) {
    print(ctx.io, JSON.stringify(ctx.flags.all ? results : results[0]));
  } else if (!results.some((r) => r.removed)) {
    print(
      ctx.io,
      ctx.flags.all
        ? "no simulated cluster saved: nothing to forget"
        : `no simulated cluster saved in ${files[0]}: nothing to forget`,
    );
  } else {
    for (const r of results.filter((x) => x.removed))
      print(ctx.io, `forgot the simulated cluster saved in ${r.file}; the next command starts its scenario afresh`);
  }
  return EXIT.ok;
}
