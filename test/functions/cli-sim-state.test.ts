// The offline playground: `--cluster sim` keeps the simulated cluster in a state file between
// commands, so `set`, then `run`, then `status` act on one cluster as on a real one; its clock
// moves on with (injected) real time between commands; `claimstep sim reset` forgets it.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { persistentSimTarget } from "../../functions/cli/sim-target.js";
import { type CliIO, type Flags, main } from "../../functions/cli.js";

const capture = (env: CliIO["env"] = {}) => {
  const out = { text: "", write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env }, out, err };
};

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "claimstep-cli-sim-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A real clock the test moves by hand, and the CLI reaching the simulated cluster with it. */
function playground() {
  const clock = { ms: Date.parse("2031-03-01T09:00:00Z") };
  const connect = (flags: Flags, env: CliIO["env"]) => persistentSimTarget(flags, env, { realNow: () => clock.ms });
  const dir = tmp();
  const file = join(dir, "sim.json");
  const claimstep = async (...argv: string[]) => {
    const { io, out, err } = capture({ HOME: dir });
    const code = await main([...argv, "--cluster", "sim", "--sim-state", file], io, connect);
    return { code, out: out.text, err: err.text };
  };
  const saved = () => JSON.parse(readFileSync(file, "utf8"));
  return { clock, file, claimstep, saved };
}

describe("--cluster sim keeps the simulated cluster between commands", () => {
  it("set → run → status, as README.md and docs/operating.md walk through", async () => {
    const { clock, file, claimstep, saved } = playground();
    expect(existsSync(file)).toBe(false);

    const set = await claimstep("set", "web", "data", "--storage", "5Gi");
    expect(set.err).toBe("");
    expect(set.code).toBe(0);
    expect(set.out).toMatch(/desired data storage 5Gi/);
    expect(saved()).toMatchObject({
      format: "claimstep/sim-state",
      version: 1,
      scenario: "grow",
      seed: 1,
      generation: 1,
      savedAt: "2031-03-01T09:00:00.000Z",
    });

    clock.ms += 20_000; // the person reads the plan
    const run = await claimstep("run", "web");
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/default\/web {2}Complete {2}RolloutComplete/);
    expect(run.out).toMatch(/data-web-0 +5Gi +5Gi +5Gi/); // the size `set` asked for, not the scenario's 2Gi

    clock.ms += 60_000;
    const status = await claimstep("status", "web", "-o", "json");
    expect(status.err).toBe("");
    expect(status.code).toBe(0);
    expect(JSON.parse(status.out).status).toMatchObject({ phase: "Complete", counts: { updated: 3, total: 3 } });

    // Nothing left to do, and it stays so.
    const again = await claimstep("plan", "web", "-o", "json");
    expect(JSON.parse(again.out)).toMatchObject({ decision: { phase: "Complete" }, outcome: { kind: "dry-run" } });
    expect(
      saved().cluster.store.objects.persistentvolumeclaims.map(
        (p: any) => `${p.object.metadata.name}=${p.object.status.capacity.storage}`,
      ),
    ).toEqual(expect.arrayContaining(["data-web-0=5Gi", "data-web-1=5Gi", "data-web-2=5Gi"]));
  });

  it("moves the virtual clock on by the real time between commands, controllers acting, at most an hour", async () => {
    const { clock, claimstep, saved } = playground();
    const step = await claimstep("step", "web", "-o", "json");
    expect(JSON.parse(step.out)).toMatchObject({
      outcome: { kind: "applied" },
      decision: { action: { claim: "data-web-2" } },
    });
    const capacity = () =>
      saved().cluster.store.objects.persistentvolumeclaims.find((p: any) => p.object.metadata.name === "data-web-2")
        .object.status.capacity.storage;
    const t0 = Date.parse(saved().virtualTime);
    // At once: the resize the step asked for is still going on.
    await claimstep("plan", "web");
    const t1 = Date.parse(saved().virtualTime);
    expect(t1).toBe(t0);
    expect(capacity()).toBe("1Gi");

    clock.ms += 2 * 60_000; // the resizer and the kubelet finish meanwhile
    await claimstep("plan", "web");
    expect(Date.parse(saved().virtualTime) - t1).toBe(2 * 60_000);
    expect(capacity()).toBe("2Gi");

    clock.ms += 3 * 24 * 3_600_000; // back from a long weekend: the cluster did not live three days
    const before = Date.parse(saved().virtualTime);
    await claimstep("plan", "web");
    expect(Date.parse(saved().virtualTime) - before).toBe(3_600_000);
  });

  it("keeps what a command did even when it failed (a run that timed out)", async () => {
    const { claimstep, saved } = playground();
    const run = await claimstep("run", "web", "--timeout", "40s");
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/is still \w+ .* after 40s/);
    const spec = (name: string) =>
      saved().cluster.store.objects.persistentvolumeclaims.find((p: any) => p.object.metadata.name === name).object.spec
        .resources.requests.storage;
    expect(spec("data-web-2")).toBe("2Gi"); // written by the run
    expect(spec("data-web-0")).toBe("1Gi"); // not reached
    const plan = JSON.parse((await claimstep("plan", "web", "-o", "json")).out);
    expect(plan.decision.phase).not.toBe("Complete");
    expect(plan.decision.action?.claim).not.toBe("data-web-2");
  });

  it("refuses a state file of another scenario or seed, and --sim-state without --cluster", async () => {
    const { file, claimstep } = playground();
    expect((await claimstep("plan", "web")).code).toBe(0);
    const connect = (flags: Flags, env: CliIO["env"]) => persistentSimTarget(flags, env);
    const other = capture();
    expect(await main(["plan", "web", "--cluster", "sim:quota", "--sim-state", file], other.io, connect)).toBe(1);
    expect(other.err.text).toContain(`${file} holds the simulated cluster of scenario grow, not quota`);
    const seed = capture();
    expect(await main(["plan", "web", "--cluster", "sim", "--seed", "7", "--sim-state", file], seed.io, connect)).toBe(
      1,
    );
    expect(seed.err.text).toContain(
      `was started with seed 1; run claimstep sim reset --sim-state ${file} to start it over`,
    );
    const real = capture();
    expect(await main(["plan", "web", "--sim-state", file], real.io)).toBe(1);
    expect(real.err.text).toMatch(/--sim-state applies to the simulated cluster only/);
  });

  it("a damaged state file is an error naming the file and claimstep sim reset; sim reset then starts afresh", async () => {
    const { file, claimstep } = playground();
    writeFileSync(file, '{"format": "claimstep/sim-state", "version": 1, "scen');
    const status = await claimstep("status", "web");
    expect(status.code).toBe(1);
    expect(status.err).toMatch(
      new RegExp(
        `^claimstep: ${file}: the simulated cluster's state is not valid JSON \\(.*\\); run claimstep sim reset --sim-state ${file} to start over\\n$`,
      ),
    );
    writeFileSync(file, JSON.stringify({ format: "claimstep/sim-state", version: 99 }));
    expect((await claimstep("status", "web")).err).toMatch(
      /version 99, and this claimstep reads version 1; run claimstep sim reset/,
    );

    const reset = await claimstep("sim", "reset");
    expect(reset.code).toBe(0);
    expect(reset.out).toBe(
      `forgot the simulated cluster saved in ${file}; the next command starts its scenario afresh\n`,
    );
    expect(existsSync(file)).toBe(false);
    expect((await claimstep("sim", "reset")).out).toBe(`no simulated cluster saved in ${file}: nothing to forget\n`);
    const fresh = await claimstep("plan", "web", "-o", "json");
    expect(fresh.code).toBe(0);
    expect(JSON.parse(fresh.out).decision).toMatchObject({
      phase: "Progressing",
      action: { claim: "data-web-2", storage: "2Gi" },
    });
  });
});

describe("the state file's default place, and claimstep sim reset", () => {
  it("is $XDG_STATE_HOME/claimstep/sim-<scenario>.json, one per scenario; sim reset forgets one, --all every one", async () => {
    const state = tmp();
    const env = { XDG_STATE_HOME: state };
    const claimstep = async (...argv: string[]) => {
      const { io, out, err } = capture(env);
      return { code: await main(argv, io), out: out.text, err: err.text };
    };
    expect((await claimstep("set", "web", "data", "--storage", "5Gi", "--cluster", "sim")).code).toBe(0);
    expect((await claimstep("step", "web", "--cluster", "sim:quota")).code).toBe(0);
    const grow = join(state, "claimstep", "sim-grow.json");
    const quota = join(state, "claimstep", "sim-quota.json");
    expect(existsSync(grow) && existsSync(quota)).toBe(true);
    // The second command sees what the first wrote.
    const plan = await claimstep("plan", "web", "--cluster", "sim:grow", "-o", "json");
    expect(JSON.parse(plan.out).decision.action).toMatchObject({ claim: "data-web-2", storage: "5Gi" });

    const one = await claimstep("sim", "reset", "--cluster", "sim:quota");
    expect(one).toMatchObject({
      code: 0,
      out: `forgot the simulated cluster saved in ${quota}; the next command starts its scenario afresh\n`,
    });
    expect(existsSync(quota)).toBe(false);
    expect(existsSync(grow)).toBe(true);
    const all = await claimstep("sim", "reset", "--all", "-o", "json");
    expect(JSON.parse(all.out)).toEqual([{ file: grow, removed: true }]);
    expect(existsSync(grow)).toBe(false);
  });

  it("--sim-state none keeps nothing: every command starts the scenario afresh", async () => {
    const state = tmp();
    const { io } = capture({ XDG_STATE_HOME: state });
    expect(await main(["step", "web", "--cluster", "sim", "--sim-state", "none"], io)).toBe(0);
    expect(existsSync(join(state, "claimstep"))).toBe(false);
    const plan = capture({ XDG_STATE_HOME: state });
    await main(["plan", "web", "--cluster", "sim", "--sim-state", "none", "-o", "json"], plan.io);
    expect(JSON.parse(plan.out.text).decision.action).toMatchObject({ claim: "data-web-2" });
  });

  it("sim without reset is a usage error", async () => {
    const { io, err } = capture({ XDG_STATE_HOME: tmp() });
    expect(await main(["sim"], io)).toBe(1);
    expect(err.text).toMatch(/usage: claimstep sim reset/);
    const bad = capture();
    expect(await main(["sim", "reset", "--cluster", "sim:nope"], bad.io)).toBe(1);
    expect(bad.err.text).toMatch(/unknown --cluster "sim:nope"/);
  });
});

describe("claimstep (spawned): the walk-through across three processes", () => {
  const ROOT = new URL("../..", import.meta.url).pathname;
  it("set → run → status on one simulated cluster kept in the user's state directory", {
    timeout: 60_000,
  }, async () => {
    const env = { ...process.env, NO_COLOR: "1", XDG_STATE_HOME: tmp() };
    const claimstep = (...args: string[]) =>
      new Promise<{ code: number; out: string; err: string }>((resolve) => {
        execFile(process.execPath, [`${ROOT}bin/claimstep.js`, ...args], { cwd: ROOT, env }, (error, out, err) =>
          resolve({ code: error ? Number(error.code ?? 1) : 0, out, err }),
        );
      });
    const set = await claimstep("set", "web", "data", "--storage", "5Gi", "--cluster", "sim");
    expect(set).toMatchObject({ code: 0, err: "" });
    const run = await claimstep("run", "web", "--cluster", "sim");
    expect(run).toMatchObject({ code: 0, err: "" });
    expect(run.out).toMatch(/data-web-0 +5Gi +5Gi +5Gi/);
    const status = await claimstep("status", "--cluster", "sim");
    expect(status).toMatchObject({ code: 0, err: "" });
    expect(status.out).toMatch(/^default +web +Complete +RolloutComplete +3\/3 /m);
    expect(existsSync(join(env.XDG_STATE_HOME, "claimstep", "sim-grow.json"))).toBe(true);
  });
});
