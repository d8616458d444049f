// Issue 27: the set's page lists the claims of removed templates (Decision.orphanedClaims, here
// built by hand) with the command a person runs to delete those no pod mounts; none, no section.
import { describe, expect, it } from "vitest";
import { planStep } from "../../../core/plan.js";
import { setPage } from "../../../core/view.js";
import { LiveFragment } from "../../../functions/ui/pages.js";
import { claimsFor, DIRECT, makeSet, snapshot } from "../../core/builders.js";

const NOW = new Date("2026-11-30T10:00:00Z");
const html = async (node: unknown) => String(await node);

describe("the set page's claims of removed templates", () => {
  const set = makeSet({ live: [{ name: "data", storage: "1Gi" }], desired: [{ name: "data", storage: "2Gi" }] });
  const planned = planStep(snapshot(set, claimsFor(set)), NOW, DIRECT);

  it("lists each kept claim, which pod still mounts it, and the kubectl command for the others", async () => {
    const view = setPage(
      set,
      {
        ...planned,
        orphanedClaims: [
          { claim: "logs-web-1", template: "logs", mounted: true },
          { claim: "logs-web-0", template: "<b>logs</b>", mounted: false },
        ],
      },
      [],
    );
    expect(view.orphans?.command).toBe("kubectl delete pvc -n default logs-web-0");
    const page = await html(LiveFragment({ view }));
    expect(page).toContain('<h2 id="orphans">Claims of removed templates (kept; claimstep never deletes a claim)</h2>');
    expect(page).toMatch(
      /<td><code>logs-web-1<\/code><\/td><td>logs<\/td><td>still mounted by web-1 until it restarts<\/td>/,
    );
    expect(page).toContain("&lt;b&gt;logs&lt;/b&gt;");
    expect(page).toContain(
      '<pre data-orphans-command="true"><code>kubectl delete pvc -n default logs-web-0</code></pre>',
    );
  });

  it("shows no section without them", async () => {
    const view = setPage(set, planned, []);
    expect(view).not.toHaveProperty("orphans");
    expect(await html(LiveFragment({ view }))).not.toContain('id="orphans"');
  });
});
