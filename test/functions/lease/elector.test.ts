// The Elector's loop on a manual clock (one true time; each replica's wall clock can be stepped,
// its monotonic clock cannot) against an in-memory Lease with resourceVersion preconditions:
// a wall-clock step never makes two holders; two replicas with the same HOSTNAME get distinct
// identities and one of them holds; a lost Lease aborts the running sweep before its next write.
import { describe, expect, it } from "vitest";
import { defaultMarginMs } from "../../../core/kube/lease.js";
import type { LeaseApi, LeaseSpec, LeaseWriteOutcome, ObservedLease, Writers } from "../../../core/ports.js";
import type { SetRef } from "../../../core/types.js";
import { leaseIdentity } from "../../../functions/lease/config.js";
import { Elector, type ElectorClock } from "../../../functions/lease/elector.js";
import type { StepResult } from "../../../functions/step.js";
import { stopOnAbort, sweep } from "../../../functions/sweep.js";

const T0 = Date.parse("2026-11-30T10:00:00Z");
const DURATION_MS = 15_000;
const RENEW_MS = 5_000;

/** One true time and its timers, shared by every replica. */
class World {
  t = 0;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private seq = 0;
  schedule(fn: () => void, ms: number): number {
    const id = ++this.seq;
    this.timers.push({ at: this.t + Math.max(0, ms), fn, id });
    return id;
  }
  cancel(id: unknown): void {
    this.timers = this.timers.filter((x) => x.id !== id);
  }
  /** Advance by `ms` in 100 ms steps, running due timers and letting promises settle; `sample` after each step. */
  async run(ms: number, sample?: () => void): Promise<void> {
    for (let i = 0; i < ms / 100; i++) {
      this.t += 100;
      for (let guard = 0; guard < 100; guard++) {
        const due = this.timers.filter((x) => x.at <= this.t).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        this.cancel(due.id);
        due.fn();
        await settle();
      }
      await settle();
      sample?.();
    }
  }
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/** A replica's clock: its wall clock may be stepped (NTP, a VM resumed), its monotonic one never. */
class ReplicaClock implements ElectorClock {
  wallOffset = 0;
  constructor(
    private readonly world: World,
    private readonly monoOffset: number,
  ) {}
  now(): Date {
    return new Date(T0 + this.world.t + this.wallOffset);
  }
  monotonic(): number {
    return this.monoOffset + this.world.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    return this.world.schedule(fn, ms);
  }
  clearTimeout(handle: unknown): void {
    this.world.cancel(handle);
  }
}

/** The Lease as the API server keeps it: writes under a resourceVersion precondition. */
class LeaseStore {
  lease: ObservedLease | undefined;
  private rv = 100;
  writes: LeaseSpec[] = [];
  api(reachable: () => boolean): LeaseApi {
    const down = () => Promise.reject(new Error("cannot reach the API server"));
    return {
      describe: "leases.coordination.k8s.io claimstep/claimstep-sweeper",
      get: async () => (reachable() ? (this.lease ? structuredClone(this.lease) : undefined) : down()),
      create: async (spec): Promise<LeaseWriteOutcome> => {
        if (!reachable()) return down();
        if (this.lease) return { kind: "lost" };
        return this.store(spec);
      },
      update: async (spec, resourceVersion): Promise<LeaseWriteOutcome> => {
        if (!reachable()) return down();
        if (!this.lease || this.lease.resourceVersion !== resourceVersion) return { kind: "lost" };
        return this.store(spec);
      },
    };
  }
  private store(spec: LeaseSpec): LeaseWriteOutcome {
    this.writes.push(spec);
    this.lease = { spec: { ...spec }, resourceVersion: String(++this.rv) };
    return { kind: "written", lease: structuredClone(this.lease) };
  }
}

interface Replica {
  identity: string;
  clock: ReplicaClock;
  elector: Elector;
  reachable: boolean;
}

function replicas(identities: string[]) {
  const world = new World();
  const store = new LeaseStore();
  const all: Replica[] = identities.map((identity, i) => {
    // Monotonic clocks start anywhere (boot time): nothing may compare them across replicas.
    const clock = new ReplicaClock(world, 1_000_000 * (i + 1));
    const r = { identity, clock, reachable: true } as Replica;
    r.elector = new Elector({
      lease: store.api(() => r.reachable),
      identity,
      leaseDurationMs: DURATION_MS,
      marginMs: defaultMarginMs(DURATION_MS),
      renewMs: RENEW_MS,
      clock,
    });
    return r;
  });
  /** Samples: who held the Lease after each 100 ms. */
  const samples: string[][] = [];
  const sample = () => samples.push(all.filter((r) => r.elector.holds()).map((r) => r.identity));
  const run = (ms: number) => world.run(ms, sample);
  return { world, store, all, samples, run };
}

describe("Elector on a manual clock", () => {
  it("a holder whose wall clock steps back while it cannot renew stops on its monotonic clock: never two holders", async () => {
    const { all, samples, run } = replicas(["claimstep-a", "claimstep-b"]);
    const [a, b] = all as [Replica, Replica];
    a.elector.start();
    await run(300);
    b.elector.start();
    await run(20_000);
    expect(samples.at(-1)).toEqual(["claimstep-a"]);
    // Cut off, and its wall clock stepped back ten seconds (an NTP correction).
    a.reachable = false;
    a.clock.wallOffset = -10_000;
    await run(40_000);
    expect(samples.filter((s) => s.length > 1)).toEqual([]);
    expect(samples.at(-1)).toEqual(["claimstep-b"]);
  });

  it("a follower whose wall clock steps forward an hour does not take over a Lease its holder still leads: never two holders", async () => {
    const { all, samples, run } = replicas(["claimstep-a", "claimstep-b"]);
    const [a, b] = all as [Replica, Replica];
    a.elector.start();
    await run(300);
    b.elector.start();
    await run(20_000);
    expect(samples.at(-1)).toEqual(["claimstep-a"]);
    a.reachable = false;
    await run(1_000);
    b.clock.wallOffset = 3_600_000;
    await run(40_000);
    expect(samples.filter((s) => s.length > 1)).toEqual([]);
    expect(samples.at(-1)).toEqual(["claimstep-b"]);
  });

  it("steps of both wall clocks, back and forth, while the holder keeps renewing: the holder never changes", async () => {
    const { all, samples, run, store } = replicas(["claimstep-a", "claimstep-b"]);
    const [a, b] = all as [Replica, Replica];
    a.elector.start();
    await run(300);
    b.elector.start();
    for (let i = 0; i < 8; i++) {
      a.clock.wallOffset = i % 2 ? 7_200_000 : -7_200_000;
      b.clock.wallOffset = i % 2 ? -3_600_000 : 3_600_000;
      await run(7_300);
    }
    expect(samples.filter((s) => s.length !== 1 || s[0] !== "claimstep-a").length).toBeLessThanOrEqual(3); // before a's first write lands
    expect(samples.slice(5).every((s) => s.length === 1 && s[0] === "claimstep-a")).toBe(true);
    // The Lease still carries wall-clock times (what kubectl shows), from the stepped clock.
    expect(store.lease?.spec.holderIdentity).toBe(a.elector.identity);
    expect(a.elector.identity).toMatch(/^claimstep-a_[0-9a-f-]{36}$/);
    expect(store.lease?.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it("two replicas with the same HOSTNAME: distinct identities, and one holder at a time", async () => {
    const { all, samples, run } = replicas([leaseIdentity("claimstep-0"), leaseIdentity("claimstep-0")]);
    const ids = all.map((r) => r.elector.identity);
    expect(ids[0]).not.toBe(ids[1]);
    for (const id of ids) expect(id).toMatch(/^claimstep-0_[0-9a-f-]{36}$/);
    for (const r of all) r.elector.start();
    await run(60_000);
    expect(samples.filter((s) => s.length > 1)).toEqual([]);
    expect(samples.at(-1)).toHaveLength(1);
    // The holder kept it the whole time once acquired.
    const holder = samples.at(-1)![0];
    expect(samples.slice(2).every((s) => s[0] === holder)).toBe(true);
  });
});

describe("the holder's identity is unique per process (issue 37, item 5e)", () => {
  // Defect: the identity given was the holder's key: two electors given the same one each found
  // themselves holding the Lease the other wrote, and both swept.
  it("two electors given the same identity: one holder at a time, each written with its own random part", async () => {
    const { all, samples, run, store } = replicas(["claimstep-0", "claimstep-0"]);
    for (const r of all) r.elector.start();
    await run(60_000);
    expect(samples.filter((s) => s.length > 1)).toEqual([]);
    expect(samples.at(-1)).toHaveLength(1);
    const [a, b] = all as [Replica, Replica];
    expect(a.elector.identity).not.toBe(b.elector.identity);
    for (const r of all)
      expect(r.elector.identity).toMatch(/^claimstep-0_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect([a.elector.identity, b.elector.identity]).toContain(store.lease?.spec.holderIdentity);
  });

  it("refuses to run without a name for humans", () => {
    const store = new LeaseStore();
    const make = (identity: string) => () =>
      new Elector({
        lease: store.api(() => true),
        identity,
        leaseDurationMs: DURATION_MS,
        marginMs: defaultMarginMs(DURATION_MS),
        renewMs: RENEW_MS,
      });
    for (const blank of ["", "  "])
      expect(make(blank)).toThrow(
        "the Lease's elector needs a name for this replica (the pod name, HOSTNAME): none was given, so the holder could not be told apart by a person; set HOSTNAME",
      );
    expect(make("claimstep-0")).not.toThrow();
  });
});

describe("a lost Lease cuts off the running sweep", () => {
  it("the step stops before its next write, and no further set is stepped", async () => {
    const { all, run } = replicas(["claimstep-a"]);
    const [a] = all as [Replica];
    a.elector.start();
    await run(1_000);
    expect(a.elector.holds()).toBe(true);

    const writes: string[] = [];
    const writers: Writers = {
      claims: {
        name: "direct",
        supports: ["PatchClaim"],
        proposes: false,
        apply: async (action) => {
          writes.push(`apply ${action.type}`);
          return { kind: "applied" };
        },
      },
      status: {
        annotateSet: async (ref) => {
          writes.push(`annotate ${ref.name}`);
          return undefined;
        },
      },
      events: {
        recordEvents: async (ref) => {
          writes.push(`events ${ref.name}`);
        },
      },
    };
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const stepped: string[] = [];
    const signalsSeen: AbortSignal[] = [];
    const pass = sweep({
      listOptedIn: async () => [
        { namespace: "db", name: "a" },
        { namespace: "db", name: "b" },
      ],
      namespaces: [],
      tick: 0,
      signal: a.elector.signal(),
      proceed: () => a.elector.holds(),
      step: async (ref: SetRef, signal?: AbortSignal) => {
        stepped.push(ref.name);
        if (signal) signalsSeen.push(signal);
        const w = signal ? stopOnAbort(writers, signal) : writers;
        // The step has read its set and planned (the gate), then writes: the claim, the status, the events.
        await gate;
        const claims = typeof w.claims === "function" ? w.claims({} as never) : w.claims;
        await claims.apply({ type: "PatchClaim" } as never, {} as never);
        await w.status.annotateSet(ref, {});
        await w.events.recordEvents(ref, [], new Date());
        return {
          decision: { phase: "Progressing", reason: "ClaimUpdated" },
          outcome: { kind: "applied" },
          writer: "direct",
        } as unknown as StepResult;
      },
    });
    await settle();
    expect(stepped).toEqual(["a"]);
    // The API server becomes unreachable while the step is planning: the lead runs out.
    a.reachable = false;
    await run(20_000);
    expect(a.elector.holds()).toBe(false);
    expect(signalsSeen[0]?.aborted).toBe(true);
    release();
    const report = await pass;
    expect(writes).toEqual([]);
    expect(stepped).toEqual(["a"]);
    expect(report.stepped).toEqual([
      { ref: { namespace: "db", name: "a" }, error: expect.stringMatching(/lease lost/i) },
    ]);
  });

  it("the signal of a term is aborted when the Lease is lost, and a new term gets a fresh one", async () => {
    const { all, run } = replicas(["claimstep-a"]);
    const [a] = all as [Replica];
    expect(a.elector.signal().aborted).toBe(true); // not leading yet
    a.elector.start();
    await run(1_000);
    const first = a.elector.signal();
    expect(first.aborted).toBe(false);
    a.reachable = false;
    await run(20_000);
    expect(first.aborted).toBe(true);
    a.reachable = true;
    await run(20_000);
    expect(a.elector.holds()).toBe(true);
    const second = a.elector.signal();
    expect(second).not.toBe(first);
    expect(second.aborted).toBe(false);
    await a.elector.stop();
    expect(second.aborted).toBe(true);
  });
});
