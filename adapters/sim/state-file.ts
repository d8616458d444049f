// The simulated cluster kept in a file between commands (`--cluster sim`): where the file lives,
// its format, and reading and writing it. A write goes to a temporary file renamed over the old
// one, so a crash never leaves half a file; a write refuses to replace a file another command
// saved since this one read it (the `generation` counter), rather than losing that command's work.
// A command that writes holds `<file>.lock` from before it reads until it ends (`lockSimState`): a
// second writer is refused at once, before it did anything; readers take no lock. Only a file that
// carries the format marker is ever replaced or removed: `--sim-state ~/.kube/config` is refused.
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { homedir, hostname } from "node:os";
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

/** The marker claimstep's writer puts first in every state file. */
const MARKER = /"format"\s*:\s*"claimstep\/sim-state"/;
/** Where the marker is looked for: the writer puts it in the first bytes. */
const MARKER_BYTES = 4096;

/** What to say about a file claimstep did not write (never: run sim reset on it). */
const FOREIGN = `not a claimstep simulated-cluster state file (no "format": "${FORMAT}")`;
const FOREIGN_REMEDY =
  "claimstep neither reads, replaces nor removes it: give --sim-state a file of its own (claimstep creates it), or none";

/**
 * A file claimstep wrote (or an empty one): the marker in its first bytes, even if the rest is
 * damaged; or JSON whose `format` is the marker. False when the file is absent.
 */
export function isSimStateFile(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (err) {
    if (errorCode(err) === "ENOENT") return false;
    throw err;
  }
  try {
    const head = Buffer.alloc(MARKER_BYTES);
    const n = readSync(fd, head, 0, MARKER_BYTES, 0);
    const text = head.subarray(0, n).toString("utf8");
    if (MARKER.test(text)) return true;
    if (n < MARKER_BYTES) return text.trim() === "";
  } finally {
    closeSync(fd);
  }
  // A longer file without the marker up front: JSON whose keys someone reordered, at most.
  if (statSync(file).size > 64 * 1024 * 1024) return false;
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as Partial<SimStateFile> | null)?.format === FORMAT;
  } catch {
    return false;
  }
}

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
  // An empty file (\`touch\`ed for --sim-state): nothing saved yet.
  if (text.trim() === "") return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    // Cut short or garbled, but claimstep's own: sim reset may remove it. Anything else is not ours.
    if (!MARKER.test(text.slice(0, MARKER_BYTES))) throw new SimStateError(file, FOREIGN, FOREIGN_REMEDY);
    throw new SimStateError(
      file,
      `the simulated cluster's state is not valid JSON (${(err as Error).message})`,
      remedy,
    );
  }
  const f = json as Partial<SimStateFile> | null;
  if (typeof f !== "object" || f === null || Array.isArray(f) || f.format !== FORMAT) {
    throw new SimStateError(file, FOREIGN, FOREIGN_REMEDY);
  }
  if (f.version !== SIM_STATE_FILE_VERSION) {
    throw new SimStateError(
      file,
      `simulated-cluster state of version ${JSON.stringify(f.version)}, and this claimstep reads version ${SIM_STATE_FILE_VERSION}`,
      remedy,
    );
  }
  if (
    typeof f.scenario !== "string" ||
    !Number.isSafeInteger(f.seed) ||
    !Number.isFinite(Date.parse(String(f.savedAt))) ||
    !Number.isSafeInteger(f.generation)
  ) {
    throw new SimStateError(
      file,
      "the simulated cluster's state is damaged (scenario, seed, savedAt or generation missing)",
      remedy,
    );
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
  if (fileExists(file) && !isSimStateFile(file)) throw new SimStateError(file, FOREIGN, FOREIGN_REMEDY);
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

const fileExists = (file: string): boolean => {
  try {
    statSync(file);
    return true;
  } catch (err) {
    if (errorCode(err) === "ENOENT") return false;
    throw err;
  }
};

/**
 * Refuses a file that is there and is not a claimstep state file (`sim reset` checks every file
 * first, so that it removes nothing when one of them is foreign).
 */
export function checkRemovable(file: string): void {
  if (fileExists(file) && !isSimStateFile(file)) {
    throw new SimStateError(
      file,
      FOREIGN,
      "claimstep sim reset removes only the files claimstep wrote, and left this one as it was",
    );
  }
}

/** Forget a saved cluster: true when there was a file to remove. Only a claimstep state file is removed. */
export function removeSimState(file: string): boolean {
  checkRemovable(file);
  try {
    rmSync(file);
    return true;
  } catch (err) {
    if (errorCode(err) === "ENOENT") return false;
    throw err;
  }
}

const LOCK_FORMAT = "claimstep/sim-state-lock";
/** A lock file that cannot be read yet is taken for one being written this long, then for litter. */
const UNREADABLE_LOCK_GRACE_MS = 10_000;

interface LockInfo {
  format: typeof LOCK_FORMAT;
  pid: number;
  hostname: string;
  /** What holds it, e.g. `run web`. */
  command: string;
  since: string;
}

function lockHolder(lock: string): LockInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(lock, "utf8")) as Partial<LockInfo> | null;
    return info?.format === LOCK_FORMAT && Number.isSafeInteger(info.pid) ? (info as LockInfo) : undefined;
  } catch {
    return undefined;
  }
}

/** The holder's process still runs (on another host: taken to, as nothing here can tell). */
function alive(holder: LockInfo): boolean {
  if (holder.hostname !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (err) {
    return errorCode(err) === "EPERM";
  }
}

/**
 * Hold `<file>.lock` while a command that writes the state runs: the release function removes it
 * (also at process exit). Another live command's lock is an error naming it and the file; a lock
 * whose process is gone (killed, crashed) is taken over.
 */
export function lockSimState(file: string, command: string): () => void {
  const lock = `${file}.lock`;
  const info: LockInfo = {
    format: LOCK_FORMAT,
    pid: process.pid,
    hostname: hostname(),
    command,
    since: new Date().toISOString(),
  };
  const content = `${JSON.stringify(info)}\n`;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new SimStateError(file, `cannot lock the simulated cluster's state (${(err as Error).message})`);
  }
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(lock, "wx", 0o600);
    } catch (err) {
      if (errorCode(err) !== "EEXIST" || attempt >= 2)
        throw new SimStateError(file, `cannot lock the simulated cluster's state (${(err as Error).message})`);
      const holder = lockHolder(lock);
      if (holder && alive(holder)) {
        throw new SimStateError(
          file,
          `another claimstep command (${holder.command}, pid ${holder.pid}${holder.hostname !== hostname() ? ` on ${holder.hostname}` : ""}) is using the simulated cluster, so this one did nothing`,
          "run it again once that one ended (status --watch follows the cluster meanwhile), or give it another --sim-state",
        );
      }
      if (!holder) {
        let age = Infinity;
        try {
          age = Date.now() - statSync(lock).mtimeMs;
        } catch {
          // Gone meanwhile: try again.
        }
        if (age < UNREADABLE_LOCK_GRACE_MS)
          throw new SimStateError(
            file,
            "another claimstep command is taking the simulated cluster, so this one did nothing",
            "run it again in a moment",
          );
      }
      // Its process is gone: the lock is litter.
      rmSync(lock, { force: true });
      continue;
    }
    try {
      writeSync(fd, content);
    } finally {
      closeSync(fd);
    }
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      process.off("exit", release);
      try {
        if (readFileSync(lock, "utf8") === content) rmSync(lock, { force: true });
      } catch {
        // Already gone.
      }
    };
    process.on("exit", release);
    return release;
  }
}
