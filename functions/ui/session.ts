// The status page's viewer: a token of its own (CLAIMSTEP_VIEWER_TOKEN), never a step token,
// entered once into the login form. The cookie (HttpOnly, Secure, SameSite=Strict, scoped to /ui)
// holds a session, never the token: its end and a nonce, signed (HMAC-SHA256) with the viewer
// token. Nothing is kept on the server, so every replica (deployment.yaml runs two) and every
// Worker isolate reads the same session; rotating the token ends its sessions; every request
// checks the signature again. A cookie holding a token itself (set by an earlier version) is still
// read as one. Web Crypto only: the Worker runs this too.
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

/** A session's prefix: `s2.<until ms>.<nonce>.<mac>`. */
const SESSION_PREFIX = "s2.";
const SESSION = /^s2\.(\d{13,15})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;
const encoder = new TextEncoder();

const base64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const fromBase64url = (text: string): Uint8Array<ArrayBuffer> =>
  Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (ch) => ch.charCodeAt(0));

/** The key of a viewer's sessions: HMAC-SHA256 keyed by the viewer token (rotating it ends them). */
const keyOf = (token: string): Promise<CryptoKey> =>
  crypto.subtle.importKey("raw", encoder.encode(token), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
const signed = (until: number, nonce: string): Uint8Array<ArrayBuffer> =>
  encoder.encode(`claimstep viewer session|${until}|${nonce}`);

/** A new session for `token`: its end and a nonce, signed with the token; the token is not in it. */
async function newSession(token: string, until: number): Promise<string> {
  const nonce = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await keyOf(token), signed(until, nonce)));
  return `${SESSION_PREFIX}${until}.${nonce}.${base64url(mac)}`;
}

/**
 * The viewer a session was signed for, if it is well-formed, not ended (nor ending later than a
 * session can: a forged end), and its MAC verifies with a configured viewer's token. Every viewer
 * is tried (crypto.subtle.verify compares in constant time).
 */
async function sessionViewer(
  cookie: string,
  viewers: readonly Viewer[],
  nowMs: number,
): Promise<Viewer | "ended" | undefined> {
  const m = SESSION.exec(cookie);
  if (!m) return undefined;
  const until = Number(m[1]);
  if (until <= nowMs || until > nowMs + COOKIE_MAX_AGE_SECONDS * 1000) return "ended";
  const data = signed(until, m[2]!);
  const mac = fromBase64url(m[3]!);
  let found: Viewer | undefined;
  for (const v of viewers)
    if ((await crypto.subtle.verify("HMAC", await keyOf(v.token), mac, data)) && !found) found = v;
  return found;
}

export async function whoIs(c: Context, viewers: readonly Viewer[], managed: readonly string[]): Promise<Who> {
  const cookie = getCookie(c, COOKIE);
  if (cookie === undefined || cookie === "")
    return { ok: false, reason: "Sign in with a viewer token to see the rollouts.", clear: false };
  // A session; else (a cookie set by an earlier version) the token itself.
  const viewer = cookie.startsWith(SESSION_PREFIX)
    ? await sessionViewer(cookie, viewers, Date.now())
    : /^\S{1,512}$/.test(cookie)
      ? await viewerOf(cookie, viewers)
      : undefined;
  if (viewer === "ended")
    return { ok: false, reason: "Your session has ended (it ran out or you signed out): sign in again.", clear: true };
  if (!viewer)
    return {
      ok: false,
      reason: "Your viewer token is no longer accepted (it may have been rotated): sign in again.",
      clear: true,
    };
  return { ok: true, viewer, namespaces: scopeOf(viewer, managed) };
}

/** Start a session for `token` (checked by the caller): the browser gets it signed, never the token. */
export async function keepToken(c: Context, token: string): Promise<void> {
  setCookie(c, COOKIE, await newSession(token, Date.now() + COOKIE_MAX_AGE_SECONDS * 1000), {
    path: COOKIE_PATH,
    httpOnly: true,
    secure: true,
    sameSite: "Strict",
    maxAge: COOKIE_MAX_AGE_SECONDS,
  });
}

/** Clear the cookie. The session is not kept anywhere to end: a copy of the cookie taken elsewhere
 * lasts until its end (8 hours at most) unless the viewer token is rotated. */
export function forgetToken(c: Context): void {
  deleteCookie(c, COOKIE, { path: COOKIE_PATH, httpOnly: true, secure: true, sameSite: "Strict" });
}
