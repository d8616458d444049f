// StateReader over the API server: one GET and three LISTs whatever the replica count
// (plus VolumeAttributesClasses, only when a desired template names one).
import { PersistentVolumeClaim, Pod, StatefulSet, StorageClass, VolumeAttributesClass } from "../../core/k8s.js";
import type { LoadOptions, StateReader } from "../../core/ports.js";
import { isOptedIn } from "../../core/statefulset.js";
import { desiredTemplates } from "../../core/templates.js";
import type { SetRef, Snapshot } from "../../core/types.js";
import { ApiError } from "../api-error.js";
import type { KubeClient } from "./client.js";
import { encodeLabelSelector } from "./label-selector.js";
import { Routes } from "./routes.js";

/** managedFields are the bulk of every object and nothing reads them: drop them as they arrive. */
const lean = <T extends { metadata: Record<string, unknown> }>(items: T[]): T[] => {
  for (const item of items) delete item.metadata.managedFields;
  return items;
};

/** Whether a desired template (annotation or live spec) names a VolumeAttributesClass. */
export function namesVolumeAttributesClass(set: StatefulSet): boolean {
  const live = set.spec.volumeClaimTemplates ?? [];
  const desired = desiredTemplates(set);
  const templates = desired.ok ? [...desired.templates, ...live] : live;
  return templates.some((t) => !!t.spec.volumeAttributesClassName);
}

export class KubeReader implements StateReader {
  constructor(private readonly client: KubeClient) {}

  async load(ref: SetRef, { signal, volumeAttributesClasses: withClasses = false }: LoadOptions = {}): Promise<Snapshot> {
    const statefulSet = await this.getStatefulSet(ref, signal);
    const target = { namespace: ref.namespace };
    // Pods carry the pod template's labels, so the whole selector matches them. The StatefulSet
    // controller copies only selector.matchLabels onto the claims it creates, so only those
    // select claims (matchExpressions could exclude the set's own claims).
    const podSelector = encodeLabelSelector(statefulSet.spec.selector);
    const claimSelector = encodeLabelSelector({ matchLabels: statefulSet.spec.selector.matchLabels ?? {} });
    const opts = (labelSelector: string, expected: number) => ({ labelSelector, expected, ...(signal ? { signal } : {}) });
    const replicas = statefulSet.spec.replicas ?? 1;
    const templates = Math.max(1, statefulSet.spec.volumeClaimTemplates?.length ?? 1);

    const [pods, claims, storageClasses, volumeAttributesClasses] = await Promise.all([
      this.client.list(Routes.listPods, target, Pod, opts(podSelector, replicas)).then(lean),
      this.client.list(Routes.listClaims, target, PersistentVolumeClaim, opts(claimSelector, replicas * templates)).then(lean),
      this.client.list(Routes.listStorageClasses, {}, StorageClass, signal ? { signal } : {}).then(lean),
      withClasses || namesVolumeAttributesClass(statefulSet) ? this.volumeAttributesClasses(signal) : Promise.resolve(undefined),
    ]);
    return { statefulSet, pods, claims, storageClasses, volumeAttributesClasses };
  }

  private async getStatefulSet(ref: SetRef, signal?: AbortSignal): Promise<StatefulSet> {
    try {
      const set = await this.client.get(Routes.getStatefulSet, ref, StatefulSet, signal);
      delete set.metadata.managedFields;
      return set;
    } catch (err) {
      if (err instanceof ApiError && err.kind === "NotFound") {
        throw new ApiError(
          err.code,
          err.kind,
          `StatefulSet ${ref.namespace}/${ref.name} not found (${err.message}): check the name and the namespace`,
          err.status,
          undefined,
          err.request,
        );
      }
      throw err;
    }
  }

  /** storage.k8s.io/v1 (Kubernetes 1.34+), else v1beta1; `undefined` when the cluster serves neither. */
  private async volumeAttributesClasses(signal?: AbortSignal): Promise<VolumeAttributesClass[] | undefined> {
    for (const route of [Routes.listVolumeAttributesClasses, Routes.listVolumeAttributesClassesBeta]) {
      try {
        return lean(await this.client.list(route, {}, VolumeAttributesClass, signal ? { signal } : {}));
      } catch (err) {
        if (!(err instanceof ApiError && err.kind === "NotFound")) throw err;
      }
    }
    return undefined;
  }
}

/** SetRefs of the StatefulSets that opted in (`claimstep.io/volume-claim-update-strategy: InPlace`), in a namespace or in all. */
export async function listOptedInSets(client: KubeClient, namespace?: string, signal?: AbortSignal): Promise<SetRef[]> {
  const route = namespace === undefined ? Routes.listStatefulSetsAllNamespaces : Routes.listStatefulSets;
  const sets = await client.list(route, namespace === undefined ? {} : { namespace }, StatefulSet, signal ? { signal } : {});
  return sets
    .filter(isOptedIn)
    .map((s) => ({ namespace: s.metadata.namespace ?? namespace ?? "default", name: s.metadata.name }));
}
