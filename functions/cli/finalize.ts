// `finalize`: re-create a set with its new claim templates on demand (docs/design.md F1–F4), whatever
// its `claimstep.io/finalize` says. It shows first what the re-create would write (the live
// templates → the new ones, and the record), then steps until the set is re-created; `--dry-run`
// stops there. Refused, nothing written, while the rollout is not complete.
import { isRecreateAction } from "../../core/actions.js";
import { Keys } from "../../core/keys.js";
import { revisionOf } from "../../core/kube/index.js";
import { recordName, recreatedManifest } from "../../core/plan/index.js";
import { policyOfSnapshot } from "../../core/policy/index.js";
import { renderDecision } from "../../core/view/index.js";
import { runStep } from "../step.js";
import { paintHeadline } from "./color.js";
import type { Context } from "./context.js";
import { EXIT } from "./exit-codes.js";
import { UsageError } from "./flags.js";
import { continueCommand } from "./interrupt.js";
import { emit, print } from "./io.js";
import { run } from "./run.js";
import { resultJSON } from "./step-lines.js";
import { refOf } from "./target.js";

/** `data: storage 1Gi → 2Gi` lines: what the re-created set's templates change. */
function templateChanges(
  live: readonly {
    metadata: { name: string };
    spec: {
      resources?: { requests?: { storage?: unknown } | undefined } | undefined;
      volumeAttributesClassName?: string | null | undefined;
    };
  }[],
  next: typeof live,
): string[] {
  const out: string[] = [];
  for (const t of live)
    if (!next.some((n) => n.metadata.name === t.metadata.name))
      out.push(`${t.metadata.name}: removed (its claims are kept, labelled ${Keys.orphanedFrom})`);
  for (const t of next) {
    const old = live.find((l) => l.metadata.name === t.metadata.name);
    if (!old) {
      out.push(`${t.metadata.name}: added (${String(t.spec.resources?.requests?.storage ?? "?")})`);
      continue;
    }
    const from = String(old?.spec.resources?.requests?.storage ?? "?");
    const to = String(t.spec.resources?.requests?.storage ?? "?");
    if (from !== to) out.push(`${t.metadata.name}: storage ${from} → ${to}`);
    const vf = old?.spec.volumeAttributesClassName ?? "(none)";
    const vt = t.spec.volumeAttributesClassName ?? "(none)";
    if (vf !== vt) out.push(`${t.metadata.name}: volumeAttributesClassName ${vf} → ${vt}`);
  }
  return out;
}

export async function finalize(ctx: Context): Promise<number> {
  const target = await ctx.target();
  const ref = refOf(ctx.flags, target, ctx.args[0], "finalize");
  const planned = await runStep({
    reader: target.reader,
    writers: target.writers,
    metrics: target.metrics,
    ref,
    now: target.now(),
    dryRun: true,
    finalize: true,
  });
  const d = planned.decision;
  // Adding or removing a template holds the partition first (docs/templates.md).
  const recreating = d.action !== undefined && (isRecreateAction(d.action.type) || d.reason === "PartitionHeld");
  const midway = ["Recreating", "SetRecreated", "RecordUnreadable", "RecreateReplaced"].includes(d.reason);
  if (!recreating && !midway) {
    if (d.phase === "Complete") {
      print(
        ctx.io,
        `${ref.namespace}/${ref.name}: nothing to re-create: its live claim templates already are the desired ones (revision ${d.revision ?? "?"})`,
      );
      return EXIT.ok;
    }
    throw new UsageError(
      `finalize: ${ref.namespace}/${ref.name} is ${d.phase} (${d.reason}): the re-create starts only once the rollout is complete; run \`${continueCommand(ctx, "run", ref)}\` first. Nothing written`,
    );
  }

  // What the re-create writes, before anything is written.
  const snapshot = await target.reader.load(ref, { recreateRecord: true });
  const parsed = policyOfSnapshot(snapshot);
  const next =
    parsed.ok && !snapshot.setMissing
      ? recreatedManifest(snapshot.statefulSet, parsed.policy.templates, parsed.policy.reshape)
      : undefined;
  const changes = next
    ? templateChanges(snapshot.statefulSet.spec.volumeClaimTemplates ?? [], next.spec.volumeClaimTemplates ?? [])
    : [];
  if (ctx.json) {
    emit(ctx, {
      ref,
      record: recordName(ref.name),
      ...(next
        ? {
            revision: revisionOf(next.spec.volumeClaimTemplates ?? []),
            templates: next.spec.volumeClaimTemplates,
            changes,
          }
        : {}),
      ...(snapshot.recreateRecord ? { recordExists: true } : {}),
      plan: resultJSON(planned),
    });
    if (ctx.flags["dry-run"]) return EXIT.ok;
  } else {
    const lines = [
      `${ref.namespace}/${ref.name}: ${ctx.flags["dry-run"] ? "dry run, nothing written. " : ""}re-create with the new claim templates (record: ConfigMap ${ref.namespace}/${recordName(ref.name)}${snapshot.recreateRecord ? ", already written" : ""})`,
      ...changes.map((c) => `  ${c}`),
      "  the set is deleted with propagationPolicy Orphan and created again from the record; its pods and claims are recorded by uid first and compared before the record goes",
      "",
      paintHeadline(renderDecision(d), d.phase, ctx.color),
    ];
    print(ctx.io, lines.join("\n"));
    if (ctx.flags["dry-run"]) return EXIT.ok;
    print(ctx.io, "");
  }
  return run(ctx, { finalize: true });
}
