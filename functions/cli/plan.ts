// `plan` and `step` (one set), `step --all` (every opted-in set, for a CronJob).
import { recreateOutlook } from "../../core/change/index.js";
import type { Snapshot } from "../../core/types.js";
import { renderDecision } from "../../core/view/index.js";
import { runStep, type StepResult } from "../step.js";
import { sweep } from "../sweep.js";
import { paintHeadline, paintPhase } from "./color.js";
import type { Context } from "./context.js";
import { EXIT, exitOf } from "./exit-codes.js";
import { UsageError } from "./flags.js";
import { emit, print } from "./io.js";
import { optedIn } from "./listing.js";
import { outcomeText, resultJSON } from "./step-lines.js";
import { refOf } from "./target.js";

export async function plan(ctx: Context, dryRun = true): Promise<number> {
  if (ctx.flags.selector !== undefined)
    throw new UsageError(
      `${dryRun ? "plan" : "step"}: -l/--selector picks the sets of step --all; name one set or add --all`,
    );
  if (ctx.flags["all-namespaces"])
    throw new UsageError("step: -A goes with --all (every opted-in set of every namespace)");
  const target = await ctx.target();
  const ref = refOf(ctx.flags, target, ctx.args[0], dryRun ? "plan" : "step");
  // The set as the step read it: whether its desired templates end in a re-create, and why.
  let read: Snapshot | undefined;
  const r = await runStep({
    reader: { load: async (...args) => (read = await target.reader.load(...args)) },
    writers: target.writers,
    metrics: target.metrics,
    ref,
    now: target.now(),
    dryRun,
  });
  const outlook = read && !read.setMissing ? recreateOutlook(read.statefulSet) : undefined;
  if (ctx.json)
    emit(ctx, { ...resultJSON(r), ...(outlook ? { recreate: { recreate: outlook.recreate, why: outlook.why } } : {}) });
  else
    print(
      ctx.io,
      `${paintHeadline(renderDecision(r.decision), r.decision.phase, ctx.color)}\n\n${outcomeText(r)}${outlook ? `\n${outlook.text}` : ""}`,
    );
  return exitOf(r.decision);
}

/** `step --all`: one step of every opted-in set; exit 2 when one is blocked, 1 when one failed. */
export async function stepAll(ctx: Context): Promise<number> {
  if (ctx.args[0]) throw new UsageError("step --all steps every opted-in set: give no StatefulSet name");
  const target = await ctx.target();
  const namespaces = ctx.flags["all-namespaces"] ? [] : [ctx.flags.namespace ?? target.namespace];
  const selector = ctx.flags.selector;
  const dryRun = ctx.flags["dry-run"] ?? false;
  // Each set's result, for its line: the outcome as step <name> words it.
  const results = new Map<string, StepResult>();
  const report = await sweep({
    listOptedIn: (ns) => optedIn(target, ns, selector),
    namespaces,
    step: async (ref) => {
      const r = await runStep({
        reader: target.reader,
        writers: target.writers,
        metrics: target.metrics,
        ref,
        now: target.now(),
        dryRun,
      });
      results.set(`${ref.namespace}/${ref.name}`, r);
      return r;
    },
    tick: 0,
    // Mid re-create the next step is due at once: on the simulated cluster its clock moves.
    sleep: (ms) => target.pause(ms, ctx.signal),
  });
  if (ctx.json) emit(ctx, report);
  else if (report.found === 0) print(ctx.io, "no opted-in StatefulSets");
  else {
    for (const e of report.stepped) {
      // As step <name> says it: phase, reason, the message (why it is blocked, what it does), the outcome.
      const key = `${e.ref.namespace}/${e.ref.name}`;
      const r = results.get(key);
      print(
        ctx.io,
        "error" in e
          ? `${key}  error: ${e.error}`
          : `${key}  ${paintPhase(e.phase, ctx.color)}  ${e.reason}  ${e.message}  (${r ? outcomeText(r) : e.outcome})`,
      );
    }
  }
  if (report.stepped.some((e) => "error" in e)) return EXIT.error;
  return report.stepped.some((e) => "phase" in e && e.phase === "Blocked") ? EXIT.blocked : EXIT.ok;
}
