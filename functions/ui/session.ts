// The status page's viewer: a token of its own (CLAIMSTEP_VIEWER_TOKEN), never a step token,
// entered once into the login form. The cookie (HttpOnly, Secure, SameSite=Strict, scoped to /ui)
// holds a random session id, never the token: the process keeps each session's token in memory
// (sessions end when it restarts; on Workers, each isolate has its own) and every request checks
// it again (a rotated token signs the viewer out), in time that does not depend on where it
// differs. Signing out ends the session on the server too. A cookie holding a token itself (set by
// an earlier version) is still read as one. Web Crypto only: the Worker runs this too.
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

/** A session id's prefix (the id: 32 random bytes, base64url). */
const SESSION_PREFIX = "s1.";
/** Sessions one process keeps at most: beyond, the oldest ends. */
const MAX_SESSIONS = 10_000;

/** The sessions of this process: id → the token signed in with and when the session ends (ms). */
const sessions = new Map<string, { token: string; until: number }>();

function newSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return (
    SESSION_PREFIX +
    btoa(String.fromCharCode(...bytes))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "")
  );
}

/** The token of a live session, undefined when the id is unknown or the session ended. */
function sessionToken(id: string, nowMs: number): string | undefined {
  const session = sessions.get(id);
  if (session === undefined) return undefined;
  if (session.until > nowMs) return session.token;
  sessions.delete(id);
  return undefined;
}

export async function whoIs(c: Context, viewers: readonly Viewer[], managed: readonly string[]): Promise<Who> {
  const cookie = getCookie(c, COOKIE);
  if (cookie === undefined || cookie === "")
    return { ok: false, reason: "Sign in with a viewer token to see the rollouts.", clear: false };
  // A session id; else (a cookie set by an earlier version) the token itself.
  const token = cookie.startsWith(SESSION_PREFIX) ? sessionToken(cookie, Date.now()) : cookie;
  if (token === undefined)
    return {
      ok: false,
      reason: "Your session has ended (it ran out, you signed out, or the server restarted): sign in again.",
      clear: true,
    };
  const viewer = /^\S{1,512}$/.test(token) ? await viewerOf(token, viewers) : undefined;
  if (!viewer)
    return {
      ok: false,
      reason: "Your viewer token is no longer accepted (it may have been rotated): sign in again.",
      clear: true,
    };
  return { ok: true, viewer, namespaces: scopeOf(viewer, managed) };
}

/** Start a session for `token` (checked by the caller) and give the browser its id, never the token. */
export function keepToken(c: Context, token: string): void {
  const now = Date.now();
  if (sessions.size >= MAX_SESSIONS) {
    for (const [id, session] of sessions) if (session.until <= now) sessions.delete(id);
    // Still full: the oldest sessions end (insertion order is start order).
    for (const id of sessions.keys()) {
      if (sessions.size < MAX_SESSIONS) break;
      sessions.delete(id);
    }
  }
  const id = newSessionId();
  sessions.set(id, { token, until: now + COOKIE_MAX_AGE_SECONDS * 1000 });
  setCookie(c, COOKIE, id, {
    path: COOKIE_PATH,
    httpOnly: true,
    secure: true,
    sameSite: "Strict",
    maxAge: COOKIE_MAX_AGE_SECONDS,
  });
}

/** End the session on the server (a copy of the cookie is dead too) and clear the cookie. */
export function forgetToken(c: Context): void {
  const id = getCookie(c, COOKIE);
  if (id?.startsWith(SESSION_PREFIX)) sessions.delete(id);
  deleteCookie(c, COOKIE, { path: COOKIE_PATH, httpOnly: true, secure: true, sameSite: "Strict" });
}
