// A tiny API server on 127.0.0.1 (node:http) answering with the captured fixture bodies, for the
// Worker running inside workerd, which msw cannot reach. It keeps the little state a step
// changes (PVC requests and labels, StatefulSet annotations and resourceVersion) and records
// every request.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fixture, fixtureStatus } from "./fakes.js";

export interface Recorded {
  method: string;
  path: string;
  query: string;
  contentType?: string;
  body?: any;
}

const statusBody = (code: number, reason: string, message: string) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason,
  code,
});

export class FakeKubeHttp {
  readonly requests: Recorded[] = [];
  statefulSet = fixture("statefulset-web.json");
  claims: any[] = fixture("pvc-list.json").items;
  private server: Server | undefined;

  constructor(private readonly token: string) {}

  get url(): string {
    const addr = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${addr.port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      this.handle(req)
        .then(([code, body]) => {
          res.writeHead(code, { "content-type": "application/json" });
          res.end(JSON.stringify(body));
        })
        .catch((err) => {
          res.writeHead(500, { "content-type": "application/json" });
          res.end(JSON.stringify(statusBody(500, "InternalError", String(err))));
        });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async readBody(req: IncomingMessage): Promise<any> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    return text ? JSON.parse(text) : undefined;
  }

  private async handle(req: IncomingMessage): Promise<[number, unknown]> {
    const url = new URL(req.url ?? "/", "http://x");
    const body = await this.readBody(req);
    this.requests.push({ method: req.method!, path: url.pathname, query: url.search, contentType: req.headers["content-type"], body });
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      const f = fixtureStatus("unauthorized.txt");
      return [f.code, f.body];
    }
    const p = url.pathname;
    const sts = "/apis/apps/v1/namespaces/default/statefulsets";
    if (req.method === "GET" && p === `${sts}/web`) return [200, this.statefulSet];
    if (req.method === "GET" && p.startsWith(`${sts}/`)) {
      const name = p.slice(sts.length + 1);
      return [404, { ...statusBody(404, "NotFound", `statefulsets.apps "${name}" not found`), details: { name, group: "apps", kind: "statefulsets" } }];
    }
    if (req.method === "GET" && p === sts) {
      return [200, { kind: "StatefulSetList", apiVersion: "apps/v1", metadata: { resourceVersion: "900" }, items: [this.statefulSet] }];
    }
    if (req.method === "GET" && p === "/api/v1/namespaces/default/pods") return [200, fixture("pod-list.json")];
    if (req.method === "GET" && p === "/api/v1/namespaces/default/persistentvolumeclaims") {
      return [200, { kind: "PersistentVolumeClaimList", apiVersion: "v1", metadata: { resourceVersion: "900" }, items: this.claims }];
    }
    if (req.method === "GET" && p === "/apis/storage.k8s.io/v1/storageclasses") return [200, fixture("storageclass-list.json")];
    if (req.method === "PATCH" && p.startsWith("/api/v1/namespaces/default/persistentvolumeclaims/")) {
      const claim = this.claims.find((c) => c.metadata.name === p.split("/").pop());
      if (!claim) return [404, statusBody(404, "NotFound", "persistentvolumeclaims not found")];
      claim.spec.resources.requests.storage = body.spec.resources.requests.storage;
      claim.metadata.labels = { ...claim.metadata.labels, ...body.metadata.labels };
      return [200, claim];
    }
    if (req.method === "PATCH" && p === `${sts}/web`) {
      const rv = body?.metadata?.resourceVersion;
      if (rv !== undefined && rv !== this.statefulSet.metadata.resourceVersion) {
        return [409, statusBody(409, "Conflict", 'Operation cannot be fulfilled on statefulsets.apps "web": the object has been modified; please apply your changes to the latest version and try again')];
      }
      this.statefulSet.metadata.annotations = { ...this.statefulSet.metadata.annotations, ...body.metadata.annotations };
      this.statefulSet.metadata.resourceVersion = String(Number(this.statefulSet.metadata.resourceVersion) + 1);
      return [200, this.statefulSet];
    }
    if (req.method === "PATCH" && p.startsWith("/apis/events.k8s.io/v1/namespaces/default/events/")) {
      return [404, statusBody(404, "NotFound", `events.events.k8s.io "${p.split("/").pop()}" not found`)];
    }
    if (req.method === "POST" && p === "/apis/events.k8s.io/v1/namespaces/default/events") return [201, fixture("event-create.json")];
    return [404, statusBody(404, "NotFound", `the server could not find the requested resource (${req.method} ${p})`)];
  }

  /** The writes made so far. */
  writes(): Recorded[] {
    return this.requests.filter((r) => r.method !== "GET");
  }
}
