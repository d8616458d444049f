// Every route and every error path of the app, through app.request(), with the app wired as the
// Worker and the Node server wire it (KubeClient → KubeReader/KubeWriter) against the msw fake API
// server.
import { Hono } from "hono";
import { setupServer } from "msw/node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { KubeClient } from "../../adapters/kube/client.js";
import { Keys } from "../../core/keys.js";
import type { StateReader } from "../../core/ports.js";
import { type AppDeps, createApp } from "../../functions/app.js";
import { RecentIds, webhookHeaders } from "../../functions/auth.js";
import { configFromEnv } from "../../functions/config.js";
import { wire } from "../../functions/wiring.js";
import { createSimServer, fixture, statefulSetObjects, storageClassObjects } from "../support/index.js";

const KUBE = "https://kube.test:6443";
const KUBE_TOKEN = "sa-token-for-the-fake";
const TOKEN = "test-token-0123456789abcdef";
const SECRET = `whsec_${btoa("relay-secret-0123456789abcdef!!")}`;
const NOW = new Date("2026-11-30T10:00:00Z");
const bearer = { authorization: `Bearer ${TOKEN}` };
const json = { ...bearer, "content-type": "application/json" };
const grown = [{ name: "data", storage: "2Gi", storageClassName: "fast" }];

const fake = createSimServer({ baseUrl: KUBE, token: KUBE_TOKEN, now: NOW });
const msw = setupServer(...fake.handlers);
beforeAll(() => msw.listen({ onUnhandledRequest: "error" }));
afterAll(() => msw.close());

let logs: Array<Record<string, unknown>>;

const makeApp = (over: Partial<AppDeps> = {}) => {
  const config = configFromEnv({ CLAIMSTEP_API_TOKEN: TOKEN, CLAIMSTEP_WEBHOOK_SECRET: SECRET });
  // One attempt per request: the app's own answers to 429/5xx are under test, not the client's retries.
  const client = new KubeClient({
    server: KUBE,
    headers: { Authorization: `Bearer ${KUBE_TOKEN}` },
    retry: { attempts: 1 },
  });
  const { deps } = wire({ client, config, now: () => NOW, replay: new RecentIds(), log: (e) => logs.push(e) });
  return createApp({ ...deps, ...over });
};

const seed = (opts: Parameters<typeof statefulSetObjects>[0] = { desired: grown }) => {
  fake.reset();
  fake.seed(...storageClassObjects(), ...statefulSetObjects(opts));
};

beforeEach(() => {
  seed();
  logs = [];
});

const writes = () => fake.http.counters().writes;
const storageOf = (name: string) =>
  (fake.get("persistentvolumeclaims", "default", name) as any).spec.resources.requests.storage;
const setAnnotations = () =>
  (fake.get("statefulsets", "default", "web") as any).metadata.annotations as Record<string, string>;
const claimApplies = () =>
  fake.http
    .requests()
    .filter((r) => r.verb === "patch" && r.resource === "persistentvolumeclaims")
    .map((r) => r.name);

// Signed now: the Standard Webhooks library checks the timestamp against this machine's clock.
const signed = async (body: string, id = "msg_1", at = new Date()) => ({
  "content-type": "application/json",
  ...(await webhookHeaders(SECRET, id, at, body)),
});

const relayBody = (ns = "default", name = "web") =>
  JSON.stringify({
    type: "statefulset.changed",
    timestamp: NOW.toISOString(),
    data: { namespace: ns, name, causes: ["pvc data-web-2 modified"] },
  });

describe("GET /healthz", () => {
  it("answers without authentication", async () => {
    const res = await makeApp().request("/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });

  it("answers HEAD like GET, without a body", async () => {
    const res = await makeApp().request("/healthz", { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
  });

  it("is 405 with Allow for other methods", async () => {
    const res = await makeApp().request("/healthz", { method: "POST" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expect(await res.json()).toMatchObject({ error: "MethodNotAllowed" });
  });
});

describe("authentication", () => {
  it("is 401 with WWW-Authenticate and a hint without credentials", async () => {
    const res = await makeApp().request("/v1/statefulsets/default/web");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await res.json()).message).toMatch(/Authorization: Bearer/);
  });

  it("is 401 for a wrong token and never logs the token", async () => {
    const res = await makeApp().request("/v1/statefulsets/default/web", {
      headers: { authorization: "Bearer wrong-token-value-123" },
    });
    expect(res.status).toBe(401);
    expect((await res.json()).message).toBe("the bearer token is not valid");
    expect(JSON.stringify(logs)).not.toMatch(/wrong-token-value|test-token/);
    expect(logs).toContainEqual(expect.objectContaining({ msg: "auth rejected", method: "bearer" }));
  });

  it("accepts a Standard Webhooks signature on any route", async () => {
    const res = await makeApp().request("/v1/statefulsets/default/web", {
      headers: await webhookHeaders(SECRET, "msg_get", new Date(), ""),
    });
    expect(res.status).toBe(200);
  });

  it("is 401 for signed requests when no webhook secret is configured", async () => {
    const app = makeApp({ auth: { bearerTokens: [TOKEN], webhookSecrets: [], replay: new RecentIds() } });
    const res = await app.request("/v1/statefulsets/default/web", {
      headers: await webhookHeaders(SECRET, "m", NOW, ""),
    });
    expect(res.status).toBe(401);
    expect((await res.json()).message).toMatch(/no webhook secret/);
  });
});

describe("GET /v1/statefulsets/:namespace/:name", () => {
  it("returns the plan and its table without writing anything", async () => {
    const res = await makeApp().request("/v1/statefulsets/default/web", { headers: bearer });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.decision).toMatchObject({ ref: { namespace: "default", name: "web" }, phase: "Progressing" });
    expect(body.decision.action).toMatchObject({ type: "PatchClaim", claim: "data-web-2", storage: "2Gi" });
    expect(body.outcome).toEqual({ kind: "dry-run" });
    expect(body.table).toMatch(/ORDINAL\s+POD/);
    expect(body.table).toMatch(/data-web-2/);
    expect(writes()).toBe(0);
  });

  it("is 404 with a clear body for an unknown set", async () => {
    const res = await makeApp().request("/v1/statefulsets/default/nope", { headers: bearer });
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(body.error).toBe("NotFound");
    expect(body.message).toMatch(
      /^StatefulSet default\/nope not found \(.*statefulsets.apps "nope" not found\): check the name and the namespace$/,
    );
  });

  it("is 400 listing the issues for an invalid name", async () => {
    const res = await makeApp().request("/v1/statefulsets/Default/web_1", { headers: bearer });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.issues.map((i: { path: string }) => i.path).sort()).toEqual(["name", "namespace"]);
  });

  it("is 403 outside the configured namespaces", async () => {
    const res = await makeApp({ namespaces: ["db"] }).request("/v1/statefulsets/default/web", { headers: bearer });
    expect(res.status).toBe(403);
    expect((await res.json()).message).toMatch(/namespace "default" is not one claimstep manages/);
  });

  it("is 405 for DELETE", async () => {
    const res = await makeApp().request("/v1/statefulsets/default/web", { method: "DELETE", headers: bearer });
    expect(res.status).toBe(405);
  });

  it("is 502 when the API server rejects claimstep's own token, without leaking it", async () => {
    fake.http.failNext("get statefulsets", fixture("unauthorized"));
    const res = await makeApp().request("/v1/statefulsets/default/web", { headers: bearer });
    expect(res.status).toBe(502);
    expect((await res.json()).message).toMatch(/credentials to the API server were rejected/);
  });

  it("is 503 with Retry-After when the API server is overloaded", async () => {
    fake.http.failNext("get statefulsets", { code: 429, retryAfterSeconds: 7 });
    const res = await makeApp().request("/v1/statefulsets/default/web", { headers: bearer });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("7");
  });

  it("is 502 naming the missing permission on RBAC refusal", async () => {
    fake.http.deny("list", "pods");
    const res = await makeApp().request("/v1/statefulsets/default/web", { headers: bearer });
    expect(res.status).toBe(502);
    expect((await res.json()).message).toMatch(/cannot list resource "pods"/);
  });

  it("is 500 with a generic message (details only in the log) on an unexpected error", async () => {
    const broken: StateReader = {
      load: async () => {
        throw new TypeError("boom");
      },
    };
    const res = await makeApp({ reader: broken }).request("/v1/statefulsets/default/web", { headers: bearer });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: "InternalError", message: "internal error; see the server log" });
    expect(logs).toContainEqual({ msg: "internal error", error: "TypeError: boom" });
  });
});

describe("POST /v1/steps", () => {
  const post = (body: string, headers: Record<string, string> = json, app = makeApp()) =>
    app.request("/v1/steps", { method: "POST", headers, body });

  it("runs one step and returns the decision", async () => {
    const res = await post(JSON.stringify({ namespace: "default", name: "web" }));
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.outcome).toMatchObject({
      kind: "applied",
      detail: expect.stringMatching(/^applied default\/data-web-2: storage/),
    });
    expect(body.writer).toBe("direct");
    expect(claimApplies()).toEqual(["data-web-2"]);
    expect(storageOf("data-web-2")).toBe("2Gi");
    expect(setAnnotations()[Keys.updateRevision]).toBe(body.decision.revision);
    expect(fake.events("default").map((e: any) => e.reason)).toEqual(["ClaimUpdated"]);
    expect(logs).toContainEqual(
      expect.objectContaining({ msg: "step", name: "web", outcome: "applied", via: "bearer" }),
    );
  });

  it("plans only with dryRun", async () => {
    const res = await post(JSON.stringify({ namespace: "default", name: "web", dryRun: true }));
    expect(res.status).toBe(200);
    expect((await res.json()).outcome).toEqual({ kind: "dry-run" });
    expect(writes()).toBe(0);
  });

  it("is 415 for a body that is not JSON", async () => {
    const res = await post("namespace=default", { ...bearer, "content-type": "application/x-www-form-urlencoded" });
    expect(res.status).toBe(415);
  });

  it("is 400 for malformed JSON", async () => {
    const res = await post("{nope");
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "BadRequest", message: "Malformed JSON in request body" });
  });

  it("is 400 listing every issue (missing, wrongly typed, unknown keys)", async () => {
    const res = await post(JSON.stringify({ namespace: "default", dryRun: "yes", nmae: "web" }));
    expect(res.status).toBe(400);
    const body = await res.json();
    const paths = body.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(expect.arrayContaining(["name", "dryRun"]));
    expect(JSON.stringify(body.issues)).toMatch(/nmae/);
    expect(writes()).toBe(0);
  });

  it("is 413 beyond the body limit, with or without Content-Length", async () => {
    const app = makeApp({ bodyLimitBytes: 1024 });
    const big = JSON.stringify({ namespace: "default", name: "web", pad: "x".repeat(2000) });
    const res = await post(big, json, app);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: "PayloadTooLarge" });
    const declared = await post(big, { ...json, "content-length": String(big.length) }, app);
    expect(declared.status).toBe(413);
    expect(writes()).toBe(0);
  });

  it("is 405 for GET", async () => {
    const res = await makeApp().request("/v1/steps", { headers: bearer });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });

  it("is 403 outside the configured namespaces, before touching the cluster", async () => {
    const res = await post(
      JSON.stringify({ namespace: "default", name: "web" }),
      json,
      makeApp({ namespaces: ["db"] }),
    );
    expect(res.status).toBe(403);
    expect(writes()).toBe(0);
  });

  it("is 503 with Retry-After when the apply loses a race, having changed nothing", async () => {
    fake.http.failNext("patch persistentvolumeclaims", fixture("pvc-patch-stale-rv"));
    const res = await post(JSON.stringify({ namespace: "default", name: "web" }));
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    const body = await res.json();
    expect(body.outcome).toMatchObject({ kind: "retry", error: { code: 409 } });
    expect(storageOf("data-web-2")).toBe("1Gi");
    expect(setAnnotations()[Keys.updateRevision]).toBeUndefined(); // nor the status
  });

  it("reports a refusal by the API server as Blocked", async () => {
    fake.http.failNext("patch persistentvolumeclaims", fixture("pvc-expand-not-allowed"));
    const res = await post(JSON.stringify({ namespace: "default", name: "web" }));
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.decision.phase).toBe("Blocked");
    expect(body.outcome).toMatchObject({ kind: "refused", error: { code: 403 } });
  });
});

describe("POST /v1/statefulsets/:namespace/:name/templates", () => {
  const post = (body: string, contentType: string, query = "", app = makeApp()) =>
    app.request(`/v1/statefulsets/default/web/templates${query}`, {
      method: "POST",
      headers: { ...bearer, "content-type": contentType },
      body,
    });

  beforeEach(() => seed({ strategy: null })); // not opted in yet

  const template = (storage: string) => [
    {
      metadata: { name: "data" },
      spec: { accessModes: ["ReadWriteOnce"], storageClassName: "fast", resources: { requests: { storage } } },
    },
  ];

  it("writes the desired templates and opts the set in (JSON array)", async () => {
    const res = await post(JSON.stringify(template("5Gi")), "application/json");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ changed: true, revision: expect.any(String) });
    const ann = setAnnotations();
    expect(ann[Keys.strategy]).toBe("InPlace");
    expect(JSON.parse(ann[Keys.templates]!)).toEqual(template("5Gi"));
    expect(claimApplies()).toEqual([]); // no step unless asked
  });

  it("takes the templates from a whole StatefulSet manifest in YAML, and steps at once with ?step=true", async () => {
    const manifest = `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  namespace: default
spec:
  selector:
    matchLabels: {app: web}
  volumeClaimTemplates:
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
        storageClassName: fast
        resources: {requests: {storage: 3Gi}}
`;
    const res = await post(manifest, "application/yaml; charset=utf-8", "?step=true");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.changed).toBe(true);
    expect(body.decision.phase).toBe("Progressing");
    expect(body.outcome).toMatchObject({
      kind: "applied",
      detail: expect.stringMatching(/^applied default\/data-web-2: storage/),
    });
    expect(claimApplies()).toEqual(["data-web-2"]);
    expect(storageOf("data-web-2")).toBe("3Gi");
  });

  it("writes nothing when the desired templates are already there", async () => {
    await post(JSON.stringify(template("5Gi")), "application/json");
    const before = writes();
    const res = await post(JSON.stringify(template("5Gi")), "application/json");
    expect(res.status).toBe(200);
    expect((await res.json()).changed).toBe(false);
    expect(writes()).toBe(before);
  });

  it("is 415 for other content types", async () => {
    const res = await post("data: 5Gi", "text/plain");
    expect(res.status).toBe(415);
    expect((await res.json()).message).toMatch(/application\/json, application\/yaml/);
  });

  it("is 400 for YAML that does not parse", async () => {
    const res = await post("- metadata: {name: data\n  spec: [", "text/yaml");
    expect(res.status).toBe(400);
    expect((await res.json()).issues[0].message).toMatch(/not valid YAML/);
  });

  // Defect: composing deeply nested YAML cost about a second of CPU per request (then a stack
  // overflow), and one large mapping several seconds: both are refused before parsing now.
  it.each([
    ["nested flow sequences", "[".repeat(200_000), "the YAML body nests deeper than 64 levels"],
    [
      "nested flow sequences hidden among quoted brackets",
      '["]", '.repeat(40_000),
      "the YAML body nests deeper than 64 levels",
    ],
    ["nested block sequences", `${"- ".repeat(100_000)}x`, "the YAML body nests deeper than 64 levels"],
    [
      "a mapping of 20,000 keys",
      Array.from({ length: 20_000 }, (_, i) => `k${i}: v`).join("\n"),
      "the YAML body holds more than 5000 nodes",
    ],
  ])("is 400 naming the limit, at once, for %s", async (_name, body, message) => {
    const started = performance.now();
    const res = await post(body, "application/yaml");
    const elapsed = performance.now() - started;
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "BadRequest", message, issues: [{ path: "(body)", message }] });
    expect(elapsed).toBeLessThan(500);
    expect(writes()).toBe(0);
  });

  it("is 400 listing schema issues", async () => {
    const res = await post(JSON.stringify([{ metadata: {}, spec: { accessModes: "RWO" } }]), "application/json");
    expect(res.status).toBe(400);
    const paths = (await res.json()).issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(expect.arrayContaining(["[0].metadata.name", "[0].spec.accessModes"]));
  });

  it.each([
    [
      "an unknown template",
      [{ metadata: { name: "logs" }, spec: { resources: { requests: { storage: "1Gi" } } } }],
      /no claim template .{0,4}logs/,
    ],
    [
      "a bad quantity",
      [{ metadata: { name: "data" }, spec: { resources: { requests: { storage: "5 gigs" } } } }],
      /5 gigs/,
    ],
    ["a duplicate name", [...template("2Gi"), ...template("3Gi")], /given twice/],
    ["an empty array", [], /at least one claim template/],
    ["a scalar", "5Gi", /expected an array of claim templates or a StatefulSet manifest/],
  ])("is 400 for %s and writes nothing", async (_name, body, message) => {
    const res = await post(JSON.stringify(body), "application/json");
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toMatch(message);
    expect(writes()).toBe(0);
  });

  it("is 400 when the manifest names another set", async () => {
    const manifest = {
      kind: "StatefulSet",
      metadata: { name: "db", namespace: "prod" },
      spec: { selector: {}, volumeClaimTemplates: template("2Gi") },
    };
    const res = await post(JSON.stringify(manifest), "application/json");
    expect(res.status).toBe(400);
    expect((await res.json()).issues.map((i: { path: string }) => i.path)).toEqual([
      "metadata.name",
      "metadata.namespace",
    ]);
  });

  it("is 400 for a bad step flag", async () => {
    const res = await post(JSON.stringify(template("5Gi")), "application/json", "?step=maybe");
    expect(res.status).toBe(400);
  });

  it("is 404 for an unknown set", async () => {
    const res = await makeApp().request("/v1/statefulsets/default/nope/templates", {
      method: "POST",
      headers: json,
      body: JSON.stringify(template("5Gi")),
    });
    expect(res.status).toBe(404);
  });

  it("is 409 when the set changed between read and write", async () => {
    fake.http.beforeNext("patch statefulsets", () => {
      fake.update("statefulsets", "default", "web", (o: any) => (o.spec.replicas = 4)); // someone else wrote first
    });
    const res = await post(JSON.stringify(template("5Gi")), "application/json");
    expect(res.status).toBe(409);
    expect((await res.json()).message).toMatch(/changed while claimstep wrote it: retry/);
  });

  it("is 413 beyond the body limit and 405 for GET", async () => {
    const res = await post(
      JSON.stringify(template("x".repeat(5000))),
      "application/json",
      "",
      makeApp({ bodyLimitBytes: 1024 }),
    );
    expect(res.status).toBe(413);
    const get = await makeApp().request("/v1/statefulsets/default/web/templates", { headers: bearer });
    expect(get.status).toBe(405);
  });
});

describe("POST /v1/relay", () => {
  const post = async (body: string, headers: Record<string, string>, app = makeApp()) =>
    app.request("/v1/relay", { method: "POST", headers, body });

  it("steps the set a signed event names", async () => {
    const body = relayBody();
    const res = await post(body, await signed(body));
    expect(res.status).toBe(200);
    expect((await res.json()).outcome).toMatchObject({ kind: "applied" });
    expect(claimApplies()).toEqual(["data-web-2"]);
    expect(logs).toContainEqual(expect.objectContaining({ msg: "step", via: "relay" }));
  });

  it("rejects a replayed event id", async () => {
    const app = makeApp();
    const body = relayBody();
    expect((await post(body, await signed(body, "msg_r"), app)).status).toBe(200);
    const again = await post(body, await signed(body, "msg_r"), app);
    expect(again.status).toBe(401);
    expect(await again.json()).toMatchObject({ failure: "Replayed" });
    expect(claimApplies()).toHaveLength(1);
  });

  // Defect: the replay store was an LRU of 10,000 ids: after 10,000 other signed requests a captured
  // one was accepted again within its 5 minutes. Now ids stay until they expire; when the store is
  // full, new signed requests get 503 with Retry-After instead.
  it("keeps refusing a replay however many requests follow, and answers 503 + Retry-After when full", async () => {
    const app = makeApp({ auth: { bearerTokens: [TOKEN], webhookSecrets: [SECRET], replay: new RecentIds(3) } });
    const body = relayBody();
    const first = await signed(body, "evt_first");
    expect((await post(body, first, app)).status).toBe(200);
    for (const id of ["evt_2", "evt_3"]) expect((await post(body, await signed(body, id), app)).status).toBe(200);
    const full = await post(body, await signed(body, "evt_4"), app);
    expect(full.status).toBe(503);
    expect(Number(full.headers.get("retry-after"))).toBeGreaterThanOrEqual(300);
    expect(await full.json()).toEqual({
      error: "Unavailable",
      message: "too many signed requests within the replay window: retry later",
    });
    const replayed = await post(body, first, app);
    expect(replayed.status).toBe(401);
    expect(await replayed.json()).toMatchObject({ failure: "Replayed" });
    expect(logs.filter((l) => l.msg === "step")).toHaveLength(3); // neither the 503 nor the replay stepped
  });

  it("a replay store that answers something else refuses the signed request with 503 + Retry-After, and nothing is stepped (issue 37, item 5d)", async () => {
    const odd = { claim: async () => ({ ok: false, reason: "busy" }) as never, release: () => {} };
    const app = makeApp({ auth: { bearerTokens: [TOKEN], webhookSecrets: [SECRET], replay: odd } });
    const body = relayBody();
    const res = await post(body, await signed(body, "evt_odd"), app);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(await res.json()).toMatchObject({
      error: "Unavailable",
      message: expect.stringContaining("the replay store gave no valid answer"),
    });
    expect(logs.filter((l) => l.msg === "step")).toHaveLength(0);
  });

  it("rejects a tampered body, a stale timestamp and a wrong secret", async () => {
    const body = relayBody();
    const headers = await signed(body);
    expect((await post(relayBody("default", "other"), headers)).status).toBe(401);
    const stale = await post(body, await signed(body, "msg_old", new Date(Date.now() - 10 * 60_000)));
    expect(stale.status).toBe(401);
    expect(await stale.json()).toMatchObject({ failure: "TimestampOutOfTolerance" });
    const other = `whsec_${btoa("some-other-secret-0123456789ab")}`;
    const forged = { "content-type": "application/json", ...(await webhookHeaders(other, "msg_f", new Date(), body)) };
    expect((await post(body, forged)).status).toBe(401);
    expect(writes()).toBe(0);
    expect(JSON.stringify(logs)).not.toContain(SECRET);
  });

  it("is 403 for a bearer token: relay events must be signed", async () => {
    const res = await post(relayBody(), json);
    expect(res.status).toBe(403);
  });

  it("is 400 for an event of another shape, 415 for another content type, 403 outside the namespaces", async () => {
    const bad = JSON.stringify({ type: "pod.deleted", data: {} });
    const res = await post(bad, await signed(bad, "m1"));
    expect(res.status).toBe(400);
    expect((await res.json()).issues.map((i: { path: string }) => i.path)).toEqual(
      expect.arrayContaining(["type", "timestamp", "data.namespace", "data.name"]),
    );
    const body = relayBody();
    const text = await post(body, { ...(await signed(body, "m2")), "content-type": "text/plain" });
    expect(text.status).toBe(415);
    const denied = await post(body, await signed(body, "m3"), makeApp({ namespaces: ["db"] }));
    expect(denied.status).toBe(403);
    expect(writes()).toBe(0);
  });
});

describe("mounts and unknown routes", () => {
  it("mounts sub-apps with their own authentication, under the body limit", async () => {
    const sub = new Hono().post("/v1/webhooks/github", async (c) => c.json({ got: (await c.req.text()).length }));
    const app = makeApp({ mounts: [{ prefix: "/v1/webhooks", app: sub }], bodyLimitBytes: 1024 });
    const ok = await app.request("/v1/webhooks/github", { method: "POST", body: "{}" });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ got: 2 });
    const big = await app.request("/v1/webhooks/github", { method: "POST", body: "x".repeat(4096) });
    expect(big.status).toBe(413);
  });

  it("is 404 JSON for an unknown route", async () => {
    const res = await makeApp().request("/v2/anything", { headers: bearer });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "NotFound", message: "no route for GET /v2/anything" });
  });
});
