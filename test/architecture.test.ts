// The layering of docs/architecture.md as a checked rule: dependency-cruiser with the repository's
// .dependency-cruiser.cjs finds no violation in core/, adapters/ and functions/ (no cycle, type
// imports included; no upward import), and the same rules catch each kind of violation planted in a
// small tree of their own.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = new URL("..", import.meta.url).pathname;
const DEPCRUISE = join(ROOT, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs");

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: { name: string }[];
}

function cruise(cwd: string): Violation[] {
  const run = spawnSync(
    process.execPath,
    [
      DEPCRUISE,
      "core",
      "adapters",
      "functions",
      "--config",
      join(cwd, ".dependency-cruiser.cjs"),
      "--output-type",
      "json",
    ],
    { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  if (!run.stdout) throw new Error(`depcruise printed nothing (exit ${run.status}): ${run.stderr}`);
  return (JSON.parse(run.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

// One cruise of the tree takes seconds (more on a loaded machine).
const CRUISE_TIMEOUT_MS = 120_000;

const show = (vs: Violation[]) =>
  vs.map(
    (v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(" -> ")})` : ""}`,
  );

describe("the layers (npm run deps)", () => {
  it(
    "core/, adapters/ and functions/ have no import cycle and no import against the layers",
    () => {
      expect(show(cruise(ROOT))).toEqual([]);
    },
    CRUISE_TIMEOUT_MS,
  );
});

describe("the dependency rules catch a planted violation", () => {
  const dir = mkdtempSync(join(tmpdir(), "claimstep-deps-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const plant = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  let found: Violation[] = [];
  beforeAll(() => {
    copyFileSync(join(ROOT, ".dependency-cruiser.cjs"), join(dir, ".dependency-cruiser.cjs"));
    // The repository's packages, so that zod and client-node resolve as they do in the tree.
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
    plant(
      "tsconfig.json",
      JSON.stringify({
        compilerOptions: { module: "ESNext", moduleResolution: "Bundler", verbatimModuleSyntax: true },
      }),
    );
    // Allowed: core -> core, adapters -> core, functions -> adapters.
    plant("core/keys.ts", `export const Keys = { a: "a" } as const;\n`);
    plant("core/ok.ts", `import { Keys } from "./keys.js";\nexport const k = Keys.a;\n`);
    plant("core/schema.ts", `import * as z from "zod/mini";\nexport const S = z.string();\n`);
    plant("adapters/ok.ts", `import { k } from "../core/ok.js";\nexport const a = k;\n`);
    plant("functions/ok.ts", `import { a } from "../adapters/ok.js";\nexport const f = a;\n`);
    // An upward import: an adapter importing an entry point.
    plant("adapters/up.ts", `import { f } from "../functions/ok.js";\nexport const up = f;\n`);
    // core importing outside core: an adapter, and a Node built-in.
    plant("core/outside.ts", `import { a } from "../adapters/ok.js";\nexport const o = a;\n`);
    plant("core/io.ts", `import { readFileSync } from "node:fs";\nexport const io = readFileSync;\n`);
    // client-node in core, even as a type only.
    plant("core/client-type.ts", `import type { V1Pod } from "@kubernetes/client-node";\nexport type P = V1Pod;\n`);
    // A cycle made only of type imports.
    plant("core/cycle-a.ts", `import type { B } from "./cycle-b.js";\nexport interface A { b?: B }\n`);
    plant("core/cycle-b.ts", `import type { A } from "./cycle-a.js";\nexport interface B { a?: A }\n`);
    // Product code importing the tests.
    plant("test/helper.ts", `export const helper = 1;\n`);
    plant("functions/uses-test.ts", `import { helper } from "../test/helper.js";\nexport const t = helper;\n`);
    found = cruise(dir);
  }, CRUISE_TIMEOUT_MS);
  const hit = (rule: string, from: string, to: string) =>
    found.some((v) => v.rule.name === rule && v.from === from && v.to === to);

  it("an adapter importing functions/ (upward)", () => {
    expect(hit("adapters-not-functions", "adapters/up.ts", "functions/ok.ts"), show(found).join("\n")).toBe(true);
  });
  it("core importing adapters/", () => {
    expect(hit("core-only-core-and-zod", "core/outside.ts", "adapters/ok.ts"), show(found).join("\n")).toBe(true);
  });
  it("core importing a Node built-in", () => {
    const builtin = found.filter((v) => v.rule.name === "core-no-node-builtins" && v.from === "core/io.ts");
    expect(show(builtin)).toEqual([expect.stringMatching(/ -> (node:)?fs$/)]);
  });
  it("core importing @kubernetes/client-node, even as a type", () => {
    const client = found.filter((v) => v.rule.name === "core-only-core-and-zod" && v.from === "core/client-type.ts");
    expect(show(client)).toEqual([expect.stringMatching(/node_modules\/@kubernetes\/client-node\//)]);
  });
  it("a cycle of type-only imports", () => {
    const cycles = found.filter((v) => v.rule.name === "no-circular");
    expect(cycles.length, show(found).join("\n")).toBeGreaterThan(0);
    for (const v of cycles) expect([v.from, v.to].sort()).toEqual(["core/cycle-a.ts", "core/cycle-b.ts"]);
  });
  it("product code importing test/", () => {
    expect(hit("product-not-test", "functions/uses-test.ts", "test/helper.ts"), show(found).join("\n")).toBe(true);
  });
  it("nothing else: the allowed imports pass (core -> core and zod, adapters -> core, functions -> adapters)", () => {
    const planted = [
      "adapters/up.ts",
      "core/outside.ts",
      "core/io.ts",
      "core/client-type.ts",
      "core/cycle-a.ts",
      "core/cycle-b.ts",
      "functions/uses-test.ts",
    ];
    expect(show(found.filter((v) => !planted.includes(v.from)))).toEqual([]);
  });
});
