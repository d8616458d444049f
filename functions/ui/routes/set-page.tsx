// One set's page: GET <base>/:namespace/:name (status, per-ordinal table, next step, events,
// templates), or a page saying why not (not the viewer's namespace, no such set, not readable).
import type { Context, Hono } from "hono";
import { ApiError } from "../../../adapters/api-error.js";
import type { SetRef } from "../../../core/types.js";
import { MessagePage, SetPage } from "../pages.js";
import { allEvents, allowed, html, refOf, type UiContext, whoOf } from "./context.js";
import { setView } from "./reads.js";
import { signInPage } from "./sign-in.js";

export function serveSetPage(app: Hono, ctx: UiContext): void {
  const { at, every, stream } = ctx;
  app.get(`${ctx.base}/:namespace/:name`, async (c) => {
    const who = await whoOf(ctx, c);
    if (!who.ok) return signInPage(c, who.reason, 401, who.clear);
    const ref = refOf(c);
    if (ref && !allowed(who.namespaces, ref.namespace)) {
      return html(
        c,
        <MessagePage
          title="Not allowed"
          heading={`Namespace ${ref.namespace} is not yours to see`}
          message={`This viewer token does not see namespace ${ref.namespace}.`}
          signedIn={true}
          at={at}
        />,
        403,
      );
    }
    try {
      if (!ref) throw new Error("bad reference");
      const v = await setView(ctx, ref, allEvents(c));
      return html(
        c,
        <SetPage view={v.view} events={v.events} every={every} stream={stream} at={at} clock={ctx.deps.clock} />,
      );
    } catch (err) {
      return problemPage(ctx, c, ref, err);
    }
  });
}

/** A set that is not a set's name, does not exist, or could not be read: a page naming it. */
function problemPage({ at, log }: UiContext, c: Context, ref: SetRef | undefined, err: unknown) {
  const named = ref ? `${ref.namespace}/${ref.name}` : `${c.req.param("namespace")}/${c.req.param("name")}`;
  if (!ref)
    return html(
      c,
      <MessagePage
        title="Not found"
        heading="Not found"
        message={`"${named}" is not a StatefulSet name (namespace/name)`}
        signedIn={true}
        at={at}
      />,
      404,
    );
  if (err instanceof ApiError && err.kind === "NotFound") {
    return html(
      c,
      <MessagePage
        title="Not found"
        heading={`StatefulSet ${named} not found`}
        message={`No StatefulSet ${named}: check the name and the namespace.`}
        signedIn={true}
        at={at}
      />,
      404,
    );
  }
  const message = err instanceof Error ? err.message : String(err);
  log({ msg: "ui read failed", namespace: ref.namespace, name: ref.name, error: message });
  return html(
    c,
    <MessagePage
      title="Unavailable"
      heading={`StatefulSet ${named} could not be read`}
      message={message}
      signedIn={true}
      at={at}
    />,
    502,
  );
}
