// The parts of the Workers runtime the fleet uses (Durable Objects, Queues), typed here so the
// code type-checks and runs in Node tests and benchmarks with in-memory stand-ins.
export interface DOStorage {
  get<T = unknown>(key: string): Promise<T | undefined>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  list<T = unknown>(options?: { prefix?: string; limit?: number }): Promise<Map<string, T>>;
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

/** POST JSON to an object and read its JSON answer. */
export async function call<T>(stub: DOStub, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await stub.fetch(`https://do${path}`, body === undefined ? {} : { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  return { status: res.status, body: (await res.json()) as T };
}
