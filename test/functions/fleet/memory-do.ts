// In-memory stand-ins of the Durable Objects runtime for the fleet's Node tests: storage with the
// list options the Workers runtime has (prefix, limit, startAfter; keys in order), alarms set but
// run only when a test calls them, and namespaces that build one real object per name (or answer
// with a test's own handler, for a ledger that answers badly).
import type { DONamespace, DOStorage } from "../../../functions/fleet/runtime.js";

export class MemoryStorage implements DOStorage {
  readonly map = new Map<string, unknown>();
  alarm: number | null = null;
  /** Every list call's options, to check that a caller pages. */
  readonly lists: { prefix?: string; limit?: number; startAfter?: string }[] = [];

  async get<T>(key: string) {
    return structuredClone(this.map.get(key)) as T | undefined;
  }
  async put(key: string, value: unknown) {
    // The runtime refuses keys over 2 KiB.
    if (new TextEncoder().encode(key).length > 2048) throw new RangeError("Keys cannot be larger than 2048 bytes.");
    this.map.set(key, structuredClone(value));
  }
  async delete(key: string) {
    return this.map.delete(key);
  }
  async deleteAll() {
    this.map.clear();
  }
  async list<T>(o: { prefix?: string; limit?: number; startAfter?: string } = {}) {
    this.lists.push({ ...o });
    const keys = [...this.map.keys()]
      .filter((k) => k.startsWith(o.prefix ?? "") && (o.startAfter === undefined || k > o.startAfter))
      .sort();
    const page = o.limit === undefined ? keys : keys.slice(0, o.limit);
    return new Map(page.map((k) => [k, structuredClone(this.map.get(k)) as T]));
  }
  async getAlarm() {
    return this.alarm;
  }
  async setAlarm(ms: number) {
    this.alarm = ms;
  }
  async deleteAlarm() {
    this.alarm = null;
  }
}

export interface MemoryObject<T> {
  storage: MemoryStorage;
  instance: T;
}

/** A namespace building one object per name, as the runtime does; `requests` counts every fetch. */
export function memoryNamespace<T extends { fetch(r: Request): Promise<Response> }>(
  make: (storage: MemoryStorage) => T,
) {
  const objects = new Map<string, MemoryObject<T>>();
  let requests = 0;
  const ns: DONamespace = {
    idFromName: (name: string) => name,
    get: (id: unknown) => ({
      fetch: async (input: string, init?: RequestInit) => {
        requests++;
        let o = objects.get(id as string);
        if (!o) {
          const storage = new MemoryStorage();
          o = { storage, instance: make(storage) };
          objects.set(id as string, o);
        }
        return o.instance.fetch(new Request(input, init));
      },
    }),
  };
  return { ns, objects, requests: () => requests };
}

/** A namespace whose every object answers with `answer` (a ledger that answers badly). */
export function answeringNamespace(answer: (path: string, body: unknown) => Response | Promise<Response>) {
  let requests = 0;
  const ns: DONamespace = {
    idFromName: (name: string) => name,
    get: () => ({
      fetch: async (input: string, init?: RequestInit) => {
        requests++;
        return answer(new URL(input).pathname, init?.body ? JSON.parse(String(init.body)) : undefined);
      },
    }),
  };
  return { ns, requests: () => requests };
}

/** Objects that still hold anything: storage or an alarm. */
export const leftBehind = <T>(objects: Map<string, MemoryObject<T>>) =>
  [...objects]
    .filter(([, o]) => o.storage.map.size > 0 || o.storage.alarm !== null)
    .map(([name, o]) => ({ name, keys: [...o.storage.map.keys()], alarm: o.storage.alarm }));
