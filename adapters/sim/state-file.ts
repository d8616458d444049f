// The simulated cluster kept in a file between commands (`--cluster sim`): where the file lives,
// its format, and reading and writing it. A write goes to a temporary file renamed over the old
// one, so a crash never leaves half a file; a write refuses to replace a file another command
// saved since this one read it (the `generation` counter), rather than losing that command's work.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { SimCluster } from "./cluster.js";
import type { SimClusterState } from "./state.js";

/** Bumped whenever the file's shape changes in a way an older claimstep cannot read. */
export const SIM_STATE_FILE_VERSION = 1;
const FORMAT = "claimstep/sim-state";

export interface SimStateFile {
  format: typeof FORMAT;
  version: typeof SIM_STATE_FILE_VERSION;
  /** The scenario the cluster was built from (`--cluster sim:<scenario>`). */
  scenario: string;
  /** `--seed` it was built with. */
  seed: number;
  /** Real time of the write (ISO 8601): the next command advances the virtual clock by the time since. */
  savedAt: string;
  /** The virtual time then, for a person reading the file (the clock in `cluster` is what counts). */
  virtualTime: string;
  /** Writes so far: a write expects the file still to hold the generation it read. */
  generation: number;
  cluster: SimClusterState;
}

/** A state file that cannot be used: names the file and what to do about it. */
export class SimStateError extends Error {
  override readonly name = "SimStateError";
  constructor(
    readonly file: string,
    problem: string,
    remedy?: string,
  ) {
    super(`${file}: ${problem}${remedy ? `; ${remedy}` : ""}`);
  }
}

/**
 * `$XDG_STATE_HOME/claimstep/sim-<scenario>.json`, else `~/.local/state/claimstep/…` (the XDG
 * default), `~` being `$HOME` or the account's home directory.
 */
export function defaultSimStatePath(env: Record<string, string | undefined>, scenario: string): string {
  const xdg = env.XDG_STATE_HOME;
  // The XDG spec: a relative path is invalid and is ignored.
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), ".local", "state");
  return join(base, "claimstep", `sim-${scenario}.json`);
}

const errorCode = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

/**
 * The file's contents with the cluster rebuilt from them, or undefined when there is no file.
 * `remedy` ends every error (how to start over, e.g. the `claimstep sim reset` command line).
 */
export function readSimState(file: string, remedy: string): { file: SimStateFile; sim: SimCluster } | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if (errorCode(err) === "ENOENT") return undefined;
    throw new SimStateError(file, `cannot read the simulated cluster's state (${(err as Error).message})`, remedy);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SimStateError(file, `the simulated cluster's state is not valid JSON (${(err as Error).message})`, remedy);
  }
  const f = json as Partial<SimStateFile> | null;
  if (typeof f !== "object" || f === null || Array.isArray(f) || f.format !== FORMAT) {
    throw new SimStateError(file, `not a claimstep simulated-cluster state file (no "format": "${FORMAT}")`, remedy);
  }
  if (f.version !== SIM_STATE_FILE_VERSION) {
    throw new SimStateError(file, `simulated-cluster state of version ${JSON.stringify(f.version)}, and this claimstep reads version ${SIM_STATE_FILE_VERSION}`, remedy);
  }
  if (typeof f.scenario !== "string" || !Number.isSafeInteger(f.seed) || !Number.isFinite(Date.parse(String(f.savedAt))) || !Number.isSafeInteger(f.generation)) {
    throw new SimStateError(file, "the simulated cluster's state is damaged (scenario, seed, savedAt or generation missing)", remedy);
  }
  let sim: SimCluster;
  try {
    sim = SimCluster.restore(f.cluster);
  } catch (err) {
    throw new SimStateError(file, `the simulated cluster's state is damaged (${(err as Error).message})`, remedy);
  }
  return { file: f as SimStateFile, sim };
}

/** The generation a file holds now: 0 when there is none; undefined when it cannot be read as state. */
function generationOf(file: string): number | undefined {
  try {
    const g = (JSON.parse(readFileSync(file, "utf8")) as Partial<SimStateFile>).generation;
    return Number.isSafeInteger(g) ? g : undefined;
  } catch (err) {
    return errorCode(err) === "ENOENT" ? 0 : undefined;
  }
}

export interface WriteSimState {
  scenario: string;
  seed: number;
  sim: SimCluster;
  /** Real time of the write. */
  savedAt: Date;
  /** The generation read (0 for a cluster this command started): the file must still hold it. */
  generation: number;
}

/** Save a cluster: to `<file>.<pid>.tmp`, then renamed over `file` (its directory created if need be). */
export function writeSimState(file: string, w: WriteSimState): void {
  const current = generationOf(file);
  if (current !== undefined && current !== w.generation) {
    throw new SimStateError(
      file,
      current === 0
        ? "the simulated cluster was reset while this command ran, so what it did there is not saved"
        : "another claimstep command saved the simulated cluster while this one ran, so what this one did there is not saved (one command at a time per state file)",
      "run the command again",
    );
  }
  const content: SimStateFile = {
    format: FORMAT,
    version: SIM_STATE_FILE_VERSION,
    scenario: w.scenario,
    seed: w.seed,
    savedAt: w.savedAt.toISOString(),
    virtualTime: w.sim.now().toISOString(),
    generation: w.generation + 1,
    cluster: w.sim.toJSON(),
  };
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(tmp, `${JSON.stringify(content)}\n`, { mode: 0o600 });
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new SimStateError(file, `cannot save the simulated cluster's state (${(err as Error).message})`);
  }
}

/** Forget a saved cluster: true when there was a file to remove. */
export function removeSimState(file: string): boolean {
  try {
    rmSync(file);
    return true;
  } catch (err) {
    if (errorCode(err) === "ENOENT") return false;
    throw err;
  }
}
