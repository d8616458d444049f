// GET /metrics on the Node server (issue 25, docs/operating.md "Metrics"): the app wired as
// `claimstep serve` wires it, over the simulated cluster on a socket, its recorder prom-client's.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { KubeClient } from "../../adapters/kube/client.js";
import { PromRecorder } from "../../adapters/metrics-node/registry.js";
import { createApp } from "../../functions/app.js";
import { RecentIds, webhookHeaders } from "../../functions/auth.js";
import { configFromEnv } from "../../functions/config.js";
import { instrumentFetch, metricsConfigFromEnv, serveMetrics } from "../../functions/metrics.js";
import { recordedStep } from "../../functions/recorded-step.js";
import { type RunningServer, startServer } from "../../functions/server.js";
import { sweep } from "../../functions/sweep.js";
import { wire } from "../../functions/wiring.js";
import { type SocketSim, serveSim, statefulSetObjects, storageClassObjects } from "../support/index.js";

const KUBE_TOKEN = "kube-token-for-the-simulated-cluster";
const TOKEN = "api-token-0123456789abcdef";
const METRICS_TOKEN = "metrics-token-0123456789abcdef";
const SECRET = `whsec_${btoa("metrics-relay-secret-0123456789")}`;

let kube: SocketSim;
let server: RunningServer;
let recorder: PromRecorder;
let listOptedIn: (ns: string | undefined) => Promise<{ namespace: string; name: string }[]>;
let step: (ref: { namespace: string; name: string }) => Promise<unknown>;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The exposition's samples (comments skipped). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

const find = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

const base = () => `http://127.0.0.1:${server.port}`;
const scrape = async (token = TOKEN) => {
  const res = await fetch(`${base()}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return { text: await res.text(), type: res.headers.get("content-type") };
};
const postStep = (name = "web") =>
  fetch(`${base()}/v1/steps`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ namespace: "default", name }),
  });

beforeAll(async () => {
  kube = await serveSim({ token: KUBE_TOKEN });
  const env = { CLAIMSTEP_API_TOKEN: TOKEN, CLAIMSTEP_WEBHOOK_SECRET: SECRET, CLAIMSTEP_METRICS_TOKEN: METRICS_TOKEN };
  const config = configFromEnv(env);
  const metrics = metricsConfigFromEnv(env, config.bearerTokens);
  recorder = new PromRecorder();
  const client = new KubeClient({
    server: kube.url,
    headers: { Authorization: `Bearer ${KUBE_TOKEN}` },
    retry: { attempts: 1 },
    onRequest: recorder.apiRequest,
  });
  const wiring = wire({
    client,
    config,
    now: () => new Date(),
    replay: new RecentIds(),
    runStep: (o) => recordedStep({ ...o, recorder }),
  });
  listOptedIn = wiring.listOptedIn;
  step = (ref) =>
    fetch(`${base()}/v1/steps`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(ref),
    });
  const app = createApp(wiring.deps);
  server = await startServer({
    app: { fetch: instrumentFetch(app.fetch, recorder, metrics.tokens) },
    port: 0,
    hostname: "127.0.0.1",
    log: (e) => process.env.DUMP && console.error(JSON.stringify(e)),
  });
});

afterAll(async () => {
  await server?.close();
  await kube?.close();
});

beforeEach(() => {
  kube.fake.reset();
  kube.fake.seed(
    ...storageClassObjects(),
    ...statefulSetObjects({ desired: [{ name: "data", storage: "2Gi", storageClassName: "fast" }] }),
  );
});

describe("GET /metrics on the Node server", () => {
  it("a step on the simulated cluster produces the set's series, steps_total and a step histogram with samples", async () => {
    expect((await postStep()).status).toBe(200);
    const { text, type } = await scrape();
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    const s = parseExposition(text);
    const set = { namespace: "default", name: "web" };
    const phases = find(s, "claimstep_set_phase", set);
    expect(phases).toHaveLength(1);
    expect(phases[0]).toMatchObject({ labels: { phase: "Progressing" }, value: 1 });
    // The counts of the status the step recorded (claimstep.io/status): three ordinals in all.
    expect(find(s, "claimstep_set_ordinals", set).reduce((n, x) => n + x.value, 0)).toBe(3);
    expect(
      find(s, "claimstep_set_ordinals", set)
        .map((x) => x.labels.state)
        .sort(),
    ).toEqual(["blocked", "in_flight", "pending", "updated"]);
    expect(find(s, "claimstep_set_desired_bytes", { ...set, template: "data" })[0]?.value).toBe(2 * 1024 ** 3);
    expect(find(s, "claimstep_set_requested_bytes", { ...set, template: "data" })).toHaveLength(1);
    expect(find(s, "claimstep_set_phase_age_seconds", set)).toHaveLength(1);
    expect(find(s, "claimstep_set_info", { ...set, autogrow: "false", strategy: "InPlace" })[0]?.value).toBe(1);
    expect(
      find(s, "claimstep_claim_info", { namespace: "default", statefulset: "web" })
        .map((x) => x.labels.persistentvolumeclaim)
        .sort(),
    ).toEqual(["data-web-0", "data-web-1", "data-web-2"]);
    expect(find(s, "claimstep_steps_total", { outcome: "applied" })[0]?.value).toBeGreaterThanOrEqual(1);
    expect(find(s, "claimstep_step_duration_seconds_count")[0]?.value).toBeGreaterThanOrEqual(1);
    expect(find(s, "claimstep_step_duration_seconds_bucket", { le: "+Inf" })[0]?.value).toBeGreaterThanOrEqual(1);
    expect(
      find(s, "claimstep_api_requests_total", { verb: "get", resource: "statefulsets", code: "200" })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(
      find(s, "claimstep_api_requests_total", { verb: "patch", resource: "persistentvolumeclaims", code: "200" })[0]
        ?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(
      find(s, "claimstep_api_request_duration_seconds_count", { verb: "list", resource: "pods" })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(
      find(s, "claimstep_webhook_deliveries_total", { source: "api", result: "accepted" })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(find(s, "claimstep_lease_holder")).toHaveLength(1);
    expect(find(s, "process_cpu_user_seconds_total")).toHaveLength(1);
    // No pod or claim names as labels beyond claimstep_claim_info.
    for (const x of s.filter((x) => x.name.startsWith("claimstep_") && x.name !== "claimstep_claim_info"))
      expect(x.labels.persistentvolumeclaim ?? x.labels.pod).toBeUndefined();
  });

  it("refuses without the token or with a wrong one (401, nothing exposed), and takes CLAIMSTEP_METRICS_TOKEN", async () => {
    const none = await fetch(`${base()}/metrics`);
    expect(none.status).toBe(401);
    const body = await none.text();
    expect(body).not.toMatch(/claimstep_/);
    expect(JSON.parse(body)).toMatchObject({ error: "Unauthorized" });
    expect(
      (await fetch(`${base()}/metrics`, { headers: { authorization: "Bearer not-the-token-at-all" } })).status,
    ).toBe(401);
    expect((await scrape(METRICS_TOKEN)).text).toMatch(/claimstep_steps_total|claimstep_lease_holder/);
    expect(
      (await fetch(`${base()}/metrics`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` } })).status,
    ).toBe(405);
  });

  it("a set that is deleted loses its series at its next step; one no longer listed loses them at the sweep", async () => {
    kube.fake.seed(
      ...statefulSetObjects({ name: "db", desired: [{ name: "data", storage: "2Gi", storageClassName: "fast" }] }),
    );
    expect((await postStep("web")).status).toBe(200);
    expect((await postStep("db")).status).toBe(200);
    let s = parseExposition((await scrape()).text);
    expect(find(s, "claimstep_set_phase", { name: "web" })).toHaveLength(1);
    expect(find(s, "claimstep_set_phase", { name: "db" })).toHaveLength(1);

    kube.fake.remove("statefulsets", "default", "web");
    expect((await postStep("web")).status).toBe(404);
    s = parseExposition((await scrape()).text);
    expect(s.filter((x) => x.labels.name === "web" || x.labels.statefulset === "web")).toEqual([]);
    expect(find(s, "claimstep_set_phase", { name: "db" })).toHaveLength(1);

    // db opts out: the sweep's listing no longer has it.
    kube.fake.update("statefulsets", "default", "db", (o: any) => {
      delete o.metadata.annotations["claimstep.io/volume-claim-update-strategy"];
    });
    await sweep({
      listOptedIn: async (ns) => {
        const refs = await listOptedIn(ns);
        recorder.setsListed(ns, refs);
        return refs;
      },
      namespaces: [],
      step: async (ref) => (await step(ref)) as never,
      tick: 0,
    });
    s = parseExposition((await scrape()).text);
    expect(s.filter((x) => x.labels.name === "db" || x.labels.statefulset === "db")).toEqual([]);
    expect(find(s, "claimstep_steps_total").length).toBeGreaterThan(0); // the counters stay
  });

  it("counts deliveries (relay accepted and replayed, api refused) and admission reviews by result", async () => {
    const event = JSON.stringify({
      type: "statefulset.changed",
      timestamp: new Date().toISOString(),
      data: { namespace: "default", name: "web" },
    });
    const headers = {
      "content-type": "application/json",
      ...webhookHeaders(SECRET, "evt_metrics_1", new Date(), event),
    };
    expect((await fetch(`${base()}/v1/relay`, { method: "POST", headers, body: event })).status).toBe(200);
    expect((await fetch(`${base()}/v1/relay`, { method: "POST", headers, body: event })).status).toBe(401);
    const bad = await fetch(`${base()}/v1/steps`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(bad.status).toBe(400);
    const review = {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid: "u-1",
        kind: { group: "apps", version: "v1", kind: "StatefulSet" },
        operation: "CREATE",
        namespace: "default",
        name: "x",
        object: { metadata: { name: "x" } },
      },
    };
    const admitted = await fetch(`${base()}/v1/admission/statefulsets`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(review),
    });
    expect(admitted.status).toBe(200);
    const s = parseExposition((await scrape()).text);
    expect(
      find(s, "claimstep_webhook_deliveries_total", { source: "relay", result: "accepted" })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(
      find(s, "claimstep_webhook_deliveries_total", { source: "relay", result: "replayed" })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(
      find(s, "claimstep_webhook_deliveries_total", { source: "api", result: "refused" })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
    expect(find(s, "claimstep_admission_reviews_total", { result: "allowed" })[0]?.value).toBeGreaterThanOrEqual(1);
  });

  it.runIf(existsSync("/usr/bin/promtool"))("the exposition passes promtool check metrics", async () => {
    expect((await postStep()).status).toBe(200);
    const { text } = await scrape();
    const promtool = (input: string) => {
      const r = spawnSync("/usr/bin/promtool", ["check", "metrics"], { input, encoding: "utf8" });
      return { status: r.status, out: `${r.stdout}${r.stderr}`.trim() };
    };
    // claimstep's own families: parsed, and nothing for the linter to say.
    const own = text
      .split("\n")
      .filter((l) => /^(# (HELP|TYPE) )?claimstep_/.test(l))
      .join("\n");
    expect(own).toMatch(/claimstep_step_duration_seconds_bucket/);
    expect(promtool(`${own}\n`)).toEqual({ status: 0, out: "" });
    // The whole exposition parses; the linter's only findings are prom-client's own nodejs_active_*_total gauges.
    const all = promtool(text);
    for (const line of all.out.split("\n").filter(Boolean))
      expect(line).toMatch(/^nodejs_active_\w+_total non-counter metrics should not have "_total" suffix$/);
  });
});

describe("CLAIMSTEP_METRICS_ADDR and CLAIMSTEP_METRICS_TOKEN", () => {
  it("serves /metrics without a token on its own address, and nothing else there", async () => {
    const own = await serveMetrics({ recorder, host: "127.0.0.1", port: 0 });
    try {
      const res = await fetch(`http://127.0.0.1:${own.port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/^# HELP /m);
      expect((await fetch(`http://127.0.0.1:${own.port}/v1/steps`)).status).toBe(404);
    } finally {
      await own.close();
    }
  });

  it("refuses a short token or an address that is not host:port, naming the variable", () => {
    expect(() => metricsConfigFromEnv({ CLAIMSTEP_METRICS_TOKEN: "short" }, [])).toThrow(
      /CLAIMSTEP_METRICS_TOKEN: .*at least 16 characters/,
    );
    expect(() => metricsConfigFromEnv({ CLAIMSTEP_METRICS_ADDR: "9464" }, [])).toThrow(
      /CLAIMSTEP_METRICS_ADDR: .*host:port/,
    );
    expect(() => metricsConfigFromEnv({ CLAIMSTEP_METRICS_ADDR: "127.0.0.1:99999" }, [])).toThrow(
      /CLAIMSTEP_METRICS_ADDR: .*port/,
    );
    expect(metricsConfigFromEnv({ CLAIMSTEP_METRICS_ADDR: "0.0.0.0:9464" }, [TOKEN])).toEqual({
      tokens: [TOKEN],
      addr: { host: "0.0.0.0", port: 9464 },
    });
  });
});

const ROOT = new URL("../..", import.meta.url).pathname;
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

describe("claimstep serve (spawned) with metrics", () => {
  it("sweeps the simulated cluster and exposes its steps on the main port (token) and on CLAIMSTEP_METRICS_ADDR", async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const child = spawn(
      process.execPath,
      [`${ROOT}bin/claimstep.js`, "serve", "--cluster", "sim", "--port", String(port)],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          CLAIMSTEP_API_TOKEN: TOKEN,
          CLAIMSTEP_INTERVAL_SECONDS: "1",
          CLAIMSTEP_METRICS_ADDR: `127.0.0.1:${metricsPort}`,
        },
      },
    );
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    const until = async (cond: () => boolean, ms: number) => {
      for (const end = Date.now() + ms; !cond(); await new Promise((r) => setTimeout(r, 50)))
        if (Date.now() > end) throw new Error(`condition not met in time; output: ${output}`);
    };
    try {
      await until(() => output.includes('"msg":"sweep"'), 60_000); // a busy machine: the CLI's start takes most of it
      const own = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(own.status).toBe(200);
      const s = parseExposition(await own.text());
      expect(find(s, "claimstep_set_phase", { namespace: "default", name: "web" })).toHaveLength(1);
      expect(find(s, "claimstep_step_duration_seconds_count")[0]?.value).toBeGreaterThanOrEqual(1);
      expect(
        find(s, "claimstep_api_requests_total", { verb: "list", resource: "statefulsets", code: "200" })[0]?.value,
      ).toBeGreaterThanOrEqual(1);
      expect(find(s, "claimstep_lease_holder")[0]?.value).toBe(1);
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(401);
      const main = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(main.status).toBe(200);
      expect(await main.text()).toMatch(/^claimstep_steps_total\{outcome="\w+"\} \d+$/m);
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 90_000);
});
