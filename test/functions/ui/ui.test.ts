// The status page over HTTP (no browser): sign-in and its cookie, refusals, the pages' content,
// escaping of hostile values, the live part (fragment and server-sent events), and that the page
// and `claimstep status` agree on every field (one view model, core/view/view.ts).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { timeText } from "../../../core/view/view.js";
import { main } from "../../../functions/cli.js";
import { API_TOKEN, HOSTILE, makeHostile, REF, startUi, type UiServer, VIEWER_TOKEN, viewer } from "./harness.js";

let ui: UiServer;
beforeEach(async () => {
  ui = await startUi();
});
afterEach(() => ui.close());

const get = (path: string, headers: Record<string, string> = viewer()) =>
  fetch(`${ui.url}${path}`, { headers, redirect: "manual" });
const login = (token: string, next = "/ui") =>
  fetch(`${ui.url}/ui/login`, {
    method: "POST",
    redirect: "manual",
    headers: { origin: ui.url, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token, next }),
  });

/** The text of the element carrying `data-field="<field>"` (first one), tags stripped, entities decoded. */
function field(page: string, name: string): string | undefined {
  const m = new RegExp(`data-field="${name}"[^>]*>([\\s\\S]*?)</(?:dd|td|span|code)>`).exec(page);
  return m?.[1]
    ?.replace(/<[^>]+>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .trim();
}

describe("signing in", () => {
  it("shows the login form until a viewer token is given, then keeps it in an HttpOnly, Secure, SameSite=Strict cookie", async () => {
    const anonymous = await get("/ui", {});
    expect(anonymous.status).toBe(401);
    const form = await anonymous.text();
    expect(form).toContain('<form class="login" method="post" action="/ui/login">');
    expect(form).toContain("Sign in with a viewer token");

    const res = await login(VIEWER_TOKEN, "/ui/default/web");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/ui/default/web");
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^claimstep_viewer=/);
    for (const attr of ["HttpOnly", "Secure", "SameSite=Strict", "Path=/ui"]) expect(cookie).toContain(attr);
    expect((await get("/ui")).status).toBe(200);
  });

  it("refuses a bad token and the step token with the reason, and never lets the cookie call the step API", async () => {
    const bad = await login("not-the-viewer-token-at-all");
    expect(bad.status).toBe(401);
    expect(await bad.text()).toContain("The viewer token is not valid.");
    expect(bad.headers.get("set-cookie")).toBeNull();

    const step = await login(API_TOKEN);
    expect(step.status).toBe(401);
    expect(await step.text()).toContain("That is a step (API) token");

    const rotated = await get("/ui", viewer("a-viewer-token-no-longer-valid"));
    expect(rotated.status).toBe(401);
    expect(await rotated.text()).toContain("no longer accepted");
    expect(rotated.headers.get("set-cookie")).toMatch(/claimstep_viewer=;.*Max-Age=0/);

    const api = await fetch(`${ui.url}/v1/statefulsets/default/web`, { headers: viewer() });
    expect(api.status).toBe(401);
  });

  it("refuses a login posted from another origin (CSRF), and signs out", async () => {
    const forged = await fetch(`${ui.url}/ui/login`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: "https://evil.example", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: VIEWER_TOKEN }),
    });
    expect(forged.status).toBe(403);
    const out = await fetch(`${ui.url}/ui/logout`, {
      method: "POST",
      redirect: "manual",
      headers: { ...viewer(), origin: ui.url, "content-type": "application/x-www-form-urlencoded" },
    });
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toMatch(/claimstep_viewer=;.*Max-Age=0/);
  });

  it("a namespaced viewer token sees only its namespaces", async () => {
    const list = await (await get("/ui", viewer("prod-viewer-0123456789abcdef"))).text();
    expect(list).toContain("Namespaces: prod.");
    expect(list).not.toContain('data-set="default/web"');
    const set = await get("/ui/default/web", viewer("prod-viewer-0123456789abcdef"));
    expect(set.status).toBe(403);
    expect(await set.text()).toContain("does not see namespace default");
  });
});

describe("the pages", () => {
  it("every answer carries a Content-Security-Policy without unsafe-inline, and no caching", async () => {
    for (const path of ["/ui", "/ui/login", "/ui/default/web", "/ui/nope/nope"]) {
      const res = await get(path);
      const csp = res.headers.get("content-security-policy")!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
      expect(csp).not.toContain("unsafe-inline");
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
    const html = await (await get("/ui/default/web")).text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    expect(html).not.toMatch(/\sstyle="/); // no style attribute
  });

  it("/ui lists the opted-in set with phase, reason, since, revision, progress and apply mode", async () => {
    await ui.step();
    const page = await (await get("/ui")).text();
    expect(page).toContain('data-set="default/web"');
    expect(field(page, "phase")).toBe("Progressing");
    expect(field(page, "reason")).toBe("ClaimUpdated");
    expect(field(page, "updated")).toBe("0/3");
    expect(field(page, "apply")).toBe("direct");
    expect(page).toMatch(/<progress value="0" max="3"/);
  });

  it("an unknown set is a 404 page naming it", async () => {
    const res = await get("/ui/default/nope");
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("StatefulSet default/nope not found");
  });

  it("the set's page holds the per-ordinal table, the next step, the events and the templates", async () => {
    await ui.step();
    const page = await (await get("/ui/default/web")).text();
    for (const o of [2, 1, 0]) expect(page).toContain(`data-ordinal="${o}"`);
    expect(page).toMatch(/data-claim="data-web-2"[\s\S]*?data-field="spec"[^>]*>2Gi</);
    expect(field(page, "next-action")).toBe("PatchClaim default/wal-web-2 storage=1Gi volumeAttributesClassName=gold");
    expect(page).toContain("<table data-events=");
    // Once: no "×n" after the reason (a repeated Event says how often; issue 39).
    expect(page).toMatch(/>ClaimUpdated<\/td><td class="note wide" data-label="Note">data-web-2: storage 1Gi → 2Gi/);
    expect(page).toMatch(
      /data-template="wal"[\s\S]*?volumeAttributesClassName<\/th><td data-label="Live" class="half">silver<\/td><td data-label="Desired" class="half">gold<span class="muted"> \(changed\)/,
    );
  });

  it("hostile values from the cluster are escaped, never markup", async () => {
    await makeHostile(ui.sim);
    await ui.step();
    const page = await (await get("/ui/default/web")).text();
    expect(page).not.toContain(HOSTILE);
    expect(page).not.toMatch(/<img src=x/);
    expect(page).not.toMatch(/<script>window/);
    expect(page).toContain("&lt;img src=x onerror=");
    expect(field(page, "next-message")).toContain(HOSTILE); // decoded: the text is there, as text
  });

  it("the live part: a fragment, and server-sent events that send it again when the cluster moves", async () => {
    const fragment = await get("/ui/default/web/fragment");
    expect(fragment.status).toBe(200);
    expect(await fragment.text()).toMatch(/^<div data-headline="- NotObserved">/);
    expect((await get("/ui/default/web/fragment", {})).status).toBe(401);

    const res = await get("/ui/default/web/stream");
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const events = () => text.split("\n\n").filter((e) => e.startsWith("event: view"));
    while (events().length < 1) text += decoder.decode((await reader.read()).value);
    expect(events()[0]).toContain('data: <div data-headline="- NotObserved">');
    await ui.step();
    while (events().length < 2) text += decoder.decode((await reader.read()).value);
    expect(events()[1]).toContain('data: <div data-headline="Progressing ClaimUpdated 0/3 updated">');
    await reader.cancel();
  });
});

describe("claimstep status and the page agree", () => {
  const run = async (args: string[]) => {
    let out = "";
    const io = { stdout: { write: (s: string) => void (out += s) }, stderr: { write: () => {} }, env: {} };
    const target = {
      label: "sim",
      namespace: "default",
      reader: ui.sim.reader,
      writers: ui.sim.writers,
      listOptedIn: async () => [REF],
      now: () => ui.sim.now(),
      pause: async (ms: number) => ui.sim.advance(ms),
    };
    const code = await main(args, io as never, async () => target as never);
    return { code, out };
  };

  it.each([0, 1, 4, 30])(
    "after %i steps: status, status -o wide, status --watch -o json and the pages show the same fields",
    async (steps) => {
      for (let i = 0; i < steps; i++) await ui.step(i % 3 === 2 ? 60_000 : 10_000);
      const list = await (await get("/ui")).text();
      const page = await (await get("/ui/default/web")).text();
      const wide = (await run(["status", "-o", "wide"])).out.split("\n")[1]!.split(/\s{2,}/);
      // NAMESPACE NAME PHASE REASON UPDATED REVISION CURRENT STRATEGY IN-FLIGHT PENDING BLOCKED ORDINAL SINCE OBSERVED MESSAGE
      // The pages show times in their one format (core/view/view.ts timeText), the same instant as status's.
      expect([field(list, "phase"), field(list, "reason"), field(list, "since"), field(list, "revision")]).toEqual([
        wide[2],
        wide[3],
        timeText(wide[12]!),
        wide[5],
      ]);
      expect(field(list, "updated") ?? "-").toBe(wide[4]);
      expect(field(page, "since")).toBe(timeText(wide[12]!));
      expect(field(page, "observed")).toBe(timeText(wide[13]!));
      expect(field(page, "current-revision")).toBe(wide[6]);

      const watch = await run(["status", "web", "--watch", "-o", "json", "--timeout", "1ms", "--interval", "1s"]);
      const seen = JSON.parse(watch.out.split("\n")[0]!);
      expect([field(page, "phase"), field(page, "reason"), field(page, "message")]).toEqual([
        seen.phase,
        seen.reason,
        seen.message,
      ]);
    },
  );
});
