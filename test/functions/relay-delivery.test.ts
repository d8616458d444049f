// The relay's deliveries against an app that hangs (a local HTTP server on 127.0.0.1 that never
// answers, or answers the headers and never the body): each attempt gives up after the delivery
// timeout, and a set has at most one delivery in flight, the events that arrive meanwhile merged
// into one follow-up sent after it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { Keys } from "../../core/keys.js";
import {
  DEFAULT_DELIVERY_TIMEOUT_MS,
  deliver,
  Relay,
  type RelayEvent,
  systemClock,
  type WatchEvent,
  type WatchSource,
} from "../../functions/relay/index.js";
import { fixtureJson as fixture } from "../fixtures/apiserver.js";
import { ManualClock, settle } from "./manual-clock.js";

const SECRET = `whsec_${Buffer.from("relay-secret-0123456789abcdef!!").toString("base64")}`;
const event: RelayEvent = {
  type: "statefulset.changed",
  timestamp: "2026-11-30T10:00:00.000Z",
  data: { namespace: "default", name: "web" },
};

/** An app that hangs: it reads each request and never answers (`headers`: answers 200's headers, never the body). */
async function hungApp(mode: "silent" | "headers" = "silent") {
  const requests: { name: string; at: number }[] = [];
  const open = new Set<ServerResponse>();
  let maxOpen = 0;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      requests.push({ name: (JSON.parse(body) as RelayEvent).data.name, at: Date.now() });
      open.add(res);
      maxOpen = Math.max(maxOpen, open.size);
      res.on("close", () => open.delete(res));
      if (mode === "headers") {
        res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
        res.flushHeaders();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/relay`;
  return {
    url,
    requests,
    open: () => open.size,
    maxOpen: () => maxOpen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let apps: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(apps.map((a) => a.close()));
  apps = [];
});

/** Fails instead of hanging: the test is bounded whatever the code under test does. */
const bounded = <T>(p: Promise<T>, ms = 5_000): Promise<T> =>
  Promise.race([
    p,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still running after ${ms} ms`)), ms).unref()),
  ]);

const until = async (cond: () => boolean, ms = 5_000) => {
  for (let i = 0; i < ms / 10 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!cond()) throw new Error("condition not met in time");
};

describe("deliver against a hung app", () => {
  it("the default delivery timeout is 30 s (well under undici's 300 s)", () => {
    expect(DEFAULT_DELIVERY_TIMEOUT_MS).toBe(30_000);
  });

  for (const mode of ["silent", "headers"] as const) {
    it(`gives up each attempt after the timeout and retries (app ${mode === "silent" ? "never answers" : "sends headers, never the body"})`, async () => {
      const app = await hungApp(mode);
      apps.push(app);
      const logs: Record<string, unknown>[] = [];
      const result = await bounded(
        deliver(event, {
          url: app.url,
          secret: SECRET,
          fetch: (u, i) => fetch(u, i),
          clock: systemClock,
          newId: () => `evt_${crypto.randomUUID()}`,
          log: (e) => logs.push(e),
          maxAttempts: 2,
          backoff: { baseMs: 10, maxMs: 10 },
          timeoutMs: 1000,
        }),
      );
      expect(result).toEqual({ ok: false, attempts: 2, error: "no answer within 1000 ms" });
      // The app got the request (it hung, it did not refuse); on a loaded machine the second attempt
      // may be given up before the app has read it.
      expect(app.requests.length).toBeGreaterThanOrEqual(1);
      expect(app.requests.length).toBeLessThanOrEqual(2);
      expect(app.requests.every((r) => r.name === "web")).toBe(true);
      expect(logs.map((l) => l.msg)).toEqual(["relay delivery failed: retrying", "relay delivery gave up"]);
      // The abandoned requests' connections are closed, not left open on the app.
      await until(() => app.open() === 0);
    });
  }
});

/** A watch source the test pushes events into. */
class PushSource implements WatchSource {
  lists: Record<string, { items: any[]; resourceVersion: string }> = {};
  private streams = new Map<string, (e: WatchEvent) => void>();
  async list(path: string) {
    return this.lists[path] ?? { items: [], resourceVersion: "1" };
  }
  async watch(path: string, _rv: string, onEvent: (e: WatchEvent) => void, done: (err?: unknown) => void) {
    this.streams.set(path, onEvent);
    return {
      abort: () => {
        this.streams.delete(path);
        done();
      },
    };
  }
  push(path: string, e: WatchEvent) {
    this.streams.get(path)?.(e);
  }
}

const STS = "/apis/apps/v1/namespaces/default/statefulsets";
const PVC = "/api/v1/namespaces/default/persistentvolumeclaims";

const optedIn = (name: string) => {
  const set = fixture("statefulset-web.json");
  set.metadata.name = name;
  set.metadata.annotations = { [Keys.strategy]: "InPlace" };
  return set;
};

describe("Relay: at most one delivery in flight per set", () => {
  it("events of a set whose delivery runs are merged into one follow-up, sent when it finishes; other sets are not held up", async () => {
    const source = new PushSource();
    source.lists[STS] = { items: [optedIn("web"), optedIn("db")], resourceVersion: "10" };
    const clock = new ManualClock();
    const sent: RelayEvent[] = [];
    const finish: Array<() => void> = [];
    const relay = new Relay({
      source,
      clock,
      namespaces: ["default"],
      debounce: { quietMs: 100, maxWaitMs: 1000 },
      send: (e) => {
        sent.push(e);
        return new Promise<void>((resolve) => finish.push(resolve));
      },
    });
    relay.start();
    await settle();
    await clock.advance(100); // the initial list: one event per set
    expect(sent.map((e) => e.data.name).sort()).toEqual(["db", "web"]);
    const webFirst = sent.findIndex((e) => e.data.name === "web");

    // Three bursts for web while its first delivery hangs.
    const pvcs = fixture("pvc-list.json").items;
    for (const pvc of pvcs) {
      source.push(PVC, { type: "MODIFIED", object: pvc });
      await clock.advance(200);
    }
    expect(sent).toHaveLength(2);

    // db's delivery finishing sends nothing more; web's finishing sends ONE follow-up with every cause.
    finish[1 - webFirst]!();
    await settle();
    expect(sent).toHaveLength(2);
    finish[webFirst]!();
    await settle();
    expect(sent).toHaveLength(3);
    expect(sent[2]!.data).toEqual({
      namespace: "default",
      name: "web",
      causes: pvcs.map((p: any) => `pvc ${p.metadata.name} modified`),
    });
    expect(sent[2]!.timestamp).toBe(clock.now().toISOString());

    // Nothing new while the follow-up runs: nothing after it.
    finish[2]!();
    await settle();
    await clock.advance(2000);
    expect(sent).toHaveLength(3);
    await relay.stop();
  });

  it("a follow-up is not sent after stop(), and stop() waits for the running delivery", async () => {
    const source = new PushSource();
    source.lists[STS] = { items: [optedIn("web")], resourceVersion: "10" };
    const clock = new ManualClock();
    const sent: RelayEvent[] = [];
    let finish!: () => void;
    const relay = new Relay({
      source,
      clock,
      namespaces: ["default"],
      debounce: { quietMs: 100, maxWaitMs: 1000 },
      send: (e) => {
        sent.push(e);
        return new Promise<void>((resolve) => (finish = resolve));
      },
    });
    relay.start();
    await settle();
    await clock.advance(100);
    source.push(PVC, { type: "MODIFIED", object: fixture("pvc-list.json").items[0] });
    await clock.advance(100);
    let stopped = false;
    const stopping = relay.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    finish();
    await bounded(stopping);
    expect(sent).toHaveLength(1);
  });

  it("against a hung app (127.0.0.1): one request per set at a time, each given up after the timeout; bursts meanwhile become one follow-up", async () => {
    const app = await hungApp("silent");
    apps.push(app);
    const source = new PushSource();
    source.lists[STS] = { items: [optedIn("web")], resourceVersion: "10" };
    const logs: Record<string, unknown>[] = [];
    const results: unknown[] = [];
    const relay = new Relay({
      source,
      clock: systemClock,
      namespaces: ["default"],
      debounce: { quietMs: 10, maxWaitMs: 50 },
      send: async (e) => {
        const r = await deliver(e, {
          url: app.url,
          secret: SECRET,
          fetch: (u, i) => fetch(u, i),
          clock: systemClock,
          newId: () => `evt_${crypto.randomUUID()}`,
          log: (l) => logs.push(l),
          maxAttempts: 1,
          timeoutMs: 1000,
        });
        results.push(r);
        return r;
      },
    });
    relay.start();
    await until(() => app.requests.length === 1);
    // Ten bursts while the first request hangs.
    const pvcs = fixture("pvc-list.json").items;
    for (let i = 0; i < 10; i++) {
      source.push(PVC, {
        type: "MODIFIED",
        object: {
          ...pvcs[i % pvcs.length],
          metadata: { ...pvcs[i % pvcs.length].metadata, resourceVersion: String(100 + i) },
        },
      });
      await new Promise((r) => setTimeout(r, 20));
    }
    await bounded(until(() => results.length === 2));
    await bounded(relay.stop());
    // The first delivery and one follow-up for the ten bursts (the follow-up may be given up before
    // the app has read it on a loaded machine), never two at once.
    expect(app.requests.length).toBeGreaterThanOrEqual(1);
    expect(app.requests.length).toBeLessThanOrEqual(2);
    expect(app.maxOpen()).toBe(1);
    expect(results).toEqual([
      { ok: false, attempts: 1, error: "no answer within 1000 ms" },
      { ok: false, attempts: 1, error: "no answer within 1000 ms" },
    ]);
  });
});
