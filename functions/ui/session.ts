// The status page's viewer: a token of its own (CLAIMSTEP_VIEWER_TOKEN), never a step token,
// entered once into the login form and kept in an HttpOnly, Secure, SameSite=Strict cookie
// scoped to /ui. Every request checks it again (a rotated token signs the viewer out), in time
// that does not depend on where it differs.
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { bearerMatches } from "../auth.js";
import type { Viewer } from "../config.js";

export const COOKIE = "claimstep_viewer";
export const COOKIE_PATH = "/ui";
/** How long the browser keeps the cookie (the token itself may be rotated sooner). */
export const COOKIE_MAX_AGE_SECONDS = 8 * 60 * 60;

export type Who =
  | { ok: true; viewer: Viewer; namespaces: readonly string[] | undefined }
  | { ok: false; reason: string; clear: boolean };

/** Namespaces the viewer may see: its own ∩ CLAIMSTEP_NAMESPACES (undefined: every namespace). */
export function scopeOf(viewer: Viewer, managed: readonly string[]): readonly string[] | undefined {
  if (viewer.namespaces && managed.length) return viewer.namespaces.filter((n) => managed.includes(n));
  return viewer.namespaces ?? (managed.length ? managed : undefined);
}

/** The viewer a token belongs to, if any (every token is compared, whatever matches first). */
export async function viewerOf(token: string, viewers: readonly Viewer[]): Promise<Viewer | undefined> {
  let found: Viewer | undefined;
  for (const v of viewers) if ((await bearerMatches(`Bearer ${token}`, [v.token])) && !found) found = v;
  return found;
}

export async function whoIs(c: Context, viewers: readonly Viewer[], managed: readonly string[]): Promise<Who> {
  const token = getCookie(c, COOKIE);
  if (token === undefined || token === "")
    return { ok: false, reason: "Sign in with a viewer token to see the rollouts.", clear: false };
  const viewer = /^\S{1,512}$/.test(token) ? await viewerOf(token, viewers) : undefined;
  if (!viewer)
    return {
      ok: false,
      reason: "Your viewer token is no longer accepted (it may have been rotated): sign in again.",
      clear: true,
    };
  return { ok: true, viewer, namespaces: scopeOf(viewer, managed) };
}

export function keepToken(c: Context, token: string): void {
  setCookie(c, COOKIE, token, {
    path: COOKIE_PATH,
    httpOnly: true,
    secure: true,
    sameSite: "Strict",
    maxAge: COOKIE_MAX_AGE_SECONDS,
  });
}

export function forgetToken(c: Context): void {
  deleteCookie(c, COOKIE, { path: COOKIE_PATH, httpOnly: true, secure: true, sameSite: "Strict" });
}
