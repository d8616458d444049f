// The two adapter seams of a step. The direct API server, the GitOps pull-request writer and
// the simulated cluster all implement these.
import type { Action, ActionType, Decision, EventReason, EventRecord, SetRef, Snapshot } from "./types.js";

export interface StateReader {
  /** Load one StatefulSet and what surrounds it. Throws ApiError (NotFound …) on failure. */
  load(ref: SetRef): Promise<Snapshot>;
}

/** What a writer did with an action. */
export type ApplyOutcome =
  | { kind: "applied"; detail?: string }
  /** Accepted for later (e.g. a pull request awaiting merge): the step waits. */
  | { kind: "proposed"; detail: string; url?: string }
  /** The writer will not carry it out (e.g. its pull request was closed unmerged): the set blocks. */
  | { kind: "refused"; reason: EventReason; message: string };

export interface ActionWriter {
  readonly name: string;
  /** Action types this writer can carry out; any other becomes Blocked/ActionNotSupported. */
  readonly supports: readonly ActionType[];
  /** Apply one action. Throws ApiError when the server refuses. */
  apply(action: Action, decision: Decision): Promise<ApplyOutcome>;
  /** Merge-patch StatefulSet annotations with a resourceVersion precondition. */
  annotateSet(ref: SetRef, annotations: Record<string, string>, resourceVersion?: string): Promise<void>;
  /** Record events on the StatefulSet, de-duplicated (a repeat raises the count). */
  recordEvents(ref: SetRef, events: EventRecord[], now: Date): Promise<void>;
}
