// A clock whose timers fire only when the test advances time, for the relay's debounce,
// backoff and reconnect tests.
import type { RelayClock } from "../../functions/relay/index.js";

export class ManualClock implements RelayClock {
  private ms: number;
  private seq = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = new Date("2026-11-30T10:00:00Z")) {
    this.ms = start.getTime();
  }

  now = (): Date => new Date(this.ms);

  setTimeout = (fn: () => void, ms: number): unknown => {
    const id = ++this.seq;
    this.timers.set(id, { at: this.ms + Math.max(0, ms), fn });
    return id;
  };

  clearTimeout = (handle: unknown): void => {
    this.timers.delete(handle as number);
  };

  get pending(): number {
    return this.timers.size;
  }

  /**
   * Run until `p` settles, firing each timer as soon as it is the only thing left to do: for code
   * that does real asynchronous work (Web Crypto) between its timers.
   */
  async runUntil<T>(p: Promise<T>): Promise<T> {
    let done = false;
    const watched = p.finally(() => {
      done = true;
    });
    for (let idle = 0; !done && idle < 2000; ) {
      await settle();
      if (done) break;
      const next = [...this.timers.entries()].sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
      if (!next) {
        idle++;
        await new Promise((r) => setTimeout(r, 1)); // real work (e.g. crypto) still in progress
        continue;
      }
      this.timers.delete(next[0]);
      this.ms = Math.max(this.ms, next[1].at);
      next[1].fn();
    }
    return watched;
  }

  /** Move time forward by `ms`, firing due timers in order and letting promises settle between them. */
  async advance(ms: number): Promise<void> {
    const end = this.ms + ms;
    for (;;) {
      await settle();
      const due = [...this.timers.entries()]
        .filter(([, t]) => t.at <= end)
        .sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.ms = Math.max(this.ms, due[1].at);
      due[1].fn();
    }
    this.ms = end;
    await settle();
  }
}

/** Let pending promise callbacks run. */
export const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
  await new Promise((r) => setImmediate(r));
};
