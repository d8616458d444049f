// What the page serves the same to everyone: the headers every answer carries (its own CSP: our
// script from /ui/app.js, our CSS by its hash, no inline script or style attribute, no frames; no
// caching, no sniffing, no referrer) and that script.
import type { Context, Hono } from "hono";
import { CSS, cspHash, SCRIPT } from "../assets.js";

/** The middleware setting every answer's headers (the CSS's hash computed once, at the first answer). */
export function pageHeaders(): (c: Context, next: () => Promise<void>) => Promise<void> {
  let styleHash: Promise<string> | undefined;
  return async (c, next) => {
    await next();
    styleHash ??= cspHash(CSS);
    c.header(
      "Content-Security-Policy",
      `default-src 'none'; script-src 'self'; style-src ${await styleHash}; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    );
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    c.header("X-Frame-Options", "DENY");
    if (!c.res.headers.get("Cache-Control")) c.header("Cache-Control", "no-store");
  };
}

/** GET /ui/app.js: the page's one script (no-cache, revalidated, where the pages are no-store). */
export function serveScript(app: Hono): void {
  app.get("/ui/app.js", (c) => {
    c.header("Content-Type", "text/javascript; charset=utf-8");
    c.header("Cache-Control", "no-cache");
    return c.body(SCRIPT);
  });
}
