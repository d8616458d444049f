// The election's loop: every renew period, read the Lease, decide (core/kube/lease.ts), write when the
// decision says so; `holds()` says whether this replica may sweep now, and `signal()` gives the
// running sweep an AbortSignal aborted the moment this replica stops leading (its writers check it
// before each write). Every expiry is measured on the monotonic clock; the wall clock only dates
// the record. Acquisitions and losses are logged, one line each; on shutdown a held Lease is
// released so that another replica takes over at its next pass.
import {
  afterWrite,
  decide,
  type ElectionConfig,
  type ElectionState,
  leads,
  releaseSpec,
} from "../../core/kube/index.js";
import type { LeaseApi, LeaseWriteOutcome, ObservedLease } from "../../core/ports.js";

/** The loop's clock, injected so tests run it on virtual time. */
export interface ElectorClock {
  /** The wall clock: only dates the record written (acquireTime, renewTime), never decides. */
  now(): Date;
  /** A monotonic clock (ms, any origin): every expiry; a wall-clock step does not move it. */
  monotonic(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const systemClock: ElectorClock = {
  now: () => new Date(),
  monotonic: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export interface ElectorOptions extends ElectionConfig {
  /**
   * This replica's name for people (the pod name, leaseIdentity(HOSTNAME)). The holder's identity
   * written into the Lease is it plus a random part of this elector's own, so that two processes
   * given the same name are never both the holder.
   */
  identity: string;
  /** The random part (tests); default crypto.randomUUID(). */
  random?: () => string;
  lease: LeaseApi;
  /** A pass every this often (client-go's RetryPeriod). */
  renewMs: number;
  clock?: ElectorClock;
  log?: (entry: Record<string, unknown>) => void;
}

/** Whether this replica may run the sweep now, and the loop that keeps it so. */
export interface Leadership {
  start(): void;
  holds(): boolean;
  /**
   * The current term's signal: aborted (its reason a LeaseLost) as soon as this replica stops
   * leading, or at once when it does not lead. A sweep started now passes it to its steps.
   */
  signal(): AbortSignal;
  /** Stop the loop and release the Lease when held. */
  stop(): Promise<void>;
}

/** The reason of an aborted term: the running sweep stops before its next write. */
export class LeaseLost extends Error {
  override readonly name = "LeaseLost";
}

export class Elector implements Leadership {
  private state: ElectionState = {};
  private lastWritten: ObservedLease | undefined;
  private leading = false;
  private timer: unknown;
  /** Fires when a lead runs out unrenewed, to log the loss then rather than at the next pass. */
  private expiry: unknown;
  private lastError: string | undefined;
  /** Aborted when this lead ends; a new one for the next. */
  private term: AbortController | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly clock: ElectorClock;
  private readonly log: (entry: Record<string, unknown>) => void;
  /** What decides: the options with the holder's identity (the name and this elector's random part). */
  private readonly election: ElectionConfig;
  /** The holder's identity this elector writes into the Lease: `<name>_<random>`. */
  readonly identity: string;

  constructor(private readonly opts: ElectorOptions) {
    const name = opts.identity.trim();
    if (name === "")
      throw new Error(
        "the Lease's elector needs a name for this replica (the pod name, HOSTNAME): none was given, so the holder could not be told apart by a person; set HOSTNAME",
      );
    this.identity = `${name}_${(opts.random ?? (() => crypto.randomUUID()))()}`;
    this.election = { ...opts, identity: this.identity };
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log ?? (() => {});
  }

  /** Monotonic ms: every expiry decision. */
  private nowMs(): number {
    return this.clock.monotonic();
  }

  /** Wall-clock ms: only the times written into the Lease. */
  private wallMs(): number {
    return this.clock.now().getTime();
  }

  private leadsNow(): boolean {
    return !this.stopped && leads(this.state, this.nowMs());
  }

  holds(): boolean {
    const held = this.leadsNow();
    // The expiry timer may fire late (a busy event loop): whoever asks first ends the term.
    if (!held) this.endTerm("not renewed before it ran out");
    return held;
  }

  signal(): AbortSignal {
    if (!this.holds())
      return AbortSignal.abort(
        new LeaseLost(
          `${this.opts.lease.describe}: this replica (${this.identity}) does not hold the Lease (lease lost)`,
        ),
      );
    return (this.term ??= new AbortController()).signal;
  }

  private endTerm(why: string): void {
    const term = this.term;
    if (!term) return;
    this.term = undefined;
    term.abort(
      new LeaseLost(
        `${this.opts.lease.describe}: lease lost (${why}): this replica (${this.identity}) stops sweeping before its next write`,
      ),
    );
  }

  /** Who this replica last saw holding the Lease ("" released, undefined not read yet). */
  holder(): string | undefined {
    return this.state.observed?.holder;
  }

  start(): void {
    if (this.stopped || this.timer !== undefined || this.running) return;
    this.schedule(0);
  }

  private schedule(ms: number): void {
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      const started = this.nowMs();
      this.running = this.pass().finally(() => {
        this.running = undefined;
        if (!this.stopped) this.schedule(Math.max(0, this.opts.renewMs - (this.nowMs() - started)));
      });
    }, ms);
  }

  /** One pass: read, decide, write. Never throws. */
  async pass(): Promise<void> {
    let lease: ObservedLease | undefined;
    try {
      lease = await this.opts.lease.get();
    } catch (err) {
      this.lastError = `cannot read the Lease: ${(err as Error).message}`;
      this.report(this.lastError);
      return;
    }
    const decided = decide(lease, this.state, this.election, this.nowMs(), this.wallMs());
    this.state = decided.state;
    const action = decided.action;
    if (action.kind === "follow") {
      this.report(`${action.holder} holds it`);
      return;
    }
    if (this.stopped) return;
    const sentAt = this.nowMs();
    let outcome: LeaseWriteOutcome;
    try {
      outcome =
        action.kind === "create"
          ? await this.opts.lease.create(action.spec)
          : await this.opts.lease.update(action.spec, action.resourceVersion);
    } catch (err) {
      outcome = { kind: "failed", error: (err as Error).message };
    }
    this.state = afterWrite(this.state, outcome, this.election, sentAt);
    if (outcome.kind === "written") this.lastWritten = outcome.lease;
    const how = action.kind === "create" ? "created" : action.why === "takeover" ? "took over" : "renewed";
    if (outcome.kind === "failed") this.lastError = `cannot write the Lease: ${outcome.error ?? "no answer"}`;
    else if (outcome.kind === "written") this.lastError = undefined;
    this.report(
      outcome.kind === "lost" ? "another replica wrote it first" : outcome.kind === "failed" ? this.lastError! : how,
      outcome.kind === "written" ? outcome.lease : undefined,
    );
  }

  /** Log a change of leadership (one line each way). */
  private report(why: string, written?: ObservedLease): void {
    if (this.stopped) return;
    const now = this.leading;
    const next = this.leadsNow();
    this.leading = next;
    if (!next) this.endTerm(why);
    if (this.expiry !== undefined) this.clock.clearTimeout(this.expiry);
    this.expiry = undefined;
    if (next && this.state.leadingUntil !== undefined) {
      this.expiry = this.clock.setTimeout(() => {
        this.expiry = undefined;
        this.report(`not renewed before it ran out${this.lastError ? ` (${this.lastError})` : ""}`);
      }, this.state.leadingUntil - this.nowMs());
    }
    if (next === now) return;
    const base = { lease: this.opts.lease.describe, identity: this.identity };
    if (next) this.log({ msg: "lease acquired", ...base, how: why, transitions: written?.spec.leaseTransitions ?? 0 });
    else this.log({ msg: "lease lost", ...base, reason: why });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    const held = this.holds();
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    if (this.expiry !== undefined) this.clock.clearTimeout(this.expiry);
    this.timer = this.expiry = undefined;
    this.endTerm("shutting down");
    await this.running;
    const last = this.lastWritten;
    if (held && last && this.state.observed?.resourceVersion === last.resourceVersion) {
      const outcome = await this.opts.lease
        .update(releaseSpec(last, this.wallMs()), last.resourceVersion)
        .catch((err: unknown) => ({ kind: "failed" as const, error: (err as Error).message }));
      const base = { lease: this.opts.lease.describe, identity: this.identity };
      if (outcome.kind === "written") this.log({ msg: "lease released", ...base });
      else
        this.log({
          msg: "lease not released",
          ...base,
          error: outcome.kind === "lost" ? "another replica wrote it first" : (outcome.error ?? "no answer"),
        });
    }
    this.state = {};
    this.leading = false;
  }
}
