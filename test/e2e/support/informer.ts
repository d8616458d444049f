// List-then-watch caches for the node agent (what client-go's informers do, small): one LIST, then
// a WATCH from its resourceVersion, re-established when the server ends it, re-listed after a
// 410 Gone or a transport error. Cheap on a shared machine: no polling requests.
import { type Credentials, type KubeList, type KubeObject, type Query, rawRequest, streamLines } from "./rest.js";

export interface InformerOptions {
  credentials: Credentials;
  /** Collection path, e.g. /api/v1/namespaces/ns/pods. */
  path: string;
  query?: Query;
  onChange: (type: "ADDED" | "MODIFIED" | "DELETED" | "SYNC", obj: KubeObject | null) => void;
  onError: (message: string) => void;
}

const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`;

export class Informer {
  readonly store = new Map<string, KubeObject>();
  private rv = "";
  private stopped = false;
  private controller = new AbortController();
  private syncedResolve!: () => void;
  /** Resolves after the first LIST. */
  readonly synced = new Promise<void>((r) => (this.syncedResolve = r));
  private loop: Promise<void>;

  constructor(private readonly o: InformerOptions) {
    this.loop = this.run();
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.store.get(`${namespace ?? ""}/${name}`);
  }
  list(): KubeObject[] {
    return [...this.store.values()];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.controller.abort();
    await this.loop;
  }

  private async relist(): Promise<void> {
    const r = await rawRequest<KubeList>(this.o.credentials, "GET", this.o.path, undefined, {
      query: this.o.query ?? {},
      signal: this.controller.signal,
    });
    if (r.status !== 200) throw new Error(`LIST ${this.o.path}: HTTP ${r.status}`);
    this.store.clear();
    for (const item of r.body.items) this.store.set(keyOf(item), item);
    this.rv = r.body.metadata.resourceVersion ?? "";
    this.syncedResolve();
    this.o.onChange("SYNC", null);
  }

  private async run(): Promise<void> {
    let needList = true;
    let failures = 0;
    while (!this.stopped) {
      try {
        if (needList) {
          await this.relist();
          needList = false;
        }
        let gone = false;
        const status = await streamLines(
          this.o.credentials,
          this.o.path,
          { ...this.o.query, watch: 1, resourceVersion: this.rv, allowWatchBookmarks: true, timeoutSeconds: 240 },
          (line) => {
            const ev = line as { type: string; object: KubeObject & { code?: number; message?: string } };
            if (ev.type === "ERROR") {
              if (ev.object.code === 410) gone = true;
              else this.o.onError(`watch ${this.o.path}: ${ev.object.message ?? JSON.stringify(ev.object)}`);
              return;
            }
            const rv = ev.object?.metadata?.resourceVersion;
            if (rv) this.rv = rv;
            if (ev.type === "BOOKMARK") return;
            const k = keyOf(ev.object);
            if (ev.type === "DELETED") this.store.delete(k);
            else this.store.set(k, ev.object);
            this.o.onChange(ev.type as "ADDED" | "MODIFIED" | "DELETED", ev.object);
          },
          this.controller.signal,
        );
        if (this.stopped) return;
        if (status === 410 || gone) needList = true;
        else if (status !== 200) throw new Error(`WATCH ${this.o.path}: HTTP ${status}`);
        failures = 0;
      } catch (e) {
        if (this.stopped) return;
        failures++;
        // A transport error while the control plane is up is worth knowing; a few are tolerated
        // (an idle keep-alive socket closed under us), persistent ones are reported.
        if (failures >= 3) this.o.onError(`${this.o.path}: ${e instanceof Error ? e.message : String(e)}`);
        needList = true;
        await new Promise((r) => setTimeout(r, Math.min(2000, 200 * failures)));
      }
    }
  }
}
