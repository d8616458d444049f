// The Worker in the real Workers runtime: `wrangler dev` (workerd) against a fake API server on
// 127.0.0.1: the plan route, a signed relay event, and a `scheduled` run (`/__scheduled`, from
// --test-scheduled). The tests run in order: each continues the rollout the previous one left.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Keys } from "../../core/keys.js";
import { webhookHeaders } from "../../functions/auth.js";
import { type SocketSim, serveSim, statefulSetObjects, storageClassObjects } from "../support/index.js";
import { WRANGLER_START_MS, WranglerDev } from "../support/wrangler-dev.js";

const KUBE_TOKEN = "kube-token-for-the-fake-apiserver";
const API_TOKEN = "api-token-0123456789abcdef";
const SECRET = `whsec_${btoa("workerd-relay-secret-0123456789")}`;

let kube: SocketSim;
let dev: WranglerDev;
let base = "";

beforeAll(async () => {
  kube = await serveSim({ token: KUBE_TOKEN });
  kube.fake.seed(
    ...storageClassObjects(),
    ...statefulSetObjects({ desired: [{ name: "data", storage: "2Gi", storageClassName: "fast" }] }),
  );
  const vars = {
    KUBE_API_SERVER: kube.url,
    KUBE_TOKEN,
    CLAIMSTEP_API_TOKEN: API_TOKEN,
    CLAIMSTEP_WEBHOOK_SECRET: SECRET,
    CLAIMSTEP_BODY_LIMIT_BYTES: "4096",
    CLAIMSTEP_NAMESPACES: "default",
    CLAIMSTEP_SUBREQUEST_BUDGET: "50",
    // The one-invocation sweep (fleet mode's fan-out is test/functions/fleet/fleet.workerd.test.ts).
    CLAIMSTEP_DISPATCH: "sweep",
  };
  dev = await WranglerDev.create({ vars, persistPrefix: "claimstep-wrangler-" });
  base = dev.base;
  await dev.start(WRANGLER_START_MS);
}, 150_000);

afterAll(async () => {
  await dev?.dispose();
  await kube?.close();
});

describe("the Worker in workerd", () => {
  it("serves the plan of a set through the fake API server, writing nothing", async () => {
    const res = await fetch(`${base}/v1/statefulsets/default/web`, {
      headers: { authorization: `Bearer ${API_TOKEN}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.decision.phase).toBe("Progressing");
    expect(body.decision.action).toMatchObject({ claim: "data-web-2", storage: "2Gi" });
    expect(kube.fake.http.counters().writes).toBe(0);
    const denied = await fetch(`${base}/v1/statefulsets/default/web`);
    expect(denied.status).toBe(401);
  });

  it("steps on a signed relay event (the runtime's Web Crypto), rejects forgeries and replays, limits bodies", async () => {
    const body = JSON.stringify({
      type: "statefulset.changed",
      timestamp: new Date().toISOString(),
      data: { namespace: "default", name: "web" },
    });
    const headers = {
      "content-type": "application/json",
      ...(await webhookHeaders(SECRET, "evt_workerd", new Date(), body)),
    };
    // A wrong signature first: nothing is stepped, and the id is not burnt.
    const forged = await fetch(`${base}/v1/relay`, {
      method: "POST",
      headers: { ...headers, "webhook-signature": "v1,AAAA" },
      body,
    });
    expect(forged.status).toBe(401);
    expect(kube.fake.http.counters().writes).toBe(0);
    const tampered = await fetch(`${base}/v1/relay`, {
      method: "POST",
      headers,
      body: body.replace('"web"', '"other"'),
    });
    expect(tampered.status).toBe(401);
    const accepted = await fetch(`${base}/v1/relay`, { method: "POST", headers, body });
    expect(accepted.status).toBe(200);
    expect(((await accepted.json()) as any).outcome.kind).toBe("applied");
    const replayed = await fetch(`${base}/v1/relay`, { method: "POST", headers, body });
    expect(replayed.status).toBe(401);
    expect(((await replayed.json()) as any).failure).toBe("Replayed");
    const writes = kube.fake.http.counters().writes;
    const big = await fetch(`${base}/v1/steps`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ namespace: "default", name: "web", pad: "x".repeat(8192) }),
    });
    expect(big.status).toBe(413);
    expect(kube.fake.http.counters().writes).toBe(writes);
    kube.fake.completeResizes(); // data-web-2 is grown: the next step moves on to ordinal 1
  });

  it("steps the opted-in set on a scheduled run", async () => {
    const res = await fetch(`${base}/__scheduled?cron=*+*+*+*+*`);
    expect(res.status).toBe(200);
    const requests = kube.fake.http.requests().map((r) => `${r.verb} ${r.resource}${r.name ? ` ${r.name}` : ""}`);
    expect(requests).toContain("list statefulsets");
    expect(requests).toContain("patch persistentvolumeclaims data-web-1");
    const claim: any = kube.fake.get("persistentvolumeclaims", "default", "data-web-1");
    expect(claim.spec.resources.requests.storage).toBe("2Gi");
    const set: any = kube.fake.get("statefulsets", "default", "web");
    expect(set.metadata.annotations[Keys.updateRevision]).toEqual(expect.any(String));
    expect(kube.fake.events("default").map((e: any) => e.reason)).toContain("ClaimUpdated");
    // The Worker's own log line reaches wrangler's output a moment after the response.
    for (let i = 0; i < 40 && !dev.output.includes('"msg":"scheduled"'); i++)
      await new Promise((r) => setTimeout(r, 250));
    const line = dev.output.split("\n").find((l) => l.includes('"msg":"scheduled"'));
    expect(JSON.parse(line!)).toMatchObject({
      cron: "* * * * *",
      found: 1,
      deferred: 0,
      stepped: [{ ref: { namespace: "default", name: "web" }, outcome: "applied" }],
    });
    expect(dev.output).not.toContain(KUBE_TOKEN);
    expect(dev.output).not.toContain(API_TOKEN);
  });
});
