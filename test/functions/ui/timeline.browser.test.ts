// The set page's pictures (issue 25, "look rather than read"), in a real headless Chromium: the
// rollout timeline, one row per ordinal, drawn server-side as SVG after a rollout on the simulated
// cluster, with its text table; and on an autogrow set, each claim's usage bar with the threshold
// marked, read through the same metrics reader autogrow uses (the simulated Prometheus). Skipped
// (saying why) only where /usr/bin/chromium is absent.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Browser, CHROMIUM, hasChromium, launch } from "./browser.js";
import { startUi, type UiServer, VIEWER_TOKEN } from "./harness.js";

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

if (!hasChromium())
  console.warn(`status page timeline tests skipped: ${CHROMIUM} is absent (apt-get install chromium)`);

describe.skipIf(!hasChromium())("the set page's timeline and usage bars in Chromium", () => {
  let browser: Browser;
  let ui: UiServer | undefined;
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    browser = await launch({ width: 390, height: 844 });
  }, 60_000);
  afterAll(() => browser?.close());
  afterEach(async () => {
    await page?.close();
    await browser.context.clearCookies();
    await ui?.close();
    ui = undefined;
  });

  async function open(scenario: "grow" | "pods-claims-first" | "autogrow") {
    ui = await startUi({ scenario });
    page = await browser.context.newPage();
    errors.length = 0;
    page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(`console: ${m.text()}`);
    });
    await browser.context.addCookies([{ name: "claimstep_viewer", value: VIEWER_TOKEN, url: ui.url }]);
  }

  /** axe-core's serious or critical violations on the page as it is. */
  async function axe(): Promise<string[]> {
    await page.evaluate(AXE); // through the DevTools protocol: the page's CSP rightly refuses an inline script
    const result = await page.evaluate(async () => (window as any).axe.run(document, { resultTypes: ["violations"] }));
    return (result.violations as { id: string; impact: string }[])
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => v.id);
  }

  const box = (selector: string) =>
    page.locator(selector).evaluate((el) => {
      const r = el.getBoundingClientRect();
      return { x: r.x, width: r.width, height: r.height };
    });

  it("after a rollout with pods coordinated: one row per ordinal, each written, resized and its pod replaced, with a title, a description and a table", async () => {
    await open("pods-claims-first");
    for (let i = 0; i < 80; i++) if ((await ui!.step(10_000)).decision.phase === "Complete") break;
    await page.goto(`${ui!.url}/ui/default/web`);
    const svg = page.locator("[data-timeline] svg");
    await svg.waitFor({ timeout: 10_000 });
    const ordinals = await page.locator("[data-ordinals] th[scope=rowgroup]").allTextContents();
    expect(ordinals.length).toBeGreaterThan(1);
    const rows = page.locator("[data-timeline] svg [data-row]");
    expect(await rows.evaluateAll((gs) => gs.map((g) => g.getAttribute("data-row")))).toEqual(ordinals);
    expect(await rows.evaluateAll((gs) => gs.map((g) => g.getAttribute("data-stage")))).toEqual(
      ordinals.map(() => "replaced"),
    );
    // Each row draws its three marks, inside the picture, left to right in time.
    for (const o of ordinals) {
      for (const mark of ["written", "resized", "replaced"])
        expect(await page.locator(`[data-row="${o}"] [data-mark=${mark}]`).count(), `${o} ${mark}`).toBe(1);
    }
    const first = await box(`[data-row="${ordinals[0]}"] [data-mark=written]`);
    const last = await box(`[data-row="${ordinals.at(-1)}"] [data-mark=written]`);
    expect(last.x).toBeGreaterThan(first.x);
    const picture = await box("[data-timeline] svg");
    expect(picture.width).toBeGreaterThan(300);
    expect(picture.width).toBeLessThanOrEqual(390);
    // Accessible: an image with a title and a description naming every ordinal, and the same as a table.
    expect(await svg.getAttribute("role")).toBe("img");
    const labelledBy = (await svg.getAttribute("aria-labelledby"))!.split(" ");
    const [title, desc] = await Promise.all(labelledBy.map((id) => page.locator(`#${id}`).textContent()));
    expect(title).toContain("revision");
    for (const o of ordinals) expect(desc).toContain(`web-${o}:`);
    expect(await page.locator("[data-timeline-table] tbody tr").count()).toBe(ordinals.length);
    expect(await page.locator(`[data-timeline-table] tr[data-row="${ordinals[0]}"] td`).allTextContents()).toEqual([
      "replaced",
      expect.stringMatching(/UTC$/),
      expect.stringMatching(/UTC$/),
      expect.stringMatching(/UTC$/),
    ]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.locator("[data-timeline] summary").click(); // the table too
    expect(await axe()).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("mid-rollout without pods coordinated: the ordinal in flight is open-ended, the next ones pending", async () => {
    await open("grow");
    for (let i = 0; i < 3; i++) await ui!.step(10_000);
    await page.goto(`${ui!.url}/ui/default/web`);
    await page.locator("[data-timeline] svg").waitFor({ timeout: 10_000 });
    const stages = await page
      .locator("[data-timeline] svg [data-row]")
      .evaluateAll((gs) => gs.map((g) => `${g.getAttribute("data-row")}:${g.getAttribute("data-stage")}`));
    expect(stages).toEqual(["2:resizing", "1:pending", "0:pending"]);
    expect(await page.locator('[data-row="2"] [data-mark=replaced]').count()).toBe(0);
    // The live part re-renders the timeline as the rollout goes on; the table, once opened, stays open.
    await page.locator("[data-timeline] summary").click();
    for (let i = 0; i < 40; i++) await ui!.step(20_000);
    await expect
      .poll(
        () =>
          page
            .locator("[data-timeline] svg [data-row]")
            .evaluateAll((gs) => gs.map((g) => g.getAttribute("data-stage"))),
        { timeout: 10_000 },
      )
      .toEqual(["resized", "resized", "resized"]);
    expect(await page.locator("[data-timeline] details").getAttribute("open")).not.toBeNull();
    expect(await page.locator("[data-timeline-table]").isVisible()).toBe(true);
    expect(errors).toEqual([]);
  });

  it("an autogrow set: a bar per claim with the threshold marked, from the simulated Prometheus", async () => {
    await open("autogrow");
    await page.goto(`${ui!.url}/ui/default/web`);
    const usage = page.locator("[data-usage] svg");
    await usage.waitFor({ timeout: 10_000 });
    const bars = page.locator("[data-usage] svg [data-claim]");
    expect(await bars.evaluateAll((gs) => gs.map((g) => g.getAttribute("data-claim")))).toEqual([
      "data-web-2",
      "wal-web-2",
      "data-web-1",
      "wal-web-1",
      "data-web-0",
      "wal-web-0",
    ]);
    expect(await page.locator("[data-usage] [data-threshold]").getAttribute("data-threshold")).toBe("80%");
    // data-web-2 has just reached 80%: its bar reaches the threshold line; data-web-0's does not.
    const threshold = await box("[data-usage] [data-threshold]");
    const full = await box('[data-usage] [data-claim="data-web-2"] [data-fill]');
    const low = await box('[data-usage] [data-claim="data-web-0"] [data-fill]');
    const line = threshold.x + threshold.width / 2;
    expect(full.x + full.width).toBeGreaterThanOrEqual(line - 0.5); // at 80.0% it ends on the line
    expect(low.x + low.width).toBeLessThan(threshold.x);
    expect(await page.locator('[data-usage] [data-claim="data-web-2"]').getAttribute("data-over")).toBe("true");
    expect(await page.locator('[data-usage] [data-claim="data-web-0"]').getAttribute("data-over")).toBe("false");
    const desc = await page.locator(`#${(await usage.getAttribute("aria-labelledby"))!.split(" ")[1]}`).textContent();
    expect(desc).toMatch(/data-web-2: 8\d\.\d% of 1Gi used/);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.locator("[data-timeline] summary").click(); // the table too
    expect(await axe()).toEqual([]);
    expect(errors).toEqual([]);
  });
});
