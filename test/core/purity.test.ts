// core/ is the functional core: no I/O, no clock, no randomness, no Node built-ins, and
// nothing from @kubernetes/client-node at runtime.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const dir = fileURLToPath(new URL("../../core/", import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith(".ts"));

describe("core/ purity", () => {
  it.each(files)("%s imports only zod and core/, and uses no clock, randomness or I/O", (f) => {
    const src = readFileSync(dir + f, "utf8");
    const imports = [...src.matchAll(/^import\s+(type\s+)?[^;]*?from\s+"([^"]+)"/gms)]
      .filter((m) => !m[1])
      .map((m) => m[2]);
    // zod comes through ./zod.js (zod/mini with English messages), the one file that imports the package.
    const zod = f === "zod.ts" ? ["zod/v4/core", "zod/mini", "zod/locales"] : [];
    for (const spec of imports)
      expect(zod.includes(spec!) || spec!.startsWith("./"), `${f} imports ${spec}`).toBe(true);
    expect(src).not.toMatch(/\bDate\.now\(|new Date\(\)|Math\.random|\bfetch\(|process\.|setTimeout|console\./);
  });
});
