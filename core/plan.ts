// planStep: the single next safe action for one StatefulSet (DESIGN.md rules 1–14), final when
// it returns. Pure: a function of the snapshot, the time it is given and the capabilities of the
// writer that will carry the action out. The rules live in three parts, each read top-down as
// the decision table: scope (rules 1–3), claim evaluation (rules 4–8, 13, 14), the walk (8–10).
import { evaluateOrdinal, ordinalReport, reportOrdinal, stateOf } from "./claims.js";
import { makeDecision } from "./decision.js";
import type { WriterCapabilities } from "./ports.js";
import { scopeOf } from "./scope.js";
import { belowPartition, inScope } from "./statefulset.js";
import type { Decision, OrdinalReport, Snapshot } from "./types.js";
import { forWriter } from "./verdict.js";
import { walk } from "./walk.js";

/** Compute the single next safe step for one StatefulSet, as the given writer can carry it out. */
export function planStep(snapshot: Snapshot, now: Date, writer: WriterCapabilities): Decision {
  // Rules 1–3: opt-in, desired templates, scope; or Idle / Blocked right here.
  const scoped = scopeOf(snapshot);
  if (!scoped.ok) return makeDecision(snapshot, now, [], scoped.conclusion);
  const { scope } = scoped;

  // Rules 4–8: every claim of every ordinal in scope, highest first.
  const ordinals = inScope(scope.ordinals).map((o) => evaluateOrdinal(scope, o));
  const reports: OrdinalReport[] = [
    ...ordinals.map((o) => ordinalReport(scope, o, stateOf(o))),
    ...belowPartition(scope.ordinals).map((o) => ordinalReport(scope, reportOrdinal(scope, o), "OutOfScope")),
    ...scope.condemned.map((o) => ordinalReport(scope, reportOrdinal(scope, o), "Condemned")),
  ];

  // Rules 8–10: the one thing to do now, as this writer can do it.
  const conclusion = forWriter(walk(scope, ordinals), writer);
  return makeDecision(snapshot, now, reports, { ...conclusion, revision: scope.revision, record: true });
}
