// Every command the docs show, run against the simulated cluster, so that the README's tour and
// each doc's "Try it" and walk-through blocks stay true: the commands are extracted from the
// Markdown (fenced blocks: `$ cmd` lines, or every line of a sh block; and the inline `npm start …`
// / `claimstep …` spans of the README's tour and of "Try it" paragraphs), run in-process through
// the CLI's own `main` (as bin/claimstep.js would run them; `npm start -- X` is package.json's
// start script with X appended), one document's commands in order on one state directory (a
// walk-through builds on its earlier commands), documents in parallel. Asserted: the exit code
// (a `# … exit N` comment or a "(exit N" after an inline span says which; otherwise 0, or 0/2 for
// `npm start`, whose scenarios end Complete or Blocked), and every output line the doc shows
// under a command that is not elided (`…`) or clock-dependent. Commands that need a real
// cluster, a server or a file of the reader's are skipped, each with its reason (listed).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { applyScenarioManifest } from "../../adapters/sim/scenarios.js";
import { type CliIO, main } from "../../functions/cli.js";
import { ROOT } from "../support/spawn-cli.js";

interface DocCommand {
  doc: string;
  line: number;
  /** As the doc shows it (without a trailing comment). */
  text: string;
  comment: string;
  /** The output the doc shows under it (text/console blocks). */
  output: string[];
  /** Exit code the doc states, if it does. */
  exit?: number;
}

const SHELL_FENCES = /^(sh|shell|bash|console|text|)$/;
const COMMAND =
  /^(?:npx\s+)?(?:claimstep|kubectl claimstep)\b|^npm (?:start|ci|test|pack|install)\b|^[A-Z_]+=\S+\s+(?:npx\s+)?claimstep\b|^export\s/;

/** `cmd  # comment` → [cmd, comment] (a `#` inside quotes is not a comment; the docs have none). */
function splitComment(line: string): [string, string] {
  const at = line.search(/\s#\s/);
  return at < 0
    ? [line.trim(), ""]
    : [
        line.slice(0, at).trim(),
        line
          .slice(at)
          .replace(/^\s*#\s*/, "")
          .trim(),
      ];
}

const exitIn = (text: string): number | undefined => {
  const m = /\bexit (\d)\b/.exec(text);
  return m ? Number(m[1]) : undefined;
};

/** The commands of one Markdown document. `inline`: which inline spans count (the README's tour, "Try it" paragraphs). */
function extractCommands(doc: string, markdown: string): DocCommand[] {
  const lines = markdown.split("\n");
  const found: DocCommand[] = [];
  let fence: string | undefined;
  let heading = "";
  let current: DocCommand | undefined;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const open = /^```(\S*)\s*$/.exec(raw);
    if (open && fence === undefined) {
      fence = open[1]!;
      current = undefined;
      continue;
    }
    if (/^```\s*$/.test(raw) && fence !== undefined) {
      fence = undefined;
      current = undefined;
      continue;
    }
    if (fence !== undefined) {
      if (!SHELL_FENCES.test(fence)) continue;
      const prompted = /^\$ (.*)$/.exec(raw);
      const body = prompted ? prompted[1]! : fence === "sh" || fence === "shell" || fence === "bash" ? raw : undefined;
      if (body !== undefined && COMMAND.test(body.trim())) {
        const [text, comment] = splitComment(body);
        current = {
          doc,
          line: i + 1,
          text,
          comment,
          output: [],
          ...(exitIn(comment) !== undefined ? { exit: exitIn(comment)! } : {}),
        };
        found.push(current);
      } else if (prompted) current = undefined;
      else if (current && fence !== "sh") current.output.push(raw);
      continue;
    }
    if (/^#{1,4} /.test(raw)) heading = raw;
    const inline =
      doc === "README.md" ? /60-second tour/.test(heading) : /Try it/i.test(heading) || /^Try it/.test(raw);
    if (!inline && !/^Try it/.test(raw)) continue;
    for (const m of raw.matchAll(/`([^`]+)`/g)) {
      const span = m[1]!.trim();
      if (!/^(?:npm start|(?:npx )?claimstep )/.test(span)) continue;
      const after = raw.slice((m.index ?? 0) + m[0].length, (m.index ?? 0) + m[0].length + 12);
      found.push({
        doc,
        line: i + 1,
        text: span,
        comment: after,
        output: [],
        ...(exitIn(after) !== undefined ? { exit: exitIn(after)! } : {}),
      });
    }
  }
  return found;
}

/** Why a command is not run here, or undefined: it runs on the simulated cluster. */
function skipReason(c: DocCommand): string | undefined {
  const t = c.text;
  if (/<[a-z-]+>|…/.test(t)) return "a placeholder, not a command";
  if (/^npm (ci|test|pack|install)\b/.test(t) || /^npm ci &&/.test(t))
    return "installs or tests the package, not a claimstep command";
  if (/^export\s/.test(t))
    return t.startsWith("export XDG_STATE_HOME") ? undefined : "sets a variable for a real cluster";
  if (/^kubectl /.test(t)) return "kubectl on a real cluster";
  if (/\bserve\b|\brelay\b/.test(t)) return "a long-running server (the playground's page: test/functions/ui)";
  if (/\s-f\s+\S+\.yaml/.test(t) && !/--cluster sim/.test(t)) return "needs a real cluster and the reader's manifest";
  if (/^npm start\b/.test(t)) return undefined;
  if (/--cluster sim\b|--cluster sim:/.test(t) || /\bsim reset\b/.test(t)) return undefined;
  if (/^(?:npx )?claimstep (--version|--help|version|help)\b/.test(t)) return undefined;
  return "needs a real cluster (kubeconfig)";
}

/** The CLI's argv for a doc's command (`npm start -- X`: the start script's, then X). */
function argvOf(text: string): string[] {
  const words = (s: string) => s.split(/\s+/).filter(Boolean);
  if (text.startsWith("npm start")) {
    const script = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } })
      .scripts.start;
    const base = words(script.replace(/^node bin\/claimstep\.js\s+/, ""));
    const extra = text.replace(/^npm start\s*(--)?\s*/, "");
    return [...base, ...words(extra)];
  }
  return words(text.replace(/^(?:[A-Z_]+=\S+\s+)*(?:npx\s+)?(?:kubectl\s+)?claimstep\s*/, ""));
}

/** The manifests the docs' commands read: the repository's examples/ (issue 39: the README's tour
 * named a web.yaml the repository did not ship). */
const EXAMPLES = readdirSync(join(ROOT, "examples")).map((f) => `examples/${f}`);

/** A line the doc shows, in a form that survives the clock and column widths. */
const normal = (s: string) =>
  s
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>")
    .replace(/\s+/g, " ")
    .trim();

/** The lines of a doc's shown output this test can hold the command to. */
const checkable = (output: string[]) => output.map(normal).filter((l) => l && !/…|\.\.\.|<time>|\/tmp\//.test(l));

const DOCS = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

const all = DOCS.flatMap((doc) => extractCommands(doc, readFileSync(join(ROOT, doc), "utf8")));
const skipped = all.filter((c) => skipReason(c) !== undefined);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  console.info(
    `docs commands: ${all.length - skipped.length} run, ${skipped.length} skipped:\n${skipped.map((c) => `  ${c.doc}:${c.line} ${c.text} — ${skipReason(c)}`).join("\n")}`,
  );
});

/**
 * The exit the doc gives: a stated `exit N`; a comment saying Blocked, 2; output that is an error
 * of the CLI's (`claimstep: …`, `claimstep <command>: …`), 1; `npm start`, 0 or 2 (its scenarios end
 * Complete or Blocked); otherwise 0.
 */
function expectedExit(c: DocCommand): number[] {
  if (c.exit !== undefined) return [c.exit];
  if (/\bBlocked\b/.test(c.comment)) return [2];
  if (/^claimstep( [a-z]+)?: /.test(c.output.find((l) => l.trim()) ?? "")) return [1];
  if (c.text.startsWith("npm start")) return [0, 2];
  return [0];
}

async function runDoc(commands: DocCommand[]) {
  const home = mkdtempSync(join(tmpdir(), "claimstep-docs-"));
  dirs.push(home);
  const env: CliIO["env"] = { ...process.env, XDG_STATE_HOME: home, HOME: home, NO_COLOR: "1" };
  delete env.KUBECONFIG;
  const results: { c: DocCommand; code: number; out: string }[] = [];
  for (const c of commands) {
    if (c.text.startsWith("export XDG_STATE_HOME")) continue; // the test's own scratch directory already
    let out = "";
    const io: CliIO = {
      stdout: { write: (s: string) => void (out += s) },
      stderr: { write: (s: string) => void (out += s) },
      env,
    };
    // Run from the checkout, as a reader of the docs does: examples/… resolve there.
    const argv = argvOf(c.text).map((a) => (EXAMPLES.includes(a) ? join(ROOT, a) : a));
    const code = await main(argv, io);
    results.push({ c, code, out });
  }
  return results;
}

describe("every command the docs show", () => {
  it("finds the README's tour and each doc's Try it commands", () => {
    const run = all.filter((c) => skipReason(c) === undefined).map((c) => `${c.doc}: ${c.text}`);
    expect(run).toContain("README.md: npm start");
    expect(run).toContain("README.md: npm start -- --cluster sim:blocked");
    expect(run.filter((c) => c.startsWith("docs/pods.md: npm start")).length).toBe(4);
    expect(run.filter((c) => c.startsWith("docs/finalize.md: npm start")).length).toBe(2);
    expect(run).toContain("docs/deploying.md: npm start -- --cluster sim:autogrow");
  });

  it("every manifest a claimstep command of the docs reads is shipped in examples/", () => {
    const files = all
      .filter((c) => !/^kubectl /.test(c.text))
      .flatMap((c) =>
        [...c.text.matchAll(/(?:^|\s)(?:-f|--filename)[\s=](\S+)/g)].map((m) => `${c.doc}:${c.line} ${m[1]}`),
      );
    expect(files.length).toBeGreaterThan(0);
    expect(
      files.filter((f) => !/ -$/.test(f) && !/<[a-z.-]+>/.test(f) && !EXAMPLES.includes(f.split(" ")[1]!)),
    ).toEqual([]);
  });

  it("examples/web.yaml is the apply scenario's StatefulSet with data at 3Gi", () => {
    const want = applyScenarioManifest("3Gi") as { metadata: { namespace?: string } };
    delete want.metadata.namespace;
    expect(YAML.parse(readFileSync(join(ROOT, "examples/web.yaml"), "utf8"))).toEqual(want);
  });

  const byDoc = new Map<string, DocCommand[]>();
  for (const c of all) if (skipReason(c) === undefined) byDoc.set(c.doc, [...(byDoc.get(c.doc) ?? []), c]);

  it.concurrent.each([...byDoc.keys()])(
    "%s: each command exits as the doc says and prints what it shows",
    async (doc) => {
      const results = await runDoc(byDoc.get(doc)!);
      const wrong: string[] = [];
      for (const { c, code, out } of results) {
        const where = `${c.doc}:${c.line} \`${c.text}\``;
        const want = expectedExit(c);
        if (!want.includes(code))
          wrong.push(
            `${where}: exit ${code} (the doc says ${want.join(" or ")})\n${out.split("\n").slice(0, 6).join("\n")}`,
          );
        if (c.text.startsWith("npm start") && !/invocations?, \d+ claim writes?/.test(out))
          wrong.push(`${where}: no timeline summary in:\n${out.slice(0, 400)}`);
        const shown = normal(out);
        for (const line of checkable(c.output))
          if (!shown.includes(line))
            wrong.push(`${where}: the doc shows "${line}", the command printed:\n${out.slice(0, 600)}`);
      }
      expect(wrong).toEqual([]);
    },
    // A doc's commands run one after the other in-process (operating.md's take ~10 s alone, 32 s
    // beside another file on CI's 2 cores).
    120_000,
  );
});
