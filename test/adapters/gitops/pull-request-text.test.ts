import { describe, expect, it } from "vitest";
import {
  commitMessage,
  MAX_TABLE_ROWS,
  pullRequestBody,
  pullRequestTitle,
  raiseBody,
  recreateBody,
} from "../../../adapters/gitops/pull-request-text.js";
import type { OrdinalReport } from "../../../core/types.js";
import { growDecision } from "./helpers.js";

const PATH = "clusters/prod/claims/default/data-web-2.yaml";

describe("pull request text", () => {
  it("titles the change, the set, the ordinal and the revision", () => {
    // docs/design.md rule 19: a template changing size and class writes the size first.
    const d = growDecision("2Gi", { vac: "gold" });
    expect(pullRequestTitle(d.action, d)).toBe(
      `claimstep: default/data-web-2 → storage 2Gi (web ordinal 2, revision ${d.revision})`,
    );
    expect(commitMessage(d.action, d)).toBe(
      `claimstep: data-web-2 → storage 2Gi\n\nStatefulSet default/web, ordinal 2, revision ${d.revision}.`,
    );
  });

  it("renders one table row per claim, marks this pull request's claim, and escapes cells", () => {
    const d = growDecision("2Gi");
    const ordinals: OrdinalReport[] = d.ordinals.map((o) => ({
      ...o,
      claims: o.claims.map((c) => ({
        ...c,
        readiness: { state: "Retrying", message: "resize error | retrying\nsoon" },
      })),
    }));
    const body = pullRequestBody(d.action, { ...d, ordinals }, PATH);
    const table = body.split("\n").filter((l) => l.startsWith("| "));
    expect(table).toHaveLength(1 + 3);
    expect(table[1]).toBe(
      "| 2 | web-2 | Pending **← this PR** | data-web-2 | 1Gi | 1Gi | 2Gi | – | – | Retrying: resize error \\| retrying soon |",
    );
    expect(body).toContain(`Status now: **${d.phase}** (${d.reason})`);
  });

  it("keeps the table within GitHub's body limit on very large sets, this claim's row included", () => {
    const d = growDecision("2Gi");
    const template = d.ordinals[0]!;
    const ordinals: OrdinalReport[] = Array.from({ length: 1000 }, (_, i) => ({
      ...template,
      ordinal: 1000 - i,
      pod: `web-${1000 - i}`,
      claims: template.claims.map((c) => ({ ...c, claim: `data-web-${1000 - i}` })),
    }));
    const action = { ...d.action, claim: "data-web-1", ordinal: 1 };
    const body = pullRequestBody(action, { ...d, ordinals }, PATH);
    const rows = body.split("\n").filter((l) => /^\| (\d+|…) \|/.test(l));
    expect(rows).toHaveLength(MAX_TABLE_ROWS + 1);
    expect(rows.at(-2)).toContain("| 1 | web-1 | Pending **← this PR** | data-web-1 |");
    expect(rows.at(-1)).toContain("800 more claims not shown");
    expect(body.length).toBeLessThan(65_536);
  });
});

describe("text from the cluster or the forge is inert in a body (issue 24, item 8)", () => {
  // Defect: messages were embedded as raw Markdown/HTML: a message became a heading, a tracking
  // image and an @org/everyone mention.
  const HOSTILE =
    "resize failed\n# Pwned\n![t](https://tracker.example/p.png) @org/everyone <img src=x onerror=alert(1)> <script>x</script> [click](https://evil.example) `code` *b* _i_ ~~s~~ | &amp;";

  /** What a renderer would turn into structure: headings, images, links, mentions, HTML. */
  function assertInert(body: string) {
    const lines = body.split("\n");
    expect(lines.filter((l) => /^\s{0,3}#/.test(l))).toEqual([]); // no heading
    expect(body).not.toMatch(/(^|[^\\])!\[/); // no image (`!\[` is escaped)
    expect(body).not.toMatch(/(^|[^\\])\[click\]/); // no link
    expect(body).not.toMatch(/@org\/everyone/); // no mention
    expect(body).not.toMatch(/<(img|script)/i); // no HTML
    expect(body).not.toMatch(/(^|[^\\])\*b\*/);
    expect(body).not.toContain("\n# Pwned");
  }

  it("the status message and a claim's readiness message in a step's body", () => {
    const d = growDecision("2Gi");
    const ordinals: OrdinalReport[] = d.ordinals.map((o) => ({
      ...o,
      claims: o.claims.map((c) => ({ ...c, readiness: { state: "Retrying", message: HOSTILE } })),
    }));
    const body = pullRequestBody(d.action, { ...d, message: HOSTILE, ordinals }, PATH);
    assertInert(body);
    // Still legible: the words are there, escaped.
    expect(body).toContain("resize failed \\# Pwned");
    expect(body).toContain("&lt;img src=x onerror=alert(1)&gt;");
    // The table keeps its columns: one cell per column.
    const row = body.split("\n").find((l) => l.startsWith("| 2 |"))!;
    expect(row.split(/(?<!\\)\|/).length - 2).toBe(10);
  });

  it("autogrow's body: the message, the policy annotation, template names and sizes", () => {
    const d = growDecision("2Gi");
    const action = {
      type: "RaiseTemplate" as const,
      namespace: "default",
      set: "web",
      fromRevision: "abc",
      template: "data",
      from: "1Gi",
      to: "2Gi",
      templates: [],
    };
    const body = raiseBody(
      action as never,
      [{ template: "data`|<b>", from: "1Gi", to: "2Gi" }],
      { ...d, message: HOSTILE },
      PATH,
      "80%` ![x](https://t.example/i.png) `",
    );
    // The policy is one code span (a longer fence than its backticks): verbatim and inert.
    const span = "(`` claimstep.io/autogrow: 80%` ![x](https://t.example/i.png) ` ``)";
    expect(body).toContain(span);
    assertInert(body.replace(span, ""));
    expect(body).not.toContain("<b>");
  });

  it("the re-create body: template values read from the repository and the base branch name", () => {
    const d = growDecision("2Gi");
    const action = {
      type: "ProposeRecreate" as const,
      namespace: "default",
      set: "web",
      revision: "abc",
      templates: [],
    };
    const body = recreateBody(
      action,
      { ...d, message: HOSTILE },
      PATH,
      [
        {
          template: "data",
          field: "labels",
          before: "– ",
          after: "x=![i](https://t.example/i.png) @org/everyone",
        } as never,
      ],
      "main",
    );
    assertInert(body);
  });
});
