// `claimstep serve` stopping (SIGTERM from the kubelet, SIGINT): the sets its steps left between
// the re-create record and its removal (F1–F4) are named in the log, each read back from the
// cluster and said where it stands (core/view/stopped.ts), so that nobody takes a missing StatefulSet
// for a lost one: the next replica that holds the Lease, or this server restarted, finishes it.
import { isRecreateAction } from "../core/actions.js";
import { recordedKept } from "../core/plan/index.js";
import type { Decision, SetRef } from "../core/types.js";
import { whereItStands } from "../core/view/index.js";
import { runStep, type StepOptions, type StepResult } from "./step.js";

/** Actions and reasons of the re-create: a set whose step said one of them may be left mid-way. */
const RECREATE_REASONS: readonly string[] = [
  "RecordWritten",
  "RecordArmed",
  "SetOrphaned",
  "SetCreated",
  "OwnershipRestored",
  "Recreating",
  "SetRecreated",
  "RecordUnreadable",
  "RecreateReplaced",
  "RecreatedByOther",
];

const inRecreate = (d: Decision): boolean =>
  (d.action !== undefined && isRecreateAction(d.action.type)) || RECREATE_REASONS.includes(d.reason);

/** How long the read-back of one set may take when the server stops (the pod's grace period is 30 s). */
const READ_BACK_MS = 5_000;

export class MidRecreate {
  private readonly sets = new Map<string, { ref: SetRef; finalize: boolean }>();

  /** `step` that remembers each set whose last step was part of a re-create. */
  watch(step: (o: StepOptions) => Promise<StepResult>): (o: StepOptions) => Promise<StepResult> {
    return async (o) => {
      const r = await step(o);
      if (o.dryRun) return r;
      // Remembered from its first re-create step, forgotten once a step is past it.
      const key = `${o.ref.namespace}/${o.ref.name}`;
      if (inRecreate(r.decision)) this.sets.set(key, { ref: o.ref, finalize: o.finalize === true });
      else this.sets.delete(key);
      return r;
    };
  }

  /**
   * One JSON line per remembered set still mid re-create (its record exists, or the set is gone),
   * saying where it stands and who finishes it; a set that could not be read back is named too.
   */
  async report(opts: {
    reader: StepOptions["reader"];
    writers: StepOptions["writers"];
    now: () => Date;
    signal: string;
    log: (entry: Record<string, unknown>) => void;
  }): Promise<void> {
    for (const { ref, finalize } of this.sets.values()) {
      const set = `${ref.namespace}/${ref.name}`;
      const command = `claimstep ${finalize ? "finalize" : "run"} ${ref.name} -n ${ref.namespace}`;
      const finishedBy = `the next claimstep that steps it (the replica that holds the Lease, this server restarted, or \`${command}\`) finishes it`;
      try {
        const snapshot = await opts.reader.load(ref, {
          recreateRecord: true,
          signal: AbortSignal.timeout(READ_BACK_MS),
        });
        if (!snapshot.setMissing && !snapshot.recreateRecord) continue;
        const planned = await runStep({
          reader: { load: async () => snapshot },
          writers: opts.writers,
          ref,
          now: opts.now(),
          dryRun: true,
          ...(finalize ? { finalize: true } : {}),
        });
        const where = whereItStands({
          decision: planned.decision,
          setMissing: snapshot.setMissing === true,
          kept: recordedKept(snapshot),
          record: snapshot.recreateRecord !== undefined,
          command,
        });
        opts.log({ msg: "left mid re-create", signal: opts.signal, set, standing: where.text, finishedBy });
      } catch (err) {
        opts.log({
          msg: "left mid re-create",
          signal: opts.signal,
          set,
          error: `could not read it back: ${err instanceof Error ? err.message : String(err)}`,
          finishedBy,
        });
      }
    }
  }
}
