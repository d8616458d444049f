// `set`: write the desired claim template and opt the set in, then show the plan it causes.
import { claimEdit } from "../../core/desired.js";
import { renderDecision } from "../../core/render.js";
import { runStep } from "../step.js";
import { UsageError, exitOf, print, refOf, resultJSON, type Context } from "./context.js";

export async function set(ctx: Context): Promise<number> {
  const target = await ctx.target();
  const ref = refOf(ctx.flags, target, ctx.args[0], "set");
  const claim = ctx.args[1];
  if (!claim) throw new UsageError("set: name the claim template too, e.g. claimstep set web data --storage 20Gi");
  const snapshot = await target.reader.load(ref);
  const change = claimEdit(snapshot.statefulSet, claim, {
    ...(ctx.flags.storage !== undefined ? { storage: ctx.flags.storage } : {}),
    ...(ctx.flags.vac !== undefined ? { volumeAttributesClassName: ctx.flags.vac } : {}),
  });
  if (!change.ok) throw new UsageError(`set: ${change.message}`);
  if (change.changed) await target.writers.status.annotateSet(ref, change.annotations, snapshot.statefulSet.metadata.resourceVersion);
  const next = await runStep({ reader: target.reader, writers: target.writers, ref, now: target.now(), dryRun: true });
  if (ctx.json) {
    print(ctx.io, JSON.stringify({ ref, changed: change.changed, revision: change.revision, templates: change.templates, plan: resultJSON(next) }));
  } else {
    const t = change.templates.find((x) => x.metadata.name === claim)!;
    const vac = t.spec.volumeAttributesClassName ? `, volumeAttributesClassName ${t.spec.volumeAttributesClassName}` : "";
    print(
      ctx.io,
      `${ref.namespace}/${ref.name}: ${change.changed ? "desired" : "already desires"} ${claim} storage ${t.spec.resources?.requests?.storage}${vac} (revision ${change.revision}); opted in (InPlace)\n\n${renderDecision(next.decision)}`,
    );
  }
  // Written either way; a plan that is already Blocked (e.g. an unknown VAC) says so in the exit code.
  return exitOf(next.decision);
}
