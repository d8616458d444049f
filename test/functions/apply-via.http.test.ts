// A set's `claimstep.io/apply-via` through the HTTP app, wired as the Worker and the Node server
// wire it: a value claimstep does not know, or pull requests with no repository configured, is a
// decision (Blocked, with the fix), answered 200 like any other, never a 500.
import { setupServer } from "msw/node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { KubeClient } from "../../adapters/kube/client.js";
import { Keys } from "../../core/keys.js";
import { createApp } from "../../functions/app.js";
import { RecentIds } from "../../functions/auth.js";
import { configFromEnv } from "../../functions/config.js";
import { wire } from "../../functions/wiring.js";
import { createSimServer, statefulSetObjects, storageClassObjects } from "../support/index.js";

const KUBE = "https://kube.test:6443";
const KUBE_TOKEN = "sa-token-for-the-fake";
const TOKEN = "test-token-0123456789abcdef";
const NOW = new Date("2026-11-30T10:00:00Z");
const bearer = { authorization: `Bearer ${TOKEN}` };

const fake = createSimServer({ baseUrl: KUBE, token: KUBE_TOKEN, now: NOW });
const msw = setupServer(...fake.handlers);
beforeAll(() => msw.listen({ onUnhandledRequest: "error" }));
afterAll(() => msw.close());

const app = () => {
  const config = configFromEnv({ CLAIMSTEP_API_TOKEN: TOKEN });
  const client = new KubeClient({
    server: KUBE,
    headers: { Authorization: `Bearer ${KUBE_TOKEN}` },
    retry: { attempts: 1 },
  });
  return createApp(wire({ client, config, now: () => NOW, replay: new RecentIds() }).deps);
};

const withApplyVia = (value: string) => {
  fake.reset();
  fake.seed(
    ...storageClassObjects(),
    ...statefulSetObjects({ desired: [{ name: "data", storage: "2Gi", storageClassName: "fast" }] }),
  );
  fake.update(
    "statefulsets",
    "default",
    "web",
    (s) => (s.metadata.annotations = { ...s.metadata.annotations, [Keys.applyVia]: value }),
  );
};

const claimWrites = () =>
  fake.http.requests().filter((r) => r.verb !== "get" && r.verb !== "list" && r.resource === "persistentvolumeclaims");

beforeEach(() => fake.reset());

describe("claimstep.io/apply-via on the HTTP routes", () => {
  it("a bad value: the plan route answers 200 with a Blocked decision naming the set, the annotation and the fix", async () => {
    withApplyVia("PullRequest");
    const res = await app().request("/v1/statefulsets/default/web", { headers: bearer });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      decision: { phase: string; reason: string; message: string; action?: unknown };
    };
    expect(body.decision).toMatchObject({ phase: "Blocked", reason: "InvalidApplyVia" });
    expect(body.decision.message).toBe(
      'StatefulSet default/web: annotation claimstep.io/apply-via="PullRequest" is not one of direct, pull-request: fix or remove it (absent = direct)',
    );
    expect(body.decision.action).toBeUndefined();
  });

  it("a bad value: a step records the Blocked status and writes no claim", async () => {
    withApplyVia("gitops");
    const res = await app().request("/v1/steps", {
      method: "POST",
      headers: { ...bearer, "content-type": "application/json" },
      body: JSON.stringify({ namespace: "default", name: "web" }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { decision: { reason: string } }).decision.reason).toBe("InvalidApplyVia");
    expect(claimWrites()).toEqual([]);
    const status = JSON.parse((fake.get("statefulsets", "default", "web") as any).metadata.annotations[Keys.status]);
    expect(status).toMatchObject({ phase: "Blocked", reason: "InvalidApplyVia" });
  });

  it("pull-request with no GitOps repository configured: Blocked/ActionNotSupported with the fix, not a 500", async () => {
    withApplyVia("pull-request");
    const res = await app().request("/v1/statefulsets/default/web", { headers: bearer });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { decision: { phase: string; reason: string; message: string } };
    expect(body.decision).toMatchObject({ phase: "Blocked", reason: "ActionNotSupported" });
    expect(body.decision.message).toMatch(
      /no GitOps repository is configured: configure one, or set the annotation to direct/,
    );
  });
});
