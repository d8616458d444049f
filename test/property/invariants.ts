// The safety invariants of DESIGN.md, checked from the outside: on the simulated cluster's live
// objects and on the audit log of every request claimstep made. Readiness and scope are computed
// here independently of core/ (only the revision hash and quantity parsing are shared), so a
// planner bug cannot hide behind the same bug in the checker.
import type { ClaimTemplate, PersistentVolumeClaim, StatefulSet } from "../../core/k8s.js";
import { toBytes } from "../../core/quantity.js";
import { revisionOf } from "../../core/revision.js";
import { FIELD_MANAGER, Keys } from "../../core/types.js";
import type { SimCluster } from "../../adapters/sim/cluster.js";
import type { AuditEntry, Json } from "../../adapters/sim/store.js";

export type InvariantId = "I1" | "I2" | "I3" | "I4" | "I5" | "I6" | "I7" | "I8" | "I9" | "rule2" | "rule13" | "crash";

export interface Violation {
  invariant: InvariantId;
  message: string;
}

export interface SetView {
  set: StatefulSet;
  /** Desired templates, or undefined when the annotation is invalid (nothing may be written then). */
  desired: ClaimTemplate[] | undefined;
  revision: string | undefined;
  start: number;
  first: number;
  end: number;
  maxUnavailable: number;
  claims: Map<string, PersistentVolumeClaim>;
}

const bytes = (q: string | undefined | null): bigint => (q === undefined || q === null ? 0n : toBytes(q));

function desiredOf(set: StatefulSet): ClaimTemplate[] | undefined {
  const live = set.spec.volumeClaimTemplates ?? [];
  const raw = set.metadata.annotations?.[Keys.templates];
  if (raw === undefined) return live;
  try {
    const parsed = JSON.parse(raw) as ClaimTemplate[];
    if (!Array.isArray(parsed)) return undefined;
    const names = new Set(live.map((t) => t.metadata.name));
    if (parsed.some((t) => !names.has(t?.metadata?.name))) return undefined;
    parsed.forEach((t) => toBytes(t.spec.resources!.requests!.storage!));
    return parsed;
  } catch {
    return undefined;
  }
}

function maxUnavailableOf(set: StatefulSet): number {
  const raw = set.spec.updateStrategy?.rollingUpdate?.maxUnavailable;
  const replicas = set.spec.replicas ?? 1;
  if (raw === undefined) return 1;
  if (typeof raw === "number") return Math.max(1, raw);
  const pct = /^(\d+)%$/.exec(raw);
  return Math.max(1, pct ? Math.floor((replicas * Number(pct[1])) / 100) : Number(raw));
}

export function viewOf(cluster: SimCluster, ref: { namespace: string; name: string }): SetView {
  const set = cluster.store.peek("statefulsets", ref.namespace, ref.name) as unknown as StatefulSet;
  const desired = desiredOf(set);
  const start = set.spec.ordinals?.start ?? 0;
  const replicas = set.spec.replicas ?? 1;
  const partition = set.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
  // Claims as the API server shows them: what an older server does not report (a failed
  // expansion's allocatedResourceStatuses) no client could know, so the oracle does not either.
  const shown = cluster.store.all("persistentvolumeclaims", ref.namespace).map((c) => cluster.admin.view("persistentvolumeclaims", c) as unknown as PersistentVolumeClaim);
  const claims = new Map(shown.map((c) => [c.metadata.name, c]));
  return {
    set,
    desired,
    revision: desired ? revisionOf(desired) : undefined,
    start,
    first: start + Math.min(partition, replicas),
    end: start + replicas,
    maxUnavailable: maxUnavailableOf(set),
    claims,
  };
}

/** KEP readiness: bound, capacity ≥ min(template, spec), the template's VAC applied. */
export function claimReady(pvc: PersistentVolumeClaim | undefined, t: ClaimTemplate): boolean {
  if (!pvc || pvc.status?.phase !== "Bound") return false;
  const tpl = bytes(t.spec.resources?.requests?.storage);
  const spec = bytes(pvc.spec.resources?.requests?.storage);
  const want = tpl < spec ? tpl : spec;
  if (bytes(pvc.status.capacity?.storage) < want) return false;
  const vac = t.spec.volumeAttributesClassName;
  if (vac && (pvc.status.currentVolumeAttributesClassName !== vac || pvc.status.modifyVolumeStatus)) return false;
  return true;
}

const claimName = (v: SetView, t: ClaimTemplate, o: number) => `${t.metadata.name}-${v.set.metadata.name}-${o}`;

/** A change claimstep made to a claim (at an earlier revision) that the drivers are still carrying out. */
function settling(p: PersistentVolumeClaim): boolean {
  if (p.metadata.labels?.[Keys.revisionLabel] === undefined || p.status?.phase !== "Bound") return false;
  const storage = p.status.allocatedResourceStatuses?.storage;
  if (storage === "ControllerResizeInfeasible" || storage === "NodeResizeInfeasible" || p.status.modifyVolumeStatus?.status === "Infeasible") return false;
  const vac = p.spec.volumeAttributesClassName;
  return (
    bytes(p.status.capacity?.storage) < bytes(p.spec.resources?.requests?.storage) ||
    (vac !== undefined && vac !== null && (p.status.currentVolumeAttributesClassName !== vac || p.status.modifyVolumeStatus !== undefined))
  );
}

/**
 * Ordinals in scope that are in flight: claimstep has started them at the current revision (a
 * claim carries it) and not finished them (a claim is not at the revision yet, or not ready) — a
 * half-updated ordinal is in flight even when the claims written so far are ready — or a change
 * claimstep made at an earlier revision is still being carried out on one of their claims.
 */
export function inFlight(v: SetView): Set<number> {
  const out = new Set<number>();
  if (!v.desired || !v.revision) return out;
  for (let o = v.first; o < v.end; o++) {
    const pvcs = v.desired.map((t) => v.claims.get(claimName(v, t, o)));
    const atRevision = (p: PersistentVolumeClaim | undefined) => p?.metadata.labels?.[Keys.revisionLabel] === v.revision;
    const finished = v.desired.every((t, i) => atRevision(pvcs[i]) && claimReady(pvcs[i], t));
    const started = pvcs.some(atRevision) && !finished;
    if (started || pvcs.some((p) => p !== undefined && !atRevision(p) && settling(p))) out.add(o);
  }
  return out;
}

/** Every in-scope claim is at the revision and ready (what Complete asserts). */
export function completeIsTrue(v: SetView): string | undefined {
  if (!v.desired || !v.revision) return "Complete with invalid desired templates";
  for (let o = v.first; o < v.end; o++) {
    for (const t of v.desired) {
      const name = claimName(v, t, o);
      const pvc = v.claims.get(name);
      if (!pvc) return `Complete but ${name} does not exist`;
      if (pvc.metadata.labels?.[Keys.revisionLabel] !== v.revision) return `Complete but ${name} is at revision ${pvc.metadata.labels?.[Keys.revisionLabel]}, not ${v.revision}`;
      if (bytes(pvc.spec.resources?.requests?.storage) < bytes(t.spec.resources?.requests?.storage)) return `Complete but ${name} requests less than the template`;
      if (!claimReady(pvc, t)) return `Complete but ${name} is not ready`;
    }
  }
  return undefined;
}

const effectiveClass = (p: PersistentVolumeClaim) => p.metadata.annotations?.[Keys.betaStorageClass] ?? p.spec.storageClassName ?? undefined;

function templateOfClaim(v: SetView, claim: string): { t: ClaimTemplate; ordinal: number } | undefined {
  for (const t of v.desired ?? v.set.spec.volumeClaimTemplates ?? []) {
    const prefix = `${t.metadata.name}-${v.set.metadata.name}-`;
    if (claim.startsWith(prefix) && /^\d+$/.test(claim.slice(prefix.length))) return { t, ordinal: Number(claim.slice(prefix.length)) };
  }
  return undefined;
}

const sameJSON = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * I2 as revised by X1–X3: claimstep asked `asked`, less than the claim requested. Only a claim
 * whose expansion failed (allocatedResourceStatuses.storage *Infeasible) may come down, only to
 * the desired template's request, and only strictly above status.capacity.
 */
function checkLowering(v: SetView, name: string, before: PersistentVolumeClaim, asked: string): Violation[] {
  const out: Violation[] = [];
  const spec = before.spec.resources?.requests?.storage;
  const allocation = before.status?.allocatedResourceStatuses?.storage;
  const capacity = before.status?.capacity?.storage;
  const t = templateOfClaim(v, name)?.t;
  const tpl = t?.spec.resources?.requests?.storage;
  if (allocation !== "ControllerResizeInfeasible" && allocation !== "NodeResizeInfeasible") {
    const how = allocation ?? (bytes(capacity) >= bytes(spec) ? "succeeded" : "no failure reported");
    out.push({ invariant: "I2", message: `claimstep lowered ${name} from ${spec} to ${asked} although its expansion has not failed (${how}, capacity ${capacity})` });
  }
  if (bytes(asked) <= bytes(capacity)) out.push({ invariant: "I2", message: `claimstep lowered ${name} from ${spec} to ${asked}, not above its capacity ${capacity}` });
  if (tpl === undefined || bytes(asked) < bytes(tpl)) out.push({ invariant: "I2", message: `claimstep lowered ${name} from ${spec} to ${asked}, below the desired template's ${tpl}` });
  else if (bytes(asked) !== bytes(tpl)) out.push({ invariant: "I2", message: `claimstep lowered ${name} from ${spec} to ${asked}, not to the desired template's ${tpl}` });
  return out;
}

/** I1, I2, I3, I5, rule 2, rule 13 and I9 on the requests claimstep made in one invocation. */
export function checkWrites(v: SetView, entries: readonly AuditEntry[]): Violation[] {
  const out: Violation[] = [];
  for (const e of entries) {
    if (e.actor !== FIELD_MANAGER) continue;
    if (e.verb === "delete") out.push({ invariant: "I1", message: `claimstep deleted ${e.resource} ${e.name}` });
    if (e.resource === "statefulsets" && e.outcome === "ok") {
      const rv = ((e.body?.metadata as Json | undefined)?.resourceVersion as string | undefined) ?? undefined;
      if (rv === undefined) out.push({ invariant: "I9", message: `claimstep patched the StatefulSet without a resourceVersion precondition: ${JSON.stringify(e.body).slice(0, 200)}` });
      const spec = (e.body as Json | undefined)?.spec;
      if (spec !== undefined) out.push({ invariant: "I5", message: `claimstep wrote the StatefulSet's spec: ${JSON.stringify(spec)}` });
    }
    if (e.resource !== "persistentvolumeclaims") continue;
    const before = e.before as unknown as PersistentVolumeClaim | undefined;
    const body = e.body as unknown as PersistentVolumeClaim | undefined;
    const asked = body?.spec?.resources?.requests?.storage;
    if (!v.desired) out.push({ invariant: "rule2", message: `claimstep wrote ${e.name} although the desired templates are invalid` });
    // Rule 13: a claim being deleted is treated as missing and never written. A deletionTimestamp is
    // never cleared, so a claim terminating in the snapshot the step read is still terminating in
    // `before` (the object as stored when the request arrived, refused requests included).
    const deletedAt = before?.metadata?.deletionTimestamp;
    if (deletedAt !== undefined) {
      out.push({ invariant: "rule13", message: `claimstep sent ${e.verb} to ${e.name}, which is being deleted (deletionTimestamp ${deletedAt}; outcome ${e.outcome})` });
    }
    if (before && asked !== undefined && bytes(asked) < bytes(before.spec.resources?.requests?.storage)) out.push(...checkLowering(v, e.name, before, asked));
    if (before && body?.spec && (body.spec as Json).resources === undefined) {
      out.push({ invariant: "I2", message: `claimstep applied ${e.name} without its storage request (the server would drop claimstep's request)` });
    }
    const owner = templateOfClaim(v, e.name);
    if (!owner) {
      out.push({ invariant: "I3", message: `claimstep wrote ${e.name}, which belongs to no template of the set` });
      continue;
    }
    if (owner.ordinal < v.first || owner.ordinal >= v.end) {
      out.push({ invariant: "I3", message: `claimstep wrote ${e.name} (ordinal ${owner.ordinal}) outside [${v.first}, ${v.end})` });
    }
    if (before) {
      const want = owner.t.spec.storageClassName ?? undefined;
      if (want !== undefined && want !== effectiveClass(before)) {
        out.push({ invariant: "I5", message: `claimstep wrote ${e.name} of class ${effectiveClass(before)} while the template asks for ${want}` });
      }
      const ts = owner.t.spec;
      const ps = before.spec;
      const mismatch =
        (ts.accessModes && !sameJSON([...ts.accessModes].sort(), [...(ps.accessModes ?? [])].sort())) ||
        (ts.volumeMode && ts.volumeMode !== (ps.volumeMode ?? "Filesystem")) ||
        (ts.selector && !sameJSON(ts.selector, ps.selector)) ||
        (ts.dataSource && !sameJSON(ts.dataSource, ps.dataSource));
      if (mismatch) out.push({ invariant: "I5", message: `claimstep wrote ${e.name} whose immutable fields differ from template ${owner.t.metadata.name}` });
    }
    if (e.outcome === "ok" && (body?.metadata as Json | undefined)?.resourceVersion === undefined) {
      out.push({ invariant: "I9", message: `claimstep wrote ${e.name} without the resourceVersion it read` });
    }
  }
  return out;
}

/** I4: starting an ordinal never leaves more than maxUnavailable in flight. */
export function checkInFlight(before: Set<number>, after: Set<number>, v: SetView): Violation[] {
  const started = [...after].filter((o) => !before.has(o));
  if (started.length && after.size > v.maxUnavailable) {
    return [{ invariant: "I4", message: `ordinal(s) ${started.join(", ")} started with ${after.size} in flight (${[...after].sort((a, b) => b - a).join(", ")}) > maxUnavailable ${v.maxUnavailable}` }];
  }
  return [];
}
