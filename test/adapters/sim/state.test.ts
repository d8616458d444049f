// The simulated cluster saved and restored (SimCluster.toJSON / SimCluster.restore) and kept in a
// file between commands (state-file.ts): a cluster restored mid-rollout ends exactly where one
// never saved does; damaged, foreign and future files are clear errors naming the file.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError } from "../../../adapters/api-error.js";
import { KubeReader } from "../../../adapters/kube/reader.js";
import { kubeWriters } from "../../../adapters/kube/writer.js";
import { SimCluster } from "../../../adapters/sim/cluster.js";
import { SIM_CLUSTER_STATE_VERSION } from "../../../adapters/sim/state.js";
import {
  defaultSimStatePath,
  isSimStateFile,
  readSimState,
  removeSimState,
  SimStateError,
  writeSimState,
} from "../../../adapters/sim/state-file.js";
import { RESOURCES, type Resource } from "../../../adapters/sim/store.js";
import { SCENARIOS } from "../../../functions/scenarios.js";
import { runStep } from "../../../functions/step.js";

const ref = { namespace: "default", name: "web" };

/**
 * Steps claimstep `n` times (or to the end), 5 s of virtual time apart; the phases seen. Each drive
 * is a new claimstep process: a new client and writers (the event recorder remembers series).
 */
async function drive(sim: SimCluster, n = Infinity): Promise<string[]> {
  const client = sim.newClient();
  const reader = new KubeReader(client);
  const writers = kubeWriters(client, { reportingInstance: "claimstep-sim" });
  const phases: string[] = [];
  for (let i = 0; i < n && i < 200; i++) {
    let decision;
    try {
      ({ decision } = await runStep({ reader, writers, ref, now: sim.now() }));
    } catch (err) {
      // The set could not be read through injected faults: as `claimstep run`, try again later.
      if (!(err instanceof ApiError && err.isTransient)) throw err;
      phases.push(`error/${err.code}`);
      sim.advance(5_000);
      continue;
    }
    phases.push(`${decision.phase}/${decision.reason}`);
    if (decision.phase === "Complete" || decision.phase === "Blocked") break;
    sim.advance(5_000);
  }
  return phases;
}

/** Every object as the API server shows it (resourceVersion, uid, managedFields included). */
const everything = (sim: SimCluster) =>
  Object.fromEntries((Object.keys(RESOURCES) as Resource[]).map((r) => [r, sim.list(r)]));

const saved = (sim: SimCluster) => SimCluster.restore(JSON.parse(JSON.stringify(sim)));

describe("SimCluster.toJSON / SimCluster.restore", () => {
  it.each(["grow", "flaky-api", "quota"])(
    "%s: a cluster restored mid-rollout continues to the same end as one never saved",
    async (scenario) => {
      const kept = await SCENARIOS[scenario]!.build(5);
      await drive(kept, 4);
      // Mid-rollout: controllers have timers running and wake-ups pending.
      const state = JSON.parse(JSON.stringify(kept));
      expect(state.version).toBe(SIM_CLUSTER_STATE_VERSION);
      expect(state.clock.wakes.length).toBeGreaterThan(0);
      const restored = SimCluster.restore(state);
      expect(restored.toJSON()).toEqual(kept.toJSON());

      const phasesKept = await drive(kept);
      const phasesRestored = await drive(restored);
      expect(phasesRestored).toEqual(phasesKept);
      expect(phasesKept.at(-1)).toMatch(scenario === "quota" ? /^Blocked\/QuotaExceeded$/ : /^Complete\//);
      expect(restored.now()).toEqual(kept.now());
      expect(everything(restored)).toEqual(everything(kept));
      expect(restored.toJSON()).toEqual(kept.toJSON());
      // The PRNGs went on alike: the next generated names match.
      expect(restored.store.generateName("x-")).toBe(kept.store.generateName("x-"));
    },
  );

  it("keeps field owners, the revision counter, drivers, latencies, the fault plan and the volumes", async () => {
    const sim = await SCENARIOS["flaky-api"]!.build(3);
    await drive(sim, 3);
    const back = saved(sim);
    const pvc = back.get("persistentvolumeclaims", "default", "data-web-2")!;
    expect(pvc).toEqual(sim.get("persistentvolumeclaims", "default", "data-web-2"));
    expect(pvc.metadata.managedFields.map((m: { manager: string }) => m.manager)).toContain("claimstep");
    const json = back.toJSON();
    expect(json.faults.plan).toMatchObject({ tooManyRequests: 0.05, retryAfterSeconds: 2 });
    expect(json.drivers.fast).toMatchObject({ resize: "flaky", flakyFailures: 2 });
    expect(json.latencies.resizeMs).toBe(25_000);
    expect(Object.keys(json.volumes)).toHaveLength(6);
    // The next write gets the next resourceVersion, not one reused.
    const highest = Math.max(
      ...Object.values(everything(sim))
        .flat()
        .map((o) => Number(o.metadata.resourceVersion)),
    );
    const updated = back.update("statefulsets", "default", "web", (s) => void (s.metadata.labels = { tier: "db" }));
    expect(Number(updated.metadata.resourceVersion)).toBe(highest + 1);
  });

  it("refuses a state of another version, or of the wrong shape, saying what is wrong", async () => {
    const state = JSON.parse(JSON.stringify(await SCENARIOS.grow!.build()));
    expect(() => SimCluster.restore({ ...state, version: 1 })).toThrow(
      new RegExp(`state of version 1: this claimstep reads version ${SIM_CLUSTER_STATE_VERSION}`),
    );
    expect(() => SimCluster.restore({ ...state, clock: { nowMs: "soon", wakes: [] } })).toThrow(
      /clock.nowMs is not a number/,
    );
    expect(() => SimCluster.restore({ ...state, store: { ...state.store, objects: { widgets: [] } } })).toThrow(
      /stores no such resource/,
    );
    expect(() => SimCluster.restore(null)).toThrow(/not a simulated cluster's state/);
  });
});

describe("the state file", () => {
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), "claimstep-sim-"));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const remedy = "run claimstep sim reset to start over";

  it("lives under $XDG_STATE_HOME, else ~/.local/state (a relative XDG_STATE_HOME is ignored)", () => {
    expect(defaultSimStatePath({ XDG_STATE_HOME: "/x/state", HOME: "/home/a" }, "grow")).toBe(
      "/x/state/claimstep/sim-grow.json",
    );
    expect(defaultSimStatePath({ HOME: "/home/a" }, "quota")).toBe("/home/a/.local/state/claimstep/sim-quota.json");
    expect(defaultSimStatePath({ XDG_STATE_HOME: "state", HOME: "/home/a" }, "grow")).toBe(
      "/home/a/.local/state/claimstep/sim-grow.json",
    );
  });

  it("is written atomically (no temporary file left), read back, and counts its generations", async () => {
    const file = join(tmp(), "deep", "er", "sim.json");
    expect(readSimState(file, remedy)).toBeUndefined();
    const sim = await SCENARIOS.grow!.build();
    writeSimState(file, { scenario: "grow", seed: 1, sim, savedAt: new Date("2030-01-01T00:00:00Z"), generation: 0 });
    expect(readdirSync(join(file, ".."))).toEqual(["sim.json"]);
    const back = readSimState(file, remedy)!;
    expect(back.file).toMatchObject({
      format: "claimstep/sim-state",
      version: 1,
      scenario: "grow",
      seed: 1,
      savedAt: "2030-01-01T00:00:00.000Z",
      generation: 1,
    });
    expect(back.sim.toJSON()).toEqual(sim.toJSON());
    expect(removeSimState(file)).toBe(true);
    expect(removeSimState(file)).toBe(false);
  });

  it("refuses to overwrite what another command saved meanwhile", async () => {
    const file = join(tmp(), "sim.json");
    const sim = await SCENARIOS.grow!.build();
    writeSimState(file, { scenario: "grow", seed: 1, sim, savedAt: new Date(), generation: 0 });
    writeSimState(file, { scenario: "grow", seed: 1, sim, savedAt: new Date(), generation: 1 });
    expect(() => writeSimState(file, { scenario: "grow", seed: 1, sim, savedAt: new Date(), generation: 1 })).toThrow(
      /another claimstep command saved the simulated cluster while this one ran/,
    );
    removeSimState(file);
    expect(() => writeSimState(file, { scenario: "grow", seed: 1, sim, savedAt: new Date(), generation: 2 })).toThrow(
      /was reset while this command ran/,
    );
  });

  it.each([
    ["claimstep's file cut short", '{"format":"claimstep/sim-state","version":1,"scen', /is not valid JSON/, true],
    ["not JSON", "{ nope", /not a claimstep simulated-cluster state file/, false],
    [
      "another program's file",
      JSON.stringify({ hello: "world" }),
      /not a claimstep simulated-cluster state file/,
      false,
    ],
    [
      "a newer claimstep's file",
      JSON.stringify({ format: "claimstep/sim-state", version: 9 }),
      /version 9, and this claimstep reads version 1/,
      true,
    ],
    [
      "a damaged cluster",
      null,
      /state is damaged \(not a simulated cluster's state: store.revision is not an integer\)/,
      true,
    ],
  ])(
    "%s is an error naming the file and the way out (sim reset only for claimstep's own)",
    async (_what, content, message, ours) => {
      const file = join(tmp(), "sim.json");
      if (content === null) {
        writeSimState(file, {
          scenario: "grow",
          seed: 1,
          sim: await SCENARIOS.grow!.build(),
          savedAt: new Date(),
          generation: 0,
        });
        const f = JSON.parse(readFileSync(file, "utf8"));
        f.cluster.store.revision = "many";
        writeFileSync(file, JSON.stringify(f));
      } else {
        writeFileSync(file, content);
      }
      let err: unknown;
      try {
        readSimState(file, remedy);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(SimStateError);
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message.startsWith(`${file}: `)).toBe(true);
      expect((err as Error).message.endsWith(`; ${remedy}`)).toBe(ours);
      if (!ours)
        expect((err as Error).message).toMatch(
          /claimstep neither reads, replaces nor removes it: give --sim-state a file of its own/,
        );
      expect(existsSync(file)).toBe(true); // left for a person to look at, until reset
      expect(isSimStateFile(file)).toBe(ours);
      if (ours) return;
      const before = readFileSync(file, "utf8");
      expect(() => removeSimState(file)).toThrow(
        /not a claimstep simulated-cluster state file.*left this one as it was/,
      );
      expect(() =>
        writeSimState(file, { scenario: "grow", seed: 1, sim: new SimCluster(), savedAt: new Date(), generation: 0 }),
      ).toThrow(/not a claimstep simulated-cluster state file/);
      expect(readFileSync(file, "utf8")).toBe(before);
    },
  );
});
