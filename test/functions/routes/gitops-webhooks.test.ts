// The forge webhooks as the Worker and the Node server wire them (functions/wiring.ts), beside the
// relay route: deliveries from forks are not claimstep's, and forge deliveries have a replay store
// of their own, so however many of them arrive, the relay's signed events are still accepted.
import { setupServer } from "msw/node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { signGitHubBody } from "../../../adapters/gitops/webhook.js";
import { KubeClient } from "../../../adapters/kube/client.js";
import { createApp } from "../../../functions/app.js";
import { type AnyReplayGuard, RecentIds, webhookHeaders } from "../../../functions/auth.js";
import { configFromEnv } from "../../../functions/config.js";
import { durableReplay, FORGE_REPLAY_SHARDS } from "../../../functions/fleet/dispatch.js";
import type { DONamespace } from "../../../functions/fleet/runtime.js";
import { wire } from "../../../functions/wiring.js";
import { createSimServer, statefulSetObjects, storageClassObjects } from "../../support/index.js";

const KUBE = "https://kube.test:6443";
const KUBE_TOKEN = "sa-token-for-the-fake";
const TOKEN = "test-token-0123456789abcdef";
const SECRET = `whsec_${btoa("relay-secret-0123456789abcdef!!")}`;
const GITHUB_SECRET = "github-hook-secret";
const NOW = new Date();

const fake = createSimServer({ baseUrl: KUBE, token: KUBE_TOKEN, now: NOW });
const msw = setupServer(...fake.handlers);
beforeAll(() => msw.listen({ onUnhandledRequest: "error" }));
afterAll(() => msw.close());
beforeEach(() => {
  fake.reset();
  fake.seed(
    ...storageClassObjects(),
    ...statefulSetObjects({ desired: [{ name: "data", storage: "2Gi", storageClassName: "fast" }] }),
  );
});

const REPOSITORY = JSON.stringify({
  provider: "github",
  repository: "octo/fleet",
  pathTemplate: "clusters/prod/claims/{namespace}/{name}.yaml",
});

function app(replay: RecentIds, forgeReplay?: AnyReplayGuard) {
  const config = configFromEnv({
    CLAIMSTEP_API_TOKEN: TOKEN,
    CLAIMSTEP_WEBHOOK_SECRET: SECRET,
    CLAIMSTEP_GITHUB_WEBHOOK_SECRET: GITHUB_SECRET,
    CLAIMSTEP_GITOPS_REPOSITORY: REPOSITORY,
    CLAIMSTEP_GITOPS_TOKEN: "ghp_unused",
  });
  const client = new KubeClient({
    server: KUBE,
    headers: { Authorization: `Bearer ${KUBE_TOKEN}` },
    retry: { attempts: 1 },
  });
  return createApp(wire({ client, config, now: () => NOW, replay, ...(forgeReplay ? { forgeReplay } : {}) }).deps);
}

let seq = 0;
/** A genuine (signed) delivery: the pull request of a set that does not exist (202, its ids kept for the hour). */
async function postGitHub(a: ReturnType<typeof app>, headRepo: string, set = "gone") {
  const body = JSON.stringify({
    action: "closed",
    number: ++seq,
    pull_request: {
      number: seq,
      html_url: `https://github.com/octo/fleet/pull/${seq}`,
      merged: true,
      head: { ref: `claimstep/default/${set}/7b5b44c86f/${seq % 5}`, repo: { full_name: headRepo } },
      base: { ref: "main", repo: { full_name: "octo/fleet" } },
    },
    repository: { full_name: "octo/fleet" },
  });
  return a.request("/v1/webhooks/github", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": "pull_request",
      "x-github-delivery": `d-${seq}`,
      "x-hub-signature-256": await signGitHubBody(GITHUB_SECRET, body),
    },
    body,
  });
}

async function postRelay(a: ReturnType<typeof app>, id: string) {
  const body = JSON.stringify({
    type: "statefulset.changed",
    timestamp: NOW.toISOString(),
    data: { namespace: "default", name: "web", causes: ["pvc data-web-2 modified"] },
  });
  return a.request("/v1/relay", {
    method: "POST",
    headers: { "content-type": "application/json", ...(await webhookHeaders(SECRET, id, new Date(), body)) },
    body,
  });
}

describe("forge webhooks beside the relay (issue 24, item 2)", () => {
  // Defect: the forge webhooks kept their ids in the relay's replay store; once forge deliveries
  // filled it, a genuine relay event got 503 Retry-After (an hour).
  it("forge deliveries do not use up the relay's replay budget", async () => {
    const relayStore = new RecentIds(4);
    const a = app(relayStore);
    for (let i = 0; i < 3; i++) expect((await postGitHub(a, "octo/fleet")).status).toBe(202); // own repository, set gone: kept
    expect(relayStore.size).toBe(0);
    const relay = await postRelay(a, "evt_after_forge");
    expect(relay.status).toBe(200);
    expect(relayStore.size).toBe(1);
  });

  it("a fork's deliveries are ignored before anything is stored, and do not step the set", async () => {
    const relayStore = new RecentIds(4);
    const a = app(relayStore);
    const before = fake.http.counters().total;
    const res = await postGitHub(a, "mallory/fleet", "web");
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      ignored: `pull request #${seq} comes from mallory/fleet, not octo/fleet: not claimstep's`,
    });
    expect(fake.http.counters().total).toBe(before); // nothing read from the cluster: no step
    expect(relayStore.size).toBe(0);
  });
});

describe("a replay store that fails part-way", () => {
  // Defect (found with item 6): a delivery's keys (its id, then its body) were claimed one by one,
  // and when the store threw on the second, the first stayed claimed: GitHub's redelivery was then
  // refused as a replay for the whole window.
  it("releases the keys it claimed before the failure, so the redelivery is accepted", async () => {
    const inner = new RecentIds();
    let calls = 0;
    const failing: AnyReplayGuard = {
      claim: async (id, now, until) => {
        if (++calls === 2) throw new Error("ledger unreachable");
        return inner.claim(id, now, until);
      },
      release: (id) => inner.release(id),
    };
    const a = app(new RecentIds(), failing);
    const first = await postGitHub(a, "octo/fleet");
    expect(first.status).toBeGreaterThanOrEqual(500);
    expect(inner.size).toBe(0);
    // The redelivery: same delivery id, same body.
    seq--;
    expect((await postGitHub(a, "octo/fleet")).status).toBe(202);
    expect(inner.size).toBe(2);
  });
});

describe("a replay store that answers something else (issue 37, item 5d)", () => {
  // Defect: the forge route read the store's answer with a loose `if (r.ok)`, so `{ ok: 1 }` (a store
  // of another kind or version) accepted the delivery unchecked. Read as every signed route reads it.
  it.each([[{ ok: 1 }], [{ ok: "true" }], [{}], [null], [{ ok: false, reason: "full" }]])(
    "%j refuses the delivery with 503 and Retry-After, and releases what it claimed",
    async (answer) => {
      const inner = new RecentIds();
      let calls = 0;
      const odd = {
        claim: async (id: string, now: number, until: number) =>
          ++calls === 2 ? (answer as never) : inner.claim(id, now, until),
        release: (id: string) => inner.release(id),
      } as AnyReplayGuard;
      const res = await postGitHub(app(new RecentIds(), odd), "octo/fleet");
      expect(res.status).toBe(503);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(inner.size).toBe(0);
    },
  );
});

describe("fleet mode: forge deliveries in ledger objects of their own (issue 24, item 2)", () => {
  // The fleet Worker keeps replay ids in LedgerObjects; forge deliveries get their own shards
  // (`forge-replay:<n>`), so that they never use up the capacity of the relay's (`replay:<n>`).
  it("durableReplay names its shards by kind", async () => {
    const names: string[] = [];
    const ns: DONamespace = {
      idFromName: (name) => name,
      get: (id) => ({ fetch: async () => (names.push(String(id)), Response.json({ ok: true })) }),
    };
    expect(await durableReplay(ns).claim("standard-webhooks:evt_1", 0, 1)).toEqual({ ok: true });
    expect(await durableReplay(ns, FORGE_REPLAY_SHARDS).claim("github:delivery:d-1", 0, 1)).toEqual({ ok: true });
    expect(names[0]).toMatch(/^replay:\d+$/);
    expect(names[1]).toMatch(/^forge-replay:\d+$/);
  });
});
