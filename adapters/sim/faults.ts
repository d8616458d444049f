// Injected API faults, per request, from the seeded PRNG: 429 with Retry-After, 500, and timeouts
// either before the request reached storage or after it was committed (the response was lost).
import type { ApiError } from "../api-error.js";
import { internalError, serverTimeout, tooManyRequests } from "./errors.js";
import type { Prng } from "./prng.js";

export interface FaultPlan {
  /** Probability per request of each fault. */
  tooManyRequests?: number;
  serverError?: number;
  timeout?: number;
  /** Seconds sent as Retry-After with a 429. */
  retryAfterSeconds?: number;
}

export type FaultKind = "tooManyRequests" | "serverError" | "timeoutBefore" | "timeoutAfterCommit";

/** What a FaultInjector needs to go on where it stopped: its plan, its PRNG, its counts. */
export interface FaultState {
  plan: FaultPlan;
  prng: number;
  counts: Record<FaultKind, number>;
}

export class FaultInjector {
  readonly counts: Record<FaultKind, number> = {
    tooManyRequests: 0,
    serverError: 0,
    timeoutBefore: 0,
    timeoutAfterCommit: 0,
  };

  constructor(
    public plan: FaultPlan,
    private readonly prng: Prng,
  ) {}

  state(): FaultState {
    return { plan: structuredClone(this.plan), prng: this.prng.state(), counts: { ...this.counts } };
  }

  restore(state: FaultState): void {
    this.plan = structuredClone(state.plan);
    this.prng.restore(state.prng);
    Object.assign(this.counts, state.counts);
  }

  /** Decide the fate of one request. A timeout on a write lands half the time after the commit. */
  roll(write: boolean): FaultKind | undefined {
    const { tooManyRequests: p429 = 0, serverError: p500 = 0, timeout: pTimeout = 0 } = this.plan;
    if (!p429 && !p500 && !pTimeout) return undefined;
    const x = this.prng.next();
    let kind: FaultKind | undefined;
    if (x < p429) kind = "tooManyRequests";
    else if (x < p429 + p500) kind = "serverError";
    else if (x < p429 + p500 + pTimeout) kind = write && this.prng.chance(0.5) ? "timeoutAfterCommit" : "timeoutBefore";
    if (kind) this.counts[kind]++;
    return kind;
  }

  errorFor(kind: FaultKind, request: string): ApiError {
    switch (kind) {
      case "tooManyRequests":
        return tooManyRequests(this.plan.retryAfterSeconds ?? 1, request);
      case "serverError":
        return internalError(request);
      case "timeoutBefore":
      case "timeoutAfterCommit":
        return serverTimeout(request);
    }
  }
}
