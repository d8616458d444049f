// The view model of a set, shared by every interface that shows one: `claimstep status` (the
// table, `-o wide`, `--watch`), the status page (`/ui`, `/ui/:namespace/:name`) and the plain-text
// table of core/view/render.ts. Every field a person reads is computed here once (where the set stands:
// core/view/summary.ts, from the policy and the plan of the next step), so the terminal and the page
// cannot disagree. Pure: strings in, strings out (no clock, no I/O; times are the cluster's own
// timestamps, shown as found).

import { recreateOutlook } from "../change/outlook.js";
import { Keys } from "../keys.js";
import type { ClaimTemplate, StatefulSet } from "../kube/k8s.js";
import { podCoordinationOf, removeListOf, restartPodsOf } from "../policy/annotations.js";
import { desiredOf } from "../policy/policy.js";
import { finalizeForOf } from "../policy/records.js";
import type { Action, ClaimReport, Decision, OrdinalReport, Snapshot, UsageReading } from "../types.js";
import { type OrphansView, orphansView } from "./orphans.js";
import { type Headline, headlineOf, type SetSummary } from "./summary.js";
import { type Timeline, timelineOf } from "./timeline.js";
import { type UsageView, usageView } from "./usage-view.js";

const str = (v: unknown, fallback = "-"): string =>
  typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : fallback;

/** The last http(s) URL of a message (a pull request's link), or undefined. */
export function linkIn(message: string): string | undefined {
  const all = [...message.matchAll(/https?:\/\/[^\s<>"'`]+/g)];
  const last = all.at(-1)?.[0]?.replace(/[.,;:)\]]+$/, "");
  return last && /^https?:\/\/[^/\s]+/.test(last) ? last : undefined;
}

// ---------------------------------------------------------------------------------------------
// The per-ordinal table

/** A claim's readiness as one cell: `Ready`, or `<state>: <why>` without the claim's own name. */
export const readinessText = (c: ClaimReport): string =>
  c.readiness.state === "Ready" ? "Ready" : `${c.readiness.state}: ${c.readiness.message.replace(`${c.claim}: `, "")}`;

/** The VolumeAttributesClass cell: `current→desired` while they differ. */
export const vacText = (c: ClaimReport): string => {
  const v = c.volumeAttributesClassName;
  if (!v) return "-";
  if (v.desired && v.current && v.desired !== v.current) return `${v.current}→${v.desired}`;
  return v.desired ?? v.current ?? "-";
};

export interface ClaimRow {
  claim: string;
  template: string;
  spec: string;
  capacity: string;
  target: string;
  vac: string;
  revision: string;
  /** Ready, Resizing, Failed, … */
  readiness: string;
  /** The readiness cell of the text table (`Resizing: the driver is resizing the volume`). */
  readinessText: string;
}

export interface PodCells {
  /** `web-2`, with ` (Running)` when the phase is known. */
  pod: string;
  /** `Ready`, `NotReady`, or `-` when there is no pod. */
  ready: string;
  /** The pod's template revision, with ` (updated)` when it runs the set's update revision. */
  revision: string;
}

export interface OrdinalRow extends PodCells {
  ordinal: number;
  podName: string;
  state: string;
  claims: ClaimRow[];
}

export const podCells = (o: OrdinalReport): PodCells => ({
  pod: `${o.pod}${o.podPhase ? ` (${o.podPhase})` : ""}`,
  ready: o.podReady === undefined ? "-" : o.podReady ? "Ready" : "NotReady",
  revision:
    o.podRevision === undefined
      ? "-"
      : `${o.podRevision}${o.podUpdated === true ? " (updated)" : o.podUpdated === false ? " (old)" : ""}`,
});

export function ordinalRows(ordinals: readonly OrdinalReport[]): OrdinalRow[] {
  return ordinals.map((o) => ({
    ordinal: o.ordinal,
    podName: o.pod,
    ...podCells(o),
    state: o.state,
    claims: o.claims.map((c) => ({
      claim: c.claim,
      template: c.template,
      spec: c.spec ?? "-",
      capacity: c.capacity ?? "-",
      target: c.target ?? "-",
      vac: vacText(c),
      revision: c.revision ?? "-",
      readiness: c.readiness.state,
      readinessText: readinessText(c),
    })),
  }));
}

/** Pods are shown once claimstep coordinates them: `pod-coordination: ClaimsFirst` or `restart-pods: WhenRequired`. */
export function podsCoordinated(set: Pick<StatefulSet, "metadata">): boolean {
  // Each read alone: pods are shown even when another pod setting is invalid (podPolicyOf would refuse).
  const coordination = podCoordinationOf(set);
  const restart = restartPodsOf(set);
  return (coordination.ok && coordination.value === "ClaimsFirst") || (restart.ok && restart.value === "WhenRequired");
}

// ---------------------------------------------------------------------------------------------
// The next step

/** One line for any action of a decision. */
export function actionText(action: Action): string {
  switch (action.type) {
    case "PatchClaim":
      return `PatchClaim ${action.namespace}/${action.claim} storage=${action.storage}${action.volumeAttributesClassName ? ` volumeAttributesClassName=${action.volumeAttributesClassName}` : ""}`;
    case "PatchPartition":
      return `PatchPartition ${action.namespace}/${action.set} partition ${action.from} → ${action.partition}${
        typeof action.userPartition === "number"
          ? ` (recording the user's partition ${action.userPartition})`
          : action.userPartition === null
            ? " (restoring the user's partition)"
            : ""
      }`;
    case "EvictPod":
      return `EvictPod ${action.namespace}/${action.pod} (ordinal ${action.ordinal}: ${action.claim} waits on its pod to finish resizing)`;
    case "WriteRecord":
      return `WriteRecord ${action.namespace}/${action.record.metadata?.name ?? "?"} (the record to re-create ${action.set} from)`;
    case "OrphanSet":
      return `OrphanSet ${action.namespace}/${action.set} (delete the StatefulSet, orphaning its pods and claims)`;
    case "CreateSet":
      return `CreateSet ${action.namespace}/${action.set} (re-create the StatefulSet with the desired claim templates)`;
    case "RestoreOwnership":
      return `RestoreOwnership ${action.namespace}/${action.set} (hand the old set's field ownership back: ${action.managedFields.length} managedFields entries)`;
    case "DeleteRecord":
      return `DeleteRecord ${action.namespace}/${action.name} (the re-created set has adopted its pods)`;
    case "ArmRecord":
      return `ArmRecord ${action.namespace}/${action.name} (${action.armed ? "arm" : "disarm"} the re-create record of ${action.set})`;
    case "ProposeRecreate":
      return `ProposeRecreate ${action.namespace}/${action.set} (propose the re-create at revision ${action.revision})`;
    case "LabelClaim":
      return action.orphanedFrom === null
        ? `LabelClaim ${action.namespace}/${action.claim} (template back: remove ${Keys.orphanedFrom})`
        : `LabelClaim ${action.namespace}/${action.claim} ${Keys.orphanedFrom}=${action.orphanedFrom} (template removed; claim kept)`;
    case "RaiseTemplate":
      return `RaiseTemplate ${action.namespace}/${action.set} template ${action.template} ${action.from} → ${action.to} (autogrow)`;
    default: {
      // Every action type has its line: a new one is a compile error here, not a line without text.
      const unknown: never = action;
      return unknown;
    }
  }
}

export interface NextStep {
  phase: string;
  reason: string;
  message: string;
  /** What the step would write, or `nothing to write`. */
  action: string;
  revision: string;
  /** Seconds after which the next step is worth running. */
  requeueAfter?: number;
}

export const nextStepOf = (d: Decision): NextStep => ({
  phase: d.phase,
  reason: d.reason,
  message: d.message,
  action: d.action ? actionText(d.action) : "nothing to write",
  revision: d.revision ?? "-",
  ...(d.requeueAfter !== undefined ? { requeueAfter: d.requeueAfter } : {}),
});

// ---------------------------------------------------------------------------------------------
// Desired vs live templates

export interface TemplateField {
  field: string;
  live: string;
  desired: string;
  changed: boolean;
}

export interface TemplateView {
  name: string;
  fields: TemplateField[];
  /** The next re-create adds it (desired, not live) or removes it (`claimstep.io/remove-claim-templates`). */
  change?: "added" | "removed";
}

export interface TemplatesView {
  /** Where the desired templates come from: the annotation, or the live spec. */
  source: "annotation" | "spec" | "invalid";
  /** Why the annotation is invalid. */
  error?: string;
  templates: TemplateView[];
}

const mapText = (m: Record<string, string> | undefined): string =>
  m && Object.keys(m).length
    ? Object.keys(m)
        .sort()
        .map((k) => `${k}=${m[k]}`)
        .join(", ")
    : "-";

const fieldsOf = (t: ClaimTemplate | undefined): Record<string, string> => ({
  storage: str(t?.spec.resources?.requests?.storage),
  storageClassName: str(t?.spec.storageClassName),
  volumeAttributesClassName: str(t?.spec.volumeAttributesClassName),
  accessModes: t?.spec.accessModes?.length ? t.spec.accessModes.join(", ") : "-",
  labels: mapText(t?.metadata.labels),
  annotations: mapText(t?.metadata.annotations),
});

export function templatesView(set: StatefulSet): TemplatesView {
  const live = set.spec.volumeClaimTemplates ?? [];
  // The desired templates as the planner reads them (a template being removed is not desired).
  const desired = desiredOf(set);
  const byName = new Map((desired.ok ? desired.templates : []).map((t) => [t.metadata.name, t]));
  // Unreadable: [] here; the planner says why.
  const list = removeListOf(set);
  const removing = list.ok ? list.value : [];
  const liveNames = new Set(live.map((t) => t.metadata.name));
  const row = (name: string, l: Record<string, string>, d: Record<string, string> | undefined) => ({
    name,
    fields: Object.keys(l).map((field) => ({
      field,
      live: l[field]!,
      desired: d ? d[field]! : "-",
      changed: d ? d[field] !== l[field] : false,
    })),
  });
  const shape = [
    ...(desired.ok ? desired.templates : [])
      .filter((t) => !liveNames.has(t.metadata.name))
      .map((t) => ({ ...row(t.metadata.name, fieldsOf(undefined), fieldsOf(t)), change: "added" as const })),
    ...live
      .filter((t) => removing.includes(t.metadata.name))
      .map((t) => ({
        ...row(t.metadata.name, fieldsOf(t), undefined),
        fields: row(t.metadata.name, fieldsOf(t), undefined).fields.map((f) => ({
          ...f,
          desired: "(removed)",
          changed: true,
        })),
        change: "removed" as const,
      })),
  ];
  const templates = live
    .filter((t) => !removing.includes(t.metadata.name))
    .map((t) => {
      const l = fieldsOf(t);
      const d = desired.ok ? fieldsOf(byName.get(t.metadata.name) ?? t) : undefined;
      return {
        name: t.metadata.name,
        fields: Object.keys(l).map((field) => ({
          field,
          live: l[field]!,
          desired: d ? d[field]! : "-",
          changed: d ? d[field] !== l[field] : false,
        })),
      };
    });
  const all = [...templates, ...shape];
  return desired.ok
    ? { source: desired.source, templates: all }
    : { source: "invalid", error: desired.message, templates: all };
}

// ---------------------------------------------------------------------------------------------
// Events and the whole page

/** One Event of claimstep on the set, as read from the Events API. */
export interface EventRow {
  /** The latest occurrence (series.lastObservedTime, else eventTime), as the API server wrote it. */
  time: string;
  type: string;
  reason: string;
  note: string;
  count: number;
}

/** Newest first (ISO timestamps sort as text), at most `limit`. */
export const recentEvents = (events: readonly EventRow[], limit = 20): EventRow[] =>
  [...events].sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0)).slice(0, limit);

export interface SetPageView {
  summary: SetSummary;
  headline: Headline;
  /** The plan of the next step; while Blocked by a refused write, the wait instead of the write refused again. */
  next: NextStep;
  /** Once Complete with live templates that differ from the desired ones: how to re-create the set. */
  finalizeHint?: string;
  ordinals: OrdinalRow[];
  pods: boolean;
  templates: TemplatesView;
  /** Newest first; absent when they could not be read (with why). */
  events: EventRow[];
  eventsError?: string;
  /** The rollout per ordinal (core/view/timeline.ts): claims written → resized → pod replaced. */
  timeline: Timeline;
  /** With claimstep.io/autogrow: each watched claim's usage against the threshold. */
  usage?: UsageView;
  /** The claims of removed claim templates, kept (Decision.orphanedClaims; docs/templates.md). */
  orphans?: OrphansView;
}

/**
 * The next step while the recorded status is Blocked for this revision and the plan would write:
 * that write is the one the server refused (the planner cannot know it was), so the page shows the
 * wait on its cause rather than a write that would be refused again.
 */
export function nextAfterRefusal(headline: Headline, planned: Decision): NextStep | undefined {
  if (
    headline.phase !== "Blocked" ||
    headline.reason === "NotObserved" ||
    !planned.action ||
    planned.phase === "Blocked"
  )
    return undefined;
  return {
    phase: "Blocked",
    reason: headline.reason,
    message: `the server refused the last write (${headline.reason}): ${actionText(planned.action)} would be refused again until its cause is fixed (see the message above). claimstep serve tries it again after a pause that grows with each refusal; a step run by hand (claimstep step) tries at once.`,
    action: "nothing until the cause is fixed (the write was refused)",
    revision: planned.revision ?? "-",
  };
}

/** Once Complete, when the live claim templates still differ from the desired ones: how to re-create the set. */
export function finalizeHintOf(set: StatefulSet, headline: Headline, templates: TemplatesView): string | undefined {
  if (headline.phase !== "Complete" || templates.source !== "annotation") return undefined;
  if (!templates.templates.some((t) => t.fields.some((f) => f.changed))) return undefined;
  const ns = set.metadata.namespace ?? "default";
  // A Recreate claimstep wrote for an earlier change is spent (docs/finalize.md): annotating it again changes nothing.
  const spent = recreateOutlook(set)?.recreate === false && finalizeForOf(set) !== undefined;
  return `Every claim is at the new templates, but the StatefulSet's live spec.volumeClaimTemplates still differ from them (the API server refuses to edit them), so a scale-up creates claims at the old size until claimstep grows them. To re-create the set with the desired templates, keeping its pods and claims, run claimstep finalize ${set.metadata.name} -n ${ns}, or ${spent ? `make its claimstep.io/finalize: Recreate yours (claimstep wrote it for an earlier change, spent since): kubectl annotate sts ${set.metadata.name} -n ${ns} ${Keys.finalizeFor}-` : "annotate it claimstep.io/finalize: Recreate"}.`;
}

/** A timestamp as the status page shows every one: `2026-11-30 10:11:45 UTC`; anything else as found. */
export function timeText(value: string): string {
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value)) return value;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? value : `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/**
 * The set's page: where it stands (core/view/summary.ts), the plan of the next step (no write),
 * templates, events, the rollout's timeline and, with autogrow, the claims' usage (`usage`: what
 * the metrics reader answered; undefined when none is configured). `planned` is the step's dry run
 * on `snapshot`, `summary` where it stands (core/view/summary.ts summaryOf).
 */
export function setPage(
  snapshot: Snapshot,
  planned: Decision,
  summary: SetSummary,
  events: readonly EventRow[] | { error: string },
  usage?: UsageReading,
): SetPageView {
  const set = snapshot.statefulSet;
  const headline = headlineOf(summary);
  const templates = templatesView(set);
  const finalizeHint = finalizeHintOf(set, headline, templates);
  const orphans = orphansView(planned.ref, planned.orphanedClaims);
  return {
    summary,
    headline,
    next: nextAfterRefusal(headline, planned) ?? nextStepOf(planned),
    ...(finalizeHint ? { finalizeHint } : {}),
    ordinals: ordinalRows(planned.ordinals),
    pods: podsCoordinated(set),
    templates,
    events: "error" in events ? [] : recentEvents(events),
    ...("error" in events ? { eventsError: events.error } : {}),
    timeline: timelineOf({
      set: set.metadata.name,
      revision: summary.revision !== "-" ? summary.revision : (summary.desiredRevision ?? "-"),
      ordinals: planned.ordinals,
      events: "error" in events ? [] : events,
      pods: podsCoordinated(set),
      ...(summary.observedAt !== "-" ? { observedAt: summary.observedAt } : {}),
    }),
    ...withUsage(set, planned, usage),
    ...(orphans ? { orphans } : {}),
  };
}

const IN_SCOPE = new Set(["Updated", "InFlight", "Pending", "Blocked"]);

function withUsage(set: StatefulSet, planned: Decision, reading: UsageReading | undefined): { usage?: UsageView } {
  const claims = planned.ordinals
    .filter((o) => IN_SCOPE.has(o.state))
    .flatMap((o) => o.claims.map((c) => ({ claim: c.claim, template: c.template })));
  const usage = usageView(set, claims, reading);
  return usage ? { usage } : {};
}
