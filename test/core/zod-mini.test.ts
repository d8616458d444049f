// zod reaches every module through core/zod.ts: zod/mini, so the Worker bundle holds no classic
// zod (test/functions/worker.bundle.test.ts measures it), with what zod/mini alone leaves out:
// zod's English messages ("Invalid input" for every issue otherwise) and classic zod's generated
// object parser.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import * as z from "../../core/zod.js";

const root = new URL("../..", import.meta.url).pathname;
const tsFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
const ZOD_IMPORT =
  /^\s*(?:import|export)\b[^;]*?\sfrom\s+["'](zod(?:\/[^"']*)?)["']|import\(\s*["'](zod(?:\/[^"']*)?)["']\s*\)/gm;

describe("zod", () => {
  it("is imported from the package by core/zod.ts alone", () => {
    const importers = ["core", "adapters", "functions", "bench", "test"]
      .flatMap((d) => tsFiles(join(root, d)))
      .flatMap((f) =>
        [...readFileSync(f, "utf8").matchAll(ZOD_IMPORT)].map((m) => `${relative(root, f)}: ${m[1] ?? m[2]}`),
      );
    expect(importers.sort()).toEqual([
      "core/zod.ts: zod/locales",
      "core/zod.ts: zod/mini",
      "core/zod.ts: zod/mini",
      "core/zod.ts: zod/v4/core",
    ]);
  });

  it("speaks English", () => {
    expect(z.string().safeParse(1).error?.issues).toEqual([
      {
        expected: "string",
        code: "invalid_type",
        path: [],
        message: "Invalid input: expected string, received number",
      },
    ]);
    expect(z.int().check(z.minimum(0)).safeParse(-1).error?.issues[0]?.message).toBe(
      "Too small: expected number to be >=0",
    );
  });

  it("builds objects that are zod/mini objects with classic zod's generated parser, extended ones too", () => {
    const base = z.looseObject({ name: z.string() });
    for (const o of [base, z.object({}), z.strictObject({}), z.extend(base, { kind: z.literal("x") })]) {
      expect(o).toBeInstanceOf(z.ZodMiniObject);
      expect(o._zod.traits.has("$ZodObjectJIT")).toBe(true);
    }
    expect(
      z.extend(base, { kind: z.literal("x") }).safeParse({ name: 1, kind: "x", extra: true }).error?.issues,
    ).toEqual([
      {
        expected: "string",
        code: "invalid_type",
        path: ["name"],
        message: "Invalid input: expected string, received number",
      },
    ]);
    expect(base.parse({ name: "a", extra: 1 })).toEqual({ name: "a", extra: 1 });
    expect(z.strictObject({}).safeParse({ extra: 1 }).error?.issues[0]?.message).toBe('Unrecognized key: "extra"');
  });
});
