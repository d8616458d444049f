// Where a set stands, in one sentence, once a command that was stepping it stopped early (Ctrl-C,
// SIGTERM, a server shutting down): from the plan of the next step as read back from the cluster
// (a dry run), never from the annotations. Pure; the caller names the command that goes on.

import { nothingLeftToDo } from "../plan/decision.js";
import { recordName } from "../plan/recreate-record.js";
import type { Decision } from "../types.js";
import { setDeletedText } from "./summary.js";

export interface Stopped {
  /** One sentence: where the set stands and the command that goes on from there. */
  text: string;
  /**
   * The set is between the record (F1) and the record's removal (F4): its re-create record exists,
   * or the set itself is gone. What a server names when it stops (the next replica finishes it).
   */
  midRecreate: boolean;
}

export interface StoppedInput {
  /** The next step's plan (a dry run) on the snapshot read after the interruption. */
  decision: Decision;
  /** The snapshot had no StatefulSet (deleted between the orphan delete and the create). */
  setMissing: boolean;
  /** Every pod and claim the record names is there with its uid (core/plan/recreate-record.ts recordedKept). */
  kept: boolean;
  /** The snapshot had the set's re-create record. */
  record: boolean;
  /** The command that goes on, e.g. `claimstep run web -n db`. */
  command: string;
}

/** e.g. "StatefulSet db/web is deleted; its pods and claims are kept; … `claimstep run web -n db` re-creates it". */
export function whereItStands({ decision: d, setMissing, kept, record, command }: StoppedInput): Stopped {
  const ns = d.ref.namespace;
  const set = `${ns}/${d.ref.name}`;
  const cm = `ConfigMap ${ns}/${recordName(d.ref.name)}`;
  const goOn = `\`${command}\` goes on`;
  const midRecreate = setMissing || record;
  const type = d.action?.type;
  const say = (text: string): Stopped => ({ text, midRecreate });
  if (setMissing) {
    if (type === "CreateSet")
      return say(`${setDeletedText(d.ref, kept)}; ${cm} holds the set to create: \`${command}\` re-creates it`);
    return say(`${setDeletedText(d.ref, kept)}; ${d.reason}: ${d.message}`);
  }
  if (d.phase === "Blocked") return say(`${set} is blocked (${d.reason}): ${d.message}`);
  if (d.phase === "Idle") return say(`${set} is left alone (${d.reason}): ${d.message}`);
  if (record) {
    if (type === "ArmRecord" || type === "OrphanSet")
      return say(
        `${set}: the re-create has begun: ${cm} records the set to create; the StatefulSet is not deleted yet (its pods and claims untouched): ${goOn} (orphan delete, then create)`,
      );
    if (d.reason === "SetRecreated")
      return say(
        `StatefulSet ${set} is re-created and has adopted its pods; ${cm} is still there: \`${command}\` checks the pods and claims and removes it`,
      );
    if (d.reason === "RecordDiscarded")
      return say(
        `${set}: the StatefulSet stands untouched; ${cm} is no longer wanted (${d.message}): \`${command}\` removes it`,
      );
    return say(`${set}: the re-create is under way (${cm} exists): ${d.message}; ${goOn}`);
  }
  if (type === "WriteRecord")
    return say(
      `${set}: the rollout is complete; its re-create (orphan delete + create, pods and claims kept) has not started, nothing of it was written: \`${command}\` starts it`,
    );
  const c = d.status.counts;
  const rev = d.revision ? ` at revision ${d.revision}` : "";
  if (nothingLeftToDo(d)) return say(`${set} is complete${rev}: nothing left to do`);
  if (d.phase !== "Complete" && c.total > 0 && c.updated < c.total)
    return say(
      `${set}: the rollout has ${c.updated} of ${c.total} ordinal(s)${rev} (${d.phase} ${d.reason}: ${d.message}); ${goOn}`,
    );
  return say(`${set} is ${d.phase} (${d.reason}): ${d.message}; ${goOn}`);
}
