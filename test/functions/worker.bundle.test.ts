// Build the Worker as `wrangler deploy` would (dry run) and check what went into the bundle:
// nothing Node-only (client-node, node-fetch, undici), and report its size.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = new URL("../..", import.meta.url).pathname;
const out = mkdtempSync(join(tmpdir(), "claimstep-worker-"));

afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("the Worker bundle", () => {
  it("holds no @kubernetes/client-node, node-fetch or undici code", () => {
    execFileSync(process.execPath, [join(ROOT, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", out], {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true", NO_COLOR: "1" },
      stdio: "pipe",
      timeout: 120_000,
    });
    const code = readFileSync(join(out, "worker.js"));
    const map = JSON.parse(readFileSync(join(out, "worker.js.map"), "utf8")) as { sources: string[] };
    const text = code.toString("utf8");

    // The source map lists every module bundled: the authoritative check.
    expect(map.sources.length).toBeGreaterThan(20);
    expect(map.sources.some((s) => s.includes("functions/worker.ts"))).toBe(true);
    for (const banned of ["@kubernetes/client-node", "node-fetch", "undici"]) {
      expect(map.sources.filter((s) => s.includes(`node_modules/${banned}/`))).toEqual([]);
      expect(text).not.toContain(`node_modules/${banned}/`);
    }
    expect(text).not.toMatch(/from\s*["']@kubernetes\/client-node["']|require\(["']@kubernetes\/client-node["']\)/);

    const raw = code.length;
    const gzip = gzipSync(code).length;
    console.log(`Worker bundle: ${(raw / 1024).toFixed(1)} KiB raw, ${(gzip / 1024).toFixed(1)} KiB gzip, ${map.sources.length} modules`);
    // Workers Free accepts 3 MiB compressed; keep well inside it.
    expect(gzip).toBeLessThan(1024 * 1024);
  }, 150_000);
});
