// The RULES index (core/plan/rules.ts) against the code and the docs: every rule planStep's steps and
// core's comments cite is in the index; each has a function that exists, test files that exist and
// name it, and an anchor in docs/design.md, the one place it is stated (the other docs link there).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { STEPS } from "../../../core/plan/plan.js";
import { RULES, type RuleId, STEP_RULES } from "../../../core/plan/rules.js";

const ROOT = new URL("../../..", import.meta.url).pathname;
const read = (path: string): string => readFileSync(join(ROOT, path), "utf8");
const DESIGN = read("docs/design.md");
const IDS = Object.keys(RULES) as RuleId[];

/** The rules a text cites: `rule 8`, `Rules 4–8, 13 and 14`, `P1`, `F1–F5`. */
function cited(text: string): Set<string> {
  const out = new Set<string>();
  const range = (a: number, b: number, prefix = "") => {
    for (let n = a; n <= b; n++) out.add(`${prefix}${n}`);
  };
  for (const m of text.matchAll(/\b[Rr]ules? (\d+(?:\s*(?:[–-]|,|and|or)\s*\d+)*)/g))
    for (const p of m[1]!.matchAll(/(\d+)(?:\s*[–-]\s*(\d+))?/g)) range(Number(p[1]), Number(p[2] ?? p[1]));
  for (const m of text.matchAll(/\b([PRFXS])([1-9])(?:\s*[–-]\s*\1?([1-9]))?\b/g))
    range(Number(m[2]), Number(m[3] ?? m[2]), m[1]);
  return out;
}

// Every file of core/ and its folders: a rule cited in core/plan/pods.ts counts as one in core/pods.ts did.
const coreSources = readdirSync(join(ROOT, "core"), { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".ts"))
  .map((f) => `core/${f}`);

/** GitHub's slug of a heading. */
const slug = (heading: string): string =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, "")
    .trim()
    .replace(/\s/g, "-");
const HEADINGS = new Set([...DESIGN.matchAll(/^#+ (.+)$/gm)].map((m) => slug(m[1]!)));

describe("the RULES index", () => {
  it("holds every rule the planner's steps and core's comments cite (derived from the code)", () => {
    const fromSteps = STEPS.flatMap((s) => (STEP_RULES as Record<string, readonly string[]>)[s.name] ?? []);
    const fromCore = coreSources.flatMap((f) => [...cited(read(f))]);
    const missing = [...new Set([...fromSteps, ...fromCore])].filter((id) => !(id in RULES));
    expect(missing).toEqual([]);
    // Every step of the table, and only those, carries out at least one rule.
    expect(STEPS.map((s) => s.name).sort()).toEqual(Object.keys(STEP_RULES).sort());
  });

  it("holds every rule docs/design.md states, and no other", () => {
    const stated = [...DESIGN.matchAll(/<a id="rule-([^"]+)"><\/a>/g)].map((m) => m[1]!);
    expect(stated.sort()).toEqual(IDS.filter((id) => RULES[id].anchor.startsWith("rule-")).sort());
  });

  it.each(IDS)("rule %s: its functions exist where it says", (id) => {
    for (const fn of RULES[id].fns) {
      const [module, name] = fn.split("#") as [string, string];
      expect(existsSync(join(ROOT, module)), fn).toBe(true);
      expect(read(module), fn).toMatch(new RegExp(`(function|const|let)\\s+${name}\\b`));
    }
  });

  it.each(IDS)("rule %s: its tests exist and name it", (id) => {
    expect(RULES[id].tests.length).toBeGreaterThan(0);
    for (const test of RULES[id].tests) {
      expect(existsSync(join(ROOT, test)), test).toBe(true);
      const text = read(test);
      const names = RULES[id].anchor.startsWith("rule-")
        ? cited(text).has(id)
        : text.toLowerCase().includes(id.toLowerCase());
      expect(names, `${test} names ${id}`).toBe(true);
    }
  });

  it.each(IDS)("rule %s: docs/design.md states it once, at its anchor", (id) => {
    const { anchor } = RULES[id];
    if (!anchor.startsWith("rule-")) {
      expect(HEADINGS.has(anchor), `a heading #${anchor}`).toBe(true);
      return;
    }
    expect(DESIGN.split(`<a id="${anchor}"></a>`).length - 1).toBe(1);
  });

  it("no other doc states a rule: they link to docs/design.md#rule-<id>", () => {
    const docs = [
      "README.md",
      ...readdirSync(join(ROOT, "docs"))
        .filter((f) => f.endsWith(".md") && f !== "design.md")
        .map((f) => `docs/${f}`),
    ];
    const stating = docs.filter(
      (d) => /<a id="rule-/.test(read(d)) || /^\s*[-*] \*{0,2}[PRFXS][1-9]\.\s/m.test(read(d)),
    );
    expect(stating).toEqual([]);
    // A guide's table of rules (`| # | …`: pods.md, operating.md, finalize.md) explains each rule in
    // its own words; its id cell links to the statement, so the rule has one home.
    const bare = docs.flatMap((d) => {
      let inRuleTable = false;
      return read(d)
        .split("\n")
        .flatMap((line, i) => {
          if (!line.startsWith("|")) inRuleTable = false;
          else if (line.startsWith("| # |")) inRuleTable = true;
          const id = /^\| ([0-9]+|[PRFXS][1-9]) \|/.exec(line)?.[1];
          return inRuleTable && id !== undefined && IDS.includes(id as (typeof IDS)[number])
            ? [`${d}:${i + 1} ${id}`]
            : [];
        });
    });
    expect(bare, "rule ids in a guide's table without a link to docs/design.md#rule-<id>").toEqual([]);
    // Links to a rule name an anchor that exists.
    for (const d of docs)
      for (const m of read(d).matchAll(/design\.md#(rule-[\w-]+)/g))
        expect(DESIGN, `${d} links #${m[1]}`).toContain(`<a id="${m[1]}"></a>`);
  });
});
