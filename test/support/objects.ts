// Fixture-shaped objects for seeding the simulated cluster: a StatefulSet with its pods and claims at any
// replica count, cloned from the captured `web` objects so sizes and shapes stay realistic.
import type { LabelSelector } from "../../core/kube/k8s.js";
import { fixture } from "../fixtures/apiserver.js";

/** An object as the simulated cluster seeds it: its kind decides where it is stored. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface TemplateSpec {
  name: string;
  storage: string;
  storageClassName?: string;
  volumeAttributesClassName?: string;
  labels?: Record<string, string>;
}

export interface SetScenario {
  name?: string;
  namespace?: string;
  replicas?: number;
  /** Live spec.volumeClaimTemplates; default one `data` template of 1Gi in class `fast`. */
  templates?: TemplateSpec[];
  /** Desired templates: written to `claimstep.io/volume-claim-templates`. */
  desired?: TemplateSpec[];
  /** `claimstep.io/volume-claim-update-strategy`; default InPlace, null for none. */
  strategy?: string | null;
  selector?: LabelSelector;
  partition?: number;
  maxUnavailable?: number | string;
  ordinalsStart?: number;
  /** Phase of every claim; default Bound (capacity = request). */
  claimPhase?: "Bound" | "Pending";
}

export const DEFAULT_TEMPLATES: TemplateSpec[] = [{ name: "data", storage: "1Gi", storageClassName: "fast" }];

/** A volumeClaimTemplate as the API server stores it. */
export function claimTemplate(t: TemplateSpec) {
  return {
    kind: "PersistentVolumeClaim",
    apiVersion: "v1",
    metadata: { name: t.name, ...(t.labels ? { labels: t.labels } : {}) },
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: t.storage } },
      ...(t.storageClassName ? { storageClassName: t.storageClassName } : {}),
      volumeMode: "Filesystem",
      ...(t.volumeAttributesClassName ? { volumeAttributesClassName: t.volumeAttributesClassName } : {}),
    },
    status: { phase: "Pending" },
  };
}

let serial = 0;
const uid = () => `10000000-0000-4000-8000-${(++serial).toString(16).padStart(12, "0")}`;

/** The StatefulSet, its pods and its claims (kind set on each, ready to seed). */
export function statefulSetObjects(s: SetScenario = {}): KubeObject[] {
  const name = s.name ?? "web";
  const namespace = s.namespace ?? "default";
  const replicas = s.replicas ?? 3;
  const start = s.ordinalsStart ?? 0;
  const templates = s.templates ?? DEFAULT_TEMPLATES;
  const selector = s.selector ?? { matchLabels: { app: name } };
  const podLabels: Record<string, string> = { ...(selector.matchLabels ?? {}) };
  for (const e of selector.matchExpressions ?? []) if (e.operator === "In") podLabels[e.key] = e.values![0]!;

  const set: any = structuredClone(fixture("statefulset-web").body);
  delete set.metadata.managedFields;
  set.metadata.name = name;
  set.metadata.namespace = namespace;
  set.metadata.uid = uid();
  set.metadata.annotations = {
    ...(s.strategy === null ? {} : { "claimstep.io/volume-claim-update-strategy": s.strategy ?? "InPlace" }),
    ...(s.desired ? { "claimstep.io/volume-claim-templates": JSON.stringify(s.desired.map(claimTemplate)) } : {}),
  };
  set.spec.replicas = replicas;
  set.spec.selector = selector;
  set.spec.serviceName = name;
  set.spec.template.metadata.labels = podLabels;
  set.spec.volumeClaimTemplates = templates.map(claimTemplate);
  set.spec.updateStrategy = {
    type: "RollingUpdate",
    rollingUpdate: { partition: s.partition ?? 0, maxUnavailable: s.maxUnavailable ?? 1 },
  };
  if (s.ordinalsStart !== undefined) set.spec.ordinals = { start: s.ordinalsStart };
  set.status.replicas =
    set.status.readyReplicas =
    set.status.currentReplicas =
    set.status.updatedReplicas =
    set.status.availableReplicas =
      replicas;

  const podShape: any = fixture("pod-list").body.items[0];
  const claimShape: any = fixture("pvc-list").body.items[0];
  const objects: KubeObject[] = [set];
  for (let ordinal = start; ordinal < start + replicas; ordinal++) {
    const pod: any = structuredClone(podShape);
    pod.kind = "Pod";
    pod.metadata.name = `${name}-${ordinal}`;
    pod.metadata.generateName = `${name}-`;
    pod.metadata.namespace = namespace;
    pod.metadata.uid = uid();
    pod.metadata.labels = {
      ...podLabels,
      "controller-revision-hash": `${name}-5869dd78fd`,
      "statefulset.kubernetes.io/pod-name": pod.metadata.name,
    };
    pod.metadata.ownerReferences = [
      {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        name,
        uid: set.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ];
    pod.spec.hostname = pod.metadata.name;
    pod.spec.subdomain = name;
    pod.spec.volumes = templates.map((t) => ({
      name: t.name,
      persistentVolumeClaim: { claimName: `${t.name}-${name}-${ordinal}` },
    }));
    objects.push(pod);
    for (const t of templates) {
      const pvc: any = structuredClone(claimShape);
      pvc.kind = "PersistentVolumeClaim";
      pvc.metadata.name = `${t.name}-${name}-${ordinal}`;
      pvc.metadata.namespace = namespace;
      pvc.metadata.uid = uid();
      pvc.metadata.labels = { ...(t.labels ?? {}), ...(selector.matchLabels ?? {}) };
      pvc.spec = structuredClone(claimTemplate(t).spec);
      const bound = (s.claimPhase ?? "Bound") === "Bound";
      if (bound) pvc.spec.volumeName = `pvc-${pvc.metadata.uid}`;
      pvc.status = bound
        ? {
            phase: "Bound",
            accessModes: ["ReadWriteOnce"],
            capacity: { storage: t.storage },
            ...(t.volumeAttributesClassName ? { currentVolumeAttributesClassName: t.volumeAttributesClassName } : {}),
          }
        : { phase: "Pending" };
      objects.push(pvc);
    }
  }
  return objects;
}

/** StorageClasses `fast` (expandable) and `fixed` (not), as captured. */
export function storageClassObjects(): KubeObject[] {
  return fixture("storageclass-list").body.items.map((c: any) => ({
    kind: "StorageClass",
    apiVersion: "storage.k8s.io/v1",
    ...structuredClone(c),
  }));
}

export function volumeAttributesClass(name: string, parameters: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "VolumeAttributesClass",
    metadata: { name },
    driverName: "example.com/fake",
    parameters,
  };
}

/** The captured cluster as it was: StatefulSet `web`, its 3 pods and claims, both classes. */
export function capturedCluster(): KubeObject[] {
  const kinded = (kind: string, items: any[]) => items.map((i) => ({ kind, ...structuredClone(i) }));
  return [
    fixture("statefulset-web").body,
    ...kinded("Pod", fixture("pod-list").body.items),
    ...kinded("PersistentVolumeClaim", fixture("pvc-list").body.items),
    ...storageClassObjects(),
  ];
}

/** The set's annotations that opt it in and desire template `data` at `storage` (class `fast`). */
export const desiredData = (storage: string): Record<string, string> => ({
  "claimstep.io/volume-claim-update-strategy": "InPlace",
  "claimstep.io/volume-claim-templates": JSON.stringify([
    {
      metadata: { name: "data" },
      spec: { accessModes: ["ReadWriteOnce"], storageClassName: "fast", resources: { requests: { storage } } },
    },
  ]),
});
