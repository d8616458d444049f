import { createHmac } from "node:crypto";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { Keys } from "../../core/keys.js";
import { verifyWebhook } from "../../functions/auth.js";
import type { RelayEvent } from "../../functions/relay/index.js";
import {
  Debouncer,
  deliver,
  Relay,
  ResilientWatch,
  type WatchEvent,
  type WatchSource,
} from "../../functions/relay/index.js";
import { fixtureJson as fixture } from "../fixtures/apiserver.js";
import { ManualClock, settle } from "./manual-clock.js";

const SECRET = `whsec_${Buffer.from("relay-secret-0123456789abcdef!!").toString("base64")}`;

/** A watch source the test drives: lists from arrays, streams it can push to and end. */
class FakeSource implements WatchSource {
  lists: Record<string, { items: any[]; resourceVersion: string }> = {};
  listCalls: string[] = [];
  watchCalls: Array<{ path: string; resourceVersion: string }> = [];
  streams: Array<{ path: string; push: (e: WatchEvent) => void; end: (err?: unknown) => void; aborted: boolean }> = [];
  failWatch = 0;

  async list(path: string) {
    this.listCalls.push(path);
    return this.lists[path] ?? { items: [], resourceVersion: "1" };
  }

  async watch(path: string, resourceVersion: string, onEvent: (e: WatchEvent) => void, done: (err?: unknown) => void) {
    this.watchCalls.push({ path, resourceVersion });
    if (this.failWatch > 0) {
      this.failWatch--;
      throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    }
    let ended = false;
    const stream = {
      path,
      aborted: false,
      push: (e: WatchEvent) => !ended && onEvent(e),
      end: (err?: unknown) => {
        if (ended) return;
        ended = true;
        done(err);
      },
    };
    this.streams.push(stream);
    return {
      abort: () => {
        stream.aborted = true;
        stream.end();
      },
    };
  }

  live(path: string) {
    const s = [...this.streams].reverse().find((x) => x.path === path);
    if (!s) throw new Error(`no stream for ${path}`);
    return s;
  }
}

const STS = "/apis/apps/v1/namespaces/default/statefulsets";
const PVC = "/api/v1/namespaces/default/persistentvolumeclaims";
const POD = "/api/v1/namespaces/default/pods";

const optedInWeb = (rv = "300") => {
  const web = fixture("statefulset-web.json");
  web.metadata.annotations = { [Keys.strategy]: "InPlace" };
  web.metadata.resourceVersion = rv;
  return web;
};

describe("Debouncer", () => {
  it("coalesces a burst into one call after the quiet period, with every cause", async () => {
    const clock = new ManualClock();
    const fired: Array<[string, string[]]> = [];
    const d = new Debouncer(clock, { quietMs: 1000, maxWaitMs: 5000 }, (k, c) => fired.push([k, c]));
    d.touch("default/web", "pvc a");
    d.touch("default/db", "pod db-0");
    await clock.advance(500);
    d.touch("default/web", "pvc b");
    await clock.advance(900);
    expect(fired).toEqual([["default/db", ["pod db-0"]]]);
    await clock.advance(200);
    expect(fired).toEqual([
      ["default/db", ["pod db-0"]],
      ["default/web", ["pvc a", "pvc b"]],
    ]);
    expect(d.size).toBe(0);
  });

  it("fires no later than maxWait after the first event of a never-ending burst", async () => {
    const clock = new ManualClock();
    const firedAt: number[] = [];
    const start = clock.now().getTime();
    const d = new Debouncer(clock, { quietMs: 1000, maxWaitMs: 3000 }, () =>
      firedAt.push(clock.now().getTime() - start),
    );
    for (let i = 0; i < 10; i++) {
      d.touch("default/web", `event ${i}`);
      await clock.advance(500);
    }
    await clock.advance(2000);
    expect(firedAt[0]).toBe(3000);
    expect(firedAt.length).toBe(2); // the burst's rest is a second, later call
  });
});

describe("deliver", () => {
  const event: RelayEvent = {
    type: "statefulset.changed",
    timestamp: "2026-11-30T10:00:00.000Z",
    data: { namespace: "default", name: "web" },
  };

  let clock: ManualClock;
  let t0: number;
  beforeEach(() => {
    clock = new ManualClock();
    t0 = clock.now().getTime();
  });

  const recorder = (answers: Array<number | Error>, headers: Record<string, string> = {}) => {
    const calls: Array<{ url: string; headers: Record<string, string>; body: string; at: number }> = [];
    const fetchFn = (async (url: string, init: RequestInit) => {
      calls.push({
        url,
        headers: init.headers as Record<string, string>,
        body: String(init.body),
        at: clock.now().getTime() - t0,
      });
      const a = answers.shift() ?? 200;
      if (a instanceof Error) throw a;
      return new Response("{}", { status: a, headers: a === 429 ? headers : {} });
    }) as unknown as typeof fetch;
    return { calls, fetchFn };
  };

  it("signs the event so that the app's verifier accepts it (and node:crypto agrees)", async () => {
    const { calls, fetchFn } = recorder([200]);
    let n = 0;
    const r = await deliver(event, {
      url: "https://h/v1/relay",
      secret: SECRET,
      fetch: fetchFn,
      clock,
      newId: () => `evt_${++n}`,
      log: () => {},
    });
    expect(r).toEqual({ ok: true, status: 200, attempts: 1 });
    const h = calls[0]!.headers;
    expect(calls[0]!.body).toBe(JSON.stringify(event));
    // The library checks the timestamp against Date.now(): stand at the relay's (manual) time.
    vi.useFakeTimers({ toFake: ["Date"], now: clock.now() });
    try {
      const verdict = verifyWebhook({
        secrets: [SECRET],
        id: h["webhook-id"],
        timestamp: h["webhook-timestamp"],
        signature: h["webhook-signature"],
        body: calls[0]!.body,
      });
      expect(verdict).toEqual({ ok: true, id: "evt_1" });
    } finally {
      vi.useRealTimers();
    }
    const key = Buffer.from(SECRET.slice(6), "base64");
    const mac = createHmac("sha256", key).update(`evt_1.${h["webhook-timestamp"]}.${calls[0]!.body}`).digest("base64");
    expect(h["webhook-signature"]).toBe(`v1,${mac}`);
  });

  it("retries network errors and 5xx with exponential backoff, each attempt with a fresh id", async () => {
    const { calls, fetchFn } = recorder([new Error("ECONNRESET"), 503, 502, 200]);
    let n = 0;
    const logs: any[] = [];
    const p = deliver(event, {
      url: "u",
      secret: SECRET,
      fetch: fetchFn,
      clock,
      newId: () => `evt_${++n}`,
      log: (e) => logs.push(e),
      backoff: { baseMs: 100, maxMs: 1000 },
    });
    expect(await clock.runUntil(p)).toEqual({ ok: true, status: 200, attempts: 4 });
    expect(calls.map((c) => c.at)).toEqual([0, 100, 300, 700]);
    expect(calls.map((c) => c.headers["webhook-id"])).toEqual(["evt_1", "evt_2", "evt_3", "evt_4"]);
    expect(logs.map((l) => l.retryInMs)).toEqual([100, 200, 400]);
  });

  it("honours Retry-After on 429", async () => {
    const { calls, fetchFn } = recorder([429, 200], { "retry-after": "3" });
    const p = deliver(event, {
      url: "u",
      secret: SECRET,
      fetch: fetchFn,
      clock,
      newId: () => "x",
      log: () => {},
      backoff: { baseMs: 100, maxMs: 60_000 },
    });
    expect((await clock.runUntil(p)).ok).toBe(true);
    expect(calls.map((c) => c.at)).toEqual([0, 3000]);
  });

  it("does not retry a 4xx refusal, and gives up after maxAttempts", async () => {
    const refused = recorder([401]);
    expect(
      await clock.runUntil(
        deliver(event, { url: "u", secret: SECRET, fetch: refused.fetchFn, clock, newId: () => "x", log: () => {} }),
      ),
    ).toEqual({
      ok: false,
      status: 401,
      attempts: 1,
      error: "HTTP 401",
    });
    const down = recorder([500, 500, 500]);
    const p = deliver(event, {
      url: "u",
      secret: SECRET,
      fetch: down.fetchFn,
      clock,
      newId: () => "x",
      log: () => {},
      maxAttempts: 3,
      backoff: { baseMs: 10, maxMs: 10 },
    });
    expect(await clock.runUntil(p)).toEqual({ ok: false, status: 500, attempts: 3, error: "HTTP 500" });
    expect(down.calls.length).toBe(3);
  });
});

describe("ResilientWatch", () => {
  const start = (source: FakeSource, clock: ManualClock, seen: string[] = [], logs: any[] = []) =>
    new ResilientWatch({
      source,
      clock,
      path: STS,
      onObject: (type, o) => seen.push(`${type} ${o.metadata.name}@${o.metadata.resourceVersion}`),
      onResync: () => seen.push("resync"),
      log: (e) => logs.push(e),
      backoff: { baseMs: 1000, maxMs: 8000 },
    });

  it("lists, then watches from the list's resourceVersion, resuming from the last event after a close", async () => {
    const source = new FakeSource();
    source.lists[STS] = { items: [optedInWeb("300")], resourceVersion: "310" };
    const clock = new ManualClock();
    const seen: string[] = [];
    const w = start(source, clock, seen);
    await settle();
    expect(source.watchCalls).toEqual([{ path: STS, resourceVersion: "310" }]);
    source.live(STS).push({ type: "MODIFIED", object: optedInWeb("320") });
    source.live(STS).push({ type: "BOOKMARK", object: { metadata: { resourceVersion: "330" } } });
    source.live(STS).end(); // the server closes watches after its timeout
    await settle();
    expect(source.watchCalls[1]).toEqual({ path: STS, resourceVersion: "330" });
    expect(source.listCalls).toHaveLength(1);
    expect(seen).toEqual(["ADDED web@300", "resync", "MODIFIED web@320"]);
    w.stop();
    await w.finished;
  });

  it("re-lists (resync) on 410 Gone, from an ERROR event or from the HTTP status", async () => {
    const source = new FakeSource();
    source.lists[STS] = { items: [optedInWeb("300")], resourceVersion: "310" };
    const clock = new ManualClock();
    const seen: string[] = [];
    const w = start(source, clock, seen);
    await settle();
    source.live(STS).push({
      type: "ERROR",
      object: { kind: "Status", code: 410, reason: "Expired", message: "too old resource version: 310 (400)" },
    });
    source.live(STS).end();
    await settle();
    expect(source.listCalls).toHaveLength(2);
    source.lists[STS] = { items: [], resourceVersion: "500" };
    source.live(STS).end(Object.assign(new Error("Gone"), { statusCode: 410 }));
    await settle();
    expect(source.listCalls).toHaveLength(3);
    expect(source.watchCalls.map((c) => c.resourceVersion)).toEqual(["310", "310", "500"]);
    expect(w.stats.gone).toBe(2);
    expect(seen.filter((s) => s === "resync")).toHaveLength(3);
    w.stop();
    await w.finished;
  });

  it("reconnects with exponential backoff while the API server is unreachable, then resets", async () => {
    const source = new FakeSource();
    source.failWatch = 3;
    const clock = new ManualClock();
    const logs: any[] = [];
    const w = start(source, clock, [], logs);
    await settle();
    expect(source.watchCalls).toHaveLength(1);
    await clock.advance(1000);
    expect(source.watchCalls).toHaveLength(2);
    await clock.advance(1999);
    expect(source.watchCalls).toHaveLength(2);
    await clock.advance(1);
    expect(source.watchCalls).toHaveLength(3);
    await clock.advance(4000);
    expect(source.watchCalls).toHaveLength(4); // connected now
    // Waited 1, 2 and 4 s; the same failure is logged at its 1st, 2nd, 4th… time (issue 39).
    expect(logs.map((l) => [l.failures, l.retryInMs])).toEqual([
      [1, 1000],
      [2, 2000],
    ]);
    source.live(STS).push({ type: "MODIFIED", object: optedInWeb("400") });
    expect(logs.at(-1)).toMatchObject({ msg: "watch resumed", afterFailures: 3 });
    source.live(STS).end(new Error("socket hang up"));
    await settle();
    // an event arrived: the backoff started over, and the next failure is logged afresh
    expect(logs.at(-1)).toMatchObject({ msg: "watch failed: reconnecting", failures: 1, retryInMs: 1000 });
    w.stop();
    await clock.advance(1000);
    await w.finished;
  });
});

describe("Relay", () => {
  const setup = () => {
    const source = new FakeSource();
    const web = optedInWeb("300");
    const other = fixture("statefulset-web.json");
    other.metadata.name = "cache"; // not opted in
    source.lists[STS] = { items: [web, other], resourceVersion: "310" };
    const clock = new ManualClock();
    const sent: RelayEvent[] = [];
    const relay = new Relay({
      source,
      clock,
      namespaces: ["default"],
      debounce: { quietMs: 1000, maxWaitMs: 5000 },
      send: async (e) => sent.push(e),
    });
    return { source, clock, sent, relay };
  };

  it("tracks only opted-in sets and sends one event per burst of PVC and pod changes", async () => {
    const { source, clock, sent, relay } = setup();
    relay.start();
    await settle();
    expect(relay.tracked()).toEqual([{ namespace: "default", name: "web" }]);
    await clock.advance(1000); // the initial list is itself a change of the set
    expect(sent).toHaveLength(1);

    const pvcs = fixture("pvc-list.json").items;
    const pods = fixture("pod-list.json").items;
    source.live(PVC).push({ type: "MODIFIED", object: pvcs[2] });
    source.live(PVC).push({ type: "MODIFIED", object: pvcs[1] });
    source.live(POD).push({ type: "MODIFIED", object: pods[2] });
    await clock.advance(999);
    expect(sent).toHaveLength(1);
    await clock.advance(1);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toEqual({
      type: "statefulset.changed",
      timestamp: clock.now().toISOString(),
      data: {
        namespace: "default",
        name: "web",
        causes: ["pvc data-web-2 modified", "pvc data-web-1 modified", "pod web-2 modified"],
      },
    });
    await relay.stop();
  });

  it("ignores claims and pods of other sets and of sets not opted in", async () => {
    const { source, clock, sent, relay } = setup();
    relay.start();
    await settle();
    await clock.advance(1000);
    sent.length = 0;
    const pvc = fixture("pvc-list.json").items[0];
    source
      .live(PVC)
      .push({ type: "MODIFIED", object: { ...pvc, metadata: { ...pvc.metadata, name: "data-cache-0" } } });
    source.live(PVC).push({ type: "MODIFIED", object: { ...pvc, metadata: { ...pvc.metadata, name: "data-web-x" } } });
    source
      .live(PVC)
      .push({ type: "MODIFIED", object: { ...pvc, metadata: { ...pvc.metadata, labels: { app: "other" } } } });
    const pod = fixture("pod-list.json").items[0];
    source.live(POD).push({
      type: "MODIFIED",
      object: { ...pod, metadata: { ...pod.metadata, name: "cache-0", ownerReferences: [] } },
    });
    await clock.advance(5000);
    expect(sent).toEqual([]);
    await relay.stop();
  });

  it("stops tracking a set that opts out, and sends nothing for it even mid-debounce", async () => {
    const { source, clock, sent, relay } = setup();
    relay.start();
    await settle();
    await clock.advance(1000);
    sent.length = 0;
    source.live(PVC).push({ type: "MODIFIED", object: fixture("pvc-list.json").items[2] });
    const out = optedInWeb("350");
    out.metadata.annotations = { [Keys.strategy]: "OnClaimDelete" };
    source.live(STS).push({ type: "MODIFIED", object: out });
    await clock.advance(5000);
    expect(relay.tracked()).toEqual([]);
    expect(sent).toEqual([]);
    await relay.stop();
  });

  it("drops sets that vanished while the watch was gone (resync), delivering their deletion once", async () => {
    const { source, clock, sent, relay } = setup();
    relay.start();
    await settle();
    await clock.advance(1000);
    sent.length = 0;
    source.lists[STS] = { items: [], resourceVersion: "900" };
    source.live(STS).push({ type: "ERROR", object: { kind: "Status", code: 410 } });
    source.live(STS).end();
    await settle();
    expect(relay.tracked()).toEqual([]);
    await clock.advance(1000);
    expect(sent.map((e) => [e.data.name, e.data.causes])).toEqual([["web", ["statefulset web deleted"]]]);
    await clock.advance(5000);
    expect(sent).toHaveLength(1);
    await relay.stop();
  });

  it("delivers the deletion of a tracked set (claimstep's orphan delete: the step it causes creates the set again)", async () => {
    const { source, clock, sent, relay } = setup();
    relay.start();
    await settle();
    await clock.advance(1000);
    sent.length = 0;
    source.live(STS).push({ type: "DELETED", object: optedInWeb("400") });
    await clock.advance(1000);
    expect(relay.tracked()).toEqual([]);
    expect(sent).toEqual([
      {
        type: "statefulset.changed",
        timestamp: clock.now().toISOString(),
        data: { namespace: "default", name: "web", causes: ["statefulset web deleted"] },
      },
    ]);
    // Re-created: tracked again, and its creation is delivered like any change.
    source.live(STS).push({ type: "ADDED", object: optedInWeb("410") });
    await clock.advance(1000);
    expect(relay.tracked()).toEqual([{ namespace: "default", name: "web" }]);
    expect(sent.map((e) => e.data.causes)).toEqual([["statefulset web deleted"], ["statefulset web added"]]);
    // A set never tracked (not opted in) is not delivered when deleted.
    const cache = fixture("statefulset-web.json");
    cache.metadata.name = "cache";
    source.live(STS).push({ type: "DELETED", object: cache });
    await clock.advance(5000);
    expect(sent).toHaveLength(2);
    await relay.stop();
  });
});
