// The schema validation a direct-API step applies to its responses: the same zod schemas and
// `listOf(item)` wrapping as the REST client (adapters/kube/client.ts get/list), then dropping
// managedFields as the reader does (adapters/kube/reader.ts `lean`), so the planner sees what
// it sees in production.
import { listOf, PersistentVolumeClaim, Pod, StatefulSet, StorageClass } from "../core/kube/k8s.js";
import type { Snapshot } from "../core/types.js";

const PodList = listOf(Pod);
const ClaimList = listOf(PersistentVolumeClaim);
const StorageClassList = listOf(StorageClass);

/** The parsed (not yet validated) bodies of one step's reads. */
export interface RawResponses {
  statefulSet: unknown;
  pods: unknown;
  claims: unknown;
  storageClasses: unknown;
}

export function parseRaw(r: {
  statefulSet: string;
  pods: string;
  claims: string;
  storageClasses: string;
}): RawResponses {
  return {
    statefulSet: JSON.parse(r.statefulSet),
    pods: JSON.parse(r.pods),
    claims: JSON.parse(r.claims),
    storageClasses: JSON.parse(r.storageClasses),
  };
}

const lean = <T extends { metadata: Record<string, unknown> }>(items: T[]): T[] => {
  for (const item of items) delete item.metadata.managedFields;
  return items;
};

/**
 * Validate every response as the reader does and assemble the snapshot. Throws on a bad body.
 * The input is not modified (zod returns new objects), so it can be validated again.
 */
export function validateResponses(raw: RawResponses): Snapshot {
  const statefulSet = StatefulSet.parse(raw.statefulSet);
  delete statefulSet.metadata.managedFields;
  return {
    statefulSet,
    pods: lean(PodList.parse(raw.pods).items),
    claims: lean(ClaimList.parse(raw.claims).items),
    storageClasses: lean(StorageClassList.parse(raw.storageClasses).items),
    volumeAttributesClasses: undefined,
  };
}
