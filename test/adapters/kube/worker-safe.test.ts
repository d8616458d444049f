// The direct adapter runs on Workers: nothing it loads at runtime, directly or through the
// modules it imports, may be Node-only (client-node, node-fetch, undici, node: built-ins).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
// Runtime imports only: `import type` and `export type` are erased.
const IMPORT =
  /^\s*(?:import|export)\s+(?!type\b)(?:[^'"]*?\sfrom\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gm;

function runtimeGraph(entries: string[]): { files: Set<string>; packages: Map<string, string> } {
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
  return { files, packages };
}

describe("adapters/kube on Workers", () => {
  it("loads only zod besides its own modules, whatever it imports transitively", () => {
    const dir = join(root, "adapters/kube");
    const { files, packages } = runtimeGraph(
      readdirSync(dir)
        .filter((f) => f.endsWith(".ts"))
        .map((f) => join(dir, f)),
    );
    expect(files.size).toBeGreaterThan(5);
    expect(Object.fromEntries(packages)).toEqual({
      "zod/v4/core": "core/zod.ts",
      "zod/mini": "core/zod.ts",
      "zod/locales": "core/zod.ts",
    });
  });

  it("the check itself sees what kube-node loads (so it would catch it)", () => {
    const { packages } = runtimeGraph([join(root, "adapters/kube-node/kubeconfig.ts")]);
    expect([...packages.keys()]).toEqual(expect.arrayContaining(["@kubernetes/client-node", "node:fs", "node:https"]));
  });
});
