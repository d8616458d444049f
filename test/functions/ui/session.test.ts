// The viewer's session cookie (issue 37, item 5b): the cookie holds a session signed with the viewer
// token (its end, a nonce, an HMAC), never the token; nothing is kept on the server, so another
// replica (deployment.yaml runs two) or Worker isolate reads it; every request checks it again.
import { Hono } from "hono";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Viewer } from "../../../functions/config.js";
import { COOKIE_MAX_AGE_SECONDS } from "../../../functions/ui/session.js";
import { startUi, type UiServer, VIEWER_TOKEN } from "./harness.js";

let ui: UiServer;
const viewers: Viewer[] = [];
beforeEach(async () => {
  viewers.splice(0, viewers.length, { token: VIEWER_TOKEN });
  ui = await startUi({ viewers });
});
afterEach(async () => {
  vi.useRealTimers();
  await ui.close();
});

const login = async (token = VIEWER_TOKEN): Promise<string> => {
  const res = await fetch(`${ui.url}/ui/login`, {
    method: "POST",
    redirect: "manual",
    headers: { origin: ui.url, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token, next: "/ui" }),
  });
  expect(res.status).toBe(303);
  const value = /^claimstep_viewer=([^;]*)/.exec(res.headers.get("set-cookie") ?? "")?.[1];
  expect(value).toBeDefined();
  return decodeURIComponent(value!);
};
const page = (session: string) =>
  fetch(`${ui.url}/ui`, { headers: { cookie: `claimstep_viewer=${encodeURIComponent(session)}` }, redirect: "manual" });

describe("the viewer's session cookie (issue 37, item 5b)", () => {
  // Defect: the cookie held the viewer token itself: whoever read it had the token, for as long as it was valid.
  it("holds a signed session, not the viewer token, and it signs the viewer in", async () => {
    const session = await login();
    expect(session).not.toContain(VIEWER_TOKEN);
    expect(session).toMatch(/^s2\.\d{13}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    expect(await login()).not.toBe(session);
    expect((await page(session)).status).toBe(200);
  });

  // Defect (the first fix): sessions kept in one process's memory signed the viewer out whenever the
  // Service sent a request to the other replica of deployment.yaml, or a Worker request landed on
  // another isolate.
  it("is read by a fresh copy of the session module: nothing of it is kept in memory", async () => {
    vi.resetModules();
    const first = await import("../../../functions/ui/session.js");
    const app1 = new Hono().get("/login", async (c) => {
      await first.keepToken(c, VIEWER_TOKEN);
      return c.text("in");
    });
    const cookie = /^claimstep_viewer=([^;]*)/.exec(
      (await app1.request("/login")).headers.get("set-cookie") ?? "",
    )![1]!;
    vi.resetModules();
    const second = await import("../../../functions/ui/session.js");
    expect(second).not.toBe(first);
    const app2 = new Hono().get("/ui", async (c) => c.json(await second.whoIs(c, viewers, [])));
    const who = await (await app2.request("/ui", { headers: { cookie: `claimstep_viewer=${cookie}` } })).json();
    expect(who).toMatchObject({ ok: true, viewer: { token: VIEWER_TOKEN } });
  });

  it("is read by another server with the same viewers (another replica, another isolate)", async () => {
    const session = await login();
    const other = await startUi({ viewers });
    try {
      const res = await fetch(`${other.url}/ui`, {
        headers: { cookie: `claimstep_viewer=${encodeURIComponent(session)}` },
        redirect: "manual",
      });
      expect(res.status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it("ends with the token's rotation and after the cookie's max age; signing out clears the cookie", async () => {
    const rotated = await login();
    viewers.splice(0, 1, { token: "the-new-viewer-token-0123456789" });
    const refused = await page(rotated);
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain("no longer accepted");
    viewers.splice(0, 1, { token: VIEWER_TOKEN });

    const out = await login();
    const logout = await fetch(`${ui.url}/ui/logout`, {
      method: "POST",
      redirect: "manual",
      headers: {
        cookie: `claimstep_viewer=${encodeURIComponent(out)}`,
        origin: ui.url,
        "content-type": "application/x-www-form-urlencoded",
      },
    });
    expect(logout.headers.get("set-cookie")).toMatch(/claimstep_viewer=;.*Max-Age=0/);

    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    const old = await login();
    vi.setSystemTime(Date.now() + COOKIE_MAX_AGE_SECONDS * 1000 + 1000);
    const ended = await page(old);
    expect(ended.status).toBe(401);
    expect(await ended.text()).toContain("Your session has ended");
  });

  it("a session made up, altered or given a later end is refused and the cookie cleared", async () => {
    const real = await login();
    const [, until, nonce, mac] = real.split(".");
    const flip = (t: string) => (t[0] === "A" ? "B" : "A") + t.slice(1);
    const later = Number(until) + 60 * 60 * 1000;
    for (const forged of [
      `s2.${until}.${"A".repeat(22)}.${"A".repeat(43)}`,
      `s2.${until}.${nonce}.${flip(mac!)}`,
      `s2.${until}.${flip(nonce!)}.${mac}`,
      `s2.${String(Number(until) - 1000)}.${nonce}.${mac}`,
      `s2.${later}.${nonce}.${mac}`,
    ]) {
      const res = await page(forged);
      expect(res.status, forged).toBe(401);
      expect(res.headers.get("set-cookie")).toMatch(/claimstep_viewer=;.*Max-Age=0/);
    }
  });
});
