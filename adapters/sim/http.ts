// The simulated API server over HTTP: a `fetch` handler (Request in, Response out) with the real
// paths, verbs and content types, bearer tokens and RBAC rules, `limit`/`continue` paging, the
// API server's Status bodies, a request log, and per-request faults and hooks for tests. Every
// consumer of the simulated cluster reaches it this way, through the production KubeClient.
import { parse as parseYaml } from "yaml";
import { ApiError } from "../api-error.js";
import { SelectorSyntaxError } from "../kube/label-selector.js";
import type { SimApi } from "./api.js";
import {
  badRequest,
  continueExpired,
  type FieldError,
  fieldManagerRequired,
  forbiddenByRbac,
  internalError,
  invalid,
  methodNotAllowed,
  notServed,
  serverTimeout,
  serviceUnavailable,
  tooManyRequests,
  unauthorized,
  unsupportedMediaType,
} from "./errors.js";
import { KUBELET_METRICS_PATH, PROMETHEUS_PATH, type SimPrometheus } from "./prometheus.js";
import { REQUEST_LOG_LIMIT, Ring } from "./ring.js";
import { type Json, RESOURCES, type Resource } from "./store.js";

/** RBAC verbs, as a Role grants them. */
export type Verb = "get" | "list" | "watch" | "create" | "patch" | "update" | "delete" | "deletecollection";

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  /** Only objects of these names (a `create` or `list` never matches: its object has no name yet). */
  resourceNames?: string[];
}

/** Who a bearer token is, and what RBAC lets it do (no rules: everything). */
export interface Identity {
  user: string;
  rules?: PolicyRule[];
}

/** A request as the server understood it (what hooks, faults and the request log see). */
export interface RequestInfo {
  method: string;
  verb: Verb;
  group: string;
  version: string;
  resource: string;
  /** The subresource of the URL (`eviction` in `pods/<name>/eviction`), if any. */
  subresource?: string;
  namespace?: string;
  name?: string;
  query: URLSearchParams;
  contentType: string;
  /** Parsed JSON (or YAML, for apply) body, when there is one. */
  body?: unknown;
  headers: Headers;
}

/**
 * Which requests a fault or hook applies to: `"patch persistentvolumeclaims"`, `"list *"`,
 * `"* pods"`, `"create pods/eviction"` (a subresource is named with its resource), or a predicate.
 */
export type Match = string | ((r: RequestInfo) => boolean);

/** An injected failure, answered with the API server's own body for that code. */
export type Failure =
  | { code: 429; retryAfterSeconds?: number }
  | { code: 410 | 500 | 503 | 504 }
  | { code: number; body: unknown; headers?: Record<string, string> }
  /** No answer until the client gives up (its AbortSignal), then a 504. */
  | { hang: true }
  /**
   * The request lands (the server applies it, refusals included) but its answer is lost: the
   * client sees a 504 Timeout (default) or a 503, as when a connection drops after the commit.
   */
  | { lost: true; code?: 503 | 504 };

export interface Counters {
  /** `"<verb> <resource>"` → requests, e.g. `"list pods": 1`. */
  byRequest: Record<string, number>;
  /** get + list + watch. */
  reads: number;
  /** create, patch, update, delete. */
  writes: number;
  total: number;
}

export interface SimHttpOptions {
  /** Where the server answers, e.g. `https://kube.test:6443` or a proxy's `https://proxy.test/k8s/a`; default SIM_SERVER. */
  baseUrl?: string;
  /** Bearer tokens the server accepts; absent = no authentication. */
  tokens?: Record<string, Identity>;
  /** Who a request is when `tokens` is absent (its rules still apply); default an unrestricted user. */
  anonymous?: Identity;
  /** storage.k8s.io versions serving VolumeAttributesClasses: ["v1"] (1.34+), ["v1beta1"] (1.31–1.33), [] before. */
  volumeAttributesClassVersions?: readonly ("v1" | "v1beta1")[];
  /**
   * The Prometheus served under `<baseUrl>/prometheus` (the kubelets' volume stats), outside the
   * API server's authentication, RBAC, request log and faults.
   */
  prometheus?: SimPrometheus;
  /**
   * `PUT` and `PATCH` of StatefulSets (statefulset-writes.ts: through the mutating admission
   * webhooks, with their warnings); absent: merge patches straight to the API.
   */
  statefulSetWrite?: (r: RequestInfo, actor: string, identity: Identity | undefined) => Promise<Response>;
  /** How many requests `requests()` keeps (the last ones); default REQUEST_LOG_LIMIT. The counters count every request. */
  requestLogLimit?: number;
}

export { REQUEST_LOG_LIMIT };

/** Where the simulated cluster's API server "listens": only its own fetch handler answers here. */
export const SIM_SERVER = "https://sim.claimstep.invalid";

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const validSubdomain = (s: string) => s.length <= 253 && DNS_SUBDOMAIN.test(s);
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

const APPLY = "application/apply-patch+yaml";
const MERGE = "application/merge-patch+json";

const byPath = new Map<string, Resource>(
  (Object.keys(RESOURCES) as Resource[]).map((r) => [`${RESOURCES[r].group}/${r}`, r]),
);

const json = (body: unknown, status: number, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });

/** The Response of a refusal: the Status body, and Retry-After when the server asks for a wait. */
export function errorResponse(err: ApiError): Response {
  const body = err.status ?? {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: err.message,
    code: err.code,
  };
  return json(
    body,
    err.code || 500,
    err.retryAfterSeconds !== undefined ? { "Retry-After": String(err.retryAfterSeconds) } : {},
  );
}

/** `pods/eviction` for a subresource request, else the resource: what RBAC, faults and counters name. */
export const resourceOf = (r: Pick<RequestInfo, "resource" | "subresource">): string =>
  r.subresource ? `${r.resource}/${r.subresource}` : r.resource;

/** Subresources the simulated API server serves: `<resource>/<subresource>` → the verbs it answers. */
const SUBRESOURCES: Record<string, Verb[]> = { "pods/eviction": ["create"] };

const EVICTION_VERSIONS = new Set(["policy/v1", "policy/v1beta1"]);

const verbOf = (method: string, name: string | undefined, query: URLSearchParams): Verb | undefined => {
  switch (method) {
    case "GET":
      return name ? "get" : query.get("watch") === "true" || query.get("watch") === "1" ? "watch" : "list";
    case "POST":
      return "create";
    case "PATCH":
      return "patch";
    case "PUT":
      return "update";
    case "DELETE":
      return name ? "delete" : "deletecollection";
    default:
      return undefined;
  }
};

/** A continue token: where the next page starts, and the list's resourceVersion (for expiry). */
const encodeContinue = (start: number, rv: string) => btoa(JSON.stringify({ start, rv }));

const READS: ReadonlySet<Verb> = new Set(["get", "list", "watch"]);

const emptyCounters = (): Counters => ({ byRequest: {}, reads: 0, writes: 0, total: 0 });

export class SimHttp {
  /** The last requests (a ring: a long-running server must not keep every request it answered). */
  private readonly log: Ring<RequestInfo>;
  /** Every request since the last reset, counted as it arrives (the log forgets, the counters do not). */
  private counted = emptyCounters();
  private faults: { match: Match; failure: Failure; left: number }[] = [];
  private hooks: { match: Match; hook: (r: RequestInfo) => unknown }[] = [];
  private denied = new Set<string>();
  /** Continue tokens older than this resourceVersion answer 410 (set by `expireContinueTokens`). */
  private continueFloor = 0;
  /** Exceptions that are bugs of the simulation, not API answers: tests assert there are none. */
  readonly bugs: Error[] = [];

  constructor(
    private readonly api: () => SimApi,
    private readonly opts: SimHttpOptions = {},
  ) {
    this.log = new Ring(opts.requestLogLimit ?? REQUEST_LOG_LIMIT);
  }

  /** The handler for Request objects (msw, workerd's outbound fetch, a socket bridge). */
  readonly fetch = async (request: Request): Promise<Response> => {
    const method = request.method.toUpperCase();
    const text = method === "GET" || method === "HEAD" ? "" : await request.text();
    return this.handle(method, request.url, request.headers, text, request.signal);
  };

  /** The same handler in the KubeClient's `fetch(url, init)` shape, without building a Request. */
  readonly fetchLike = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const body = init.body;
    if (body !== undefined && body !== null && typeof body !== "string")
      throw new TypeError("the simulated API server takes string bodies");
    return this.handle(
      (init.method ?? "GET").toUpperCase(),
      url,
      new Headers(init.headers),
      body ?? "",
      init.signal ?? undefined,
    );
  };

  /** Every request since the last reset, by verb and resource (not only those the log still holds). */
  counters(): Counters {
    return { ...this.counted, byRequest: { ...this.counted.byRequest } };
  }

  /** The last requests seen since the last reset (at most `requestLogLimit`), oldest first. */
  requests(): RequestInfo[] {
    return this.log.toArray();
  }

  resetCounters(): void {
    this.log.clear();
    this.counted = emptyCounters();
  }

  private remember(r: RequestInfo): void {
    this.log.push(r);
    const c = this.counted;
    const k = `${r.verb} ${resourceOf(r)}`;
    c.byRequest[k] = (c.byRequest[k] ?? 0) + 1;
    if (READS.has(r.verb)) c.reads++;
    else c.writes++;
    c.total++;
  }

  /** Forget the request log, faults, hooks and denials. */
  reset(): void {
    this.resetCounters();
    this.faults = [];
    this.hooks = [];
    this.denied = new Set();
    this.continueFloor = 0;
    this.bugs.length = 0;
  }

  /** Answer the next `times` matching requests with a failure instead. */
  failNext(match: Match, failure: Failure, times = 1): void {
    this.faults.push({ match, failure, left: times });
  }

  /** Run `hook` just before the next matching request is handled (e.g. a racing writer). */
  beforeNext(match: Match, hook: (r: RequestInfo) => unknown): void {
    this.hooks.push({ match, hook });
  }

  /** Refuse a verb on a resource (`pods`, or a subresource: `pods/eviction`) as RBAC would (403 naming both). */
  deny(verb: Verb, resource: string): void {
    this.denied.add(`${verb} ${resource}`);
  }

  /** Continue tokens handed out so far answer 410 Expired (etcd compacted past them). */
  expireContinueTokens(currentRevision: string): void {
    this.continueFloor = Number(currentRevision) + 1;
  }

  private async handle(
    method: string,
    href: string,
    headers: Headers,
    text: string,
    signal?: AbortSignal,
  ): Promise<Response> {
    try {
      const prometheus = this.opts.prometheus && this.prometheusPath(href);
      if (prometheus !== undefined)
        return await this.opts.prometheus!.handle(method, prometheus.path, prometheus.search, headers, text, signal);
      // The kubelets' volume stats for a real Prometheus to scrape (outside authentication, as /prometheus).
      if (
        this.opts.prometheus &&
        new URL(href).pathname ===
          new URL(this.opts.baseUrl ?? SIM_SERVER).pathname.replace(/\/+$/, "") + KUBELET_METRICS_PATH
      )
        return this.opts.prometheus.kubeletMetrics(method);
      return await this.route(method, href, headers, text, signal);
    } catch (err) {
      if (err instanceof ApiError) return errorResponse(err);
      // A bug of the simulation: recorded for the tests, answered as a real server would a panic.
      this.bugs.push(err as Error);
      return errorResponse(internalError(`${method} ${href}`));
    }
  }

  /** `<baseUrl>/prometheus/<path>` → the path after /prometheus, and the query string. */
  private prometheusPath(href: string): { path: string; search: URLSearchParams } | undefined {
    const url = new URL(href);
    const prefix = new URL(this.opts.baseUrl ?? SIM_SERVER).pathname.replace(/\/+$/, "") + PROMETHEUS_PATH;
    if (url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`)) return undefined;
    return { path: url.pathname.slice(prefix.length) || "/", search: url.searchParams };
  }

  private parse(method: string, url: URL, headers: Headers, text: string): RequestInfo {
    const prefix = new URL(this.opts.baseUrl ?? SIM_SERVER).pathname.replace(/\/+$/, "");
    if (!url.pathname.startsWith(prefix)) throw notServed();
    const parts = url.pathname.slice(prefix.length).split("/").filter(Boolean).map(decodeURIComponent);
    let group: string;
    let version: string | undefined;
    let rest: string[];
    if (parts[0] === "api") [group, version, rest] = ["", parts[1], parts.slice(2)];
    else if (parts[0] === "apis") [group, version, rest] = [parts[1] ?? "", parts[2], parts.slice(3)];
    else throw notServed();
    if (!version) throw notServed();
    let namespace: string | undefined;
    if (rest[0] === "namespaces" && rest.length >= 3) [namespace, rest] = [rest[1], rest.slice(2)];
    const [resource, name, subresource, extra] = rest;
    if (!resource || extra !== undefined) throw notServed();
    if (subresource !== undefined && !SUBRESOURCES[`${resource}/${subresource}`]) throw notServed();
    const verb = verbOf(method, name, url.searchParams);
    if (!verb) throw methodNotAllowed();
    const contentType = (headers.get("content-type") ?? "").split(";")[0]!.trim();
    let body: unknown;
    if (text) {
      try {
        body = contentType === APPLY ? parseYaml(text) : JSON.parse(text);
      } catch (err) {
        throw badRequest(
          `the request body is not valid ${contentType === APPLY ? "YAML" : "JSON"}: ${(err as Error).message}`,
        );
      }
    }
    return {
      method,
      verb,
      group,
      version,
      resource,
      ...(subresource !== undefined ? { subresource } : {}),
      ...(namespace !== undefined ? { namespace } : {}),
      ...(name !== undefined ? { name } : {}),
      query: url.searchParams,
      contentType,
      ...(body !== undefined ? { body } : {}),
      headers,
    };
  }

  private matches(m: Match, r: RequestInfo): boolean {
    if (typeof m === "function") return m(r);
    const [verb = "*", resource = "*"] = m.trim().split(/\s+/);
    return (verb === "*" || verb === r.verb) && (resource === "*" || resource === resourceOf(r));
  }

  /**
   * RBAC as the authorizer matches a rule (rbac.ResourceMatches): `*`, the exact resource, or for
   * a subresource the exact `pods/eviction` or `*\/eviction` (`pods` does not grant `pods/eviction`).
   */
  private allowed(identity: Identity | undefined, r: RequestInfo): boolean {
    const resource = resourceOf(r);
    if (this.denied.has(`${r.verb} ${resource}`)) return false;
    if (!identity?.rules) return true;
    const resourceMatches = (ruleResource: string) =>
      ruleResource === "*" ||
      ruleResource === resource ||
      (r.subresource !== undefined && ruleResource === `*/${r.subresource}`);
    return identity.rules.some(
      (rule) =>
        (rule.apiGroups.includes("*") || rule.apiGroups.includes(r.group)) &&
        rule.resources.some(resourceMatches) &&
        (rule.verbs.includes("*") || rule.verbs.includes(r.verb)) &&
        (!rule.resourceNames?.length ||
          (r.verb !== "create" && r.name !== undefined && rule.resourceNames.includes(r.name))),
    );
  }

  private authenticate(headers: Headers): Identity | undefined {
    if (!this.opts.tokens) return this.opts.anonymous;
    const auth = headers.get("authorization") ?? "";
    const token = /^Bearer (.+)$/.exec(auth)?.[1];
    const identity = token !== undefined ? this.opts.tokens[token] : undefined;
    if (!identity) throw unauthorized();
    return identity;
  }

  private served(r: Resource, version: string): boolean {
    if (r === "volumeattributesclasses")
      return (this.opts.volumeAttributesClassVersions ?? ["v1"]).includes(version as "v1");
    return RESOURCES[r].apiVersion.endsWith(`/${version}`) || RESOURCES[r].apiVersion === version;
  }

  private async route(
    method: string,
    href: string,
    headers: Headers,
    text: string,
    signal?: AbortSignal,
  ): Promise<Response> {
    const r = this.parse(method, new URL(href), headers, text);
    this.remember(r);
    const identity = this.authenticate(headers);
    const resource = byPath.get(`${r.group}/${r.resource}`);
    if (!this.allowed(identity, r)) {
      const shape = resource ? RESOURCES[resource] : { plural: r.resource, group: r.group, kind: r.resource };
      const name = r.subresource !== undefined ? r.name : r.verb === "create" || r.verb === "list" ? undefined : r.name;
      throw forbiddenByRbac(identity?.user ?? "system:anonymous", r.verb, shape, r.namespace, name, r.subresource);
    }
    if (!resource || !this.served(resource, r.version)) throw notServed();
    if (r.subresource !== undefined) {
      const verbs = SUBRESOURCES[resourceOf(r)];
      if (!verbs || r.name === undefined) throw notServed();
      if (!verbs.includes(r.verb)) throw methodNotAllowed();
    }
    const info = RESOURCES[resource];
    if (info.namespaced ? r.namespace === undefined && r.verb !== "list" : r.namespace !== undefined) throw notServed();

    const hookAt = this.hooks.findIndex((h) => this.matches(h.match, r));
    if (hookAt >= 0) await this.hooks.splice(hookAt, 1)[0]!.hook(r);
    const fault = this.faults.find((f) => f.left > 0 && this.matches(f.match, r));
    if (fault) {
      fault.left--;
      this.faults = this.faults.filter((f) => f.left > 0);
      const f = fault.failure;
      if ("lost" in f) {
        try {
          await this.serve(r, resource, headers);
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
        }
        const request = `${r.verb} ${r.resource}`;
        return errorResponse(f.code === 503 ? serviceUnavailable() : serverTimeout(request));
      }
      return this.failure(f, `${r.verb} ${r.resource}`, signal);
    }
    return this.serve(r, resource, headers);
  }

  /** Answer a request that passed authentication, RBAC, routing, hooks and faults. */
  private async serve(r: RequestInfo, resource: Resource, headers: Headers): Promise<Response> {
    // Who the audit log and managedFields name: the fieldManager, else the client's user agent.
    const actor = r.query.get("fieldManager") ?? (headers.get("user-agent") ?? "unknown").split(/[/ ]/)[0]!;
    const api = this.api();
    if (resource === "statefulsets" && (r.verb === "patch" || r.verb === "update") && this.opts.statefulSetWrite) {
      return this.opts.statefulSetWrite(r, actor, this.authenticate(headers));
    }
    switch (r.verb) {
      case "get":
        return json(await api.get(resource, r.namespace, r.name!), 200);
      case "list":
        return this.list(api, resource, r);
      case "create":
        if (r.subresource === "eviction") return this.evict(api, r, actor);
        if (r.name) throw methodNotAllowed();
        return json(await api.create(resource, this.creatable(resource, r), { fieldManager: actor }), 201);
      case "patch":
        return this.patch(api, resource, r, actor);
      case "delete":
        return this.delete(api, resource, r, actor);
      case "watch":
        throw badRequest("the simulated API server does not serve watches");
      default:
        throw methodNotAllowed();
    }
  }

  private async failure(f: Failure, request: string, signal?: AbortSignal): Promise<Response> {
    if ("hang" in f) {
      await new Promise<void>((resolve) => {
        if (!signal) return resolve();
        if (signal.aborted) return resolve();
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
      return errorResponse(serverTimeout(request));
    }
    if ("body" in f) return json(f.body, f.code, f.headers);
    switch (f.code) {
      case 429:
        return errorResponse(tooManyRequests(f.retryAfterSeconds ?? 1, request));
      case 410:
        return errorResponse(continueExpired());
      case 500:
        return errorResponse(internalError(request));
      case 503:
        return errorResponse(serviceUnavailable());
      case 504:
        return errorResponse(serverTimeout(request));
    }
    return errorResponse(internalError(request));
  }

  private async list(api: SimApi, resource: Resource, r: RequestInfo): Promise<Response> {
    if (r.query.has("fieldSelector")) throw badRequest("the simulated API server does not support fieldSelector");
    let all;
    try {
      all = await api.list(resource, r.namespace, { labelSelector: r.query.get("labelSelector") ?? "" });
    } catch (err) {
      if (err instanceof SelectorSyntaxError) throw badRequest(err.message);
      throw err;
    }
    let start = 0;
    const token = r.query.get("continue");
    if (token) {
      let parsed: { start?: unknown; rv?: unknown };
      try {
        parsed = JSON.parse(atob(token)) as typeof parsed;
      } catch {
        throw badRequest(`continue key is not valid: ${token}`);
      }
      if (typeof parsed.start !== "number" || typeof parsed.rv !== "string")
        throw badRequest(`continue key is not valid: ${token}`);
      if (Number(parsed.rv) < this.continueFloor) throw continueExpired();
      start = parsed.start;
    }
    const limit = Number(r.query.get("limit") ?? "0");
    const end = limit > 0 ? Math.min(all.items.length, start + limit) : all.items.length;
    const metadata: Json = { resourceVersion: all.metadata.resourceVersion };
    if (end < all.items.length) {
      metadata.continue = encodeContinue(end, all.metadata.resourceVersion);
      metadata.remainingItemCount = all.items.length - end;
    }
    const info = RESOURCES[resource];
    // List items carry no apiVersion/kind: the list does.
    const items = all.items.slice(start, end).map(({ apiVersion: _a, kind: _k, ...item }) => item);
    return json(
      { kind: `${info.kind}List`, apiVersion: info.group ? `${info.group}/${r.version}` : r.version, metadata, items },
      200,
    );
  }

  /** A create body checked as the API server does before storing it. */
  private creatable(resource: Resource, r: RequestInfo): Json {
    const info = RESOURCES[resource];
    if (!isObject(r.body)) throw badRequest("the request body must be a JSON object");
    const o = structuredClone(r.body);
    if (o.kind !== info.kind)
      throw badRequest(`the kind in the data (${String(o.kind)}) does not match the expected kind (${info.kind})`);
    if (!isObject(o.metadata)) throw badRequest("metadata is required");
    const m = o.metadata;
    if (info.namespaced) {
      if (m.namespace !== undefined && m.namespace !== r.namespace) {
        throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
      }
      m.namespace = r.namespace;
    }
    const errors: FieldError[] = [];
    const name = typeof m.name === "string" ? m.name : undefined;
    const generateName = typeof m.generateName === "string" ? m.generateName : undefined;
    if (!name && !generateName)
      errors.push({ type: "Required", field: "metadata.name", detail: "name or generateName is required" });
    else if (name && !validSubdomain(name))
      errors.push({ type: "Invalid", field: "metadata.name", value: name, detail: DNS1123_SUBDOMAIN });
    if (errors.length) throw invalid(info, name ?? "", errors);
    return o;
  }

  private async patch(api: SimApi, resource: Resource, r: RequestInfo, actor: string): Promise<Response> {
    if (r.contentType === APPLY) {
      if (!r.query.get("fieldManager")) throw fieldManagerRequired();
      const applied = r.body;
      if (!isObject(applied) || !isObject(applied.metadata))
        throw badRequest("the apply patch must be an object with metadata");
      if (resource !== "persistentvolumeclaims")
        throw badRequest(`the simulated API server applies PersistentVolumeClaims only, not ${resource}`);
      if (applied.metadata.name !== r.name)
        throw badRequest(
          `the name of the object (${String(applied.metadata.name)}) does not match the name on the URL (${r.name})`,
        );
      if (applied.metadata.namespace !== undefined && applied.metadata.namespace !== r.namespace) {
        throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
      }
      const manifest = { ...applied, metadata: { ...applied.metadata, namespace: r.namespace } };
      return json(await api.applyClaim(manifest, { fieldManager: actor, force: r.query.get("force") === "true" }), 200);
    }
    if (r.contentType === MERGE) {
      if (!isObject(r.body)) throw badRequest("a merge patch must be a JSON object");
      return json(await api.mergePatch(resource, r.namespace, r.name!, r.body, { fieldManager: actor }), 200);
    }
    throw unsupportedMediaType();
  }

  /** `POST .../pods/<name>/eviction` with a policy/v1 (or v1beta1) Eviction. */
  private async evict(api: SimApi, r: RequestInfo, actor: string): Promise<Response> {
    const e = r.body;
    if (!isObject(e)) throw badRequest("the request body must be a JSON object");
    if (e.kind !== "Eviction" || !EVICTION_VERSIONS.has(String(e.apiVersion))) {
      throw badRequest(
        `the body of an eviction must be a policy/v1 (or policy/v1beta1) Eviction, not ${String(e.apiVersion)} ${String(e.kind)}`,
      );
    }
    const m = isObject(e.metadata) ? e.metadata : {};
    if (m.name !== undefined && m.name !== "" && m.name !== r.name)
      throw badRequest("name in URL does not match name in Eviction object");
    if (m.namespace !== undefined && m.namespace !== "" && m.namespace !== r.namespace) {
      throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
    }
    if (e.deleteOptions !== undefined && e.deleteOptions !== null && !isObject(e.deleteOptions))
      throw badRequest("deleteOptions must be an object");
    const status = await api.evict(r.namespace!, r.name!, e, { fieldManager: actor });
    return json(status, Number(status.code) || 201);
  }

  private async delete(api: SimApi, resource: Resource, r: RequestInfo, actor: string): Promise<Response> {
    const options = isObject(r.body) ? r.body : {};
    const pre = isObject(options.preconditions) ? options.preconditions : {};
    if (r.body !== undefined && (!isObject(r.body) || (r.body.kind !== undefined && r.body.kind !== "DeleteOptions"))) {
      throw badRequest(
        `the body of a DELETE must be a DeleteOptions, not ${isObject(r.body) ? String(r.body.kind) : typeof r.body}`,
      );
    }
    const policy = String(options.propagationPolicy ?? r.query.get("propagationPolicy") ?? "Background");
    if (!["Orphan", "Background", "Foreground"].includes(policy))
      throw badRequest(`propagationPolicy ${policy} is not supported: use Orphan, Background or Foreground`);
    const { object, gone } = await api.deleteObject(resource, r.namespace, r.name!, {
      fieldManager: actor,
      preconditions: {
        ...(typeof pre.uid === "string" ? { uid: pre.uid } : {}),
        ...(typeof pre.resourceVersion === "string" ? { resourceVersion: pre.resourceVersion } : {}),
      },
      propagationPolicy: policy as "Orphan" | "Background" | "Foreground",
    });
    // An object that stays (finalizers: orphan, foregroundDeletion, pvc-protection) is answered
    // as it now stands; one that went at once, with a Status naming it.
    if (!gone) return json(object, 200);
    const info = RESOURCES[resource];
    const uid = (object.metadata as Json).uid;
    return json(
      {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Success",
        details: { name: r.name, ...(info.group ? { group: info.group } : {}), kind: resource, uid },
      },
      200,
    );
  }
}
