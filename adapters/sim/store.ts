// The simulated etcd: objects by resource, namespace and name; a global resourceVersion bumped on
// every write; field ownership per object; and an audit log of every request that reached it.

import type { VirtualClock } from "./clock.js";
import type { ManagerRef, ResourceName } from "./errors.js";
import { FieldOwners, type ManagerState } from "./fields.js";
import type { Prng } from "./prng.js";

export type Json = Record<string, unknown>;

export type Resource =
  | "statefulsets"
  | "pods"
  | "persistentvolumeclaims"
  | "storageclasses"
  | "volumeattributesclasses"
  | "resourcequotas"
  | "events"
  | "controllerrevisions"
  | "poddisruptionbudgets"
  | "configmaps"
  | "leases"
  | "mutatingwebhookconfigurations";

export interface ResourceInfo extends ResourceName {
  apiVersion: string;
  namespaced: boolean;
}

export const RESOURCES: Record<Resource, ResourceInfo> = {
  statefulsets: { plural: "statefulsets", group: "apps", kind: "StatefulSet", apiVersion: "apps/v1", namespaced: true },
  pods: { plural: "pods", group: "", kind: "Pod", apiVersion: "v1", namespaced: true },
  persistentvolumeclaims: {
    plural: "persistentvolumeclaims",
    group: "",
    kind: "PersistentVolumeClaim",
    apiVersion: "v1",
    namespaced: true,
  },
  storageclasses: {
    plural: "storageclasses",
    group: "storage.k8s.io",
    kind: "StorageClass",
    apiVersion: "storage.k8s.io/v1",
    namespaced: false,
  },
  volumeattributesclasses: {
    plural: "volumeattributesclasses",
    group: "storage.k8s.io",
    kind: "VolumeAttributesClass",
    apiVersion: "storage.k8s.io/v1",
    namespaced: false,
  },
  resourcequotas: { plural: "resourcequotas", group: "", kind: "ResourceQuota", apiVersion: "v1", namespaced: true },
  events: { plural: "events", group: "events.k8s.io", kind: "Event", apiVersion: "events.k8s.io/v1", namespaced: true },
  controllerrevisions: {
    plural: "controllerrevisions",
    group: "apps",
    kind: "ControllerRevision",
    apiVersion: "apps/v1",
    namespaced: true,
  },
  poddisruptionbudgets: {
    plural: "poddisruptionbudgets",
    group: "policy",
    kind: "PodDisruptionBudget",
    apiVersion: "policy/v1",
    namespaced: true,
  },
  configmaps: { plural: "configmaps", group: "", kind: "ConfigMap", apiVersion: "v1", namespaced: true },
  leases: {
    plural: "leases",
    group: "coordination.k8s.io",
    kind: "Lease",
    apiVersion: "coordination.k8s.io/v1",
    namespaced: true,
  },
  mutatingwebhookconfigurations: {
    plural: "mutatingwebhookconfigurations",
    group: "admissionregistration.k8s.io",
    kind: "MutatingWebhookConfiguration",
    apiVersion: "admissionregistration.k8s.io/v1",
    namespaced: false,
  },
};

/**
 * Resources whose `metadata.generation` the API server keeps: 1 at creation, + 1 on every change
 * of `spec` (the registry strategies' PrepareForUpdate), unchanged by status writes.
 */
export const GENERATION: ReadonlySet<Resource> = new Set(["statefulsets", "poddisruptionbudgets"]);

/** One request that reached the store (or was refused there): what the invariants are checked on. */
export interface AuditEntry {
  seq: number;
  at: string;
  /** fieldManager of the request, or the controller's name. */
  actor: string;
  verb: "create" | "apply" | "patch" | "update" | "status" | "delete";
  resource: Resource;
  namespace?: string;
  name: string;
  /** "ok", or the HTTP code of the refusal. */
  outcome: "ok" | number;
  /** `eviction` for an Eviction request (`create pods/eviction`) and the pod deletion it made. */
  subresource?: string;
  /** The request body (apply configuration or patch), for API requests. */
  body?: Json;
  /** The object before and after, for writes to claims and sets. */
  before?: Json;
  after?: Json;
}

/** The store as the simulation saves it: objects in storage order with their field owners, and the revision. */
export interface StoreState {
  /** The last resourceVersion handed out. */
  revision: number;
  objects: Partial<Record<Resource, { object: Json; owners: ManagerState[] }[]>>;
}

interface Stored {
  obj: Json;
  owners: FieldOwners;
}

const keyOf = (namespace: string | undefined, name: string) => `${namespace ?? ""}/${name}`;
const meta = (obj: Json) => obj.metadata as Json & { name: string; namespace?: string };

function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

const WATCHED: ReadonlySet<Resource> = new Set(["persistentvolumeclaims", "statefulsets"]);

export class Store {
  private readonly data = new Map<Resource, Map<string, Stored>>();
  private readonly views = new WeakMap<Json, Json>();
  private revision = 100;
  readonly audit: AuditEntry[] = [];
  /** Bumped on every write: controllers use it to know whether a pass changed anything. */
  writes = 0;

  constructor(
    private readonly clock: VirtualClock,
    private readonly prng: Prng,
  ) {
    for (const r of Object.keys(RESOURCES) as Resource[]) this.data.set(r, new Map());
  }

  private table(r: Resource): Map<string, Stored> {
    return this.data.get(r)!;
  }

  /** The live object (not a copy: callers must not mutate it). */
  peek(r: Resource, namespace: string | undefined, name: string): Json | undefined {
    return this.table(r).get(keyOf(RESOURCES[r].namespaced ? namespace : undefined, name))?.obj;
  }

  owners(r: Resource, namespace: string | undefined, name: string): FieldOwners | undefined {
    return this.table(r).get(keyOf(RESOURCES[r].namespaced ? namespace : undefined, name))?.owners;
  }

  /** Live objects of a resource, optionally in one namespace (not copies). */
  all(r: Resource, namespace?: string): Json[] {
    const out: Json[] = [];
    for (const s of this.table(r).values())
      if (namespace === undefined || meta(s.obj).namespace === namespace) out.push(s.obj);
    return out;
  }

  /**
   * The object as the API server returns it (with apiVersion, kind and managedFields), deeply
   * frozen: stored objects are replaced, never changed, so one view per stored version is shared
   * by every reader (a caller that wants to edit it copies it first).
   */
  view(r: Resource, obj: Json): Json {
    const cached = this.views.get(obj);
    if (cached) return cached;
    const copy = structuredClone(obj);
    const owners = this.owners(r, meta(obj).namespace, meta(obj).name);
    const managedFields = owners?.render(RESOURCES[r].apiVersion) ?? [];
    const m = copy.metadata as Json;
    if (managedFields.length) m.managedFields = managedFields;
    const view = deepFreeze({ apiVersion: RESOURCES[r].apiVersion, kind: RESOURCES[r].kind, ...copy });
    this.views.set(obj, view);
    return view;
  }

  /** `generateName` plus the random suffix the API server appends. */
  generateName(prefix: string): string {
    return `${prefix}${this.prng.nameSuffix()}`;
  }

  private nextVersion(): string {
    this.revision++;
    return String(this.revision);
  }

  record(entry: Omit<AuditEntry, "seq" | "at">): void {
    this.audit.push({ seq: this.audit.length + 1, at: this.clock.now().toISOString(), ...entry });
  }

  private snapshotFor(r: Resource, obj: Json | undefined): Json | undefined {
    return obj && WATCHED.has(r) ? structuredClone(obj) : undefined;
  }

  /** Insert a new object: uid, resourceVersion, creationTimestamp and a generated name are set here. */
  insert(
    r: Resource,
    obj: Json,
    manager: ManagerRef,
    actor: string,
    verb: AuditEntry["verb"] = "create",
    body?: Json,
  ): Json {
    const m = { ...(obj.metadata as Json) } as Json & { name?: string; namespace?: string; generateName?: string };
    if (!m.name && m.generateName) m.name = this.generateName(m.generateName);
    if (!RESOURCES[r].namespaced) delete m.namespace;
    else m.namespace ??= "default";
    m.uid = this.prng.uuid();
    m.resourceVersion = this.nextVersion();
    m.creationTimestamp = this.clock.stamp();
    if (GENERATION.has(r)) m.generation = 1;
    delete m.managedFields;
    const stored: Json = { ...structuredClone(obj), metadata: m };
    delete stored.apiVersion;
    delete stored.kind;
    const owners = new FieldOwners();
    // A create by apply makes the applier an Apply owner of what it sent; any other create, an Update owner.
    if (manager.operation === "Apply") owners.apply(manager, {}, stored, true, this.clock.stamp());
    else owners.recordUpdate(manager, undefined, stored, this.clock.stamp());
    this.table(r).set(keyOf(m.namespace, m.name!), { obj: stored, owners });
    this.writes++;
    this.record({
      actor,
      verb,
      resource: r,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      name: m.name!,
      outcome: "ok",
      ...(body ? { body } : {}),
      ...(WATCHED.has(r) ? { after: structuredClone(stored) } : {}),
    });
    return stored;
  }

  /**
   * Store an object as it was captured elsewhere (a fixture): its uid, creationTimestamp,
   * resourceVersion and managedFields are kept, and later writes get higher resourceVersions.
   * Replaces an object of the same name. Not an API request: nothing is audited.
   */
  seed(r: Resource, obj: Json): Json {
    const m = { ...(obj.metadata as Json) } as Json & { name: string; namespace?: string };
    if (!RESOURCES[r].namespaced) delete m.namespace;
    else m.namespace ??= "default";
    m.uid ??= this.prng.uuid();
    m.creationTimestamp ??= this.clock.stamp();
    const given = Number(m.resourceVersion);
    if (m.resourceVersion !== undefined && Number.isInteger(given)) this.revision = Math.max(this.revision, given);
    else m.resourceVersion = this.nextVersion();
    const owners = FieldOwners.fromManagedFields(m.managedFields);
    delete m.managedFields;
    const stored: Json = { ...structuredClone(obj), metadata: m };
    delete stored.apiVersion;
    delete stored.kind;
    this.table(r).set(keyOf(m.namespace, m.name), { obj: stored, owners });
    this.writes++;
    return stored;
  }

  /** Every object with its owners, and the revision counter (not the audit log: it only records). */
  state(): StoreState {
    const objects: StoreState["objects"] = {};
    for (const [r, table] of this.data) {
      if (table.size)
        objects[r] = [...table.values()].map((s) => ({ object: structuredClone(s.obj), owners: s.owners.state() }));
    }
    return { revision: this.revision, objects };
  }

  /** Replace every object and the revision counter with a saved state; the audit log starts empty. */
  restore(state: StoreState): void {
    this.clear();
    for (const [r, entries] of Object.entries(state.objects) as [
      Resource,
      { object: Json; owners: ManagerState[] }[],
    ][]) {
      if (!(r in RESOURCES)) throw new Error(`the simulated cluster does not store ${r}`);
      for (const { object, owners } of entries) {
        const m = meta(object);
        this.table(r).set(keyOf(RESOURCES[r].namespaced ? m.namespace : undefined, m.name), {
          obj: structuredClone(object),
          owners: FieldOwners.fromState(owners),
        });
      }
    }
    this.revision = state.revision;
    this.writes++;
  }

  /** Forget every object and the audit log (resourceVersions keep rising). */
  clear(): void {
    for (const table of this.data.values()) table.clear();
    this.audit.length = 0;
  }

  /**
   * Replace an object (a new resourceVersion), recording `manager` as the writer of what changed,
   * or installing `owners` computed by an apply. `bumpGeneration`: a new generation although the
   * spec is unchanged (BeforeDelete setting deletionTimestamp).
   */
  replace(
    r: Resource,
    next: Json,
    how: { manager: ManagerRef; owners?: FieldOwners; bumpGeneration?: boolean },
    actor: string,
    verb: AuditEntry["verb"],
    body?: Json,
  ): Json {
    const m = meta(next);
    const key = keyOf(RESOURCES[r].namespaced ? m.namespace : undefined, m.name);
    const stored = this.table(r).get(key);
    if (!stored) throw new Error(`sim store: ${r} ${key} vanished during a write`);
    const before = stored.obj;
    const obj = structuredClone(next);
    delete obj.apiVersion;
    delete obj.kind;
    const newMeta = obj.metadata as Json;
    const given = newMeta.managedFields;
    delete newMeta.managedFields;
    newMeta.uid = meta(before).uid;
    newMeta.creationTimestamp = meta(before).creationTimestamp;
    newMeta.resourceVersion = this.nextVersion();
    if (GENERATION.has(r)) {
      const generation = Number(meta(before).generation ?? 1);
      newMeta.generation =
        JSON.stringify(before.spec ?? null) === JSON.stringify(obj.spec ?? null) && !how.bumpGeneration
          ? generation
          : generation + 1;
    }
    if (how.owners) stored.owners = how.owners;
    else {
      // A non-apply write that carries managedFields other than the stored ones sets them (the API
      // server decodes the request's list and records the writer's changes on top; an empty or
      // undecodable list keeps the stored ones).
      if (
        Array.isArray(given) &&
        given.some((e) => typeof e === "object" && e !== null && typeof (e as Json).manager === "string") &&
        JSON.stringify(given) !== JSON.stringify(stored.owners.render(RESOURCES[r].apiVersion))
      )
        stored.owners = FieldOwners.fromManagedFields(given);
      stored.owners.recordUpdate(how.manager, before, obj, this.clock.stamp());
    }
    stored.obj = obj;
    this.writes++;
    this.record({
      actor,
      verb,
      resource: r,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      name: m.name,
      outcome: "ok",
      ...(body ? { body } : {}),
      ...(WATCHED.has(r) ? { before: this.snapshotFor(r, before), after: this.snapshotFor(r, obj) } : {}),
    });
    return obj;
  }

  remove(r: Resource, namespace: string | undefined, name: string, actor: string, subresource?: string): void {
    const key = keyOf(RESOURCES[r].namespaced ? namespace : undefined, name);
    const stored = this.table(r).get(key);
    if (!stored) return;
    this.table(r).delete(key);
    this.writes++;
    this.record({
      actor,
      verb: "delete",
      resource: r,
      ...(namespace ? { namespace } : {}),
      name,
      ...(subresource ? { subresource } : {}),
      outcome: "ok",
      ...(WATCHED.has(r) ? { before: structuredClone(stored.obj) } : {}),
    });
  }
}
