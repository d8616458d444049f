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
import { scenarioName } from "../../adapters/sim/scenarios.js";
import { checkRemovable, defaultSimStatePath, lockSimState, removeSimState } from "../../adapters/sim/state-file.js";
import { SCENARIOS } from "../scenarios.js";
import type { Context } from "./context.js";
import { EXIT } from "./exit-codes.js";
import { type Flags, UsageError } from "./flags.js";
import { type CliIO, print } from "./io.js";
import { lockedTarget } from "./sim-target/locked.js";
import { readOnlyTarget } from "./sim-target/read-only.js";
import type { StateFile } from "./sim-target/saved.js";
import { scenarioTarget } from "./sim-target/scenario-target.js";
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

/** The simulated cluster of a scenario as a Target, fresh and in memory (`serve --cluster sim`, tests). */
export async function simTarget(cluster: string, seed?: string): Promise<Target> {
  const name = scenarioName(cluster);
  const sim = await SCENARIOS[name]!.build(seedOf(seed) ?? 1);
  return scenarioTarget(sim, name);
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
  // `--cluster sim` with a --sim-state: whichever scenario the file holds.
  const asked = cluster === "sim" && flags["sim-state"] !== undefined ? undefined : scenarioName(cluster);
  const state: StateFile = {
    file,
    realNow,
    seed,
    asked,
    fresh: asked ?? scenarioName(cluster),
    reset: resetCommand(flags),
    maxCatchUpMs: opts.maxCatchUpMs ?? MAX_CATCH_UP_MS,
  };
  if (opts.readOnly) return readOnlyTarget(state);
  return lockedTarget(state, opts.command ?? "a claimstep command");
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
