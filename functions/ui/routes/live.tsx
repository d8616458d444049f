// A set's live part, the two ways the set page keeps it current: GET …/:namespace/:name/stream
// (server-sent events, re-rendered while it changes, a bounded number of renders per request) and
// GET …/fragment (once, polled where a runtime cannot stream). Refusals are plain text: 401 (the
// script reloads the page), 403, 404.
import type { Context, Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { ApiError } from "../../../adapters/api-error.js";
import type { SetRef } from "../../../core/types.js";
import { LiveFragment } from "../pages.js";
import { forgetToken } from "../session.js";
import { allEvents, allowed, refOf, type UiContext, whoOf } from "./context.js";
import { setView } from "./reads.js";

/** The set the request may read, or the plain-text refusal to answer. */
async function live(ctx: UiContext, c: Context): Promise<{ ref: SetRef } | Response> {
  const who = await whoOf(ctx, c);
  if (!who.ok) {
    if (who.clear) forgetToken(c);
    return c.text(who.reason, 401);
  }
  const ref = refOf(c);
  if (!ref) return c.text("not a StatefulSet name", 404);
  if (!allowed(who.namespaces, ref.namespace))
    return c.text(`this viewer token does not see namespace ${ref.namespace}`, 403);
  return { ref };
}

/** The live part's markup, or a line saying why the set could not be read. */
async function fragment(ctx: UiContext, ref: SetRef, all: boolean): Promise<string> {
  try {
    const v = await setView(ctx, ref, all);
    return String(<LiveFragment view={v.view} events={v.events} />);
  } catch (err) {
    const message =
      err instanceof ApiError && err.kind === "NotFound"
        ? `StatefulSet ${ref.namespace}/${ref.name} not found.`
        : `could not read the set: ${err instanceof Error ? err.message : String(err)}`;
    return String(
      <div data-headline="unavailable">
        <p class="error" role="alert">
          {message}
        </p>
      </div>,
    );
  }
}

export function serveLive(app: Hono, ctx: UiContext): void {
  const { base, every, renders, stream } = ctx;
  app.get(`${base}/:namespace/:name/fragment`, async (c) => {
    const ok = await live(ctx, c);
    if (ok instanceof Response) return ok;
    return c.html(await fragment(ctx, ok.ref, allEvents(c)));
  });

  app.get(`${base}/:namespace/:name/stream`, async (c) => {
    const ok = await live(ctx, c);
    if (ok instanceof Response) return ok;
    if (!stream) return c.text("streaming is off here: poll the fragment", 404);
    // no-store, as every page (streamSSE says no-cache: store, revalidate).
    const res = streamSSE(c, async (sse) => {
      let aborted = false;
      sse.onAbort(() => {
        aborted = true;
      });
      let last = "";
      const all = allEvents(c);
      for (let i = 0; i < renders && !aborted; i++) {
        const now = await fragment(ctx, ok.ref, all);
        if (now !== last) {
          last = now;
          await sse.writeSSE({ event: "view", data: now, retry: every * 1000 });
        }
        if (i < renders - 1) await sse.sleep(every * 1000);
      }
    });
    res.headers.set("Cache-Control", "no-store");
    return res;
  });
}
