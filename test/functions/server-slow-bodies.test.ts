// Slow bodies against the real Node server on 127.0.0.1 (issue 37, items 2 and 3): a review takes
// an in-flight slot only once its body is in, a body gets BODY_DEADLINE_MS, the forge routes refuse
// a delivery without the forge's headers before reading its body, and the routes anyone can call
// hold at most SERVER_LIMITS.routeConnections each, so /healthz keeps its room. Bounded load: tens
// of sockets; no assertion on durations beyond generous bounds.
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { signGitHubBody } from "../../adapters/gitops/webhook.js";
import { ADMISSION_LABEL } from "../../core/change/admission.js";
import type { SetRef } from "../../core/types.js";
import { createApp } from "../../functions/app.js";
import { RecentIds } from "../../functions/auth.js";
import { configFromEnv } from "../../functions/config.js";
import { BODY_DEADLINE_MS } from "../../functions/http/body.js";
import { type RunningServer, type ServerLimits, startServer } from "../../functions/server.js";
import type { StepResult } from "../../functions/step.js";
import { wire } from "../../functions/wiring.js";
import { fixtureJson } from "../fixtures/apiserver.js";
import { capturedSim } from "../support/index.js";

const TOKEN = "slow-bodies-token-0123456789abcdef";
const GITHUB_SECRET = "github-hook-secret";
const GITLAB_TOKEN = "gitlab-hook-token";

let server: RunningServer | undefined;
const sockets: Socket[] = [];
const timers: ReturnType<typeof setInterval>[] = [];
afterEach(async () => {
  for (const t of timers.splice(0)) clearInterval(t);
  for (const s of sockets.splice(0)) s.destroy();
  await server?.close();
  server = undefined;
});

/** The app as `claimstep serve` wires it (functions/wiring.ts), both forges configured. */
const start = async (limits?: Partial<ServerLimits>, step?: (ref: SetRef) => Promise<StepResult>) => {
  const sim = capturedSim();
  const config = configFromEnv({
    CLAIMSTEP_API_TOKEN: TOKEN,
    CLAIMSTEP_GITHUB_WEBHOOK_SECRET: GITHUB_SECRET,
    CLAIMSTEP_GITLAB_WEBHOOK_TOKEN: GITLAB_TOKEN,
  });
  const app = createApp(
    wire({ client: sim.client, config, now: () => new Date(), replay: new RecentIds(), ...(step ? { step } : {}) })
      .deps,
  );
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

/** A raw connection: what it received, and whether the server closed it. */
const open = (port: number) =>
  new Promise<{ socket: Socket; received: () => string; closed: Promise<void>; isClosed: () => boolean }>(
    (resolve, reject) => {
      const socket = connect(port, "127.0.0.1");
      sockets.push(socket);
      let text = "";
      let isClosed = false;
      socket.setEncoding("utf8");
      socket.on("data", (d) => (text += d));
      socket.on("error", () => undefined); // a reset is a close here
      const closed = new Promise<void>((r) =>
        socket.once("close", () => {
          isClosed = true;
          r();
        }),
      );
      socket.once("connect", () => resolve({ socket, received: () => text, closed, isClosed: () => isClosed }));
      socket.once("error", reject);
    },
  );

/** Resolves once `received()` holds `what`, or the socket closes, or ~`ms` pass (then the caller checks). */
const receivedOrClosed = async (c: { received: () => string; closed: Promise<void> }, what: string, ms = 8000) => {
  let done = false;
  const closed = c.closed.then(() => (done = true));
  for (let i = 0; i < ms / 10 && !done && !c.received().includes(what); i++)
    await Promise.race([closed, new Promise((r) => setTimeout(r, 10))]);
  return c.received();
};

const head = (path: string, headers: string[], declared: number) =>
  [
    `POST ${path} HTTP/1.1`,
    "Host: 127.0.0.1",
    "Content-Type: application/json",
    `Content-Length: ${declared}`,
    ...headers,
    "",
    "",
  ].join("\r\n");

/** A sender that declares `declared` bytes and then sends one every `everyMs` (never done within the test). */
const slowSender = async (port: number, path: string, headers: string[] = [], everyMs = 500) => {
  const c = await open(port);
  c.socket.write(head(path, headers, 100_000));
  timers.push(
    setInterval(() => {
      if (!c.socket.destroyed) c.socket.write("x");
    }, everyMs),
  );
  return c;
};

const review = () => {
  const r = structuredClone(fixtureJson("admission-review-sts-update-vct-1.34.json")) as any;
  r.request.object.metadata.labels = { ...r.request.object.metadata.labels, [ADMISSION_LABEL]: "enabled" };
  return JSON.stringify(r);
};

const postReview = (port: number) =>
  fetch(`http://127.0.0.1:${port}/v1/admission/statefulsets`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: review(),
  });

const healthz = async (port: number) => {
  const c = await open(port);
  c.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  return receivedOrClosed(c, '{"ok":true}', 3000);
};

const SIGNATURE = `X-Hub-Signature-256: sha256=${"ab".repeat(32)}`; // well-formed, not the body's HMAC

describe("admission reviews and slow senders (issue 37, item 2)", () => {
  // Defect: the in-flight counter was taken before the body was read: 8 connections sending a byte
  // every 2 s made 14 of 15 genuine reviews answer 503 for 30 s.
  it("answers genuine reviews 200 while 8 slow senders trickle their bodies", async () => {
    const port = await start();
    for (let i = 0; i < 8; i++) await slowSender(port, "/v1/admission/statefulsets");
    await new Promise((r) => setTimeout(r, 300)); // the slow senders' headers are in
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await postReview(port)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
  }, 15_000);

  it("answers a body not in within BODY_DEADLINE_MS 408 and closes the connection", async () => {
    expect(BODY_DEADLINE_MS).toBe(5_000);
    const port = await start();
    const c = await slowSender(port, "/v1/admission/statefulsets");
    const started = Date.now();
    await c.closed;
    const took = Date.now() - started;
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(c.received()).toMatch(/connection: close/i);
    expect(c.received()).toContain(`the request body did not arrive within ${BODY_DEADLINE_MS / 1000} s`);
    expect(took).toBeGreaterThanOrEqual(BODY_DEADLINE_MS - 500);
    expect(took).toBeLessThan(BODY_DEADLINE_MS + 5_000); // generous: far under the 30 s request timeout
  }, 20_000);
});

describe("the forge webhooks and slow senders (issue 37, item 3)", () => {
  // Defect: the body was read (up to the body limit, for up to 30 s) before anything was checked.
  it("refuses a delivery without the forge's headers before reading any of its body", async () => {
    const port = await start();
    const cases: Array<[string, string[], number, RegExp]> = [
      ["/v1/webhooks/github", [], 401, /X-Hub-Signature-256/],
      ["/v1/webhooks/github", ["X-Hub-Signature-256: sha256=zz"], 401, /X-Hub-Signature-256/],
      ["/v1/webhooks/github", [SIGNATURE, "X-GitHub-Delivery: d-1"], 400, /X-GitHub-Event/],
      ["/v1/webhooks/github", [SIGNATURE, "X-GitHub-Event: pull_request"], 400, /X-GitHub-Delivery/],
      ["/v1/webhooks/gitlab", ["X-Gitlab-Event: Merge Request Hook"], 401, /X-Gitlab-Token/],
      ["/v1/webhooks/gitlab", [`X-Gitlab-Token: ${GITLAB_TOKEN}`, "X-Gitlab-Event-UUID: u-1"], 400, /X-Gitlab-Event/],
      [
        "/v1/webhooks/gitlab",
        [`X-Gitlab-Token: ${GITLAB_TOKEN}`, "X-Gitlab-Event: Merge Request Hook"],
        400,
        /X-Gitlab-Event-UUID/,
      ],
      [
        "/v1/webhooks/gitlab",
        ["X-Gitlab-Token: not-the-token", "X-Gitlab-Event: Merge Request Hook", "X-Gitlab-Event-UUID: u-1"],
        401,
        /token/,
      ],
    ];
    for (const [path, headers, status, names] of cases) {
      const c = await open(port);
      c.socket.write(head(path, headers, 100_000)); // and not one byte of the body
      const text = await receivedOrClosed(c, "}", 3000);
      expect(text, `${path} ${headers.join(", ")}`).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(text, `${path} ${headers.join(", ")}`).toMatch(names);
    }
  }, 30_000);

  // Defect: 520 slow senders held all 512 connections and /healthz got ECONNRESET for 20 s.
  it("keeps room for /healthz when slow senders on the forge route go beyond its share", async () => {
    const port = await start({ maxConnections: 24, routeConnections: 4 });
    const slow = [];
    for (let i = 0; i < 20; i++)
      slow.push(
        await slowSender(port, "/v1/webhooks/github", [
          SIGNATURE,
          "X-GitHub-Event: pull_request",
          `X-GitHub-Delivery: d-${i}`,
        ]),
      );
    // Beyond the share: 503 and closed, without waiting for the body.
    for (const c of slow.slice(4)) await receivedOrClosed(c, "}", 3000);
    const refused = slow.filter((c) => /^HTTP\/1\.1 503 /.test(c.received()));
    expect(refused.length).toBe(16);
    expect(refused[0]!.received()).toMatch(/retry-after: 1/i);
    for (const c of refused) await c.closed;
    // The share's own senders are still being read; /healthz is answered all the same.
    expect(slow.slice(0, 4).every((c) => !c.isClosed() && c.received() === "")).toBe(true);
    for (let i = 0; i < 3; i++) expect(await healthz(port)).toMatch(/^HTTP\/1\.1 200 /);
  }, 20_000);

  it("keeps room for /healthz and genuine reviews when slow senders on the admission route go beyond its share", async () => {
    const port = await start({ maxConnections: 24, routeConnections: 4 });
    const slow = [];
    for (let i = 0; i < 20; i++) slow.push(await slowSender(port, "/v1/admission/statefulsets"));
    for (const c of slow.slice(4)) await receivedOrClosed(c, "}", 3000);
    expect(slow.filter((c) => /^HTTP\/1\.1 503 /.test(c.received())).length).toBe(16);
    for (const c of slow.slice(4)) await c.closed;
    expect(await healthz(port)).toMatch(/^HTTP\/1\.1 200 /);
  }, 20_000);

  it("gives a place back once the body is in: a step that runs afterwards holds none", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const stepped: SetRef[] = [];
    const port = await start({ routeConnections: 1 }, async (ref) => {
      stepped.push(ref);
      await gate;
      throw new Error("not stepped in this test");
    });
    const merged = JSON.stringify({
      action: "closed",
      pull_request: {
        number: 9,
        html_url: "https://github.com/octo/fleet/pull/9",
        merged: true,
        head: { ref: "claimstep/default/web/7b5b44c86f/2", repo: { full_name: "octo/fleet" } },
      },
      repository: { full_name: "octo/fleet" },
    });
    const deliver = async (body: string, event: string, delivery: string) =>
      fetch(`http://127.0.0.1:${port}/v1/webhooks/github`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": event,
          "x-github-delivery": delivery,
          "x-hub-signature-256": await signGitHubBody(GITHUB_SECRET, body),
        },
        body,
      });
    const first = deliver(merged, "pull_request", "d-step");
    for (let i = 0; i < 200 && stepped.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(stepped).toEqual([{ namespace: "default", name: "web" }]); // its step is running
    const ping = await deliver(JSON.stringify({ zen: "Keep it logically awesome." }), "ping", "d-ping");
    expect(ping.status).toBe(202); // the share (1) is free again
    // A body still arriving does hold it: the next one is refused until that body is in.
    const c = await open(port);
    c.socket.write(head("/v1/webhooks/github", [SIGNATURE, "X-GitHub-Event: ping", "X-GitHub-Delivery: d-slow"], 2));
    await new Promise((r) => setTimeout(r, 200));
    expect((await deliver("{}", "ping", "d-refused")).status).toBe(503);
    c.socket.write("{}");
    expect(await receivedOrClosed(c, "}", 3000)).toMatch(/^HTTP\/1\.1 401 /); // not the body's HMAC
    expect((await deliver("{}", "ping", "d-after")).status).toBe(202);
    release();
    expect((await first).status).toBe(500);
  }, 20_000);
});
