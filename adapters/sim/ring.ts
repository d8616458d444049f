// A log that keeps only its last `limit` entries (the simulated servers' request logs): a
// long-running `serve --cluster sim` must not grow with every request it ever answered.

/**
 * The requests a simulated server's log keeps: enough for any test or budget check to read back
 * what a step or a scenario sent, few enough that a `serve --cluster sim` running for days stays
 * the same size (docs/playground.md).
 */
export const REQUEST_LOG_LIMIT = 2_000;

export class Ring<T> {
  private buf: T[] = [];
  /** Index in `buf` of the oldest entry once the ring is full. */
  private start = 0;

  constructor(readonly limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new RangeError(`a ring keeps at least one entry (limit ${limit})`);
  }

  push(entry: T): void {
    if (this.buf.length < this.limit) {
      this.buf.push(entry);
      return;
    }
    this.buf[this.start] = entry;
    this.start = (this.start + 1) % this.limit;
  }

  /** The entries kept, oldest first (a copy). */
  toArray(): T[] {
    return this.start === 0 ? [...this.buf] : [...this.buf.slice(this.start), ...this.buf.slice(0, this.start)];
  }

  get length(): number {
    return this.buf.length;
  }

  clear(): void {
    this.buf = [];
    this.start = 0;
  }
}
