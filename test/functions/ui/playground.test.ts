// `claimstep serve --cluster sim` in-process, as the playground runs it (issue 24 item 19): its
// pages say their times are the simulated cluster's clock; served against a real cluster they
// would not (the harness's default: no clock note). Stopped with the SIGTERM its handler awaits.
import { describe, expect, it } from "vitest";
import { serveFromEnv } from "../../../functions/server.js";

const TOKEN = "playground-viewer-token";

describe("serve --cluster sim (the playground)", () => {
  it("its list and set pages say the times are on the simulated cluster's clock", async () => {
    let url: string | undefined;
    let done: Promise<number> | undefined;
    const listening = new Promise<void>((resolve) => {
      done = serveFromEnv({
        cluster: "sim:grow",
        port: 0,
        env: { CLAIMSTEP_VIEWER_TOKEN: TOKEN, CLAIMSTEP_INTERVAL_SECONDS: "3600" },
        log: (e) => {
          if (e.msg === "status page") {
            url = String(e.url).replace(/\/ui$/, "");
            resolve();
          }
        },
      });
      void done.catch(() => resolve());
    });
    await listening;
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      for (const path of ["/ui", "/ui/default/web"]) {
        const page = await (await fetch(`${url}${path}`, { headers: { cookie: `claimstep_viewer=${TOKEN}` } })).text();
        expect(/<p[^>]*data-clock[^>]*>([^<]*)/.exec(page)?.[1], path).toMatch(/simulated cluster(&#39;|')s clock/);
      }
    } finally {
      process.emit("SIGTERM", "SIGTERM");
      expect(await done).toBe(0);
    }
  });
});
