// The three writers over the API server, as Kubernetes splits them: the claim writer (one
// server-side apply of one PVC), the set-status writer (a merge patch of the StatefulSet's
// annotations under a resourceVersion precondition) and the event recorder (de-duplicated Events).

import { FIELD_MANAGER, Keys } from "../../core/keys.js";
import { claimApplyBody } from "../../core/kube/index.js";
import { RecordKeys } from "../../core/plan/index.js";
import type {
  ApplyOutcome,
  ClaimWriter,
  EventRecorder,
  PodOutcome,
  PodWriter,
  RecreateWriter,
  SetStatusWriter,
  Writers,
} from "../../core/ports.js";
import type {
  ActionType,
  ArmRecord,
  ClaimAction,
  CreateSet,
  Decision,
  DeleteRecord,
  EventRecord,
  EvictPod,
  LabelClaim,
  OrphanSet,
  PatchPartition,
  RaiseTemplate,
  RestoreOwnership,
  SetRef,
  WriteRecord,
} from "../../core/types.js";
import * as z from "../../core/zod.js";
import { ApiError } from "../api-error.js";
import type { KubeClient } from "./client.js";
import { eventBody, eventName, microTime } from "./events.js";
import { RecreateRoutes, Routes } from "./routes.js";

export const APPLY_PATCH = "application/apply-patch+yaml";
export const MERGE_PATCH = "application/merge-patch+json";

export interface KubeWriterOptions {
  /** `reportingInstance` of Events (e.g. the pod or Worker name); at most 128 characters. */
  reportingInstance?: string;
}

const EventState = z.looseObject({
  metadata: z.looseObject({ resourceVersion: z.optional(z.string()) }),
  series: z.optional(z.nullable(z.looseObject({ count: z.int() }))),
});

interface SeriesState {
  count: number;
  resourceVersion: string;
}

const SERIES_CACHE_SIZE = 512;

/** Server-side apply of one PVC (fieldManager claimstep, force), with the resourceVersion it was read at. */
export class KubeClaimWriter implements ClaimWriter {
  readonly name = "direct";
  readonly supports: readonly ActionType[] = ["PatchClaim", "RaiseTemplate"];
  readonly proposes = false;

  constructor(private readonly client: KubeClient) {}

  /** Autogrow: the desired templates raised, with the record and the step's annotations, in one merge patch. */
  private async raise(action: RaiseTemplate, decision: Decision | undefined): Promise<ApplyOutcome> {
    await this.client.patch(
      Routes.annotateStatefulSet,
      { namespace: action.namespace, name: action.set },
      raiseBody(action, decision?.setAnnotations),
      MERGE_PATCH,
    );
    return {
      kind: "applied",
      detail: `raised ${action.namespace}/${action.set} template ${action.template}: ${action.from} → ${action.to} (revision ${action.toRevision})`,
    };
  }

  async apply(action: ClaimAction, decision?: Decision): Promise<ApplyOutcome> {
    if (action.type === "RaiseTemplate") return this.raise(action, decision);
    if (action.type !== "PatchClaim")
      throw new Error(
        `direct writer cannot apply ${action.type} of ${action.set}: it is proposed through a pull request`,
      );
    await this.client.patch(
      Routes.applyClaim,
      { namespace: action.namespace, name: action.claim },
      claimApplyBody(action),
      APPLY_PATCH,
      {
        fieldManager: FIELD_MANAGER,
        force: "true",
      },
    );
    const vac =
      action.volumeAttributesClassName !== undefined
        ? `, volumeAttributesClassName ${action.volumeAttributesClassName}`
        : "";
    return { kind: "applied", detail: `applied ${action.namespace}/${action.claim}: storage ${action.storage}${vac}` };
  }
}

/** A merge patch of claimstep's annotations on the StatefulSet, under its resourceVersion as read. */
export const raiseBody = (action: RaiseTemplate, annotations: Record<string, string> | undefined) => ({
  metadata: {
    ...(action.resourceVersion !== undefined ? { resourceVersion: action.resourceVersion } : {}),
    annotations: {
      ...annotations,
      [Keys.templates]: JSON.stringify(action.templates),
      [Keys.autogrownFrom]: action.autogrownFrom,
    },
  },
});

export class KubeSetStatusWriter implements SetStatusWriter {
  constructor(private readonly client: KubeClient) {}

  async annotateSet(
    ref: SetRef,
    annotations: Record<string, string>,
    resourceVersion?: string,
  ): Promise<string | undefined> {
    const metadata = { annotations, ...(resourceVersion !== undefined ? { resourceVersion } : {}) };
    const answer = (await this.client.patch(Routes.annotateStatefulSet, ref, { metadata }, MERGE_PATCH)) as
      | { metadata?: { resourceVersion?: unknown } }
      | undefined;
    const rv = answer?.metadata?.resourceVersion;
    return typeof rv === "string" ? rv : undefined;
  }
}

/**
 * The pod side, always direct: the partition (merge patch under the set's resourceVersion, with
 * the user-partition record and the step's annotations in the same request) and evictions
 * (policy/v1 Eviction with the pod's uid as precondition; claimstep never DELETEs a pod).
 */
export class KubePodWriter implements PodWriter {
  constructor(private readonly client: KubeClient) {}

  async patchPartition(action: PatchPartition, annotations: Record<string, string> | undefined): Promise<PodOutcome> {
    const record =
      action.userPartition === undefined
        ? {}
        : { [Keys.userPartition]: action.userPartition === null ? null : String(action.userPartition) };
    const body = {
      metadata: {
        ...(action.resourceVersion !== undefined ? { resourceVersion: action.resourceVersion } : {}),
        annotations: { ...annotations, ...record },
      },
      spec: { updateStrategy: { rollingUpdate: { partition: action.partition } } },
    };
    await this.client.patch(
      Routes.patchPartition,
      { namespace: action.namespace, name: action.set },
      body,
      MERGE_PATCH,
    );
    return {
      kind: "applied",
      detail: `patched ${action.namespace}/${action.set}: partition ${action.from} → ${action.partition}`,
    };
  }

  async evict(action: EvictPod): Promise<PodOutcome> {
    const body = {
      apiVersion: "policy/v1",
      kind: "Eviction",
      metadata: { name: action.pod, namespace: action.namespace },
      deleteOptions: { preconditions: { uid: action.uid } },
    };
    try {
      await this.client.create(Routes.evictPod, { namespace: action.namespace, name: action.pod }, body);
    } catch (err) {
      // A PodDisruptionBudget's refusal is an answer, not a fault: the step waits (R3).
      if (!(err instanceof ApiError) || err.code !== 429) throw err;
      const budget = err.causes.find((c) => c.reason === "DisruptionBudget");
      if (!budget) throw err;
      return { kind: "budget", message: budget.message ?? err.message };
    }
    return { kind: "applied", detail: `evicted ${action.namespace}/${action.pod} (uid ${action.uid})` };
  }
}

/**
 * The re-create (F1–F4), one request each, never resent: create the record, DELETE the set
 * (propagationPolicy Orphan, uid and resourceVersion preconditions), POST the set from the
 * record, DELETE the record (uid precondition).
 */
export class KubeRecreateWriter implements RecreateWriter {
  constructor(private readonly client: KubeClient) {}

  async writeRecord(action: WriteRecord) {
    const body = { apiVersion: "v1", kind: "ConfigMap", ...action.record };
    await this.client.create(RecreateRoutes.createRecord, { namespace: action.namespace }, body);
    return { kind: "applied" as const, detail: `created ConfigMap ${action.namespace}/${action.record.metadata.name}` };
  }

  async armRecord(action: ArmRecord) {
    const body = {
      metadata: { resourceVersion: action.resourceVersion },
      data: { [RecordKeys.armed]: String(action.armed) },
    };
    await this.client.patch(
      RecreateRoutes.patchRecord,
      { namespace: action.namespace, name: action.name },
      body,
      MERGE_PATCH,
    );
    return {
      kind: "applied" as const,
      detail: `${action.armed ? "armed" : "disarmed"} ConfigMap ${action.namespace}/${action.name}`,
    };
  }

  async orphanSet(action: OrphanSet) {
    const options = {
      apiVersion: "v1",
      kind: "DeleteOptions",
      propagationPolicy: "Orphan",
      preconditions: { uid: action.uid, resourceVersion: action.resourceVersion },
    };
    await this.client.delete(
      RecreateRoutes.deleteStatefulSet,
      { namespace: action.namespace, name: action.set },
      options,
    );
    return {
      kind: "applied" as const,
      detail: `deleted StatefulSet ${action.namespace}/${action.set} (orphan; uid ${action.uid})`,
    };
  }

  async createSet(action: CreateSet) {
    const body = { apiVersion: "apps/v1", kind: "StatefulSet", ...action.manifest };
    const created = (await this.client.create(
      RecreateRoutes.createStatefulSet,
      { namespace: action.namespace },
      body,
    )) as { metadata?: { uid?: string } } | undefined;
    return {
      kind: "applied" as const,
      detail: `created StatefulSet ${action.namespace}/${action.set}${created?.metadata?.uid ? ` (uid ${created.metadata.uid})` : ""}`,
    };
  }

  /**
   * F5: a merge patch of `metadata.managedFields` (non-apply writes may set them: the API server
   * takes the list as sent) and the annotation that says it was done, under the set's
   * resourceVersion as read (a set created since has another). Only claimstep's annotations change
   * in the object (this one and the step's status: the patch moves the resourceVersion a status
   * write of its own would need), and claimstep owns them.
   */
  async restoreOwnership(action: RestoreOwnership, annotations: Record<string, string> | undefined) {
    const body = {
      metadata: {
        resourceVersion: action.resourceVersion,
        managedFields: action.managedFields,
        annotations: { ...annotations, [Keys.ownershipRestored]: action.record },
      },
    };
    await this.client.patch(
      RecreateRoutes.restoreOwnership,
      { namespace: action.namespace, name: action.set },
      body,
      MERGE_PATCH,
    );
    return {
      kind: "applied" as const,
      detail: `restored the field ownership of StatefulSet ${action.namespace}/${action.set} (${action.managedFields.length} managedFields entries)`,
    };
  }

  async deleteRecord(action: DeleteRecord) {
    const preconditions = {
      uid: action.uid,
      ...(action.resourceVersion !== undefined ? { resourceVersion: action.resourceVersion } : {}),
    };
    const options = { apiVersion: "v1", kind: "DeleteOptions", preconditions };
    await this.client.delete(RecreateRoutes.deleteRecord, { namespace: action.namespace, name: action.name }, options);
    return { kind: "applied" as const, detail: `deleted ConfigMap ${action.namespace}/${action.name}` };
  }

  async labelClaim(action: LabelClaim) {
    const body = {
      metadata: {
        ...(action.resourceVersion !== undefined ? { resourceVersion: action.resourceVersion } : {}),
        labels: { [Keys.orphanedFrom]: action.orphanedFrom },
      },
    };
    await this.client.patch(Routes.labelClaim, { namespace: action.namespace, name: action.claim }, body, MERGE_PATCH);
    return {
      kind: "applied" as const,
      detail:
        action.orphanedFrom === null
          ? `removed label ${Keys.orphanedFrom} from PersistentVolumeClaim ${action.namespace}/${action.claim}`
          : `labelled PersistentVolumeClaim ${action.namespace}/${action.claim} ${Keys.orphanedFrom}=${action.orphanedFrom}`,
    };
  }
}

/** events.k8s.io/v1 Events on the StatefulSet; a repeat raises the series count of the one written. */
export class KubeEventRecorder implements EventRecorder {
  private readonly reportingInstance: string;
  /** Count and resourceVersion of events this writer wrote: a repeat then costs one request instead of two. */
  private readonly series = new Map<string, SeriesState>();

  constructor(
    private readonly client: KubeClient,
    opts: KubeWriterOptions = {},
  ) {
    const instance = opts.reportingInstance ?? "claimstep";
    if (!instance || instance.length > 128) {
      throw new Error(
        `reportingInstance ${JSON.stringify(instance)} must be 1 to 128 characters (e.g. the pod or Worker name)`,
      );
    }
    this.reportingInstance = instance;
  }

  async recordEvents(ref: SetRef, events: EventRecord[], now: Date): Promise<void> {
    for (const event of events) await this.recordEvent(ref, event, now);
  }

  /**
   * A repeat raises `series.count` of the event already written, without a read: with the count
   * known from an earlier answer, one PATCH carries the next count under a resourceVersion
   * precondition; otherwise an empty PATCH answers the current count first. A 404 (first
   * occurrence, or the event expired) creates it.
   */
  private async recordEvent(ref: SetRef, event: EventRecord, now: Date): Promise<void> {
    const name = eventName(ref, event);
    const target = { namespace: ref.namespace, name };
    const bump = async (known: SeriesState) => {
      const series = { count: known.count + 1, lastObservedTime: microTime(now) };
      this.remember(
        name,
        await this.client.patch(
          Routes.patchEvent,
          target,
          { metadata: { resourceVersion: known.resourceVersion }, series },
          MERGE_PATCH,
        ),
      );
    };
    const known = this.series.get(name);
    this.series.delete(name);
    try {
      if (known) {
        try {
          return await bump(known);
        } catch (err) {
          // Someone else wrote the event since: learn its count below.
          if (!(err instanceof ApiError && err.kind === "Conflict")) throw err;
        }
      }
      await bump(this.remember(name, await this.client.patch(Routes.patchEvent, target, {}, MERGE_PATCH)));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      this.series.delete(name);
      if (err.kind === "NotFound") return this.createEvent(ref, event, now);
      // A concurrent invocation raised the count between our two requests: it recorded this occurrence.
      if (err.kind === "Conflict") return;
      throw err;
    }
  }

  private async createEvent(ref: SetRef, event: EventRecord, now: Date): Promise<void> {
    const name = eventName(ref, event);
    try {
      this.remember(
        name,
        await this.client.create(
          Routes.createEvent,
          { namespace: ref.namespace, name },
          eventBody(ref, event, now, this.reportingInstance),
        ),
      );
    } catch (err) {
      // Created by a concurrent invocation: the same occurrence.
      if (err instanceof ApiError && err.kind === "AlreadyExists") return;
      throw err;
    }
  }

  private remember(name: string, answer: unknown): SeriesState {
    const parsed = EventState.safeParse(answer);
    const state = {
      count: (parsed.success && parsed.data.series?.count) || 1,
      resourceVersion: (parsed.success && parsed.data.metadata.resourceVersion) || "",
    };
    this.series.delete(name);
    if (this.series.size >= SERIES_CACHE_SIZE) this.series.delete(this.series.keys().next().value!);
    if (state.resourceVersion) this.series.set(name, state);
    return state;
  }
}

/** The direct writers of one client. */
export interface KubeWriters extends Writers {
  claims: KubeClaimWriter;
  status: KubeSetStatusWriter;
  events: KubeEventRecorder;
  pods: KubePodWriter;
  recreate: KubeRecreateWriter;
}

export function kubeWriters(client: KubeClient, opts: KubeWriterOptions = {}): KubeWriters {
  return {
    claims: new KubeClaimWriter(client),
    status: new KubeSetStatusWriter(client),
    events: new KubeEventRecorder(client, opts),
    pods: new KubePodWriter(client),
    recreate: new KubeRecreateWriter(client),
  };
}
