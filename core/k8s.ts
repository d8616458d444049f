// zod schemas of the Kubernetes subset claimstep reads. Loose objects: unknown fields pass
// through untouched (real objects carry managedFields, status fields we ignore, …); the
// fields the planner uses are checked.
import { z } from "zod";
import { QuantityError, quantityOfNumber } from "./quantity.js";

const stringMap = z.record(z.string(), z.string());

/**
 * A resource quantity: a string, or a JSON number as the API server accepts (rule 14), read as
 * its canonical string (1073741824 → "1073741824", 10000 → "10k"), so every reader sees strings.
 * A number that is no quantity (fractional, negative) is refused here with the reason.
 */
export const Quantity = z
  .union([z.string(), z.number()], { error: 'expected a quantity: a string such as "20Gi" or a whole number of bytes' })
  .transform((q, ctx): string => {
    if (typeof q === "string") return q;
    try {
      return quantityOfNumber(q);
    } catch (err) {
      if (!(err instanceof QuantityError)) throw err;
      ctx.issues.push({ code: "custom", message: err.message, input: q });
      return z.NEVER;
    }
  });
const quantityMap = z.record(z.string(), Quantity);

export const ObjectMeta = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().optional(),
  labels: stringMap.optional(),
  annotations: stringMap.optional(),
  deletionTimestamp: z.string().optional(),
});
export type ObjectMeta = z.infer<typeof ObjectMeta>;

export const LabelSelectorRequirement = z.looseObject({
  key: z.string(),
  operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist"]),
  values: z.array(z.string()).optional(),
});
export const LabelSelector = z.looseObject({
  matchLabels: stringMap.optional(),
  matchExpressions: z.array(LabelSelectorRequirement).optional(),
});
export type LabelSelector = z.infer<typeof LabelSelector>;

const Condition = z.looseObject({
  type: z.string(),
  status: z.string(),
  reason: z.string().optional(),
  message: z.string().optional(),
});
export type Condition = z.infer<typeof Condition>;

export const PersistentVolumeClaimSpec = z.looseObject({
  accessModes: z.array(z.string()).optional(),
  resources: z
    .looseObject({ requests: quantityMap.optional(), limits: quantityMap.optional() })
    .optional(),
  storageClassName: z.string().nullable().optional(),
  volumeMode: z.string().optional(),
  volumeName: z.string().optional(),
  selector: LabelSelector.nullable().optional(),
  dataSource: z.looseObject({}).nullable().optional(),
  dataSourceRef: z.looseObject({}).nullable().optional(),
  volumeAttributesClassName: z.string().nullable().optional(),
});
export type PersistentVolumeClaimSpec = z.infer<typeof PersistentVolumeClaimSpec>;

export const PersistentVolumeClaimStatus = z.looseObject({
  phase: z.string().optional(),
  capacity: quantityMap.optional(),
  conditions: z.array(Condition).optional(),
  allocatedResources: quantityMap.optional(),
  allocatedResourceStatuses: stringMap.optional(),
  currentVolumeAttributesClassName: z.string().nullable().optional(),
  modifyVolumeStatus: z
    .looseObject({ targetVolumeAttributesClassName: z.string().optional(), status: z.string() })
    .nullable()
    .optional(),
});
export type PersistentVolumeClaimStatus = z.infer<typeof PersistentVolumeClaimStatus>;

export const PersistentVolumeClaim = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMeta,
  spec: PersistentVolumeClaimSpec,
  status: PersistentVolumeClaimStatus.optional(),
});
export type PersistentVolumeClaim = z.infer<typeof PersistentVolumeClaim>;

/** A volumeClaimTemplate: a PVC whose metadata needs only a name. */
export const ClaimTemplate = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: z.looseObject({
    name: z.string().min(1),
    labels: stringMap.optional(),
    annotations: stringMap.optional(),
  }),
  spec: PersistentVolumeClaimSpec,
});
export type ClaimTemplate = z.infer<typeof ClaimTemplate>;

export const IntOrString = z.union([z.number().int(), z.string()]);

export const StatefulSet = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMeta,
  spec: z.looseObject({
    replicas: z.number().int().min(0).optional(),
    selector: LabelSelector,
    serviceName: z.string().optional(),
    volumeClaimTemplates: z.array(ClaimTemplate).optional(),
    updateStrategy: z
      .looseObject({
        type: z.string().optional(),
        rollingUpdate: z
          .looseObject({
            partition: z.number().int().min(0).optional(),
            maxUnavailable: IntOrString.optional(),
          })
          .optional(),
      })
      .optional(),
    ordinals: z.looseObject({ start: z.number().int().min(0).optional() }).optional(),
  }),
  status: z.looseObject({}).optional(),
});
export type StatefulSet = z.infer<typeof StatefulSet>;

// Pods are half of what a step reads, and the planner reads only their names and phases (for the
// report): validate just those.
export const Pod = z.looseObject({
  metadata: z.looseObject({ name: z.string().min(1), namespace: z.string().optional() }),
  status: z.looseObject({ phase: z.string().optional() }).optional(),
});
export type Pod = z.infer<typeof Pod>;

export const StorageClass = z.looseObject({
  metadata: ObjectMeta,
  provisioner: z.string(),
  allowVolumeExpansion: z.boolean().optional(),
});
export type StorageClass = z.infer<typeof StorageClass>;

export const VolumeAttributesClass = z.looseObject({
  metadata: ObjectMeta,
  driverName: z.string(),
  parameters: stringMap.optional(),
});
export type VolumeAttributesClass = z.infer<typeof VolumeAttributesClass>;

export const listOf = <T extends z.ZodType>(item: T) =>
  z.looseObject({
    metadata: z.looseObject({ resourceVersion: z.string().optional(), continue: z.string().optional() }).optional(),
    items: z.array(item),
  });

/** The API server's error body (`kind: Status`). */
export const Status = z.looseObject({
  kind: z.literal("Status"),
  status: z.string().optional(),
  message: z.string().optional(),
  reason: z.string().optional(),
  code: z.number().int(),
  details: z
    .looseObject({
      name: z.string().optional(),
      group: z.string().optional(),
      kind: z.string().optional(),
      causes: z
        .array(z.looseObject({ reason: z.string().optional(), message: z.string().optional(), field: z.string().optional() }))
        .optional(),
      retryAfterSeconds: z.number().optional(),
    })
    .optional(),
});
export type Status = z.infer<typeof Status>;
