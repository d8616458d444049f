// The simulation's only notion of time. Nothing in the simulation uses timers: controllers ask
// to be woken at an instant, and `advance` moves time forward through those instants.

export interface ClockState {
  nowMs: number;
  /** Pending wake-ups (ms since the epoch), ascending. */
  wakes: number[];
}

export class VirtualClock {
  private ms: number;
  private readonly wakes: number[] = [];

  constructor(start: Date) {
    this.ms = start.getTime();
  }

  now(): Date {
    return new Date(this.ms);
  }

  /** The time as the API server writes timestamps (RFC 3339, whole seconds). */
  stamp(): string {
    return new Date(this.ms).toISOString().replace(/\.\d{3}Z$/, "Z");
  }

  nowMs(): number {
    return this.ms;
  }

  /** Ask to be woken at `atMs` (a controller then re-examines the cluster). */
  wakeAt(atMs: number): void {
    if (atMs <= this.ms) return;
    // Kept sorted; duplicates are harmless.
    let i = this.wakes.length;
    while (i > 0 && this.wakes[i - 1]! > atMs) i--;
    if (this.wakes[i - 1] !== atMs) this.wakes.splice(i, 0, atMs);
  }

  /** The next wake-up at or before `limitMs`, removed from the queue; undefined when none. */
  takeNextWake(limitMs: number): number | undefined {
    while (this.wakes.length && this.wakes[0]! <= this.ms) this.wakes.shift();
    const next = this.wakes[0];
    if (next === undefined || next > limitMs) return undefined;
    this.wakes.shift();
    return next;
  }

  /** Earliest pending wake-up, if any. */
  peekWake(): number | undefined {
    return this.wakes.find((w) => w > this.ms);
  }

  /** The time and the pending wake-ups, to save the simulation and continue it later. */
  state(): ClockState {
    return { nowMs: this.ms, wakes: this.wakes.filter((w) => w > this.ms) };
  }

  /** Continue from a state `state()` returned (it may move the clock back: this is a restore). */
  restore(state: ClockState): void {
    this.ms = state.nowMs;
    this.wakes.length = 0;
    for (const w of state.wakes) this.wakeAt(w);
  }

  /** Move the clock to `atMs` (never backwards). */
  set(atMs: number): void {
    if (atMs < this.ms) throw new Error(`virtual clock cannot go back from ${this.ms} to ${atMs}`);
    this.ms = atMs;
  }
}
