// Adding and removing claim templates on a running set (docs/design.md "Adding and removing claim
// templates"), once the re-create (finalize.ts) has given the set the shape it asked for
// (core/policy/shape.ts): label the removed templates' claims, restart the pods one at a time from
// the lowest ordinal, as the StatefulSet controller can follow (it processes pods from ordinal start
// and stops at the first whose volumes do not match the set, so a higher pod evicted first is never
// re-created), then hand the partition back.

import { Keys } from "../keys.js";
import type { PersistentVolumeClaim, Pod, StatefulSet } from "../kube/k8s.js";
import { claimName, podName } from "../kube/statefulset.js";
import { eventOf, Messages } from "../messages.js";
import type { WalkConclusion } from "../parts.js";
import { partitionHold, partitionPatch } from "../policy/partition-hold.js";
import { budgetCharged } from "../policy/pod-policy.js";
import type { LastEviction } from "../policy/records.js";
import type { Reshape } from "../policy/shape.js";
import type { EvictPod, LabelClaim, OrphanedClaim } from "../types.js";

// ---------------------------------------------------------------------------------------------
// After the re-create: the claims of removed templates, the pods, the partition.

/** The claim of template `t` of this set, when `name` is one (`<t>-<set>-<ordinal>`). */
const templateOfClaim = (name: string, set: string, templates: readonly string[]): string | undefined =>
  templates.find((t) => ordinalSuffix(name, `${t}-${set}-`));
const ordinalSuffix = (name: string, prefix: string): boolean =>
  name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length));

/** Names of the claims each pod's volumes use. */
const podClaims = (pod: Pod): Map<string, string> => {
  const volumes = ((pod as { spec?: { volumes?: unknown } }).spec?.volumes ?? []) as {
    name?: string;
    persistentVolumeClaim?: { claimName?: string };
  }[];
  const out = new Map<string, string>();
  for (const v of volumes)
    if (v.name && v.persistentVolumeClaim?.claimName) out.set(v.name, v.persistentVolumeClaim.claimName);
  return out;
};

/** `cache` of `cache-web-3` (set `web`). */
const templateName = (claim: string, set: string): string => {
  const at = claim.lastIndexOf(`-${set}-`);
  return at > 0 ? claim.slice(0, at) : claim;
};

/** Claims labelled orphaned-from this set, and whether a pod of it still mounts each. */
export function orphanedClaimsOf(
  setName: string,
  claims: readonly PersistentVolumeClaim[],
  pods: readonly Pod[],
): OrphanedClaim[] {
  const mounted = new Set(pods.flatMap((p) => [...podClaims(p).values()]));
  return claims
    .filter((c) => c.metadata.labels?.[Keys.orphanedFrom] === setName && !c.metadata.deletionTimestamp)
    .map((c) => ({
      claim: c.metadata.name,
      template: templateName(c.metadata.name, setName),
      mounted: mounted.has(c.metadata.name),
    }))
    .sort((a, b) => (a.claim < b.claim ? -1 : a.claim > b.claim ? 1 : 0));
}

/** What the steps after a re-create read. */
export interface ShapeContext {
  set: StatefulSet;
  pods: readonly Pod[];
  claims: readonly PersistentVolumeClaim[];
  /** StorageClasses by name: `volumeBindingMode` says whether a new claim binds before its pod. */
  classes: ReadonlyMap<string, { volumeBindingMode?: string | undefined }>;
  reshape: Reshape;
  maxUnavailable: number;
  /** claimstep holds the partition for the re-create (`claimstep.io/user-partition` recorded, no pod coordination). */
  holding: boolean;
  /** Restart pods (the set asks to be re-created, RollingUpdate); else only the claims are labelled. */
  restarts: boolean;
  lastEviction: LastEviction | undefined;
  nowMs: number;
  /** R3: how long a refused eviction charges the budget (core/policy/pod-policy.ts budgetCharged). */
  budgetChargeSeconds: number;
}

const isReady = (pod: Pod | undefined): boolean =>
  !!pod &&
  !pod.metadata.deletionTimestamp &&
  (pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");

/** A pod whose volumes are not the set's: a template's claim missing, or a removed template's claim still there. */
export function podMismatch(
  set: StatefulSet,
  pod: Pod,
  ordinal: number,
  orphaned: readonly string[],
): { lacks: string[]; keeps: string[] } | undefined {
  const claims = podClaims(pod);
  const lacks = (set.spec.volumeClaimTemplates ?? [])
    .map((t) => t.metadata.name)
    .filter((t) => claims.get(t) !== claimName(t, set.metadata.name, ordinal));
  const keeps = [...claims.values()].filter((c) => templateOfClaim(c, set.metadata.name, orphaned) !== undefined);
  return lacks.length || keeps.length ? { lacks, keeps } : undefined;
}

/**
 * The one step after a re-create that changed the set's shape, or undefined when there is none:
 * label (or unlabel) one claim (S3), then, when pods restart, the lowest pod whose volumes are not
 * the set's (S4): its new claims there and bound, a slot within maxUnavailable, the budget not
 * charged (R3), then its eviction; with every pod's volumes right, wait for the restarted pods
 * while claimstep holds the partition (S5).
 */
export function shapeStep(c: ShapeContext): WalkConclusion | undefined {
  const where = whereOf(c.set);
  const labelled = labelOneClaim(c, where);
  if (labelled || !c.restarts) return labelled;
  const { target, down } = restartTarget(c, where);
  if (!target) return awaitRestartedPods(c, where, down);
  return (
    newClaimsNotReady(c, where, target) ?? slotTaken(c, target, down) ?? budgetTaken(c, target) ?? evict(where, target)
  );
}

/** The set's name, namespace and live template names: what every step of shapeStep names. */
interface Where {
  setName: string;
  namespace: string;
  liveNames: string[];
}

const whereOf = (set: StatefulSet): Where => ({
  setName: set.metadata.name,
  namespace: set.metadata.namespace ?? "default",
  liveNames: (set.spec.volumeClaimTemplates ?? []).map((t) => t.metadata.name),
});

/** The lowest pod whose volumes are not the set's, with what it lacks and keeps. */
interface RestartTarget {
  ordinal: number;
  pod: Pod;
  lacks: string[];
  keeps: string[];
}

// S3: the claims of a removed template are kept and labelled; a template that came back reuses its own.
function labelOneClaim(c: ShapeContext, { setName, namespace, liveNames }: Where): WalkConclusion | undefined {
  for (const claim of c.claims) {
    if (claim.metadata.deletionTimestamp) continue;
    const label = claim.metadata.labels?.[Keys.orphanedFrom];
    const orphan = templateOfClaim(claim.metadata.name, setName, c.reshape.orphaned) !== undefined;
    const reused = label === setName && templateOfClaim(claim.metadata.name, setName, liveNames) !== undefined;
    if ((orphan && label !== setName) || reused) {
      const action: LabelClaim = {
        type: "LabelClaim",
        namespace,
        set: setName,
        claim: claim.metadata.name,
        orphanedFrom: reused ? null : setName,
        ...(claim.metadata.uid ? { uid: claim.metadata.uid } : {}),
        ...(claim.metadata.resourceVersion ? { resourceVersion: claim.metadata.resourceVersion } : {}),
      };
      const message = reused
        ? Messages.claimReused(claim.metadata.name, setName)
        : Messages.claimOrphaned(claim.metadata.name, setName, namespace);
      const reason = reused ? "ClaimReused" : "ClaimOrphaned";
      return { reason, message, action, events: [eventOf(reason, message)] };
    }
  }
  return undefined;
}

// S4: the pods, lowest ordinal first: the order the StatefulSet controller processes them in.
function restartTarget(c: ShapeContext, { setName }: Where): { target?: RestartTarget; down: string[] } {
  const start = c.set.spec.ordinals?.start ?? 0;
  const end = start + (c.set.spec.replicas ?? 1);
  const pods = new Map(c.pods.map((p) => [p.metadata.name, p]));
  const down: string[] = [];
  let target: RestartTarget | undefined;
  for (let o = start; o < end; o++) {
    const pod = pods.get(podName(setName, o));
    if (!isReady(pod)) down.push(podName(setName, o));
    if (!pod || pod.metadata.deletionTimestamp || target) continue;
    const mismatch = podMismatch(c.set, pod, o, c.reshape.orphaned);
    if (mismatch) target = { ordinal: o, pod, ...mismatch };
  }
  return target ? { target, down } : { down };
}

// S5: every pod has the set's volumes; while claimstep still holds the partition, the restarted
// pods come back before it is handed back.
const awaitRestartedPods = (c: ShapeContext, { setName }: Where, down: string[]): WalkConclusion | undefined =>
  c.holding && down.length ? { reason: "PodUpdating", message: Messages.shapeWaitsForPods(setName, down) } : undefined;

// S4: its new claims first: the controller creates them when it reaches the pod; an Immediate class
// binds them before the pod, so a claim that does not bind is seen before the pod is restarted.
function newClaimsNotReady(c: ShapeContext, { setName }: Where, target: RestartTarget): WalkConclusion | undefined {
  const name = target.pod.metadata.name;
  const claimsByName = new Map(c.claims.map((x) => [x.metadata.name, x]));
  for (const t of target.lacks) {
    const cn = claimName(t, setName, target.ordinal);
    const claim = claimsByName.get(cn);
    if (!claim || claim.metadata.deletionTimestamp)
      return { reason: "ClaimMissing", ordinal: target.ordinal, message: Messages.shapeClaimMissing(cn, name) };
    const cls = claim.spec.storageClassName ?? undefined;
    const binding = cls === undefined ? undefined : c.classes.get(cls)?.volumeBindingMode;
    if (claim.status?.phase !== "Bound" && binding !== "WaitForFirstConsumer")
      return {
        reason: "ClaimNotBound",
        ordinal: target.ordinal,
        message: Messages.shapeClaimNotBound(cn, name, cls),
        events: [eventOf("ClaimNotBound", Messages.shapeClaimNotBound(cn, name, cls))],
      };
  }
  return undefined;
}

// S4: at most maxUnavailable pods down, this one included.
function slotTaken(c: ShapeContext, target: RestartTarget, down: string[]): WalkConclusion | undefined {
  const name = target.pod.metadata.name;
  const others = down.filter((p) => p !== name);
  return others.length + 1 > c.maxUnavailable
    ? {
        reason: "PodUpdating",
        ordinal: target.ordinal,
        message: Messages.shapeRestartWaits(name, others, c.maxUnavailable),
      }
    : undefined;
}

// R3: do not ask again while a refused eviction charges the budget.
function budgetTaken(c: ShapeContext, target: RestartTarget): WalkConclusion | undefined {
  const pods = new Map(c.pods.map((p) => [p.metadata.name, p]));
  const charged = budgetCharged(c.lastEviction, pods, c.nowMs, c.budgetChargeSeconds);
  return charged ? { ...charged, ordinal: target.ordinal } : undefined;
}

// S4: the eviction, naming the claim it is for (a new one it lacks, else a removed one it keeps).
function evict({ setName, namespace, liveNames }: Where, target: RestartTarget): WalkConclusion {
  const name = target.pod.metadata.name;
  const claim = target.lacks.length
    ? claimName(target.lacks[0]!, setName, target.ordinal)
    : (target.keeps[0] ?? claimName(liveNames[0] ?? "", setName, target.ordinal));
  const action: EvictPod = {
    type: "EvictPod",
    namespace,
    pod: name,
    uid: target.pod.metadata.uid ?? "",
    ordinal: target.ordinal,
    claim,
  };
  const message = Messages.shapeRestart(
    name,
    target.lacks.map((t) => claimName(t, setName, target.ordinal)),
    target.keeps,
  );
  return { reason: "PodEvicted", ordinal: target.ordinal, message, action, events: [eventOf("PodEvicted", message)] };
}

/** Before the re-create: the partition at `replicas`, so the controller replaces no pod on its own. */
export function holdForShape(set: StatefulSet, holding: boolean, livePartition: number): WalkConclusion | undefined {
  const replicas = set.spec.replicas ?? 1;
  // Recorded even when the partition already holds every pod: the record is what keeps the
  // partition claimstep's until the restarted pods are Ready again.
  if (holding && livePartition >= replicas) return undefined;
  const action = partitionPatch(set, partitionHold(replicas, livePartition, holding));
  const message = Messages.shapePartitionHeld(set.metadata.name, action.partition, livePartition);
  return { reason: "PartitionHeld", message, action, events: [eventOf("PartitionHeld", message)] };
}
