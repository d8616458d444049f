// The status page's forms and headers behind the real Node server (test/functions/ui/harness.ts):
// the login and logout bodies read by the one body reader (functions/http/body.ts) whatever their
// framing, the login's `next=` kept to a path of the page, and the event stream never cached.
import { request } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startUi, type UiServer, VIEWER_TOKEN, viewer } from "./ui/harness.js";

let ui: UiServer;
beforeEach(async () => {
  ui = await startUi();
});
afterEach(() => ui.close());

/** POST a form to the page in `pieces` chunks (Transfer-Encoding: chunked, no Content-Length), or with Content-Length when `declared`. */
const postForm = (path: string, form: string, opts: { pieces?: number; declared?: boolean } = {}) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>(
    (resolve, reject) => {
      const url = new URL(ui.url);
      const headers: Record<string, string> = { origin: ui.url, "content-type": "application/x-www-form-urlencoded" };
      if (opts.declared) headers["content-length"] = String(Buffer.byteLength(form));
      else headers["transfer-encoding"] = "chunked";
      const req = request({ host: url.hostname, port: url.port, method: "POST", path, headers }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      });
      req.on("error", reject);
      const pieces = opts.pieces ?? 3;
      const size = Math.max(1, Math.ceil(form.length / pieces));
      for (let i = 0; i < form.length; i += size) req.write(form.slice(i, i + size));
      req.end();
    },
  );

const loginForm = (token: string, next: string) => new URLSearchParams({ token, next }).toString();

describe("the login and logout forms, whatever their framing", () => {
  // Defect: hono/body-limit rebuilt a length-less request with the global Request constructor,
  // which cannot copy @hono/node-server's request: 500 ("Cannot read properties of undefined").
  it("POST /ui/login signs in from a chunked body", async () => {
    const res = await postForm("/ui/login", loginForm(VIEWER_TOKEN, "/ui/default/web"));
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe("/ui/default/web");
    expect(String(res.headers["set-cookie"])).toMatch(/^claimstep_viewer=/);
  });

  it("POST /ui/logout signs out from a chunked body", async () => {
    const res = await postForm("/ui/logout", "bye=1");
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe("/ui/login");
    expect(String(res.headers["set-cookie"])).toMatch(/claimstep_viewer=;.*Max-Age=0/);
  });

  it("still signs in from a body with Content-Length", async () => {
    const res = await postForm("/ui/login", loginForm(VIEWER_TOKEN, "/ui"), { declared: true });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe("/ui");
  });

  it("refuses a form over 4 KiB with 413, chunked or declared, and signs nobody in", async () => {
    const big = loginForm(VIEWER_TOKEN, `/ui/${"x".repeat(5000)}`);
    for (const declared of [false, true]) {
      const res = await postForm("/ui/login", big, { declared, pieces: 8 });
      expect(res.status, `declared: ${declared}`).toBe(413);
      expect(res.headers["set-cookie"]).toBeUndefined();
    }
  });

  it("refuses a cross-site form before reading it (403)", async () => {
    const res = await fetch(`${ui.url}/ui/login`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: "https://evil.example", "content-type": "application/x-www-form-urlencoded" },
      body: loginForm(VIEWER_TOKEN, "/ui"),
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("set-cookie")).toBeNull();
  });
});

describe("the login's next=", () => {
  // Defect: `next` was checked by a pattern on the raw text: dot segments (`/ui/../x`,
  // `/ui/%2e%2e/x`) passed it and the browser resolved them out of the page.
  const cases: Array<[string, string]> = [
    ["/ui/default/web", "/ui/default/web"],
    ["/ui/./default/web", "/ui/default/web"],
    ["/ui/../healthz", "/ui"],
    ["/ui/%2e%2e/healthz", "/ui"],
    ["/ui/.%2E/v1/steps", "/ui"],
    ["//evil.example/ui", "/ui"],
    ["/\\evil.example/ui", "/ui"],
    ["/ui\\..\\healthz", "/ui"],
    ["https://evil.example/ui", "/ui"],
    ["javascript:alert(1)", "/ui"],
    ["/uix", "/ui"],
    ["ui/default/web", "/ui"],
    ["/ui/default/web?x=1#y", "/ui/default/web"],
    ["", "/ui"],
  ];

  it("sends the viewer back only to a path of the page, normalised, else to /ui", async () => {
    for (const [next, expected] of cases) {
      const res = await postForm("/ui/login", loginForm(VIEWER_TOKEN, next), { declared: true });
      expect(res.status, next).toBe(303);
      expect(res.headers.location, next).toBe(expected);
    }
  });

  it("puts only a normalised path in the login form's hidden field", async () => {
    for (const [next, expected] of cases) {
      const res = await fetch(`${ui.url}/ui/login?next=${encodeURIComponent(next)}`, { redirect: "manual" });
      const page = await res.text();
      const value = /name="next" value="([^"]*)"/.exec(page)?.[1];
      expect(value, next).toBe(expected);
    }
  });
});

describe("the event stream", () => {
  // Defect: streamSSE's `Cache-Control: no-cache` (store, revalidate) where every page says no-store.
  it("is sent with Cache-Control: no-store, as the pages are", async () => {
    const controller = new AbortController();
    const res = await fetch(`${ui.url}/ui/default/web/stream`, { headers: viewer(), signal: controller.signal });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.headers.get("cache-control")).toBe("no-store");
    controller.abort();
    await res.body?.cancel().catch(() => undefined);
  });
});
