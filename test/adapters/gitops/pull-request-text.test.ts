import { describe, expect, it } from "vitest";
import { MAX_TABLE_ROWS, commitMessage, pullRequestBody, pullRequestTitle } from "../../../adapters/gitops/pull-request-text.js";
import type { OrdinalReport } from "../../../core/types.js";
import { growDecision } from "./helpers.js";

const PATH = "clusters/prod/claims/default/data-web-2.yaml";

describe("pull request text", () => {
  it("titles the change, the set, the ordinal and the revision", () => {
    const d = growDecision("2Gi", { vac: "gold" });
    expect(pullRequestTitle(d.action, d)).toBe(`claimstep: default/data-web-2 → storage 2Gi, volumeAttributesClassName gold (web ordinal 2, revision ${d.revision})`);
    expect(commitMessage(d.action, d)).toBe(`claimstep: data-web-2 → storage 2Gi, volumeAttributesClassName gold\n\nStatefulSet default/web, ordinal 2, revision ${d.revision}.`);
  });

  it("renders one table row per claim, marks this pull request's claim, and escapes cells", () => {
    const d = growDecision("2Gi");
    const ordinals: OrdinalReport[] = d.ordinals.map((o) => ({
      ...o,
      claims: o.claims.map((c) => ({ ...c, readiness: { state: "Retrying", message: "resize error | retrying\nsoon" } })),
    }));
    const body = pullRequestBody(d.action, { ...d, ordinals }, PATH);
    const table = body.split("\n").filter((l) => l.startsWith("| "));
    expect(table).toHaveLength(1 + 3);
    expect(table[1]).toBe("| 2 | web-2 | Pending **← this PR** | data-web-2 | 1Gi | 1Gi | 2Gi | – | – | Retrying: resize error \\| retrying soon |");
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
