// The Node server's limits (functions/server.ts): a request is authenticated before its body is
// read where the scheme allows it (a bearer token is a header), a slow sender is cut off by the
// request timeout, and connections beyond the limit are dropped. Raw sockets on 127.0.0.1: only
// they can send a body that never finishes.
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../functions/app.js";
import { RecentIds } from "../../functions/auth.js";
import { type RunningServer, type ServerLimits, startServer } from "../../functions/server.js";
import { capturedSim, desiredData } from "../support/index.js";

const TOKEN = "limits-token-0123456789abcdef";

let server: RunningServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.close();
  server = undefined;
});

const start = async (limits?: Partial<ServerLimits>) => {
  const cluster = capturedSim(desiredData("2Gi"));
  const app = createApp({
    reader: cluster.reader,
    writers: cluster.writers,
    auth: { bearerTokens: [TOKEN], webhookSecrets: [], replay: new RecentIds() },
    now: () => new Date(),
  });
  server = await startServer({
    app,
    port: 0,
    hostname: "127.0.0.1",
    log: () => {},
    drainMs: 200,
    ...(limits ? { limits } : {}),
  });
  return server.port;
};

/** A raw connection: what it received, and whether (and when, in order) the server closed it. */
const open = (port: number) =>
  new Promise<{ socket: Socket; received: () => string; closed: Promise<void> }>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    sockets.push(socket);
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (d) => (text += d));
    socket.on("error", () => undefined); // a reset is a close here
    const closed = new Promise<void>((r) => socket.once("close", () => r()));
    socket.once("connect", () => resolve({ socket, received: () => text, closed }));
    socket.once("error", reject);
  });

/** Resolves once `received()` holds `what`, or the socket closes (then the caller checks). */
const receivedOrClosed = async (c: { received: () => string; closed: Promise<void> }, what: string) => {
  let done = false;
  const closed = c.closed.then(() => (done = true));
  for (let i = 0; i < 2000 && !done && !c.received().includes(what); i++)
    await Promise.race([closed, new Promise((r) => setTimeout(r, 10))]);
  return c.received();
};

const stalledPost = (path: string, headers: string[], declared: number, sent: number) =>
  [
    `POST ${path} HTTP/1.1`,
    "Host: 127.0.0.1",
    "Content-Type: application/json",
    `Content-Length: ${declared}`,
    ...headers,
    "",
    "",
  ].join("\r\n") + "x".repeat(sent);

describe("authentication before the body", () => {
  // Defect: every POST route read its whole body (up to the 256 KiB limit) before authenticating:
  // a client without a token could hold that much memory per connection, for as long as it liked.
  it("answers 401 to a bearer route without credentials while the body is still unfinished", async () => {
    const c = await open(await start());
    c.socket.write(stalledPost("/v1/steps", [], 100_000, 10)); // 99,990 bytes never come
    const text = await receivedOrClosed(c, "\r\n\r\n{");
    expect(text).toMatch(/^HTTP\/1\.1 401 /);
    expect(text).toMatch(/www-authenticate: Bearer realm="claimstep"/i);
  }, 10_000);

  it("answers 401 to a wrong bearer token while the body is still unfinished, on every POST route", async () => {
    const port = await start();
    for (const path of ["/v1/steps", "/v1/statefulsets/default/web/templates", "/v1/relay"]) {
      const c = await open(port);
      c.socket.write(stalledPost(path, ["Authorization: Bearer not-the-token-0123456789"], 100_000, 10));
      const text = await receivedOrClosed(c, "the bearer token is not valid");
      expect(text, path).toMatch(/^HTTP\/1\.1 401 /);
      expect(text, path).toContain("the bearer token is not valid");
    }
  }, 10_000);

  it("answers 403 to a valid bearer token on /v1/relay (events must be signed) while the body is still unfinished", async () => {
    const c = await open(await start());
    c.socket.write(stalledPost("/v1/relay", [`Authorization: Bearer ${TOKEN}`], 100_000, 10));
    const text = await receivedOrClosed(c, "must be signed");
    expect(text).toMatch(/^HTTP\/1\.1 403 /);
  }, 10_000);

  it("still reads the body of an authenticated request, within the limit", async () => {
    const port = await start();
    const res = await fetch(`http://127.0.0.1:${port}/v1/steps`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ namespace: "default", name: "web", dryRun: true }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).outcome).toEqual({ kind: "dry-run" });
  });
});

describe("timeouts and the connection limit", () => {
  // Defect: Node's defaults (a request may take 300 s, its headers 60 s): a slow sender held its
  // connection for minutes.
  it("closes a slow sender's connection after the request timeout, with 408", async () => {
    const c = await open(await start({ requestTimeoutMs: 300, headersTimeoutMs: 200, checkIntervalMs: 50 }));
    c.socket.write(stalledPost("/v1/steps", [`Authorization: Bearer ${TOKEN}`], 1000, 10)); // authenticated, then stalls
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
  }, 10_000);

  it("closes a connection whose headers never finish after the headers timeout", async () => {
    const c = await open(await start({ requestTimeoutMs: 300, headersTimeoutMs: 200, checkIntervalMs: 50 }));
    c.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
  }, 10_000);

  // Defect: no limit: every connection a client opened was accepted and kept.
  it("drops connections beyond maxConnections, and accepts again once one closes", async () => {
    const port = await start({ maxConnections: 2 });
    const a = await open(port);
    const b = await open(port);
    a.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    b.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    expect(await receivedOrClosed(a, '{"ok":true}')).toMatch(/^HTTP\/1\.1 200 /);
    expect(await receivedOrClosed(b, '{"ok":true}')).toMatch(/^HTTP\/1\.1 200 /);
    const third = await open(port);
    third.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    await third.closed;
    expect(third.received()).toBe(""); // dropped: no answer
    a.socket.destroy();
    await a.closed;
    // The server counts the close asynchronously: retry a bounded number of times.
    let answer = "";
    for (let i = 0; i < 50 && !answer.startsWith("HTTP/1.1 200"); i++) {
      const again = await open(port);
      again.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      answer = await receivedOrClosed(again, '{"ok":true}');
      again.socket.destroy();
    }
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  }, 10_000);

  it("has the documented defaults", async () => {
    const { SERVER_LIMITS } = await import("../../functions/server.js");
    expect(SERVER_LIMITS).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 512,
      checkIntervalMs: 1_000,
      routeConnections: 32,
    });
  });
});
