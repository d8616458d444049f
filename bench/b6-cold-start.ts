// B6: CLI cold start. `claimstep --version` and `claimstep plan web --cluster sim` as a user runs
// them from the installed package (compiled dist/, no tsx), each in a new node process, against
// `node -e 0`: Node's own start-up, the floor no command can go below. The package's layout is
// built in a temporary directory (tsc with tsconfig.build.json into its dist/, bin/claimstep.js
// and package.json copied, node_modules linked to the repository's), so the launcher runs dist/
// exactly as in the installed package. The cases take turns (floor, version, plan, then the next
// order) after warm-up rounds that fill the file cache; figures are medians of wall time per spawn.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { ratio, type Stats, statsOf } from "./harness.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

export interface B6Case {
  label: string;
  /** Wall time of one spawn, start to exit, ms. */
  wall: Stats;
  /** Median over the floor's median. */
  ratio: number;
}

export interface B6Result {
  floor: B6Case;
  cases: B6Case[];
  rounds: number;
}

/** The installed package's layout in a new temporary directory: package.json, bin/, dist/, node_modules. */
export function packageLayout(log: (line: string) => void): string {
  const dir = mkdtempSync(join(tmpdir(), "claimstep-b6-"));
  const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
  const built = spawnSync(
    process.execPath,
    [tsc, "-p", join(ROOT, "tsconfig.build.json"), "--outDir", join(dir, "dist")],
    { encoding: "utf8" },
  );
  // Type errors still emit JavaScript: say so, and go on if the CLI was emitted.
  if (built.status !== 0) log(`  tsc exited ${built.status}: ${built.stdout.split("\n").slice(0, 3).join(" | ")}`);
  if (!existsSync(join(dir, "dist/functions/cli.js")))
    throw new Error(`B6: tsc emitted no dist/functions/cli.js (${built.stderr || built.stdout})`);
  mkdirSync(join(dir, "bin"));
  copyFileSync(join(ROOT, "bin/claimstep.js"), join(dir, "bin/claimstep.js"));
  copyFileSync(join(ROOT, "package.json"), join(dir, "package.json"));
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

/** Wall time of one spawned process, ms; throws unless it exits 0. */
function spawnTime(args: readonly string[], env: NodeJS.ProcessEnv): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"], env });
  const ms = performance.now() - t0;
  if (r.status !== 0)
    throw new Error(`B6: node ${args.join(" ")} exited ${r.status ?? r.signal}: ${r.stderr?.toString().trim()}`);
  return ms;
}

export function runB6(log: (line: string) => void, rounds = 30, warmup = 3): B6Result {
  const dir = packageLayout(log);
  // The simulated cluster may keep its state under the user's state directory: not this run's.
  const env = { ...process.env, NO_COLOR: "1", XDG_STATE_HOME: join(dir, "state") };
  const bin = join(dir, "bin/claimstep.js");
  const cases: Record<string, string[]> = {
    "node -e 0": ["-e", "0"],
    "claimstep --version": [bin, "--version"],
    "claimstep plan web --cluster sim": [bin, "plan", "web", "--cluster", "sim"],
  };
  const names = Object.keys(cases);
  const times = Object.fromEntries(names.map((n) => [n, [] as number[]]));
  try {
    for (let round = 0; round < warmup + rounds; round++) {
      // Rotate the order so that no case always follows the same one.
      const order = names.map((_, i) => names[(i + round) % names.length]!);
      for (const name of order) {
        const ms = spawnTime(cases[name]!, env);
        if (round >= warmup) times[name]!.push(ms);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const [floorName, ...rest] = names;
  const floor = statsOf(times[floorName!]!, 1);
  const caseOf = (label: string): B6Case => {
    const wall = statsOf(times[label]!, 1);
    return { label, wall, ratio: ratio(wall.median, floor.median) };
  };
  const result = { floor: caseOf(floorName!), cases: rest.map(caseOf), rounds };
  for (const c of result.cases)
    log(
      `  ${c.label}: ${c.wall.median.toFixed(0)} ms median, ${c.ratio.toFixed(1)} × node -e 0 (${floor.median.toFixed(0)} ms)`,
    );
  return result;
}
