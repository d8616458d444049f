// The simulated cluster for a command that writes: the file's lock held from before it reads until
// the command ends (a second one is refused at once), the cluster saved after each pause of `run`
// (an interrupted run keeps its progress) and once the command ended.
import type { SimCluster } from "../../../adapters/sim/cluster.js";
import { lockSimState, writeSimState } from "../../../adapters/sim/state-file.js";
import { SCENARIOS } from "../../scenarios.js";
import type { Target } from "../target.js";
import { loadSaved, type SavedCluster, type StateFile } from "./saved.js";
import { scenarioTarget } from "./scenario-target.js";

/** The cluster in the file, or the scenario afresh; `command` (e.g. `run web`) is named in the lock. */
export async function lockedTarget(state: StateFile, command: string): Promise<Target> {
  const release = lockSimState(state.file, command);
  let opened: SavedCluster;
  try {
    opened = await loadOrBuild(state);
  } catch (err) {
    release();
    throw err;
  }
  const { sim } = opened;
  const save = saver(state, opened);
  return scenarioTarget(sim, opened.name, {
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

/** The cluster saved in the file; none saved: the scenario built, generation 0. */
async function loadOrBuild(state: StateFile): Promise<SavedCluster> {
  const loaded = loadSaved(state);
  if (loaded) return loaded;
  const seed = state.seed ?? 1;
  const sim: SimCluster = await SCENARIOS[state.fresh]!.build(seed);
  return { sim, name: state.fresh, seed, generation: 0 };
}

/** Saves `opened` into the file, each save one generation on. */
function saver(state: StateFile, opened: SavedCluster): () => void {
  const { sim, name, seed } = opened;
  let { generation } = opened;
  // A save that failed was reported by the command it ended; the final save does not repeat it.
  let failed = false;
  return () => {
    if (failed) return;
    try {
      writeSimState(state.file, { scenario: name, seed, sim, savedAt: new Date(state.realNow()), generation });
    } catch (err) {
      failed = true;
      throw err;
    }
    generation++;
  };
}
