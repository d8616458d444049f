// The Worker's events in the real Workers runtime (issue 25, docs/observability-workers.md):
// `wrangler dev` (workerd) with a config of its own that binds an Analytics Engine dataset
// (CLAIMSTEP_ANALYTICS), against the fake API server on 127.0.0.1. Each step, API call and
// delivery is one JSON line (schema claimstep.event.v1) on wrangler's output. Miniflare's local
// dataset accepts writeDataPoint and keeps nothing (miniflare 4.20260426: a no-op), so here the
// binding proves the Worker runs with it configured; what the data points hold is
// test/functions/observe.test.ts's, with a recording binding.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookHeaders } from "../../functions/auth.js";
import { type SocketSim, serveSim, statefulSetObjects, storageClassObjects } from "../support/index.js";

const KUBE_TOKEN = "kube-token-for-the-observed-worker";
const API_TOKEN = "api-token-observe-0123456789";
const SECRET = `whsec_${btoa("workerd-observe-secret-0123456789")}`;
const ROOT = new URL("../..", import.meta.url).pathname;

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

let kube: SocketSim;
let child: ChildProcess | undefined;
let base = "";
let output = "";
let dir = "";

/** The event lines wrangler has printed so far. */
const events = () =>
  output
    .split("\n")
    .filter((l) => l.includes('"schema":"claimstep.event.v1"'))
    .map((l) => JSON.parse(l.slice(l.indexOf("{"))) as Record<string, unknown>);

/** Waits (bounded) until an event line matching `want` has been printed: lines follow the response. */
const eventLike = async (want: Record<string, unknown>) => {
  const match = () => events().find((e) => Object.entries(want).every(([k, v]) => e[k] === v));
  for (let i = 0; i < 40 && !match(); i++) await new Promise((r) => setTimeout(r, 250));
  return match();
};

beforeAll(async () => {
  kube = await serveSim({ token: KUBE_TOKEN });
  kube.fake.seed(
    ...storageClassObjects(),
    ...statefulSetObjects({ desired: [{ name: "data", storage: "2Gi", storageClassName: "fast" }] }),
  );
  const [port, inspector] = [await freePort(), await freePort()];
  base = `http://127.0.0.1:${port}`;
  dir = mkdtempSync(join(tmpdir(), "claimstep-observe-"));
  const config = join(dir, "wrangler.toml");
  writeFileSync(
    config,
    [
      'name = "claimstep-observe-test"',
      `main = ${JSON.stringify(join(ROOT, "functions/worker.ts"))}`,
      'compatibility_date = "2026-05-01"',
      "[[analytics_engine_datasets]]",
      'binding = "CLAIMSTEP_ANALYTICS"',
      'dataset = "claimstep"',
      "",
    ].join("\n"),
  );
  const vars = {
    KUBE_API_SERVER: kube.url,
    KUBE_TOKEN,
    CLAIMSTEP_API_TOKEN: API_TOKEN,
    CLAIMSTEP_WEBHOOK_SECRET: SECRET,
    CLAIMSTEP_NAMESPACES: "default",
  };
  child = spawn(
    process.execPath,
    [
      join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      "--config",
      config,
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspector),
      "--test-scheduled",
      "--show-interactive-dev-session=false",
      "--persist-to",
      join(dir, "state"),
      "--log-level",
      "log",
      ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
    ],
    {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true", NO_COLOR: "1" },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const until = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited ${child.exitCode}:\n${output}`);
    const ok = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > until) throw new Error(`wrangler dev did not answer within 120 s:\n${output}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}, 150_000);

afterAll(async () => {
  if (child?.pid && child.exitCode === null) {
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      try {
        process.kill(-child.pid, signal); // the whole group: wrangler and its workerd
      } catch {
        // already gone
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  await kube?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the Worker's events in workerd, with an Analytics Engine binding", () => {
  it("an API step logs the delivery, its API calls and the step, one JSON line each", async () => {
    const res = await fetch(`${base}/v1/steps`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ namespace: "default", name: "web" }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).outcome.kind).toBe("applied");
    const stepLine = await eventLike({ event: "step", namespace: "default", name: "web" });
    expect(stepLine).toMatchObject({
      schema: "claimstep.event.v1",
      outcome: "applied",
      phase: "Progressing",
      durationSeconds: expect.any(Number),
    });
    expect(await eventLike({ event: "api_request", verb: "patch", resource: "persistentvolumeclaims" })).toMatchObject({
      code: "200",
      durationSeconds: expect.any(Number),
    });
    expect(await eventLike({ event: "api_request", verb: "get", resource: "statefulsets" })).toMatchObject({
      code: "200",
    });
    expect(await eventLike({ event: "delivery", source: "api" })).toMatchObject({ result: "accepted", code: "200" });
  });

  it("a relay delivery accepted, then replayed", async () => {
    kube.fake.completeResizes();
    const body = JSON.stringify({
      type: "statefulset.changed",
      timestamp: new Date().toISOString(),
      data: { namespace: "default", name: "web" },
    });
    const headers = {
      "content-type": "application/json",
      ...(await webhookHeaders(SECRET, "evt_observe", new Date(), body)),
    };
    expect((await fetch(`${base}/v1/relay`, { method: "POST", headers, body })).status).toBe(200);
    expect((await fetch(`${base}/v1/relay`, { method: "POST", headers, body })).status).toBe(401);
    expect(await eventLike({ event: "delivery", source: "relay", result: "accepted" })).toMatchObject({ code: "200" });
    expect(await eventLike({ event: "delivery", source: "relay", result: "replayed" })).toMatchObject({ code: "401" });
  });

  it("a scheduled sweep logs its steps; no line holds a token", async () => {
    const before = events().filter((e) => e.event === "step").length;
    kube.fake.completeResizes();
    expect((await fetch(`${base}/__scheduled?cron=*+*+*+*+*`)).status).toBe(200);
    for (let i = 0; i < 40 && events().filter((e) => e.event === "step").length === before; i++)
      await new Promise((r) => setTimeout(r, 250));
    expect(events().filter((e) => e.event === "step").length).toBe(before + 1);
    expect(await eventLike({ event: "api_request", verb: "list", resource: "statefulsets" })).toMatchObject({
      code: "200",
    });
    for (const e of events()) expect(e.schema).toBe("claimstep.event.v1");
    expect(output).not.toContain(KUBE_TOKEN);
    expect(output).not.toContain(API_TOKEN);
  });
});
