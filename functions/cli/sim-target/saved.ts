// The simulated cluster a state file keeps between commands (`--sim-state`): read back, checked
// against what the command asks for, and moved on by the real time since it was saved.
import type { SimCluster } from "../../../adapters/sim/cluster.js";
import type { ScenarioName } from "../../../adapters/sim/scenario-names.js";
import { readSimState, type SimStateFile } from "../../../adapters/sim/state-file.js";
import { SCENARIOS } from "../../scenarios.js";
import { UsageError } from "../flags.js";

/** A command's state file: where it is, and what the command asks of the cluster in it. */
export interface StateFile {
  file: string;
  /** Real time, ms since the epoch. */
  realNow: () => number;
  /** --seed; undefined: the file's, or 1 for a new cluster. */
  seed: number | undefined;
  /** The scenario --cluster names; undefined: whichever the file holds (`--cluster sim` with `--sim-state`). */
  asked: ScenarioName | undefined;
  /** The scenario built when the file holds none. */
  fresh: ScenarioName;
  /** The command line that forgets the file, for the errors to offer. */
  reset: string;
  /** The most real time one command catches up on. */
  maxCatchUpMs: number;
}

/** A cluster read back from the file, with what it was saved with. */
export interface SavedCluster {
  sim: SimCluster;
  name: string;
  seed: number;
  generation: number;
}

/** The cluster in the file, moved on by the real time since it was saved; undefined: none saved. */
export function loadSaved(state: StateFile): SavedCluster | undefined {
  const loaded = readSimState(state.file, `run ${state.reset} to start over`);
  if (!loaded) return undefined;
  const saved = loaded.file;
  checkSaved(state, saved);
  // Time went on while nobody looked: as much virtual time passes, the controllers acting in it.
  const elapsed = Math.min(Math.max(0, state.realNow() - Date.parse(saved.savedAt)), state.maxCatchUpMs);
  if (elapsed > 0) loaded.sim.advance(elapsed);
  return { sim: loaded.sim, name: saved.scenario, seed: saved.seed, generation: saved.generation };
}

/** Refused: a file that holds another scenario than --cluster asks, one this claimstep does not know, another --seed. */
function checkSaved({ file, asked, seed, reset }: StateFile, saved: SimStateFile): void {
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
}
