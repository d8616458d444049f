// The parts of the Workers runtime the fleet uses (Durable Objects, Queues), typed here so the
// code type-checks and runs in Node tests and benchmarks with in-memory stand-ins.
export interface DOStorage {
  get<T = unknown>(key: string): Promise<T | undefined>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  /** Keys in order; `limit` and `startAfter` page through them. */
  list<T = unknown>(options?: { prefix?: string; limit?: number; startAfter?: string }): Promise<Map<string, T>>;
  /** Every key (the runtime's; a stand-in may leave it out: the objects then delete their keys one by one). */
  deleteAll?(): Promise<void>;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTimeMs: number): Promise<void>;
  deleteAlarm(): Promise<void>;
}

export interface DOState {
  storage: DOStorage;
}

export interface DOStub {
  fetch(input: string, init?: RequestInit): Promise<Response>;
}

export interface DONamespace {
  idFromName(name: string): unknown;
  get(id: unknown): DOStub;
}

export interface QueueProducer<T> {
  sendBatch(messages: Iterable<{ body: T }>): Promise<void>;
}

export interface QueueMessage<T = unknown> {
  readonly id: string;
  readonly body: T;
  readonly attempts: number;
  ack(): void;
  retry(options?: { delaySeconds?: number }): void;
}

export interface MessageBatch<T = unknown> {
  readonly queue: string;
  readonly messages: readonly QueueMessage<T>[];
}

/** The bindings of fleet mode (wrangler.toml): the set objects, the ledger objects, the step queue. */
export interface FleetBindings {
  SETS: DONamespace;
  LEDGER: DONamespace;
  STEP_QUEUE: QueueProducer<unknown>;
}

export const stubOf = (ns: DONamespace, name: string): DOStub => ns.get(ns.idFromName(name));

/**
 * POST JSON to an object and read its JSON answer, with its status: the caller decides what a
 * status means (and reads the body strictly: it is what the object said, not a checked T). Throws
 * when the answer is not JSON.
 */
export async function call<T>(stub: DOStub, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await stub.fetch(
    `https://do${path}`,
    body === undefined
      ? {}
      : { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } },
  );
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as T };
  } catch {
    throw new Error(
      `${path} answered ${res.status} with a body that is not JSON (${JSON.stringify(text.slice(0, 60))})`,
    );
  }
}
