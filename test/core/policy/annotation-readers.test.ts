// Issue 38 point 1: claimstep's annotations are read in one place. This test scans core/, adapters/
// and functions/ for reads of a claimstep.io/* annotation (`annotations?.[Keys.x]`, `a[Keys.x]`,
// `x["claimstep.io/…"]` right after an expression, neither assigned to nor deleted: writes, such as
// `{ [Keys.x]: v }` in a patch, `a[Keys.x] = v` or `delete a[Keys.x]`, are allowed anywhere) and
// fails on one outside the policy module (core/policy/policy.ts, core/policy/annotations.ts, core/policy/records.ts) that the
// allow-list below does not name, and on an allow-list entry no longer read (so the list only
// shrinks). Not seen: a read through a helper taking the key as a parameter (`oneOf(set, Keys.x)`,
// gitops/set-manifest.ts `text(Keys.x)`).
//
// Reads counted by this scanner (places in files), before issue 38 point 1 (1d12111) → 804d9cf → now:
// claimstep.io/status 4 in 3 (decision.ts twice, summary.ts, cluster-support.ts: three parsers, two
// return types) → 1 in core/policy/annotations.ts → 1 in core/policy/records.ts (recordedStatusOf); current-revision
// 3 in 3 and update-revision 1 → core/policy/annotations.ts → core/policy/records.ts (recordedRevisionsOf);
// remove-claim-templates 8 in 6 → 6 in 5 → 1 in core/policy/annotations.ts; pod-template 6 in 4 → 7 in 5 →
// 1 in core/policy/annotations.ts (its parsers 2 → 1, podTemplateOf), pod-template-base 3 in 3 → 4 in 4 → 1;
// volume-claim-update-strategy 8 in 6 → 2 in core/policy/annotations.ts; volume-claim-templates 7 in 7 → 2
// in core/policy/annotations.ts; finalize 6 in 4 → 1; finalize-for 6 in 6 → 1 in core/policy/records.ts;
// user-partition 4 in 3 → 2 in core/policy/records.ts; apply-via, autogrow 2 in 2 → 1 in core/policy/annotations.ts. Files reading one outside the policy module:
// 16 (the allow-list at 804d9cf) → 0: each annotation is read in one file, the user's in
// core/policy/annotations.ts, claimstep's records in core/policy/records.ts (policy.ts reads through rawAnnotation;
// pod-coordination and restart-pods are read through oneOf, unseen). The last test prints the table.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";

const ROOT = new URL("../../..", import.meta.url).pathname;
type Key = keyof typeof Keys;

/**
 * The policy module: where claimstep's annotations are read. core/policy/annotations.ts parses the user's
 * (one parser each), core/policy/records.ts reads back what claimstep writes, core/policy/policy.ts composes them.
 */
const POLICY_MODULE = new Set(["core/policy/policy.ts", "core/policy/annotations.ts", "core/policy/records.ts"]);

/**
 * The readers not moved into the policy module yet, each with what it reads and why it stays for
 * now. Moving one: read the policy (or a parser in core/policy/annotations.ts or core/policy/records.ts) there,
 * and take its entry out.
 */
const ALLOWED: Record<string, { keys: Key[]; why: string }> = {};

/** The claimstep.io/* annotation keys (the labels claimstep puts on claims are not annotations). */
const LABELS = new Set<Key>(["revisionLabel", "orphanedFrom"]);
const ANNOTATION_KEYS = (Object.keys(Keys) as Key[]).filter(
  (k) => Keys[k].startsWith("claimstep.io/") && !LABELS.has(k),
);
const byValue = new Map<string, Key>(ANNOTATION_KEYS.map((k) => [Keys[k], k]));

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return sources(path);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Comment lines blanked, so that text about a key is no read. */
const code = (text: string): string =>
  text
    .split("\n")
    .map((line) => (/^\s*(\/\/|\/\*|\*)/.test(line) ? "" : line))
    .join("\n");

interface Read {
  file: string;
  key: Key;
  line: number;
}

// `[Keys.x]` or `["claimstep.io/…"]` right after an expression (a member access, not an object
// literal's computed key); group 5 an assignment.
const READ = /([\w$)\]]\??\.?|\?\.)\[\s*(?:Keys\.(\w+)|(["'`])(claimstep\.io\/[\w.-]+)\3)\s*\](\s*=(?!=))?/g;

function annotationReads(text: string, file: string): Read[] {
  const reads: Read[] = [];
  const body = code(text);
  for (const m of body.matchAll(READ)) {
    if (m[5]) continue; // a[k] = v
    // delete a.b?.[k]
    if (/delete\s+[\w$.?[\]]*$/.test(body.slice(body.lastIndexOf("\n", m.index) + 1, m.index + m[1]!.length))) continue;
    const key = (m[2] as Key | undefined) ?? byValue.get(m[4]!);
    if (key === undefined || !ANNOTATION_KEYS.includes(key)) continue;
    reads.push({ file, key, line: body.slice(0, m.index).split("\n").length });
  }
  return reads;
}

const ALL = ["core", "adapters", "functions"]
  .flatMap(sources)
  .filter((f) => f !== "core/keys.ts")
  .flatMap((f) => annotationReads(readFileSync(join(ROOT, f), "utf8"), f));

describe("claimstep's annotations are read by the policy module (issue 38 point 1)", () => {
  it("no read of a claimstep.io/* annotation outside the policy module and the allow-list", () => {
    const outside = ALL.filter((r) => !POLICY_MODULE.has(r.file) && !ALLOWED[r.file]?.keys.includes(r.key));
    expect(outside.map((r) => `${r.file}:${r.line} reads ${Keys[r.key]}`)).toEqual([]);
  });

  it("every allow-list entry is still read there (an entry moved into the policy is taken out)", () => {
    const stale = Object.entries(ALLOWED).flatMap(([file, { keys }]) =>
      keys.filter((k) => !ALL.some((r) => r.file === file && r.key === k)).map((k) => `${file}: ${Keys[k]}`),
    );
    expect(stale).toEqual([]);
  });

  it("the status record and the recorded revisions are read in core/policy/records.ts only", () => {
    for (const key of ["status", "currentRevision", "updateRevision"] as const)
      expect([...new Set(ALL.filter((r) => r.key === key).map((r) => r.file))], Keys[key]).toEqual([
        "core/policy/records.ts",
      ]);
  });

  it("each annotation is read in one file: the user's in core/policy/annotations.ts, claimstep's records in core/policy/records.ts", () => {
    const files = new Map<Key, Set<string>>();
    for (const r of ALL) files.set(r.key, (files.get(r.key) ?? new Set()).add(r.file));
    const several = [...files].filter(([, f]) => f.size > 1).map(([k, f]) => `${Keys[k]}: ${[...f].join(", ")}`);
    expect(several).toEqual([]);
  });

  it("the scanner tells reads from writes", () => {
    const reads = (src: string) => annotationReads(src, "x.ts").map((r) => r.key);
    expect(reads("const v = set.metadata.annotations?.[Keys.finalize];")).toEqual(["finalize"]);
    expect(reads("if (a[Keys.strategy] === 'InPlace') {}")).toEqual(["strategy"]);
    expect(reads(`const v = annotations["claimstep.io/apply-via"];`)).toEqual(["applyVia"]);
    expect(reads("f(x)[Keys.status]")).toEqual(["status"]);
    // Writes and text.
    expect(reads("const p = { [Keys.finalize]: 'Recreate', [Keys.status]: s };")).toEqual([]);
    expect(reads("annotations[Keys.finalize] = 'Recreate';")).toEqual([]);
    expect(reads("delete annotations[Keys.templates];")).toEqual([]);
    expect(reads("// annotations?.[Keys.finalize] in a comment")).toEqual([]);
    expect(reads("const m = `set ${Keys.finalize}=Recreate`;")).toEqual([]);
    // A label is no annotation.
    expect(reads("c.metadata.labels?.[Keys.revisionLabel]")).toEqual([]);
  });

  it("reports how many places read each annotation", () => {
    const per = new Map<Key, Set<string>>();
    for (const r of ALL) per.set(r.key, (per.get(r.key) ?? new Set()).add(r.file));
    const table = [...per]
      .sort()
      .map(([k, files]) => `${Keys[k]}: ${ALL.filter((r) => r.key === k).length} in ${files.size}`);
    console.log(`annotation reads (places in files):\n${table.join("\n")}`);
    expect(table.length).toBeGreaterThan(0);
  });
});
