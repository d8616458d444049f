// StateReader over the API server: two GETs (the set, its re-create record) and three LISTs whatever the replica count
// (plus VolumeAttributesClasses, only when a desired template names one). The set's policy is parsed
// once, as soon as the set is read: what is listed after it follows from it, and the snapshot carries it.

import {
  ConfigMap,
  ObjectMeta,
  PersistentVolumeClaim,
  Pod,
  StatefulSet,
  StorageClass,
  VolumeAttributesClass,
} from "../../core/kube/index.js";
import { RECORD_PREFIX, readRecord, recordName } from "../../core/plan/index.js";
import { desiredOf, isOptedIn, type PolicyResult, type PolicySnapshot, policyOf } from "../../core/policy/index.js";
import type { LoadOptions, StateReader } from "../../core/ports.js";
import type { SetRef } from "../../core/types.js";
import * as z from "../../core/zod.js";
import { ApiError } from "../api-error.js";
import type { KubeClient } from "./client.js";
import { encodeLabelSelector } from "./label-selector.js";
import { RecreateRoutes, Routes } from "./routes.js";

/** managedFields are the bulk of every object and nothing reads them: drop them as they arrive. */
const lean = <T extends { metadata: Record<string, unknown> }>(items: T[]): T[] => {
  for (const item of items) delete item.metadata.managedFields;
  return items;
};

/**
 * Whether a desired template (the policy's, else the annotation's for a set without a policy, or
 * a live one) names a VolumeAttributesClass.
 */
function namesVolumeAttributesClass(set: StatefulSet, policy: PolicyResult): boolean {
  const live = set.spec.volumeClaimTemplates ?? [];
  const desired = policy.ok ? { ok: true as const, templates: policy.policy.templates } : desiredOf(set);
  const templates = desired.ok ? [...desired.templates, ...live] : live;
  return templates.some((t) => !!t.spec.volumeAttributesClassName);
}

export class KubeReader implements StateReader {
  constructor(private readonly client: KubeClient) {}

  async load(
    ref: SetRef,
    { signal, volumeAttributesClasses: withClasses = false, recreateRecord: withRecord = false }: LoadOptions = {},
  ): Promise<PolicySnapshot> {
    let statefulSet: StatefulSet;
    let recreateRecord: ConfigMap | undefined;
    let setMissing = false;
    try {
      statefulSet = await this.getStatefulSet(ref, signal);
    } catch (err) {
      // F3: a set gone mid re-create is described by its record (one GET, only when the set is missing).
      if (!(err instanceof ApiError && err.kind === "NotFound")) throw err;
      recreateRecord = await this.record(ref, signal, true);
      const read = recreateRecord && readRecord(recreateRecord);
      if (!read) throw err;
      statefulSet = read.ok
        ? {
            ...read.record.manifest,
            metadata: { ...read.record.manifest.metadata, namespace: ref.namespace, name: ref.name },
          }
        : { metadata: { name: ref.name, namespace: ref.namespace }, spec: { selector: {} } };
      setMissing = true;
    }
    const policy = policyOf(statefulSet);
    // The record is read whatever the set says: a set someone else re-created mid re-create (F4)
    // need not carry claimstep.io/finalize or even the opt-in, and its record must not be forgotten.
    const wantsRecord = !setMissing;
    const target = { namespace: ref.namespace };
    // Pods carry the pod template's labels, so the whole selector matches them. The StatefulSet
    // controller copies only selector.matchLabels onto the claims it creates, so only those
    // select claims (matchExpressions could exclude the set's own claims).
    const podSelector = encodeLabelSelector(statefulSet.spec.selector);
    const claimSelector = encodeLabelSelector({ matchLabels: statefulSet.spec.selector.matchLabels ?? {} });
    const opts = (labelSelector: string, expected: number) => ({
      labelSelector,
      expected,
      ...(signal ? { signal } : {}),
    });
    const replicas = statefulSet.spec.replicas ?? 1;
    const templates = Math.max(1, statefulSet.spec.volumeClaimTemplates?.length ?? 1);

    const [pods, claims, storageClasses, volumeAttributesClasses, record] = await Promise.all([
      this.client.list(Routes.listPods, target, Pod, opts(podSelector, replicas)).then(lean),
      this.client
        .list(Routes.listClaims, target, PersistentVolumeClaim, opts(claimSelector, replicas * templates))
        .then(lean),
      this.client.list(Routes.listStorageClasses, {}, StorageClass, signal ? { signal } : {}).then(lean),
      withClasses || namesVolumeAttributesClass(statefulSet, policy)
        ? this.volumeAttributesClasses(signal)
        : Promise.resolve(undefined),
      wantsRecord ? this.record(ref, signal, !withRecord) : Promise.resolve(recreateRecord),
    ]);
    return {
      statefulSet,
      pods,
      claims,
      storageClasses,
      volumeAttributesClasses,
      policy,
      ...(record ? { recreateRecord: record } : {}),
      ...(setMissing ? { setMissing } : {}),
    };
  }

  /**
   * The re-create record, or undefined when there is none. `quiet`: also undefined when reading
   * it is forbidden (a set that is simply missing must stay a NotFound for users who did not grant
   * the finalize Role).
   */
  private async record(ref: SetRef, signal: AbortSignal | undefined, quiet: boolean): Promise<ConfigMap | undefined> {
    try {
      const cm = await this.client.get(
        RecreateRoutes.getRecord,
        { namespace: ref.namespace, name: recordName(ref.name) },
        ConfigMap,
        signal,
      );
      delete cm.metadata.managedFields;
      return cm;
    } catch (err) {
      if (err instanceof ApiError && (err.kind === "NotFound" || (quiet && err.code === 403))) return undefined;
      throw err;
    }
  }

  private async getStatefulSet(ref: SetRef, signal?: AbortSignal): Promise<StatefulSet> {
    try {
      // The set's managedFields are kept: the re-create records them (F1) and hands them back (F5).
      return await this.client.get(Routes.getStatefulSet, ref, StatefulSet, signal);
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

const SetMetadata = z.looseObject({ metadata: ObjectMeta });

/** The label every re-create record carries (core/plan/finalize.ts recordOf). */
export const RECORD_SELECTOR = "app.kubernetes.io/managed-by=claimstep";

/**
 * SetRefs of the StatefulSets that opted in (`claimstep.io/volume-claim-update-strategy: InPlace`),
 * in a namespace or in all, and of every set that has a re-create record: one deleted mid re-create
 * (between the orphan delete and the create) no longer exists to be listed, and only its record
 * says it must be stepped until it exists again.
 */
export async function listOptedInSets(
  client: KubeClient,
  namespace?: string,
  signal?: AbortSignal,
  labelSelector?: string,
): Promise<SetRef[]> {
  const route = namespace === undefined ? Routes.listStatefulSetsAllNamespaces : Routes.listStatefulSets;
  const where = namespace === undefined ? {} : { namespace };
  // Only the metadata is read (names and the opt-in annotation): validating whole sets costs the
  // Worker's cron most of its CPU at a thousand sets. A label selector (`claimstep status -l`) goes
  // to the API server; the re-create records are listed whatever it says: a set deleted mid
  // re-create has no labels to match, and leaving it deleted is worse than stepping it.
  const [sets, records] = await Promise.all([
    client.list(route, where, SetMetadata, {
      ...(signal ? { signal } : {}),
      ...(labelSelector ? { labelSelector } : {}),
    }),
    listRecordRefs(client, namespace, signal),
  ]);
  const refs = sets
    .filter(isOptedIn)
    .map((s) => ({ namespace: s.metadata.namespace ?? namespace ?? "default", name: s.metadata.name }));
  const seen = new Set(refs.map((r) => `${r.namespace}/${r.name}`));
  const missing = records.filter((r) => !seen.has(`${r.namespace}/${r.name}`));
  if (!missing.length) return refs;
  const key = (r: SetRef) => `${r.namespace}/${r.name}`;
  return [...refs, ...missing].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** The names of the StatefulSets of a namespace, opted in or not (completion of set names). */
export async function listStatefulSetNames(
  client: KubeClient,
  namespace: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const sets = await client.list(Routes.listStatefulSets, { namespace }, SetMetadata, signal ? { signal } : {});
  return sets.map((s) => s.metadata.name).sort();
}

/**
 * The sets named by re-create records (ConfigMaps `claimstep-recreate-<set>` with claimstep's
 * label). None when the finalize Role is not granted (403): such a claimstep never re-creates.
 */
async function listRecordRefs(
  client: KubeClient,
  namespace: string | undefined,
  signal?: AbortSignal,
): Promise<SetRef[]> {
  const route = namespace === undefined ? RecreateRoutes.listRecordsAllNamespaces : RecreateRoutes.listRecords;
  try {
    const records = await client.list(route, namespace === undefined ? {} : { namespace }, SetMetadata, {
      labelSelector: RECORD_SELECTOR,
      ...(signal ? { signal } : {}),
    });
    return records
      .filter((cm) => cm.metadata.name.startsWith(RECORD_PREFIX) && cm.metadata.name.length > RECORD_PREFIX.length)
      .map((cm) => ({
        namespace: cm.metadata.namespace ?? namespace ?? "default",
        name: cm.metadata.name.slice(RECORD_PREFIX.length),
      }));
  } catch (err) {
    if (err instanceof ApiError && err.code === 403) return [];
    throw err;
  }
}
