// The list: GET <base> (the opted-in sets the viewer may see, each where it stands) and GET
// <base>/sets (its live part once, which the list page polls).
import type { Hono } from "hono";
import { ListFragment, ListPage } from "../pages.js";
import { forgetToken } from "../session.js";
import { html, type UiContext, whoOf } from "./context.js";
import { listed } from "./reads.js";
import { signInPage } from "./sign-in.js";

/** What the list says the viewer sees: every namespace, some, or none. */
const scopeOf = (namespaces: readonly string[] | undefined): string =>
  namespaces === undefined
    ? "All namespaces."
    : namespaces.length
      ? `Namespaces: ${namespaces.join(", ")}.`
      : "No namespace: this viewer token sees none that claimstep manages here.";

export function serveList(app: Hono, ctx: UiContext): void {
  const { base, at, every } = ctx;
  app.get(base, async (c) => {
    const who = await whoOf(ctx, c);
    if (!who.ok) return signInPage(c, who.reason, 401, who.clear);
    const { sets, errors } = await listed(ctx, who.namespaces);
    return html(
      c,
      <ListPage
        sets={sets}
        errors={errors}
        scope={scopeOf(who.namespaces)}
        at={at}
        every={every}
        clock={ctx.deps.clock}
      />,
    );
  });

  // The list's live part, polled by the list page (401 as plain text: the script reloads the page).
  app.get(`${base}/sets`, async (c) => {
    const who = await whoOf(ctx, c);
    if (!who.ok) {
      if (who.clear) forgetToken(c);
      return c.text(who.reason, 401);
    }
    const { sets, errors } = await listed(ctx, who.namespaces);
    return c.html(String(await (<ListFragment sets={sets} errors={errors} at={at} />)));
  });
}
