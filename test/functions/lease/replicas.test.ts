// Several `claimstep serve` replicas (in-process: startServer with the Elector, each with its own
// KubeClient to one simulated cluster over its HTTP handler) on virtual time: exactly one sweeps
// at any time; a killed holder is replaced; a holder that cannot reach the API server stops
// sweeping before anyone takes over; a replica shut down releases the Lease; every replica answers
// webhooks throughout.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { KubeReader, listOptedInSets } from "../../../adapters/kube/reader.js";
import { kubeWriters } from "../../../adapters/kube/writer.js";
import type { SimCluster } from "../../../adapters/sim/cluster.js";
import { createApp } from "../../../functions/app.js";
import { RecentIds, webhookHeaders } from "../../../functions/auth.js";
import { type Elector, kubeElector, LEASE_NAME } from "../../../functions/lease/index.js";
import { type RunningServer, startServer } from "../../../functions/server.js";
import type { StepResult } from "../../../functions/step.js";
import { sweep } from "../../../functions/sweep.js";
import { capturedSim, desiredData } from "../../support/index.js";

const T0 = Date.parse("2026-11-30T10:00:00Z");
const SECRET = `whsec_${Buffer.from("lease-test-secret-0123456789abcdef").toString("base64")}`;
const DURATION_S = 15;
const RENEW_S = 5;

interface Replica {
  name: string;
  elector: Elector;
  server: RunningServer;
  /** Whether the replica reaches the API server. */
  reachable: boolean;
  /** Virtual times of its sweep passes (the interval tick ran: it held the Lease). */
  sweeps: number[];
  logs: Record<string, unknown>[];
  closed?: Promise<void>;
}

let sim: SimCluster;
let replicas: Replica[];
/** Virtual time (ms) → the replicas holding the Lease then, sampled every 100 ms. */
const holders: { at: number; who: string[] }[] = [];

async function startReplica(name: string): Promise<Replica> {
  const r = { name, reachable: true, sweeps: [], logs: [] } as unknown as Replica;
  const client = sim.newClient({
    fetch: (url, init) =>
      r.reachable
        ? sim.http.fetchLike(url, init)
        : Promise.reject(
            new TypeError("fetch failed", { cause: { code: "ECONNREFUSED", message: "connect ECONNREFUSED" } }),
          ),
  });
  const log = (e: Record<string, unknown>) => r.logs.push({ at: Date.now(), ...e });
  r.elector = kubeElector({
    client,
    config: { namespace: "claimstep", name: LEASE_NAME, durationSeconds: DURATION_S, renewSeconds: RENEW_S },
    identity: name,
    log,
  });
  const app = createApp({
    reader: new KubeReader(client),
    writers: kubeWriters(client),
    auth: { bearerTokens: [], webhookSecrets: [SECRET], replay: new RecentIds() },
    now: () => new Date(),
    log: () => {},
  });
  let tick = 0;
  r.server = await startServer({
    app,
    port: 0,
    hostname: "127.0.0.1",
    log,
    leader: r.elector,
    intervalMs: 1000,
    tick: async () => {
      r.sweeps.push(Date.now());
      return sweep({
        listOptedIn: (ns) => listOptedInSets(client, ns),
        namespaces: [],
        // The steps themselves are the webhook's below: the sweep only records whose turn it is.
        step: async () =>
          ({ decision: { phase: "Progressing", reason: "swept" }, outcome: { kind: "none" } }) as unknown as StepResult,
        tick: tick++,
        proceed: () => r.elector.holds(),
      });
    },
  });
  return r;
}

/** Advance virtual time in 100 ms steps, letting real I/O run between them, sampling the holders. */
async function run(seconds: number): Promise<void> {
  for (let i = 0; i < seconds * 10; i++) {
    await vi.advanceTimersByTimeAsync(100);
    await new Promise((resolve) => setImmediate(resolve));
    holders.push({ at: Date.now(), who: replicas.filter((r) => r.elector.holds()).map((r) => r.name) });
  }
}

const holderNow = () => holders.at(-1)!.who;
/** When `name` first held the Lease at or after `from`. */
const heldFrom = (name: string, from: number) => holders.find((h) => h.at >= from && h.who.includes(name))?.at;
const lastHeld = (name: string) => holders.filter((h) => h.who.includes(name)).at(-1)?.at;

/** A signed relay webhook to one replica over its socket; resolves to the HTTP status. */
async function webhook(r: Replica): Promise<number> {
  const body = JSON.stringify({
    type: "statefulset.changed",
    timestamp: new Date().toISOString(),
    data: { namespace: "default", name: "web" },
  });
  const res = await fetch(`http://127.0.0.1:${r.server.port}/v1/relay`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...webhookHeaders(SECRET, `msg_${r.name}_${Date.now()}`, new Date(), body),
    },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

beforeEach(async () => {
  // The election measures expiries on performance.now(): virtual time moves it too.
  vi.useFakeTimers({
    toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"],
    now: T0,
  });
  sim = capturedSim(desiredData("2Gi"));
  holders.length = 0;
  replicas = [];
  // Started a little apart, as pods are.
  for (const [name, delay] of [
    ["claimstep-a", 0],
    ["claimstep-b", 1.3],
    ["claimstep-c", 2.7],
  ] as const) {
    if (delay) await run(delay);
    replicas.push(await startReplica(name));
    await run(0.1);
  }
});

afterEach(async () => {
  // Shut the rest down on real time (the servers' drain loops use timers).
  vi.useRealTimers();
  for (const r of replicas) {
    r.reachable = true;
    await (r.closed ?? r.server.close());
  }
});

describe("several server replicas electing one sweeper with a Lease", () => {
  it("one creates the Lease and sweeps; the others follow and never sweep; all answer webhooks", async () => {
    await run(30);
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    expect(holders.every((h) => h.who.length <= 1)).toBe(true);
    expect(holderNow()).toEqual(["claimstep-a"]);
    expect(a.sweeps.length).toBeGreaterThanOrEqual(28);
    expect([b.sweeps, c.sweeps]).toEqual([[], []]);
    expect(sim.get("leases", "claimstep", LEASE_NAME)?.spec).toMatchObject({
      holderIdentity: a.elector.identity,
      leaseDurationSeconds: 15,
      leaseTransitions: 0,
    });
    expect(a.logs.filter((l) => String(l.msg).startsWith("lease "))).toEqual([
      expect.objectContaining({
        msg: "lease acquired",
        identity: expect.stringMatching(/^claimstep-a_[0-9a-f-]{36}$/),
        lease: `leases.coordination.k8s.io claimstep/${LEASE_NAME}`,
        how: "created",
      }),
    ]);
    expect([...b.logs, ...c.logs].filter((l) => String(l.msg).startsWith("lease "))).toEqual([]);
    for (const r of replicas) expect(await webhook(r), r.name).toBe(200);
  });

  it("a killed holder is replaced within a lease period of its last renewal (plus one renew period), never overlapping", async () => {
    await run(20);
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    expect(holderNow()).toEqual(["claimstep-a"]);
    // The process dies: no more requests, no release, no more ticks.
    const killedAt = Date.now();
    a.reachable = false;
    a.closed = a.server.close();
    const lastRenewal = Date.parse(String(sim.get("leases", "claimstep", LEASE_NAME)!.spec!.renewTime));
    await run(25);
    await a.closed;
    expect(holders.every((h) => h.who.length <= 1)).toBe(true);
    const next = holderNow();
    expect(next.length).toBe(1);
    const successor = replicas.find((r) => r.name === next[0])!;
    expect(successor).not.toBe(a);
    const takenAt = heldFrom(successor.name, killedAt)!;
    expect(takenAt - lastRenewal).toBeGreaterThanOrEqual(DURATION_S * 1000);
    expect(takenAt - lastRenewal).toBeLessThanOrEqual((DURATION_S + RENEW_S) * 1000 + 100);
    expect(a.sweeps.every((t) => t <= killedAt)).toBe(true);
    expect(a.logs).toContainEqual(
      expect.objectContaining({
        msg: "lease not released",
        error: expect.stringMatching(/cannot reach the API server/),
      }),
    );
    expect(successor.sweeps.length).toBeGreaterThan(0);
    expect(sim.get("leases", "claimstep", LEASE_NAME)?.spec).toMatchObject({
      holderIdentity: successor.elector.identity,
      leaseTransitions: 1,
    });
    expect(successor.logs.filter((l) => l.msg === "lease acquired")).toEqual([
      expect.objectContaining({ how: "took over", transitions: 1 }),
    ]);
    const other = successor === b ? c : b;
    expect(other.sweeps).toEqual([]);
    for (const r of [b, c]) expect(await webhook(r), r.name).toBe(200);
  });

  it("a holder that cannot reach the API server stops sweeping within a lease period, before another takes over; it answers webhooks throughout", async () => {
    await run(20);
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    expect(holderNow()).toEqual(["claimstep-a"]);
    const cutAt = Date.now();
    const lastRenewal = Date.parse(String(sim.get("leases", "claimstep", LEASE_NAME)!.spec!.renewTime));
    a.reachable = false;
    await run(10);
    // Still running, still serving: its webhook answers (503: it cannot reach the API server either).
    expect(await webhook(a)).toBe(503);
    for (const r of [b, c]) expect(await webhook(r), r.name).toBe(200);
    await run(15);
    expect(holders.every((h) => h.who.length <= 1)).toBe(true);
    const stoppedAt = lastHeld("claimstep-a")!;
    expect(stoppedAt - cutAt).toBeLessThan(DURATION_S * 1000);
    expect(stoppedAt - lastRenewal).toBeLessThan((DURATION_S - 2) * 1000);
    expect(Math.max(...a.sweeps)).toBeLessThanOrEqual(stoppedAt);
    const successor = replicas.find((r) => r.name === holderNow()[0])!;
    expect([b, c]).toContain(successor);
    // The gap: the margin (2 s) at least, so two sweepers never overlap.
    expect(heldFrom(successor.name, cutAt)! - stoppedAt).toBeGreaterThanOrEqual(2000);
    expect(a.logs.filter((l) => String(l.msg).startsWith("lease "))).toEqual([
      expect.objectContaining({ msg: "lease acquired" }),
      expect.objectContaining({
        msg: "lease lost",
        reason: expect.stringMatching(
          /^not renewed before it ran out \(cannot read the Lease: .*cannot reach the API server/,
        ),
      }),
    ]);
    // Logged when it stopped leading, not at the next pass.
    expect(a.logs.find((l) => l.msg === "lease lost")!.at).toBe(lastRenewal + (DURATION_S - 2) * 1000);

    // Back on the network: it follows the new holder, and sweeps no more.
    a.reachable = true;
    const sweepsBefore = a.sweeps.length;
    await run(20);
    expect(holders.every((h) => h.who.length <= 1)).toBe(true);
    expect(holderNow()).toEqual([successor.name]);
    expect(a.sweeps.length).toBe(sweepsBefore);
    for (const r of replicas) expect(await webhook(r), r.name).toBe(200);
  });

  it("a holder shut down releases the Lease: another takes over at its next pass", async () => {
    await run(20);
    const [a] = replicas as [Replica];
    expect(holderNow()).toEqual(["claimstep-a"]);
    const closedAt = Date.now();
    a.closed = a.server.close();
    await run(RENEW_S + 0.5);
    await a.closed;
    expect(a.logs).toContainEqual(expect.objectContaining({ msg: "lease released", identity: a.elector.identity }));
    expect(a.logs.filter((l) => String(l.msg).startsWith("lease ")).map((l) => l.msg)).toEqual([
      "lease acquired",
      "lease released",
    ]);
    expect(holders.every((h) => h.who.length <= 1)).toBe(true);
    const next = holderNow();
    expect(next).toHaveLength(1);
    expect(next[0]).not.toBe("claimstep-a");
    expect(heldFrom(next[0]!, closedAt)! - closedAt).toBeLessThanOrEqual(RENEW_S * 1000 + 100);
  });
});
