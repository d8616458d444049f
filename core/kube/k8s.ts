// zod schemas of the Kubernetes subset claimstep reads. Loose objects: unknown fields pass
// through untouched (real objects carry managedFields, status fields we ignore, …); the
// fields the planner uses are checked.

import * as z from "../zod.js";
import { QuantityError, quantityOfNumber } from "./quantity.js";

const stringMap = z.record(z.string(), z.string());

/**
 * A resource quantity: a string, or a JSON number as the API server accepts (rule 14), read as
 * its canonical string (1073741824 → "1073741824", 10000 → "10k"), so every reader sees strings.
 * A number that is no quantity (fractional, negative) is refused here with the reason.
 */
export const Quantity = z.pipe(
  z.union([z.string(), z.number()], {
    error: 'expected a quantity: a string such as "20Gi" or a whole number of bytes',
  }),
  z.transform((q: string | number, ctx): string => {
    if (typeof q === "string") return q;
    try {
      return quantityOfNumber(q);
    } catch (err) {
      if (!(err instanceof QuantityError)) throw err;
      ctx.issues.push({ code: "custom", message: err.message, input: q });
      return z.NEVER;
    }
  }),
);
const quantityMap = z.record(z.string(), Quantity);

export const ObjectMeta = z.looseObject({
  name: z.string().check(z.minLength(1)),
  namespace: z.optional(z.string()),
  uid: z.optional(z.string()),
  resourceVersion: z.optional(z.string()),
  generation: z.optional(z.number()),
  labels: z.optional(stringMap),
  annotations: z.optional(stringMap),
  deletionTimestamp: z.optional(z.string()),
  creationTimestamp: z.optional(z.string()),
});
export type ObjectMeta = z.infer<typeof ObjectMeta>;

export const OwnerReference = z.looseObject({
  apiVersion: z.optional(z.string()),
  kind: z.optional(z.string()),
  name: z.optional(z.string()),
  uid: z.string(),
  controller: z.optional(z.boolean()),
});

export const LabelSelectorRequirement = z.looseObject({
  key: z.string(),
  operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist"]),
  values: z.optional(z.array(z.string())),
});
export const LabelSelector = z.looseObject({
  matchLabels: z.optional(stringMap),
  matchExpressions: z.optional(z.array(LabelSelectorRequirement)),
});
export type LabelSelector = z.infer<typeof LabelSelector>;

const Condition = z.looseObject({
  type: z.string(),
  status: z.string(),
  reason: z.optional(z.string()),
  message: z.optional(z.string()),
  lastTransitionTime: z.optional(z.nullable(z.string())),
});
export type Condition = z.infer<typeof Condition>;

export const PersistentVolumeClaimSpec = z.looseObject({
  accessModes: z.optional(z.array(z.string())),
  resources: z.optional(z.looseObject({ requests: z.optional(quantityMap), limits: z.optional(quantityMap) })),
  storageClassName: z.optional(z.nullable(z.string())),
  volumeMode: z.optional(z.string()),
  volumeName: z.optional(z.string()),
  selector: z.optional(z.nullable(LabelSelector)),
  dataSource: z.optional(z.nullable(z.looseObject({}))),
  dataSourceRef: z.optional(z.nullable(z.looseObject({}))),
  volumeAttributesClassName: z.optional(z.nullable(z.string())),
});
export type PersistentVolumeClaimSpec = z.infer<typeof PersistentVolumeClaimSpec>;

export const PersistentVolumeClaimStatus = z.looseObject({
  phase: z.optional(z.string()),
  capacity: z.optional(quantityMap),
  conditions: z.optional(z.array(Condition)),
  allocatedResources: z.optional(quantityMap),
  allocatedResourceStatuses: z.optional(stringMap),
  currentVolumeAttributesClassName: z.optional(z.nullable(z.string())),
  modifyVolumeStatus: z.optional(
    z.nullable(z.looseObject({ targetVolumeAttributesClassName: z.optional(z.string()), status: z.string() })),
  ),
});
export type PersistentVolumeClaimStatus = z.infer<typeof PersistentVolumeClaimStatus>;

export const PersistentVolumeClaim = z.looseObject({
  apiVersion: z.optional(z.string()),
  kind: z.optional(z.string()),
  metadata: ObjectMeta,
  spec: PersistentVolumeClaimSpec,
  status: z.optional(PersistentVolumeClaimStatus),
});
export type PersistentVolumeClaim = z.infer<typeof PersistentVolumeClaim>;

/** A volumeClaimTemplate: a PVC whose metadata needs only a name. */
export const ClaimTemplate = z.looseObject({
  apiVersion: z.optional(z.string()),
  kind: z.optional(z.string()),
  metadata: z.looseObject({
    name: z.string().check(z.minLength(1)),
    labels: z.optional(stringMap),
    annotations: z.optional(stringMap),
  }),
  spec: PersistentVolumeClaimSpec,
});
export type ClaimTemplate = z.infer<typeof ClaimTemplate>;

export const IntOrString = z.union([z.int(), z.string()]);

/** A whole number ≥ 0 (replicas, partition, ordinals.start). */
const count = () => z.int().check(z.minimum(0));

export const StatefulSet = z.looseObject({
  apiVersion: z.optional(z.string()),
  kind: z.optional(z.string()),
  metadata: ObjectMeta,
  spec: z.looseObject({
    replicas: z.optional(count()),
    selector: LabelSelector,
    serviceName: z.optional(z.string()),
    volumeClaimTemplates: z.optional(z.array(ClaimTemplate)),
    updateStrategy: z.optional(
      z.looseObject({
        type: z.optional(z.string()),
        rollingUpdate: z.optional(
          z.looseObject({
            partition: z.optional(count()),
            maxUnavailable: z.optional(IntOrString),
          }),
        ),
      }),
    ),
    ordinals: z.optional(z.looseObject({ start: z.optional(count()) })),
  }),
  // The pod rollout, as the StatefulSet controller reports it (pod coordination, P1–P5).
  status: z.optional(
    z.looseObject({
      observedGeneration: z.optional(z.number()),
      replicas: z.optional(z.number()),
      readyReplicas: z.optional(z.number()),
      currentRevision: z.optional(z.string()),
      updateRevision: z.optional(z.string()),
    }),
  ),
});
export type StatefulSet = z.infer<typeof StatefulSet>;

// Pods are half of what a step reads; the planner reads their names, revision labels, uids,
// creation times and readiness (pod coordination and restarts): validate just those.
export const Pod = z.looseObject({
  metadata: z.looseObject({
    name: z.string().check(z.minLength(1)),
    namespace: z.optional(z.string()),
    uid: z.optional(z.string()),
    labels: z.optional(stringMap),
    creationTimestamp: z.optional(z.string()),
    deletionTimestamp: z.optional(z.string()),
    ownerReferences: z.optional(z.array(OwnerReference)),
  }),
  status: z.optional(z.looseObject({ phase: z.optional(z.string()), conditions: z.optional(z.array(Condition)) })),
});
export type Pod = z.infer<typeof Pod>;

/** The finalize record (docs/design.md "Re-creating the set"): a ConfigMap of string data. */
export const ConfigMap = z.looseObject({
  metadata: ObjectMeta,
  data: z.optional(z.record(z.string(), z.string())),
});
export type ConfigMap = z.infer<typeof ConfigMap>;

export const StorageClass = z.looseObject({
  metadata: ObjectMeta,
  provisioner: z.string(),
  allowVolumeExpansion: z.optional(z.boolean()),
  /** `WaitForFirstConsumer`: a new claim binds only once a pod using it is scheduled. */
  volumeBindingMode: z.optional(z.string()),
});
export type StorageClass = z.infer<typeof StorageClass>;

export const VolumeAttributesClass = z.looseObject({
  metadata: ObjectMeta,
  driverName: z.string(),
  parameters: z.optional(stringMap),
});
export type VolumeAttributesClass = z.infer<typeof VolumeAttributesClass>;

export const listOf = <T extends z.core.$ZodType>(item: T) =>
  z.looseObject({
    metadata: z.optional(z.looseObject({ resourceVersion: z.optional(z.string()), continue: z.optional(z.string()) })),
    items: z.array(item),
  });

/** The API server's error body (`kind: Status`). */
export const Status = z.looseObject({
  kind: z.literal("Status"),
  status: z.optional(z.string()),
  message: z.optional(z.string()),
  reason: z.optional(z.string()),
  code: z.int(),
  details: z.optional(
    z.looseObject({
      name: z.optional(z.string()),
      group: z.optional(z.string()),
      kind: z.optional(z.string()),
      causes: z.optional(
        z.array(
          z.looseObject({
            reason: z.optional(z.string()),
            message: z.optional(z.string()),
            field: z.optional(z.string()),
          }),
        ),
      ),
      retryAfterSeconds: z.optional(z.number()),
    }),
  ),
});
export type Status = z.infer<typeof Status>;
