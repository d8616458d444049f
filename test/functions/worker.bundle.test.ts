// Build the Worker as `wrangler deploy` would (dry run, minified as wrangler.toml says) and check
// what went into the bundle: nothing Node-only (client-node, node-fetch, undici), no classic zod,
// and at most 166 KiB gzipped. The size and the largest contributors are printed. (100 KiB until
// issue 11's bundle grew by the pod rules and the re-create, ~9 KiB, and the status page, hono/jsx
// and its helpers, ~16 KiB; 128 KiB until the admission webhook, ~1.7 KiB, and the re-create's uid
// check, ~0.3 KiB; 132 KiB until issue 24's fleet hardening, ~1.5 KiB: the ledger failing closed
// and bounded, set objects cleaned up, the cluster route's 400/404: all of it what the Worker serves;
// 134 KiB until issues 24 and 25, ~8 KiB: the pages' refusal, finalize hint, live list, timeline and
// usage charts (SVG, server-side), strict JSON on the API routes, and the Worker's event lines and
// Analytics Engine points, ~1.4 KiB; 142 KiB until issue 27, ~8.8 KiB: adding and removing claim
// templates in the planner, the webhook's held pod template and the re-create pull request's
// manifest edit; 152 KiB until issues 33 and 34, ~1 KiB: the re-create's record stamp and checks,
// and the rules of the real CSI sequences (15–19) with their messages; 156 KiB until issues 35 and
// 36, ~3.5 KiB: the re-create's field ownership (F5), the GitOps tools' detection, the webhook's
// refusal codes, the KEP rules 20–21 and the drivers' checks; 162 KiB until issue 38, ~1.8 KiB:
// one desired change behind every door (core/change/change.ts carries set's --add and --remove with the
// route's and the webhook's requests) and the policy module; 164 KiB until issue 38 point 2's
// never-shrink predicate, +274 bytes: core/plan/claims.ts sizeChangeOf, asked by the planner, set and the
// webhook; 165 KiB until issue 38 point 3's re-create as a table of named steps, +310 bytes:
// core/plan/finalize.ts FINALIZE_STEPS. yaml, 101 KiB minified, remains the largest package.)
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytesBySource, packageOf, type SourceMap } from "../../bench/sourcemap.js";

const ROOT = new URL("../..", import.meta.url).pathname;
/** The budget for worker.js gzipped (zlib's default level, a little above wrangler's own figure). */
const GZIP_BUDGET_BYTES = 166 * 1024;

const out = mkdtempSync(join(tmpdir(), "claimstep-worker-"));
let code: Buffer;
let text: string;
let map: SourceMap;
let wranglerSays: string;

beforeAll(() => {
  const said = execFileSync(
    process.execPath,
    [join(ROOT, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", out],
    {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true", NO_COLOR: "1" },
      stdio: "pipe",
      timeout: 120_000,
    },
  );
  wranglerSays = /Total Upload:[^\n]*/.exec(said.toString("utf8"))?.[0].trim() ?? "(wrangler printed no size)";
  code = readFileSync(join(out, "worker.js"));
  text = code.toString("utf8");
  map = JSON.parse(readFileSync(join(out, "worker.js.map"), "utf8")) as SourceMap;
}, 150_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** Minified bytes by npm package (zod by directory: core, mini, locales) or repository directory, largest first. */
function contributors(): { name: string; bytes: number }[] {
  const totals = new Map<string, number>();
  for (const [source, bytes] of bytesBySource(map, text)) {
    const path = source === "(unmapped)" ? source : resolve(out, source);
    let name = path === "(unmapped)" ? path : packageOf(path, ROOT);
    if (name === "zod") name = `zod/${/node_modules\/zod\/(?:v4\/)?([^/]+)/.exec(path)?.[1] ?? "?"}`;
    totals.set(name, (totals.get(name) ?? 0) + bytes);
  }
  return [...totals].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
}

describe("the Worker bundle", () => {
  it("holds no @kubernetes/client-node, node-fetch or undici code", () => {
    // The source map lists every module bundled: the authoritative check.
    expect(map.sources.length).toBeGreaterThan(20);
    expect(map.sources.some((s) => s.includes("functions/worker.ts"))).toBe(true);
    for (const banned of ["@kubernetes/client-node", "node-fetch", "undici"]) {
      expect(map.sources.filter((s) => s.includes(`node_modules/${banned}/`))).toEqual([]);
      expect(text).not.toContain(`node_modules/${banned}/`);
    }
    expect(text).not.toMatch(/from\s*["']@kubernetes\/client-node["']|require\(["']@kubernetes\/client-node["']\)/);
  });

  it("holds zod/mini only: no classic zod, JSON Schema code or locales besides English", () => {
    const zod = map.sources.filter((s) => s.includes("node_modules/zod/"));
    expect(zod.some((s) => s.includes("/zod/v4/mini/"))).toBe(true);
    expect(zod.filter((s) => /\/zod\/v4\/classic\/|json-schema|\/zod\/v3\//.test(s))).toEqual([]);
    expect(zod.filter((s) => s.includes("/locales/") && !s.endsWith("/locales/en.js"))).toEqual([]);
  });

  it(`is at most ${kib(GZIP_BUDGET_BYTES)} gzipped`, () => {
    const gzip = gzipSync(code).length;
    const top = contributors();
    const all = top.reduce((n, c) => n + c.bytes, 0);
    const report = [
      `Worker bundle: ${kib(code.length)} raw, ${kib(gzip)} gzip (${gzip} bytes; budget ${GZIP_BUDGET_BYTES}), ${map.sources.length} modules; wrangler: ${wranglerSays}`,
      "largest contributors (minified bytes):",
      ...top
        .slice(0, 12)
        .map((c) => `  ${kib(c.bytes).padStart(10)}  ${(100 * (c.bytes / all)).toFixed(1).padStart(5)}%  ${c.name}`),
    ].join("\n");
    console.log(report);
    expect(gzip, report).toBeLessThanOrEqual(GZIP_BUDGET_BYTES);
  });
});
