// The garbage collector (pkg/controller/garbagecollector) on the simulated store. It acts
// `latencies.gcMs` after it first sees something to do (on the clock's wake-ups):
// - an owner with a deletionTimestamp and the `orphan` finalizer (a DELETE with
//   propagationPolicy Orphan): the ownerReferences naming its uid are removed from its dependents
//   (pods, ControllerRevisions, claims), then the finalizer; the owner goes with its last
//   finalizer (orphanDependents, then removeFinalizer);
// - `foregroundDeletion`: its dependents are deleted first (claims through pvc-protection: a claim a
//   pod still mounts only gets a deletionTimestamp), the finalizer goes once none is left;
// - a dependent none of whose owners exists any more (the owner was deleted in the Background, or
//   re-created with a new uid) is deleted; one with an owner left loses the dangling references
//   (attemptToDeleteItem: solid vs dangling owners).
// An owner "exists" when an object of its kind, namespace and name has its uid; an owner of a
// kind the simulation does not store is taken to exist.
import type { ManagerRef } from "../errors.js";
import { type Json, RESOURCES, type Resource } from "../store.js";
import { type ControllerContext, podsUsing } from "./context.js";

const ACTOR = "garbage-collector";
const PVC_PROTECTION = "kubernetes.io/pvc-protection";
/** What owner references point from (what the simulation's controllers and people own). */
const DEPENDENTS: readonly Resource[] = ["pods", "controllerrevisions", "persistentvolumeclaims"];

/** The GC's pending work, to save the simulation: task key → when it acts (ms since the epoch). */
export interface GarbageCollectorState {
  due: Record<string, number>;
}

interface Meta {
  name: string;
  namespace?: string;
  uid?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  ownerReferences?: Json[];
}
const metaOf = (o: Json) => o.metadata as Json & Meta;
const manager = (r: Resource): ManagerRef => ({
  manager: "kube-controller-manager",
  operation: "Update",
  apiVersion: RESOURCES[r].apiVersion.replace(/^.*\//, ""),
});
const resourceOfKind = (kind: unknown): Resource | undefined =>
  (Object.keys(RESOURCES) as Resource[]).find((r) => RESOURCES[r].kind === kind);

export class GarbageCollector {
  private due = new Map<string, number>();

  constructor(private readonly ctx: ControllerContext) {}

  state(): GarbageCollectorState {
    return { due: Object.fromEntries(this.due) };
  }

  restore(state: GarbageCollectorState | undefined): void {
    this.due = new Map(Object.entries(state?.due ?? {}));
    for (const at of this.due.values()) this.ctx.clock.wakeAt(at);
  }

  clear(): void {
    this.due.clear();
  }

  /** True when the task is due now; else it is scheduled (once) gcMs from the first sight. */
  private ready(key: string, seen: Set<string>): boolean {
    seen.add(key);
    let at = this.due.get(key);
    if (at === undefined) {
      at = this.ctx.clock.nowMs() + this.ctx.latencies.gcMs;
      this.due.set(key, at);
    }
    if (at <= this.ctx.clock.nowMs()) {
      this.due.delete(key);
      return true;
    }
    this.ctx.clock.wakeAt(at);
    return false;
  }

  sync(): void {
    const seen = new Set<string>();
    const store = this.ctx.store;
    // Owners being deleted with a GC finalizer.
    for (const r of Object.keys(RESOURCES) as Resource[]) {
      for (const owner of store.all(r)) {
        const m = metaOf(owner);
        if (!m.deletionTimestamp || !m.uid) continue;
        const finalizers = m.finalizers ?? [];
        if (finalizers.includes("orphan")) {
          if (!this.ready(`orphan:${m.uid}`, seen)) continue;
          for (const { resource, object } of this.dependentsOf(m.uid, m.namespace))
            this.dropReferences(resource, object, (ref) => ref.uid === m.uid);
          this.removeFinalizer(r, owner, "orphan");
        } else if (finalizers.includes("foregroundDeletion")) {
          const dependents = this.dependentsOf(m.uid, m.namespace);
          if (dependents.length === 0) {
            seen.add(`foreground:${m.uid}`);
            this.removeFinalizer(r, owner, "foregroundDeletion");
            continue;
          }
          if (!this.ready(`foreground:${m.uid}`, seen)) continue;
          for (const { resource, object } of dependents) this.deleteObject(resource, object);
          // Kept due: the finalizer goes on a later pass, once the dependents are gone.
          this.due.set(`foreground:${m.uid}`, this.ctx.clock.nowMs());
        }
      }
    }
    // Dependents whose owners are gone.
    for (const r of DEPENDENTS) {
      for (const object of store.all(r)) {
        const m = metaOf(object);
        const refs = m.ownerReferences ?? [];
        if (!refs.length || !m.uid) continue;
        const dangling = refs.filter((ref) => !this.ownerExists(ref, m.namespace));
        if (!dangling.length) continue;
        if (!this.ready(`dangling:${m.uid}`, seen)) continue;
        if (dangling.length === refs.length) {
          if (!m.deletionTimestamp) this.deleteObject(r, object);
        } else {
          this.dropReferences(r, object, (ref) => dangling.includes(ref));
        }
      }
    }
    for (const key of [...this.due.keys()]) if (!seen.has(key)) this.due.delete(key);
  }

  private ownerExists(ref: Json, namespace: string | undefined): boolean {
    const r = resourceOfKind(ref.kind);
    if (!r) return true;
    const owner = this.ctx.store.peek(r, namespace, String(ref.name));
    return owner !== undefined && metaOf(owner).uid === ref.uid;
  }

  private dependentsOf(uid: string, namespace: string | undefined): { resource: Resource; object: Json }[] {
    return DEPENDENTS.flatMap((resource) =>
      this.ctx.store
        .all(resource, namespace)
        .filter((o) => (metaOf(o).ownerReferences ?? []).some((ref) => ref.uid === uid))
        .map((object) => ({ resource, object })),
    );
  }

  private dropReferences(r: Resource, object: Json, drop: (ref: Json) => boolean): void {
    const next = structuredClone(object);
    const m = next.metadata as Json & Meta;
    const kept = (m.ownerReferences ?? []).filter((ref) => !drop(ref));
    if (kept.length) m.ownerReferences = kept;
    else delete m.ownerReferences;
    this.ctx.store.replace(r, next, { manager: manager(r) }, ACTOR, "update");
  }

  /** The owner's finalizer removed; with its last finalizer the API server deletes it. */
  private removeFinalizer(r: Resource, owner: Json, finalizer: string): void {
    const m = metaOf(owner);
    const left = (m.finalizers ?? []).filter((f) => f !== finalizer);
    if (!left.length) {
      this.ctx.store.remove(r, m.namespace, m.name, ACTOR);
      return;
    }
    const next = structuredClone(owner);
    (next.metadata as Json).finalizers = left;
    this.ctx.store.replace(
      r,
      next,
      { manager: manager(r), owners: this.ctx.store.owners(r, m.namespace, m.name)!.clone() },
      ACTOR,
      "update",
    );
  }

  /** A background DELETE of a dependent: a claim a pod mounts is only marked (pvc-protection). */
  private deleteObject(r: Resource, object: Json): void {
    const m = metaOf(object);
    if (m.deletionTimestamp) return;
    const protectedClaim =
      r === "persistentvolumeclaims" &&
      (m.finalizers ?? []).includes(PVC_PROTECTION) &&
      podsUsing(this.ctx, object as never).length > 0;
    if (!protectedClaim) {
      this.ctx.store.remove(r, m.namespace, m.name, ACTOR);
      return;
    }
    const next = structuredClone(object);
    (next.metadata as Json).deletionTimestamp = this.ctx.clock.stamp();
    (next.metadata as Json).deletionGracePeriodSeconds = 0;
    this.ctx.store.replace(
      r,
      next,
      { manager: manager(r), owners: this.ctx.store.owners(r, m.namespace, m.name)!.clone() },
      ACTOR,
      "delete",
    );
  }
}
