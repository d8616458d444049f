// Fleet mode under hostile or broken input (issue 24, items 5 and 6): the Worker's fleet entry
// (fleetFetch, fleetQueue) and its Durable Objects (SetObject, LedgerObject) over in-memory
// stand-ins of the runtime (./memory-do.ts), in front of a simulated cluster on a real socket.
// fleet.workerd.test.ts checks the same answers in workerd.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_WEBHOOK_ID_BYTES, webhookHeaders } from "../../../functions/auth.js";
import { clusterGate, consume, durableReplay, MAX_REPLAY_KEY_BYTES } from "../../../functions/fleet/dispatch.js";
import { fleetFetch, fleetQueue } from "../../../functions/fleet/entry.js";
import { LedgerObject, REPLAY_ALARM_PAGE, REPLAY_SHARD_CAPACITY, SetObject } from "../../../functions/fleet/objects.js";
import type { DONamespace, MessageBatch, QueueMessage } from "../../../functions/fleet/runtime.js";
import { Problem } from "../../../functions/http/problem.js";
import { type SocketSim, serveSim, statefulSetObjects, storageClassObjects } from "../../support/index.js";
import { answeringNamespace, leftBehind, MemoryStorage, memoryNamespace } from "./memory-do.js";

const KUBE_TOKEN = "kube-token-alpha-0123456789";
const API_TOKEN = "api-token-0123456789abcdef";
const VIEWER_TOKEN = "viewer-token-0123456789abcdef";
const SECRET = `whsec_${btoa("fleet-hardening-secret-0123456789")}`;
const desired = [{ name: "data", storage: "2Gi", storageClassName: "fast" }];
const bearer = (token = API_TOKEN) => ({ authorization: `Bearer ${token}` });

let alpha: SocketSim;

beforeAll(async () => {
  alpha = await serveSim({ token: KUBE_TOKEN });
  alpha.fake.seed(...storageClassObjects(), ...statefulSetObjects({ desired }));
});
afterAll(async () => {
  await alpha?.close();
});

const vars = () => ({
  KUBE_API_SERVER: alpha.url,
  KUBE_TOKEN,
  CLAIMSTEP_DEFAULT_CLUSTER: "alpha",
  CLAIMSTEP_CLUSTERS: JSON.stringify([{ name: "beta", server: alpha.url, tokenSecret: "KUBE_TOKEN_BETA" }]),
  KUBE_TOKEN_BETA: KUBE_TOKEN,
  CLAIMSTEP_API_TOKEN: API_TOKEN,
  CLAIMSTEP_VIEWER_TOKEN: VIEWER_TOKEN,
  CLAIMSTEP_WEBHOOK_SECRET: SECRET,
  CLAIMSTEP_NAMESPACES: "default",
});

/** A fleet-mode env: real set and ledger objects in memory (or the ledger a test gives). */
function fleetEnv(ledger?: ReturnType<typeof answeringNamespace>["ns"]) {
  const env: Record<string, unknown> = vars();
  const sets = memoryNamespace((storage) => new SetObject({ storage }, env));
  const ledgers = memoryNamespace((storage) => new LedgerObject({ storage }, env));
  const sent: unknown[] = [];
  Object.assign(env, {
    SETS: sets.ns,
    LEDGER: ledger ?? ledgers.ns,
    STEP_QUEUE: { sendBatch: async (m: Iterable<{ body: unknown }>) => void sent.push(...[...m].map((x) => x.body)) },
  });
  return { env, sets, ledgers };
}

const call = async (env: Record<string, unknown>, path: string, init: RequestInit = {}) => {
  const res = await fleetFetch(new Request(`https://claimstep.example${path}`, init), env, {});
  return {
    status: res.status,
    headers: res.headers,
    body: (await res.json()) as { error: string; message: string; failure?: string },
  };
};

const relay = (env: Record<string, unknown>, id: string, name = "web") => {
  const body = JSON.stringify({
    type: "statefulset.changed",
    timestamp: new Date().toISOString(),
    data: { namespace: "default", name },
  });
  return call(env, "/v1/clusters/alpha/relay", {
    method: "POST",
    headers: { "content-type": "application/json", ...webhookHeaders(SECRET, id, new Date(), body) },
    body,
  });
};

const message = (body: unknown): QueueMessage & { acked: boolean; retried: boolean } => {
  const m = {
    id: "m1",
    body,
    attempts: 1,
    acked: false,
    retried: false,
    ack: () => void (m.acked = true),
    retry: () => void (m.retried = true),
  };
  return m;
};

describe("item 5: the fleet's routes and set objects", () => {
  it("a bad percent-escape in the cluster segment is a 400 naming the segment, not an uncaught URIError", async () => {
    const { env } = fleetEnv();
    const r = await call(env, "/v1/clusters/%E0%A4%A/statefulsets/default/web", { headers: bearer() });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("BadRequest");
    expect(r.body.message).toBe(
      'the cluster segment "%E0%A4%A" is not valid percent-encoding: name a configured cluster, e.g. /v1/clusters/<name>/…',
    );
    // The escape of a valid name still reaches that cluster.
    expect((await call(env, "/v1/clusters/%61lpha/statefulsets/default/web", { headers: bearer() })).status).toBe(200);
  });

  it("an unknown cluster's 404 names the configured clusters only to an authenticated caller", async () => {
    const { env } = fleetEnv();
    const anonymous: Record<string, string>[] = [
      {},
      bearer("not-a-token-0123456789"),
      { "webhook-signature": "v1,AAAA", "webhook-id": "x", "webhook-timestamp": "1" },
    ];
    for (const headers of anonymous) {
      const anon = await call(env, "/v1/clusters/mars/statefulsets/default/web", { headers });
      expect(anon.status).toBe(404);
      expect(anon.body.message).toBe(
        'cluster "mars" is not configured here; authenticate (Authorization: Bearer <token>) to see the configured ones',
      );
      expect(JSON.stringify(anon.body)).not.toMatch(/alpha|beta/);
    }
    for (const token of [API_TOKEN, VIEWER_TOKEN]) {
      const known = await call(env, "/v1/clusters/mars/statefulsets/default/web", { headers: bearer(token) });
      expect(known.status).toBe(404);
      expect(known.body.message).toBe(
        'cluster "mars" is not configured (configured: alpha, beta); add it to CLAIMSTEP_CLUSTERS',
      );
    }
  });

  it("a step of a StatefulSet that does not exist answers 404 and leaves nothing in its set object", async () => {
    const { env, sets } = fleetEnv();
    const r = await call(env, "/v1/clusters/alpha/steps", {
      method: "POST",
      headers: { ...bearer(), "content-type": "application/json" },
      body: JSON.stringify({ namespace: "default", name: "ghost" }),
    });
    expect(r.status).toBe(404);
    expect(r.body.message).toMatch(/^StatefulSet default\/ghost not found/);
    expect(sets.objects.has("set:alpha/default/ghost")).toBe(true); // the object was asked…
    expect(leftBehind(sets.objects)).toEqual([]); // …and keeps nothing
    // An existing set keeps its state.
    expect(
      (
        await call(env, "/v1/clusters/alpha/steps", {
          method: "POST",
          headers: { ...bearer(), "content-type": "application/json" },
          body: JSON.stringify({ namespace: "default", name: "web" }),
        })
      ).status,
    ).toBe(200);
    expect(leftBehind(sets.objects).map((o) => o.name)).toEqual(["set:alpha/default/web"]);
  });

  it("a queue message for a set that does not exist: its object's alarm step clears it", async () => {
    const { env, sets } = fleetEnv();
    const m = message({ v: 1, cluster: "alpha", namespace: "default", name: "ghost" });
    await fleetQueue({ queue: "claimstep-steps", messages: [m] } as MessageBatch, env);
    expect(m.acked).toBe(true);
    const o = sets.objects.get("set:alpha/default/ghost")!;
    expect(o.storage.alarm).not.toBeNull(); // the poke: a step at once, in the object's alarm
    await o.instance.alarm();
    expect(leftBehind(sets.objects)).toEqual([]);
  });

  it("a queue message for a cluster that is not configured is dropped without creating a set object", async () => {
    const { env, sets } = fleetEnv();
    const m = message({ v: 1, cluster: "mars", namespace: "default", name: "web" });
    await fleetQueue({ queue: "claimstep-steps", messages: [m] } as MessageBatch, env);
    expect(m.acked).toBe(true);
    expect(m.retried).toBe(false);
    expect(sets.requests()).toBe(0);
    expect(leftBehind(sets.objects)).toEqual([]);
  });

  it("a poke its set object refuses (4xx) is dropped, not retried five times", async () => {
    const { env, sets } = fleetEnv();
    const m = message({ v: 1, cluster: "mars", namespace: "default", name: "web" });
    const logged: Record<string, unknown>[] = [];
    // Without the consumer's own check (a configuration changed between the send and the poke).
    const r = await consume({ queue: "claimstep-steps", messages: [m] } as MessageBatch, env.SETS as DONamespace, (e) =>
      logged.push(e),
    );
    expect(r).toEqual({ poked: 0, dropped: 1, retried: 0 });
    expect(m.acked).toBe(true);
    expect(m.retried).toBe(false);
    expect(logged[0]).toMatchObject({
      msg: "queue message dropped",
      cluster: "mars",
      problem: expect.stringMatching(/^its object answered 404: cluster "mars" is not configured/),
    });
    expect(leftBehind(sets.objects)).toEqual([]);
  });

  it("a set object asked for a cluster that is not configured refuses (404) and stores nothing", async () => {
    const env: Record<string, unknown> = vars();
    const storage = new MemoryStorage();
    const o = new SetObject({ storage }, env);
    for (const path of ["/poke", "/step"]) {
      const res = await o.fetch(
        new Request(`https://do${path}`, {
          method: "POST",
          body: JSON.stringify({ cluster: "mars", namespace: "default", name: "web" }),
        }),
      );
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: string }).error).toMatch(/cluster "mars" is not configured/);
    }
    const bad = await o.fetch(
      new Request("https://do/poke", { method: "POST", body: JSON.stringify({ cluster: "alpha" }) }),
    );
    expect(bad.status).toBe(400);
    expect(storage.map.size).toBe(0);
    expect(storage.alarm).toBeNull();
  });
});

describe("item 6: the replay ledger fails closed and is bounded", () => {
  const badAnswers: [string, () => Response][] = [
    ["{}", () => Response.json({})],
    ['{"ok":false}', () => Response.json({ ok: false })],
    ['{"ok":false,"reason":"full"} without retryAfterSeconds', () => Response.json({ ok: false, reason: "full" })],
    ['{"ok":"true"}', () => Response.json({ ok: "true" })],
    ["an error JSON, 500", () => Response.json({ error: "InternalError", message: "boom" }, { status: 500 })],
    ['{"ok":true} with a 500', () => Response.json({ ok: true }, { status: 500 })],
    ["not JSON", () => new Response("<html>oops</html>", { status: 200 })],
    [
      "a thrown error",
      () => {
        throw new Error("the object was reset");
      },
    ],
  ];

  it.each(badAnswers)("a ledger answering %s refuses the delivery: 503 naming the ledger", async (_what, answer) => {
    const ledger = answeringNamespace((path) => (path === "/replay/claim" ? answer() : Response.json({ ok: true })));
    const { env, sets } = fleetEnv(ledger.ns);
    const r = await relay(env, `evt_${Math.random().toString(36).slice(2)}`);
    expect(r.status).toBe(503);
    expect(r.body.error).toBe("Unavailable");
    expect(r.body.message).toMatch(
      /^the replay ledger \(Durable Object LEDGER "replay:\d"\) gave no valid answer \(.+\): the signed request was refused, not accepted unchecked; retry later$/,
    );
    expect(r.headers.get("retry-after")).toBe("5");
    expect(sets.requests()).toBe(0); // no step ran
  });

  it("only an explicit ok:true with a 2xx status is accepted; replayed and full keep their answers", async () => {
    const claims = (body: unknown, status = 200) =>
      durableReplay(answeringNamespace(() => Response.json(body, { status })).ns).claim(
        "standard-webhooks:evt_1",
        1_000,
        2_000,
      );
    await expect(claims({ ok: true })).resolves.toEqual({ ok: true });
    await expect(claims({ ok: true }, 201)).resolves.toEqual({ ok: true });
    await expect(claims({ ok: false, reason: "replayed" })).resolves.toEqual({ ok: false, reason: "replayed" });
    await expect(claims({ ok: false, reason: "full", retryAfterSeconds: 7.2 })).resolves.toEqual({
      ok: false,
      reason: "full",
      retryAfterSeconds: 8,
    });
    await expect(claims({ ok: false, reason: "replayed" }, 500)).rejects.toBeInstanceOf(Problem);
    await expect(claims({ ok: false, reason: "full", retryAfterSeconds: -1 })).rejects.toBeInstanceOf(Problem);
  });

  it("a cluster's gate read from a ledger answering badly is an error naming the ledger, not a backoff of undefined", async () => {
    const gate = (body: unknown, status = 200) =>
      clusterGate(answeringNamespace(() => Response.json(body, { status })).ns);
    await expect(gate({ failures: 2, untilMs: 5 }).get("alpha")).resolves.toEqual({ failures: 2, untilMs: 5 });
    for (const [body, status] of [
      [{}, 200],
      [{ error: "boom" }, 500],
      [{ failures: 0, untilMs: 0 }, 500],
      [{ failures: "1", untilMs: 0 }, 200],
    ] as const) {
      await expect(gate(body, status).get("alpha")).rejects.toThrow(
        /^the cluster ledger \(Durable Object LEDGER "cluster:alpha"\) gave no valid backoff \(HTTP \d+, .*\)$/,
      );
      await expect(gate(body, status).fail("alpha", 1_000)).rejects.toThrow(/gave no valid backoff/);
    }
  });

  it(`a delivery id over ${MAX_REPLAY_KEY_BYTES} bytes is refused (400) before it reaches the ledger`, async () => {
    const { env, ledgers, sets } = fleetEnv();
    const long = `msg_${"a".repeat(8_000)}`;
    const r = await relay(env, long);
    expect(r.status).toBe(400);
    // Refused by the signature check's own bound (functions/auth.ts), which keeps every key within the ledger's.
    expect(r.body.message).toBe(
      `webhook-id is 8004 bytes; at most ${MAX_WEBHOOK_ID_BYTES} are accepted: send a shorter id`,
    );
    expect(ledgers.requests()).toBe(0);
    expect(sets.requests()).toBe(0);
    // A multi-byte id is measured in bytes, not characters.
    await expect(
      durableReplay(ledgers.ns).claim(`standard-webhooks:${"é".repeat(120)}`, 1_000, 2_000),
    ).rejects.toMatchObject({ status: 400 });
    expect(ledgers.requests()).toBe(0);
    // An id within the bound is accepted, once.
    const ok = `msg_${"b".repeat(MAX_WEBHOOK_ID_BYTES - "msg_".length)}`;
    expect(`standard-webhooks:${ok}`.length).toBeLessThanOrEqual(MAX_REPLAY_KEY_BYTES);
    expect((await relay(env, ok)).status).toBe(200);
    expect((await relay(env, ok)).body.failure).toBe("Replayed");
  });

  it("the ledger itself refuses an over-long or malformed id (400) and never stores it", async () => {
    const storage = new MemoryStorage();
    const ledger = new LedgerObject({ storage }, {});
    const claim = (body: unknown) =>
      ledger.fetch(new Request("https://do/replay/claim", { method: "POST", body: JSON.stringify(body) }));
    const now = Date.now();
    for (const body of [
      { id: "x".repeat(MAX_REPLAY_KEY_BYTES + 1), nowMs: now, expiresAtMs: now + 1000 },
      { id: "", nowMs: now, expiresAtMs: now + 1000 },
      { id: "a", nowMs: "soon", expiresAtMs: now },
      {},
    ]) {
      const res = await claim(body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { ok: boolean; error: string }).ok).toBe(false);
    }
    expect(storage.map.size).toBe(0);
  });

  it(`a ledger shard holding ${REPLAY_SHARD_CAPACITY} live ids answers full with retryAfter until the soonest expiry`, async () => {
    const storage = new MemoryStorage();
    const ledger = new LedgerObject({ storage }, {});
    const claim = async (id: string, nowMs: number, expiresAtMs: number) =>
      (await (
        await ledger.fetch(
          new Request("https://do/replay/claim", { method: "POST", body: JSON.stringify({ id, nowMs, expiresAtMs }) }),
        )
      ).json()) as Record<string, unknown>;
    const now = Date.now();
    for (let i = 0; i < REPLAY_SHARD_CAPACITY; i++)
      expect(await claim(`standard-webhooks:evt_${i}`, now, now + 60_000 + i)).toEqual({ ok: true });
    expect(await claim("standard-webhooks:evt_one_more", now, now + 60_000)).toEqual({
      ok: false,
      reason: "full",
      retryAfterSeconds: 60,
    });
    expect(storage.map.has("r:standard-webhooks:evt_one_more")).toBe(false);
    // A replay is still told apart from a full store, and a released id frees its place.
    expect(await claim("standard-webhooks:evt_0", now, now + 60_000)).toEqual({ ok: false, reason: "replayed" });
    await ledger.fetch(
      new Request("https://do/replay/release", {
        method: "POST",
        body: JSON.stringify({ id: "standard-webhooks:evt_1" }),
      }),
    );
    expect(await claim("standard-webhooks:evt_one_more", now, now + 60_000)).toEqual({ ok: true });
    expect(await claim("standard-webhooks:evt_two_more", now, now + 60_000)).toMatchObject({
      ok: false,
      reason: "full",
    });
  });

  it(`the ledger's alarm pages through its ids (${REPLAY_ALARM_PAGE} a list), forgets the expired ones and wakes at the next expiry`, async () => {
    const storage = new MemoryStorage();
    const ledger = new LedgerObject({ storage }, {});
    const now = Date.now();
    const total = REPLAY_ALARM_PAGE * 2 + 17;
    // Every third id is still live.
    for (let i = 0; i < total; i++) {
      const live = i % 3 === 0;
      await ledger.fetch(
        new Request("https://do/replay/claim", {
          method: "POST",
          body: JSON.stringify({
            id: `k${String(i).padStart(5, "0")}`,
            nowMs: now - 600_000,
            expiresAtMs: live ? now + 100_000 + i : now - 1_000,
          }),
        }),
      );
    }
    storage.lists.length = 0;
    await ledger.alarm();
    expect(storage.lists.length).toBeGreaterThanOrEqual(3);
    for (const l of storage.lists) expect(l.limit).toBe(REPLAY_ALARM_PAGE);
    const left = [...storage.map.keys()].filter((k) => k.startsWith("r:"));
    expect(left).toHaveLength(Math.ceil(total / 3));
    expect(storage.alarm).toBe(now + 100_000);
    // The count it keeps for the capacity is the live ids'.
    expect(await storage.get("count")).toBe(Math.ceil(total / 3));
  });
});
