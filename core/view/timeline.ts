// The status page's rollout timeline: per ordinal, when claimstep wrote its claims, when they were
// resized and when its pod was replaced, from claimstep's Events on the set and the per-ordinal
// status of a fresh read. Pure: the page (functions/ui/pages.tsx) draws it as SVG and as a table.
//
// Where the times come from:
//   written  — the first ClaimUpdated Event of one of the ordinal's claims at this revision (its
//              note ends `; revision <rev>`); writes of another revision are left out and named.
//   resized  — claims at the revision and Ready (the status); when: the first Event after the
//              ordinal's last claim Event (ClaimUpdated / ClaimResizing), else the status' observedAt:
//              a time by which it was resized (claimstep records no Event of its own for it).
//   replaced — pods coordinated only: a PartitionLowered or PodEvicted Event naming its pod after
//              the write, or the status showing the pod on the update revision.
// Events live an hour on the API server: a done ordinal whose Events are gone is `untimed`, never
// given a made-up time.
import type { OrdinalReport, OrdinalState } from "../types.js";

/** What the timeline reads of an Event (core/view/view.ts's EventRow fits). */
export interface TimelineEvent {
  time: string;
  reason: string;
  note: string;
}

/** How far an ordinal got: pending → resizing → resized → replaced (pods coordinated), or blocked. */
export type TimelineStage = "pending" | "resizing" | "resized" | "replaced" | "blocked";

export interface OrdinalTimeline {
  ordinal: number;
  pod: string;
  state: OrdinalState;
  stage: TimelineStage;
  /** The first claim write at this revision. */
  written?: string;
  /** By when its claims were resized. */
  resized?: string;
  /** When its pod was replaced (partition lowered to it, or evicted). */
  replaced?: string;
  /** Done per the status, but the Events that would time it are gone. */
  untimed?: true;
}

export interface Timeline {
  revision: string;
  /** The first write shown; absent when no time is known. */
  start?: string;
  /** The latest time known: the last Event shown, or the status' observedAt. */
  end?: string;
  /** Highest ordinal first, as the per-ordinal table; out-of-scope and condemned ordinals are left out. */
  ordinals: OrdinalTimeline[];
  /** Revisions of claim writes found in the Events other than this one (a re-targeted rollout). */
  otherRevisions: string[];
  /** Pods coordinated by claimstep: the third stage is drawn. */
  pods: boolean;
}

export interface TimelineInput {
  /** The StatefulSet's name (its pods are `<set>-<ordinal>`). */
  set: string;
  /** The revision the rollout is at (claimstep.io/update-revision). */
  revision: string;
  ordinals: readonly OrdinalReport[];
  events: readonly TimelineEvent[];
  pods: boolean;
  /** The recorded status' observedAt. */
  observedAt?: string;
}

const SHOWN: readonly OrdinalState[] = ["Updated", "InFlight", "Pending", "Blocked"];
const CLAIM_EVENTS = new Set(["ClaimUpdated", "ClaimResizing"]);
const POD_EVENTS = new Set(["PartitionLowered", "PodEvicted"]);

const msOf = (time: string | undefined): number => (time === undefined ? Number.NaN : Date.parse(time));

/** The claim a claim Event is about: the note's `<claim>: …` prefix. */
const claimOf = (note: string): string | undefined => /^([a-z0-9][a-z0-9.-]*):\s/.exec(note)?.[1];
/** The revision a ClaimUpdated note ends with. */
const revisionOf = (note: string): string | undefined => /; revision ([A-Za-z0-9._-]+)$/.exec(note)?.[1];
/** The pod a pod Event names: `replaces pod <pod>` (PartitionLowered), `evicting pod <pod> ` (PodEvicted). */
const podOf = (note: string): string | undefined =>
  /(?:replaces|evicting) pod ([a-z0-9][a-z0-9.-]*?)(?=[\s,;:]|$)/.exec(note)?.[1];

export function timelineOf(input: TimelineInput): Timeline {
  const events = input.events
    .map((e) => ({ ...e, ms: msOf(e.time) }))
    .filter((e) => Number.isFinite(e.ms))
    .sort((a, b) => a.ms - b.ms);
  const otherRevisions = new Set<string>();
  for (const e of events) {
    const rev = e.reason === "ClaimUpdated" ? revisionOf(e.note) : undefined;
    if (rev !== undefined && rev !== input.revision) otherRevisions.add(rev);
  }
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;

  const ordinals = [...input.ordinals]
    .filter((o) => SHOWN.includes(o.state))
    .sort((a, b) => b.ordinal - a.ordinal)
    .map((o): OrdinalTimeline => {
      const claims = new Set(o.claims.map((c) => c.claim));
      const mine = events.filter((e) => CLAIM_EVENTS.has(e.reason) && claims.has(claimOf(e.note) ?? ""));
      const firstWrite = mine.find((e) => e.reason === "ClaimUpdated" && revisionOf(e.note) === input.revision);
      const claimsDone =
        o.claims.length > 0 && o.claims.every((c) => c.revision === input.revision && c.readiness.state === "Ready");
      const anyWritten = o.claims.some((c) => c.revision === input.revision);
      const row: OrdinalTimeline = { ordinal: o.ordinal, pod: o.pod, state: o.state, stage: "pending" };
      if (firstWrite) {
        row.written = firstWrite.time;
        start = Math.min(start, firstWrite.ms);
        end = Math.max(end, firstWrite.ms);
        const last = mine.filter((e) => e.ms >= firstWrite.ms).at(-1)!;
        end = Math.max(end, last.ms);
        if (claimsDone) {
          const after = events.find((e) => e.ms > last.ms);
          const observed = msOf(input.observedAt);
          row.resized = after
            ? after.time
            : Number.isFinite(observed) && observed >= last.ms
              ? input.observedAt!
              : last.time;
          end = Math.max(end, msOf(row.resized));
        }
        if (input.pods) {
          const pod = events.find((e) => POD_EVENTS.has(e.reason) && e.ms >= firstWrite.ms && podOf(e.note) === o.pod);
          if (pod) {
            row.replaced = pod.time;
            end = Math.max(end, pod.ms);
          }
        }
      }
      const podDone =
        input.pods && (row.replaced !== undefined || (o.podUpdated === true && o.podReady === true && claimsDone));
      row.stage =
        o.state === "Blocked"
          ? "blocked"
          : podDone && claimsDone
            ? "replaced"
            : claimsDone
              ? "resized"
              : anyWritten
                ? "resizing"
                : "pending";
      // Written per the status, but the write's Event is gone: in flight or done, untimed.
      if (!firstWrite && anyWritten) row.untimed = true;
      return row;
    });

  const observed = msOf(input.observedAt);
  if (Number.isFinite(start) && Number.isFinite(observed)) end = Math.max(end, observed);
  return {
    revision: input.revision,
    ...(Number.isFinite(start) ? { start: iso(input, start), end: iso(input, end) } : {}),
    ordinals,
    otherRevisions: [...otherRevisions].sort(),
    pods: input.pods,
  };
}

/** A time of the timeline as found in its input (Events' MicroTime, or the status' observedAt). */
function iso(input: TimelineInput, ms: number): string {
  for (const e of input.events) if (msOf(e.time) === ms) return e.time;
  if (msOf(input.observedAt) === ms) return input.observedAt!;
  return new Date(ms).toISOString();
}
