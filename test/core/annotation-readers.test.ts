// Issue 38 point 1: claimstep's annotations are read in one place. This test scans core/, adapters/
// and functions/ for reads of a claimstep.io/* annotation (`annotations?.[Keys.x]`, `a[Keys.x]`,
// `x["claimstep.io/…"]` right after an expression, neither assigned to nor deleted: writes, such as
// `{ [Keys.x]: v }` in a patch, `a[Keys.x] = v` or `delete a[Keys.x]`, are allowed anywhere) and
// fails on one outside the policy module (core/policy.ts and core/annotations.ts) that the
// allow-list below does not name, and on an allow-list entry no longer read (so the list only
// shrinks). Not seen: a read through a helper taking the key as a parameter (`oneOf(set, Keys.x)`,
// gitops/set-manifest.ts `text(Keys.x)`).
//
// Reads counted by this scanner (places in files), before issue 38 point 1 (1d12111) → now:
// claimstep.io/status 4 in 3 (decision.ts twice, summary.ts, cluster-support.ts: three parsers, two
// return types) → 1 in core/annotations.ts (recordedStatusOf); remove-claim-templates 8 in 6 → 6 in 5
// (admission.ts's lenient namesIn is removeListOf(…, { lenient: true }); policy.ts's raw length test
// gone); current-revision 3 in 3 (scope.ts, summary.ts, step.ts) and update-revision 1 (cli/status.ts)
// → core/annotations.ts (recordedRevisionsOf); pod-template 6 in 4 → 7 in 5 and pod-template-base
// 3 in 3 → 4 in 4 (policy.ts desiredKeyOf, the recorder's memo key), its parsers 2 (reshape.ts zod,
// desired.ts a loose JSON.parse) → 1 (reshape.ts podTemplateOf). The rest unchanged; the last test
// prints the table.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Keys } from "../../core/keys.js";

const ROOT = new URL("../..", import.meta.url).pathname;
type Key = keyof typeof Keys;

/** The policy module: where claimstep's annotations are read. */
const POLICY_MODULE = new Set(["core/policy.ts", "core/annotations.ts"]);

/**
 * The readers not moved into the policy module yet, each with what it reads and why it stays for
 * now. Moving one: read the policy (or a parser in core/annotations.ts) there, and take its entry out.
 */
const ALLOWED: Record<string, { keys: Key[]; why: string }> = {
  // The per-annotation parsers policyOf composes (one parser per annotation; their home is to become
  // core/annotations.ts, behind policyOf).
  "core/templates.ts": { keys: ["templates"], why: "desiredTemplates: the one parser of the templates annotation" },
  "core/reshape.ts": {
    keys: ["removeTemplates", "podTemplate", "podTemplateBase"],
    why: "removeListOf and podTemplateOf: the one parser of each; reshapeOf's staleness check of the base digest",
  },
  "core/statefulset.ts": {
    keys: ["strategy", "applyVia", "templates"],
    why: "strategyOf, applyViaOf (the parsers), isOptedIn and hasNoClaimTemplates (presence)",
  },
  "core/pod-policy.ts": {
    keys: ["userPartition", "restartAfter", "lastEviction"],
    why: "podPolicyOf's parsers; the recorded partition read again by the partition hold",
  },
  "core/autogrow.ts": { keys: ["autogrow", "autogrownFrom"], why: "autogrowOf (the parser) and autogrow's record" },
  // Records claimstep writes and reads back on its own steps (not the user's policy yet in SetPolicy).
  "core/finalize.ts": {
    keys: [
      "finalize",
      "finalizeFor",
      "ownershipRestored",
      "recreateApproved",
      "recreateRecord",
      "recreatedFrom",
      "strategy",
    ],
    why: "finalizeOf (the parser) and the re-create's records (F1–F5), read back on its own steps",
  },
  "core/plan.ts": {
    keys: ["strategy"],
    why: "the opted-out message quotes the raw value; plan.ts is being restructured",
  },
  // Readers of raw values that still have to go through the policy or a core predicate.
  "core/admission.ts": {
    keys: [
      "finalize",
      "finalizeFor",
      "podCoordination",
      "podTemplate",
      "podTemplateBase",
      "strategy",
      "templates",
      "userPartition",
    ],
    why: "the webhook reads the old and new objects' raw values (presence, size, whether claimstep wrote finalize): issue 38 point 2's change module",
  },
  "core/desired.ts": {
    keys: ["finalize", "finalizeFor", "podTemplate", "podTemplateBase", "removeTemplates", "templates"],
    why: "the desired change compares and carries raw values (presence of the held pod template, its base digest): issue 38 point 2",
  },
  "core/outlook.ts": { keys: ["finalize", "finalizeFor"], why: "the outlook quotes the raw finalize value" },
  "core/view.ts": {
    keys: ["finalizeFor", "podCoordination", "restartPods"],
    why: "podsCoordinated shows pods even when another pod setting is invalid (podPolicyOf would refuse); the finalize hint",
  },
  "core/summary.ts": {
    keys: ["applyVia"],
    why: "the apply mode quotes the invalid value when the policy stopped before it",
  },
  "core/recorder.ts": { keys: ["autogrow"], why: "the threshold memo's key" },
  "functions/cli/run.ts": {
    keys: ["podTemplate", "removeTemplates", "strategy", "templates"],
    why: "run's 'changed since the scenario set it up' compares the raw values",
  },
  "functions/cli/set.ts": {
    keys: ["removeTemplates", "strategy", "userPartition"],
    why: "set's dry run prints the raw values before and after",
  },
  "adapters/sim/scenarios.ts": { keys: ["templates"], why: "a scenario checks the webhook wrote the annotation" },
};

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
  it("no read of a claimstep.io/* annotation outside core/policy.ts, core/annotations.ts and the allow-list", () => {
    const outside = ALL.filter((r) => !POLICY_MODULE.has(r.file) && !ALLOWED[r.file]?.keys.includes(r.key));
    expect(outside.map((r) => `${r.file}:${r.line} reads ${Keys[r.key]}`)).toEqual([]);
  });

  it("every allow-list entry is still read there (an entry moved into the policy is taken out)", () => {
    const stale = Object.entries(ALLOWED).flatMap(([file, { keys }]) =>
      keys.filter((k) => !ALL.some((r) => r.file === file && r.key === k)).map((k) => `${file}: ${Keys[k]}`),
    );
    expect(stale).toEqual([]);
  });

  it("the status record and the recorded revisions are read in core/annotations.ts only", () => {
    for (const key of ["status", "currentRevision", "updateRevision"] as const)
      expect([...new Set(ALL.filter((r) => r.key === key).map((r) => r.file))], Keys[key]).toEqual([
        "core/annotations.ts",
      ]);
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
