// Issue 27: the set's page lists the claims of removed templates (Decision.orphanedClaims, here
// built by hand) with the command a person runs to delete those no pod mounts; none, no section.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planStep } from "../../../core/plan/plan.js";
import { policyOf } from "../../../core/policy/policy.js";
import { summaryOf } from "../../../core/view/summary.js";
import { setPage } from "../../../core/view/view.js";
import { LiveFragment } from "../../../functions/ui/pages.js";
import { claimsFor, DIRECT, makeSet, snapshot } from "../../core/builders.js";
import { startUi, type UiServer, viewer } from "./harness.js";

const NOW = new Date("2026-11-30T10:00:00Z");
const html = async (node: unknown) => String(await node);

describe("the set page's claims of removed templates", () => {
  const set = makeSet({ live: [{ name: "data", storage: "1Gi" }], desired: [{ name: "data", storage: "2Gi" }] });
  const s = snapshot(set, claimsFor(set));
  const planned = planStep(s, NOW, DIRECT);
  const summary = summaryOf(s, planned, policyOf(set));

  it("lists each kept claim, which pod still mounts it, and the kubectl command for the others", async () => {
    const view = setPage(
      s,
      {
        ...planned,
        orphanedClaims: [
          { claim: "logs-web-1", template: "logs", mounted: true },
          { claim: "logs-web-0", template: "<b>logs</b>", mounted: false },
        ],
      },
      summary,
      [],
    );
    expect(view.orphans?.command).toBe("kubectl delete pvc -n default logs-web-0");
    const page = await html(LiveFragment({ view }));
    expect(page).toContain('<h2 id="orphans">Claims of removed templates (kept; claimstep never deletes a claim)</h2>');
    expect(page).toMatch(
      /<code>logs-web-1<\/code><\/td><td data-label="Template">logs<\/td><td data-label="Mounted" class="wide">still mounted by web-1 until it restarts<\/td>/,
    );
    expect(page).toContain("&lt;b&gt;logs&lt;/b&gt;");
    expect(page).toContain(
      '<pre data-orphans-command="true"><code>kubectl delete pvc -n default logs-web-0</code></pre>',
    );
  });

  it("shows no section without them", async () => {
    const view = setPage(s, planned, summary, []);
    expect(view).not.toHaveProperty("orphans");
    expect(await html(LiveFragment({ view }))).not.toContain('id="orphans"');
  });
});

describe("the set page on sim:remove-template, once cache is removed", () => {
  let ui: UiServer;
  beforeAll(async () => {
    ui = await startUi({ scenario: "remove-template" });
    // Bounded: the scenario ends Complete in well under this many steps.
    for (let i = 0; i < 60; i++) {
      const r = await ui.step(10_000);
      if (r.decision.phase === "Complete" && r.decision.orphanedClaims?.length === 3) break;
    }
  });
  afterAll(() => ui.close());

  it("lists the kept cache claims and the command that deletes them", async () => {
    const res = await fetch(`${ui.url}/ui/default/web`, { headers: viewer() });
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('<h2 id="orphans">Claims of removed templates (kept; claimstep never deletes a claim)</h2>');
    expect(page).toContain("kubectl delete pvc -n default cache-web-0 cache-web-1 cache-web-2");
  });
});
