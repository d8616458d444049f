// `run` and `finalize` stopped by SIGINT or SIGTERM (issue 33 item 5): the request in flight ends,
// the set is read back from the cluster, where it stands is said with the command that goes on,
// and the exit code is the shell's (130, 143). In process, the signal comes from the command's
// Interrupts at a chosen point of the re-create; spawned, from a real kill of the process.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import type { SimCluster } from "../../adapters/sim/cluster.js";
import type { CliIO } from "../../functions/cli/io.js";
import type { InterruptSignal } from "../../functions/cli/signals.js";
import { main } from "../../functions/cli.js";
import { simOf } from "../support/cli-target.js";
import { ROOT } from "../support/spawn-cli.js";

/** Interrupts a test fires by hand, and the io that carries them. */
function interruptible() {
  const listeners = new Set<(s: InterruptSignal) => void>();
  const out = { text: "", isTTY: false, write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  const io: CliIO = {
    stdout: out,
    stderr: err,
    env: { NO_COLOR: "1" },
    interrupts: {
      on(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
  };
  return { io, out, err, fire: (s: InterruptSignal) => listeners.forEach((l) => l(s)), listeners };
}

const setOf = (sim: SimCluster) => sim.get("statefulsets", "default", "web");
const recordOf = (sim: SimCluster) => sim.get("configmaps", "default", "claimstep-recreate-web");

describe("claimstep run/finalize interrupted", () => {
  it("SIGINT between the orphan delete and the create: says the set is deleted and the command that re-creates it, exit 130", async () => {
    let fire: (s: InterruptSignal) => void = () => undefined;
    const s = await simOf("finalize", async (sim) => {
      if (!setOf(sim) && recordOf(sim)) fire("SIGINT");
    });
    const t = interruptible();
    fire = t.fire;
    expect(await main(["run", "web"], t.io, s.connect)).toBe(130);
    // Nothing more was done after the signal: the set is still gone, its record there.
    expect(setOf(s.sim)).toBeUndefined();
    expect(recordOf(s.sim)).toBeDefined();
    expect(t.err.text).toContain(
      "claimstep: interrupted (SIGINT): StatefulSet default/web is deleted; its pods and claims are kept; ConfigMap default/claimstep-recreate-web holds the set to create: `claimstep run web -n default` re-creates it\n",
    );
    // The listener is gone once the command ended.
    expect(t.listeners.size).toBe(0);
    // The command it names goes on from there.
    const again = interruptible();
    expect(await main(["run", "web"], again.io, s.connect)).toBe(0);
    expect(setOf(s.sim)).toBeDefined();
    expect(recordOf(s.sim)).toBeUndefined();
  });

  it("SIGTERM during `finalize` after the record, before the orphan delete: the set untouched, the command that goes on, exit 143", async () => {
    let fire: (s: InterruptSignal) => void = () => undefined;
    let armed = false;
    const s = await simOf("grow", async (sim) => {
      if (armed && recordOf(sim)) fire("SIGTERM");
    });
    const setup = interruptible();
    expect(await main(["run", "web"], setup.io, s.connect)).toBe(0);
    const uid = setOf(s.sim)!.metadata.uid;
    armed = true;
    const t = interruptible();
    fire = t.fire;
    expect(await main(["finalize", "web"], t.io, s.connect)).toBe(143);
    expect(setOf(s.sim)!.metadata.uid).toBe(uid);
    expect(t.err.text).toMatch(
      /claimstep: interrupted \(SIGTERM\): default\/web: the re-create has begun: ConfigMap default\/claimstep-recreate-web records the set to create; the StatefulSet is not deleted yet \(its pods and claims untouched\): `claimstep finalize web -n default` goes on \(orphan delete, then create\)\n/,
    );
    // finalize goes on from there to the end.
    const last = interruptible();
    expect(await main(["finalize", "web"], last.io, s.connect), last.err.text).toBe(0);
    expect(setOf(s.sim)!.metadata.uid).not.toBe(uid);
    expect(recordOf(s.sim)).toBeUndefined();
  });

  it("SIGINT mid rollout: how many ordinals are at the revision, and the command that goes on; -o json ends with the standing", async () => {
    let fire: (s: InterruptSignal) => void = () => undefined;
    let pauses = 0;
    const s = await simOf("grow", async () => {
      if (++pauses === 3) fire("SIGINT");
    });
    const t = interruptible();
    fire = t.fire;
    expect(await main(["run", "web", "-o", "json", "--cluster", "sim:grow"], t.io, s.connect)).toBe(130);
    expect(t.err.text).toMatch(
      /claimstep: interrupted \(SIGINT\): default\/web: the rollout has 0 of 3 ordinal\(s\) at revision \w+ \(\w+ \w+: .*\); `claimstep run web -n default --cluster sim:grow` goes on\n/,
    );
    const lines = t.out.text.trim().split("\n");
    const last = JSON.parse(lines.at(-1)!);
    expect(last).toMatchObject({
      interrupted: "SIGINT",
      ref: { namespace: "default", name: "web" },
      midRecreate: false,
      command: "claimstep run web -n default --cluster sim:grow",
    });
    expect(last.standing).toMatch(/the rollout has 0 of 3/);
    expect(last.decision.phase).toMatch(/Progressing|Waiting/);
    // The steps before it are there too, one object each.
    expect(lines.length).toBe(4);
  });

  it("a command that does not step (plan) takes no interrupt listener", async () => {
    const s = await simOf("grow");
    const t = interruptible();
    let during = -1;
    const connect = async () => {
      during = t.listeners.size;
      return s.target;
    };
    expect(await main(["plan", "web"], t.io, connect)).toBe(0);
    expect(during).toBe(0);
  });
});

/** Spawn the CLI (tests/support/interrupted-cli.ts) held between the orphan delete and the create; kill it with `signal` there. */
function killedMidRecreate(signal: InterruptSignal, ...args: string[]) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", `${ROOT}test/support/interrupted-cli.ts`, ...args], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: "1" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => {
      stderr += d;
      if (stderr.includes("HELD\n") && !stderr.includes("HELD\nsent")) {
        stderr += "sent\n";
        child.kill(signal);
      }
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("claimstep run killed by a real signal (spawned)", () => {
  it.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const)("%s between the orphan delete and the create: the standing on stderr, exit %i", async (signal, code) => {
    const r = await killedMidRecreate(signal, "finalize", "run", "web", "-n", "default");
    expect(r.stderr).toContain(
      `claimstep: interrupted (${signal}): StatefulSet default/web is deleted; its pods and claims are kept; ConfigMap default/claimstep-recreate-web holds the set to create: \`claimstep run web -n default\` re-creates it\n`,
    );
    expect(r.stderr).toContain("after: set missing, record kept\n");
    expect(r.code).toBe(code);
  });
});
