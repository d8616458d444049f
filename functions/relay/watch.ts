// LIST then WATCH one path forever: resume from the last resourceVersion, reconnect with backoff
// when the stream ends or fails, re-list when the server answers 410 Gone.
import { backoffMs, type RelayClock, sleep } from "./clock.js";
import { watchFailure } from "./explain.js";

/** One line of a watch stream. */
export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: any;
}

export interface WatchHandle {
  abort(): void;
}

/** The two API calls a resilient watch needs (client-node on Node, a fake in tests). */
export interface WatchSource {
  /** LIST: the items and the list's resourceVersion (the point a watch resumes from). */
  list(path: string): Promise<{ items: any[]; resourceVersion: string }>;
  /** WATCH from a resourceVersion; `done` is called once when the stream ends, with the error if any. */
  watch(
    path: string,
    resourceVersion: string,
    onEvent: (e: WatchEvent) => void,
    done: (err?: unknown) => void,
  ): Promise<WatchHandle>;
}

const isGone = (err: unknown): boolean => {
  const e = err as { statusCode?: number; code?: number } | undefined;
  return e?.statusCode === 410 || e?.code === 410;
};

export interface ResilientWatchOptions {
  source: WatchSource;
  clock: RelayClock;
  path: string;
  /** Every object of a (re)list, then every event. */
  onObject(type: WatchEvent["type"], object: any): void;
  /** Called after each (re)list, with the objects listed (to drop what disappeared). */
  onResync(items: any[]): void;
  log(entry: Record<string, unknown>): void;
  backoff?: { baseMs: number; maxMs: number };
}

/**
 * LIST then WATCH, forever: reconnects with backoff when the stream ends or fails, resumes from
 * the last resourceVersion seen, and re-lists (resync) when the server answers 410 Gone.
 */
export class ResilientWatch {
  private resourceVersion: string | undefined;
  private handle: WatchHandle | undefined;
  private stopped = false;
  private failures = 0;
  /** The failure last logged and how many times in a row it happened (logged at the 1st, 2nd, 4th, 8th… time). */
  private repeated: { error: string; count: number } | undefined;
  /** Resolves when the loop has stopped. */
  readonly finished: Promise<void>;
  /** Counts for tests and logs. */
  readonly stats = { lists: 0, watches: 0, gone: 0 };

  constructor(private readonly opts: ResilientWatchOptions) {
    this.finished = this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.handle?.abort();
  }

  private async loop(): Promise<void> {
    const { baseMs, maxMs } = this.opts.backoff ?? { baseMs: 1000, maxMs: 30_000 };
    while (!this.stopped) {
      try {
        if (this.resourceVersion === undefined) await this.relist();
        const ended = await this.watchOnce();
        if (ended.gone) {
          this.stats.gone++;
          this.resourceVersion = undefined;
          this.opts.log({ msg: "watch expired (410 Gone): resyncing", path: this.opts.path });
          continue;
        }
        if (ended.error === undefined) {
          this.failures = 0; // a normal server-side close: reconnect at once
          continue;
        }
        throw ended.error;
      } catch (err) {
        if (this.stopped) break;
        const wait = backoffMs(this.failures++, baseMs, maxMs);
        this.logFailure(watchFailure(err), wait);
        await sleep(this.opts.clock, wait);
      }
    }
  }

  /**
   * The same failure again and again (a missing permission does not fix itself) is logged at its
   * 1st, 2nd, 4th, 8th… occurrence in a row, with the count: a log line per reconnect would bury
   * everything else, and the backoff alone still logs one every 30 s forever.
   */
  private logFailure(fields: Record<string, string>, retryInMs: number): void {
    const error = fields.error ?? "";
    const count = this.repeated?.error === error ? this.repeated.count + 1 : 1;
    this.repeated = { error, count };
    if ((count & (count - 1)) !== 0) return;
    this.opts.log({
      msg: "watch failed: reconnecting",
      path: this.opts.path,
      ...fields,
      failures: count,
      retryInMs,
      ...(count > 1 ? { nextLogAfter: count * 2 } : {}),
    });
  }

  /** After failures, the first success says so (once), and a new failure is logged afresh. */
  private recovered(): void {
    if (!this.repeated) return;
    this.opts.log({ msg: "watch resumed", path: this.opts.path, afterFailures: this.repeated.count });
    this.repeated = undefined;
  }

  private async relist(): Promise<void> {
    this.stats.lists++;
    const { items, resourceVersion } = await this.opts.source.list(this.opts.path);
    this.resourceVersion = resourceVersion;
    this.recovered();
    for (const item of items) this.opts.onObject("ADDED", item);
    this.opts.onResync(items);
  }

  private watchOnce(): Promise<{ gone: boolean; error?: unknown }> {
    return new Promise((resolve) => {
      let gone = false;
      this.stats.watches++;
      const onEvent = (e: WatchEvent) => {
        if (e.type === "ERROR") {
          if (isGone(e.object)) gone = true;
          return;
        }
        const rv = e.object?.metadata?.resourceVersion;
        if (typeof rv === "string") this.resourceVersion = rv;
        this.failures = 0;
        this.recovered();
        if (e.type !== "BOOKMARK") this.opts.onObject(e.type, e.object);
      };
      const done = (err?: unknown) => {
        this.handle = undefined;
        if (gone || isGone(err)) resolve({ gone: true });
        else resolve(err ? { gone: false, error: err } : { gone: false });
      };
      this.opts.source.watch(this.opts.path, this.resourceVersion ?? "", onEvent, done).then(
        (h) => {
          this.handle = h;
          if (this.stopped) h.abort();
        },
        (err) => done(err ?? new Error("watch failed")),
      );
    });
  }
}
