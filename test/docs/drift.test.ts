// What the docs say about the repository, held to the repository: the RBAC table against the
// manifests, the kustomization's optional Role, one bundle-size figure, the design document they
// cite, the fixture paths they give, the annotation contract against core's keys, and the packed
// README's links against what the package ships.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { Keys } from "../../core/keys.js";
import { ROOT } from "../support/spawn-cli.js";

const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const DOCS = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
/** A Markdown section: from its heading to the next heading of the same or a higher level. */
function section(markdown: string, heading: RegExp): string {
  const lines = markdown.split("\n");
  const start = lines.findIndex((l) => /^#{1,6} /.test(l) && heading.test(l));
  if (start < 0) throw new Error(`no section ${heading}`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  const end = lines.findIndex((l, i) => i > start && new RegExp(`^#{1,${level}} `).test(l));
  return lines.slice(start, end < 0 ? undefined : end).join("\n");
}

describe("docs/deploying.md's permissions", () => {
  const rbac = YAML.parseAllDocuments(read("deploy/kubernetes/rbac.yaml")).map((d) => d.toJS());
  const granted = rbac
    .filter((d) => d?.kind === "ClusterRole")
    .flatMap((r) =>
      r.rules.flatMap((rule: any) =>
        rule.resources.flatMap((res: string) =>
          rule.verbs.map((v: string) => `${rule.apiGroups[0] || "core"} ${res} ${v}`),
        ),
      ),
    );
  const table = section(read("docs/deploying.md"), /Permissions \(RBAC\)/);
  const rows = table
    .split("\n")
    .filter((l) => l.startsWith("| ") && !l.startsWith("| API group") && !l.startsWith("|---"))
    .map((l) => l.split("|").map((c) => c.trim().replace(/`/g, "")));
  const listed = new Set(
    rows.flatMap(([, group, resources, verbs]) =>
      resources!.split(/,\s*/).flatMap((res) => verbs!.split(/,\s*/).map((v) => `${group} ${res.split(" ")[0]} ${v}`)),
    ),
  );

  it("lists every verb the ClusterRoles grant", () => {
    expect(granted.length).toBeGreaterThan(8);
    expect(granted.filter((g) => !listed.has(g))).toEqual([]);
  });

  it("does not say claimstep never writes pods (it evicts them, for restart-pods)", () => {
    expect(granted).toContain("core pods/eviction create");
    expect(table).not.toMatch(/never writes pods|never deletes anything/);
  });
});

describe("deploy/kubernetes/kustomization.yaml", () => {
  it("leaves the optional cluster-wide finalize Role out, and the docs say how to add it", () => {
    const k = YAML.parse(read("deploy/kubernetes/kustomization.yaml"));
    expect(k.resources).not.toContain("rbac-finalize.yaml");
    expect(read("deploy/kubernetes/kustomization.yaml")).toMatch(/#\s*- rbac-finalize\.yaml/);
    expect(read("docs/finalize.md")).toMatch(
      /rbac-finalize\.yaml[^.]*kustomization\.yaml|kustomization\.yaml[^.]*rbac-finalize\.yaml/,
    );
  });
});

describe("the Worker bundle's size", () => {
  it("is given in one place (docs/benchmarks.md), at the budget the bundle test enforces", () => {
    const budget = Number(/GZIP_BUDGET_BYTES = (\d+) \* 1024/.exec(read("test/functions/worker.bundle.test.ts"))![1]);
    const figures = DOCS.flatMap((doc) =>
      [...read(doc).matchAll(/(?<!(?:above|≤) )\b([\d.,]+) KiB (raw|gzip)/g)].map((m) => `${doc}: ${m[0]}`),
    );
    expect(figures.filter((f) => !f.startsWith("docs/benchmarks.md"))).toEqual([]);
    for (const doc of DOCS)
      for (const m of read(doc).matchAll(/(?:above|≤|budget[^.]{0,20}?)\s*(\d+) KiB gzip/g))
        expect(`${doc}: ${m[1]}`).toBe(`${doc}: ${budget}`);
    expect(section(read("docs/deploying.md"), /The bundle/)).toMatch(/benchmarks\.md#/);
  });
});

describe("the design document", () => {
  it("is in the repository as docs/design.md, and the docs cite it there", () => {
    expect(existsSync(join(ROOT, "docs/design.md"))).toBe(true);
    const cites = DOCS.filter((d) => d !== "docs/design.md" && /DESIGN\.md/.test(read(d)));
    expect(cites).toEqual([]);
  });

  it("every fixture path a doc gives exists", () => {
    const missing = DOCS.flatMap((doc) =>
      [...read(doc).matchAll(/`((?:test\/)?fixtures\/[A-Za-z0-9/._-]+\.(?:txt|json|yaml))`/g)]
        .map((m) => m[1]!)
        .filter((p) => !existsSync(join(ROOT, p)))
        .map((p) => `${doc}: ${p}`),
    );
    expect(missing).toEqual([]);
  });
});

describe("the annotation contract (docs/operating.md)", () => {
  it("names every claimstep.io key core reads or writes", () => {
    const contract = section(read("docs/operating.md"), /The annotation contract/);
    const keys = Object.values(Keys).filter((k) => k.startsWith("claimstep.io/"));
    expect(keys).toContain("claimstep.io/autogrow");
    expect(keys.filter((k) => !contract.includes(`\`${k}\``))).toEqual([]);
  });
});

describe("the package", () => {
  const pkg = JSON.parse(read("package.json")) as { repository?: { type: string; url: string }; files: string[] };

  it("names its repository", () => {
    expect(pkg.repository?.type).toBe("git");
    expect(pkg.repository?.url).toMatch(/^git\+https:\/\/github\.com\/[\w.-]+\/[\w.-]+\.git$/);
  });

  it("ships every file its README links to (or the link is absolute)", () => {
    const shipped = (path: string) =>
      ["README.md", "LICENSE", "package.json"].includes(path) ||
      pkg.files.some((f) => (f.endsWith("/") ? path.startsWith(f) : path === f));
    const links = [...read("README.md").matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
      .map((m) => m[1]!)
      .filter((l) => !/^[a-z]+:/.test(l));
    expect(links.length).toBeGreaterThan(5);
    expect(links.filter((l) => !shipped(l))).toEqual([]);
  });
});
