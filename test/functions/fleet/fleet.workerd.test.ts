// Fleet mode in the real Workers runtime: `wrangler dev` (workerd, with its local Durable Objects,
// Queues and alarms) serving three clusters — `alpha` (KUBE_API_SERVER, the default) and `beta`,
// simulated API servers on 127.0.0.1, and `down`, a server answering 503 to everything. The cron's
// fan-out, the queue consumer, the set objects' serialization and alarms, the cluster backoff, and
// the replay store across a restart of the runtime (new isolates, the same persisted objects).
// The tests run in order: each continues from the state the previous one left.
import { createServer as createHttpServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookHeaders } from "../../../functions/auth.js";
import { type SocketSim, serveSim, statefulSetObjects, storageClassObjects } from "../../support/index.js";
import { WranglerDev } from "../../support/wrangler-dev.js";

const TOKENS = {
  alpha: "kube-token-alpha-0123456789",
  beta: "kube-token-beta-0123456789",
  down: "kube-token-down-0123456789",
};
const API_TOKEN = "api-token-0123456789abcdef";
const SECRET = `whsec_${btoa("workerd-fleet-secret-0123456789")}`;
const desired = [{ name: "data", storage: "2Gi", storageClassName: "fast" }];

let alpha: SocketSim;
let beta: SocketSim;
let down: Server;
let downUrl = "";
let downRequests = 0;
let dev: WranglerDev;
let base = "";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async <T>(what: string, f: () => T | Promise<T>, ms = 30_000): Promise<NonNullable<T>> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${dev.output.slice(-4000)}`);
    await sleep(200);
  }
};
const patched = (sim: SocketSim, claim: string) =>
  sim.fake.http.requests().some((r) => r.verb === "patch" && r.name === claim);
const bearer = { authorization: `Bearer ${API_TOKEN}` };
const state = async (cluster: string, name: string) =>
  (await (
    await fetch(`${base}/v1/clusters/${cluster}/statefulsets/default/${name}/state`, { headers: bearer })
  ).json()) as any;
const logLines = (msg: string) =>
  dev.output
    .split("\n")
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l.slice(l.indexOf("{"))));

beforeAll(async () => {
  alpha = await serveSim({ token: TOKENS.alpha });
  alpha.fake.seed(...storageClassObjects(), ...statefulSetObjects({ desired }));
  beta = await serveSim({ token: TOKENS.beta });
  beta.fake.seed(
    ...storageClassObjects(),
    ...statefulSetObjects({ desired }),
    ...statefulSetObjects({ name: "db", desired }),
  );
  down = createHttpServer((_req, res) => {
    downRequests++;
    res.writeHead(503, { "content-type": "application/json", "retry-after": "120" });
    res.end(
      JSON.stringify({
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        message: "the server is currently unable to handle the request",
        reason: "ServiceUnavailable",
        code: 503,
      }),
    );
  });
  await new Promise<void>((r) => down.listen(0, "127.0.0.1", r));
  downUrl = `http://127.0.0.1:${(down.address() as { port: number }).port}`;
  const vars = {
    KUBE_API_SERVER: alpha.url,
    KUBE_TOKEN: TOKENS.alpha,
    CLAIMSTEP_DEFAULT_CLUSTER: "alpha",
    CLAIMSTEP_CLUSTERS: JSON.stringify([
      { name: "beta", server: beta.url, tokenSecret: "KUBE_TOKEN_BETA" },
      { name: "down", server: downUrl, tokenSecret: "KUBE_TOKEN_DOWN" },
    ]),
    KUBE_TOKEN_BETA: TOKENS.beta,
    KUBE_TOKEN_DOWN: TOKENS.down,
    CLAIMSTEP_API_TOKEN: API_TOKEN,
    CLAIMSTEP_WEBHOOK_SECRET: SECRET,
    CLAIMSTEP_NAMESPACES: "default",
  };
  dev = await WranglerDev.create({ vars, persistPrefix: "claimstep-fleet-" });
  base = dev.base;
  await dev.start();
}, 150_000);

afterAll(async () => {
  await dev?.dispose();
  await alpha?.close();
  await beta?.close();
  await new Promise((r) => down?.close(r));
});

describe("fleet mode in workerd", () => {
  it("the cron fans out one message per opted-in set of every cluster; each set's object steps it", async () => {
    const res = await fetch(`${base}/__scheduled?cron=*+*+*+*+*`);
    expect(res.status).toBe(200);
    await until(
      "the three sets to be stepped",
      () => patched(alpha, "data-web-2") && patched(beta, "data-web-2") && patched(beta, "data-db-2"),
    );
    const fan = await until("the fan-out log line", () => logLines("fan-out")[0]);
    expect(fan.sent).toBe(3);
    expect(fan.clusters).toEqual(
      expect.arrayContaining([
        { cluster: "alpha", sent: 1 },
        { cluster: "beta", sent: 2 },
        { cluster: "down", error: expect.stringMatching(/^cluster down: .*503|unable to handle/) },
      ]),
    );
    // The down cluster got its two LISTs at once, the sets and the re-create records (no retries
    // inside the invocation: its backoff is the retry).
    expect(downRequests).toBe(2);
    // The claim lands before the object has recorded its step (status, events, then its own state).
    const s = await until("beta/db's object to record its step", async () => {
      const x = await state("beta", "db");
      return x.steps >= 1 ? x : undefined;
    });
    expect(s).toMatchObject({
      target: { cluster: "beta", namespace: "default", name: "db" },
      steps: 1,
      failures: 0,
      last: { via: "alarm", phase: "Progressing", reason: "ClaimUpdated", outcome: "applied" },
    });
    expect(s.last.subrequests).toBeLessThanOrEqual(10);
    // A step of one set costs the other cluster nothing.
    expect(alpha.fake.http.requests().filter((r) => r.name === "db")).toEqual([]);
  }, 60_000);

  it("a set's object steps again by itself at the decision's requeueAfter, with no cron and no relay", async () => {
    const s0 = await until("alpha/web's object to record its first step", async () => {
      const x = await state("alpha", "web");
      return x.steps >= 1 ? x : undefined;
    });
    expect(s0.last.reason).toBe("ClaimUpdated");
    expect(s0.nextAlarm - Date.parse(s0.last.at)).toBeGreaterThanOrEqual(2_000 - 50);
    expect(s0.nextAlarm - Date.parse(s0.last.at)).toBeLessThan(4_000);
    const s1 = await until("the alarm's step (resize in progress)", async () => {
      const s = await state("alpha", "web");
      return s.steps >= 2 && s;
    });
    expect(s1.last).toMatchObject({ via: "alarm", phase: "Waiting", reason: "ClaimResizing" });
    expect(s1.nextAlarm - Date.parse(s1.last.at)).toBeGreaterThanOrEqual(10_000 - 50);
    alpha.fake.completeResizes(); // data-web-2 is grown: the next alarm moves on to ordinal 1
    await until("ordinal 1's claim written by an alarm", () => patched(alpha, "data-web-1"), 20_000);
    expect(logLines("fan-out")).toHaveLength(1); // no cron ran meanwhile
  }, 60_000);

  it("serializes a set's steps whatever triggers them at once; another set is not held up", async () => {
    const before = (await state("beta", "db")).steps;
    const post = (name: string) =>
      fetch(`${base}/v1/clusters/beta/steps`, {
        method: "POST",
        headers: { ...bearer, "content-type": "application/json" },
        body: JSON.stringify({ namespace: "default", name }),
      });
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, () => post("db")),
      post("web"),
      fetch(`${base}/__scheduled?cron=*+*+*+*+*`),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200]);
    // Let the steps the triggers started finish (slower on a loaded machine).
    await sleep(3000);
    const s = await until("beta/db's steps to be recorded", async () => {
      const x = await state("beta", "db");
      return x.steps > before ? x : undefined;
    });
    expect(s.maxActive).toBe(1);
    // Six triggers at once: the step running, then one more that every later trigger joins.
    expect(s.steps - before).toBeGreaterThanOrEqual(1);
    expect(s.steps - before).toBeLessThanOrEqual(4);
    // In the API server's log the steps of db never interleave: each reads the set, then its pods, claims and classes.
    const seq = beta.fake.http
      .requests()
      .filter((r) => r.name === "db" || (r.resource !== "statefulsets" && r.resource !== "events" && r.verb === "list"))
      .map((r) => `${r.verb} ${r.resource}`);
    const reads = seq.filter((x) => x === "get statefulsets").length;
    expect(reads).toBe(s.steps);
    for (let i = 0; i < seq.length - 1; i++)
      if (seq[i] === "get statefulsets") expect(seq[i + 1]).not.toBe("get statefulsets");
  }, 60_000);

  it("a cluster that is down backs off alone: the next cron skips it, the others are stepped", async () => {
    const gateBefore = downRequests;
    const fansBefore = logLines("fan-out").length;
    const res = await fetch(`${base}/__scheduled?cron=*+*+*+*+*`);
    expect(res.status).toBe(200);
    const fan = await until("the second fan-out", () => logLines("fan-out")[fansBefore]);
    expect(fan.clusters).toEqual(
      expect.arrayContaining([
        { cluster: "down", skipped: "backoff", untilMs: expect.any(Number) },
        { cluster: "alpha", sent: 1 },
        { cluster: "beta", sent: 2 },
      ]),
    );
    expect(downRequests).toBe(gateBefore);
    // A step asked of the down cluster answers 503 at once; its set backs off for its Retry-After.
    const t0 = Date.now();
    const r = await fetch(`${base}/v1/clusters/down/steps`, {
      method: "POST",
      headers: { ...bearer, "content-type": "application/json" },
      body: JSON.stringify({ namespace: "default", name: "web" }),
    });
    expect(r.status).toBe(503);
    expect(Date.now() - t0).toBeLessThan(5_000);
    const s = await state("down", "web");
    expect(s.failures).toBe(1);
    expect(s.nextAlarm - Date.parse(s.last.at)).toBeGreaterThanOrEqual(119_000);
    // An unknown cluster names the configured ones and the fix.
    const unknown = await fetch(`${base}/v1/clusters/mars/statefulsets/default/web`, { headers: bearer });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as any).message).toBe(
      'cluster "mars" is not configured (configured: alpha, beta, down); add it to CLAIMSTEP_CLUSTERS',
    );
  }, 60_000);

  it("answers hostile input clearly: a bad %-escape, an unknown cluster without a token, an over-long webhook id; a missing set keeps no state", async () => {
    const bad = await fetch(`${base}/v1/clusters/%E0%A4%A/statefulsets/default/web`, { headers: bearer });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).message).toBe(
      'the cluster segment "%E0%A4%A" is not valid percent-encoding: name a configured cluster, e.g. /v1/clusters/<name>/…',
    );
    const anon = await fetch(`${base}/v1/clusters/mars/statefulsets/default/web`);
    expect(anon.status).toBe(404);
    const anonText = await anon.text();
    expect(JSON.parse(anonText).message).toBe(
      'cluster "mars" is not configured here; authenticate (Authorization: Bearer <token>) to see the configured ones',
    );
    expect(anonText).not.toMatch(/alpha|beta|down/);
    // An 8,000-character webhook-id: refused before the ledger (a Durable Object key over 2 KiB throws).
    const body = JSON.stringify({
      type: "statefulset.changed",
      timestamp: new Date().toISOString(),
      data: { namespace: "default", name: "web" },
    });
    const long = await fetch(`${base}/v1/clusters/beta/relay`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...webhookHeaders(SECRET, `msg_${"a".repeat(8_000)}`, new Date(), body),
      },
      body,
    });
    expect(long.status).toBe(400);
    expect(((await long.json()) as any).message).toMatch(/^webhook-id is 8004 bytes; at most 200 are accepted/);
    // A step of a set that does not exist: 404, and its object keeps nothing (checked again after the restart below).
    const ghost = await fetch(`${base}/v1/clusters/beta/steps`, {
      method: "POST",
      headers: { ...bearer, "content-type": "application/json" },
      body: JSON.stringify({ namespace: "default", name: "ghost" }),
    });
    expect(ghost.status).toBe(404);
    expect(await state("beta", "ghost")).toMatchObject({ steps: 0, failures: 0, nextAlarm: null });
    expect((await state("beta", "ghost")).target).toBeUndefined();
  }, 60_000);

  it("refuses a replayed relay delivery on any route and after a restart of the runtime (new isolates)", async () => {
    const body = JSON.stringify({
      type: "statefulset.changed",
      timestamp: new Date().toISOString(),
      data: { namespace: "default", name: "web" },
    });
    const headers = {
      "content-type": "application/json",
      ...(await webhookHeaders(SECRET, "evt_fleet_1", new Date(), body)),
    };
    const first = await fetch(`${base}/v1/clusters/beta/relay`, { method: "POST", headers, body });
    expect(first.status).toBe(200);
    const again = await fetch(`${base}/v1/relay`, { method: "POST", headers, body });
    expect(again.status).toBe(401);
    expect(((await again.json()) as any).failure).toBe("Replayed");

    await dev.stop();
    await dev.start();
    // Nothing was persisted for the set that does not exist.
    expect(await state("beta", "ghost")).toMatchObject({ steps: 0, nextAlarm: null });
    const afterRestart = await fetch(`${base}/v1/clusters/beta/relay`, { method: "POST", headers, body });
    expect(afterRestart.status).toBe(401);
    expect(((await afterRestart.json()) as any).failure).toBe("Replayed");
    const fresh = {
      "content-type": "application/json",
      ...(await webhookHeaders(SECRET, "evt_fleet_2", new Date(), body)),
    };
    expect((await fetch(`${base}/v1/clusters/beta/relay`, { method: "POST", headers: fresh, body })).status).toBe(200);
    expect(dev.output).not.toContain(TOKENS.beta);
    expect(dev.output).not.toContain(API_TOKEN);
  }, 180_000);
});
