// When a set's Durable Object steps next, and how a cluster backs off (pure: times in, times out).
// - A decision's requeueAfter (seconds) is the next alarm; absent (Complete, Blocked, Idle) there is
//   none: only a change of the set (cron, relay, webhook) gives a step something to do.
// - A transient failure of the API server (429, 5xx, timeout, unreachable) backs off exponentially,
//   never sooner than its Retry-After; the cluster's backoff holds every set of that cluster and
//   no other.

export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 5_000, maxMs: 300_000 };

/** The earliest and latest an alarm is set after a step (a requeueAfter of 0 still yields to others). */
export const MIN_ALARM_MS = 1_000;
export const MAX_ALARM_MS = 3_600_000;

/** The alarm after a step that decided `requeueAfter`, or undefined for none. */
export function nextAlarmAt(nowMs: number, requeueAfterSeconds: number | undefined): number | undefined {
  if (requeueAfterSeconds === undefined || !Number.isFinite(requeueAfterSeconds)) return undefined;
  return nowMs + Math.min(MAX_ALARM_MS, Math.max(MIN_ALARM_MS, Math.round(requeueAfterSeconds * 1000)));
}

/** Wait after the `failures`-th consecutive failure (1 = the first): base·2^(n−1), capped, ≥ Retry-After. */
export function backoffMs(
  failures: number,
  retryAfterSeconds: number | undefined,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, Math.min(30, failures - 1)));
  return Math.max(
    exp,
    retryAfterSeconds !== undefined && retryAfterSeconds > 0 ? Math.min(retryAfterSeconds * 1000, policy.maxMs) : 0,
  );
}

/** A cluster's backoff as its object keeps it. */
export interface ClusterBackoff {
  failures: number;
  /** No request to the cluster before this (ms since the epoch); 0 = none pending. */
  untilMs: number;
}

export const HEALTHY: ClusterBackoff = { failures: 0, untilMs: 0 };

/** After a transient failure seen at `nowMs`. */
export function failed(
  state: ClusterBackoff,
  nowMs: number,
  retryAfterSeconds?: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): ClusterBackoff {
  const failures = state.failures + 1;
  return { failures, untilMs: Math.max(state.untilMs, nowMs + backoffMs(failures, retryAfterSeconds, policy)) };
}

/** Whether a request to the cluster may go out at `nowMs`. */
export const isOpen = (state: ClusterBackoff, nowMs: number): boolean => state.untilMs <= nowMs;

/** Whether an error is the cluster's (back off) rather than the set's: 429, 5xx, timeouts, unreachable. */
export function isClusterFailure(err: { code?: unknown; kind?: unknown } | undefined): boolean {
  if (!err) return false;
  if (err.kind === "TooManyRequests" || err.kind === "ServerError" || err.kind === "Timeout") return true;
  return typeof err.code === "number" && (err.code === 429 || err.code >= 500 || err.code === 0);
}

/**
 * The alarm after a step: its decision's, unless the cluster or the set is backing off (then the
 * later), or a trigger arrived while it ran (then at once: the change it announced is unseen).
 */
export function alarmAfterStep(o: {
  nowMs: number;
  requeueAfterSeconds?: number;
  backoffUntilMs?: number;
  triggeredDuringStep?: boolean;
}): number | undefined {
  const planned = nextAlarmAt(o.nowMs, o.requeueAfterSeconds);
  const held = o.backoffUntilMs !== undefined && o.backoffUntilMs > o.nowMs ? o.backoffUntilMs : undefined;
  if (held !== undefined) return Math.max(held, planned ?? held);
  if (o.triggeredDuringStep) return o.nowMs;
  return planned;
}
