// Synthetic StatefulSets of any size, shaped like the objects a real kube-apiserver returns
// (test/fixtures/apiserver/: managedFields, ownerReferences, projected token volumes,
// last-applied-configuration), so that JSON.parse of the responses is an honest floor for a step.
// Deterministic: the same options give the same bytes.

import { Keys } from "../core/keys.js";
import type { PersistentVolumeClaim, Pod, StatefulSet, StorageClass } from "../core/kube/k8s.js";
import { revisionOf } from "../core/kube/revision.js";
import { planStep } from "../core/plan/plan.js";
import type { WriterCapabilities } from "../core/ports.js";
import type { Snapshot } from "../core/types.js";

/** What the direct writer can do: the planner plans for it. */
export const DIRECT_WRITER: WriterCapabilities = { name: "direct", supports: ["PatchClaim"], proposes: false };

export const SET_NAME = "web";
export const NAMESPACE = "default";

/** A claim template of the generated set: its size today and the size being rolled out. */
export interface TemplateSizes {
  name: string;
  live: string;
  desired: string;
  /** Labels the desired template adds to the claims. */
  labels?: Record<string, string>;
}

export const THREE_TEMPLATES: readonly TemplateSizes[] = [
  { name: "data", live: "10Gi", desired: "20Gi" },
  { name: "wal", live: "2Gi", desired: "4Gi", labels: { tier: "wal" } },
  { name: "logs", live: "1Gi", desired: "2Gi" },
];

/**
 * Where the rollout stands:
 * - `start`: desired templates just written, no claim touched;
 * - `mid`: the upper half of the ordinals updated and ready, the next one resizing, the rest pending;
 * - `converged`: every claim at the revision and ready, `current-revision` written.
 */
export type RolloutStage = "start" | "mid" | "converged";

export interface SetShape {
  replicas: number;
  templates?: readonly TemplateSizes[];
  stage?: RolloutStage;
  maxUnavailable?: number;
}

export interface GeneratedCluster {
  statefulSet: StatefulSet;
  pods: Pod[];
  claims: PersistentVolumeClaim[];
  storageClasses: StorageClass[];
  /** The revision hash of the desired templates. */
  revision: string;
}

/** The bodies of the reads one step makes, as the API server sends them. */
export interface ApiResponses {
  statefulSet: string;
  pods: string;
  claims: string;
  storageClasses: string;
}

const CREATED = "2026-11-30T09:03:53Z";
const STARTED = "2026-11-30T09:04:20Z";
const APPLIED = "2026-11-30T09:05:57Z";
const SET_UID = "04e0f027-79c7-4e6f-9175-fc018c22d2cd";
const CONTROLLER_REVISION = "web-5869dd78fd";

/** A stable UUID-looking string per (kind, index): FNV-1a over the key, stretched to 128 bits. */
export function uidOf(kind: string, index: number): string {
  let hex = "";
  for (let round = 0; hex.length < 32; round++) {
    let h = 0x811c9dc5;
    for (const ch of `${kind}/${index}/${round}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    hex += h.toString(16).padStart(8, "0");
  }
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const tokenVolumeSuffix = (i: number): string =>
  uidOf("token", i)
    .slice(0, 5)
    .replace(/[0-9]/g, (d) => "bcdfghjklm"[Number(d)]!);

const claimTemplate = (t: TemplateSizes, size: string, labels?: Record<string, string>) => ({
  metadata: { name: t.name, ...(labels ? { labels } : {}) },
  spec: { accessModes: ["ReadWriteOnce"], storageClassName: "fast", resources: { requests: { storage: size } } },
});

function statefulSet(shape: Required<SetShape>, revision: string): StatefulSet {
  const { replicas, templates, stage } = shape;
  const liveTemplates = templates.map((t) => claimTemplate(t, t.live));
  const desired = templates.map((t) => claimTemplate(t, t.desired, t.labels));
  const lastApplied = {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { annotations: {}, name: SET_NAME, namespace: NAMESPACE },
    spec: {
      replicas,
      selector: { matchLabels: { app: SET_NAME } },
      serviceName: SET_NAME,
      template: { metadata: { labels: { app: SET_NAME } }, spec: { containers: [{ image: "nginx", name: "c" }] } },
      volumeClaimTemplates: liveTemplates,
    },
  };
  const annotations: Record<string, string> = {
    "kubectl.kubernetes.io/last-applied-configuration": `${JSON.stringify(lastApplied)}\n`,
    [Keys.strategy]: "InPlace",
    [Keys.templates]: JSON.stringify(desired),
  };
  if (stage !== "start") annotations[Keys.updateRevision] = revision;
  return {
    kind: "StatefulSet",
    apiVersion: "apps/v1",
    metadata: {
      name: SET_NAME,
      namespace: NAMESPACE,
      uid: SET_UID,
      resourceVersion: String(1000 + replicas * 4),
      generation: 1,
      creationTimestamp: CREATED,
      annotations,
      managedFields: [
        {
          manager: "kubectl-client-side-apply",
          operation: "Update",
          apiVersion: "apps/v1",
          time: CREATED,
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:metadata": { "f:annotations": { ".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {} } },
            "f:spec": {
              "f:persistentVolumeClaimRetentionPolicy": { ".": {}, "f:whenDeleted": {}, "f:whenScaled": {} },
              "f:podManagementPolicy": {},
              "f:replicas": {},
              "f:revisionHistoryLimit": {},
              "f:selector": {},
              "f:serviceName": {},
              "f:template": {
                "f:metadata": { "f:labels": { ".": {}, "f:app": {} } },
                "f:spec": {
                  "f:containers": {
                    'k:{"name":"c"}': {
                      ".": {},
                      "f:image": {},
                      "f:imagePullPolicy": {},
                      "f:name": {},
                      "f:resources": {},
                      "f:terminationMessagePath": {},
                      "f:terminationMessagePolicy": {},
                    },
                  },
                  "f:dnsPolicy": {},
                  "f:restartPolicy": {},
                  "f:schedulerName": {},
                  "f:securityContext": {},
                  "f:terminationGracePeriodSeconds": {},
                },
              },
              "f:updateStrategy": {
                "f:rollingUpdate": { ".": {}, "f:maxUnavailable": {}, "f:partition": {} },
                "f:type": {},
              },
              "f:volumeClaimTemplates": {},
            },
          },
        },
        {
          manager: "kube-controller-manager",
          operation: "Update",
          apiVersion: "apps/v1",
          time: STARTED,
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:status": {
              "f:availableReplicas": {},
              "f:collisionCount": {},
              "f:currentReplicas": {},
              "f:currentRevision": {},
              "f:observedGeneration": {},
              "f:readyReplicas": {},
              "f:replicas": {},
              "f:updateRevision": {},
              "f:updatedReplicas": {},
            },
          },
          subresource: "status",
        },
      ],
    },
    spec: {
      replicas,
      selector: { matchLabels: { app: SET_NAME } },
      template: {
        metadata: { creationTimestamp: null, labels: { app: SET_NAME } },
        spec: {
          containers: [
            {
              name: "c",
              image: "nginx",
              resources: {},
              terminationMessagePath: "/dev/termination-log",
              terminationMessagePolicy: "File",
              imagePullPolicy: "Always",
            },
          ],
          restartPolicy: "Always",
          terminationGracePeriodSeconds: 30,
          dnsPolicy: "ClusterFirst",
          securityContext: {},
          schedulerName: "default-scheduler",
        },
      },
      volumeClaimTemplates: templates.map((t) => ({
        kind: "PersistentVolumeClaim",
        apiVersion: "v1",
        metadata: { name: t.name, creationTimestamp: null },
        spec: {
          accessModes: ["ReadWriteOnce"],
          resources: { requests: { storage: t.live } },
          storageClassName: "fast",
          volumeMode: "Filesystem",
        },
        status: { phase: "Pending" },
      })),
      serviceName: SET_NAME,
      podManagementPolicy: "OrderedReady",
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 0, maxUnavailable: shape.maxUnavailable } },
      revisionHistoryLimit: 10,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
    },
    status: {
      observedGeneration: 1,
      replicas,
      readyReplicas: replicas,
      currentReplicas: replicas,
      updatedReplicas: replicas,
      currentRevision: CONTROLLER_REVISION,
      updateRevision: CONTROLLER_REVISION,
      collisionCount: 0,
      availableReplicas: replicas,
    },
  } as StatefulSet;
}

function pod(ordinal: number, templates: readonly TemplateSizes[]): Pod {
  const name = `${SET_NAME}-${ordinal}`;
  const token = `kube-api-access-${tokenVolumeSuffix(ordinal)}`;
  const volumeFields: Record<string, unknown> = { ".": {} };
  for (const t of templates) {
    volumeFields[`k:{"name":"${t.name}"}`] = {
      ".": {},
      "f:name": {},
      "f:persistentVolumeClaim": { ".": {}, "f:claimName": {} },
    };
  }
  return {
    metadata: {
      name,
      generateName: `${SET_NAME}-`,
      namespace: NAMESPACE,
      uid: uidOf("pod", ordinal),
      resourceVersion: String(200 + ordinal * 4),
      creationTimestamp: CREATED,
      labels: {
        app: SET_NAME,
        "controller-revision-hash": CONTROLLER_REVISION,
        "statefulset.kubernetes.io/pod-name": name,
      },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "StatefulSet",
          name: SET_NAME,
          uid: SET_UID,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: "kube-controller-manager",
          operation: "Update",
          apiVersion: "v1",
          time: CREATED,
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:metadata": {
              "f:generateName": {},
              "f:labels": {
                ".": {},
                "f:app": {},
                "f:controller-revision-hash": {},
                "f:statefulset.kubernetes.io/pod-name": {},
              },
              "f:ownerReferences": { ".": {}, [`k:{"uid":"${SET_UID}"}`]: {} },
            },
            "f:spec": {
              "f:containers": {
                'k:{"name":"c"}': {
                  ".": {},
                  "f:image": {},
                  "f:imagePullPolicy": {},
                  "f:name": {},
                  "f:resources": {},
                  "f:terminationMessagePath": {},
                  "f:terminationMessagePolicy": {},
                },
              },
              "f:dnsPolicy": {},
              "f:enableServiceLinks": {},
              "f:hostname": {},
              "f:restartPolicy": {},
              "f:schedulerName": {},
              "f:securityContext": {},
              "f:subdomain": {},
              "f:terminationGracePeriodSeconds": {},
              "f:volumes": volumeFields,
            },
          },
        },
        {
          manager: "kubelet",
          operation: "Update",
          apiVersion: "v1",
          time: STARTED,
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:status": {
              "f:conditions": {
                ".": {},
                'k:{"type":"Ready"}': {
                  ".": {},
                  "f:lastProbeTime": {},
                  "f:lastTransitionTime": {},
                  "f:status": {},
                  "f:type": {},
                },
              },
              "f:phase": {},
            },
          },
          subresource: "status",
        },
      ],
    },
    spec: {
      volumes: [
        ...templates.map((t) => ({
          name: t.name,
          persistentVolumeClaim: { claimName: `${t.name}-${SET_NAME}-${ordinal}` },
        })),
        {
          name: token,
          projected: {
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
              { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
              {
                downwardAPI: {
                  items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
                },
              },
            ],
            defaultMode: 420,
          },
        },
      ],
      containers: [
        {
          name: "c",
          image: "nginx",
          resources: {},
          volumeMounts: [{ name: token, readOnly: true, mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" }],
          terminationMessagePath: "/dev/termination-log",
          terminationMessagePolicy: "File",
          imagePullPolicy: "Always",
        },
      ],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      serviceAccountName: "default",
      serviceAccount: "default",
      securityContext: {},
      hostname: name,
      subdomain: SET_NAME,
      schedulerName: "default-scheduler",
      tolerations: [
        { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
        { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: "PreemptLowerPriority",
    },
    status: {
      phase: "Running",
      conditions: [{ type: "Ready", status: "True", lastProbeTime: null, lastTransitionTime: STARTED }],
      qosClass: "BestEffort",
    },
  } as Pod;
}

/** How far one claim has come: untouched, written by claimstep and resizing, or done. */
type ClaimState = "old" | "resizing" | "updated";

function claim(
  ordinal: number,
  index: number,
  t: TemplateSizes,
  state: ClaimState,
  revision: string,
): PersistentVolumeClaim {
  const name = `${t.name}-${SET_NAME}-${ordinal}`;
  const written = state !== "old";
  const spec = written ? t.desired : t.live;
  const capacity = state === "updated" ? t.desired : t.live;
  const managedFields: unknown[] = [];
  if (written) {
    managedFields.push({
      manager: "claimstep",
      operation: "Apply",
      apiVersion: "v1",
      time: APPLIED,
      fieldsType: "FieldsV1",
      fieldsV1: {
        "f:metadata": {
          "f:labels": {
            [`f:${Keys.revisionLabel}`]: {},
            ...Object.fromEntries(Object.keys(t.labels ?? {}).map((k) => [`f:${k}`, {}])),
          },
        },
        "f:spec": { "f:resources": { "f:requests": { "f:storage": {} } } },
      },
    });
  }
  managedFields.push(
    {
      manager: "kube-controller-manager",
      operation: "Update",
      apiVersion: "v1",
      time: CREATED,
      fieldsType: "FieldsV1",
      fieldsV1: {
        "f:metadata": { "f:labels": { ".": {}, "f:app": {} } },
        "f:spec": {
          "f:accessModes": {},
          "f:resources": { "f:requests": {} },
          "f:storageClassName": {},
          "f:volumeMode": {},
        },
      },
    },
    {
      manager: "csi-resizer",
      operation: "Update",
      apiVersion: "v1",
      time: written ? APPLIED : STARTED,
      fieldsType: "FieldsV1",
      fieldsV1: {
        "f:status": {
          "f:accessModes": {},
          "f:capacity": { ".": {}, "f:storage": {} },
          "f:phase": {},
          ...(state === "resizing"
            ? { "f:allocatedResourceStatuses": {}, "f:allocatedResources": {}, "f:conditions": {} }
            : {}),
        },
      },
      subresource: "status",
    },
  );
  return {
    metadata: {
      name,
      namespace: NAMESPACE,
      uid: uidOf("pvc", ordinal * 16 + index),
      resourceVersion: String(201 + ordinal * 4 + index + (written ? 100_000 : 0)),
      creationTimestamp: CREATED,
      labels: { app: SET_NAME, ...(written ? { ...(t.labels ?? {}), [Keys.revisionLabel]: revision } : {}) },
      finalizers: ["kubernetes.io/pvc-protection"],
      managedFields,
    },
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: spec } },
      storageClassName: "fast",
      volumeMode: "Filesystem",
    },
    status: {
      phase: "Bound",
      accessModes: ["ReadWriteOnce"],
      capacity: { storage: capacity },
      ...(state === "resizing"
        ? {
            allocatedResources: { storage: t.desired },
            allocatedResourceStatuses: { storage: "ControllerResizeInProgress" },
            conditions: [{ type: "Resizing", status: "True", lastProbeTime: null, lastTransitionTime: APPLIED }],
          }
        : {}),
    },
  } as PersistentVolumeClaim;
}

const storageClass = (name: string, expandable: boolean, index: number): StorageClass =>
  ({
    metadata: {
      name,
      uid: uidOf("storageclass", index),
      resourceVersion: String(200 + index),
      creationTimestamp: CREATED,
      annotations: {
        "kubectl.kubernetes.io/last-applied-configuration": `${JSON.stringify({ allowVolumeExpansion: expandable, apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { annotations: {}, name }, provisioner: "example.com/fake" })}\n`,
      },
      managedFields: [
        {
          manager: "kubectl-client-side-apply",
          operation: "Update",
          apiVersion: "storage.k8s.io/v1",
          time: CREATED,
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:allowVolumeExpansion": {},
            "f:metadata": { "f:annotations": { ".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {} } },
            "f:provisioner": {},
            "f:reclaimPolicy": {},
            "f:volumeBindingMode": {},
          },
        },
      ],
    },
    provisioner: "example.com/fake",
    reclaimPolicy: "Delete",
    allowVolumeExpansion: expandable,
    volumeBindingMode: "Immediate",
  }) as StorageClass;

/** Which state each ordinal's claims are in at a given stage (highest ordinals go first). */
function claimStateOf(stage: RolloutStage, replicas: number, ordinal: number): ClaimState {
  if (stage === "start") return "old";
  if (stage === "converged") return "updated";
  const firstUpdated = replicas - Math.ceil(replicas / 2);
  if (ordinal >= firstUpdated) return "updated";
  return ordinal === firstUpdated - 1 ? "resizing" : "old";
}

/** One StatefulSet with `replicas` pods, `replicas × templates` PVCs and two StorageClasses. */
export function generateCluster(shape: SetShape): GeneratedCluster {
  if (!Number.isInteger(shape.replicas) || shape.replicas < 1) {
    throw new Error(`generateCluster: replicas must be a positive integer, got ${shape.replicas}`);
  }
  const full: Required<SetShape> = { templates: THREE_TEMPLATES, stage: "mid", maxUnavailable: 1, ...shape };
  const revision = revisionOf(full.templates.map((t) => claimTemplate(t, t.desired, t.labels)));
  const pods: Pod[] = [];
  const claims: PersistentVolumeClaim[] = [];
  for (let o = 0; o < full.replicas; o++) {
    pods.push(pod(o, full.templates));
    const state = claimStateOf(full.stage, full.replicas, o);
    full.templates.forEach((t, i) => claims.push(claim(o, i, t, state, revision)));
  }
  const cluster: GeneratedCluster = {
    statefulSet: statefulSet(full, revision),
    pods,
    claims,
    storageClasses: [storageClass("fast", true, 0), storageClass("fixed", false, 1)],
    revision,
  };
  // Past the start, claimstep has already written its status: stamp what the planner would
  // write now, so the set is as a previous step left it (and a converged set needs no write).
  if (full.stage !== "start") {
    const decision = planStep(snapshotOf(cluster), GENERATED_AT, DIRECT_WRITER);
    const annotations = cluster.statefulSet.metadata.annotations!;
    Object.assign(annotations, decision.setAnnotations ?? {});
  }
  return cluster;
}

/** The clock of generated status records. */
export const GENERATED_AT = new Date(APPLIED);

/** The snapshot a reader would load from this cluster (the objects themselves, not copies). */
export const snapshotOf = (c: GeneratedCluster): Snapshot => ({
  statefulSet: c.statefulSet,
  pods: c.pods,
  claims: c.claims,
  storageClasses: c.storageClasses,
  volumeAttributesClasses: undefined,
});

const list = (kind: string, apiVersion: string, items: unknown[], resourceVersion: string): string =>
  JSON.stringify({ kind, apiVersion, metadata: { resourceVersion }, items });

/** The response bodies of the reads of one step, byte for byte what the API server would send. */
export function responsesOf(cluster: GeneratedCluster): ApiResponses {
  const rv = String(Number(cluster.statefulSet.metadata.resourceVersion) + 1);
  return {
    statefulSet: JSON.stringify(cluster.statefulSet),
    pods: list("PodList", "v1", cluster.pods, rv),
    claims: list("PersistentVolumeClaimList", "v1", cluster.claims, rv),
    storageClasses: list("StorageClassList", "storage.k8s.io/v1", cluster.storageClasses, rv),
  };
}

export const responseBytes = (r: ApiResponses): number =>
  r.statefulSet.length + r.pods.length + r.claims.length + r.storageClasses.length;

/** The floor: parse every response (what any step must at least do with its input). */
export function parseResponses(r: ApiResponses): Snapshot {
  return {
    statefulSet: JSON.parse(r.statefulSet) as StatefulSet,
    pods: (JSON.parse(r.pods) as { items: Pod[] }).items,
    claims: (JSON.parse(r.claims) as { items: PersistentVolumeClaim[] }).items,
    storageClasses: (JSON.parse(r.storageClasses) as { items: StorageClass[] }).items,
    volumeAttributesClasses: undefined,
  };
}
