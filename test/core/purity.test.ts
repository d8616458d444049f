// core/ is the functional core: no I/O, no clock, no randomness, no Node built-ins, and
// nothing from @kubernetes/client-node at runtime.
import { readdirSync, readFileSync } from "node:fs";
import { posix } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const dir = fileURLToPath(new URL("../../core/", import.meta.url));
// Every file of core/ and its folders (kube/, policy/, plan/, change/, view/), as `plan/plan.ts`.
const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));

/** A relative import that stays inside core/ (`../plan/plan.js` from `view/view.ts`, not `../../adapters/…`). */
const inCore = (file: string, spec: string): boolean =>
  (spec.startsWith("./") || spec.startsWith("../")) &&
  !posix.normalize(posix.join(posix.dirname(file), spec)).startsWith("..");

describe("core/ purity", () => {
  it("reads every file of core/, in its folders too", () => {
    expect(files.length).toBeGreaterThan(50);
    expect(files).toContain("plan/plan.ts");
    expect(inCore("view/view.ts", "../plan/plan.js")).toBe(true);
    expect(inCore("view/view.ts", "../../adapters/kube/reader.js")).toBe(false);
    expect(inCore("zod.ts", "../functions/step.js")).toBe(false);
  });

  it.each(files)("%s imports only zod and core/, and uses no clock, randomness or I/O", (f) => {
    const src = readFileSync(dir + f, "utf8");
    const imports = [...src.matchAll(/^import\s+(type\s+)?[^;]*?from\s+"([^"]+)"/gms)]
      .filter((m) => !m[1])
      .map((m) => m[2]);
    // zod comes through ./zod.js (zod/mini with English messages), the one file that imports the package.
    const zod = f === "zod.ts" ? ["zod/v4/core", "zod/mini", "zod/locales"] : [];
    for (const spec of imports) expect(zod.includes(spec!) || inCore(f, spec!), `${f} imports ${spec}`).toBe(true);
    expect(src).not.toMatch(/\bDate\.now\(|new Date\(\)|Math\.random|\bfetch\(|process\.|setTimeout|console\./);
  });
});
