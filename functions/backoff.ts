// The sweep's memory of refused writes (`claimstep serve`, one process): a set whose last step was
// refused by the server (outcome `refused`) is skipped by the passes until its pause
// (core/plan/backoff.ts) is over, then stepped again; a step that is not refused forgets it. In memory
// only: a restart tries every set at once, which costs one refusal more.
import { refusalPauseSeconds } from "../core/plan/index.js";
import type { SetRef } from "../core/types.js";
import type { StepResult } from "./step.js";

const keyOf = (ref: SetRef) => `${ref.namespace}/${ref.name}`;

export class RefusalBackoff {
  private readonly sets = new Map<string, { refusals: number; until: number }>();

  /** `nowMs`: the clock the steps run on (the simulated cluster's, with `--cluster sim`). */
  constructor(private readonly nowMs: () => number) {}

  /** True while the set's pause after a refusal lasts. */
  paused(ref: SetRef): boolean {
    const until = this.pausedUntil(ref);
    return until !== undefined && this.nowMs() < until;
  }

  /** When the set's pause ends (ms), if its last step was refused. */
  pausedUntil(ref: SetRef): number | undefined {
    return this.sets.get(keyOf(ref))?.until;
  }

  /** After a step of the set: a refusal starts (or lengthens) its pause, anything else ends it. */
  record(ref: SetRef, result: Pick<StepResult, "outcome">): void {
    const key = keyOf(ref);
    if (result.outcome.kind !== "refused") {
      this.sets.delete(key);
      return;
    }
    const refusals = (this.sets.get(key)?.refusals ?? 0) + 1;
    this.sets.set(key, { refusals, until: this.nowMs() + refusalPauseSeconds(refusals) * 1000 });
  }

  /** Sets no longer opted in are forgotten, so the map holds only sets that exist. */
  keepOnly(refs: readonly SetRef[]): void {
    const live = new Set(refs.map(keyOf));
    for (const key of this.sets.keys()) if (!live.has(key)) this.sets.delete(key);
  }
}
