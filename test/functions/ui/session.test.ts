// The viewer's session cookie (issue 37, item 5b): the cookie holds a random session id, never the
// viewer token; the server keeps the session (per process) and checks its token on every request.
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
  it("holds a random session id, not the viewer token, and the id signs the viewer in", async () => {
    const session = await login();
    expect(session).not.toContain(VIEWER_TOKEN);
    expect(session).toMatch(/^s1\.[A-Za-z0-9_-]{43}$/);
    expect(await login()).not.toBe(session);
    expect((await page(session)).status).toBe(200);
  });

  it("a session ends with the token's rotation, with signing out, and after the cookie's max age", async () => {
    const rotated = await login();
    viewers.splice(0, 1, { token: "the-new-viewer-token-0123456789" });
    const refused = await page(rotated);
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain("no longer accepted");
    viewers.splice(0, 1, { token: VIEWER_TOKEN });

    const out = await login();
    await fetch(`${ui.url}/ui/logout`, {
      method: "POST",
      redirect: "manual",
      headers: {
        cookie: `claimstep_viewer=${encodeURIComponent(out)}`,
        origin: ui.url,
        "content-type": "application/x-www-form-urlencoded",
      },
    });
    expect((await page(out)).status).toBe(401); // a copy of the cookie kept elsewhere is dead too

    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    const old = await login();
    vi.setSystemTime(Date.now() + COOKIE_MAX_AGE_SECONDS * 1000 + 1000);
    expect((await page(old)).status).toBe(401);
  });

  it("an id the server does not know (another process's, or made up) is refused and the cookie cleared", async () => {
    const res = await page(`s1.${"A".repeat(43)}`);
    expect(res.status).toBe(401);
    expect(res.headers.get("set-cookie")).toMatch(/claimstep_viewer=;.*Max-Age=0/);
    expect(await res.text()).toContain("Your session has ended (it ran out, you signed out, or the server restarted)");
  });
});
