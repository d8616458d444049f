// `set <sts> <claim> --storage/--vac [--hold-pods]`: a claim template's size or class desired, the
// set opted in (InPlace), and the plan it causes. Refused, nothing written: a size below what the
// claims already request (claims never shrink) unless --allow-smaller — except a claim whose
// expansion failed, which comes back down to a size above its capacity (X1; the output says which
// claims, to what), a VolumeAttributesClass the cluster does not have. `--dry-run` writes nothing:
// it prints the annotation diff and the plan the change would cause.
import { changeOf, type SizeCheck, sizeCheck } from "../../core/change/index.js";
import { Keys } from "../../core/keys.js";
import type { ClaimTemplate } from "../../core/kube/index.js";
import { revisionOf, withoutServerFields } from "../../core/kube/index.js";
import { desiredTemplates, type PartitionHold, rawAnnotation } from "../../core/policy/index.js";
import { renderDecision } from "../../core/view/index.js";
import { paintHeadline } from "./color.js";
import type { Context } from "./context.js";
import { exitOf } from "./exit-codes.js";
import { type Flags, UsageError } from "./flags.js";
import { emit, print } from "./io.js";
import { ADD_ONLY, missingClass, storageFlagProblem } from "./set-flags.js";
import {
  type ChangeMade,
  carryOut,
  managedByJSON,
  readSet,
  recreateJSON,
  type SetOutcome,
  type SetRead,
} from "./set-write.js";
import { resultJSON } from "./step-lines.js";

/** `set <sts> <claim> --storage/--vac`: check the flags, read the set, compute the change, carry it out, report. */
export async function setClaim(ctx: Context): Promise<number> {
  checkClaimFlags(ctx.flags);
  const read = await readSet(ctx, () => "set: name the claim template too, e.g. claimstep set web data --storage 20Gi");
  const { change, sizes } = claimChange(read);
  const outcome = await carryOut(read, change);
  const report: ClaimReport = { ...read, ...outcome, change, sizes, ...comparedWithBefore(read, change) };
  if (ctx.json) emit(ctx, claimJSON(report));
  else print(ctx.io, claimText(report));
  return exitOf(outcome.next.decision);
}

/** Refused before the set is read: a flag only --add takes, a --storage no claim can request. */
function checkClaimFlags(flags: Flags): void {
  const addOnly = ADD_ONLY.find((f) => flags[f] !== undefined);
  if (addOnly)
    throw new UsageError(
      `set: --${addOnly} goes with --add (a new claim template), e.g. claimstep set web logs --add --storage 1Gi --mount-path /logs; nothing written`,
    );
  const storageProblem = flags.storage !== undefined ? storageFlagProblem(flags.storage) : undefined;
  if (storageProblem) throw new UsageError(`set: ${storageProblem} Nothing written`);
}

/**
 * The change of the claim template (core's changeOf), refused when core refuses it, when it would
 * shrink claims without --allow-smaller (core's sizeCheck) or when the cluster lacks the --vac.
 */
function claimChange({ ctx, ref, name, snapshot }: SetRead): { change: ChangeMade; sizes: SizeCheck } {
  const { flags } = ctx;
  const change = changeOf(snapshot.statefulSet, {
    kind: "claim",
    claim: name,
    edit: {
      ...(flags.storage !== undefined ? { storage: flags.storage } : {}),
      ...(flags.vac !== undefined ? { volumeAttributesClassName: flags.vac } : {}),
    },
    // P5: the partition held in the same patch as the desired templates.
    ...(flags["hold-pods"] ? { holdPods: true } : {}),
  });
  if (!change.ok) throw new UsageError(`set: ${change.message}; nothing written`);
  const sizes = flags.storage !== undefined ? sizeCheck(snapshot, ref, name, flags.storage) : { recovers: [] };
  if (sizes.refusal && !flags["allow-smaller"]) throw new UsageError(sizes.refusal);
  if (flags.vac) {
    const why = missingClass(snapshot, flags.vac);
    if (why) throw new UsageError(why);
  }
  return { change, sizes };
}

interface FieldChange {
  template: string;
  path: string;
  from: string | null;
  to: string | null;
}

/** The desired templates before the change, and what the change does to them and to the strategy. */
interface BeforeAndAfter {
  before: ReturnType<typeof desiredTemplates>;
  diff: FieldChange[];
  strategy: { from: string | null; to: string | null };
}

/** What a claim's `set` reports: the set read, the change, its sizes' check, what carrying it out gave. */
interface ClaimReport extends SetRead, SetOutcome, BeforeAndAfter {
  change: ChangeMade;
  sizes: SizeCheck;
}

function comparedWithBefore({ snapshot }: SetRead, change: ChangeMade): BeforeAndAfter {
  const before = desiredTemplates(snapshot.statefulSet);
  return {
    before,
    diff: templateDiff(before.ok ? before.templates : [], change.templates),
    strategy: {
      from: rawAnnotation(snapshot.statefulSet.metadata.annotations ?? {}, "strategy") ?? null,
      to: rawAnnotation(change.annotations, "strategy") ?? null,
    },
  };
}

/** Every leaf of a JSON value, by path. */
function leaves(value: unknown, path = "", out = new Map<string, string>()): Map<string, string> {
  if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value))
      leaves(v, Array.isArray(value) ? `${path}[${k}]` : path ? `${path}.${k}` : k, out);
  } else if (value !== undefined) {
    out.set(path, typeof value === "string" ? value : JSON.stringify(value));
  }
  return out;
}

/**
 * Field by field, what changes from the old desired templates to the new ones, both as the
 * annotation holds them: the live templates carry the server's `status.phase: Pending` and
 * `creationTimestamp: null`, which are no change of anyone's.
 */
function templateDiff(before: readonly ClaimTemplate[], after: readonly ClaimTemplate[]): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const t of after) {
    const was = before.find((b) => b.metadata.name === t.metadata.name);
    const old = leaves(was ? withoutServerFields(was) : {});
    const now = leaves(withoutServerFields(t));
    for (const path of new Set([...old.keys(), ...now.keys()])) {
      if (old.get(path) !== now.get(path))
        changes.push({ template: t.metadata.name, path, from: old.get(path) ?? null, to: now.get(path) ?? null });
    }
  }
  return changes;
}

const holdText = (hold: PartitionHold): string =>
  `pods held: partition ${hold.from} → ${hold.partition}${hold.userPartition !== undefined ? ` (yours, ${hold.userPartition}, recorded in ${Keys.userPartition})` : " (yours already recorded)"}; ${Keys.podCoordination}: ClaimsFirst`;

/** `-o json`: the change, its hold, and with --dry-run what it is a change from. */
function claimJSON(r: ClaimReport): unknown {
  const { change, sizes, before, dryRun } = r;
  const { hold } = change;
  return {
    ref: r.ref,
    ...(dryRun ? { dryRun: true } : {}),
    changed: change.changed,
    revision: change.revision,
    templates: change.templates,
    ...(sizes.recovers.length ? { recovers: sizes.recovers } : {}),
    ...recreateJSON(r.outlook),
    ...managedByJSON(r.owners),
    ...(hold
      ? {
          holdPods: {
            partition: hold.partition,
            from: hold.from,
            ...(hold.userPartition !== undefined ? { userPartition: hold.userPartition } : {}),
          },
        }
      : {}),
    ...(dryRun
      ? {
          previous: {
            revision: before.ok ? revisionOf(before.templates) : null,
            templates: before.ok ? before.templates : null,
          },
          annotations: change.annotations,
          diff: r.diff,
          strategy: r.strategy,
        }
      : {}),
    plan: resultJSON(r.next),
  };
}

/** The text: what is desired now (with --dry-run, what would be written), the recoveries, the plan. */
function claimText(r: ClaimReport): string {
  const { change, ref, next } = r;
  const { hold } = change;
  const t = change.templates.find((x) => x.metadata.name === r.name)!;
  const vac = t.spec.volumeAttributesClassName ? `, volumeAttributesClassName ${t.spec.volumeAttributesClassName}` : "";
  const plan = paintHeadline(renderDecision(next.decision), next.decision.phase, r.ctx.color);
  const recovery = r.sizes.recovers.length
    ? `\nRecovering from a failed expansion (Kubernetes ≥ 1.34):\n${r.sizes.recovers.map((x) => `  ${x}`).join("\n")}\n`
    : "";
  if (r.dryRun) return `${dryRunLines(r).join("\n")}\n${recovery}\nThe plan it would cause:\n${plan}`;
  return `${ref.namespace}/${ref.name}: ${change.changed ? "desired" : "already desires"} ${r.name} storage ${t.spec.resources?.requests?.storage}${vac} (revision ${change.revision}); opted in (InPlace)${hold ? `\n${holdText(hold)}` : ""}${r.outlook ? `\n${r.outlook.text}` : ""}\n${recovery}\n${plan}`;
}

/** --dry-run's lines: what it would write, field by field, the hold, the re-create outlook. */
function dryRunLines({ ref, change, before, diff, strategy, outlook }: ClaimReport): string[] {
  const lines = [
    `${ref.namespace}/${ref.name}: dry run, nothing written. ${change.changed ? "It would write:" : "Nothing to write: it already desires this."}`,
  ];
  if (change.changed) {
    const from = before.ok ? revisionOf(before.templates) : "(invalid)";
    lines.push(
      `  ${Keys.templates}: revision ${from} → ${change.revision}${before.ok && before.source === "spec" ? " (the live templates until now)" : ""}`,
    );
    for (const c of diff) lines.push(`    ${c.template}: ${c.path}: ${c.from ?? "(unset)"} → ${c.to ?? "(unset)"}`);
    if (diff.length === 0) lines.push("    (same templates)");
    lines.push(
      `  ${Keys.strategy}: ${strategy.from === strategy.to ? `${strategy.to} (unchanged)` : `${strategy.from ?? "(unset)"} → ${strategy.to}`}`,
    );
  }
  if (change.hold) lines.push(`  ${holdText(change.hold)}`);
  if (outlook) lines.push(outlook.text);
  return lines;
}
