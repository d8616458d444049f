// The StatefulSet controller (pkg/controller/statefulset/stateful_set_control.go) on the
// simulated store:
// - history: the revision of `spec.template` is `<set>-<hash>`, hash = FNV-1 32 of the patch the
//   controller stores (`{"spec":{"template":{…,"$patch":"replace"}}}`, keys sorted as Go marshals
//   a map) followed by the collisionCount, written through Kubernetes' SafeEncodeString; every
//   revision is an apps/v1 ControllerRevision owned by the set (`data` holds that patch,
//   `revision` its number; a template changed back bumps the older revision's number), pruned to
//   revisionHistoryLimit; `status.currentRevision` names the revision pods below the partition
//   are (re-)created at;
// - pods (processReplica), from the lowest ordinal of [start, start + replicas): a missing pod
//   gets its claims from the live volumeClaimTemplates (named <template>-<set>-<ordinal>,
//   labelled with the set's selector.matchLabels and the template's labels, created only if
//   missing), then the pod, labelled `controller-revision-hash`; a Pending pod gets its missing
//   claims. An existing pod whose volumes do not match the templates (storageMatches: a volume per
//   template naming its claim; extra volumes are fine) gets its missing claims, then the update
//   that would add the volumes is refused (a Warning FailedUpdate event about the set) and the
//   sync ENDS there: no later ordinal, no scale-down, no rolling update — until that pod is
//   replaced (issue 27, what the real v1.34 controller does after a re-create that adds a
//   template). OrderedReady goes one ordinal at a time and waits for each to be Ready; Parallel
//   goes in slowStartBatch's batches (1, 2, 4, …) and stops after a batch where one failed. Pods
//   outside the range are deleted after that, highest first (none while the sync ended early); claims are kept
//   (persistentVolumeClaimRetentionPolicy Retain). Orphaned pods and revisions matching the
//   selector are adopted;
// - RollingUpdate: once every pod exists (and, OrderedReady, is Ready), outdated pods with
//   ordinal ≥ start + partition are deleted highest first while fewer than maxUnavailable (int or
//   percent of replicas rounded down, at least 1; default 1) pods in range are unavailable; a
//   deleted pod is re-created at once, at updateRevision (ordinal ≥ start + partition) or
//   currentRevision. OnDelete never deletes; its pods are re-created at updateRevision;
// - status (subresource, written only when it changes): observedGeneration, replicas,
//   readyReplicas, currentReplicas, updatedReplicas, currentRevision, updateRevision,
//   collisionCount, availableReplicas; currentRevision becomes updateRevision once every pod is
//   updated and Ready (completeRollingUpdate);
// - persistentVolumeClaimRetentionPolicy (StatefulSetAutoDeletePVC, updateClaimOwnerRefForSetAndPod,
//   controller references since KEP-1847's update): once an ordinal's pod exists, its claims carry
//   a controller reference to the set when `whenDeleted: Delete` (none with `Retain`); a pod
//   condemned by a scale-down hands its claims to itself first when `whenScaled: Delete`, so that
//   the garbage collector deletes them after the pod. A claim another controller owns is left
//   alone. A set being deleted is not acted on.
import type { ClaimTemplate, StatefulSet } from "../../../core/kube/index.js";
import { claimName, fnv1_32, podName, podOrdinal, safeEncode } from "../../../core/kube/index.js";
import { encodeLabelSelector, matchesLabels, parseLabelSelector } from "../../kube/label-selector.js";
import type { ManagerRef } from "../errors.js";
import type { Json } from "../store.js";
import { CONTROLLER_MANAGER, type ControllerContext, claimsOf, emitEvent, type Pod, podsOf } from "./context.js";
import { scaledIntOrPercent } from "./disruption.js";

const ACTOR = "statefulset-controller";
const APPS_MANAGER: ManagerRef = { manager: "kube-controller-manager", operation: "Update", apiVersion: "v1" };
const STATUS_MANAGER: ManagerRef = { ...APPS_MANAGER, subresource: "status" };

/** The pod label naming a pod's revision. */
export const REVISION_LABEL = "controller-revision-hash";
/** The label a ControllerRevision carries with its hash. */
const HASH_LABEL = "controller.kubernetes.io/hash";

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const metaOf = (o: Json | Pod) =>
  o.metadata as Json & {
    name: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    ownerReferences?: Json[];
  };

const ordinalOfPod = (set: StatefulSet, pod: Pod): number | undefined =>
  podOrdinal(pod.metadata.name, set.metadata.name);

const ownedBy = (set: StatefulSet, o: Json | Pod): boolean =>
  (metaOf(o).ownerReferences ?? []).some((r) => r.uid === set.metadata.uid);
const hasController = (o: Json | Pod): boolean => (metaOf(o).ownerReferences ?? []).some((r) => r.controller === true);

const isReady = (pod: Pod | undefined): boolean =>
  pod?.status?.phase === "Running" &&
  (pod.status.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");

const revisionOfPod = (pod: Pod): string | undefined => pod.metadata.labels?.[REVISION_LABEL];

/** JSON as Go's encoding/json writes a map: keys sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped. */
export function goJson(v: unknown): string {
  const sorted = (x: unknown): unknown =>
    Array.isArray(x)
      ? x.map(sorted)
      : isObject(x)
        ? Object.fromEntries(
            Object.keys(x)
              .sort()
              .map((k) => [k, sorted(x[k])]),
          )
        : x;
  return JSON.stringify(sorted(v)).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** What a ControllerRevision of a StatefulSet holds: the patch that restores its pod template. */
export const revisionData = (template: Json): Json => ({
  spec: { template: { ...structuredClone(template), $patch: "replace" } },
});

/** The hash of a pod template (HashControllerRevision of its patch, probed with collisionCount). */
export function templateHash(template: Json, collisionCount = 0): string {
  return safeEncode(String(fnv1_32(new TextEncoder().encode(goJson(revisionData(template)) + String(collisionCount)))));
}

/** The pod template a ControllerRevision holds. */
function templateOf(revision: Json): Json {
  const t = structuredClone(
    (((revision.data as Json | undefined)?.spec as Json | undefined)?.template as Json | undefined) ?? {},
  );
  delete t.$patch;
  return t;
}

const selectorMatches = (set: StatefulSet, labels: Record<string, string> | undefined): boolean =>
  matchesLabels(parseLabelSelector(encodeLabelSelector(set.spec.selector)), labels ?? {});

const ownerRef = (set: StatefulSet): Json => ({
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  name: set.metadata.name,
  uid: set.metadata.uid,
  controller: true,
  blockOwnerDeletion: true,
});

/** The claim the controller creates for one template and ordinal. */
export function claimFor(set: StatefulSet, template: ClaimTemplate, ordinal: number): Json {
  const spec = structuredClone(template.spec) as Json;
  spec.volumeMode ??= "Filesystem";
  return {
    metadata: {
      name: claimName(template.metadata.name, set.metadata.name, ordinal),
      namespace: set.metadata.namespace ?? "default",
      labels: { ...(set.spec.selector.matchLabels ?? {}), ...(template.metadata.labels ?? {}) },
      ...(template.metadata.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      finalizers: ["kubernetes.io/pvc-protection"],
    },
    spec,
    status: { phase: "Pending" },
  };
}

/** A revision: its name and the pod template it stands for. */
interface Revision {
  name: string;
  template: Json;
}

function podFor(set: StatefulSet, ordinal: number, revision: Revision): Json {
  const name = podName(set.metadata.name, ordinal);
  const templateMeta = (revision.template.metadata as Json | undefined) ?? {};
  const templateSpec = (revision.template.spec as Json | undefined) ?? {};
  const annotations = templateMeta.annotations as Record<string, string> | undefined;
  return {
    metadata: {
      name,
      generateName: `${set.metadata.name}-`,
      namespace: set.metadata.namespace ?? "default",
      labels: {
        ...((templateMeta.labels as Record<string, string> | undefined) ?? set.spec.selector.matchLabels ?? {}),
        [REVISION_LABEL]: revision.name,
        "statefulset.kubernetes.io/pod-name": name,
        "apps.kubernetes.io/pod-index": String(ordinal),
      },
      ...(annotations && Object.keys(annotations).length ? { annotations: { ...annotations } } : {}),
      ownerReferences: [ownerRef(set)],
    },
    spec: {
      ...structuredClone(templateSpec),
      containers: (templateSpec.containers as Json[] | undefined) ?? [
        { name: "app", image: "registry.k8s.io/pause:3.9" },
      ],
      volumes: [
        ...(set.spec.volumeClaimTemplates ?? []).map((t) => ({
          name: t.metadata.name,
          persistentVolumeClaim: { claimName: claimName(t.metadata.name, set.metadata.name, ordinal) },
        })),
        ...((templateSpec.volumes as Json[] | undefined) ?? []).filter(
          (v) => !(set.spec.volumeClaimTemplates ?? []).some((t) => t.metadata.name === v.name),
        ),
      ],
      hostname: name,
      subdomain: set.spec.serviceName ?? set.metadata.name,
    },
    status: { phase: "Pending" },
  };
}

/** spec.persistentVolumeClaimRetentionPolicy, defaulted (Retain, Retain). */
function retentionOf(set: StatefulSet): { whenDeleted: string; whenScaled: string } {
  const p = ((set.spec as Json).persistentVolumeClaimRetentionPolicy ?? {}) as Json;
  return { whenDeleted: String(p.whenDeleted ?? "Retain"), whenScaled: String(p.whenScaled ?? "Retain") };
}

const podRef = (pod: Pod): Json => ({
  apiVersion: "v1",
  kind: "Pod",
  name: pod.metadata.name,
  uid: pod.metadata.uid,
  controller: true,
  blockOwnerDeletion: true,
});

/**
 * UpdatePodClaimForRetentionPolicy: the owner references of the claims of one ordinal's pod as
 * the policy wants them (`condemned`: the pod is being removed by a scale-down).
 */
function updateClaimOwnerRefs(
  ctx: ControllerContext,
  set: StatefulSet,
  pod: Pod,
  ordinal: number,
  condemned: boolean,
): void {
  const namespace = set.metadata.namespace ?? "default";
  const policy = retentionOf(set);
  for (const t of set.spec.volumeClaimTemplates ?? []) {
    const claim = ctx.store.peek(
      "persistentvolumeclaims",
      namespace,
      claimName(t.metadata.name, set.metadata.name, ordinal),
    );
    if (!claim || metaOf(claim).deletionTimestamp) continue;
    const before = metaOf(claim).ownerReferences ?? [];
    let refs = [...before];
    const unexpectedController = refs.some(
      (r) => r.controller === true && r.uid !== set.metadata.uid && r.uid !== pod.metadata.uid,
    );
    const remove = (uid: string | undefined) => (refs = refs.filter((r) => r.uid !== uid));
    const add = (ref: Json) => {
      if (unexpectedController || refs.some((r) => r.uid === ref.uid)) return;
      refs.push(ref);
    };
    if (condemned && policy.whenScaled === "Delete") {
      remove(set.metadata.uid);
      add(podRef(pod));
    } else {
      remove(pod.metadata.uid);
      if (policy.whenDeleted === "Delete") add(ownerRef(set));
      else remove(set.metadata.uid);
    }
    if (JSON.stringify(refs) === JSON.stringify(before)) continue;
    const next = structuredClone(claim);
    if (refs.length) (next.metadata as Json).ownerReferences = refs;
    else delete (next.metadata as Json).ownerReferences;
    ctx.store.replace("persistentvolumeclaims", next, { manager: CONTROLLER_MANAGER }, ACTOR, "update");
  }
}

/** ClaimPods / ClaimControllerRevisions: orphans matching the selector become the set's. */
function adoptOrphans(ctx: ControllerContext, set: StatefulSet, namespace: string): void {
  for (const r of ["pods", "controllerrevisions"] as const) {
    for (const o of ctx.store.all(r, namespace)) {
      if (hasController(o) || metaOf(o).deletionTimestamp || !selectorMatches(set, metaOf(o).labels)) continue;
      if (r === "pods" && ordinalOfPod(set, o as unknown as Pod) === undefined) continue;
      const next = structuredClone(o);
      (next.metadata as Json).ownerReferences = [...(metaOf(o).ownerReferences ?? []), ownerRef(set)];
      ctx.store.replace(r, next, { manager: r === "pods" ? CONTROLLER_MANAGER : APPS_MANAGER }, ACTOR, "update");
    }
  }
}

/** getStatefulSetRevisions: the current and update revisions, the update one stored if new. */
function revisions(
  ctx: ControllerContext,
  set: StatefulSet,
  namespace: string,
): { current: Revision; update: Revision } {
  const history = ctx.store
    .all("controllerrevisions", namespace)
    .filter((r) => ownedBy(set, r))
    .sort((a, b) => Number(a.revision ?? 0) - Number(b.revision ?? 0));
  const template = (((set.spec as Json).template as Json | undefined) ?? {}) as Json;
  const collisionCount = Number((set.status as Json | undefined)?.collisionCount ?? 0);
  const hash = templateHash(template, collisionCount);
  const updateName = `${set.metadata.name}-${hash}`;
  const last = history[history.length - 1];
  const nextRevision = Number(last?.revision ?? 0) + 1;
  const equal = history.find((r) => metaOf(r).name === updateName);
  if (!equal) {
    ctx.store.insert(
      "controllerrevisions",
      {
        metadata: {
          name: updateName,
          namespace,
          labels: {
            ...(((template.metadata as Json | undefined)?.labels as Record<string, string> | undefined) ?? {}),
            [HASH_LABEL]: hash,
          },
          ownerReferences: [ownerRef(set)],
        },
        data: revisionData(template),
        revision: nextRevision,
      },
      APPS_MANAGER,
      ACTOR,
    );
  } else if (equal !== last) {
    // Rolled back to an older template: that revision becomes the latest.
    ctx.store.replace(
      "controllerrevisions",
      { ...structuredClone(equal), revision: nextRevision },
      { manager: APPS_MANAGER },
      ACTOR,
      "update",
    );
  }
  const update: Revision = { name: updateName, template: structuredClone(template) };
  const currentName = (set.status as Json | undefined)?.currentRevision as string | undefined;
  const stored =
    currentName !== undefined && currentName !== updateName
      ? history.find((r) => metaOf(r).name === currentName)
      : undefined;
  return { current: stored ? { name: currentName!, template: templateOf(stored) } : update, update };
}

/** truncateHistory: revisions no pod and neither status revision uses, beyond revisionHistoryLimit, oldest first. */
function truncateHistory(ctx: ControllerContext, set: StatefulSet, namespace: string, live: Set<string>): void {
  const limit = Number((set.spec as Json).revisionHistoryLimit ?? 10);
  const old = ctx.store
    .all("controllerrevisions", namespace)
    .filter((r) => ownedBy(set, r) && !live.has(metaOf(r).name))
    .sort((a, b) => Number(a.revision ?? 0) - Number(b.revision ?? 0));
  for (const r of old.slice(0, Math.max(0, old.length - limit)))
    ctx.store.remove("controllerrevisions", namespace, metaOf(r).name, ACTOR);
}

/**
 * storageMatches: for every claim template the pod has a volume of that name whose claim is
 * `<template>-<set>-<ordinal>`. Other volumes (of a removed template) do not matter.
 */
function storageMatches(set: StatefulSet, pod: Pod, ordinal: number): boolean {
  const volumes = new Map(
    (((pod.spec as Json | undefined)?.volumes as Json[] | undefined) ?? []).map((v) => [String(v.name), v]),
  );
  return (set.spec.volumeClaimTemplates ?? []).every(
    (t) =>
      ((volumes.get(t.metadata.name)?.persistentVolumeClaim as Json | undefined)?.claimName as string | undefined) ===
      claimName(t.metadata.name, set.metadata.name, ordinal),
  );
}

/** What ValidatePodUpdate answers to a change of a pod's volumes (the first line of the 422's message). */
const POD_UPDATE_FORBIDDEN =
  "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/**
 * How often a repeated FailedUpdate is counted again (virtual ms). The real controller retries
 * with its work queue's back-off and counts every attempt; the sim's controllers run at every
 * instant anything happens, so without a floor a stuck pod would count an event per write.
 */
const FAILED_UPDATE_REPEAT_MS = 10_000;

/**
 * recordPodEvent of a failed UpdateStatefulPod: a Warning FailedUpdate about the set, as the real
 * controller records it ("update Pod web-0 in StatefulSet web failed error: Pod \"web-0\" is
 * invalid: spec: Forbidden: …", then the diff of the pod's volumes).
 */
function failedUpdate(ctx: ControllerContext, set: StatefulSet, pod: Pod): void {
  const namespace = set.metadata.namespace ?? "default";
  const o = ordinalOfPod(set, pod)!;
  const before = (((pod.spec as Json | undefined)?.volumes as Json[] | undefined) ?? []).map((v) => String(v.name));
  const added = (set.spec.volumeClaimTemplates ?? [])
    .filter((t) => !storageMatches({ ...set, spec: { ...set.spec, volumeClaimTemplates: [t] } }, pod, o))
    .map((t) => `+ ${t.metadata.name}: ${claimName(t.metadata.name, set.metadata.name, o)}`);
  const note = `update Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} failed error: Pod "${pod.metadata.name}" is invalid: spec: Forbidden: ${POD_UPDATE_FORBIDDEN}\nVolumes [${before.join(", ")}]\n${added.join("\n")}`;
  const last = ctx.store
    .all("events", namespace)
    .find(
      (e) =>
        e.reason === "FailedUpdate" &&
        e.note === note &&
        (e.regarding as Json | undefined)?.name === set.metadata.name &&
        (e.regarding as Json | undefined)?.kind === "StatefulSet",
    );
  const at = String((last?.series as Json | undefined)?.lastObservedTime ?? last?.eventTime ?? "");
  if (last && ctx.clock.nowMs() - Date.parse(at) < FAILED_UPDATE_REPEAT_MS) return;
  emitEvent(ctx, { kind: "StatefulSet", namespace, name: set.metadata.name }, "Warning", "FailedUpdate", note, ACTOR);
}

export function syncStatefulSets(ctx: ControllerContext): void {
  for (const raw of ctx.store.all("statefulsets")) {
    const set = raw as unknown as StatefulSet;
    if ((set.metadata as Json).deletionTimestamp) continue;
    syncSet(ctx, set);
  }
}

/** One sync of a set (UpdateStatefulSet): its revisions, its strategy, its pods by ordinal as the steps change them. */
interface SetSync {
  ctx: ControllerContext;
  set: StatefulSet;
  namespace: string;
  current: Revision;
  update: Revision;
  /** The ordinals in range: [start, end). */
  start: number;
  end: number;
  replicas: number;
  parallel: boolean;
  rolling: boolean;
  partition: number;
  byOrdinal: Map<number, Pod>;
  /** The ordinals out of range, highest first. */
  condemned: number[];
}

function syncSet(ctx: ControllerContext, set: StatefulSet): void {
  const namespace = set.metadata.namespace ?? "default";
  adoptOrphans(ctx, set, namespace);
  const s = setSync(ctx, set, namespace);
  updateStatefulSet(s);
  const pods = ownedPods(ctx, set, namespace);
  const status = replicaStatus(s, pods);
  truncateHistory(ctx, set, namespace, revisionsInUse(status, pods));
  updateStatefulSetStatus(s, status);
}

const ownedPods = (ctx: ControllerContext, set: StatefulSet, namespace: string): Pod[] =>
  podsOf(ctx).filter((p) => p.metadata.namespace === namespace && ownedBy(set, p));

function setSync(ctx: ControllerContext, set: StatefulSet, namespace: string): SetSync {
  const { current, update } = revisions(ctx, set, namespace);
  const start = set.spec.ordinals?.start ?? 0;
  const replicas = set.spec.replicas ?? 1;
  const end = start + replicas;
  const byOrdinal = new Map<number, Pod>();
  for (const p of ownedPods(ctx, set, namespace)) {
    const o = ordinalOfPod(set, p);
    if (o !== undefined) byOrdinal.set(o, p);
  }
  return {
    ctx,
    set,
    namespace,
    current,
    update,
    start,
    end,
    replicas,
    parallel: (set.spec as Json).podManagementPolicy === "Parallel",
    rolling: (set.spec.updateStrategy?.type ?? "RollingUpdate") === "RollingUpdate",
    partition: set.spec.updateStrategy?.rollingUpdate?.partition ?? 0,
    byOrdinal,
    condemned: [...byOrdinal.keys()].filter((o) => o < start || o >= end).sort((a, b) => b - a),
  };
}

/** updateStatefulSet: the replicas, then the condemned pods, then the rolling update, each while none before blocked. */
function updateStatefulSet(s: SetSync): void {
  if (processReplicas(s) || processCondemned(s)) return;
  if (s.rolling) updateWithMaxUnavailable(s);
}

/**
 * processReplica for every ordinal in range: OrderedReady one after another, stopping at the
 * first that is not done; Parallel in slowStartBatch's batches (1, 2, 4, …), stopping after a
 * batch in which one failed. True when the sync goes no further.
 */
function processReplicas(s: SetSync): boolean {
  const claimNames = new Set(
    claimsOf(s.ctx)
      .filter((c) => c.metadata.namespace === s.namespace)
      .map((c) => c.metadata.name),
  );
  const process = (o: number) => processReplica(s, claimNames, o);
  return s.parallel ? slowStartBatch(s, process) : processInOrder(s, process);
}

type ReplicaOutcome = "next" | "stop" | "error";

function processInOrder(s: SetSync, process: (o: number) => ReplicaOutcome): boolean {
  for (let o = s.start; o < s.end; o++) if (process(o) !== "next") return true;
  return false;
}

function slowStartBatch(s: SetSync, process: (o: number) => ReplicaOutcome): boolean {
  let blocked = false;
  let next = s.start;
  for (let batch = 1; next < s.end && !blocked; batch *= 2) {
    const last = Math.min(s.end, next + batch);
    for (; next < last; next++) if (process(next) === "error") blocked = true;
  }
  return blocked;
}

/** createPersistentVolumeClaims: the ordinal's claims that do not exist yet (`claimNames`, kept up to date). */
function createClaims(s: SetSync, claimNames: Set<string>, o: number): void {
  for (const t of s.set.spec.volumeClaimTemplates ?? []) {
    const name = claimName(t.metadata.name, s.set.metadata.name, o);
    if (claimNames.has(name)) continue;
    s.ctx.store.insert("persistentvolumeclaims", claimFor(s.set, t, o), CONTROLLER_MANAGER, ACTOR);
    claimNames.add(name);
  }
}

/** One ordinal: "next" (go on), "stop" (OrderedReady waits), "error" (the sync ends after this batch). */
function processReplica(s: SetSync, claimNames: Set<string>, o: number): ReplicaOutcome {
  const pod = s.byOrdinal.get(o);
  if (!pod) return createStatefulPod(s, claimNames, o);
  // A pending pod gets its missing claims (createMissingPersistentVolumeClaims).
  if (pod.status?.phase === "Pending") createClaims(s, claimNames, o);
  updateClaimOwnerRefs(s.ctx, s.set, pod, o, false);
  if (!s.parallel && !isReady(pod)) return "stop";
  if (storageMatches(s.set, pod, o)) return "next";
  // UpdateStatefulPod: the pod's missing claims are created, then the update that would put
  // their volumes into the running pod is refused (a pod's volumes are immutable): the sync
  // ends here, every time, until the pod is replaced.
  createClaims(s, claimNames, o);
  failedUpdate(s.ctx, s.set, pod);
  return "error";
}

/** CreateStatefulPod: the claims, then the pod; below the partition at the current revision. */
function createStatefulPod(s: SetSync, claimNames: Set<string>, o: number): ReplicaOutcome {
  // A pod of that name the set does not own (still another owner's, or being collected):
  // the create would be 409 AlreadyExists; the controller retries later.
  if (s.ctx.store.peek("pods", s.namespace, podName(s.set.metadata.name, o))) return "error";
  createClaims(s, claimNames, o);
  const revision = s.rolling && o < s.start + s.partition ? s.current : s.update;
  const created = s.ctx.store.insert("pods", podFor(s.set, o, revision), CONTROLLER_MANAGER, ACTOR) as unknown as Pod;
  s.byOrdinal.set(o, created);
  return s.parallel ? "next" : "stop";
}

/**
 * processCondemned: once every replica is done (OrderedReady: each Running and Ready), the pods
 * out of range, highest ordinal first, one at a time unless Parallel. True when the sync goes no further.
 */
function processCondemned(s: SetSync): boolean {
  for (const o of s.parallel ? s.condemned : s.condemned.slice(0, 1)) {
    updateClaimOwnerRefs(s.ctx, s.set, s.byOrdinal.get(o)!, o, true);
    s.ctx.store.remove("pods", s.namespace, s.byOrdinal.get(o)!.metadata.name, ACTOR);
    s.byOrdinal.delete(o);
  }
  return s.condemned.length > 0 && !s.parallel;
}

/** updateWithMaxUnavailable: delete outdated pods, highest first, within maxUnavailable. */
function updateWithMaxUnavailable(s: SetSync): void {
  const rollingUpdate = (s.set.spec.updateStrategy?.rollingUpdate ?? {}) as Json;
  const maxUnavailable = Math.max(1, scaledIntOrPercent(rollingUpdate.maxUnavailable ?? 1, s.replicas, false) ?? 1);
  let unavailable = 0;
  for (let o = s.start; o < s.end; o++) if (!isReady(s.byOrdinal.get(o))) unavailable++;
  let budget = maxUnavailable - unavailable;
  for (let o = s.end - 1; o >= s.start + s.partition && budget > 0; o--) {
    const pod = s.byOrdinal.get(o);
    if (!pod || revisionOfPod(pod) === s.update.name) continue;
    s.ctx.store.remove("pods", s.namespace, pod.metadata.name, ACTOR);
    s.byOrdinal.delete(o);
    budget--;
  }
}

/** The status the set's pods give, currentRevision moved to updateRevision once every pod is (completeRollingUpdate). */
function replicaStatus(s: SetSync, pods: Pod[]): Json {
  const ready = pods.filter((p) => isReady(p)).length;
  let currentReplicas = pods.filter((p) => revisionOfPod(p) === s.current.name).length;
  const updatedReplicas = pods.filter((p) => revisionOfPod(p) === s.update.name).length;
  let currentRevision = s.current.name;
  if (s.rolling && updatedReplicas === pods.length && ready === pods.length) {
    // completeRollingUpdate
    currentReplicas = updatedReplicas;
    currentRevision = s.update.name;
  }
  const status: Json = {
    observedGeneration: Number((s.set.metadata as Json).generation ?? 1),
    replicas: pods.length,
    readyReplicas: ready,
    currentReplicas,
    updatedReplicas,
    currentRevision,
    updateRevision: s.update.name,
    collisionCount: Number((s.set.status as Json | undefined)?.collisionCount ?? 0),
    availableReplicas: ready,
  };
  // omitempty: a zero readyReplicas, currentReplicas or updatedReplicas is not written (replicas
  // and availableReplicas always are), as a set of 0 replicas shows on the v1.34 server.
  for (const k of ["readyReplicas", "currentReplicas", "updatedReplicas"]) if (status[k] === 0) delete status[k];
  return status;
}

/** The revisions truncateHistory keeps: both of the status's and every pod's. */
const revisionsInUse = (status: Json, pods: Pod[]): Set<string> =>
  new Set([
    status.currentRevision as string,
    status.updateRevision as string,
    ...pods.map(revisionOfPod).filter((r): r is string => r !== undefined),
  ]);

/** updateStatefulSetStatus: the status subresource, written only when it changes. */
function updateStatefulSetStatus(s: SetSync, status: Json): void {
  const latest = s.ctx.store.peek("statefulsets", s.namespace, s.set.metadata.name);
  if (!latest || goJson(latest.status ?? {}) === goJson(status)) return;
  s.ctx.store.replace(
    "statefulsets",
    { ...structuredClone(latest), status },
    { manager: STATUS_MANAGER },
    ACTOR,
    "status",
  );
}
