// The status page's routes, mounted into the one Hono app (functions/app.ts), so the Worker and
// the Node server serve it alike:
//   GET  /ui                        the opted-in sets the viewer may see (it polls /ui/sets)
//   GET  /ui/sets                   the list's live part once
//   GET  /ui/:namespace/:name       one set: status, per-ordinal table, next step, events, templates
//   GET  /ui/:namespace/:name/stream    server-sent events: the live part, re-rendered when it changes
//   GET  /ui/:namespace/:name/fragment  the live part once (polling, where a runtime cannot stream)
//   GET  /ui/login, POST /ui/login, POST /ui/logout, GET /ui/app.js
// With several clusters (functions/fleet/entry.ts) each cluster's app serves its list and set
// pages under /ui/clusters/<name> (the default cluster's under /ui), and /ui/clusters/<unknown>
// is a 404 page naming the configured clusters.
// Read-only: it loads and plans (the step's dry run, functions/dry-run.ts: no write) and lists
// Events; nothing else. The list and the set page show where each set stands as `claimstep status`
// does (core/view/summary.ts): one plan per set.
import { Hono } from "hono";
import { type UiDeps, uiContext } from "./routes/context.js";
import { serveList } from "./routes/list.js";
import { serveLive } from "./routes/live.js";
import { serveNotFound, serveUnknownCluster } from "./routes/not-found.js";
import { serveSetPage } from "./routes/set-page.js";
import { serveSignIn } from "./routes/sign-in.js";
import { pageHeaders, serveScript } from "./routes/static.js";

export type { UiOptions } from "./routes/context.js";

/**
 * The page's routes on one Hono app, each group in its own module (functions/ui/routes/), sharing
 * one context. Registered in this order, which is Hono's order of matching: /ui/clusters/… before
 * a set's /ui/:namespace/:name (a cluster's name would read as a namespace), the 404 last.
 */
export function uiRoutes(deps: UiDeps): Hono {
  const app = new Hono();
  const ctx = uiContext(deps);
  const headers = pageHeaders();
  app.use("/ui", headers);
  app.use("/ui/*", headers);
  serveScript(app);
  serveSignIn(app, ctx);
  if (ctx.at && ctx.base === "/ui") serveUnknownCluster(app, ctx, ctx.at);
  serveList(app, ctx);
  serveSetPage(app, ctx);
  serveLive(app, ctx);
  serveNotFound(app);
  return app;
}
