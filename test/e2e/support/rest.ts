// A tiny REST client for the real-server tests' own setup and for the node agent: node:https with
// the cluster's CA, a bearer token or a client certificate. Deliberately NOT claimstep's client
// (adapters/): the harness must not share code with what it tests.

import type { IncomingMessage } from "node:http";
import { Agent, request } from "node:https";

/** What a REST client needs to reach a cluster as someone. Plain data: it crosses from vitest's
 * global setup to the test workers. */
export interface Credentials {
  server: string;
  caPem: string;
  token?: string;
  certPem?: string;
  keyPem?: string;
  /** Sent as User-Agent: the audit log names it. */
  userAgent?: string;
}

export interface Reply<T = KubeObject> {
  status: number;
  body: T;
  headers: IncomingMessage["headers"];
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }[];
  managedFields?: {
    manager?: string;
    operation?: string;
    apiVersion?: string;
    time?: string;
    fieldsType?: string;
    subresource?: string;
    fieldsV1?: unknown;
  }[];
  [k: string]: unknown;
}

/** Any Kubernetes object, loosely typed: the tests read fields they know. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: any;
  status?: any;
  [k: string]: any;
}

export interface KubeList<T = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** A Status body (errors) — also what a 2xx DELETE may answer. */
export interface KubeStatus {
  kind: "Status";
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: unknown;
}

export type PatchType = "merge" | "strategic" | "json" | "apply";
const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  strategic: "application/strategic-merge-patch+json",
  json: "application/json-patch+json",
  apply: "application/apply-patch+yaml",
};

/** The resources the tests touch: [group, version, namespaced]. */
export const RESOURCES = {
  namespaces: ["", "v1", false],
  nodes: ["", "v1", false],
  persistentvolumes: ["", "v1", false],
  pods: ["", "v1", true],
  persistentvolumeclaims: ["", "v1", true],
  serviceaccounts: ["", "v1", true],
  configmaps: ["", "v1", true],
  secrets: ["", "v1", true],
  services: ["", "v1", true],
  events: ["", "v1", true],
  resourcequotas: ["", "v1", true],
  limitranges: ["", "v1", true],
  statefulsets: ["apps", "v1", true],
  controllerrevisions: ["apps", "v1", true],
  deployments: ["apps", "v1", true],
  poddisruptionbudgets: ["policy", "v1", true],
  storageclasses: ["storage.k8s.io", "v1", false],
  volumeattributesclasses: ["storage.k8s.io", "v1", false],
  csidrivers: ["storage.k8s.io", "v1", false],
  clusterroles: ["rbac.authorization.k8s.io", "v1", false],
  clusterrolebindings: ["rbac.authorization.k8s.io", "v1", false],
  roles: ["rbac.authorization.k8s.io", "v1", true],
  rolebindings: ["rbac.authorization.k8s.io", "v1", true],
  leases: ["coordination.k8s.io", "v1", true],
  "events.events.k8s.io": ["events.k8s.io", "v1", true],
  mutatingwebhookconfigurations: ["admissionregistration.k8s.io", "v1", false],
  validatingwebhookconfigurations: ["admissionregistration.k8s.io", "v1", false],
  selfsubjectaccessreviews: ["authorization.k8s.io", "v1", false],
  subjectaccessreviews: ["authorization.k8s.io", "v1", false],
} as const satisfies Record<string, readonly [string, string, boolean]>;
export type Resource = keyof typeof RESOURCES;

/** kind → resource, for applying manifests. */
export const KIND_TO_RESOURCE: Record<string, Resource> = {
  Namespace: "namespaces",
  Node: "nodes",
  PersistentVolume: "persistentvolumes",
  Pod: "pods",
  PersistentVolumeClaim: "persistentvolumeclaims",
  ServiceAccount: "serviceaccounts",
  ConfigMap: "configmaps",
  Secret: "secrets",
  Service: "services",
  ResourceQuota: "resourcequotas",
  LimitRange: "limitranges",
  StatefulSet: "statefulsets",
  Deployment: "deployments",
  PodDisruptionBudget: "poddisruptionbudgets",
  StorageClass: "storageclasses",
  VolumeAttributesClass: "volumeattributesclasses",
  CSIDriver: "csidrivers",
  ClusterRole: "clusterroles",
  ClusterRoleBinding: "clusterrolebindings",
  Role: "roles",
  RoleBinding: "rolebindings",
  Lease: "leases",
  MutatingWebhookConfiguration: "mutatingwebhookconfigurations",
  ValidatingWebhookConfiguration: "validatingwebhookconfigurations",
};

/** The URL path of a resource (collection when name is absent). */
export function resourcePath(
  resource: Resource,
  namespace?: string | null,
  name?: string,
  subresource?: string,
): string {
  const [group, version, namespaced] = RESOURCES[resource];
  const plural = resource.split(".")[0]!;
  if (namespaced && !namespace && name) throw new Error(`${resource} is namespaced: ${name} needs a namespace`);
  if (!namespaced && namespace) throw new Error(`${resource} is cluster-scoped: no namespace (${namespace})`);
  let p = group === "" ? `/api/${version}` : `/apis/${group}/${version}`;
  if (namespaced && namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${plural}`;
  if (name) p += `/${encodeURIComponent(name)}`;
  if (subresource) {
    if (!name) throw new Error(`subresource ${subresource} needs a name`);
    p += `/${subresource}`;
  }
  return p;
}

export type Query = Record<string, string | number | boolean | undefined>;
const qs = (q?: Query) => {
  if (!q) return "";
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined) s.set(k, String(v));
  const t = s.toString();
  return t ? `?${t}` : "";
};

export interface RequestOptions {
  query?: Query;
  contentType?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

const agents = new Map<string, Agent>();
function agentFor(c: Credentials): Agent {
  const key = `${c.server}\0${c.caPem}\0${c.certPem ?? ""}`;
  let a = agents.get(key);
  if (!a) {
    a = new Agent({
      keepAlive: true,
      ca: c.caPem,
      ...(c.certPem && c.keyPem ? { cert: c.certPem, key: c.keyPem } : {}),
    });
    agents.set(key, a);
  }
  return a;
}

/** Closes the keep-alive sockets (so a worker or the global setup can exit promptly). */
export function closeAgents(): void {
  for (const a of agents.values()) a.destroy();
  agents.clear();
}

/** One HTTP request to the API server; never throws for an HTTP status, only for a transport error. */
export function rawRequest<T = unknown>(
  c: Credentials,
  method: string,
  path: string,
  body?: unknown,
  o: RequestOptions = {},
): Promise<Reply<T>> {
  const url = new URL(path + qs(o.query), c.server);
  const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
  const headers: Record<string, string | number> = { Accept: "application/json" };
  if (c.token) headers.Authorization = `Bearer ${c.token}`;
  if (c.userAgent) headers["User-Agent"] = c.userAgent;
  if (payload !== undefined) {
    headers["Content-Type"] = o.contentType ?? "application/json";
    // Framed, always: a DELETE's options travel in its body.
    headers["Content-Length"] = Buffer.byteLength(payload);
  }
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, headers, agent: agentFor(c), timeout: o.timeoutMs ?? 30_000, signal: o.signal },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (d: Buffer) => chunks.push(d));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          if (/json/.test(String(res.headers["content-type"] ?? "")) && text) {
            try {
              parsed = JSON.parse(text);
            } catch {
              parsed = text;
            }
          }
          resolve({ status: res.statusCode ?? 0, body: parsed as T, headers: res.headers });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer within ${o.timeoutMs ?? 30_000} ms`)));
    req.on("error", reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** A streaming GET (watch): calls onLine for each JSON line until the server ends it or signal aborts.
 * Resolves with the HTTP status when the stream ends. */
export function streamLines(
  c: Credentials,
  path: string,
  query: Query,
  onLine: (obj: unknown) => void,
  signal: AbortSignal,
): Promise<number> {
  const url = new URL(path + qs(query), c.server);
  const headers: Record<string, string> = { Accept: "application/json" };
  if (c.token) headers.Authorization = `Bearer ${c.token}`;
  if (c.userAgent) headers["User-Agent"] = c.userAgent;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "GET", headers, agent: agentFor(c), signal }, (res) => {
      let buf = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => {
        buf += d;
        let i: number;
        while ((i = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, i).trim();
          buf = buf.slice(i + 1);
          if (!line) continue;
          try {
            onLine(JSON.parse(line));
          } catch (e) {
            // A malformed line: surface it as an error event.
            onLine({
              type: "ERROR",
              object: { kind: "Status", message: `unparsable watch line: ${String(e)}`, code: 0 },
            });
          }
        }
      });
      res.on("error", (e) => (signal.aborted ? resolve(res.statusCode ?? 0) : reject(e)));
      res.on("end", () => {
        if (buf.trim()) {
          try {
            onLine(JSON.parse(buf));
          } catch {
            /* a non-JSON error body: the status says enough */
          }
        }
        resolve(res.statusCode ?? 0);
      });
    });
    req.on("error", (e) => (signal.aborted ? resolve(0) : reject(e)));
    req.end();
  });
}

/** The message of an error answer, for test failures. */
export function describeReply(r: Reply<unknown>): string {
  const b = r.body as Partial<KubeStatus> | string | undefined;
  const msg = typeof b === "string" ? b.slice(0, 500) : (b?.message ?? JSON.stringify(b)?.slice(0, 500));
  return `HTTP ${r.status}${typeof b === "object" && b?.reason ? ` ${b.reason}` : ""}: ${msg}`;
}

/** Throws unless the reply is 2xx; returns its body. */
export function ok<T>(r: Reply<T>, what = "request"): T {
  if (r.status < 200 || r.status >= 300) throw new Error(`${what} failed: ${describeReply(r)}`);
  return r.body;
}

/** Typed REST helper: `rest.get("pods", ns, name)`, `rest.in(ns).get("pods", name)`. Cluster-scoped
 * resources take `null` (or undefined) as namespace. */
export class Rest {
  constructor(readonly credentials: Credentials) {}

  request<T = KubeObject>(method: string, path: string, body?: unknown, o?: RequestOptions): Promise<Reply<T>> {
    return rawRequest<T>(this.credentials, method, path, body, o);
  }

  get<T = KubeObject>(
    resource: Resource,
    namespace: string | null | undefined,
    name: string,
    o?: RequestOptions,
  ): Promise<Reply<T>> {
    return this.request<T>("GET", resourcePath(resource, namespace, name), undefined, o);
  }
  list<T = KubeObject>(resource: Resource, namespace?: string | null, query?: Query): Promise<Reply<KubeList<T>>> {
    return this.request<KubeList<T>>("GET", resourcePath(resource, namespace), undefined, query ? { query } : {});
  }
  create<T = KubeObject>(
    resource: Resource,
    namespace: string | null | undefined,
    body: unknown,
    query?: Query,
  ): Promise<Reply<T>> {
    return this.request<T>("POST", resourcePath(resource, namespace), body, query ? { query } : {});
  }
  put<T = KubeObject>(
    resource: Resource,
    namespace: string | null | undefined,
    name: string,
    body: unknown,
    query?: Query,
  ): Promise<Reply<T>> {
    return this.request<T>("PUT", resourcePath(resource, namespace, name), body, query ? { query } : {});
  }
  patch<T = KubeObject>(
    resource: Resource,
    namespace: string | null | undefined,
    name: string,
    body: unknown,
    type: PatchType = "merge",
    query?: Query,
  ): Promise<Reply<T>> {
    const q = type === "apply" ? { fieldManager: "e2e-admin", force: true, ...query } : query;
    return this.request<T>("PATCH", resourcePath(resource, namespace, name), body, {
      contentType: PATCH_CONTENT_TYPE[type],
      ...(q ? { query: q } : {}),
    });
  }
  delete<T = KubeObject | KubeStatus>(
    resource: Resource,
    namespace: string | null | undefined,
    name: string,
    options?: Record<string, unknown>,
  ): Promise<Reply<T>> {
    return this.request<T>("DELETE", resourcePath(resource, namespace, name), options);
  }

  /** The status subresource (and any other: `sub("scale")`). */
  status = this.sub("status");
  sub(subresource: string) {
    return {
      get: <T = KubeObject>(resource: Resource, namespace: string | null | undefined, name: string) =>
        this.request<T>("GET", resourcePath(resource, namespace, name, subresource)),
      put: <T = KubeObject>(resource: Resource, namespace: string | null | undefined, name: string, body: unknown) =>
        this.request<T>("PUT", resourcePath(resource, namespace, name, subresource), body),
      patch: <T = KubeObject>(
        resource: Resource,
        namespace: string | null | undefined,
        name: string,
        body: unknown,
        type: PatchType = "merge",
      ) =>
        this.request<T>("PATCH", resourcePath(resource, namespace, name, subresource), body, {
          contentType: PATCH_CONTENT_TYPE[type],
        }),
      create: <T = KubeObject>(resource: Resource, namespace: string | null | undefined, name: string, body: unknown) =>
        this.request<T>("POST", resourcePath(resource, namespace, name, subresource), body),
    };
  }

  /** The same helper with a default namespace: `rest.in(ns).get("pods", "web-0")`. */
  in(namespace: string) {
    const ns = (res: Resource) => (RESOURCES[res][2] ? namespace : null);
    return {
      namespace,
      get: <T = KubeObject>(res: Resource, name: string) => this.get<T>(res, ns(res), name),
      list: <T = KubeObject>(res: Resource, query?: Query) => this.list<T>(res, ns(res), query),
      create: <T = KubeObject>(res: Resource, body: unknown, query?: Query) =>
        this.create<T>(res, ns(res), body, query),
      put: <T = KubeObject>(res: Resource, name: string, body: unknown) => this.put<T>(res, ns(res), name, body),
      patch: <T = KubeObject>(res: Resource, name: string, body: unknown, type: PatchType = "merge") =>
        this.patch<T>(res, ns(res), name, body, type),
      delete: <T = KubeObject | KubeStatus>(res: Resource, name: string, options?: Record<string, unknown>) =>
        this.delete<T>(res, ns(res), name, options),
      status: {
        get: <T = KubeObject>(res: Resource, name: string) => this.status.get<T>(res, ns(res), name),
        put: <T = KubeObject>(res: Resource, name: string, body: unknown) =>
          this.status.put<T>(res, ns(res), name, body),
        patch: <T = KubeObject>(res: Resource, name: string, body: unknown, type: PatchType = "merge") =>
          this.status.patch<T>(res, ns(res), name, body, type),
      },
    };
  }
}
