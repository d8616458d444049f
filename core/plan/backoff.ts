// How long a set whose write the server refused is left alone before claimstep tries again
// (issue 24): a refusal (a ResourceQuota, an admission webhook, a driver's class) does not lift by
// itself within seconds, and each try records one more Warning Event. The pause doubles with each
// refusal in a row, from FIRST to MAX, as client-go's per-item rate limiter does; a step that is not
// refused ends it. Pure: the caller keeps the count and the clock.

/** The pauses (docs/deploying.md, "The Node server"): 10 s, 20 s, 40 s, … at most 5 minutes. */
export const REFUSAL_BACKOFF = { firstSeconds: 10, maxSeconds: 300 } as const;

/** Seconds to wait after the `refusals`-th refusal in a row (1 = the first). */
export function refusalPauseSeconds(
  refusals: number,
  limits: { firstSeconds: number; maxSeconds: number } = REFUSAL_BACKOFF,
): number {
  const n = Math.max(1, Math.floor(refusals));
  // 2^(n-1) overflows to Infinity long after it passes the cap; min() keeps it finite.
  return Math.min(limits.maxSeconds, limits.firstSeconds * 2 ** Math.min(n - 1, 30));
}
