// The relay's clock (injected, so debounce, backoff and reconnects are tested without waiting) and
// its backoff.

export interface RelayClock {
  now(): Date;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: RelayClock = {
  now: () => new Date(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export const sleep = (clock: RelayClock, ms: number) => new Promise<void>((resolve) => clock.setTimeout(resolve, ms));

/** Exponential backoff: base·2^attempt, capped. */
export const backoffMs = (attempt: number, baseMs: number, maxMs: number): number =>
  Math.min(maxMs, baseMs * 2 ** attempt);
