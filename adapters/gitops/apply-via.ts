// Per-set choice of writer: `claimstep.io/apply-via: direct | pull-request` on the StatefulSet
// (default direct). runStep accepts `writer: (snapshot) => ActionWriter`; writerFor builds that.
import type { ActionWriter } from "../../core/ports.js";
import { Keys, type Snapshot } from "../../core/types.js";
import type { StatefulSet } from "../../core/k8s.js";

export const APPLY_VIA = ["direct", "pull-request"] as const;
export type ApplyVia = (typeof APPLY_VIA)[number];

export class ApplyViaError extends Error {
  override readonly name = "ApplyViaError";
}

/** The set's apply mode; throws naming the set and the accepted values when the annotation is anything else. */
export function applyViaOf(set: StatefulSet): ApplyVia {
  const value = set.metadata.annotations?.[Keys.applyVia];
  if (value === undefined) return "direct";
  if ((APPLY_VIA as readonly string[]).includes(value)) return value as ApplyVia;
  const where = `${set.metadata.namespace ?? "default"}/${set.metadata.name}`;
  throw new ApplyViaError(
    `StatefulSet ${where}: annotation ${Keys.applyVia}=${JSON.stringify(value)} is not one of ${APPLY_VIA.join(", ")}: fix or remove it (absent = direct)`,
  );
}

export interface Writers {
  direct: ActionWriter;
  /** Absent when no GitOps repository is configured: a set asking for pull requests is then an error. */
  pullRequest?: ActionWriter;
}

/** Pick each set's writer from its annotation. */
export function writerFor(writers: Writers): (snapshot: Snapshot) => ActionWriter {
  return (snapshot) => {
    const via = applyViaOf(snapshot.statefulSet);
    if (via === "direct") return writers.direct;
    if (writers.pullRequest) return writers.pullRequest;
    const s = snapshot.statefulSet.metadata;
    throw new ApplyViaError(
      `StatefulSet ${s.namespace ?? "default"}/${s.name} asks for ${Keys.applyVia}: pull-request, but no GitOps repository is configured: configure one, or set the annotation to direct`,
    );
  };
}
