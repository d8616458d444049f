// The planner, part 2 — rules 4–8, 13 and 14 of docs/design.md for one claim of one ordinal: its
// name, its target, whether it needs claimstep's apply, whether the API server would accept that
// apply (predicted, never provoked), whether it is ready, and the apply itself.

import { Keys } from "../keys.js";
import { sameJson } from "../kube/json.js";
import type { ClaimTemplate, PersistentVolumeClaim } from "../kube/k8s.js";
import { parseQuantity, quantityString, roundSizeAbove, toBytes } from "../kube/quantity.js";
import { claimName, podName } from "../kube/statefulset.js";
import { Messages } from "../messages.js";
import type { ClaimPlan, Obstacle, OrdinalPlan } from "../parts.js";
import { phaseOf } from "../reasons.js";
import type { ClaimReadiness, ClaimReport, OrdinalReport, PatchClaim } from "../types.js";
import { podColumns } from "./pods.js";
import { claimReadiness, nodeExpansionFailed, resizeBlockedByPod } from "./readiness.js";
import type { Scope } from "./scope.js";

/** Every claim of an ordinal in scope, evaluated. */
export const evaluateOrdinal = (scope: Scope, ordinal: number): OrdinalPlan => ({
  ordinal,
  claims: scope.claimTemplates.map((t) => evaluateClaim(scope, t, ordinal)),
});

/**
 * One claim of one ordinal, in the order the rules decide it: its name and whether it exists (rule
 * 4), what it is against its template (claimOf: rules 5, 7, 14, 19, 20), its readiness (rule 8) and
 * slot (rule 9), then, for a claim not at the revision, the API server's predicted answer (rule 6)
 * and the apply (rule 7).
 */
function evaluateClaim(scope: Scope, t: ClaimTemplate, ordinal: number): ClaimPlan {
  // Rule 4: the claim `<template>-<set>-<ordinal>`; a missing one is left to the StatefulSet controller.
  const name = claimName(t.metadata.name, scope.setName, ordinal);
  const pvc = scope.claims.get(name);
  if (!pvc) return claimMissing(scope, t, name);
  const c = claimOf(scope, t, pvc, name);
  const readiness = readinessOf(c);
  const { recovery } = c;
  const plan: ClaimPlan = {
    report: claimReport(c, readiness),
    template: t,
    pvc,
    // Rule 7 with rule 20: a claim not at the revision needs the apply (its revision label at least,
    // with whatever size, class, labels and annotations it lacks); one at the revision never does.
    needsUpdate: !c.atRevision,
    done: c.atRevision && readiness.state === "Ready",
    inFlight: inFlightOf(c, readiness),
    ...(c.classHeld ? { classHeld: true } : {}),
    ...(recovery !== undefined && recovery !== "lower" && "unmet" in recovery ? { unmet: recovery.unmet } : {}),
  };
  // Rule 20: a claim at the revision is never written again.
  if (c.atRevision) return plan;
  const obstacle = obstacleOf(c);
  if (obstacle) return { ...plan, obstacle };
  // Rule 19: its class waits for the resize under way; else the apply (rule 7).
  return c.classHeld ? plan : { ...plan, patch: patchOf(c, ordinal) };
}

/** Rules 4 and 13: a claim missing, or being deleted (readiness says which). */
function claimMissing(scope: Scope, t: ClaimTemplate, name: string): ClaimPlan {
  const target = t.spec.resources!.requests!.storage!; // validated by desiredTemplates
  const deleting = scope.deleting.get(name);
  const readiness = claimReadiness(deleting, { storageBytes: toBytes(target) }, name);
  return {
    template: t,
    needsUpdate: false,
    done: false,
    // Rules 9 and 13: a claim claimstep wrote that is then deleted is never ready again, and its
    // ordinal is no less disrupted: it keeps the slot, so no other ordinal starts in its place.
    inFlight: deleting?.metadata.labels?.[Keys.revisionLabel] !== undefined,
    report: { template: t.metadata.name, claim: name, exists: false, target, readiness },
  };
}

/** One existing claim against its template: what the rules read, worked out once by claimOf. */
interface Claim {
  scope: Scope;
  t: ClaimTemplate;
  pvc: PersistentVolumeClaim;
  name: string;
  /** The template's request in bytes, and its VolumeAttributesClass. */
  wantBytes: bigint;
  vac: string | undefined;
  /** Rule 14: the claim's request. */
  spec: Spec;
  /** Rule 20: stamped with the current revision: done, whatever its size, class or labels now. */
  atRevision: boolean;
  /** X1–X3: a failed expansion's way down (recoveryOf). */
  recovery: Recovery;
  /** Rule 5: what the apply requests. */
  target: string;
  /** Rule 7: what the apply changes: the claim grows, comes down (X1) or changes class. */
  needsExpand: boolean;
  lowers: boolean;
  changesVac: boolean;
  /** Rule 19: the class change waits for the resize under way on the claim. */
  classHeld: boolean;
}

function claimOf(scope: Scope, t: ClaimTemplate, pvc: PersistentVolumeClaim, name: string): Claim {
  const want = t.spec.resources!.requests!.storage!; // validated by desiredTemplates
  const wantBytes = toBytes(want);
  const spec = specOf(pvc);
  const atRevision = pvc.metadata.labels?.[Keys.revisionLabel] === scope.revision;
  const sized = targetOf(pvc, name, spec, want, wantBytes, atRevision);
  const vac = t.spec.volumeAttributesClassName ?? undefined;
  const needsExpand = !atRevision && spec.bytes < wantBytes;
  const changesVac = !atRevision && vac !== undefined && pvc.spec.volumeAttributesClassName !== vac;
  // Rule 19: the size first, the class once the claim's resize is done: a claim changing both in
  // one apply has the resizer's expansion and modification controllers fight (409s) over it.
  const classHeld =
    changesVac &&
    !needsExpand &&
    !sized.lowers &&
    spec.readable &&
    RESIZING.includes(claimReadiness(pvc, { storageBytes: spec.bytes }).state);
  return { scope, t, pvc, name, wantBytes, vac, spec, atRevision, ...sized, needsExpand, changesVac, classHeld };
}

/** Rule 14: a claim's request as a quantity string (a JSON number is one too), its bytes, why unreadable. */
interface Spec {
  storage: string | undefined;
  bytes: bigint;
  bad: string | undefined;
  readable: boolean;
}

function specOf(pvc: PersistentVolumeClaim): Spec {
  // Objects not parsed by the schemas may carry a number.
  const raw = pvc.spec.resources?.requests?.storage as string | number | undefined;
  let storage = raw === undefined ? undefined : String(raw);
  let bytes = 0n;
  let bad: string | undefined;
  try {
    storage = raw === undefined ? undefined : quantityString(raw);
    bytes = storage === undefined ? 0n : toBytes(storage);
  } catch (err) {
    bad = (err as Error).message;
  }
  return { storage, bytes, bad, readable: storage !== undefined && !bad };
}

/**
 * Rule 5: the target is max(template, claim spec): never ask for less than the claim already
 * requests, except X1 (the template's request, lowering a failed expansion: sizeChangeOf, then
 * recoveryOf). Rule 20: a claim at the revision keeps what it requests.
 */
function targetOf(
  pvc: PersistentVolumeClaim,
  name: string,
  spec: Spec,
  want: string,
  wantBytes: bigint,
  atRevision: boolean,
): { recovery: Recovery; lowers: boolean; target: string } {
  const size = spec.readable ? sizeChangeOf(wantBytes, claimSizeOf(pvc, spec.bytes)) : undefined;
  const recovery =
    size === "kept" || size === "recover" || size === "stuck"
      ? recoveryOf(pvc, name, spec.storage!, want, size)
      : undefined;
  const lowers = recovery === "lower" && !atRevision;
  const target =
    atRevision && spec.readable
      ? spec.storage!
      : lowers || size === undefined || size === "grow"
        ? want
        : spec.storage!;
  return { recovery, lowers, target };
}

/**
 * Rule 8: ready at min(template, spec) and at the VAC the template names (rule 20: a claim at the
 * revision, at the class it has now: someone may have moved it to another), with the way on.
 */
function readinessOf(c: Claim): ClaimReadiness {
  const { pvc, spec, scope } = c;
  const readyVac = c.atRevision ? (pvc.spec.volumeAttributesClassName ?? undefined) : c.vac;
  const found = claimReadiness(
    pvc,
    {
      storageBytes: spec.readable && spec.bytes < c.wantBytes ? spec.bytes : c.wantBytes,
      ...(readyVac
        ? {
            volumeAttributesClassName: readyVac,
            ...(scope.vacs ? { volumeAttributesClassExists: scope.vacs.has(readyVac) } : {}),
          }
        : {}),
    },
    c.name,
  );
  const capacity = pvc.status?.capacity?.storage;
  if (c.classHeld && found.state !== "Ready" && found.state !== "Failed")
    return { ...found, message: Messages.classAfterResize(found.message, c.vac!) };
  if (found.state !== "Failed" || found.reason !== "ResizeFailed" || !spec.readable || capacity === undefined)
    return found;
  // Issue 36 point 7: the way out, X1, with sizes a person writes.
  return {
    ...found,
    message: Messages.resizeFailedWayOut(
      found.message,
      scope.setName,
      scope.namespace,
      c.t.metadata.name,
      spec.storage!,
      quantityString(capacity),
      roundSizeAbove(safeBytes(capacity)),
    ),
  };
}

/**
 * Rule 9: whether the claim holds a maxUnavailable slot: its class held back (rule 19), at the
 * revision and not ready, or stamped earlier by claimstep and still settling its own request.
 */
function inFlightOf(c: Claim, readiness: ClaimReadiness): boolean {
  const { pvc, spec } = c;
  const stamped = pvc.metadata.labels?.[Keys.revisionLabel] !== undefined;
  const vac = pvc.spec.volumeAttributesClassName;
  const settling =
    stamped && !c.atRevision && spec.readable
      ? claimReadiness(pvc, { storageBytes: spec.bytes, ...(vac ? { volumeAttributesClassName: vac } : {}) }, c.name)
      : undefined;
  return (
    c.classHeld ||
    (c.atRevision && readiness.state !== "Ready") ||
    (settling !== undefined &&
      settling.state !== "Ready" &&
      settling.state !== "Failed" &&
      settling.state !== "NotBound")
  );
}

/** Storage readiness states of a resize under way (rule 19 holds a class change back while one is). */
const RESIZING: readonly ClaimReadiness["state"][] = ["Resizing", "WaitingForPod", "Retrying"];

/** The claim's row of the report; a claim not at the revision is Behind however ready it is. */
function claimReport(c: Claim, readiness: ClaimReadiness): ClaimReport {
  const { pvc, vac } = c;
  const currentVac = pvc.status?.currentVolumeAttributesClassName;
  return {
    template: c.t.metadata.name,
    claim: c.name,
    exists: true,
    ...(c.spec.storage !== undefined ? { spec: c.spec.storage } : {}),
    ...(pvc.status?.capacity?.storage !== undefined ? { capacity: pvc.status.capacity.storage } : {}),
    target: c.target,
    ...(vac !== undefined || currentVac
      ? {
          volumeAttributesClassName: {
            ...(vac !== undefined ? { desired: vac } : {}),
            ...(currentVac ? { current: currentVac } : {}),
          },
        }
      : {}),
    ...(pvc.metadata.labels?.[Keys.revisionLabel] !== undefined
      ? { revision: pvc.metadata.labels[Keys.revisionLabel] }
      : {}),
    readiness:
      !c.atRevision && readiness.state === "Ready"
        ? { state: "Behind", message: Messages.notAtRevision(c.name, c.scope.revision) }
        : readiness,
  };
}

/**
 * Storage allocation statuses of an expansion that failed for good (KEP-1790), and rule 17's lasting
 * node-side failure (NodeResizeError with nothing in progress).
 */
const FAILED: readonly string[] = ["ControllerResizeInfeasible", "NodeResizeInfeasible", "NodeResizeError"];

/**
 * X1: the allocation status of a claim whose expansion failed for good (rule 17's lasting
 * NodeResizeError included), else undefined. The one reading of it, for the planner (rule 5's
 * exception) and `claimstep set` (which refuses a size that would shrink a claim otherwise).
 */
export function failedExpansionOf(pvc: PersistentVolumeClaim): string | undefined {
  const reported = pvc.status?.allocatedResourceStatuses?.storage ?? undefined;
  if (reported !== undefined && FAILED.includes(reported)) return reported;
  return nodeExpansionFailed(pvc) ? "NodeResizeError" : undefined;
}

/**
 * Rule 5 and X1, what a template's request does to one claim's: "grow" (the template asks more),
 * "same", "kept" (the template is below the claim: satisfied, never shrunk), "recover" (X1: below a
 * claim whose expansion failed and above its capacity: the claim comes down to the template) or
 * "stuck" (X2: below a failed claim, not above its capacity: the server refuses that lowering, the
 * claim keeps its request). A failed claim whose capacity is unknown is kept. Sizes in any one unit
 * (bytes, or parseQuantity's nano-units); the one comparison of the planner, `claimstep set`'s
 * refusal and the webhook's warning.
 */
export type SizeChange = "grow" | "same" | "kept" | "recover" | "stuck";
export function sizeChangeOf(
  template: bigint,
  claim: { request: bigint; failed?: boolean; capacity?: bigint | undefined },
): SizeChange {
  if (template > claim.request) return "grow";
  if (template === claim.request) return "same";
  if (!claim.failed || claim.capacity === undefined) return "kept";
  return template > claim.capacity ? "recover" : "stuck";
}

/** A claim's request (bytes), whether its expansion failed for good (X1) and its capacity, for sizeChangeOf. */
const claimSizeOf = (pvc: PersistentVolumeClaim, request: bigint) => {
  const capacity = pvc.status?.capacity?.storage;
  return {
    request,
    failed: failedExpansionOf(pvc) !== undefined,
    capacity: capacity === undefined ? undefined : safeBytes(capacity),
  };
};

type Recovery = "lower" | Obstacle | { unmet: string } | undefined;

/**
 * X1–X3 of docs/design.md ("Recovering from a failed expansion"), for a claim that requests more than
 * the template: "lower" when its expansion failed and the template is strictly above
 * status.capacity (the only decrease the API server accepts, Kubernetes ≥ 1.34); the obstacle
 * when it failed, claimstep wrote it (revision label) and it cannot come down; undefined
 * otherwise: rule 5 holds, the claim keeps its request (an expansion in progress or done is never
 * undone).
 */
function recoveryOf(
  pvc: PersistentVolumeClaim,
  name: string,
  spec: string,
  template: string,
  size: "kept" | "recover" | "stuck",
): Recovery {
  // Rule 5 and X1 (sizeChangeOf): lowered when above a failed expansion's capacity.
  if (size === "recover") return "lower";
  // Rule 17: a node-side failure lasts as NodeResizeError once NodeResizeInfeasible is gone.
  const allocation = failedExpansionOf(pvc);
  const capacity = pvc.status?.capacity?.storage;
  const capBytes = capacity === undefined ? undefined : safeBytes(capacity);
  // X2 (issue 36 point 4): the capacity already reaches the template: ready as the KEP says
  // (capacity ≥ min(template, request)), the rollout goes on (rule 5 keeps the request, which
  // the server would not lower to the capacity anyway), and the claim is reported with its way out.
  if (size === "stuck") {
    const namespace = pvc.metadata.namespace ?? "default";
    const wayOut = roundSizeAbove(capBytes!);
    return { unmet: Messages.requestUnmet(name, namespace, spec, allocation!, capacity!, template, wayOut) };
  }
  // Kept: a failed expansion whose capacity is unknown keeps its request.
  if (allocation !== undefined) return undefined;
  // A server that reports no allocatedResourceStatuses (older than 1.34, or the feature off)
  // refuses every decrease: a claim its driver failed to grow stays where it is.
  // (A volume in use is no failure: its expansion waits on the pod.)
  const failing =
    !resizeBlockedByPod(pvc) &&
    pvc.status?.conditions?.some(
      (c) => (c.type === "ControllerResizeError" || c.type === "NodeResizeError") && c.status === "True",
    );
  const olderServer = pvc.status?.allocatedResourceStatuses == null && pvc.status?.allocatedResources === undefined;
  if (olderServer && failing && (capBytes === undefined || capBytes < safeBytes(spec))) {
    return { reason: "ResizeFailed", message: Messages.recoveryNeedsNewerServer(name, spec, template) };
  }
  return undefined;
}

/** Effective class of a PVC: the beta annotation wins over spec.storageClassName, as in the API server. */
export function effectiveClass(pvc: PersistentVolumeClaim): string | undefined {
  return pvc.metadata.annotations?.[Keys.betaStorageClass] ?? pvc.spec.storageClassName ?? undefined;
}

/** One check of rule 6: what the API server would answer to the claim's apply, if not OK. */
type Check = (c: Claim) => Obstacle | undefined;

const unreadableSpec: Check = (c) =>
  c.spec.bad ? { reason: "ApplyRejected", message: Messages.unreadableSpec(c.name, c.spec.bad) } : undefined;

// The class of a claim is immutable (the beta annotation counts).
const classMismatch: Check = (c) => {
  const want = c.t.spec.storageClassName ?? undefined;
  const have = effectiveClass(c.pvc);
  return want !== undefined && want !== have
    ? { reason: "StorageClassMismatch", message: Messages.storageClassMismatch(c.name, c.t.metadata.name, have, want) }
    : undefined;
};

// So are accessModes, volumeMode, selector and data sources.
const immutableFields: Check = (c) => {
  const fields = immutableMismatches(c.t, c.pvc);
  return fields.length
    ? { reason: "ImmutableFieldMismatch", message: Messages.immutableFieldMismatch(c.name, c.t.metadata.name, fields) }
    : undefined;
};

// The spec of an unbound claim is immutable: neither its request nor its VAC may change.
const claimUnbound: Check = (c) =>
  (c.needsExpand || c.changesVac) && c.pvc.status?.phase !== "Bound"
    ? { reason: "ClaimNotBound", message: Messages.claimNotBound(c.name, c.pvc.status?.phase, c.needsExpand) }
    : undefined;

// Expansion needs a dynamically provisioned claim whose class allows it.
const expansionAllowed: Check = (c) => {
  if (!c.needsExpand) return undefined;
  const have = effectiveClass(c.pvc);
  const sc = have !== undefined ? c.scope.classes.get(have) : undefined;
  if (!have) return { reason: "ExpansionNotAllowed", message: Messages.staticallyProvisioned(c.name) };
  if (!sc) return { reason: "ExpansionNotAllowed", message: Messages.storageClassNotFound(c.name, have) };
  return sc.allowVolumeExpansion !== true
    ? { reason: "ExpansionNotAllowed", message: Messages.expansionNotAllowed(c.name, have) }
    : undefined;
};

// A VolumeAttributesClass named must exist.
const classExists: Check = (c) =>
  c.changesVac && !c.scope.vacs?.has(c.vac!)
    ? {
        reason: "VolumeAttributesClassNotFound",
        message: c.scope.vacs
          ? Messages.volumeAttributesClassNotFound(c.name, c.t.metadata.name, c.vac!)
          : Messages.noVolumeAttributesClassApi(c.name, c.t.metadata.name, c.vac!),
      }
    : undefined;

// Issue 36 point 5: the class is for another CSI driver than the one that provisioned the claim:
// only the claim's driver's resizer modifies it, with its own parameters; nothing ever happens.
const classDriverMatches: Check = (c) => {
  const driver = c.changesVac ? c.scope.vacs?.get(c.vac!) : undefined;
  const have = effectiveClass(c.pvc);
  const provisioner = have !== undefined ? c.scope.classes.get(have)?.provisioner : undefined;
  if (driver === undefined || provisioner === undefined || driver === provisioner) return undefined;
  const message = Messages.volumeAttributesClassDriverMismatch(
    c.name,
    c.t.metadata.name,
    c.vac!,
    driver,
    have!,
    provisioner,
  );
  return { reason: "VolumeAttributesClassDriverMismatch", message };
};

// X2: a server that would refuse the lowering a failed expansion needs (recoveryOf).
const loweringRefused: Check = (c) =>
  c.recovery !== undefined && c.recovery !== "lower" && "reason" in c.recovery ? c.recovery : undefined;

/** Rule 6's checks, in the order the API server makes them: the first that answers decides. */
const CHECKS: readonly Check[] = [
  unreadableSpec,
  classMismatch,
  immutableFields,
  claimUnbound,
  expansionAllowed,
  classExists,
  classDriverMatches,
  loweringRefused,
];

/** Rule 6: the API server's predicted answer to the claim's apply, if not OK (never provoked). */
function obstacleOf(c: Claim): Obstacle | undefined {
  for (const check of CHECKS) {
    const obstacle = check(c);
    if (obstacle) return obstacle;
  }
  return undefined;
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x) => b.includes(x)) && b.every((x) => a.includes(x));

/** Immutable PVC spec fields the template sets and the claim differs on (rule 6). */
function immutableMismatches(t: ClaimTemplate, pvc: PersistentVolumeClaim): string[] {
  const out: string[] = [];
  const ts = t.spec;
  const ps = pvc.spec;
  if (ts.accessModes && !sameSet(ts.accessModes, ps.accessModes ?? [])) {
    out.push(`accessModes ${JSON.stringify(ps.accessModes ?? [])} → ${JSON.stringify(ts.accessModes)}`);
  }
  if (ts.volumeMode && (ps.volumeMode ?? "Filesystem") !== ts.volumeMode)
    out.push(`volumeMode ${ps.volumeMode ?? "Filesystem"} → ${ts.volumeMode}`);
  for (const field of ["selector", "dataSource", "dataSourceRef"] as const) {
    if (ts[field] && !sameJson(ts[field], ps[field] ?? null)) out.push(field);
  }
  return out;
}

/**
 * The apply of rule 7: storage = the target, the template's VAC, labels (with the revision) and
 * annotations. Rule 19: a resize keeps the claim's class; the template's follows once the resize is
 * done, and so does the revision: stamped now, the claim would be done (rule 20), its class never written.
 */
function patchOf(c: Claim, ordinal: number): PatchClaim {
  const { t, pvc } = c;
  const classLater = (c.needsExpand || c.lowers) && c.changesVac;
  const labels = { ...(t.metadata.labels ?? {}), [Keys.revisionLabel]: c.scope.revision };
  const previous = pvc.metadata.labels?.[Keys.revisionLabel];
  const { [Keys.revisionLabel]: _stamp, ...unstamped } = labels;
  const sizeFirst = previous !== undefined ? { ...unstamped, [Keys.revisionLabel]: previous } : unstamped;
  const vac = classLater ? undefined : (t.spec.volumeAttributesClassName ?? undefined);
  return {
    type: "PatchClaim",
    namespace: c.scope.namespace,
    claim: c.name,
    template: t.metadata.name,
    ordinal,
    storage: c.target,
    // SSA drops fields claimstep owned and omits: carry the claim's class rather than clear it.
    ...(vac !== undefined
      ? { volumeAttributesClassName: vac }
      : pvc.spec.volumeAttributesClassName
        ? { volumeAttributesClassName: pvc.spec.volumeAttributesClassName }
        : {}),
    labels: classLater ? sizeFirst : labels,
    annotations: { ...(t.metadata.annotations ?? {}) },
    ...(classLater && t.spec.volumeAttributesClassName ? { classFollows: t.spec.volumeAttributesClassName } : {}),
    ...(pvc.metadata.uid !== undefined ? { uid: pvc.metadata.uid } : {}),
    ...(pvc.metadata.resourceVersion !== undefined ? { resourceVersion: pvc.metadata.resourceVersion } : {}),
  };
}

/** An ordinal outside the scope (below the partition, or condemned): its claims as found, for the report only. */
export function reportOrdinal(scope: Scope, ordinal: number): OrdinalPlan {
  return {
    ordinal,
    claims: scope.claimTemplates.map((t) => {
      const name = claimName(t.metadata.name, scope.setName, ordinal);
      const pvc = scope.claims.get(name);
      const readiness = pvc
        ? claimReadiness(pvc, { storageBytes: safeBytes(pvc.spec.resources?.requests?.storage) }, name)
        : claimReadiness(scope.deleting.get(name), { storageBytes: 0n }, name);
      const report: ClaimReport = {
        template: t.metadata.name,
        claim: name,
        exists: pvc !== undefined,
        ...(pvc?.spec.resources?.requests?.storage !== undefined ? { spec: pvc.spec.resources.requests.storage } : {}),
        ...(pvc?.status?.capacity?.storage !== undefined ? { capacity: pvc.status.capacity.storage } : {}),
        ...(pvc?.metadata.labels?.[Keys.revisionLabel] !== undefined
          ? { revision: pvc.metadata.labels[Keys.revisionLabel] }
          : {}),
        readiness,
      };
      return { report, template: t, needsUpdate: false, done: false, inFlight: false, ...(pvc ? { pvc } : {}) };
    }),
  };
}

const safeBytes = (q: string | number | undefined): bigint => {
  if (q === undefined) return 0n;
  try {
    return parseQuantity(q) >= 0n ? toBytes(q) : 0n;
  } catch {
    return 0n;
  }
};

/** The state of an ordinal in scope, from its claims. */
export function stateOf(o: OrdinalPlan): OrdinalReport["state"] {
  if (
    o.claims.some(
      (c) => (c.obstacle && phaseOf(c.obstacle.reason) === "Blocked") || c.report.readiness.state === "Failed",
    )
  )
    return "Blocked";
  if (o.claims.every((c) => c.done)) return "Updated";
  if (o.claims.some((c) => c.needsUpdate || !c.report.exists))
    return o.claims.some((c) => c.inFlight) ? "InFlight" : "Pending";
  return "InFlight";
}

/** One row of the per-ordinal table. */
export function ordinalReport(scope: Scope, o: OrdinalPlan, state: OrdinalReport["state"]): OrdinalReport {
  const pod = podName(scope.setName, o.ordinal);
  const phase = scope.podPhases.get(pod);
  return {
    ordinal: o.ordinal,
    pod,
    ...(phase ? { podPhase: phase } : {}),
    ...podColumns(scope, o.ordinal),
    state,
    claims: o.claims.map((c) => c.report),
  };
}
