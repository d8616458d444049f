// Debian's chromium (/usr/bin/chromium, installed by .ci/run) driven by playwright-core, for the
// status page's browser tests and the screenshot script. Closed-network flags: without them
// Chromium's own background connections are refused and slow it down.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const hasChromium = (): boolean => existsSync(CHROMIUM);

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launch(viewport = { width: 1280, height: 800 }): Promise<Browser> {
  const dir = mkdtempSync(join(tmpdir(), "claimstep-chromium-"));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
