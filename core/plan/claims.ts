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

function evaluateClaim(scope: Scope, t: ClaimTemplate, ordinal: number): ClaimPlan {
  // Rule 4: the claim `<template>-<set>-<ordinal>`; a missing one is left to the StatefulSet controller.
  const name = claimName(t.metadata.name, scope.setName, ordinal);
  const pvc = scope.claims.get(name);
  const tplStorage = t.spec.resources!.requests!.storage!; // validated by desiredTemplates
  const tplBytes = toBytes(tplStorage);
  const vac = t.spec.volumeAttributesClassName ?? undefined;
  if (!pvc) {
    // Missing, or being deleted (rule 13): readiness says which.
    const deleting = scope.deleting.get(name);
    const readiness = claimReadiness(deleting, { storageBytes: tplBytes }, name);
    // Rules 9 and 13: a claim claimstep wrote that is then deleted is never ready again, and its
    // ordinal is no less disrupted: it keeps the slot, so no other ordinal starts in its place.
    const inFlight = deleting?.metadata.labels?.[Keys.revisionLabel] !== undefined;
    return {
      template: t,
      needsUpdate: false,
      done: false,
      inFlight,
      report: { template: t.metadata.name, claim: name, exists: false, target: tplStorage, readiness },
    };
  }

  // Rule 14: a JSON number is a quantity too (objects not parsed by the schemas may carry one).
  const rawSpec = pvc.spec.resources?.requests?.storage as string | number | undefined;
  let specStorage = rawSpec === undefined ? undefined : String(rawSpec);
  let specBytes = 0n;
  let badSpec: string | undefined;
  try {
    specStorage = rawSpec === undefined ? undefined : quantityString(rawSpec);
    specBytes = specStorage === undefined ? 0n : toBytes(specStorage);
  } catch (err) {
    badSpec = (err as Error).message;
  }
  const readableSpec = specStorage !== undefined && !badSpec;

  // X1–X3: a claim whose expansion failed comes back down to the template when the server allows it.
  // Rule 20: a claim stamped with the current revision is done: never written again, whatever its
  // size, class, labels or annotations now (someone may tune one replica, as the KEP allows).
  const atRevision = pvc.metadata.labels?.[Keys.revisionLabel] === scope.revision;
  const size = readableSpec ? sizeChangeOf(tplBytes, claimSizeOf(pvc, specBytes)) : undefined;
  const recovery =
    size === "kept" || size === "recover" || size === "stuck"
      ? recoveryOf(pvc, name, specStorage!, tplStorage, size)
      : undefined;
  const lowers = recovery === "lower" && !atRevision;
  // Rule 5: the target is max(template, claim spec): never ask for less than the claim already
  // requests, except X1 (the template's request, lowering a failed expansion).
  const target =
    atRevision && readableSpec
      ? specStorage!
      : lowers || size === undefined || size === "grow"
        ? tplStorage
        : specStorage!;
  // Rule 8 measures readiness at what the template asks: min(template, spec).
  const required = readableSpec && specBytes < tplBytes ? specBytes : tplBytes;

  // Rule 7: the claim needs an update when below target, on another VAC, missing template
  // labels/annotations, or not at the revision (rule 20: never once at it).
  const labels = { ...(t.metadata.labels ?? {}), [Keys.revisionLabel]: scope.revision };
  const needsExpand = !atRevision && specBytes < tplBytes;
  const changesVac = !atRevision && vac !== undefined && pvc.spec.volumeAttributesClassName !== vac;
  const needsUpdate =
    !atRevision &&
    (needsExpand ||
      lowers ||
      changesVac ||
      !hasAll(pvc.metadata.labels, labels) ||
      !hasAll(pvc.metadata.annotations, t.metadata.annotations));
  // Rule 19: the size first, the class once the claim's resize is done: a claim changing both in
  // one apply has the resizer's expansion and modification controllers fight (409s) over it.
  const resizes = needsExpand || lowers;
  const classHeld =
    changesVac && !resizes && readableSpec && RESIZING.includes(claimReadiness(pvc, { storageBytes: specBytes }).state);

  // Rule 8: ready at min(template, spec) and at the VAC the template names (rule 20: a claim at the
  // revision, at the class it has now: someone may have moved it to another).
  const readyVac = atRevision ? (pvc.spec.volumeAttributesClassName ?? undefined) : vac;
  const found: ClaimReadiness = claimReadiness(
    pvc,
    {
      storageBytes: required,
      ...(readyVac
        ? {
            volumeAttributesClassName: readyVac,
            ...(scope.vacs ? { volumeAttributesClassExists: scope.vacs.has(readyVac) } : {}),
          }
        : {}),
    },
    name,
  );
  const capacity = pvc.status?.capacity?.storage;
  const readiness: ClaimReadiness =
    classHeld && found.state !== "Ready" && found.state !== "Failed"
      ? { ...found, message: Messages.classAfterResize(found.message, vac!) }
      : found.state === "Failed" && found.reason === "ResizeFailed" && readableSpec && capacity !== undefined
        ? // Issue 36 point 7: the way out, X1, with sizes a person writes.
          {
            ...found,
            message: Messages.resizeFailedWayOut(
              found.message,
              scope.setName,
              scope.namespace,
              t.metadata.name,
              specStorage!,
              quantityString(capacity),
              roundSizeAbove(safeBytes(capacity)),
            ),
          }
        : found;
  // Rule 9: a claim claimstep stamped earlier that is still settling its own request holds a slot too.
  const stamped = pvc.metadata.labels?.[Keys.revisionLabel] !== undefined;
  const settling =
    stamped && !atRevision && readableSpec
      ? claimReadiness(
          pvc,
          {
            storageBytes: specBytes,
            ...(pvc.spec.volumeAttributesClassName
              ? { volumeAttributesClassName: pvc.spec.volumeAttributesClassName }
              : {}),
          },
          name,
        )
      : undefined;
  const inFlight =
    classHeld ||
    (atRevision && !needsUpdate && readiness.state !== "Ready") ||
    (settling !== undefined &&
      settling.state !== "Ready" &&
      settling.state !== "Failed" &&
      settling.state !== "NotBound");

  const plan: ClaimPlan = {
    report: claimReport(scope, t, name, pvc, specStorage, target, vac, needsUpdate, readiness),
    template: t,
    pvc,
    needsUpdate: needsUpdate || !atRevision,
    done: atRevision && !needsUpdate && readiness.state === "Ready",
    inFlight,
    ...(classHeld ? { classHeld } : {}),
    ...(recovery !== undefined && recovery !== "lower" && "unmet" in recovery ? { unmet: recovery.unmet } : {}),
  };
  if (!plan.needsUpdate) return plan;

  // Rule 6: predict the API server's answer (X2: it refuses the lowering recovery would need).
  const obstacle =
    obstacleOf(scope, t, pvc, name, needsExpand, badSpec) ??
    (recovery !== undefined && recovery !== "lower" && "reason" in recovery ? recovery : undefined);
  if (obstacle) return { ...plan, obstacle };
  if (classHeld) return plan;

  // Rule 7: one server-side apply of this claim, carrying only the fields claimstep owns (rule 19:
  // a resize keeps the claim's class; the template's follows once the resize is done, and so does
  // the revision: stamped now, the claim would be done (rule 20) and its class never written).
  const classLater = resizes && changesVac;
  const previous = pvc.metadata.labels?.[Keys.revisionLabel];
  const { [Keys.revisionLabel]: _stamp, ...unstamped } = labels;
  const sizeFirst = previous !== undefined ? { ...unstamped, [Keys.revisionLabel]: previous } : unstamped;
  return { ...plan, patch: patchOf(scope, t, pvc, name, ordinal, target, classLater ? sizeFirst : labels, classLater) };
}

/** Storage readiness states of a resize under way (rule 19 holds a class change back while one is). */
const RESIZING: readonly ClaimReadiness["state"][] = ["Resizing", "WaitingForPod", "Retrying"];

const hasAll = (have: Record<string, string> | undefined, want: Record<string, string> | undefined): boolean =>
  Object.entries(want ?? {}).every(([k, v]) => have?.[k] === v);

function claimReport(
  scope: Scope,
  t: ClaimTemplate,
  name: string,
  pvc: PersistentVolumeClaim,
  specStorage: string | undefined,
  target: string,
  vac: string | undefined,
  needsUpdate: boolean,
  readiness: ClaimReadiness,
): ClaimReport {
  const currentVac = pvc.status?.currentVolumeAttributesClassName;
  return {
    template: t.metadata.name,
    claim: name,
    exists: true,
    ...(specStorage !== undefined ? { spec: specStorage } : {}),
    ...(pvc.status?.capacity?.storage !== undefined ? { capacity: pvc.status.capacity.storage } : {}),
    target,
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
      needsUpdate && readiness.state === "Ready"
        ? { state: "Behind", message: Messages.notAtRevision(name, scope.revision) }
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
): "lower" | Obstacle | { unmet: string } | undefined {
  const statuses = pvc.status?.allocatedResourceStatuses ?? undefined;
  // Rule 17: a node-side failure lasts as NodeResizeError once NodeResizeInfeasible is gone.
  const allocation = failedExpansionOf(pvc);
  const capacity = pvc.status?.capacity?.storage;
  const capBytes = capacity === undefined ? undefined : safeBytes(capacity);
  if (allocation !== undefined) {
    // Rule 5 and X1 (sizeChangeOf): kept when the capacity is unknown, lowered when above it.
    if (size === "kept") return undefined;
    if (size === "recover") return "lower";
    // X2 (issue 36 point 4): the capacity already reaches the template: ready as the KEP says
    // (capacity ≥ min(template, request)), the rollout goes on (rule 5 keeps the request, which
    // the server would not lower to the capacity anyway), and the claim is reported with its way out.
    return {
      unmet: Messages.requestUnmet(
        name,
        pvc.metadata.namespace ?? "default",
        spec,
        allocation,
        capacity!,
        template,
        roundSizeAbove(capBytes!),
      ),
    };
  }
  // A server that reports no allocatedResourceStatuses (older than 1.34, or the feature off)
  // refuses every decrease: a claim its driver failed to grow stays where it is.
  // (A volume in use is no failure: its expansion waits on the pod.)
  const failing =
    !resizeBlockedByPod(pvc) &&
    pvc.status?.conditions?.some(
      (c) => (c.type === "ControllerResizeError" || c.type === "NodeResizeError") && c.status === "True",
    );
  const olderServer = statuses === undefined && pvc.status?.allocatedResources === undefined;
  if (olderServer && failing && (capBytes === undefined || capBytes < safeBytes(spec))) {
    return { reason: "ResizeFailed", message: Messages.recoveryNeedsNewerServer(name, spec, template) };
  }
  return undefined;
}

/** Effective class of a PVC: the beta annotation wins over spec.storageClassName, as in the API server. */
export function effectiveClass(pvc: PersistentVolumeClaim): string | undefined {
  return pvc.metadata.annotations?.[Keys.betaStorageClass] ?? pvc.spec.storageClassName ?? undefined;
}

/** Rule 6, in the order the API server checks: what it would answer to the apply, if not OK. */
function obstacleOf(
  scope: Scope,
  t: ClaimTemplate,
  pvc: PersistentVolumeClaim,
  name: string,
  needsExpand: boolean,
  badSpec: string | undefined,
): Obstacle | undefined {
  if (badSpec) return { reason: "ApplyRejected", message: Messages.unreadableSpec(name, badSpec) };

  // The class of a claim is immutable (the beta annotation counts).
  const wantClass = t.spec.storageClassName ?? undefined;
  const haveClass = effectiveClass(pvc);
  if (wantClass !== undefined && wantClass !== haveClass) {
    return {
      reason: "StorageClassMismatch",
      message: Messages.storageClassMismatch(name, t.metadata.name, haveClass, wantClass),
    };
  }

  // So are accessModes, volumeMode, selector and data sources.
  const immutable = immutableMismatches(t, pvc);
  if (immutable.length)
    return {
      reason: "ImmutableFieldMismatch",
      message: Messages.immutableFieldMismatch(name, t.metadata.name, immutable),
    };

  // The spec of an unbound claim is immutable: neither its request nor its VAC may change.
  const changesVac =
    t.spec.volumeAttributesClassName != null && pvc.spec.volumeAttributesClassName !== t.spec.volumeAttributesClassName;
  if ((needsExpand || changesVac) && pvc.status?.phase !== "Bound") {
    return { reason: "ClaimNotBound", message: Messages.claimNotBound(name, pvc.status?.phase, needsExpand) };
  }

  // Expansion needs a dynamically provisioned claim whose class allows it.
  if (needsExpand) {
    const sc = haveClass !== undefined ? scope.classes.get(haveClass) : undefined;
    if (!haveClass) return { reason: "ExpansionNotAllowed", message: Messages.staticallyProvisioned(name) };
    if (!sc) return { reason: "ExpansionNotAllowed", message: Messages.storageClassNotFound(name, haveClass) };
    if (sc.allowVolumeExpansion !== true)
      return { reason: "ExpansionNotAllowed", message: Messages.expansionNotAllowed(name, haveClass) };
  }

  // A VolumeAttributesClass named must exist.
  const vac = t.spec.volumeAttributesClassName ?? undefined;
  if (vac !== undefined && pvc.spec.volumeAttributesClassName !== vac && !scope.vacs?.has(vac)) {
    return {
      reason: "VolumeAttributesClassNotFound",
      message: scope.vacs
        ? Messages.volumeAttributesClassNotFound(name, t.metadata.name, vac)
        : Messages.noVolumeAttributesClassApi(name, t.metadata.name, vac),
    };
  }
  // Issue 36 point 5: the class is for another CSI driver than the one that provisioned the claim:
  // only the claim's driver's resizer modifies it, with its own parameters; nothing ever happens.
  const driver = vac !== undefined && pvc.spec.volumeAttributesClassName !== vac ? scope.vacs?.get(vac) : undefined;
  const provisioner = haveClass !== undefined ? scope.classes.get(haveClass)?.provisioner : undefined;
  if (driver !== undefined && provisioner !== undefined && driver !== provisioner) {
    return {
      reason: "VolumeAttributesClassDriverMismatch",
      message: Messages.volumeAttributesClassDriverMismatch(
        name,
        t.metadata.name,
        vac!,
        driver,
        haveClass!,
        provisioner,
      ),
    };
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
 * The apply of rule 7: storage = the target, the template's VAC (the claim's own while a resize
 * goes first, rule 19), labels (with the revision) and annotations.
 */
function patchOf(
  scope: Scope,
  t: ClaimTemplate,
  pvc: PersistentVolumeClaim,
  name: string,
  ordinal: number,
  target: string,
  labels: Record<string, string>,
  classLater: boolean,
): PatchClaim {
  const vac = classLater ? undefined : (t.spec.volumeAttributesClassName ?? undefined);
  return {
    type: "PatchClaim",
    namespace: scope.namespace,
    claim: name,
    template: t.metadata.name,
    ordinal,
    storage: target,
    // SSA drops fields claimstep owned and omits: carry the claim's class rather than clear it.
    ...(vac !== undefined
      ? { volumeAttributesClassName: vac }
      : pvc.spec.volumeAttributesClassName
        ? { volumeAttributesClassName: pvc.spec.volumeAttributesClassName }
        : {}),
    labels,
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
