// The page's 404s: a cluster not configured here (several clusters: the default cluster's app gets
// every /ui/clusters/… of no other), and any other path under /ui.
import type { Hono } from "hono";
import { type At, MessagePage } from "../pages.js";
import { html, type UiContext, whoOf } from "./context.js";
import { signInPage } from "./sign-in.js";

/** GET /ui/clusters/<unknown>/…: a page naming the configured clusters, to a signed-in viewer. */
export function serveUnknownCluster(app: Hono, ctx: UiContext, at: At): void {
  app.get("/ui/clusters/:cluster/*", async (c) => {
    const who = await whoOf(ctx, c);
    if (!who.ok) return signInPage(c, who.reason, 401, who.clear);
    const named = `cluster ${c.req.param("cluster").slice(0, 63)}`;
    return html(
      c,
      <MessagePage
        title="Not found"
        heading={`No ${named}`}
        message={`The ${named} is not configured here (configured: ${at.clusters.join(", ")}).`}
        signedIn={true}
        at={at}
      />,
      404,
    );
  });
}

/** Any other path under /ui, any method: 404, whoever asks. */
export function serveNotFound(app: Hono): void {
  app.all("/ui/*", (c) =>
    html(
      c,
      <MessagePage title="Not found" heading="Not found" message={`No page at ${c.req.path}.`} signedIn={false} />,
      404,
    ),
  );
}
