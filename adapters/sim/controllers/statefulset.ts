// The StatefulSet controller, as far as claims are concerned: for every ordinal in
// [start, start + replicas) it creates the claims from the live volumeClaimTemplates (named
// <template>-<set>-<ordinal>, labelled with the set's selector.matchLabels and the template's
// labels) and then the pod; pods outside the range are deleted, highest first; claims are kept
// (persistentVolumeClaimRetentionPolicy Retain). OrderedReady creates one pod at a time.
import type { ClaimTemplate, StatefulSet } from "../../../core/k8s.js";
import { claimName, podName, podOrdinal } from "../../../core/statefulset.js";
import type { Json } from "../store.js";
import { CONTROLLER_MANAGER, claimsOf, podsOf, type ControllerContext, type Pod } from "./context.js";

const ACTOR = "statefulset-controller";

const ordinalOfPod = (set: StatefulSet, pod: Pod): number | undefined => podOrdinal(pod.metadata.name, set.metadata.name);

const ownedBy = (set: StatefulSet, pod: Pod): boolean =>
  (((pod.metadata as Json).ownerReferences as Json[] | undefined) ?? []).some((o) => o.uid === set.metadata.uid);

const isReady = (pod: Pod | undefined): boolean =>
  pod?.status?.phase === "Running" && (pod.status.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");

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

function podFor(set: StatefulSet, ordinal: number): Json {
  const name = podName(set.metadata.name, ordinal);
  const template = (set.spec as Json).template as Json | undefined;
  const templateMeta = (template?.metadata as Json | undefined) ?? {};
  const templateSpec = (template?.spec as Json | undefined) ?? {};
  return {
    metadata: {
      name,
      namespace: set.metadata.namespace ?? "default",
      labels: {
        ...((templateMeta.labels as Record<string, string> | undefined) ?? set.spec.selector.matchLabels ?? {}),
        "controller-revision-hash": `${set.metadata.name}-sim`,
        "statefulset.kubernetes.io/pod-name": name,
        "apps.kubernetes.io/pod-index": String(ordinal),
      },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "StatefulSet", name: set.metadata.name, uid: set.metadata.uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      ...structuredClone(templateSpec),
      containers: (templateSpec.containers as Json[] | undefined) ?? [{ name: "app", image: "registry.k8s.io/pause:3.9" }],
      volumes: (set.spec.volumeClaimTemplates ?? []).map((t) => ({
        name: t.metadata.name,
        persistentVolumeClaim: { claimName: claimName(t.metadata.name, set.metadata.name, ordinal) },
      })),
      hostname: name,
      subdomain: set.spec.serviceName ?? set.metadata.name,
    },
    status: { phase: "Pending" },
  };
}

export function syncStatefulSets(ctx: ControllerContext): void {
  for (const raw of ctx.store.all("statefulsets")) {
    const set = raw as unknown as StatefulSet;
    const namespace = set.metadata.namespace ?? "default";
    const start = set.spec.ordinals?.start ?? 0;
    const end = start + (set.spec.replicas ?? 1);
    const parallel = (set.spec as Json).podManagementPolicy === "Parallel";
    const pods = podsOf(ctx).filter((p) => p.metadata.namespace === namespace && ownedBy(set, p));
    const byOrdinal = new Map<number, Pod>();
    for (const p of pods) {
      const o = ordinalOfPod(set, p);
      if (o !== undefined) byOrdinal.set(o, p);
    }

    // Condemned pods first, highest ordinal first (one at a time unless Parallel).
    const condemned = [...byOrdinal.keys()].filter((o) => o < start || o >= end).sort((a, b) => b - a);
    for (const o of parallel ? condemned : condemned.slice(0, 1)) ctx.store.remove("pods", namespace, byOrdinal.get(o)!.metadata.name, ACTOR);
    if (condemned.length && !parallel) continue;

    const claimNames = new Set(claimsOf(ctx).filter((c) => c.metadata.namespace === namespace).map((c) => c.metadata.name));
    for (let o = start; o < end; o++) {
      for (const t of set.spec.volumeClaimTemplates ?? []) {
        const name = claimName(t.metadata.name, set.metadata.name, o);
        if (!claimNames.has(name)) {
          ctx.store.insert("persistentvolumeclaims", claimFor(set, t, o), CONTROLLER_MANAGER, ACTOR);
          claimNames.add(name);
        }
      }
      const pod = byOrdinal.get(o);
      if (!pod) {
        ctx.store.insert("pods", podFor(set, o), CONTROLLER_MANAGER, ACTOR);
        if (!parallel) break;
      } else if (!parallel && !isReady(pod)) {
        break;
      }
    }
  }
}
