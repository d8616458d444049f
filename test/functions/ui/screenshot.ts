// `npm run screenshot:ui`: regenerates docs/status-page.png, the set page of default/web on the
// simulated cluster (sim:grow) in the middle of its rollout, at 1280×800 in Debian's chromium, and
// docs/status-page-narrow.png, the same page at 390×844 (a phone) from its ordinals.
import { fileURLToPath } from "node:url";
import { launch } from "./browser.js";
import { startUi, VIEWER_TOKEN } from "./harness.js";

const OUT = fileURLToPath(new URL("../../../docs/status-page.png", import.meta.url));
const NARROW = fileURLToPath(new URL("../../../docs/status-page-narrow.png", import.meta.url));

const ui = await startUi({ everySeconds: 60 });
const browser = await launch({ width: 1280, height: 800 });
try {
  // Mid-rollout: ordinal 2 done, ordinal 1 resizing.
  for (let i = 0; i < 7; i++) await ui.step(i < 2 ? 2_000 : 10_000);
  const page = await browser.context.newPage();
  await page.goto(`${ui.url}/ui/login`);
  await page.fill("#token", VIEWER_TOKEN);
  await Promise.all([page.waitForURL(`${ui.url}/ui`), page.press("#token", "Enter")]);
  await page.goto(`${ui.url}/ui/default/web`);
  await page.waitForSelector("[data-ordinals]");
  await page.screenshot({ path: OUT, fullPage: false });
  console.log(`wrote ${OUT}`);
  // docs/status-page-narrow.png (issue 39): the same page at a phone's width, from its ordinals.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.evaluate(() => document.getElementById("ordinals")?.scrollIntoView());
  await page.screenshot({ path: NARROW, fullPage: false });
  console.log(`wrote ${NARROW}`);
} finally {
  await browser.close();
  await ui.close();
}

// docs/status-page-timeline.png and docs/status-page-usage.png (issue 25): the set page's rollout
// timeline, mid-rollout with pods coordinated (sim:pods-claims-first), and an autogrow set's usage
// bars (sim:autogrow), each figure alone, at 1280×800.
const FIGURES = [
  {
    scenario: "pods-claims-first",
    steps: 13,
    selector: "[data-timeline]",
    out: "../../../docs/status-page-timeline.png",
  },
  { scenario: "autogrow", steps: 0, selector: "[data-usage]", out: "../../../docs/status-page-usage.png" },
] as const;
for (const f of FIGURES) {
  const out = fileURLToPath(new URL(f.out, import.meta.url));
  const shot = await startUi({ everySeconds: 60, scenario: f.scenario });
  const chrome = await launch({ width: 1280, height: 800 });
  try {
    for (let i = 0; i < f.steps; i++) await shot.step(10_000);
    await chrome.context.addCookies([{ name: "claimstep_viewer", value: VIEWER_TOKEN, url: shot.url }]);
    const page = await chrome.context.newPage();
    await page.goto(`${shot.url}/ui/default/web`);
    await page.locator(f.selector).screenshot({ path: out });
    console.log(`wrote ${out}`);
  } finally {
    await chrome.close();
    await shot.close();
  }
}
