// ActionWriter over the simulated API server: PatchClaim as a forced server-side apply of only the
// fields claimstep owns (with the claim's resourceVersion as read, so a step that lost a race gets
// a 409 instead of acting on a stale snapshot), StatefulSet annotations as a merge patch with a
// resourceVersion precondition, events de-duplicated by (reason, note) with a growing count.
import type { ActionWriter, ApplyOutcome } from "../../core/ports.js";
import { FIELD_MANAGER, type Action, type Decision, type EventRecord, type SetRef } from "../../core/types.js";
import { EVENT_NOTE_LIMIT, type SimApi } from "./api.js";
import type { Json } from "./store.js";

export interface SimWriterOptions {
  /** Send the claim's resourceVersion with each apply (default true). */
  preconditions?: boolean;
  reportingInstance?: string;
}

/** The apply configuration of one PatchClaim: only claimstep's fields. */
export function claimManifest(action: Action, preconditions: boolean): Json {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: {
      name: action.claim,
      namespace: action.namespace,
      labels: { ...action.labels },
      ...(Object.keys(action.annotations).length ? { annotations: { ...action.annotations } } : {}),
      ...(preconditions && action.resourceVersion !== undefined ? { resourceVersion: action.resourceVersion } : {}),
    },
    spec: {
      resources: { requests: { storage: action.storage } },
      ...(action.volumeAttributesClassName !== undefined ? { volumeAttributesClassName: action.volumeAttributesClassName } : {}),
    },
  };
}

/** A note the API server accepts: at most 1 kB, cut on a character boundary. */
export function boundedNote(note: string): string {
  const bytes = new TextEncoder().encode(note);
  if (bytes.length <= EVENT_NOTE_LIMIT) return note;
  let cut = note.slice(0, EVENT_NOTE_LIMIT - 3);
  while (new TextEncoder().encode(cut).length > EVENT_NOTE_LIMIT - 3) cut = cut.slice(0, -1);
  return `${cut}...`;
}

const microTime = (d: Date) => d.toISOString().replace(/Z$/, "000Z");

export class SimActionWriter implements ActionWriter {
  readonly name = "simulated cluster";
  readonly supports = ["PatchClaim"] as const;

  constructor(
    private readonly api: SimApi,
    private readonly opts: SimWriterOptions = {},
  ) {}

  async apply(action: Action, _decision: Decision): Promise<ApplyOutcome> {
    const applied = await this.api.applyClaim(claimManifest(action, this.opts.preconditions !== false), { fieldManager: FIELD_MANAGER, force: true });
    const rv = (applied.metadata as Json).resourceVersion as string;
    return { kind: "applied", detail: `applied ${action.namespace}/${action.claim} (resourceVersion ${rv})` };
  }

  async annotateSet(ref: SetRef, annotations: Record<string, string>, resourceVersion?: string): Promise<void> {
    await this.api.mergePatch(
      "statefulsets",
      ref.namespace,
      ref.name,
      { metadata: { annotations, ...(resourceVersion !== undefined ? { resourceVersion } : {}) } },
      { fieldManager: FIELD_MANAGER },
    );
  }

  async recordEvents(ref: SetRef, events: EventRecord[], now: Date): Promise<void> {
    if (!events.length) return;
    const existing = (await this.api.list("events", ref.namespace)).items.filter((e) => {
      const r = e.regarding as Json | undefined;
      return r?.kind === "StatefulSet" && r.name === ref.name && e.reportingController === "claimstep.io/stepper";
    });
    for (const event of events) {
      const note = boundedNote(event.note);
      const same = existing.find((e) => e.reason === event.reason && e.note === note);
      if (same) {
        const count = ((same.series as { count?: number } | undefined)?.count ?? 1) + 1;
        await this.api.mergePatch("events", ref.namespace, (same.metadata as Json).name as string, { series: { count, lastObservedTime: microTime(now) } }, { fieldManager: FIELD_MANAGER });
        continue;
      }
      const created = await this.api.create(
        "events",
        {
          metadata: { generateName: `${ref.name}-`, namespace: ref.namespace },
          eventTime: microTime(now),
          reportingController: "claimstep.io/stepper",
          reportingInstance: this.opts.reportingInstance ?? "claimstep-sim",
          action: event.action,
          reason: event.reason,
          regarding: { kind: "StatefulSet", namespace: ref.namespace, name: ref.name, apiVersion: "apps/v1" },
          note,
          type: event.type,
        },
        { fieldManager: FIELD_MANAGER },
      );
      existing.push(created);
    }
  }
}
