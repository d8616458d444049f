// A stateful fake kube-apiserver for msw: it stores objects and answers GET, LIST (label
// selectors, limit/continue), PATCH (server-side apply, merge patch), POST and DELETE with the
// bodies and codes of a real API server (fixtures/), checks a bearer token and RBAC rules, and
// counts requests by verb and resource. See README.md beside this file.
import { http, type RequestHandler } from "msw";
import { parse as parseYaml } from "yaml";
import { formatBytes, toBytes } from "../../core/quantity.js";
import { matchesLabels, parseLabelSelector, SelectorSyntaxError } from "../../adapters/kube/label-selector.js";
import * as S from "./status.js";
import type { ResourceType, StatusBody, StatusCause } from "./status.js";

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** RBAC verbs the fake tells apart. */
export type Verb = "get" | "list" | "watch" | "create" | "patch" | "update" | "delete" | "deletecollection";

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** A request as the fake understood it (also what hooks and the request log see). */
export interface RequestInfo {
  method: string;
  verb: Verb;
  group: string;
  version: string;
  resource: string;
  namespace?: string;
  name?: string;
  query: URLSearchParams;
  contentType: string;
  /** Parsed JSON (or YAML, for apply) body, when there is one. */
  body?: unknown;
  headers: Headers;
}

/** Which requests a fault or hook applies to: `"patch persistentvolumeclaims"`, `"list *"`, `"* pods"`, or a predicate. */
export type Match = string | ((r: RequestInfo) => boolean);

/** An injected failure, answered with the API server's own body for that code. */
export type Failure =
  | { code: 429; retryAfterSeconds?: number }
  | { code: 410 | 500 | 503 | 504 }
  | { code: number; body: unknown; headers?: Record<string, string> }
  /** No answer until the client gives up (its AbortSignal), then a 504. */
  | { hang: true };

export interface FakeApiServerOptions {
  /** Origin (and optional path prefix) the client talks to, e.g. `https://kube.test:6443`. */
  baseUrl: string;
  objects?: KubeObject[];
  /** When set, every request must carry `Authorization: Bearer <token>` (else 401). */
  token?: string;
  /** User named in RBAC refusals. */
  user?: string;
  /** RBAC allow-list; absent = everything is allowed (then narrow it with `deny`). */
  rules?: PolicyRule[];
  /** storage.k8s.io versions serving VolumeAttributesClasses; default ["v1"] (Kubernetes 1.34+), [] before 1.31. */
  volumeAttributesClassVersions?: ("v1" | "v1beta1")[];
  /** Clock for creationTimestamp and friends. */
  now?: () => Date;
}

export interface Counters {
  /** `"<verb> <resource>"` → requests, e.g. `"list pods": 1`. */
  byRequest: Record<string, number>;
  /** get + list. */
  reads: number;
  /** create, patch, update, delete. */
  writes: number;
  total: number;
}

export interface FakeApiServer {
  /** msw handlers: `setupServer(...fake.handlers)`. */
  readonly handlers: RequestHandler[];
  /** Answer one request (for serving the fake over a real socket, e.g. to workerd). */
  handle(request: Request): Promise<Response>;
  /** Create or replace objects (each write bumps resourceVersion). */
  seed(...objects: KubeObject[]): void;
  get(resource: string, namespace: string | undefined, name: string): KubeObject | undefined;
  list(resource: string, namespace?: string): KubeObject[];
  /** Change a stored object as a controller would (bumps resourceVersion). */
  update(resource: string, namespace: string | undefined, name: string, change: (o: KubeObject) => void): KubeObject;
  remove(resource: string, namespace: string | undefined, name: string): void;
  /** Events stored, oldest first. */
  events(namespace?: string): KubeObject[];
  /** The resizer: every Bound claim whose request exceeds its capacity gets capacity = request (and its VAC). */
  completeResizes(): string[];
  counters(): Counters;
  /** Requests seen since the last reset, in order. */
  requests(): RequestInfo[];
  resetCounters(): void;
  /** Forget objects, counters, faults, hooks and denials. */
  reset(): void;
  /** Answer the next `times` matching requests with a failure instead. */
  failNext(match: Match, failure: Failure, times?: number): void;
  /** Run `hook` just before the next matching request is handled (e.g. a racing writer). */
  beforeNext(match: Match, hook: (r: RequestInfo) => unknown): void;
  /** Refuse a verb on a resource as RBAC would (403 naming both). */
  deny(verb: Verb, resource: string): void;
}

interface ServedType extends ResourceType {
  versions: string[];
}

const ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
const MAX_NOTE_BYTES = 1024;

const clone = <T>(v: T): T => structuredClone(v);
const isObject = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

const json = (body: unknown, status: number, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });

const fail = (s: StatusBody, headers: Record<string, string> = {}) => json(s, s.code, headers);

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const validSubdomain = (s: string) => s.length <= 253 && DNS_SUBDOMAIN.test(s);

// Fields of a PVC whose field managers the fake tracks, for server-side apply.
type Field = string; // ".spec.resources.requests.storage", ".metadata.labels.app", …
const STORAGE = ".spec.resources.requests.storage";
const VAC = ".spec.volumeAttributesClassName";

function trackedFields(o: any): Map<Field, unknown> {
  const out = new Map<Field, unknown>();
  const storage = o?.spec?.resources?.requests?.storage;
  if (storage !== undefined) out.set(STORAGE, storage);
  if (o?.spec?.volumeAttributesClassName != null) out.set(VAC, o.spec.volumeAttributesClassName);
  for (const [k, v] of Object.entries(o?.metadata?.labels ?? {})) out.set(`.metadata.labels.${k}`, v);
  for (const [k, v] of Object.entries(o?.metadata?.annotations ?? {})) out.set(`.metadata.annotations.${k}`, v);
  return out;
}

function readField(o: any, f: Field): unknown {
  if (f === STORAGE) return o?.spec?.resources?.requests?.storage;
  if (f === VAC) return o?.spec?.volumeAttributesClassName ?? undefined;
  const [, , map, ...rest] = f.split(".");
  return o?.metadata?.[map!]?.[rest.join(".")];
}

function writeField(o: any, f: Field, v: unknown): void {
  if (f === STORAGE) {
    o.spec ??= {};
    o.spec.resources ??= {};
    o.spec.resources.requests ??= {};
    if (v === undefined) delete o.spec.resources.requests.storage;
    else o.spec.resources.requests.storage = v;
    return;
  }
  if (f === VAC) {
    if (v === undefined) delete o.spec?.volumeAttributesClassName;
    else (o.spec ??= {}).volumeAttributesClassName = v;
    return;
  }
  const [, , map, ...rest] = f.split(".");
  const key = rest.join(".");
  if (v === undefined) {
    if (o.metadata[map!]) delete o.metadata[map!][key];
  } else (o.metadata[map!] ??= {})[key] = v;
}

/** Owners of tracked fields from an object's managedFields (kube-controller-manager when there are none). */
function ownersFromManagedFields(o: any): Map<Field, Set<string>> {
  const owners = new Map<Field, Set<string>>();
  const add = (f: Field, m: string) => (owners.get(f) ?? owners.set(f, new Set()).get(f)!).add(m);
  const entries: any[] = Array.isArray(o.metadata.managedFields) ? o.metadata.managedFields : [];
  for (const e of entries) {
    if (e.subresource) continue;
    const f = e.fieldsV1 ?? {};
    if (f["f:spec"]?.["f:resources"]?.["f:requests"]?.["f:storage"]) add(STORAGE, e.manager);
    if (f["f:spec"]?.["f:volumeAttributesClassName"]) add(VAC, e.manager);
    for (const map of ["labels", "annotations"]) {
      for (const k of Object.keys(f["f:metadata"]?.[`f:${map}`] ?? {})) if (k.startsWith("f:")) add(`.metadata.${map}.${k.slice(2)}`, e.manager);
    }
  }
  for (const f of trackedFields(o).keys()) if (!owners.has(f)) add(f, "kube-controller-manager");
  return owners;
}

const GO_FIELD: Record<string, string> = {
  accessModes: "AccessModes",
  selector: "Selector",
  resources: "Resources",
  volumeName: "VolumeName",
  storageClassName: "StorageClassName",
  volumeMode: "VolumeMode",
  dataSource: "DataSource",
  dataSourceRef: "DataSourceRef",
  volumeAttributesClassName: "VolumeAttributesClassName",
};

/** The spec diff under "spec is immutable" (the API server prints a Go diff; this keeps its shape, not its exact words). */
function specDiff(before: any, after: any): string {
  const lines = ["  core.PersistentVolumeClaimSpec{"];
  for (const k of new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])) {
    const a = JSON.stringify(before?.[k] ?? null);
    const b = JSON.stringify(after?.[k] ?? null);
    if (a !== b) lines.push(`- \t${GO_FIELD[k] ?? k}: ${a},`, `+ \t${GO_FIELD[k] ?? k}: ${b},`);
  }
  return `${lines.join("\n")}\n  }\n`;
}

const withoutMutable = (spec: any) => {
  const s = clone(spec ?? {});
  if (s.resources) delete s.resources.requests;
  delete s.volumeAttributesClassName;
  return s;
};

const sameJSON = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function createFakeApiServer(opts: FakeApiServerOptions): FakeApiServer {
  const base = new URL(opts.baseUrl);
  const prefix = base.pathname.replace(/\/+$/, "");
  const user = opts.user ?? "system:serviceaccount:claimstep:claimstep";
  const now = opts.now ?? (() => new Date());
  const types: ServedType[] = [
    { resource: "statefulsets", group: "apps", kind: "StatefulSet", namespaced: true, invalidGroup: "apps", versions: ["v1"] },
    { resource: "pods", group: "", kind: "Pod", namespaced: true, invalidGroup: "", versions: ["v1"] },
    { resource: "persistentvolumeclaims", group: "", kind: "PersistentVolumeClaim", namespaced: true, invalidGroup: "", versions: ["v1"] },
    { resource: "resourcequotas", group: "", kind: "ResourceQuota", namespaced: true, invalidGroup: "", versions: ["v1"] },
    { resource: "storageclasses", group: "storage.k8s.io", kind: "StorageClass", namespaced: false, invalidGroup: "storage.k8s.io", versions: ["v1"] },
    {
      resource: "volumeattributesclasses",
      group: "storage.k8s.io",
      kind: "VolumeAttributesClass",
      namespaced: false,
      invalidGroup: "storage.k8s.io",
      versions: opts.volumeAttributesClassVersions ?? ["v1"],
    },
    // events.k8s.io Events validate as core Events: their Invalid messages carry no group.
    { resource: "events", group: "events.k8s.io", kind: "Event", namespaced: true, invalidGroup: "", versions: ["v1"] },
    { resource: "leases", group: "coordination.k8s.io", kind: "Lease", namespaced: true, invalidGroup: "coordination.k8s.io", versions: ["v1"] },
  ];
  const typeOf = (resource: string): ServedType => {
    const t = types.find((x) => x.resource === resource);
    if (!t) throw new Error(`the fake API server does not store ${resource}`);
    return t;
  };
  const typeOfKind = (kind: string | undefined): ServedType => {
    const t = types.find((x) => x.kind === kind);
    if (!t) throw new Error(`the fake API server does not store kind ${kind}`);
    return t;
  };

  let store = new Map<string, Map<string, KubeObject>>(); // resource → "ns/name" → object
  let owners = new Map<string, Map<Field, Set<string>>>(); // PVC "ns/name" → field → managers
  let rv = 1000;
  let serial = 0;
  let log: RequestInfo[] = [];
  let faults: { match: Match; failure: Failure; left: number }[] = [];
  let hooks: { match: Match; hook: (r: RequestInfo) => unknown }[] = [];
  let denied = new Set<string>();

  const keyOf = (ns: string | undefined, name: string) => `${ns ?? ""}/${name}`;
  const bucket = (resource: string) => store.get(resource) ?? store.set(resource, new Map()).get(resource)!;
  const nextRv = () => String(++rv);
  const uid = () => `00000000-0000-4000-8000-${(++serial).toString(16).padStart(12, "0")}`;
  const suffix = () => {
    let n = ++serial * 2654435761;
    let s = "";
    for (let i = 0; i < 5; i++) {
      s += ALPHABET[n % ALPHABET.length];
      n = Math.floor(n / ALPHABET.length) + 7;
    }
    return s;
  };
  const timestamp = () => now().toISOString().replace(/\.\d{3}Z$/, "Z");

  function put(resource: string, o: KubeObject): KubeObject {
    o.metadata.resourceVersion = nextRv();
    bucket(resource).set(keyOf(o.metadata.namespace, o.metadata.name), o);
    return o;
  }

  function seedOne(input: KubeObject): void {
    const t = typeOfKind(input.kind);
    const o = clone(input);
    o.apiVersion ??= t.group ? `${t.group}/${t.versions[0]}` : "v1";
    if (t.namespaced) o.metadata.namespace ??= "default";
    o.metadata.uid ??= uid();
    o.metadata.creationTimestamp ??= timestamp();
    if (t.resource === "persistentvolumeclaims") owners.set(keyOf(o.metadata.namespace, o.metadata.name), ownersFromManagedFields(o));
    // A seeded resourceVersion is kept (GET answers the fixture as captured); later writes go above it.
    const given = Number(o.metadata.resourceVersion);
    if (o.metadata.resourceVersion !== undefined && Number.isInteger(given)) {
      rv = Math.max(rv, given);
      bucket(t.resource).set(keyOf(o.metadata.namespace, o.metadata.name), o);
    } else put(t.resource, o);
  }

  const matchOf = (m: Match, r: RequestInfo): boolean => {
    if (typeof m === "function") return m(r);
    const [verb = "*", resource = "*"] = m.trim().split(/\s+/);
    return (verb === "*" || verb === r.verb) && (resource === "*" || resource === r.resource);
  };

  const allowed = (r: RequestInfo): boolean => {
    if (denied.has(`${r.verb} ${r.resource}`)) return false;
    if (!opts.rules) return true;
    return opts.rules.some(
      (rule) =>
        (rule.apiGroups.includes("*") || rule.apiGroups.includes(r.group)) &&
        (rule.resources.includes("*") || rule.resources.includes(r.resource)) &&
        (rule.verbs.includes("*") || rule.verbs.includes(r.verb)),
    );
  };

  function failureResponse(f: Failure): Response | undefined {
    if ("hang" in f) return undefined;
    if ("body" in f) return json(f.body, f.code, f.headers);
    switch (f.code) {
      case 429: {
        const after = f.retryAfterSeconds ?? 1;
        return fail(S.tooManyRequests(after), { "Retry-After": String(after) });
      }
      case 410:
        return fail(S.continueExpired());
      case 500:
        return fail(S.internalError());
      case 503:
        return fail(S.serviceUnavailable());
      case 504:
        return fail(S.serverTimeout());
    }
  }

  // ---- validation and admission ------------------------------------------------------------

  function validatePvcUpdate(t: ServedType, before: any, after: any): StatusBody | undefined {
    const name = after.metadata.name;
    const oldStorage = before.spec?.resources?.requests?.storage;
    const newStorage = after.spec?.resources?.requests?.storage;
    if (newStorage === undefined) {
      return S.invalid(t, name, [{ reason: "FieldValueRequired", message: "Required value", field: "spec.resources[storage]" }]);
    }
    const oldBytes = toBytes(oldStorage ?? "0");
    const newBytes = toBytes(newStorage);
    if (!sameJSON(withoutMutable(before.spec), withoutMutable(after.spec)) || (oldBytes !== newBytes && before.status?.phase !== "Bound")) {
      return S.invalid(t, name, [{ reason: "FieldValueForbidden", message: `${S.SPEC_IMMUTABLE}\n${specDiff(before.spec, after.spec)}`, field: "spec" }]);
    }
    // Kubernetes 1.34+: a class may be cleared only while none has taken effect.
    if (before.spec?.volumeAttributesClassName && !after.spec?.volumeAttributesClassName && before.status?.currentVolumeAttributesClassName) {
      return S.invalid(t, name, [
        { reason: "FieldValueForbidden", message: "Forbidden: update to nil is forbidden when status.currentVolumeAttributesClassName is not nil", field: "spec.volumeAttributesClassName" },
      ]);
    }
    if (newBytes < oldBytes) {
      return S.invalid(t, name, [{ reason: "FieldValueForbidden", message: S.SHRINK_FORBIDDEN, field: "spec.resources.requests.storage" }]);
    }
    if (newBytes > oldBytes) {
      // PersistentVolumeClaimResize admission.
      const className = after.metadata.annotations?.["volume.beta.kubernetes.io/storage-class"] ?? after.spec.storageClassName;
      const sc: any = className ? bucket("storageclasses").get(keyOf(undefined, className)) : undefined;
      if (sc?.allowVolumeExpansion !== true) return S.forbiddenByAdmission(t, name, S.RESIZE_NOT_ALLOWED);
      // ResourceQuota admission (requests.storage).
      const ns = after.metadata.namespace;
      for (const q of bucket("resourcequotas").values()) {
        const hard = (q as any).spec?.hard?.["requests.storage"];
        if (q.metadata.namespace !== ns || hard === undefined) continue;
        let used = 0n;
        for (const c of bucket("persistentvolumeclaims").values()) {
          if (c.metadata.namespace === ns) used += toBytes((c as any).spec?.resources?.requests?.storage ?? "0");
        }
        const delta = newBytes - oldBytes;
        if (used + delta > toBytes(hard)) {
          return S.forbiddenByAdmission(
            t,
            name,
            `exceeded quota: ${q.metadata.name}, requested: requests.storage=${formatBytes(delta)}, used: requests.storage=${formatBytes(used)}, limited: requests.storage=${hard}`,
          );
        }
      }
    }
    return undefined;
  }

  function validateStatefulSetUpdate(t: ServedType, before: any, after: any): StatusBody | undefined {
    const mutable = ["replicas", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy", "minReadySeconds", "ordinals"];
    const strip = (spec: any) => Object.fromEntries(Object.entries(spec ?? {}).filter(([k]) => !mutable.includes(k)));
    if (!sameJSON(strip(before.spec), strip(after.spec))) {
      return S.invalid(t, after.metadata.name, [{ reason: "FieldValueForbidden", message: S.STS_SPEC_FORBIDDEN, field: "spec" }]);
    }
    return undefined;
  }

  function eventCauses(e: any, namespace: string | undefined): StatusCause[] {
    const causes: StatusCause[] = [];
    const required = (field: string) => causes.push({ reason: "FieldValueRequired", message: "Required value", field });
    if (!e.eventTime) required("eventTime");
    for (const f of ["reportingController", "reportingInstance", "action", "reason"]) if (!e[f]) required(f);
    if (e.type !== "Normal" && e.type !== "Warning") {
      causes.push({ reason: "FieldValueNotSupported", message: `Unsupported value: ${JSON.stringify(e.type ?? "")}: supported values: "Normal", "Warning"`, field: "type" });
    }
    if (typeof e.note === "string" && new TextEncoder().encode(e.note).length > MAX_NOTE_BYTES) {
      causes.push({ reason: "FieldValueTooLong", message: `Too long: may not be more than ${MAX_NOTE_BYTES} bytes`, field: "note" });
    }
    if (e.regarding?.namespace && e.regarding.namespace !== namespace) {
      causes.push({ reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(e.regarding.namespace)}: does not match event.namespace`, field: "regarding.namespace" });
    }
    if (e.series) {
      if (!(e.series.count >= 2)) causes.push({ reason: "FieldValueInvalid", message: `Invalid value: ${e.series.count ?? 0}: should be at least 2`, field: "series.count" });
      if (!e.series.lastObservedTime) required("series.lastObservedTime");
    }
    return causes;
  }

  function validateEventUpdate(t: ServedType, before: any, after: any): StatusBody | undefined {
    const causes = eventCauses(after, after.metadata.namespace);
    // As ValidateEventUpdate: reportingInstance may change (another replica saw it), the series too.
    for (const f of ["eventTime", "reportingController", "action", "reason", "type", "regarding", "related", "note"]) {
      if (!sameJSON(before[f], after[f])) {
        causes.push({ reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(after[f] ?? null)}: field is immutable`, field: f });
      }
    }
    return causes.length ? S.invalid(t, after.metadata.name, causes) : undefined;
  }

  const validateUpdate = (t: ServedType, before: any, after: any): StatusBody | undefined =>
    t.resource === "persistentvolumeclaims"
      ? validatePvcUpdate(t, before, after)
      : t.resource === "statefulsets"
        ? validateStatefulSetUpdate(t, before, after)
        : t.resource === "events"
          ? validateEventUpdate(t, before, after)
          : undefined;

  // ---- verbs -------------------------------------------------------------------------------

  function doList(t: ServedType, r: RequestInfo): Response {
    if (r.query.get("watch") === "true" || r.query.get("watch") === "1") return fail(S.badRequest("the fake API server does not serve watches"));
    if (r.query.has("fieldSelector")) return fail(S.badRequest("the fake API server does not support fieldSelector"));
    let requirements;
    try {
      requirements = parseLabelSelector(r.query.get("labelSelector") ?? "");
    } catch (err) {
      if (err instanceof SelectorSyntaxError) return fail(S.badRequest(err.message));
      throw err;
    }
    const all = [...bucket(t.resource).values()]
      .filter((o) => r.namespace === undefined || o.metadata.namespace === r.namespace)
      .filter((o) => matchesLabels(requirements, o.metadata.labels as Record<string, string> | undefined))
      .sort((a, b) => (keyOf(a.metadata.namespace, a.metadata.name) < keyOf(b.metadata.namespace, b.metadata.name) ? -1 : 1));
    let start = 0;
    const token = r.query.get("continue");
    if (token) {
      try {
        start = (JSON.parse(atob(token)) as { start: number }).start;
      } catch {
        return fail(S.badRequest(`continue key is not valid: ${token}`));
      }
    }
    const limit = Number(r.query.get("limit") ?? "0");
    const end = limit > 0 ? Math.min(all.length, start + limit) : all.length;
    const items = all.slice(start, end).map((o) => {
      const { apiVersion: _a, kind: _k, ...item } = clone(o);
      return item;
    });
    const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
    if (end < all.length) {
      metadata.continue = btoa(JSON.stringify({ start: end, rv }));
      metadata.remainingItemCount = all.length - end;
    }
    return json({ kind: `${t.kind}List`, apiVersion: t.group ? `${t.group}/${r.version}` : r.version, metadata, items }, 200);
  }

  function doCreate(t: ServedType, r: RequestInfo): Response {
    if (!isObject(r.body)) return fail(S.badRequest("the request body must be a JSON object"));
    const o = clone(r.body) as KubeObject;
    if (o.kind !== t.kind) return fail(S.badRequest(`the kind in the data (${String(o.kind)}) does not match the expected kind (${t.kind})`));
    if (!isObject(o.metadata)) return fail(S.badRequest("metadata is required"));
    if (t.namespaced) {
      if (o.metadata.namespace !== undefined && o.metadata.namespace !== r.namespace) {
        return fail(S.badRequest("the namespace of the provided object does not match the namespace sent on the request"));
      }
      o.metadata.namespace = r.namespace!;
    }
    const causes: StatusCause[] = [];
    const generateName = o.metadata.generateName as string | undefined;
    if (!o.metadata.name && generateName) o.metadata.name = `${generateName}${suffix()}`;
    if (generateName !== undefined && !validSubdomain(generateName.replace(/-$/, "a"))) {
      causes.push({ reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(generateName)}: ${S.DNS1123_SUBDOMAIN}`, field: "metadata.generateName" });
    }
    if (!o.metadata.name) {
      causes.push({ reason: "FieldValueRequired", message: "Required value: name or generateName is required", field: "metadata.name" });
    } else if (generateName === undefined && !validSubdomain(o.metadata.name)) {
      causes.push({ reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(o.metadata.name)}: ${S.DNS1123_SUBDOMAIN}`, field: "metadata.name" });
    }
    if (t.resource === "events") causes.push(...eventCauses(o, r.namespace));
    if (causes.length) return fail(S.invalid(t, o.metadata.name ?? "", causes));
    if (bucket(t.resource).has(keyOf(o.metadata.namespace, o.metadata.name))) return fail(S.alreadyExists(t, o.metadata.name));
    o.apiVersion = t.group ? `${t.group}/${r.version}` : r.version;
    o.metadata.uid = uid();
    o.metadata.creationTimestamp = timestamp();
    return json(put(t.resource, o), 201);
  }

  function doApply(t: ServedType, r: RequestInfo): Response {
    const manager = r.query.get("fieldManager");
    if (!manager) {
      return fail(
        S.failure(422, "Invalid", 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch', {
          group: "meta.k8s.io",
          kind: "PatchOptions",
          causes: [{ reason: "FieldValueRequired", message: "Required value: is required for apply patch", field: "fieldManager" }],
        }),
      );
    }
    const force = r.query.get("force") === "true";
    const applied = r.body as any;
    if (!isObject(applied) || !isObject(applied.metadata)) return fail(S.badRequest("the apply patch must be an object with metadata"));
    const wantVersion = t.group ? `${t.group}/${r.version}` : r.version;
    if (applied.apiVersion !== wantVersion || applied.kind !== t.kind) {
      return fail(S.badRequest(`the apply patch must set apiVersion ${wantVersion} and kind ${t.kind} (got ${applied.apiVersion} ${applied.kind})`));
    }
    if (applied.metadata.name !== r.name) {
      return fail(S.badRequest(`the name of the object (${applied.metadata.name}) does not match the name on the URL (${r.name})`));
    }
    const key = keyOf(r.namespace, r.name!);
    const before = bucket(t.resource).get(key);
    if (!before) {
      if (t.resource === "persistentvolumeclaims" && !applied.spec?.accessModes?.length) {
        return fail(S.invalid(t, r.name!, [{ reason: "FieldValueRequired", message: "Required value: at least 1 access mode is required", field: "spec.accessModes" }]));
      }
      const created = clone(applied) as KubeObject;
      if (t.namespaced) created.metadata.namespace = r.namespace!;
      created.metadata.uid = uid();
      created.metadata.creationTimestamp = timestamp();
      if (t.resource === "persistentvolumeclaims") owners.set(key, new Map([...trackedFields(created).keys()].map((f) => [f, new Set([manager])])));
      return json(put(t.resource, created), 201);
    }
    if (t.resource !== "persistentvolumeclaims") {
      const after = mergePatch(before, applied) as KubeObject;
      return commit(t, before, after);
    }
    // Server-side apply of a PVC, with field ownership for the fields the fake tracks.
    const fieldOwners = owners.get(key) ?? new Map<Field, Set<string>>();
    const wanted = trackedFields(applied);
    const conflicts: { manager: string; field: string }[] = [];
    for (const [f, v] of wanted) {
      const others = [...(fieldOwners.get(f) ?? [])].filter((m) => m !== manager);
      if (others.length && !sameJSON(readField(before, f), v)) conflicts.push({ manager: others[0]!, field: f });
    }
    if (conflicts.length && !force) return fail(S.applyConflict(conflicts));
    // Untracked fields are merged as given (a changed immutable field then fails validation, as it would for real).
    const rest: any = clone(applied);
    delete rest.metadata.labels;
    delete rest.metadata.annotations;
    if (rest.spec) {
      delete rest.spec.volumeAttributesClassName;
      if (rest.spec.resources?.requests) delete rest.spec.resources.requests.storage;
    }
    const after: any = mergePatch(before, rest);
    const nextOwners = new Map([...fieldOwners].map(([f, s]) => [f, new Set(s)]));
    for (const [f, v] of wanted) {
      const set = nextOwners.get(f) ?? nextOwners.set(f, new Set()).get(f)!;
      if (!sameJSON(readField(before, f), v)) set.clear(); // the new value is the applier's alone
      set.add(manager);
      writeField(after, f, v);
    }
    for (const [f, set] of nextOwners) {
      if (wanted.has(f) || !set.has(manager)) continue;
      set.delete(manager); // no longer applied by this manager: released, and removed if nobody else owns it
      if (!set.size) {
        nextOwners.delete(f);
        writeField(after, f, undefined);
      }
    }
    const response = commit(t, before, after);
    if (response.ok) owners.set(key, nextOwners);
    return response;
  }

  function doMergePatch(t: ServedType, r: RequestInfo): Response {
    const before = bucket(t.resource).get(keyOf(r.namespace, r.name!));
    if (!before) return fail(S.notFound(t, r.name!));
    const patch = r.body as any;
    if (!isObject(patch)) return fail(S.badRequest("a merge patch must be a JSON object"));
    const wantRv = patch.metadata?.resourceVersion;
    if (wantRv !== undefined && wantRv !== "" && wantRv !== before.metadata.resourceVersion) return fail(S.modified(t, r.name!));
    const wantUid = patch.metadata?.uid;
    if (wantUid !== undefined && wantUid !== before.metadata.uid) {
      return fail(S.failure(409, "Conflict", `Precondition failed: UID in precondition: ${wantUid}, UID in object meta: ${String(before.metadata.uid)}`, { name: r.name, kind: t.resource }));
    }
    const after = mergePatch(before, patch) as KubeObject;
    after.metadata.resourceVersion = before.metadata.resourceVersion;
    return commit(t, before, after);
  }

  /** Validate, admit and store an update; unchanged objects keep their resourceVersion. */
  function commit(t: ServedType, before: KubeObject, after: KubeObject): Response {
    after.metadata.name = before.metadata.name;
    after.metadata.uid = before.metadata.uid;
    after.metadata.resourceVersion = before.metadata.resourceVersion;
    if (sameJSON(before, after)) return json(before, 200);
    const refusal = validateUpdate(t, before, after);
    if (refusal) return fail(refusal);
    if (t.resource === "statefulsets" && !sameJSON((before as any).spec, (after as any).spec)) {
      after.metadata.generation = Number(before.metadata.generation ?? 1) + 1;
    }
    return json(put(t.resource, after), 200);
  }

  function doDelete(t: ServedType, r: RequestInfo): Response {
    const key = keyOf(r.namespace, r.name!);
    const o = bucket(t.resource).get(key);
    if (!o) return fail(S.notFound(t, r.name!));
    const options: any = isObject(r.body) ? r.body : {};
    const pre = options.preconditions ?? {};
    if (pre.uid !== undefined && pre.uid !== o.metadata.uid) return fail(S.uidMismatch(t, r.name!, pre.uid, String(o.metadata.uid)));
    if (pre.resourceVersion !== undefined && pre.resourceVersion !== o.metadata.resourceVersion) {
      return fail(
        S.failure(
          409,
          "Conflict",
          `Operation cannot be fulfilled on ${t.kind} "${r.name}": the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${o.metadata.resourceVersion}). The object might have been modified`,
          { name: r.name, kind: t.kind },
        ),
      );
    }
    const policy = options.propagationPolicy ?? r.query.get("propagationPolicy") ?? "Background";
    bucket(t.resource).delete(key);
    owners.delete(key);
    if (policy === "Orphan" || policy === "Foreground") {
      // The garbage collector finishes at once: Orphan keeps dependents, Foreground deletes them first.
      if (policy === "Foreground") deleteDependents(String(o.metadata.uid));
      const last = clone(o);
      last.metadata.deletionTimestamp = timestamp();
      last.metadata.deletionGracePeriodSeconds = 0;
      last.metadata.finalizers = [policy === "Orphan" ? "orphan" : "foregroundDeletion"];
      last.metadata.resourceVersion = nextRv();
      return json(last, 200);
    }
    deleteDependents(String(o.metadata.uid));
    return json(
      { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details: { name: r.name, ...(t.group ? { group: t.group } : {}), kind: t.resource, uid: o.metadata.uid } },
      200,
    );
  }

  function deleteDependents(ownerUid: string): void {
    for (const [resource, objects] of store) {
      for (const [key, o] of objects) {
        const refs = (o.metadata.ownerReferences as { uid?: string }[] | undefined) ?? [];
        if (refs.some((ref) => ref.uid === ownerUid)) {
          objects.delete(key);
          if (resource === "persistentvolumeclaims") owners.delete(key);
        }
      }
    }
  }

  // ---- routing -----------------------------------------------------------------------------

  function parseRequest(request: Request, url: URL, body: unknown): RequestInfo | undefined {
    if (!url.pathname.startsWith(prefix)) return undefined;
    const parts = url.pathname.slice(prefix.length).split("/").filter(Boolean).map(decodeURIComponent);
    let group: string;
    let version: string | undefined;
    let rest: string[];
    if (parts[0] === "api") [group, version, rest] = ["", parts[1], parts.slice(2)];
    else if (parts[0] === "apis") [group, version, rest] = [parts[1] ?? "", parts[2], parts.slice(3)];
    else return undefined;
    if (!version) return undefined;
    let namespace: string | undefined;
    if (rest[0] === "namespaces" && rest.length >= 3) [namespace, rest] = [rest[1], rest.slice(2)];
    const [resource, name, sub] = rest;
    if (!resource || sub !== undefined) return undefined;
    const method = request.method.toUpperCase();
    const verb: Verb | undefined =
      method === "GET"
        ? name
          ? "get"
          : r_watch(url)
            ? "watch"
            : "list"
        : method === "POST"
          ? "create"
          : method === "PATCH"
            ? "patch"
            : method === "PUT"
              ? "update"
              : method === "DELETE"
                ? name
                  ? "delete"
                  : "deletecollection"
                : undefined;
    if (!verb) return undefined;
    return {
      method,
      verb,
      group,
      version,
      resource,
      ...(namespace !== undefined ? { namespace } : {}),
      ...(name !== undefined ? { name } : {}),
      query: url.searchParams,
      contentType: (request.headers.get("content-type") ?? "").split(";")[0]!.trim(),
      ...(body !== undefined ? { body } : {}),
      headers: request.headers,
    };
  }
  const r_watch = (url: URL) => url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1";

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const text = ["POST", "PATCH", "PUT", "DELETE"].includes(request.method.toUpperCase()) ? await request.text() : "";
    const contentType = (request.headers.get("content-type") ?? "").split(";")[0]!.trim();
    let body: unknown;
    if (text) {
      try {
        body = contentType === "application/apply-patch+yaml" ? parseYaml(text) : JSON.parse(text);
      } catch (err) {
        return fail(S.badRequest(`the request body is not valid ${contentType === "application/apply-patch+yaml" ? "YAML" : "JSON"}: ${(err as Error).message}`));
      }
    }
    const r = parseRequest(request, url, body);
    if (!r) return fail(S.notServed());
    log.push(r);

    if (opts.token !== undefined && request.headers.get("authorization") !== `Bearer ${opts.token}`) return fail(S.unauthorized());
    const t = types.find((x) => x.resource === r.resource && x.group === r.group);
    const scopeOk = t && t.versions.includes(r.version) && (t.namespaced ? r.namespace !== undefined || r.verb === "list" : r.namespace === undefined);
    if (!allowed(r)) {
      const shape: ResourceType = t ?? { resource: r.resource, group: r.group, kind: r.resource, namespaced: r.namespace !== undefined, invalidGroup: r.group };
      return fail(S.forbiddenByRbac(user, r.verb, shape, r.namespace, r.verb === "create" || r.verb === "list" ? undefined : r.name));
    }
    if (!t || !scopeOk) return fail(S.notServed());

    const hookAt = hooks.findIndex((h) => matchOf(h.match, r));
    if (hookAt >= 0) {
      const [h] = hooks.splice(hookAt, 1);
      await h!.hook(r);
    }
    const fault = faults.find((f) => f.left > 0 && matchOf(f.match, r));
    if (fault) {
      fault.left--;
      faults = faults.filter((f) => f.left > 0);
      const answer = failureResponse(fault.failure);
      if (answer) return answer;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 60_000);
        request.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      return fail(S.serverTimeout());
    }

    switch (r.verb) {
      case "get": {
        const o = bucket(t.resource).get(keyOf(r.namespace, r.name!));
        return o ? json(o, 200) : fail(S.notFound(t, r.name!));
      }
      case "list":
      case "watch":
        return doList(t, r);
      case "create":
        return r.name ? fail(S.methodNotAllowed()) : doCreate(t, r);
      case "patch":
        if (r.contentType === "application/apply-patch+yaml") return doApply(t, r);
        if (r.contentType === "application/merge-patch+json") return doMergePatch(t, r);
        return fail(S.unsupportedMediaType());
      case "delete":
        return doDelete(t, r);
      default:
        return fail(S.methodNotAllowed());
    }
  }

  for (const o of opts.objects ?? []) seedOne(o);

  const fake: FakeApiServer = {
    handlers: [http.all(`${base.origin}${prefix}/*`, ({ request }) => handle(request))],
    handle,
    seed: (...objects) => objects.forEach(seedOne),
    get: (resource, namespace, name) => {
      const o = bucket(typeOf(resource).resource).get(keyOf(namespace, name));
      return o && clone(o);
    },
    list: (resource, namespace) =>
      [...bucket(typeOf(resource).resource).values()].filter((o) => namespace === undefined || o.metadata.namespace === namespace).map(clone),
    update: (resource, namespace, name, change) => {
      const o = bucket(typeOf(resource).resource).get(keyOf(namespace, name));
      if (!o) throw new Error(`fake API server: no ${resource} ${keyOf(namespace, name)}`);
      const next = clone(o);
      change(next);
      return clone(put(resource, next));
    },
    remove: (resource, namespace, name) => {
      bucket(typeOf(resource).resource).delete(keyOf(namespace, name));
      owners.delete(keyOf(namespace, name));
    },
    events: (namespace) =>
      [...bucket("events").values()]
        .filter((e) => namespace === undefined || e.metadata.namespace === namespace)
        .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion))
        .map(clone),
    completeResizes: () => {
      const done: string[] = [];
      for (const c of [...bucket("persistentvolumeclaims").values()] as any[]) {
        if (c.status?.phase !== "Bound") continue;
        const request = c.spec?.resources?.requests?.storage;
        const capacity = c.status?.capacity?.storage;
        const vac = c.spec?.volumeAttributesClassName;
        const grow = request !== undefined && (capacity === undefined || toBytes(request) > toBytes(capacity));
        const modify = vac && c.status?.currentVolumeAttributesClassName !== vac;
        if (!grow && !modify) continue;
        const next = clone(c);
        if (grow) next.status.capacity = { ...(next.status.capacity ?? {}), storage: request };
        if (modify) next.status.currentVolumeAttributesClassName = vac;
        delete next.status.modifyVolumeStatus;
        delete next.status.allocatedResourceStatuses;
        if (next.status.conditions) next.status.conditions = next.status.conditions.filter((x: any) => !/Resiz|ModifyingVolume/.test(x.type));
        put("persistentvolumeclaims", next);
        done.push(c.metadata.name);
      }
      return done;
    },
    counters: () => {
      const byRequest: Record<string, number> = {};
      let reads = 0;
      for (const r of log) {
        const k = `${r.verb} ${r.resource}`;
        byRequest[k] = (byRequest[k] ?? 0) + 1;
        if (r.verb === "get" || r.verb === "list" || r.verb === "watch") reads++;
      }
      return { byRequest, reads, writes: log.length - reads, total: log.length };
    },
    requests: () => [...log],
    resetCounters: () => {
      log = [];
    },
    reset: () => {
      store = new Map();
      owners = new Map();
      log = [];
      faults = [];
      hooks = [];
      denied = new Set();
    },
    failNext: (match, failure, times = 1) => {
      faults.push({ match, failure, left: times });
    },
    beforeNext: (match, hook) => {
      hooks.push({ match, hook });
    },
    deny: (verb, resource) => {
      denied.add(`${verb} ${resource}`);
    },
  };
  return fake;
}
