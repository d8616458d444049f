// The metrics adapter runs on Workers: nothing it loads at runtime, directly or through the
// modules it imports, may be Node-only (node: built-ins, client-node, undici).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
// Runtime imports only: `import type` and `export type` are erased.
const IMPORT =
  /^\s*(?:import|export)\s+(?!type\b)(?:[^'"]*?\sfrom\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gm;

function runtimePackages(entries: string[]): Map<string, string> {
  const files = new Set<string>();
  const packages = new Map<string, string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const spec = (m[1] ?? m[2])!;
      if (spec.startsWith(".")) visit(resolve(dirname(file), spec.replace(/\.js$/, ".ts")));
      else packages.set(spec, file.slice(root.length + 1));
    }
  };
  entries.forEach(visit);
  return packages;
}

describe("adapters/metrics on Workers", () => {
  it("loads only zod besides its own modules", () => {
    const dir = join(root, "adapters/metrics");
    const packages = runtimePackages(
      readdirSync(dir)
        .filter((f) => f.endsWith(".ts"))
        .map((f) => join(dir, f)),
    );
    expect(Object.fromEntries(packages)).toEqual({
      "zod/v4/core": "core/zod.ts",
      "zod/mini": "core/zod.ts",
      "zod/locales": "core/zod.ts",
    });
  });
});
