// The disruption controller (pkg/controller/disruption/disruption.go), and what the Eviction
// subresource shares with it: for every PodDisruptionBudget, from the pods its selector matches,
//   expectedPods    len(pods) for an integer minAvailable; else the replicas of the pods' controllers
//   desiredHealthy  minAvailable (an integer, or a percent of expectedPods rounded up), or
//                   expectedPods − maxUnavailable (a percent rounded up), at least 0
//   currentHealthy  Ready pods, less those being deleted and those in disruptedPods (evicted, or
//                   charged by an eviction, less than DeletionTimeout = 2 minutes ago)
//   disruptionsAllowed = max(0, currentHealthy − desiredHealthy)
// disruptedPods entries of pods that no longer exist, are being deleted, or are older than
// DeletionTimeout are dropped (the controller wakes at each expiry); condition DisruptionAllowed
// (SufficientPods / InsufficientPods); observedGeneration. The status is written only when it
// changes, through the status subresource.

import type { LabelSelector } from "../../../core/kube/index.js";
import { encodeLabelSelector, matchesLabels, parseLabelSelector } from "../../kube/label-selector.js";
import type { ManagerRef } from "../errors.js";
import type { Json, Store } from "../store.js";
import type { ControllerContext } from "./context.js";

/** How long an eviction keeps charging a budget for a pod that was not deleted (DeletionTimeout). */
export const DELETION_TIMEOUT_MS = 2 * 60_000;

const DISRUPTION_CONTROLLER: ManagerRef = {
  manager: "kube-controller-manager",
  operation: "Update",
  apiVersion: "v1",
  subresource: "status",
};
const ACTOR = "disruption-controller";

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const metaOf = (o: Json) =>
  o.metadata as Json & {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    generation?: number;
    uid?: string;
  };

/** A pod's Ready condition (podutil.IsPodReady: the condition alone, not the phase). */
export const isPodReady = (pod: Json): boolean =>
  (((pod.status as Json | undefined)?.conditions as Json[] | undefined) ?? []).some(
    (c) => c.type === "Ready" && c.status === "True",
  );

/**
 * An int-or-percent scaled to `total` (intstr.GetScaledValueFromIntOrPercent): an integer as
 * is, `"<n>%"` of total rounded up or down; undefined for anything else.
 */
export function scaledIntOrPercent(v: unknown, total: number, roundUp: boolean): number | undefined {
  if (typeof v === "number" && Number.isInteger(v)) return v;
  if (typeof v === "string") {
    const m = /^(\d+)%$/.exec(v);
    if (m) {
      const x = (Number(m[1]) * total) / 100;
      return roundUp ? Math.ceil(x) : Math.floor(x);
    }
    if (/^\d+$/.test(v)) return undefined; // an integer written as a string is not an int-or-percent
  }
  return undefined;
}

const selects = (selector: unknown, labels: Record<string, string>): boolean => {
  // policy/v1: an empty selector matches every pod of the namespace; a missing one, none.
  if (!isObject(selector)) return false;
  return matchesLabels(parseLabelSelector(encodeLabelSelector(selector as LabelSelector)), labels);
};

/** The budgets whose selector matches a pod (the eviction subresource's getPodDisruptionBudgets). */
export function budgetsOf(store: Store, pod: Json): Json[] {
  const m = metaOf(pod);
  return store
    .all("poddisruptionbudgets", m.namespace)
    .filter((b) => selects((b.spec as Json | undefined)?.selector, m.labels ?? {}));
}

/** Condition DisruptionAllowed from status.disruptionsAllowed (pdbhelper.UpdateDisruptionAllowedCondition). */
export function setDisruptionAllowedCondition(status: Json, stamp: string): void {
  const allowed = Number(status.disruptionsAllowed ?? 0) > 0;
  const wanted = {
    type: "DisruptionAllowed",
    status: allowed ? "True" : "False",
    reason: allowed ? "SufficientPods" : "InsufficientPods",
    message: "",
    observedGeneration: status.observedGeneration,
  };
  const conditions = ((status.conditions as Json[] | undefined) ?? []).map((c) => ({ ...c }));
  const at = conditions.findIndex((c) => c.type === "DisruptionAllowed");
  if (at < 0) conditions.push({ ...wanted, lastTransitionTime: stamp });
  else {
    const old = conditions[at]!;
    // apimeta.SetStatusCondition: the transition time moves only when the status does.
    conditions[at] = { ...wanted, lastTransitionTime: old.status === wanted.status ? old.lastTransitionTime : stamp };
  }
  status.conditions = conditions;
}

function conditionUpToDate(status: Json, generation: number): boolean {
  const c = ((status.conditions as Json[] | undefined) ?? []).find((x) => x.type === "DisruptionAllowed");
  if (!c || status.observedGeneration !== generation) return false;
  return Number(status.disruptionsAllowed ?? 0) > 0
    ? c.status === "True" && c.reason === "SufficientPods"
    : c.status === "False" && c.reason === "InsufficientPods";
}

/** expectedPods and desiredHealthy (getExpectedPodCount). */
function expectations(ctx: ControllerContext, spec: Json, pods: Json[]): { expected: number; desired: number } {
  const scale = (): number => {
    // The replicas of each distinct controller of the pods (a StatefulSet's spec.replicas).
    const seen = new Map<string, number>();
    for (const p of pods) {
      const ref = ((metaOf(p).ownerReferences as Json[] | undefined) ?? []).find((o) => o.controller === true);
      if (!ref || seen.has(String(ref.uid))) continue;
      const owner =
        ref.kind === "StatefulSet" ? ctx.store.peek("statefulsets", metaOf(p).namespace, String(ref.name)) : undefined;
      if (owner && metaOf(owner).uid === ref.uid)
        seen.set(String(ref.uid), Number((owner.spec as Json | undefined)?.replicas ?? 1));
    }
    return [...seen.values()].reduce((a, b) => a + b, 0);
  };
  if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
    const expected = scale();
    const maxUnavailable = scaledIntOrPercent(spec.maxUnavailable, expected, true) ?? 0;
    return { expected, desired: Math.max(0, expected - maxUnavailable) };
  }
  if (typeof spec.minAvailable === "number") return { expected: pods.length, desired: spec.minAvailable };
  if (typeof spec.minAvailable === "string") {
    const expected = scale();
    return { expected, desired: scaledIntOrPercent(spec.minAvailable, expected, true) ?? 0 };
  }
  return { expected: pods.length, desired: 0 };
}

export function syncDisruptionBudgets(ctx: ControllerContext): void {
  const now = ctx.clock.nowMs();
  for (const pdb of ctx.store.all("poddisruptionbudgets")) {
    const m = metaOf(pdb);
    const spec = (pdb.spec as Json | undefined) ?? {};
    const pods = ctx.store.all("pods", m.namespace).filter((p) => selects(spec.selector, metaOf(p).labels ?? {}));
    const { expected, desired } = expectations(ctx, spec, pods);
    const status = (pdb.status as Json | undefined) ?? {};
    const charged = isObject(status.disruptedPods) ? (status.disruptedPods as Record<string, string>) : {};
    // buildDisruptedPodMap
    const disrupted: Record<string, string> = {};
    for (const p of pods) {
      if (metaOf(p).deletionTimestamp) continue;
      const at = charged[metaOf(p).name];
      if (at === undefined) continue;
      const expiry = Date.parse(at) + DELETION_TIMEOUT_MS;
      if (expiry <= now) continue;
      disrupted[metaOf(p).name] = at;
      ctx.clock.wakeAt(expiry);
    }
    const currentHealthy = pods.filter(
      (p) => !metaOf(p).deletionTimestamp && disrupted[metaOf(p).name] === undefined && isPodReady(p),
    ).length;
    const allowed = expected <= 0 ? 0 : Math.max(0, currentHealthy - desired);
    const generation = Number(m.generation ?? 1);
    if (
      status.currentHealthy === currentHealthy &&
      status.desiredHealthy === desired &&
      status.expectedPods === expected &&
      status.disruptionsAllowed === allowed &&
      JSON.stringify(charged) === JSON.stringify(disrupted) &&
      conditionUpToDate(status, generation)
    ) {
      continue;
    }
    const next = structuredClone(pdb);
    const nextStatus: Json = {
      observedGeneration: generation,
      ...(Object.keys(disrupted).length ? { disruptedPods: disrupted } : {}),
      disruptionsAllowed: allowed,
      currentHealthy,
      desiredHealthy: desired,
      expectedPods: expected,
      ...(status.conditions ? { conditions: structuredClone(status.conditions) } : {}),
    };
    setDisruptionAllowedCondition(nextStatus, ctx.clock.stamp());
    next.status = nextStatus;
    ctx.store.replace("poddisruptionbudgets", next, { manager: DISRUPTION_CONTROLLER }, ACTOR, "status");
  }
}
