// The checks CI runs fail on a planted violation (issue 26): `npm run lint` (Biome: format, lint,
// organized imports) and `npm run knip` (unused files, exports, dependencies), each run on a tiny
// project in a temporary directory under the repository's own configuration and script flags.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterEach, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIOME = join(ROOT, "node_modules/@biomejs/biome/bin/biome");
const KNIP = join(ROOT, "node_modules/knip/bin/knip.js");
const scripts = (): Record<string, string> =>
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts ?? {};

/** The arguments of a package.json script that runs `tool`, e.g. "biome check ." → ["check", "."]. */
function argsOf(script: string, tool: string): string[] {
  const command = scripts()[script];
  if (!command) throw new Error(`package.json has no "${script}" script`);
  const words = command.trim().split(/\s+/);
  if (words[0] !== tool) throw new Error(`package.json script "${script}" does not start with ${tool}: ${command}`);
  return words.slice(1);
}

/** A JSONC file of the repository (comments and trailing commas allowed), as TypeScript reads tsconfig. */
function jsonc(file: string): Record<string, unknown> {
  const parsed = ts.parseConfigFileTextToJson(file, readFileSync(join(ROOT, file), "utf8"));
  if (parsed.error) throw new Error(`${file}: ${ts.flattenDiagnosticMessageText(parsed.error.messageText, "\n")}`);
  return parsed.config;
}

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "claimstep-tooling-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function run(cwd: string, bin: string, args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

// An array whose one-line form is 117 characters: within the width of 120 (past 80 and 100, other
// common widths), so it stays on one line.
const items = (n: number) => Array.from({ length: n }, (_, i) => `"value-${i}0"`).join(", ");
const FITS = `export const fits = [${items(8)}];\n`;
// The same with one more item, 129 characters (under 140): the formatter breaks it, one item a line.
const WIDE = `export const wide = [${items(9)}];\n`;

describe("npm run lint (Biome, biome.jsonc)", () => {
  const biomeProject = (files: Record<string, string>) =>
    project({
      "biome.jsonc": readFileSync(join(ROOT, "biome.jsonc"), "utf8"),
      ".gitignore": "node_modules\n",
      ...files,
    });

  it("passes a file written in the tree's style: double quotes, semicolons, lines up to 120, `xs[0]!`", () => {
    expect(FITS.trimEnd().length).toBe(117);
    const dir = biomeProject({
      "fits.ts": `${FITS}export const first = (xs: number[]): number => xs[0]!;\n`,
    });
    const r = run(dir, BIOME, argsOf("lint", "biome"));
    expect(r.out).not.toMatch(/Formatter would have printed|lint\//);
    expect(r.status).toBe(0);
  });

  it("fails on a misformatted file (plant: a 129-character line)", () => {
    expect(WIDE.trimEnd().length).toBe(129);
    const dir = biomeProject({ "wide.ts": WIDE });
    const r = run(dir, BIOME, argsOf("lint", "biome"));
    expect(r.out).toMatch(/wide\.ts format/);
    expect(r.out).toMatch(/Formatter would have printed/);
    expect(r.status).not.toBe(0);
  });

  it("fails on a lint finding that is only a warning (plant: an unused variable)", () => {
    const dir = biomeProject({ "unused.ts": "export function f(): number {\n  const planted = 1;\n  return 2;\n}\n" });
    const r = run(dir, BIOME, argsOf("lint", "biome"));
    expect(r.out).toMatch(/lint\/correctness\/noUnusedVariables/);
    expect(r.status).not.toBe(0);
  });
});

describe("npm run knip (knip.jsonc)", () => {
  it("fails on an unused export, and reports nothing else of the fixture (plant: `planted` in lib.ts)", () => {
    const config = jsonc("knip.jsonc");
    // The repository's settings (what counts as unused), with the fixture's own entry and files.
    const {
      entry: _e,
      project: _p,
      ignoreIssues: _i,
      ignoreDependencies: _d,
      ignoreBinaries: _b,
      $schema: _s,
      ...rules
    } = config;
    const dir = project({
      "package.json": JSON.stringify({ name: "fixture", private: true, type: "module" }),
      "knip.json": JSON.stringify({ ...rules, entry: ["main.ts"], project: ["*.ts"] }),
      "main.ts": 'import { used } from "./lib.js";\n\nconsole.log(used());\n',
      "lib.ts":
        "export const used = (): number => local() + 1;\nexport const local = (): number => 1;\nexport const planted = (): number => 2;\n",
    });
    const r = run(dir, KNIP, argsOf("knip", "knip"));
    expect(r.out).toMatch(/Unused exports \(1\)/);
    expect(r.out).toMatch(/planted\s+lib\.ts:3/);
    // `local` is used in its own file (ignoreExportsUsedInFile): not reported.
    expect(r.out).not.toMatch(/local|Unused files|dependencies/);
    expect(r.status).not.toBe(0);
  }, 30_000);
});
