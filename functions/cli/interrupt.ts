// `run` and `finalize` stopped by SIGINT or SIGTERM: the set is read back from the cluster, the
// next step planned (a dry run), and where it stands said with the command that goes on
// (core/standing.ts); the exit code is the one a shell gives a command that signal killed.

import { recordedKept } from "../../core/plan/index.js";
import type { SetRef, Snapshot } from "../../core/types.js";
import { type Stopped, whereItStands } from "../../core/view/index.js";
import { runStep, type StepResult } from "../step.js";
import type { Context } from "./context.js";
import { INTERRUPT_EXIT } from "./exit-codes.js";
import { emit } from "./io.js";
import type { InterruptSignal } from "./signals.js";
import { resultJSON } from "./step-lines.js";
import type { Target } from "./target.js";

/** The command line that goes on with `ref` where this one stopped, with the flags that say which cluster. */
export function continueCommand(ctx: Pick<Context, "flags">, verb: string, ref: SetRef): string {
  const f = ctx.flags;
  const parts = ["claimstep", verb, ref.name, "-n", ref.namespace];
  for (const flag of ["cluster", "sim-state", "kubeconfig", "context"] as const) {
    const v = f[flag];
    if (v !== undefined) parts.push(`--${flag}`, /^[\w./:@=-]+$/.test(v) ? v : JSON.stringify(v));
  }
  return parts.join(" ");
}

/**
 * Say where `ref` stands after `signal` stopped the command (stderr; with -o json/yaml also one
 * object on stdout) and return the exit code (130 for SIGINT, 143 for SIGTERM). A read that fails
 * is said too: the command never ends silently.
 */
export async function reportInterruption(
  ctx: Context,
  target: Target,
  ref: SetRef,
  signal: InterruptSignal,
  opts: { verb: "run" | "finalize"; finalize?: boolean },
): Promise<number> {
  const code = INTERRUPT_EXIT[signal];
  const command = continueCommand(ctx, opts.verb, ref);
  let standing: Stopped;
  let planned: StepResult;
  try {
    const snapshot: Snapshot = await target.reader.load(ref, { recreateRecord: true });
    planned = await runStep({
      reader: { load: async () => snapshot },
      writers: target.writers,
      ...(target.metrics ? { metrics: target.metrics } : {}),
      ref,
      now: target.now(),
      dryRun: true,
      ...(opts.finalize ? { finalize: true } : {}),
    });
    standing = whereItStands({
      decision: planned.decision,
      setMissing: snapshot.setMissing === true,
      kept: recordedKept(snapshot),
      record: snapshot.recreateRecord !== undefined,
      command,
    });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    ctx.io.stderr.write(
      `claimstep: interrupted (${signal}): could not read where ${ref.namespace}/${ref.name} stands (${why}); \`${continueCommand(ctx, "plan", ref)}\` says, \`${command}\` goes on\n`,
    );
    if (ctx.json) emit(ctx, { interrupted: signal, ref, command, error: why }, true);
    return code;
  }
  ctx.io.stderr.write(`claimstep: interrupted (${signal}): ${standing.text}\n`);
  if (ctx.json)
    emit(
      ctx,
      {
        interrupted: signal,
        at: target.now().toISOString(),
        ref,
        standing: standing.text,
        midRecreate: standing.midRecreate,
        command,
        ...resultJSON(planned),
      },
      true,
    );
  return code;
}
