// The step a controller would run now on one set, planned and never written (runStep's dry run,
// with the step's own writers' capabilities and autogrow's reading), with the snapshot it read and
// the policy parsed from it: what every status surface shows (core/view/summary.ts), so that `claimstep
// status`, `status --watch` and the status page say what the step would do, not what an earlier
// one recorded.
import { policyOfSnapshot } from "../core/policy/index.js";
import type { MetricsReader, StateReader, Writers } from "../core/ports.js";
import type { Decision, SetRef, Snapshot } from "../core/types.js";
import { type SetSummary, summaryOf } from "../core/view/index.js";
import { runStep } from "./step.js";

export interface DryRun {
  snapshot: Snapshot;
  planned: Decision;
  summary: SetSummary;
}

export interface DryRunOptions {
  reader: StateReader;
  writers: Writers;
  /** Autogrow's reader; a step reads the usage only where autogrow may act. */
  metrics?: MetricsReader;
  ref: SetRef;
  now: Date;
}

/** Load the set as a step does, plan its step (nothing written) and summarize it. */
export async function dryRunOf(opts: DryRunOptions): Promise<DryRun> {
  const snapshot = await opts.reader.load(opts.ref);
  const { decision } = await runStep({
    reader: { load: async () => snapshot },
    writers: opts.writers,
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
    ref: opts.ref,
    now: opts.now,
    dryRun: true,
  });
  return { snapshot, planned: decision, summary: summaryOf(snapshot, decision, policyOfSnapshot(snapshot)) };
}
