// The simulated cluster's state file shared by several commands (issue 24, items 14, 15, 18):
// `sim reset` removes only claimstep's own files; --interval has a floor and --timeout always ends
// run and status --watch; a watcher beside a run reads the shared cluster and never writes it;
// two writers on one file never lose work silently, and a refusal comes once, before anything.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import * as stateFile from "../../adapters/sim/state-file.js";
import { persistentSimTarget } from "../../functions/cli/sim-target.js";
import { type CliIO, type Flags, main, simTarget, type Target } from "../../functions/cli.js";
import { runClaimstep } from "../support/spawn-cli.js";

const capture = (env: CliIO["env"] = {}) => {
  const out = { text: "", write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env }, out, err };
};

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "claimstep-sim-shared-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const claimstep = async (env: CliIO["env"], ...argv: string[]) => {
  const { io, out, err } = capture(env);
  const code = await main(argv, io);
  return { code, out: out.text, err: err.text };
};

const KUBECONFIG =
  "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster:\n    server: https://prod.example:6443\n";

describe("claimstep sim reset removes only a claimstep state file (item 14)", () => {
  it("refuses a file that is not a claimstep state file, names it, and leaves it as it was", async () => {
    const dir = tmp();
    const file = join(dir, "config");
    writeFileSync(file, KUBECONFIG);
    const reset = await claimstep({ HOME: dir }, "sim", "reset", "--sim-state", file);
    expect(reset.code).toBe(1);
    expect(reset.err).toContain(file);
    expect(reset.err).toMatch(/not a claimstep simulated-cluster state file/);
    expect(reset.out).toBe("");
    expect(readFileSync(file, "utf8")).toBe(KUBECONFIG);
    // A JSON file of someone else's is no state file either.
    writeFileSync(file, '{"apiVersion":"v1","kind":"Config"}');
    expect((await claimstep({ HOME: dir }, "sim", "reset", "--sim-state", file)).code).toBe(1);
    expect(existsSync(file)).toBe(true);
  });

  it("a command given a foreign file names it and does not tell the user to run sim reset on it", async () => {
    const dir = tmp();
    const file = join(dir, "config");
    writeFileSync(file, KUBECONFIG);
    const status = await claimstep({ HOME: dir }, "status", "web", "--cluster", "sim", "--sim-state", file);
    expect(status.code).toBe(1);
    expect(status.err).toContain(file);
    expect(status.err).toMatch(/not a claimstep simulated-cluster state file/);
    expect(status.err).not.toMatch(/sim reset/);
    expect(readFileSync(file, "utf8")).toBe(KUBECONFIG);
  });

  it("sim reset --all leaves a foreign sim-*.json in the state directory alone, and removes nothing", async () => {
    const state = tmp();
    const env = { XDG_STATE_HOME: state };
    expect((await claimstep(env, "step", "web", "--cluster", "sim")).code).toBe(0);
    const grow = join(state, "claimstep", "sim-grow.json");
    const foreign = join(state, "claimstep", "sim-notes.json");
    writeFileSync(foreign, "my notes\n");
    const all = await claimstep(env, "sim", "reset", "--all");
    expect(all.code).toBe(1);
    expect(all.err).toContain(foreign);
    expect(existsSync(grow)).toBe(true);
    expect(readFileSync(foreign, "utf8")).toBe("my notes\n");
  });
});

describe("--interval has a floor and --timeout always ends the command (item 15)", () => {
  for (const [command, interval] of [
    ["run", "0"],
    ["run", "1ms"],
    ["status", "0s"],
  ] as const) {
    it(`${command} --interval ${interval} is refused, naming the flag and the minimum, before anything is read or written`, async () => {
      const state = tmp();
      const argv = command === "status" ? ["status", "web", "-w"] : ["run", "web"];
      const r = await claimstep(
        { XDG_STATE_HOME: state },
        ...argv,
        "--cluster",
        "sim",
        "--interval",
        interval,
        "--timeout",
        "1m",
      );
      expect(r.code).toBe(1);
      expect(r.err).toMatch(new RegExp(`--interval "${interval}": .*at least 1s`));
      expect(existsSync(join(state, "claimstep"))).toBe(false);
    });
  }

  it("run --timeout ends the run by the wall clock when the target's clock does not move", {
    timeout: 20_000,
  }, async () => {
    const sim = await simTarget("sim:grow");
    const frozen = sim.now();
    // A cluster whose clock stands still (its controllers never finish): only the wall clock moves.
    const stuck: Target = {
      ...sim,
      now: () => frozen,
      pause: (ms) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, 50))),
    };
    const { io, err } = capture({});
    const code = await main(
      ["run", "web", "--cluster", "sim", "--interval", "1s", "--timeout", "1s"],
      io,
      async () => stuck,
    );
    expect(code).toBe(1);
    expect(err.text).toMatch(/is still \w+ .* after 1s/);
  });
});

describe("two claimstep processes on one state file (item 18)", () => {
  it("status -w beside run follows the run to Complete, and neither writes over the other", {
    timeout: 120_000,
  }, async () => {
    const dir = tmp();
    const file = join(dir, "sim.json");
    const env = { NO_COLOR: "1", XDG_STATE_HOME: dir };
    const common = ["--cluster", "sim", "--sim-state", file];
    expect((await runClaimstep(["set", "web", "data", "--storage", "3Gi", ...common], env, 30_000)).code).toBe(0);
    const watcher = runClaimstep(
      ["status", "web", "-w", "--interval", "1s", "--timeout", "2h", ...common],
      env,
      90_000,
    );
    const run = await runClaimstep(["run", "web", ...common], env, 60_000);
    const watched = await watcher;
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(watched.stderr).toBe("");
    expect(watched.code).toBe(0);
    expect(watched.stdout.trim().split("\n").at(-1)).toMatch(/default\/web {2}Complete {2}RolloutComplete/);
    // The run's work is what the file holds: every claim at 3Gi.
    const saved = JSON.parse(readFileSync(file, "utf8"));
    const specs = saved.cluster.store.objects.persistentvolumeclaims
      .filter((p: any) => p.object.metadata.name.startsWith("data-"))
      .map((p: any) => p.object.spec.resources.requests.storage);
    expect(specs).toEqual(["3Gi", "3Gi", "3Gi"]);
  });

  it("a writer refuses once, before doing anything, while another command holds the file", {
    timeout: 60_000,
  }, async () => {
    const dir = tmp();
    const file = join(dir, "sim.json");
    const env = { NO_COLOR: "1", XDG_STATE_HOME: dir };
    const common = ["--cluster", "sim", "--sim-state", file];
    expect((await runClaimstep(["step", "web", ...common], env, 30_000)).code).toBe(0);
    const before = readFileSync(file, "utf8");
    const release = stateFile.lockSimState(file, "run web");
    try {
      const run = await runClaimstep(["run", "web", ...common], env, 30_000);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      const lines = run.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(file);
      expect(lines[0]).toMatch(new RegExp(`another claimstep command \\(run web, pid ${process.pid}\\) is using`));
      expect(readFileSync(file, "utf8")).toBe(before);
      // A watcher and a plain status only read: they go on beside it.
      const status = await runClaimstep(["status", "web", ...common], env, 30_000);
      expect(status.stderr).toBe("");
      expect(status.code).toBe(0);
      expect(readFileSync(file, "utf8")).toBe(before);
      // Nor does sim reset pull the file from under it.
      const reset = await claimstep({ HOME: dir }, "sim", "reset", "--sim-state", file);
      expect(reset.code).toBe(1);
      expect(reset.err).toMatch(new RegExp(`another claimstep command \\(run web, pid ${process.pid}\\) is using`));
      expect(readFileSync(file, "utf8")).toBe(before);
    } finally {
      release();
    }
    expect((await runClaimstep(["run", "web", ...common], env, 60_000)).code).toBe(0);
  });

  it("two runs started together: each completes or refuses once, clearly; no work is lost or reported twice", {
    timeout: 120_000,
  }, async () => {
    const dir = tmp();
    const file = join(dir, "sim.json");
    mkdirSync(dir, { recursive: true });
    const env = { NO_COLOR: "1", XDG_STATE_HOME: dir };
    const common = ["--cluster", "sim", "--sim-state", file];
    expect((await runClaimstep(["set", "web", "data", "--storage", "3Gi", ...common], env, 30_000)).code).toBe(0);
    const runs = await Promise.all([
      runClaimstep(["run", "web", ...common], env, 60_000),
      runClaimstep(["run", "web", ...common], env, 60_000),
    ]);
    for (const r of runs) {
      if (r.code === 0) expect(r.stderr).toBe("");
      else {
        expect(r.code).toBe(1);
        expect(r.stderr.trim().split("\n")).toEqual([
          expect.stringMatching(/another claimstep command \(run web, pid \d+\) is using/),
        ]);
      }
      expect(r.stderr).not.toMatch(/saved the simulated cluster while this one ran/);
    }
    expect(runs.some((r) => r.code === 0)).toBe(true);
    const status = await runClaimstep(["status", "web", "-o", "json", ...common], env, 30_000);
    expect(JSON.parse(status.stdout).status).toMatchObject({ phase: "Complete" });
  });

  it("a save refused because the file changed under the run (a claimstep without the lock) is reported once", async () => {
    const dir = tmp();
    const file = join(dir, "sim.json");
    let pauses = 0;
    // Another writer's save between two steps of the run: the generation in the file moves on.
    const connect = async (flags: Flags, env: CliIO["env"], opts?: { readOnly?: boolean; command?: string }) => {
      const t = await persistentSimTarget(flags, env, opts);
      return {
        ...t,
        pause: async (ms: number, signal?: AbortSignal) => {
          if (++pauses === 2) {
            const f = JSON.parse(readFileSync(file, "utf8"));
            writeFileSync(file, JSON.stringify({ ...f, generation: f.generation + 1 }));
          }
          await t.pause(ms, signal);
        },
      };
    };
    const { io, err } = capture({ HOME: dir });
    expect(await main(["run", "web", "--cluster", "sim", "--sim-state", file], io, connect)).toBe(1);
    expect(err.text.trim().split("\n")).toEqual([
      `claimstep: ${file}: another claimstep command saved the simulated cluster while this one ran, so what this one did there is not saved (one command at a time per state file); run the command again`,
    ]);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});
