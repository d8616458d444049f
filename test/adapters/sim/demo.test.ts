// `npm start` is `claimstep run web --cluster sim:grow -o timeline …` on the embedded simulated
// cluster: its exit codes and messages, spawned as a user runs it.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const START: string = JSON.parse(readFileSync(`${root}package.json`, "utf8")).scripts.start;

/** `npm start -- <args>`, without npm's own output, with a state directory of its own (or the one given, kept). */
function start(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return startIn(undefined, ...args);
}

function startIn(shared: string | undefined, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const [, ...argv] = START.split(" ");
  const state = shared ?? mkdtempSync(join(tmpdir(), "claimstep-demo-"));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...argv, ...args],
      { cwd: root, env: { ...process.env, XDG_STATE_HOME: state } },
      (error, stdout, stderr) => {
        if (!shared) rmSync(state, { recursive: true, force: true });
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: stdout, err: stderr });
      },
    );
  });
}

describe("npm start", () => {
  it("is the CLI's run on the simulated cluster, as a timeline", () => {
    // --sim-state none: every npm start shows the whole rollout afresh, whatever an earlier one left.
    expect(START).toMatch(/^node bin\/claimstep\.js run web --cluster sim:grow --sim-state none --output timeline /);
  });

  it("completes the default rollout highest ordinal first and exits 0", { timeout: 60_000 }, async () => {
    const { code, out } = await start();
    expect(code).toBe(0);
    const applied = [...out.matchAll(/✓ applied default\/(\S+):/g)].map((m) => m[1]);
    expect(applied).toEqual(["data-web-2", "wal-web-2", "data-web-1", "wal-web-1", "data-web-0", "wal-web-0"]);
    expect(out).toMatch(
      /^\[\d\d:\d\d\] #\d+ +Complete\/RolloutComplete +all 3 ordinal\(s\) in scope are at revision \w+ and ready$/m,
    );
    expect(out).toMatch(/^\d+ invocations, 6 claim writes, 0 transient failures/m);
  });

  it("starts afresh every time: a second run rolls out again", { timeout: 60_000 }, async () => {
    const state = mkdtempSync(join(tmpdir(), "claimstep-demo-shared-"));
    try {
      const first = await startIn(state);
      const second = await startIn(state);
      expect([first.code, second.code]).toEqual([0, 0]);
      expect(second.out).toMatch(/^\d+ invocations, 6 claim writes/m);
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });

  it("apply: a kubectl apply of data 2Gi through claimstep's webhook, the rollout, then the re-create: Complete, exit 0", {
    timeout: 60_000,
  }, async () => {
    const { code, out } = await start("--cluster", "sim:apply");
    expect(code).toBe(0);
    expect(out).toContain("claimstep's admission webhook is installed");
    const applied = [...out.matchAll(/✓ applied default\/(data-web-\d): storage (\S+?)[,\n]/g)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    expect(applied).toEqual(["data-web-2 2Gi", "data-web-1 2Gi", "data-web-0 2Gi"]);
    expect(out).toMatch(/Complete\/SetRecreated +StatefulSet default\/web re-created/);
    expect(out).toMatch(
      /^\[\d\d:\d\d\] #\d+ +Complete\/\w+ +all 3 ordinal\(s\) in scope are at revision \w+ and ready$/m,
    );
  });

  it("exits 2 with the blocking message of blocked-class, having written nothing", { timeout: 60_000 }, async () => {
    const { code, out, err } = await start("--cluster", "sim:blocked-class");
    expect(code).toBe(2);
    expect(err).toContain(
      'blocked (StorageClassMismatch): data-web-2 has storage class fast but template "data" asks for premium',
    );
    expect(out).toMatch(/^1 invocation, 0 claim writes/m);
  });

  it("completes through injected API faults (flaky-api)", { timeout: 60_000 }, async () => {
    const { code, out } = await start("--cluster", "sim:flaky-api", "--seed", "3");
    expect(code).toBe(0);
    expect(out).toContain("Complete/RolloutComplete");
  });

  it("recover: the claim whose expansion to 1Ti failed comes back down to 2Gi first, then the rollout ends Complete (exit 0)", {
    timeout: 60_000,
  }, async () => {
    const { code, out } = await start("--cluster", "sim:recover");
    expect(code).toBe(0);
    expect(out).toMatch(
      /^\[00:00\] #1 +Progressing\/ClaimUpdated +updating data-web-2: storage 1Ti → 2Gi; revision \w+$/m,
    );
    const applied = [...out.matchAll(/✓ applied default\/(\S+): storage (\S+?)[,\n]/g)].map((m) => `${m[1]} ${m[2]}`);
    expect(applied).toEqual([
      "data-web-2 2Gi",
      "wal-web-2 1Gi",
      "data-web-1 2Gi",
      "wal-web-1 1Gi",
      "data-web-0 2Gi",
      "wal-web-0 1Gi",
    ]);
    expect(out).toMatch(
      /^\[\d\d:\d\d\] #\d+ +Complete\/RolloutComplete +all 3 ordinal\(s\) in scope are at revision \w+ and ready$/m,
    );
    // (POD-READY and POD-REVISION columns appear when the set reports its pod template revisions.)
    expect(out).toMatch(/^2 +web-2 \(Running\) +(?:Ready +web-\w+ \(updated\) +)?Updated +data-web-2 +2Gi +2Gi +2Gi/m);
  });

  it("pods-claims-first: claims, then that ordinal's pod (the partition one ordinal lower), then the next; your partition restored (exit 0)", {
    timeout: 60_000,
  }, async () => {
    const { code, out } = await start("--cluster", "sim:pods-claims-first");
    expect(code).toBe(0);
    const done = [...out.matchAll(/✓ (?:applied default\/(\S+):|patched default\/web: (partition \d+ → \d+))/g)].map(
      (m) => m[1] ?? m[2],
    );
    const expected: string[] = [];
    for (let o = 4; o >= 0; o--) expected.push(`data-web-${o}`, `wal-web-${o}`, `partition ${o + 1} → ${o}`);
    expect(done).toEqual([...expected, "partition 0 → 0"]);
    expect(out).toMatch(/PartitionRestored +every ordinal's claims and pod are done: restoring your partition 0/);
    expect(out).toMatch(/^\d+ invocations, 10 claim writes, 6 partition patches, 0 transient failures/m);
  });

  it("pods-claims-first-2: two ordinals' claims in flight before the first pod is replaced (exit 0)", {
    timeout: 60_000,
  }, async () => {
    const { code, out } = await start("--cluster", "sim:pods-claims-first-2");
    expect(code).toBe(0);
    const done = [...out.matchAll(/✓ (?:applied default\/(\S+):|patched default\/web: (partition \d+ → \d+))/g)].map(
      (m) => m[1] ?? m[2],
    );
    expect(done.slice(0, 4)).toEqual(["data-web-4", "wal-web-4", "data-web-3", "wal-web-3"]);
    expect(done.at(-1)).toBe("partition 0 → 0");
    expect(out).toContain("Complete/RolloutComplete");
  });

  it.each(["node-expansion-restart", "offline-driver"])(
    "%s: one eviction per ordinal, highest first, then Complete (exit 0)",
    { timeout: 60_000 },
    async (scenario) => {
      const { code, out } = await start("--cluster", `sim:${scenario}`);
      expect(code).toBe(0);
      expect([...out.matchAll(/✓ evicted default\/(web-\d)/g)].map((m) => m[1])).toEqual(["web-2", "web-1", "web-0"]);
      expect(out).toMatch(/^\d+ invocations, 6 claim writes, 3 evictions, 0 transient failures/m);
      expect(out).toContain("Complete/RolloutComplete");
    },
  );

  it("pdb-blocks: Waiting/DisruptionBudget while the budget allows no disruption, then Complete once it allows one (exit 0)", {
    timeout: 60_000,
  }, async () => {
    const { code, out } = await start("--cluster", "sim:pdb-blocks");
    expect(code).toBe(0);
    const firstBudget = out.indexOf("Waiting/DisruptionBudget");
    const firstEviction = out.indexOf("✓ evicted default/web-2");
    expect(firstBudget).toBeGreaterThan(0);
    expect(firstEviction).toBeGreaterThan(firstBudget);
    expect(out).toContain("The disruption budget web needs 3 healthy pods and has 3 currently");
    expect(out).toContain("Complete/RolloutComplete");
  });

  it("finalize: after the rollout, record → orphan delete → create → record removed; the scale-up's claims come at the new size (exit 0)", {
    timeout: 60_000,
  }, async () => {
    const { code, out } = await start("--cluster", "sim:finalize");
    expect(code).toBe(0);
    const reasons = [...out.matchAll(/^\[\d\d:\d\d\] #\d+ +\w+\/(\w+)/gm)].map((m) => m[1]);
    // The claims done, the re-create next: Progressing, not Complete (the set is not re-created yet).
    const from = reasons.indexOf("RecreateNext");
    expect(reasons.slice(from, from + 7)).toEqual([
      "RecreateNext",
      "RecordWritten",
      "RecordArmed",
      "SetOrphaned",
      "SetCreated",
      "OwnershipRestored",
      "SetRecreated",
    ]);
    expect(out).toMatch(
      /✓ created ConfigMap default\/claimstep-recreate-web\n[\s\S]*✓ armed ConfigMap default\/claimstep-recreate-web\n[\s\S]*✓ deleted StatefulSet default\/web \(orphan; uid [\w-]+\)\n[\s\S]*✓ created StatefulSet default\/web \(uid [\w-]+\)\n[\s\S]*✓ restored the field ownership of StatefulSet default\/web \(\d+ managedFields entries\)\n[\s\S]*✓ deleted ConfigMap default\/claimstep-recreate-web/,
    );
    expect(out).toMatch(/^3 +web-3 \(Running\) .* Updated +data-web-3 +2Gi +2Gi +2Gi/m);
    expect(out).toMatch(/^\d+ invocations, 8 claim writes, 6 re-create requests, 0 transient failures/m);
  });

  it("finalize-crash: the next invocation creates the set from the record and finishes (exit 0)", {
    timeout: 60_000,
  }, async () => {
    const { code, out } = await start("--cluster", "sim:finalize-crash");
    expect(code).toBe(0);
    expect(out).toMatch(
      /^\[00:00\] #1 +Progressing\/SetCreated +creating StatefulSet default\/web from ConfigMap claimstep-recreate-web/m,
    );
    expect(out).toContain("Complete/SetRecreated");
    expect(out).toMatch(/Complete\/Converged/);
  });

  it("rejects an unknown scenario with the list of scenarios", { timeout: 60_000 }, async () => {
    const { code, err } = await start("--cluster", "sim:nope");
    expect(code).toBe(1);
    expect(err).toContain(
      "scenario one of grow, vac, blocked, blocked-class, infeasible, offline-driver, node-expansion-restart, pods-claims-first, pods-claims-first-2, pdb-blocks, finalize, finalize-crash, flaky-api, quota, recover, autogrow, opted-out",
    );
  });
});
