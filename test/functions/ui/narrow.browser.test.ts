// The status page at a phone's width, and the list page following the sets, in a real headless
// Chromium (issue 24 item 19). At 390 px wide no page is wider than the screen (the tables are
// stacked rows, the timeline's table scrolls inside its own box: layout.browser.test.ts measures the
// set page's layout, issue 39); the list page changes by itself when the cluster steps. Skipped
// (saying why) only where /usr/bin/chromium is absent.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Browser, CHROMIUM, hasChromium, launch } from "./browser.js";
import { makeHostile, startUi, type UiServer, VIEWER_TOKEN } from "./harness.js";

if (!hasChromium())
  console.warn(`status page narrow-screen tests skipped: ${CHROMIUM} is absent (apt-get install chromium)`);

const WIDTH = 390;
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

describe.skipIf(!hasChromium())("the status page at 390 px, and the list page live, in Chromium", () => {
  let browser: Browser;
  let ui: UiServer | undefined;
  let page: Page;

  beforeAll(async () => {
    browser = await launch({ width: WIDTH, height: 844 });
  }, 60_000);
  afterAll(() => browser?.close());
  afterEach(async () => {
    await page?.close();
    await browser.context.clearCookies();
    await ui?.close();
    ui = undefined;
  });

  async function open(scenario?: "quota") {
    ui = await startUi({ ...(scenario ? { scenario } : {}), clock: "simulated" });
    page = await browser.context.newPage();
    await browser.context.addCookies([{ name: "claimstep_viewer", value: VIEWER_TOKEN, url: ui.url }]);
  }

  /** How much wider than the screen the document is at `path` (0: not at all). */
  async function overflow(path: string): Promise<{ path: string; scrollWidth: number }> {
    await page.goto(`${ui!.url}${path}`);
    await page.waitForLoadState("load");
    const scrollWidth = await page.evaluate(() =>
      Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
    );
    return { path, scrollWidth };
  }

  it("no page is wider than 390 px: login, list, a set while progressing, blocked with a long message, complete, not found", async () => {
    await open("quota");
    const seen: { path: string; scrollWidth: number }[] = [];
    await browser.context.clearCookies();
    seen.push(await overflow("/ui/login"));
    await browser.context.addCookies([{ name: "claimstep_viewer", value: VIEWER_TOKEN, url: ui!.url }]);
    await ui!.step();
    seen.push(await overflow("/ui"));
    seen.push(await overflow("/ui/default/web"));
    for (let i = 0; i < 80; i++) if ((await ui!.step(20_000)).decision.phase === "Blocked") break;
    await makeHostile(ui!.sim);
    seen.push({ ...(await overflow("/ui/default/web")), path: "/ui/default/web (Blocked, hostile values)" });
    seen.push(await overflow("/ui/default/nope"));
    seen.push(await overflow("/ui/clusters/nope/x"));
    expect(seen.filter((s) => s.scrollWidth > WIDTH)).toEqual([]);
    expect(seen.length).toBe(6);

    // The tables that now scroll inside their own box can be reached and scrolled from the keyboard.
    await page.goto(`${ui!.url}/ui/default/web`);
    await page.evaluate(AXE); // through the DevTools protocol: the page's CSP rightly refuses an inline script
    const result = await page.evaluate(async () => (window as any).axe.run(document, { resultTypes: ["violations"] }));
    const serious = (result.violations as { id: string; impact: string }[])
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => v.id);
    expect(serious).toEqual([]);
  });

  it("a complete set's page, with its re-create hint, fits too", async () => {
    await open();
    for (let i = 0; i < 80; i++) if ((await ui!.step(20_000)).decision.phase === "Complete") break;
    const s = await overflow("/ui/default/web");
    expect(await page.locator("[data-finalize-hint]").count()).toBe(1);
    expect(s.scrollWidth).toBeLessThanOrEqual(WIDTH);
  });

  it("the list page changes by itself when the cluster steps (no reload)", async () => {
    await open();
    await page.goto(`${ui!.url}/ui`);
    await page.evaluate(() => ((window as any).__sameDocument = true));
    expect(await page.locator('tr[data-set="default/web"] [data-field=phase]').textContent()).toBe("-");
    await ui!.step();
    await expect
      .poll(() => page.locator('tr[data-set="default/web"] [data-field=phase]').textContent(), { timeout: 10_000 })
      .toBe("Progressing");
    expect(await page.evaluate(() => (window as any).__sameDocument)).toBe(true);
    expect(await page.locator("#live-status").textContent()).toMatch(/^Updated: 1 set, 1 Progressing/);
  });
});
