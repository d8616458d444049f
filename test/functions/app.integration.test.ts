// The app wired as the Worker and the Node server wire it (KubeClient → KubeReader/KubeWriter,
// functions/wiring.ts), against the msw fake API server: every route end to end, the API
// server's refusals, a whole rollout, and the scheduled sweep of the Worker.
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { signGitHubBody } from "../../adapters/gitops/webhook.js";
import { KubeClient } from "../../adapters/kube/client.js";
import { Keys } from "../../core/keys.js";
import { createApp } from "../../functions/app.js";
import { RecentIds, webhookHeaders } from "../../functions/auth.js";
import { configFromEnv } from "../../functions/config.js";
import { wire } from "../../functions/wiring.js";
import worker, { runScheduled } from "../../functions/worker.js";
import { createSimServer, fixture, statefulSetObjects, storageClassObjects } from "../support/index.js";

const KUBE = "https://kube.test:6443";
const KUBE_TOKEN = "sa-token-for-the-fake";
const TOKEN = "api-token-0123456789abcdef";
const SECRET = `whsec_${btoa("relay-secret-0123456789abcdef!!")}`;
const GITHUB_SECRET = "github-webhook-secret";
const grown = [{ name: "data", storage: "2Gi", storageClassName: "fast" }];

const fake = createSimServer({ baseUrl: KUBE, token: KUBE_TOKEN });
const msw = setupServer(...fake.handlers);
beforeAll(() => msw.listen({ onUnhandledRequest: "error" }));
afterEach(() => msw.resetHandlers());
afterAll(() => msw.close());

const env = {
  CLAIMSTEP_API_TOKEN: TOKEN,
  CLAIMSTEP_WEBHOOK_SECRET: SECRET,
  CLAIMSTEP_NAMESPACES: "default",
  KUBE_API_SERVER: KUBE,
  KUBE_TOKEN,
  CLAIMSTEP_GITHUB_WEBHOOK_SECRET: GITHUB_SECRET,
};

const makeApp = (token = KUBE_TOKEN) => {
  const config = configFromEnv(env);
  const client = new KubeClient({
    server: KUBE,
    headers: { Authorization: `Bearer ${token}` },
    retry: { attempts: 1 },
    sleep: async () => {},
  });
  return createApp(wire({ client, config, now: () => new Date(), replay: new RecentIds() }).deps);
};

const bearer = { authorization: `Bearer ${TOKEN}` };
const json = { ...bearer, "content-type": "application/json" };
const step = (app = makeApp()) =>
  app.request("/v1/steps", {
    method: "POST",
    headers: json,
    body: JSON.stringify({ namespace: "default", name: "web" }),
  });
const storageOf = (name: string) =>
  (fake.get("persistentvolumeclaims", "default", name) as any).spec.resources.requests.storage;

beforeEach(() => {
  fake.reset();
  fake.seed(...storageClassObjects(), ...statefulSetObjects({ desired: grown }));
});

describe("routes against the fake API server", () => {
  it("GET plan reads and writes nothing", async () => {
    const res = await makeApp().request("/v1/statefulsets/default/web", { headers: bearer });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.decision.action).toMatchObject({ claim: "data-web-2", storage: "2Gi" });
    expect(body.writer).toBe("direct");
    expect(fake.http.counters().writes).toBe(0);
    expect(fake.http.counters().byRequest).toMatchObject({
      "get statefulsets": 1,
      "list pods": 1,
      "list persistentvolumeclaims": 1,
      "list storageclasses": 1,
    });
  });

  it("404 names the missing set", async () => {
    const res = await makeApp().request("/v1/statefulsets/default/nope", { headers: bearer });
    expect(res.status).toBe(404);
    expect((await res.json()).message).toMatch(
      /StatefulSet default\/nope not found .*check the name and the namespace$/,
    );
  });

  it("POST /v1/steps rolls the set out to Complete, then writes nothing more", async () => {
    const app = makeApp();
    const phases: string[] = [];
    for (let i = 0; i < 20 && phases.at(-1) !== "Complete"; i++) {
      const res = await step(app);
      expect(res.status).toBe(200);
      phases.push((await res.json()).decision.phase);
      fake.completeResizes();
    }
    expect(phases.at(-1)).toBe("Complete");
    expect(["data-web-0", "data-web-1", "data-web-2"].map(storageOf)).toEqual(["2Gi", "2Gi", "2Gi"]);
    const set: any = fake.get("statefulsets", "default", "web");
    expect(set.metadata.annotations[Keys.currentRevision]).toBe(set.metadata.annotations[Keys.updateRevision]);
    expect(fake.events("default").map((e: any) => e.reason)).toContain("RolloutComplete");
    fake.http.resetCounters();
    const again = await step(app);
    expect((await again.json()).decision.phase).toBe("Complete");
    expect(fake.http.counters().writes).toBe(0);
  });

  it("templates: a YAML manifest writes the annotation and opts in; ?step=true applies the first claim", async () => {
    fake.reset();
    fake.seed(...storageClassObjects(), ...statefulSetObjects({ strategy: null }));
    const manifest = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], storageClassName: fast, resources: {requests: {storage: 5Gi}}}
`;
    const res = await makeApp().request("/v1/statefulsets/default/web/templates?step=true", {
      method: "POST",
      headers: { ...bearer, "content-type": "application/yaml" },
      body: manifest,
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.changed).toBe(true);
    expect(body.outcome.kind).toBe("applied");
    const set: any = fake.get("statefulsets", "default", "web");
    expect(set.metadata.annotations[Keys.strategy]).toBe("InPlace");
    expect(JSON.parse(set.metadata.annotations[Keys.templates])[0].spec.resources.requests.storage).toBe("5Gi");
    expect(storageOf("data-web-2")).toBe("5Gi");
    expect(storageOf("data-web-1")).toBe("1Gi");
  });

  it("templates: 409 when the set changes between read and write, and nothing is written", async () => {
    fake.http.beforeNext("patch statefulsets", () => {
      fake.update("statefulsets", "default", "web", (o: any) => (o.spec.replicas = 4));
    });
    const res = await makeApp().request("/v1/statefulsets/default/web/templates", {
      method: "POST",
      headers: json,
      body: JSON.stringify([{ metadata: { name: "data" }, spec: { resources: { requests: { storage: "7Gi" } } } }]),
    });
    expect(res.status).toBe(409);
    const set: any = fake.get("statefulsets", "default", "web");
    expect(set.metadata.annotations[Keys.templates]).not.toContain("7Gi");
  });

  it("relay: a signed event steps the set it names", async () => {
    const body = JSON.stringify({
      type: "statefulset.changed",
      timestamp: new Date().toISOString(),
      data: { namespace: "default", name: "web" },
    });
    const headers = {
      "content-type": "application/json",
      ...(await webhookHeaders(SECRET, "evt_1", new Date(), body)),
    };
    const res = await makeApp().request("/v1/relay", { method: "POST", headers, body });
    expect(res.status).toBe(200);
    expect(storageOf("data-web-2")).toBe("2Gi");
  });

  it("the mounted GitOps webhooks check their own signature", async () => {
    const app = makeApp();
    const unsigned = await app.request("/v1/webhooks/github", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(unsigned.status).toBe(401);
    const ping = "{}";
    const signed = await app.request("/v1/webhooks/github", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "ping",
        "x-github-delivery": "ping-1",
        "x-hub-signature-256": await signGitHubBody(GITHUB_SECRET, ping),
      },
      body: ping,
    });
    expect(signed.status).toBe(202);
    const gitlab = await app.request("/v1/webhooks/gitlab", { method: "POST", body: "{}" });
    expect(gitlab.status).toBe(404); // not configured
    expect(fake.http.counters().writes).toBe(0);
  });
});

describe("GitOps webhooks end to end", () => {
  const merged = (set: string) =>
    JSON.stringify({
      action: "closed",
      pull_request: {
        number: 9,
        html_url: "https://github.com/octo/fleet/pull/9",
        merged: true,
        head: { ref: `claimstep/default/${set}/7b5b44c86f/2`, repo: { full_name: "octo/fleet" } },
      },
      repository: { full_name: "octo/fleet" },
    });
  const deliver = async (app: ReturnType<typeof makeApp>, body: string, delivery: string) =>
    app.request("/v1/webhooks/github", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "pull_request",
        "x-github-delivery": delivery,
        "x-hub-signature-256": await signGitHubBody(GITHUB_SECRET, body),
      },
      body,
    });

  // Defect: the API server's 404 became a 500 carrying its message, which the forge shows as a
  // failed delivery (and GitLab disables webhooks that keep failing).
  it("a merged pull request of a set that no longer exists is 202, ignored", async () => {
    const res = await deliver(makeApp(), merged("ghost"), "d-ghost");
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      ignored: "StatefulSet default/ghost does not exist (branch claimstep/default/ghost/7b5b44c86f/2)",
    });
    expect(fake.http.counters().writes).toBe(0);
  });

  it("steps the set once per delivery: a replay is 401", async () => {
    const app = makeApp();
    const body = merged("web");
    expect((await deliver(app, body, "d-1")).status).toBe(200);
    const writes = fake.http.counters().writes;
    const again = await deliver(app, body, "d-1");
    expect(again.status).toBe(401);
    expect(await again.json()).toMatchObject({ failure: "Replayed" });
    expect(fake.http.counters().writes).toBe(writes);
  });
});

describe("the API server's refusals", () => {
  it("RBAC on the write: 502 and the claim untouched", async () => {
    fake.http.deny("patch", "persistentvolumeclaims");
    const res = await step();
    expect(res.status).toBe(502);
    expect((await res.json()).message).toMatch(/missing permission: .*persistentvolumeclaims/);
    expect(storageOf("data-web-2")).toBe("1Gi");
  });

  it("a wrong KUBE_TOKEN: 502 saying claimstep's own credentials were rejected", async () => {
    const res = await makeApp("wrong-token").request("/v1/statefulsets/default/web", { headers: bearer });
    expect(res.status).toBe(502);
    expect((await res.json()).message).toMatch(/credentials/);
  });

  it("a lost race on the apply: 503, nothing changed, the next step continues", async () => {
    fake.http.failNext("patch persistentvolumeclaims", { code: 409, body: fixture("pvc-patch-stale-rv").body });
    const res = await step();
    expect(res.status).toBe(503);
    expect(storageOf("data-web-2")).toBe("1Gi");
    const next = await step();
    expect(next.status).toBe(200);
    expect(storageOf("data-web-2")).toBe("2Gi");
  });
});

describe("the Worker's fetch (in Node, through msw)", () => {
  const ctx = { waitUntil: () => {} };

  it("serves the app configured from env, one app per env object", async () => {
    const workerEnv = { ...env };
    const res = await worker.fetch(
      new Request("https://claimstep.test/v1/statefulsets/default/web", { headers: bearer }),
      workerEnv,
      ctx,
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).decision.action.claim).toBe("data-web-2");
    const denied = await worker.fetch(
      new Request("https://claimstep.test/v1/statefulsets/default/web"),
      workerEnv,
      ctx,
    );
    expect(denied.status).toBe(401);
  });

  it("answers 500 on a broken configuration, naming the variable only in the log", async () => {
    const logged: string[] = [];
    const original = console.log;
    console.log = (line: string) => void logged.push(line);
    try {
      const res = await worker.fetch(
        new Request("https://claimstep.test/healthz"),
        { CLAIMSTEP_API_TOKEN: "short-secret-x" },
        ctx,
      );
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({
        error: "Misconfigured",
        message: "the Worker's configuration is invalid; see its log",
      });
    } finally {
      console.log = original;
    }
    expect(logged.join("\n")).toMatch(/KUBE_API_SERVER: required/);
    expect(logged.join("\n")).toMatch(/CLAIMSTEP_API_TOKEN: each token must be at least 16/);
    expect(logged.join("\n")).not.toContain("short-secret-x");
  });
});

describe("the Worker's scheduled sweep (in Node, through msw)", () => {
  const many = () => {
    fake.reset();
    fake.seed(...storageClassObjects());
    for (let i = 0; i < 12; i++)
      fake.seed(...statefulSetObjects({ name: `s${String(i).padStart(2, "0")}`, replicas: 1, desired: grown }));
    fake.seed(...statefulSetObjects({ name: "opted-out", replicas: 1, strategy: null, desired: grown }));
  };

  it("steps as many opted-in sets as the subrequest budget allows, and the next tick continues with the others", async () => {
    many();
    const workerEnv = { ...env, CLAIMSTEP_SUBREQUEST_BUDGET: "50", CLAIMSTEP_SUBREQUESTS_PER_STEP: "10" };
    const minute = 60_000;
    const seen = new Set<string>();
    const starts: number[] = [];
    for (let tick = 1000; tick < 1003; tick++) {
      fake.http.resetCounters();
      const report = await runScheduled({ scheduledTime: tick * minute, cron: "* * * * *" }, workerEnv);
      expect(report.found).toBe(12);
      // Planned for 4 steps of 10 after the listing; the real steps cost less, so one more fits.
      expect(report.stepped.length).toBeGreaterThanOrEqual(4);
      expect(report.deferred).toBe(12 - report.stepped.length);
      expect(fake.http.counters().total).toBeLessThanOrEqual(50);
      report.stepped.forEach((s) => seen.add(s.ref.name));
      starts.push(report.start);
    }
    // The start advances by the planned capacity each tick: three ticks cover all twelve sets.
    expect(starts).toEqual([(1000 * 4) % 12, (1001 * 4) % 12, (1002 * 4) % 12]);
    expect(seen.size).toBe(12);
    expect(
      (fake.get("persistentvolumeclaims", "default", "data-opted-out-0") as any).spec.resources.requests.storage,
    ).toBe("1Gi");
  });

  it("without CLAIMSTEP_NAMESPACES it lists StatefulSets cluster-wide", async () => {
    many();
    fake.seed(...statefulSetObjects({ name: "elsewhere", namespace: "queues", replicas: 1, desired: grown }));
    const { CLAIMSTEP_NAMESPACES: _ns, ...allNamespaces } = env;
    const report = await runScheduled(
      { scheduledTime: 0, cron: "* * * * *" },
      { ...allNamespaces, CLAIMSTEP_SUBREQUEST_BUDGET: "1000" },
    );
    expect(report.found).toBe(13);
    expect(
      fake.http
        .requests()
        .filter((r) => r.verb === "list" && r.resource === "statefulsets")
        .map((r) => r.namespace),
    ).toEqual([undefined]);
    expect(report.stepped.map((s) => s.ref)).toContainEqual({ namespace: "queues", name: "elsewhere" });
  });

  it("a paid budget steps every set in one tick", async () => {
    many();
    const report = await runScheduled(
      { scheduledTime: 0, cron: "* * * * *" },
      { ...env, CLAIMSTEP_SUBREQUEST_BUDGET: "1000" },
    );
    expect(report).toMatchObject({ found: 12, deferred: 0 });
    expect(report.stepped.every((s) => "outcome" in s && s.outcome === "applied")).toBe(true);
  });

  it("refuses to run without KUBE_API_SERVER", async () => {
    await expect(runScheduled({ scheduledTime: 0, cron: "* * * * *" }, { CLAIMSTEP_API_TOKEN: TOKEN })).rejects.toThrow(
      /KUBE_API_SERVER: required/,
    );
  });
});
