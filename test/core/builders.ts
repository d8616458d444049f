// Snapshot builders for planner tests, starting from the real objects in the fixtures so the
// shapes (defaults, managedFields, status) are those a real API server returns.

import { RECREATE_ACTIONS } from "../../core/actions.js";
import { Keys } from "../../core/keys.js";
import type { PersistentVolumeClaim, StatefulSet, StorageClass } from "../../core/kube/k8s.js";
import { revisionOf } from "../../core/kube/revision.js";
import { desiredTemplates } from "../../core/policy/templates.js";
import type { WriterCapabilities } from "../../core/ports.js";
import type { Action, PatchClaim, Snapshot } from "../../core/types.js";
import { FIXTURES_DIR, fixtureJson, fixtureStatus } from "../fixtures/apiserver.js";

/** What the direct writer can do: the planner's usual third argument. */
export const DIRECT: WriterCapabilities = { name: "direct", supports: ["PatchClaim"], proposes: false };

/** The direct writer with the claims', the pods' and the re-create's requests (core/actions.ts RECREATE_ACTIONS). */
export const DIRECT_RECREATE: WriterCapabilities = {
  name: "direct",
  supports: ["PatchClaim", "PatchPartition", "EvictPod", ...RECREATE_ACTIONS],
  proposes: false,
};

/** test/fixtures/apiserver/ (absolute, with a trailing slash). */
export const FIXTURES = FIXTURES_DIR;

export const fixture = <T = any>(file: string): T => fixtureJson<T>(file);

/** A `.txt` fixture: the Status body and the HTTP code on the last line. */
export const statusFixture = (file: string): { code: number; body: any } => fixtureStatus(file);

const clone = <T>(v: T): T => structuredClone(v);

export interface TemplateSpec {
  name: string;
  storage: string;
  storageClassName?: string | null;
  vac?: string;
  labels?: Record<string, string>;
  accessModes?: string[];
}

export const template = (t: TemplateSpec) => ({
  metadata: { name: t.name, ...(t.labels ? { labels: t.labels } : {}) },
  spec: {
    accessModes: t.accessModes ?? ["ReadWriteOnce"],
    ...(t.storageClassName === null ? {} : { storageClassName: t.storageClassName ?? "fast" }),
    resources: { requests: { storage: t.storage } },
    ...(t.vac ? { volumeAttributesClassName: t.vac } : {}),
  },
});

export interface SetSpec {
  replicas?: number;
  start?: number;
  partition?: number;
  maxUnavailable?: number | string;
  live?: TemplateSpec[];
  /** Desired templates for the annotation; a string is written as is (to test bad input). */
  desired?: TemplateSpec[] | string;
  strategy?: string | null;
  updateStrategyType?: string;
  annotations?: Record<string, string>;
}

export function makeSet(s: SetSpec = {}): StatefulSet {
  const set = clone(fixture("statefulset-web.json"));
  set.spec.replicas = s.replicas ?? 3;
  if (s.start !== undefined) set.spec.ordinals = { start: s.start };
  set.spec.updateStrategy = {
    type: s.updateStrategyType ?? "RollingUpdate",
    ...(s.updateStrategyType === "OnDelete"
      ? {}
      : { rollingUpdate: { partition: s.partition ?? 0, maxUnavailable: s.maxUnavailable ?? 1 } }),
  };
  set.spec.volumeClaimTemplates = (s.live ?? [{ name: "data", storage: "1Gi" }]).map((t) => ({
    kind: "PersistentVolumeClaim",
    apiVersion: "v1",
    ...template(t),
    spec: { ...template(t).spec, volumeMode: "Filesystem" },
    status: { phase: "Pending" },
  }));
  const annotations: Record<string, string> = { ...set.metadata.annotations, ...(s.annotations ?? {}) };
  if (s.strategy !== null) annotations[Keys.strategy] = s.strategy ?? "InPlace";
  if (s.desired !== undefined)
    annotations[Keys.templates] = typeof s.desired === "string" ? s.desired : JSON.stringify(s.desired.map(template));
  set.metadata.annotations = annotations;
  return set;
}

export interface ClaimSpec {
  storage?: string;
  capacity?: string;
  phase?: string;
  storageClassName?: string | null;
  betaClass?: string;
  vac?: string;
  currentVac?: string;
  revision?: string;
  labels?: Record<string, string>;
  conditions?: { type: string; message?: string }[];
  allocatedResourceStatus?: string;
  /** status.allocatedResources.storage. */
  allocated?: string;
  modifyVolumeStatus?: { status: string; targetVolumeAttributesClassName?: string };
  accessModes?: string[];
  annotations?: Record<string, string>;
}

export function makeClaim(name: string, c: ClaimSpec = {}): PersistentVolumeClaim {
  const base = clone(fixture("pvc-list.json").items[0]) as PersistentVolumeClaim;
  base.metadata.name = name;
  base.metadata.uid = `uid-${name}`;
  base.metadata.labels = {
    app: "web",
    ...(c.labels ?? {}),
    ...(c.revision ? { [Keys.revisionLabel]: c.revision } : {}),
  };
  if (c.betaClass || c.annotations)
    base.metadata.annotations = {
      ...(c.betaClass ? { [Keys.betaStorageClass]: c.betaClass } : {}),
      ...(c.annotations ?? {}),
    };
  const storage = c.storage ?? "1Gi";
  base.spec.resources = { requests: { storage } };
  if (c.storageClassName === null) delete base.spec.storageClassName;
  else base.spec.storageClassName = c.storageClassName ?? "fast";
  if (c.accessModes) base.spec.accessModes = c.accessModes;
  if (c.vac) base.spec.volumeAttributesClassName = c.vac;
  base.status = {
    phase: c.phase ?? "Bound",
    accessModes: ["ReadWriteOnce"],
    ...((c.phase ?? "Bound") === "Bound" ? { capacity: { storage: c.capacity ?? storage } } : {}),
    ...(c.conditions ? { conditions: c.conditions.map((x) => ({ status: "True", ...x })) } : {}),
    ...(c.allocatedResourceStatus ? { allocatedResourceStatuses: { storage: c.allocatedResourceStatus } } : {}),
    ...(c.allocated ? { allocatedResources: { storage: c.allocated } } : {}),
    ...(c.currentVac ? { currentVolumeAttributesClassName: c.currentVac } : {}),
    ...(c.modifyVolumeStatus ? { modifyVolumeStatus: c.modifyVolumeStatus } : {}),
  };
  return base;
}

export const storageClasses = (): StorageClass[] => clone(fixture("storageclass-list.json").items);

export function snapshot(set: StatefulSet, claims: PersistentVolumeClaim[], extra: Partial<Snapshot> = {}): Snapshot {
  return {
    statefulSet: set,
    pods: clone(fixture("pod-list.json").items),
    claims,
    storageClasses: storageClasses(),
    volumeAttributesClasses: undefined,
    ...extra,
  };
}

/** Claims for every ordinal of `[start, start+replicas)` and every template, all alike. */
export function claimsFor(set: StatefulSet, c: ClaimSpec = {}): PersistentVolumeClaim[] {
  const start = set.spec.ordinals?.start ?? 0;
  const out: PersistentVolumeClaim[] = [];
  for (const t of set.spec.volumeClaimTemplates ?? []) {
    for (let o = start; o < start + (set.spec.replicas ?? 1); o++)
      out.push(makeClaim(`${t.metadata.name}-${set.metadata.name}-${o}`, c));
  }
  return out;
}

/** What the API server does with claimstep's apply: spec, VAC and labels change, status does not. */
/** The claim write a decision carries (the test fails here when it carries another action). */
export function patchOf(a: Action | undefined): PatchClaim {
  if (a?.type !== "PatchClaim") throw new Error(`expected a PatchClaim, got ${a?.type ?? "no action"}`);
  return a;
}

export function applyPatch(s: Snapshot, action: Action): Snapshot {
  const p = patchOf(action);
  const claims = s.claims.map((c) => {
    if (c.metadata.name !== p.claim) return c;
    const next = clone(c);
    next.spec.resources = {
      ...next.spec.resources,
      requests: { ...next.spec.resources?.requests, storage: p.storage },
    };
    if (p.volumeAttributesClassName) next.spec.volumeAttributesClassName = p.volumeAttributesClassName;
    next.metadata.labels = { ...next.metadata.labels, ...p.labels };
    next.metadata.annotations = { ...next.metadata.annotations, ...p.annotations };
    return next;
  });
  return { ...s, claims };
}

/** The resizer and kubelet finish: capacity reaches the request, the VAC is current. */
export function settle(s: Snapshot, claim: string): Snapshot {
  return {
    ...s,
    claims: s.claims.map((c) => {
      if (c.metadata.name !== claim) return c;
      const next = clone(c);
      next.status = { ...next.status, capacity: { storage: next.spec.resources!.requests!.storage! } };
      if (next.spec.volumeAttributesClassName)
        next.status.currentVolumeAttributesClassName = next.spec.volumeAttributesClassName;
      delete next.status.conditions;
      delete next.status.allocatedResourceStatuses;
      delete next.status.modifyVolumeStatus;
      return next;
    }),
  };
}

/** Write claimstep's set annotations back, as the step runner does. */
export function annotate(s: Snapshot, annotations: Record<string, string> | undefined): Snapshot {
  if (!annotations) return s;
  const set = clone(s.statefulSet);
  set.metadata.annotations = { ...set.metadata.annotations, ...annotations };
  return { ...s, statefulSet: set };
}

/**
 * A set whose rollout is complete at the desired 2Gi (claims at the revision, current-revision
 * written) while its live templates are still 1Gi: the re-create (F1) is next when it asks for one.
 */
export function completeForRecreate(
  extra: Partial<SetSpec> = {},
  annotations: Record<string, string> = { [Keys.finalize]: "Recreate" },
): Snapshot {
  const set = makeSet({ desired: [{ name: "data", storage: "2Gi" }], annotations, ...extra });
  const desired = desiredTemplates(set);
  if (!desired.ok) throw new Error(desired.message);
  const revision = revisionOf(desired.templates);
  set.metadata.annotations = {
    ...set.metadata.annotations,
    [Keys.currentRevision]: revision,
    [Keys.updateRevision]: revision,
  };
  set.metadata.generation = 1;
  set.status = { ...set.status, observedGeneration: 1 };
  return snapshot(set, claimsFor(set, { storage: "2Gi", revision }));
}
