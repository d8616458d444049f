// One scheduled pass: step every opted-in StatefulSet in the configured namespaces, within a
// budget of subrequests. When more sets are opted in than fit, the start of the pass rotates with
// the tick number, so every set gets its turn (the Worker is stateless: the tick is the only
// memory it has).
//
// A pass can be cut off (the Node server: this replica lost the Lease): its `signal` ends the pass
// before the next set, and the running step, given the signal, stops before its next write
// (stopOnAbort wraps its writers, signalledReader its reads).
//
// A step that leaves its set going or gone mid re-create (the record armed, the orphan delete sent,
// the old set finalizing: a requeueAfter under a second) is followed by the next step of the same
// set at once, within the pass, until the set exists again: no mode leaves a set deleted for an
// interval (docs/design.md "Re-creating the set").
import type { StateReader, Writers } from "../core/ports.js";
import type { SetRef } from "../core/types.js";
import type { RefusalBackoff } from "./backoff.js";
import type { StepResult } from "./step.js";

/** Counts the subrequests made so far, against a limit. */
export interface SubrequestBudget {
  limit: number;
  /** Worst-case subrequests of one step. */
  perStep: number;
  used(): number;
}

export interface SweepOptions {
  /** Opted-in sets of one namespace (`undefined` = all namespaces). */
  listOptedIn(namespace: string | undefined): Promise<SetRef[]>;
  namespaces: readonly string[];
  /** One step; `signal` (the pass's) is for its writes: see stopOnAbort. */
  step(ref: SetRef, signal?: AbortSignal): Promise<StepResult>;
  /** The tick number (e.g. scheduled time / cron interval): the rotation key. */
  tick: number;
  budget?: SubrequestBudget;
  /** Checked before each step: false ends the pass (the Node server: this replica lost the Lease). */
  proceed?: () => boolean;
  /** Aborted: no further step starts, and the running one stops before its next write (the Lease lost). */
  signal?: AbortSignal;
  /**
   * Sets whose write the server refused, paused (functions/backoff.ts, `claimstep serve`): a
   * paused set is not stepped by this pass, and every step's result is recorded.
   */
  backoff?: Pick<RefusalBackoff, "paused" | "record" | "keepOnly">;
  log?: (entry: Record<string, unknown>) => void;
  /** How the pass waits before a follow-up step (default: a timer; the simulated cluster: its clock). */
  sleep?: (ms: number) => Promise<void>;
}

export type SweepEntry =
  | { ref: SetRef; phase: string; reason: string; message: string; outcome: string }
  | { ref: SetRef; error: string };

export interface SweepReport {
  /** Opted-in sets found. */
  found: number;
  stepped: SweepEntry[];
  /** Sets left for a later tick because the budget ran out. */
  deferred: number;
  /** Index (in name order) the pass started at. */
  start: number;
  /** Sets not stepped because their write was refused a moment ago (with `backoff`). */
  backedOff?: number;
}

/** Follow-up steps of one set within a pass, at most (about a minute of a set finalizing). */
export const FOLLOW_UP_LIMIT = 32;

/** The step left the set mid re-create with its next step due at once (core/reasons.ts AT_ONCE). */
export const dueAtOnce = (r: StepResult): boolean =>
  r.outcome.kind !== "dry-run" && r.decision.requeueAfter !== undefined && r.decision.requeueAfter < 1;

const timer = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const byName = (a: SetRef, b: SetRef) =>
  a.namespace === b.namespace ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.namespace < b.namespace ? -1 : 1;

/** How many steps the budget allows once the listing is done. */
const capacityOf = (budget: SubrequestBudget | undefined, n: number): number =>
  budget ? Math.max(0, Math.floor((budget.limit - budget.used()) / budget.perStep)) : n;

export async function sweep(opts: SweepOptions): Promise<SweepReport> {
  const scopes = opts.namespaces.length ? opts.namespaces : [undefined];
  const refs: SetRef[] = [];
  for (const ns of scopes) refs.push(...(await opts.listOptedIn(ns)));
  refs.sort(byName);
  const n = refs.length;
  if (n === 0) return { found: 0, stepped: [], deferred: 0, start: 0 };

  const capacity = capacityOf(opts.budget, n);
  // Advance the start by a whole pass's capacity each tick, so consecutive ticks cover the sets
  // one after the other instead of overlapping.
  const start = (((Math.floor(opts.tick) * Math.max(1, Math.min(capacity, n))) % n) + n) % n;
  const stepped: SweepEntry[] = [];
  opts.backoff?.keepOnly(refs);
  let backedOff = 0;
  for (let i = 0; i < n; i++) {
    const budget = opts.budget;
    if (budget && budget.used() + budget.perStep > budget.limit) break;
    if (opts.proceed && !opts.proceed()) break;
    if (opts.signal?.aborted) break;
    const ref = refs[(start + i) % n]!;
    if (opts.backoff?.paused(ref)) {
      backedOff++;
      continue;
    }
    try {
      let r = await opts.step(ref, opts.signal);
      for (let n = 0; dueAtOnce(r) && n < FOLLOW_UP_LIMIT; n++) {
        if (budget && budget.used() + budget.perStep > budget.limit) break;
        if ((opts.proceed && !opts.proceed()) || opts.signal?.aborted) break;
        // From the decision's 0.25 s, doubling to 2 s: the garbage collector takes from a moment to
        // seconds, and each look is a whole step (the Worker's subrequest budget counts them).
        await (opts.sleep ?? timer)(Math.max(50, (r.decision.requeueAfter ?? 0) * 1000, Math.min(2000, 250 * 2 ** n)));
        r = await opts.step(ref, opts.signal);
      }
      opts.backoff?.record(ref, r);
      stepped.push({
        ref,
        phase: r.decision.phase,
        reason: r.decision.reason,
        message: r.decision.message,
        outcome: r.outcome.kind,
      });
    } catch (err) {
      // One broken set must not starve the others.
      stepped.push({ ref, error: (err as Error).message });
    }
  }
  const report = {
    found: n,
    stepped,
    deferred: n - stepped.length - backedOff,
    start,
    ...(opts.backoff ? { backedOff } : {}),
  };
  const cut = opts.signal?.aborted
    ? { cutOff: String((opts.signal.reason as Error | undefined)?.message ?? opts.signal.reason) }
    : {};
  opts.log?.({
    msg: "sweep",
    found: n,
    stepped: stepped.length,
    deferred: report.deferred,
    start,
    ...(backedOff ? { backedOff } : {}),
    ...cut,
  });
  return report;
}

/** Every method of `target` refuses (rejects with the signal's reason) once `signal` is aborted. */
function refusing<T extends object>(target: T, signal: AbortSignal): T {
  return new Proxy(target, {
    get(t, prop) {
      const value: unknown = Reflect.get(t, prop, t);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        signal.throwIfAborted();
        return (value as (...a: unknown[]) => unknown).apply(t, args);
      };
    },
  });
}

/**
 * The step's writers, each write refused once `signal` is aborted: a step cut off stops before
 * its next write (the claim, the set's status, the events, a pod or re-create request), its error
 * the signal's reason. A write already sent completes: cancelling it would not unsend it, only
 * leave its outcome unknown.
 */
export function stopOnAbort(writers: Writers, signal: AbortSignal): Writers {
  const claims = writers.claims;
  return {
    claims: typeof claims === "function" ? (snapshot) => refusing(claims(snapshot), signal) : refusing(claims, signal),
    status: refusing(writers.status, signal),
    events: refusing(writers.events, signal),
    ...(writers.pods ? { pods: refusing(writers.pods, signal) } : {}),
    ...(writers.recreate ? { recreate: refusing(writers.recreate, signal) } : {}),
  };
}

/** The step's reader, its requests given `signal` too (a cut-off step stops reading). */
export function signalledReader(reader: StateReader, signal: AbortSignal): StateReader {
  return {
    load: (ref, opts = {}) => {
      signal.throwIfAborted();
      return reader.load(ref, { ...opts, signal: opts.signal ? AbortSignal.any([opts.signal, signal]) : signal });
    },
  };
}
