// What both kinds of `set` share (a claim template's size or class, set-claim.ts; a template added
// or removed, set-add-remove.ts): the set read, the change written (with --dry-run only previewed)
// and the plan it causes, and what is said around it: the GitOps tool that applies the set, and
// whether the change ends in a re-create.
import { type Change, type RecreateOutlook, recreateOutlook } from "../../core/change/index.js";
import type { StatefulSet } from "../../core/kube/index.js";
import {
  type GitOpsOwner,
  gitopsOwners,
  gitopsWarning,
  type PolicySnapshot,
  partitionPatch,
} from "../../core/policy/index.js";
import type { SetRef, Snapshot } from "../../core/types.js";
import { runStep, type StepResult } from "../step.js";
import type { Context } from "./context.js";
import { UsageError } from "./flags.js";
import { refOf, type Target } from "./target.js";

/** What one `set` works on: the command, its cluster, the set and the claim template named, the set as read. */
export interface SetRead {
  ctx: Context;
  target: Target;
  ref: SetRef;
  /** The claim template named (`set <sts> <template>`). */
  name: string;
  snapshot: Snapshot;
  dryRun: boolean;
}

/** A change changeOf made (not refused). */
export type ChangeMade = Extract<Change, { ok: true }>;

/** What carrying the change out gave: the GitOps tools warned of, the plan it causes, whether it ends in a re-create. */
export interface SetOutcome {
  owners: GitOpsOwner[];
  next: StepResult;
  outlook: RecreateOutlook | undefined;
}

/** The set named on the command line, read (`usage`: what to say when no claim template is named). */
export async function readSet(ctx: Context, usage: (ref: SetRef) => string): Promise<SetRead> {
  const target = await ctx.target();
  const ref = refOf(ctx.flags, target, ctx.args[0], "set");
  const name = ctx.args[1];
  if (!name) throw new UsageError(usage(ref));
  const snapshot = await target.reader.load(ref, { volumeAttributesClasses: ctx.flags.vac !== undefined });
  return { ctx, target, ref, name, snapshot, dryRun: ctx.flags["dry-run"] ?? false };
}

/**
 * The change written as changeOf returns it (with a hold, in the partition's one patch), or with
 * --dry-run nothing written; then the plan it causes. A GitOps tool that applies the set is warned
 * of first.
 */
export async function carryOut(read: SetRead, change: ChangeMade): Promise<SetOutcome> {
  const { ctx, target, ref, snapshot } = read;
  const set = snapshot.statefulSet;
  const { hold } = change;
  if (hold && !target.writers.pods)
    throw new UsageError(
      "set: --hold-pods patches the partition, which needs direct access to the API server; nothing written",
    );
  const owners = change.changed || hold ? warnGitOps(ctx, set, ref) : [];
  let next: StepResult;
  if (read.dryRun) {
    const preview = previewOf(snapshot, change);
    next = await planOf(target, ref, { load: async () => preview });
  } else {
    if (hold) await target.writers.pods!.patchPartition(partitionPatch(set, hold), change.annotations);
    else if (change.changed)
      await target.writers.status.annotateSet(ref, change.annotations, set.metadata.resourceVersion);
    next = await planOf(target, ref, target.reader);
  }
  // Said before it happens: whether the change ends in a re-create of the set, and why.
  return { owners, next, outlook: outlookAfter(set, change.annotations) };
}

/** The snapshot with what the change writes (its annotations, its hold's partition), nothing written. */
function previewOf(snapshot: Snapshot, change: ChangeMade): PolicySnapshot {
  const set = snapshot.statefulSet;
  const { hold } = change;
  const spec = hold
    ? {
        ...set.spec,
        updateStrategy: {
          ...set.spec.updateStrategy,
          rollingUpdate: { ...set.spec.updateStrategy?.rollingUpdate, partition: hold.partition },
        },
      }
    : set.spec;
  return {
    ...snapshot,
    // The loaded set's policy is not the preview's: parsed when it is planned.
    policy: undefined,
    statefulSet: {
      ...set,
      spec,
      metadata: { ...set.metadata, annotations: { ...(set.metadata.annotations ?? {}), ...change.annotations } },
    },
  };
}

/**
 * Issue 35 item 3: a set that Helm, Argo CD or Flux applies from a source of its own (their labels
 * and annotations, core/policy/gitops-owner.ts). `set` changes the live set only, and that tool's next sync
 * sets the annotation back or, after the re-create, sends the old templates again. Said on stderr
 * as kubectl says its warnings (`Warning: …`), before anything is written; the change is still made
 * and the exit code is the plan's, as kubectl's edits of a Helm- or Argo-managed object are: the
 * change is safe (claims never shrink), undone by `set` again, and may be the fastest way out of
 * a full disk.
 */
function warnGitOps(ctx: Context, set: StatefulSet, ref: SetRef): GitOpsOwner[] {
  const owners = gitopsOwners(set.metadata);
  // Once per command, though a write that lost its race computes the change again (set.ts's SET_ATTEMPTS).
  const said = warned.get(ctx) ?? new Set<string>();
  warned.set(ctx, said);
  for (const o of owners) {
    const text = `Warning: ${gitopsWarning(o, `${ref.namespace}/${ref.name}`)}\n`;
    if (!said.has(text)) ctx.io.stderr.write(text);
    said.add(text);
  }
  return owners;
}
const warned = new WeakMap<Context, Set<string>>();

/** `-o json`'s `managedBy`: the tools found (absent: none). */
export const managedByJSON = (owners: readonly GitOpsOwner[]) =>
  owners.length
    ? { managedBy: owners.map((o) => ({ tool: o.tool, name: o.name, evidence: o.evidence, guess: o.guess })) }
    : {};

/** Whether the set with `written` merged into its annotations ends in a re-create, and why (core/change/outlook.ts). */
const outlookAfter = (set: StatefulSet, written: Record<string, string>): RecreateOutlook | undefined =>
  recreateOutlook({ ...set, metadata: { ...set.metadata, annotations: { ...set.metadata.annotations, ...written } } });

/** `-o json`'s `recreate`: whether the change ends in a re-create of the set and why (absent: it rolls out in place). */
export const recreateJSON = (o: RecreateOutlook | undefined) =>
  o ? { recreate: { recreate: o.recreate, why: o.why } } : {};

/** The plan of the next step as it would be from `reader`'s snapshot (a dry run: nothing written). */
const planOf = (target: Target, ref: SetRef, reader: Parameters<typeof runStep>[0]["reader"]): Promise<StepResult> =>
  runStep({ reader, writers: target.writers, metrics: target.metrics, ref, now: target.now(), dryRun: true });
