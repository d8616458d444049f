// A step told to the metrics recorder (core/view/recorder.ts): its outcome and duration, and the set's
// gauges from the snapshot it read. Without a recorder (the Worker, the CLI) it is runStep itself.
// A plan (dryRun) records nothing.
import { ApiError } from "../adapters/api-error.js";
import type { MetricsReader } from "../core/ports.js";
import type { Snapshot } from "../core/types.js";
import { observeSet, outcomeLabel, type Recorder } from "../core/view/index.js";
import { runStep, type StepOptions, type StepResult } from "./step.js";

export async function recordedStep(opts: StepOptions & { recorder?: Recorder | undefined }): Promise<StepResult> {
  const { recorder, ...step } = opts;
  if (!recorder || step.dryRun) return runStep(step);
  let snapshot: Snapshot | undefined;
  const reader = {
    load: async (...args: Parameters<StepOptions["reader"]["load"]>) => (snapshot = await step.reader.load(...args)),
  };
  const started = performance.now();
  let result: StepResult;
  try {
    result = await runStep({ ...step, reader });
  } catch (err) {
    recorder.stepFailed((performance.now() - started) / 1000);
    // The set is gone (no re-create record to bring it back): its series go.
    if (err instanceof ApiError && err.kind === "NotFound" && !snapshot) recorder.setGone(step.ref);
    throw err;
  }
  const { decision, outcome } = result;
  const type = decision.action?.type;
  recorder.step({
    ref: step.ref,
    outcome: outcomeLabel(outcome.kind, decision.phase),
    seconds: (performance.now() - started) / 1000,
    ...(snapshot ? { set: observeSet(snapshot, decision) } : {}),
    grew: type === "RaiseTemplate" && (outcome.kind === "applied" || outcome.kind === "proposed"),
  });
  return result;
}

/** Autogrow's metrics reader, its failed queries counted (a reading that is not ok). */
export function countingMetrics(metrics: MetricsReader, recorder: Recorder): MetricsReader {
  return {
    usage: async (ref, claims, signal) => {
      const reading = await metrics.usage(ref, claims, signal);
      if (!reading.ok) recorder.prometheusQueryFailed();
      return reading;
    },
  };
}
