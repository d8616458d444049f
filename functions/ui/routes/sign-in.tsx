// Signing in and out: GET /ui/login (the form), POST /ui/login (a viewer token, never a step token,
// starts a session), POST /ui/logout; and the sign-in page every page answers a viewer without a
// valid session with. Where the form sends the viewer back to is checked (safeNext).
import type { Context, Hono } from "hono";
import { csrf } from "hono/csrf";
import { bearerMatches } from "../../auth.js";
import { readBody } from "../../http/body.js";
import { LoginPage } from "../pages.js";
import { forgetToken, keepToken, viewerOf } from "../session.js";
import { html, type UiContext, whoOf } from "./context.js";

/** The largest login or logout form read (a token of up to 512 characters and a path). */
export const FORM_LIMIT_BYTES = 4096;

const NEXT_BASE = "http://claimstep.invalid";

/**
 * Where the login form may send the viewer back to: a path of the page only, normalised (dot
 * segments resolved, `%2e` included, query and fragment dropped), else /ui. Refused: anything not
 * starting with a single "/" (`//host`, `/\host`, a scheme), a backslash or control character
 * anywhere (browsers read `\` as `/`), and any path outside /ui once resolved.
 */
export function safeNext(raw: unknown): string {
  if (typeof raw !== "string" || raw.length > 2048 || !raw.startsWith("/") || raw.startsWith("//")) return "/ui";
  if (/[\\\u0000-\u0020\u007f]/.test(raw)) return "/ui";
  let url: URL;
  try {
    url = new URL(raw, NEXT_BASE);
  } catch {
    return "/ui";
  }
  const path = url.pathname;
  if (url.origin !== NEXT_BASE || path.includes("//")) return "/ui";
  if (path !== "/ui" && !path.startsWith("/ui/")) return "/ui";
  return /^\/ui(\/[A-Za-z0-9._~%-]*)*$/.test(path) ? path : "/ui";
}

/** A page's answer to a viewer not signed in: the sign-in form, back to this page once signed in. */
export const signInPage = (c: Context, reason: string, status: number, clear = false) => {
  if (clear) forgetToken(c);
  return html(c, <LoginPage reason={reason} next={safeNext(c.req.path)} />, status);
};

export function serveSignIn(app: Hono, ctx: UiContext): void {
  const { deps, log } = ctx;
  app.get("/ui/login", async (c) => {
    const who = await whoOf(ctx, c);
    if (who.ok) return c.redirect("/ui", 303);
    return html(
      c,
      <LoginPage
        reason={who.clear ? who.reason : "Sign in with a viewer token to see the rollouts."}
        next={safeNext(c.req.query("next"))}
      />,
      200,
    );
  });

  // The one body reader (functions/http/body.ts, any framing: 413 beyond the limit), after the
  // same-origin check, which reads only headers.
  const formBody = readBody({ maxBytes: FORM_LIMIT_BYTES });
  const sameOrigin = csrf();

  app.post("/ui/login", sameOrigin, formBody, async (c) => {
    const form = await c.req.parseBody();
    const token = typeof form.token === "string" ? form.token.trim() : "";
    const next = safeNext(form.next);
    const again = (reason: string) => html(c, <LoginPage reason={reason} next={next} />, 401);
    if (!token) return again("Enter a viewer token.");
    if (await bearerMatches(`Bearer ${token}`, deps.apiTokens)) {
      log({ msg: "ui login refused", why: "step token" });
      return again(
        "That is a step (API) token: the status page takes a viewer token of its own (CLAIMSTEP_VIEWER_TOKEN), read-only.",
      );
    }
    if (!/^\S{1,512}$/.test(token) || !(await viewerOf(token, deps.viewers))) {
      log({ msg: "ui login refused", why: "unknown token" });
      return again("The viewer token is not valid.");
    }
    await keepToken(c, token);
    return c.redirect(next, 303);
  });

  app.post("/ui/logout", sameOrigin, formBody, (c) => {
    forgetToken(c);
    return c.redirect("/ui/login", 303);
  });
}
