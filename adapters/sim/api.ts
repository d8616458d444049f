// The simulated API server's request surface: get, list (label selectors), create, server-side
// apply of PVCs, JSON merge patch, delete with preconditions, events. It answers like the real
// one (fixtures/apiserver/): resourceVersion on every write, 409 on stale preconditions and field
// manager conflicts, 422 validation, 403 admission. Faults are injected per request when a
// FaultInjector is attached. Every request is recorded in the store's audit log.

import type { LabelSelector, PersistentVolumeClaim, StorageClass } from "../../core/kube/index.js";
import { type ApiError, apiErrorFrom } from "../api-error.js";
import { encodeLabelSelector, matchesLabels, parseLabelSelector } from "../kube/label-selector.js";
import {
  claimGrowthRefusal,
  PVC_RESOURCE,
  type StorageQuota,
  validateClaimUpdate,
  validateSetVolumes,
  validationError,
} from "./apiserver-checks.js";
import type { VirtualClock } from "./clock.js";
import { budgetsOf, isPodReady, setDisruptionAllowedCondition } from "./controllers/disruption.js";
import { defaultRetentionPolicy, defaultStatefulSet } from "./defaults.js";
import {
  alreadyExists,
  applyConflict,
  evictionBlocked,
  evictionBudgetNotObserved,
  evictionManyBudgets,
  evictionSucceeded,
  type FieldError,
  invalid,
  type ManagerRef,
  notFound,
  resourceVersionPreconditionFailed,
  staleResourceVersion,
  uidPreconditionFailed,
} from "./errors.js";
import type { FaultInjector } from "./faults.js";
import type { SpecProfile } from "./spec-diff.js";
import { GENERATION, type Json, RESOURCES, type Resource, type Store } from "./store.js";

export interface ApiContext {
  store: Store;
  clock: VirtualClock;
  /** Which API server is simulated: v1.24 (as the fixtures) or one serving VolumeAttributesClass. */
  profile: SpecProfile;
  /** RecoverVolumeExpansionFailure (Kubernetes ≥ 1.34): a request may be lowered to above status.capacity. */
  expansionRecovery?: boolean;
}

export interface ApplyOptions {
  fieldManager: string;
  /** `force=true`: take ownership of conflicting fields instead of failing with 409. */
  force?: boolean;
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: "Orphan" | "Background" | "Foreground";
}

const meta = (o: Json) =>
  o.metadata as Json & {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    uid?: string;
    labels?: Record<string, string>;
  };
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** RFC 7386 JSON merge patch. */
export function mergePatchJson(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Json = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatchJson(out[k], v);
  }
  return out;
}

/** The RFC 7386 merge patch that turns `from` into `to` (removed keys as null, arrays replaced whole). */
export function mergePatchFor(from: unknown, to: unknown): unknown {
  if (!isObject(from) || !isObject(to)) return structuredClone(to);
  const patch: Json = {};
  for (const k of Object.keys(from)) if (!(k in to)) patch[k] = null;
  for (const [k, v] of Object.entries(to)) {
    if (JSON.stringify(from[k]) === JSON.stringify(v)) continue;
    patch[k] = k in from && isObject(from[k]) && isObject(v) ? mergePatchFor(from[k], v) : structuredClone(v);
  }
  return patch;
}

const resourceNotServed = (r: Resource, request: string) =>
  apiErrorFrom(
    404,
    {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "the server could not find the requested resource",
      reason: "NotFound",
      details: {},
      code: 404,
    },
    { request: `${request} (${r})` },
  );

/** events.k8s.io/v1 validation: `note` is at most 1 kB. */
export const EVENT_NOTE_LIMIT = 1024;

export const PVC_PROTECTION = "kubernetes.io/pvc-protection";

/** The refusal of a StatefulSet spec edit: v1.34 (sts-vct-update-1.34.txt) also names ordinals and revisionHistoryLimit. */
const STS_FORBIDDEN: Record<SpecProfile, string> = {
  "v1.24":
    "updates to statefulset spec for fields other than 'replicas', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
  vac: "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
};

const STS_MUTABLE = new Set([
  "replicas",
  "template",
  "updateStrategy",
  "persistentVolumeClaimRetentionPolicy",
  "minReadySeconds",
  "ordinals",
  "revisionHistoryLimit",
]);

export class SimApi {
  constructor(
    private readonly ctx: ApiContext,
    private readonly faults?: FaultInjector,
  ) {}

  private get store(): Store {
    return this.ctx.store;
  }

  private served(r: Resource): boolean {
    return r !== "volumeattributesclasses" || this.ctx.profile === "vac";
  }

  /** Run one request through fault injection. */
  private async request<T>(describe: string, write: boolean, run: () => T): Promise<T> {
    const fault = this.faults?.roll(write);
    if (fault && fault !== "timeoutAfterCommit") throw this.faults!.errorFor(fault, describe);
    const result = run();
    if (fault === "timeoutAfterCommit") throw this.faults!.errorFor(fault, describe);
    return result;
  }

  /** Record a refused request (with the object as it stood, for claims and sets) and throw. */
  private refuse(
    error: ApiError,
    entry: {
      actor: string;
      verb: "apply" | "patch" | "delete" | "create";
      resource: Resource;
      namespace?: string;
      name: string;
      subresource?: string;
      body?: Json;
    },
  ): never {
    const live =
      entry.resource === "persistentvolumeclaims" || entry.resource === "statefulsets"
        ? this.store.peek(entry.resource, entry.namespace, entry.name)
        : undefined;
    this.store.record({ ...entry, outcome: error.code, ...(live ? { before: structuredClone(live) } : {}) });
    throw error;
  }

  /**
   * An object as this server shows it. A server without RecoverVolumeExpansionFailure (older than
   * 1.34, or the gate off) drops a claim's status.allocatedResources and allocatedResourceStatuses
   * (the controllers, which keep them in the store, still track the resize by them).
   */
  view(r: Resource, obj: Json): Json {
    const view = this.store.view(r, obj);
    if (r !== "persistentvolumeclaims" || this.ctx.expansionRecovery !== false) return view;
    const status = view.status as Json | undefined;
    if (!status || (status.allocatedResources === undefined && status.allocatedResourceStatuses === undefined))
      return view;
    const { allocatedResources: _r, allocatedResourceStatuses: _s, ...rest } = status;
    return { ...view, status: rest };
  }

  async get(r: Resource, namespace: string | undefined, name: string): Promise<Json> {
    return this.request(`GET ${r} ${namespace ?? ""}/${name}`, false, () => {
      if (!this.served(r)) throw resourceNotServed(r, "GET");
      const obj = this.store.peek(r, namespace, name);
      if (!obj) throw notFound(RESOURCES[r], name);
      return this.view(r, obj);
    });
  }

  async list(
    r: Resource,
    namespace?: string,
    opts: { labelSelector?: LabelSelector | string } = {},
  ): Promise<{ metadata: { resourceVersion: string }; items: Json[] }> {
    return this.request(`LIST ${r} ${namespace ?? "(all)"}`, false, () => {
      if (!this.served(r)) throw resourceNotServed(r, "LIST");
      // An object selector is sent the way the real client encodes it, then parsed as the server does.
      const selector = opts.labelSelector;
      const requirements =
        selector === undefined
          ? []
          : parseLabelSelector(typeof selector === "string" ? selector : encodeLabelSelector(selector));
      const items = this.store
        .all(r, RESOURCES[r].namespaced ? namespace : undefined)
        .filter((o) => matchesLabels(requirements, meta(o).labels))
        .sort((a, b) => (meta(a).name < meta(b).name ? -1 : 1))
        .map((o) => this.view(r, o));
      const rv = String(Math.max(100, ...items.map((i) => Number(meta(i).resourceVersion))));
      return { metadata: { resourceVersion: rv }, items };
    });
  }

  async create(r: Resource, obj: Json, opts: { fieldManager: string }): Promise<Json> {
    const m = meta(obj);
    return this.request(`POST ${r} ${m.namespace ?? ""}/${m.name ?? m.generateName}`, true, () => {
      if (!this.served(r)) throw resourceNotServed(r, "POST");
      const name = m.name;
      if (name && this.store.peek(r, m.namespace ?? "default", name)) {
        this.refuse(alreadyExists(RESOURCES[r], name), {
          actor: opts.fieldManager,
          verb: "create",
          resource: r,
          ...(m.namespace ? { namespace: m.namespace } : {}),
          name,
        });
      }
      if (r === "events") this.validateEvent(obj, opts.fieldManager);
      if (r === "statefulsets" || r === "poddisruptionbudgets") {
        // PrepareForCreate: the status is the controllers' to write, whatever the request carried
        // (a StatefulSet's zero status shows its non-omitempty fields: sts-create-recreated.txt).
        obj = structuredClone(obj);
        delete obj.status;
        if (r === "statefulsets") {
          defaultStatefulSet(obj, { maxUnavailable: this.ctx.profile === "vac" });
          defaultRetentionPolicy(obj);
          obj.status = { replicas: 0, availableReplicas: 0 };
          const volumeErrors = validateSetVolumes(obj);
          if (volumeErrors.length)
            this.refuse(invalid(RESOURCES.statefulsets, name ?? "", volumeErrors), {
              actor: opts.fieldManager,
              verb: "create",
              resource: r,
              ...(m.namespace ? { namespace: m.namespace } : {}),
              name: name ?? "",
            });
        }
        if (r === "poddisruptionbudgets") this.validateBudget(obj, opts.fieldManager);
      }
      if (r === "persistentvolumeclaims") {
        const errors = this.claimCreationErrors(obj as unknown as PersistentVolumeClaim);
        if (errors.length)
          this.refuse(invalid(PVC_RESOURCE, name ?? "", errors), {
            actor: opts.fieldManager,
            verb: "create",
            resource: r,
            name: name ?? "",
          });
      }
      const manager: ManagerRef = {
        manager: opts.fieldManager,
        operation: "Update",
        apiVersion: RESOURCES[r].apiVersion,
      };
      const stored = this.store.insert(r, obj, manager, opts.fieldManager, "create", structuredClone(obj));
      return this.view(r, stored);
    });
  }

  /** `POST` an events.k8s.io/v1 Event (validated like the real one: generateName, eventTime, 1 kB note). */
  async createEvent(event: Json, opts: { fieldManager: string }): Promise<Json> {
    return this.create("events", event, opts);
  }

  private validateEvent(obj: Json, actor: string): void {
    const m = meta(obj) as Json & { generateName?: string };
    const errors: FieldError[] = [];
    const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
    // A generateName is checked as a name prefix: one trailing dash is allowed.
    if (m.generateName && !subdomain.test(m.generateName.replace(/-$/, "a"))) {
      errors.push({
        type: "Invalid",
        field: "metadata.generateName",
        value: m.generateName,
        detail:
          "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      });
    }
    if (!obj.eventTime) errors.push({ type: "Required", field: "eventTime" });
    if (typeof obj.note === "string" && new TextEncoder().encode(obj.note).length > EVENT_NOTE_LIMIT) {
      errors.push({ type: "TooLong", field: "note", limit: EVENT_NOTE_LIMIT });
    }
    if (errors.length) {
      // The API server names the object (generateName + suffix) before it validates it.
      const shownName = (m.name as string | undefined) ?? this.store.generateName(String(m.generateName ?? ""));
      this.refuse(invalid({ plural: "events", group: "", kind: "Event" }, shownName, errors), {
        actor,
        verb: "create",
        resource: "events",
        name: shownName,
      });
    }
  }

  private claimCreationErrors(pvc: PersistentVolumeClaim): FieldError[] {
    const errors: FieldError[] = [];
    if (!pvc.spec?.accessModes?.length)
      errors.push({ type: "Required", field: "spec.accessModes", detail: "at least 1 access mode is required" });
    if (pvc.spec?.resources?.requests?.storage === undefined)
      errors.push({ type: "Required", field: "spec.resources[storage]" });
    return errors;
  }

  private claimContext(namespace: string) {
    const storageClasses = new Map<string, StorageClass>(
      this.store.all("storageclasses").map((c) => [meta(c).name, c as unknown as StorageClass]),
    );
    const quotas: StorageQuota[] = this.store
      .all("resourcequotas", namespace)
      .filter((q) => ((q.spec as Json | undefined)?.hard as Json | undefined)?.["requests.storage"] !== undefined)
      .map((q) => ({
        name: meta(q).name,
        namespace,
        hard: String(((q.spec as Json).hard as Json)["requests.storage"]),
      }));
    const namespaceClaims = this.store.all("persistentvolumeclaims", namespace) as unknown as PersistentVolumeClaim[];
    return { storageClasses, quotas, namespaceClaims };
  }

  /** Validation then admission of a changed PVC; throws the API server's refusal. */
  private checkClaimUpdate(old: Json, next: Json, entry: Parameters<SimApi["refuse"]>[1]): void {
    const oldPvc = old as unknown as PersistentVolumeClaim;
    const nextPvc = next as unknown as PersistentVolumeClaim;
    const errors = validateClaimUpdate(oldPvc, nextPvc, this.ctx.profile, this.ctx.expansionRecovery === true);
    if (errors.length) this.refuse(validationError(meta(old).name, errors), entry);
    const refused = claimGrowthRefusal(oldPvc, nextPvc, this.claimContext(meta(old).namespace ?? "default"));
    if (refused) this.refuse(refused, entry);
  }

  /**
   * Server-side apply of a (partial) PVC manifest: `PATCH ...?fieldManager=<m>&force=<f>` with
   * `application/apply-patch+yaml`. Fields the manager sent before and omits now are removed
   * unless another manager owns them; a non-forced apply over another manager's field with a
   * different value is a 409 FieldManagerConflict; `metadata.resourceVersion`, when sent, is a
   * precondition (409 when stale). The result is validated and admitted like any update. A
   * missing claim is created from the manifest (and refused unless it is a complete claim).
   * This is how GitOps adapters "merge" a change into the simulated cluster.
   */
  async applyClaim(manifest: Json, opts: ApplyOptions): Promise<Json> {
    const m = meta(manifest);
    const namespace = m.namespace ?? "default";
    const r: Resource = "persistentvolumeclaims";
    const entry = {
      actor: opts.fieldManager,
      verb: "apply" as const,
      resource: r,
      namespace,
      name: m.name,
      body: structuredClone(manifest),
    };
    return this.request(`APPLY persistentvolumeclaims ${namespace}/${m.name}`, true, () => {
      if (manifest.kind !== "PersistentVolumeClaim" || (manifest.apiVersion ?? "v1") !== "v1") {
        this.refuse(
          apiErrorFrom(400, {
            kind: "Status",
            apiVersion: "v1",
            metadata: {},
            status: "Failure",
            message: `the apply configuration for ${m.name} must be apiVersion: v1, kind: PersistentVolumeClaim`,
            reason: "BadRequest",
            code: 400,
          }),
          entry,
        );
      }
      const manager: ManagerRef = { manager: opts.fieldManager, operation: "Apply", apiVersion: "v1" };
      const live = this.store.peek(r, namespace, m.name);
      const config = structuredClone(manifest);
      delete config.apiVersion;
      delete config.kind;
      if (!live) {
        const errors = this.claimCreationErrors(manifest as unknown as PersistentVolumeClaim);
        if (errors.length) this.refuse(invalid(PVC_RESOURCE, m.name, errors), entry);
        const created = structuredClone(config);
        delete (created.metadata as Json).resourceVersion;
        delete (created.metadata as Json).uid;
        const stored = this.store.insert(
          r,
          { ...created, metadata: { ...(created.metadata as Json), namespace } },
          manager,
          opts.fieldManager,
          "apply",
          entry.body,
        );
        return this.view(r, stored);
      }
      const owners = this.store.owners(r, namespace, m.name)!.clone();
      const now = this.ctx.clock.stamp();
      const configForMerge = structuredClone(config);
      const cm = configForMerge.metadata as Json;
      const wantedVersion = cm.resourceVersion as string | undefined;
      delete cm.resourceVersion;
      const { merged, conflicts } = owners.apply(manager, live, configForMerge, opts.force === true, now);
      if (conflicts.length) this.refuse(applyConflict(conflicts), entry);
      if (wantedVersion !== undefined && wantedVersion !== meta(live).resourceVersion)
        this.refuse(staleResourceVersion(PVC_RESOURCE, m.name), entry);
      this.checkClaimUpdate(live, merged, entry);
      const stored = this.store.replace(r, merged, { manager, owners }, opts.fieldManager, "apply", entry.body);
      return this.view(r, stored);
    });
  }

  /** `PATCH` with `application/merge-patch+json`; `metadata.resourceVersion` in the patch is a precondition. */
  async mergePatch(
    r: Resource,
    namespace: string | undefined,
    name: string,
    patch: Json,
    opts: { fieldManager: string; dryRun?: boolean },
  ): Promise<Json> {
    const entry = {
      actor: opts.fieldManager,
      verb: "patch" as const,
      resource: r,
      ...(namespace ? { namespace } : {}),
      name,
      body: structuredClone(patch),
    };
    return this.request(`PATCH ${r} ${namespace ?? ""}/${name}`, true, () => {
      if (!this.served(r)) throw resourceNotServed(r, "PATCH");
      const live = this.store.peek(r, namespace, name);
      if (!live) this.refuse(notFound(RESOURCES[r], name), entry);
      const wanted = isObject(patch.metadata) ? (patch.metadata.resourceVersion as string | undefined) : undefined;
      if (wanted !== undefined && wanted !== meta(live!).resourceVersion)
        this.refuse(staleResourceVersion(RESOURCES[r], name), entry);
      const next = mergePatchJson(structuredClone(live), patch) as Json;
      delete (next.metadata as Json).resourceVersion;
      if (r === "statefulsets" || r === "poddisruptionbudgets") {
        // The main resource ignores status (it is written through the status subresource).
        if (live!.status === undefined) delete next.status;
        else next.status = structuredClone(live!.status);
      }
      if (r === "statefulsets") defaultStatefulSet(next, { maxUnavailable: this.ctx.profile === "vac" });
      if (r === "poddisruptionbudgets") this.validateBudget(next, opts.fieldManager);
      if (r === "statefulsets") this.checkSetUpdate(live!, next, entry);
      if (r === "events") this.checkEventUpdate(live!, next, entry);
      if (r === "persistentvolumeclaims") this.checkClaimUpdate(live!, next, entry);
      if (
        JSON.stringify(next) === JSON.stringify({ ...live, metadata: { ...meta(live!), resourceVersion: undefined } })
      ) {
        return this.view(r, live!);
      }
      // `?dryRun=All`: validated and answered as it would be stored, nothing written.
      if (opts.dryRun)
        return {
          apiVersion: RESOURCES[r].apiVersion,
          kind: RESOURCES[r].kind,
          ...structuredClone(next),
          metadata: { ...(next.metadata as Json), resourceVersion: meta(live!).resourceVersion },
        };
      const manager: ManagerRef = {
        manager: opts.fieldManager,
        operation: "Update",
        apiVersion: RESOURCES[r].apiVersion,
      };
      const stored = this.store.replace(r, next, { manager }, opts.fieldManager, "patch", entry.body);
      return this.view(r, stored);
    });
  }

  /** As ValidateEventUpdate: a series of at least 2 with its time; what the event is about never changes. */
  private checkEventUpdate(old: Json, next: Json, entry: Parameters<SimApi["refuse"]>[1]): void {
    const errors: FieldError[] = [];
    const series = next.series as Json | undefined;
    if (isObject(series)) {
      const count = series.count;
      if (!(typeof count === "number" && count >= 2))
        errors.push({
          type: "Invalid",
          field: "series.count",
          value: String(count ?? 0),
          detail: "should be at least 2",
          raw: true,
        });
      if (!series.lastObservedTime) errors.push({ type: "Required", field: "series.lastObservedTime" });
    }
    for (const f of ["eventTime", "reportingController", "action", "reason", "type", "regarding", "related", "note"]) {
      if (JSON.stringify(old[f] ?? null) !== JSON.stringify(next[f] ?? null)) {
        errors.push({
          type: "Invalid",
          field: f,
          value: JSON.stringify(next[f] ?? null),
          detail: "field is immutable",
          raw: true,
        });
      }
    }
    if (errors.length)
      this.refuse(invalid({ plural: "events", group: "", kind: "Event" }, meta(old).name, errors), entry);
  }

  private checkSetUpdate(old: Json, next: Json, entry: Parameters<SimApi["refuse"]>[1]): void {
    const a = (old.spec ?? {}) as Json;
    const b = (next.spec ?? {}) as Json;
    const changed = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter(
      (k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]),
    );
    // ValidateStatefulSetUpdate: the new spec's own errors (mounts naming no volume), then the forbidden change.
    const errors = validateSetVolumes(next);
    if (changed.some((k) => !STS_MUTABLE.has(k)))
      errors.push({ type: "Forbidden", field: "spec", detail: STS_FORBIDDEN[this.ctx.profile] });
    if (errors.length) this.refuse(invalid(RESOURCES.statefulsets, meta(old).name, errors), entry);
  }

  /** A claim protected by kubernetes.io/pvc-protection that a pod of its namespace mounts. */
  private inUse(pvc: Json): boolean {
    if (!((meta(pvc).finalizers as string[] | undefined) ?? []).includes(PVC_PROTECTION)) return false;
    return this.store
      .all("pods", meta(pvc).namespace)
      .some((p) =>
        (((p.spec as Json | undefined)?.volumes as Json[] | undefined) ?? []).some(
          (v) => (v.persistentVolumeClaim as Json | undefined)?.claimName === meta(pvc).name,
        ),
      );
  }

  /** A PodDisruptionBudget's spec as ValidatePodDisruptionBudgetSpec checks it (the parts the simulation reads). */
  private validateBudget(pdb: Json, actor: string): void {
    const spec = (pdb.spec as Json | undefined) ?? {};
    const errors: FieldError[] = [];
    if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) {
      errors.push({
        type: "Invalid",
        field: "spec",
        value: JSON.stringify(spec),
        detail: "minAvailable and maxUnavailable cannot be both set",
        raw: true,
      });
    }
    for (const f of ["minAvailable", "maxUnavailable"] as const) {
      const v = spec[f];
      if (v === undefined) continue;
      const ok =
        (typeof v === "number" && Number.isInteger(v) && v >= 0) ||
        (typeof v === "string" && /^\d+%$/.test(v) && Number(v.slice(0, -1)) <= 100);
      if (!ok)
        errors.push({
          type: "Invalid",
          field: `spec.${f}`,
          value: JSON.stringify(v),
          detail: "must be a non-negative integer or a percentage between 0% and 100%",
          raw: true,
        });
    }
    if (errors.length)
      this.refuse(invalid(RESOURCES.poddisruptionbudgets, meta(pdb).name, errors), {
        actor,
        verb: "create",
        resource: "poddisruptionbudgets",
        ...(meta(pdb).namespace ? { namespace: meta(pdb).namespace! } : {}),
        name: meta(pdb).name,
      });
  }

  /**
   * `POST pods/<name>/eviction` (policy/v1 or v1beta1 Eviction), as eviction.go: a pod that is
   * Pending, finished or being deleted is deleted at once; else the budgets selecting the pod are
   * found (more than one: a Status with code 500); a pod that is not Ready is deleted without
   * charging its budget when the budget is healthy (IfHealthyBudget) or says AlwaysAllow; else a
   * budget not yet observed at its generation, or allowing no disruption, answers 429; else it is
   * charged FIRST (disruptionsAllowed − 1, disruptedPods[pod] = now, through its status) and THEN
   * the pod is deleted under the request's deleteOptions preconditions (409 on a uid mismatch,
   * with the budget left charged). Returns the Status to answer (code 201 on success).
   */
  async evict(namespace: string, name: string, eviction: Json, opts: { fieldManager: string }): Promise<Json> {
    const entry = {
      actor: opts.fieldManager,
      verb: "create" as const,
      resource: "pods" as const,
      namespace,
      name,
      subresource: "eviction",
      body: structuredClone(eviction),
    };
    return this.request(`POST pods/eviction ${namespace}/${name}`, true, () => {
      const pod = this.store.peek("pods", namespace, name);
      if (!pod) this.refuse(notFound(RESOURCES.pods, name), entry);
      const deleteOptions = isObject(eviction.deleteOptions) ? eviction.deleteOptions : {};
      const pre = isObject(deleteOptions.preconditions) ? deleteOptions.preconditions : {};
      const remove = (): Json => {
        if (typeof pre.uid === "string" && pre.uid !== meta(pod!).uid)
          this.refuse(uidPreconditionFailed(RESOURCES.pods, name, pre.uid, meta(pod!).uid!), entry);
        if (typeof pre.resourceVersion === "string" && pre.resourceVersion !== meta(pod!).resourceVersion) {
          this.refuse(
            resourceVersionPreconditionFailed(RESOURCES.pods, name, pre.resourceVersion, meta(pod!).resourceVersion!),
            entry,
          );
        }
        this.store.record({ ...entry, outcome: "ok" });
        this.store.remove("pods", namespace, name, opts.fieldManager, "eviction");
        return evictionSucceeded();
      };
      const phase = (pod!.status as Json | undefined)?.phase;
      // canIgnorePDB: the pod disrupts nothing (not started, finished, or already going).
      if (phase === "Pending" || phase === "Succeeded" || phase === "Failed" || meta(pod!).deletionTimestamp)
        return remove();
      const budgets = budgetsOf(this.store, pod!);
      if (budgets.length > 1) {
        this.store.record({ ...entry, outcome: 500 });
        return evictionManyBudgets();
      }
      const pdb = budgets[0];
      if (!pdb) return remove();
      const spec = (pdb.spec as Json | undefined) ?? {};
      const status = (pdb.status as Json | undefined) ?? {};
      if (!isPodReady(pod!)) {
        // Deleting an unready pod disrupts nothing the budget protects: not charged.
        if (spec.unhealthyPodEvictionPolicy === "AlwaysAllow") return remove();
        if (
          Number(status.currentHealthy ?? 0) >= Number(status.desiredHealthy ?? 0) &&
          Number(status.desiredHealthy ?? 0) > 0
        )
          return remove();
      }
      // checkAndDecrement
      if (Number(status.observedGeneration ?? 0) < Number(meta(pdb).generation ?? 1))
        this.refuse(evictionBudgetNotObserved(meta(pdb).name), entry);
      if (Number(status.disruptionsAllowed ?? 0) <= 0) {
        this.refuse(
          evictionBlocked(meta(pdb).name, Number(status.desiredHealthy ?? 0), Number(status.currentHealthy ?? 0)),
          entry,
        );
      }
      const charged = structuredClone(pdb);
      const next = charged.status as Json;
      next.disruptionsAllowed = Number(next.disruptionsAllowed) - 1;
      if (next.disruptionsAllowed === 0) setDisruptionAllowedCondition(next, this.ctx.clock.stamp());
      next.disruptedPods = { ...((next.disruptedPods as Json | undefined) ?? {}), [name]: this.ctx.clock.stamp() };
      this.store.replace(
        "poddisruptionbudgets",
        charged,
        { manager: { manager: "kube-apiserver", operation: "Update", apiVersion: "v1", subresource: "status" } },
        opts.fieldManager,
        "status",
      );
      return remove();
    });
  }

  /**
   * `DELETE` with optional uid/resourceVersion preconditions, as the API server's registry does
   * it (BeforeDelete, then deletion with finalizers):
   * - preconditions first (409, also for an object already being deleted);
   * - an object already being deleted (deletionTimestamp) is answered again, unchanged;
   * - a claim a pod mounts (kubernetes.io/pvc-protection) only gets a deletionTimestamp;
   * - propagationPolicy Orphan or Foreground: the object gets a deletionTimestamp,
   *   deletionGracePeriodSeconds 0 and the finalizer `orphan` or `foregroundDeletion`, a new
   *   resourceVersion and no new field owner (sts-delete-orphan-precond.txt), and stays until the
   *   garbage collector has orphaned (or deleted) its dependents; so does an object with other
   *   finalizers;
   * - Background (the default): the object goes at once; the garbage collector deletes its
   *   dependents later (the pods and ControllerRevisions of a set, and the claims of a set with
   *   `whenDeleted: Delete`).
   * Returns the object as it stands, or as it was when it went (`gone`).
   */
  async deleteObject(
    r: Resource,
    namespace: string | undefined,
    name: string,
    opts: { fieldManager: string } & DeleteOptions,
  ): Promise<{ object: Json; gone: boolean }> {
    const entry = {
      actor: opts.fieldManager,
      verb: "delete" as const,
      resource: r,
      ...(namespace ? { namespace } : {}),
      name,
    };
    return this.request(`DELETE ${r} ${namespace ?? ""}/${name}`, true, () => {
      if (!this.served(r)) throw resourceNotServed(r, "DELETE");
      const live = this.store.peek(r, namespace, name);
      if (!live) this.refuse(notFound(RESOURCES[r], name), entry);
      const { uid, resourceVersion } = opts.preconditions ?? {};
      if (uid !== undefined && uid !== meta(live!).uid)
        this.refuse(uidPreconditionFailed(RESOURCES[r], name, uid, meta(live!).uid!), entry);
      if (resourceVersion !== undefined && resourceVersion !== meta(live!).resourceVersion) {
        this.refuse(
          resourceVersionPreconditionFailed(RESOURCES[r], name, resourceVersion, meta(live!).resourceVersion!),
          entry,
        );
      }
      if (meta(live!).deletionTimestamp) {
        this.store.record({ ...entry, outcome: "ok" });
        return { object: this.view(r, live!), gone: false };
      }
      const finalizers = ((meta(live!).finalizers as string[] | undefined) ?? []).filter(
        (f) => !(r === "persistentvolumeclaims" && f === PVC_PROTECTION && !this.inUse(live!)),
      );
      const policy = opts.propagationPolicy ?? "Background";
      if (policy === "Orphan" && !finalizers.includes("orphan")) finalizers.push("orphan");
      if (policy === "Foreground" && !finalizers.includes("foregroundDeletion")) finalizers.push("foregroundDeletion");
      if (finalizers.length) {
        const marked = structuredClone(live!);
        const m = marked.metadata as Json;
        m.deletionTimestamp = this.ctx.clock.stamp();
        m.deletionGracePeriodSeconds = 0;
        m.finalizers = finalizers;
        const owners = this.store.owners(r, namespace, name)!.clone();
        // v1.34: setting deletionTimestamp raises a kept generation (the orphan delete answers it; v1.24's kept it: sts-delete-orphan-precond.txt).
        const bumpGeneration = GENERATION.has(r) && this.ctx.profile === "vac";
        const stored = this.store.replace(
          r,
          marked,
          { manager: { manager: opts.fieldManager, operation: "Update", apiVersion: "v1" }, owners, bumpGeneration },
          opts.fieldManager,
          "delete",
        );
        return { object: this.view(r, stored), gone: false };
      }
      const last = structuredClone(this.view(r, live!)) as Json;
      this.store.remove(r, namespace, name, opts.fieldManager);
      const m = last.metadata as Json;
      m.deletionTimestamp = this.ctx.clock.stamp();
      m.deletionGracePeriodSeconds = 0;
      return { object: last, gone: true };
    });
  }

  /** `DELETE`: the object as `deleteObject` answers it. */
  async delete(
    r: Resource,
    namespace: string | undefined,
    name: string,
    opts: { fieldManager: string } & DeleteOptions,
  ): Promise<Json> {
    return (await this.deleteObject(r, namespace, name, opts)).object;
  }
}
