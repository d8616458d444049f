// The test tiers (vitest.config.ts, issue 38): every test file runs in exactly one project, so that
// none is silently left out of `npm test` nor run twice; the fast tier (`npm run test:fast`: core +
// adapters) holds no file that starts a process, a server or a browser. Vitest's own resolution of
// the projects' globs (`vitest list --filesOnly`), compared with the test files on disk.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

const onDisk = (readdirSync(join(ROOT, "test"), { recursive: true }) as string[])
  .filter((f) => f.endsWith(".test.ts"))
  .map((f) => `test/${f.split("\\").join("/")}`)
  .sort();

function listed(): { file: string; projectName: string }[] {
  const r = spawnSync(
    process.execPath,
    [join(ROOT, "node_modules/vitest/vitest.mjs"), "list", "--filesOnly", "--json"],
    {
      cwd: ROOT,
      encoding: "utf8",
      // The real-cluster projects' global setups do not run for a listing.
      env: { ...process.env, CLAIMSTEP_KUBE_ASSETS: "", CLAIMSTEP_NODE_ASSETS: "" },
      timeout: 60_000,
    },
  );
  if (r.status !== 0) throw new Error(`vitest list exited ${r.status}: ${r.stderr}`);
  const json = r.stdout.slice(r.stdout.indexOf("["));
  return (JSON.parse(json) as { file: string; projectName: string }[]).map((x) => ({
    file: x.file.startsWith(ROOT) ? x.file.slice(ROOT.length) : x.file,
    projectName: x.projectName,
  }));
}

describe("the test tiers", () => {
  const files = listed();
  const byFile = new Map<string, string[]>();
  for (const x of files) byFile.set(x.file, [...(byFile.get(x.file) ?? []), x.projectName]);

  it("put every test file in exactly one project", () => {
    expect(onDisk.length).toBeGreaterThan(150);
    expect(onDisk.filter((f) => !byFile.has(f))).toEqual([]);
    expect([...byFile].filter(([, p]) => p.length !== 1).map(([f, p]) => `${f}: ${p.join(", ")}`)).toEqual([]);
    expect([...byFile.keys()].sort()).toEqual(onDisk);
  });

  it("keep the fast tier in-process: no child process, socket server, browser or real binary", () => {
    const scripts = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts as Record<string, string>;
    expect(scripts["test:fast"]).toBe("vitest run --project core --project adapters");
    const fast = files.filter((x) => x.projectName === "core" || x.projectName === "adapters").map((x) => x.file);
    expect(fast.length).toBeGreaterThan(60);
    // msw's server.listen() intercepts fetch in-process; a socket server is node:http/node:net's.
    const outOfProcess =
      /from "(?:node:child_process|node:http|node:https|node:net|playwright-core)"|from "[./]*(?:support\/)?(?:spawn-cli|prometheus|wrangler-dev)\.js"/;
    /node:child_process|node:http"|node:https"|node:net"|playwright|spawn-cli|support\/prometheus\.js"|wrangler/;
    expect(fast.filter((f) => outOfProcess.test(readFileSync(join(ROOT, f), "utf8")))).toEqual([]);
  });
});
