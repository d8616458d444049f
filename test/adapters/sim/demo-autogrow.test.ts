// `npm start -- --cluster sim:autogrow`, spawned as a user runs it: a disk over 80% → the desired
// template raised by half → the rollout grows every data claim → Complete, exit 0; the cluster it
// leaves (kept with --sim-state) has no claim above the threshold.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readSimState } from "../../../adapters/sim/state-file.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const START: string = JSON.parse(readFileSync(`${root}package.json`, "utf8")).scripts.start;

function start(state: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const [, ...argv] = START.split(" ");
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...argv, ...args],
      { cwd: root, env: { ...process.env, XDG_STATE_HOME: state } },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout, err: stderr });
      },
    );
  });
}

describe("npm start -- --cluster sim:autogrow", () => {
  it("raises data 1Gi → 2Gi when data-web-2 crosses 80%, rolls it out highest ordinal first, and ends Complete with no claim above 80% (exit 0)", {
    timeout: 60_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "claimstep-demo-autogrow-"));
    try {
      const file = join(dir, "autogrow.json");
      const { code, out, err } = await start(dir, "--cluster", "sim:autogrow", "--sim-state", file);
      expect(err).toBe("");
      expect(code).toBe(0);
      expect(out).toContain(
        "claimstep run · simulated cluster (autogrow): web is complete at data 1Gi with claimstep.io/autogrow",
      );
      expect(out).toMatch(
        /^\[00:00\] #1 +Progressing\/AutogrowTriggered data-web-2 uses 8\d\dMi of 1Gi \(8\d\.\d%\): raising template data 1Gi → 2Gi/m,
      );
      expect(out).toMatch(/✓ raised default\/web template data: 1Gi → 2Gi \(revision \w+\)/);
      const grown = [...out.matchAll(/✓ applied default\/(data-web-\d): storage (\S+)/g)].map((m) => `${m[1]} ${m[2]}`);
      expect(grown).toEqual(["data-web-2 2Gi", "data-web-1 2Gi", "data-web-0 2Gi"]);
      expect(out).toMatch(
        /^\[\d\d:\d\d\] #\d+ +Complete\/RolloutComplete +all 3 ordinal\(s\) in scope are at revision \w+ and ready$/m,
      );
      expect(out).toMatch(/no claim is above the threshold any more\.$/m);

      const saved = readSimState(file, "")!;
      const data = saved.sim.volumeStats().filter((v) => v.claim.startsWith("data-"));
      expect(data).toHaveLength(3);
      for (const v of data) {
        expect(v.capacityBytes).toBe(2n * 1024n ** 3n);
        expect(Number(v.usedBytes) / Number(v.capacityBytes)).toBeLessThan(0.8);
      }
      // The workload goes on in the saved cluster.
      expect(saved.sim.listWorkloads().map((w) => w.claims)).toEqual([
        "data-web-2",
        "data-web-1",
        "data-web-0",
        "wal-web-",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
