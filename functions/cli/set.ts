// `set`: write the desired claim template and opt the set in, then show the plan it causes.
// Refused, nothing written: a size below what the claims already request (claims never shrink)
// unless --allow-smaller — except a claim whose expansion failed, which comes back down to a size
// above its capacity (X1; the output says which claims, to what), a VolumeAttributesClass the cluster does not have. `--dry-run` writes
// nothing: it prints the annotation diff and the plan the change would cause.
import { ApiError } from "../../adapters/api-error.js";
import { type Change, changeOf, type RecreateOutlook, recreateOutlook, sizeCheck } from "../../core/change/index.js";
import { Keys } from "../../core/keys.js";
import type { ClaimTemplate, StatefulSet } from "../../core/kube/index.js";
import { claimOrdinal, isUnitless, parseQuantity, revisionOf, withoutServerFields } from "../../core/kube/index.js";
import type { PolicySnapshot } from "../../core/policy/index.js";
import {
  desiredTemplates,
  type GitOpsOwner,
  gitopsOwners,
  gitopsWarning,
  type PartitionHold,
  partitionPatch,
  rawAnnotation,
} from "../../core/policy/index.js";
import type { SetRef, Snapshot } from "../../core/types.js";
import { renderDecision } from "../../core/view/index.js";
import { runStep, type StepResult } from "../step.js";
import { paintHeadline } from "./color.js";
import type { Context } from "./context.js";
import { exitOf } from "./exit-codes.js";
import { UsageError } from "./flags.js";
import { continueCommand } from "./interrupt.js";
import { emit, print } from "./io.js";
import { resultJSON } from "./step-lines.js";
import { refOf } from "./target.js";

/** Why `vac` cannot be used on this cluster, or undefined. */
function missingClass(snapshot: Snapshot, vac: string): string | undefined {
  const classes = snapshot.volumeAttributesClasses;
  if (classes === undefined)
    return `set: --vac ${vac}: this cluster serves no VolumeAttributesClass API (storage.k8s.io); nothing written`;
  if (classes.some((c) => c.metadata.name === vac)) return undefined;
  const names = classes.map((c) => c.metadata.name).sort();
  return `set: VolumeAttributesClass "${vac}" not found (the cluster has: ${names.join(", ") || "none"}); nothing written`;
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

interface FieldChange {
  template: string;
  path: string;
  from: string | null;
  to: string | null;
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

/** Below this a unitless --storage (bytes) is refused as a missing unit: 1Mi, in nano-units (parseQuantity's). */
const UNITLESS_BYTES_FLOOR = 1_048_576n * 1_000_000_000n;

/**
 * Why `--storage` is no size a claim can request, naming the flag (not the annotation it is
 * written to): not a quantity (with the units meant, for `10Gb`), zero or negative, or a bare
 * number below 1Mi (`7`, `1.5`: bytes, surely meant as Gi).
 */
export function storageFlagProblem(storage: string): string | undefined {
  const flag = `--storage ${JSON.stringify(storage)}`;
  let value: bigint;
  try {
    value = parseQuantity(storage);
  } catch {
    // 10Gb, 10GB, 10gib, 10GiB: the unit of bytes written as people write it.
    const unit = /^\s*(\d+(?:\.\d+)?)\s*([kmgtpe])(i?)b?\s*$/i.exec(storage);
    if (unit) {
      const [, n, u] = unit;
      const decimal = u!.toLowerCase() === "k" ? "k" : u!.toUpperCase();
      return `${flag}: not a Kubernetes quantity; did you mean ${n}${decimal} or ${n}${u!.toUpperCase()}i?`;
    }
    return `${flag}: not a Kubernetes quantity (examples: 20Gi, 500M, 1.5Ti).`;
  }
  if (value < 0n) return `${flag}: a claim's size cannot be negative; give a size such as 20Gi.`;
  if (value === 0n) return `${flag}: a claim's size must be above zero; give a size such as 20Gi.`;
  // `--storage 7`, `--storage 1.5`: a number without a unit is bytes; no claim is meant that small.
  if (isUnitless(storage) && value < UNITLESS_BYTES_FLOOR)
    return `${flag}: a number without a unit is bytes (${storage.trim()} bytes); did you mean ${storage.trim()}Gi?`;
  return undefined;
}

/** Flags only `--add` takes. */
const ADD_ONLY = ["storage-class", "access-mode", "mount-path", "container"] as const;

/** Attempts of `set` when its write loses a race (409: claimstep's own steps write the set's status too). */
const SET_ATTEMPTS = 4;

/**
 * `set`: read, compute the change, write it under the resourceVersion read. A write that loses its
 * race to another writer of the set (a running `claimstep serve` records its status on every step)
 * is computed again from a fresh read, as kubectl's edits do, rather than failing.
 */
export async function set(ctx: Context): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await (ctx.flags.add || ctx.flags.remove ? templateSet(ctx) : editSet(ctx));
    } catch (err) {
      const lost = err instanceof ApiError && err.kind === "Conflict" && !err.isFieldManagerConflict;
      if (!lost || attempt >= SET_ATTEMPTS) throw err;
    }
  }
}

async function editSet(ctx: Context): Promise<number> {
  const addOnly = ADD_ONLY.find((f) => ctx.flags[f] !== undefined);
  if (addOnly)
    throw new UsageError(
      `set: --${addOnly} goes with --add (a new claim template), e.g. claimstep set web logs --add --storage 1Gi --mount-path /logs; nothing written`,
    );
  const storageProblem = ctx.flags.storage !== undefined ? storageFlagProblem(ctx.flags.storage) : undefined;
  if (storageProblem) throw new UsageError(`set: ${storageProblem} Nothing written`);
  const target = await ctx.target();
  const ref = refOf(ctx.flags, target, ctx.args[0], "set");
  const claim = ctx.args[1];
  if (!claim) throw new UsageError("set: name the claim template too, e.g. claimstep set web data --storage 20Gi");
  const snapshot = await target.reader.load(ref, { volumeAttributesClasses: ctx.flags.vac !== undefined });
  const change = changeOf(snapshot.statefulSet, {
    kind: "claim",
    claim,
    edit: {
      ...(ctx.flags.storage !== undefined ? { storage: ctx.flags.storage } : {}),
      ...(ctx.flags.vac !== undefined ? { volumeAttributesClassName: ctx.flags.vac } : {}),
    },
    // P5: the partition held in the same patch as the desired templates.
    ...(ctx.flags["hold-pods"] ? { holdPods: true } : {}),
  });
  if (!change.ok) throw new UsageError(`set: ${change.message}; nothing written`);
  const sizes = ctx.flags.storage !== undefined ? sizeCheck(snapshot, ref, claim, ctx.flags.storage) : { recovers: [] };
  if (sizes.refusal && !ctx.flags["allow-smaller"]) throw new UsageError(sizes.refusal);
  const recovery = sizes.recovers.length
    ? `\nRecovering from a failed expansion (Kubernetes ≥ 1.34):\n${sizes.recovers.map((r) => `  ${r}`).join("\n")}\n`
    : "";
  if (ctx.flags.vac) {
    const why = missingClass(snapshot, ctx.flags.vac);
    if (why) throw new UsageError(why);
  }
  const dryRun = ctx.flags["dry-run"] ?? false;
  const annotations = snapshot.statefulSet.metadata.annotations ?? {};
  const { hold } = change;
  if (hold && !target.writers.pods)
    throw new UsageError(
      "set: --hold-pods patches the partition, which needs direct access to the API server; nothing written",
    );
  const owners = change.changed || hold ? warnGitOps(ctx, snapshot.statefulSet, ref) : [];
  let next;
  if (dryRun) {
    // The plan the change would cause: the same snapshot with what the change writes, nothing written.
    const spec = hold
      ? {
          ...snapshot.statefulSet.spec,
          updateStrategy: {
            ...snapshot.statefulSet.spec.updateStrategy,
            rollingUpdate: {
              ...snapshot.statefulSet.spec.updateStrategy?.rollingUpdate,
              partition: hold.partition,
            },
          },
        }
      : snapshot.statefulSet.spec;
    const preview: PolicySnapshot = {
      ...snapshot,
      // The loaded set's policy is not the preview's: parsed when it is planned.
      policy: undefined,
      statefulSet: {
        ...snapshot.statefulSet,
        spec,
        metadata: { ...snapshot.statefulSet.metadata, annotations: { ...annotations, ...change.annotations } },
      },
    };
    next = await planOf(target, ref, { load: async () => preview });
  } else {
    // Exactly what changeOf returns: with a hold, in the partition's one patch.
    if (hold) await target.writers.pods!.patchPartition(partitionPatch(snapshot.statefulSet, hold), change.annotations);
    else if (change.changed)
      await target.writers.status.annotateSet(ref, change.annotations, snapshot.statefulSet.metadata.resourceVersion);
    next = await planOf(target, ref, target.reader);
  }
  // Said before it happens: whether the change ends in a re-create of the set, and why.
  const outlook = outlookAfter(snapshot.statefulSet, change.annotations);
  const before = desiredTemplates(snapshot.statefulSet);
  const beforeTemplates = before.ok ? before.templates : [];
  const diff = templateDiff(beforeTemplates, change.templates);
  const strategy = {
    from: rawAnnotation(annotations, "strategy") ?? null,
    to: rawAnnotation(change.annotations, "strategy") ?? null,
  };
  if (ctx.json) {
    emit(ctx, {
      ref,
      ...(dryRun ? { dryRun: true } : {}),
      changed: change.changed,
      revision: change.revision,
      templates: change.templates,
      ...(sizes.recovers.length ? { recovers: sizes.recovers } : {}),
      ...recreateJSON(outlook),
      ...managedByJSON(owners),
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
            diff,
            strategy,
          }
        : {}),
      plan: resultJSON(next),
    });
  } else {
    const t = change.templates.find((x) => x.metadata.name === claim)!;
    const vac = t.spec.volumeAttributesClassName
      ? `, volumeAttributesClassName ${t.spec.volumeAttributesClassName}`
      : "";
    const plan = paintHeadline(renderDecision(next.decision), next.decision.phase, ctx.color);
    if (dryRun) {
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
      if (hold) lines.push(`  ${holdText(hold)}`);
      if (outlook) lines.push(outlook.text);
      print(ctx.io, `${lines.join("\n")}\n${recovery}\nThe plan it would cause:\n${plan}`);
    } else {
      print(
        ctx.io,
        `${ref.namespace}/${ref.name}: ${change.changed ? "desired" : "already desires"} ${claim} storage ${t.spec.resources?.requests?.storage}${vac} (revision ${change.revision}); opted in (InPlace)${hold ? `\n${holdText(hold)}` : ""}${outlook ? `\n${outlook.text}` : ""}\n${recovery}\n${plan}`,
      );
    }
  }
  return exitOf(next.decision);
}

// ---------------------------------------------------------------------------------------------
// `set <sts> <template> --add …` / `--remove` (issue 27, docs/templates.md)

/** The access modes a claim may ask for. */
const ACCESS_MODES: readonly string[] = ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"];
const DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class";
/** At most this many claims are named in the output. */
const NAMED_ORPHANS = 10;

/** Why the new template's class cannot be used here, or undefined. */
function classProblem(snapshot: Snapshot, storageClass: string | undefined): string | undefined {
  const names = snapshot.storageClasses.map((c) => c.metadata.name).sort();
  if (storageClass === undefined) {
    if (snapshot.storageClasses.some((c) => c.metadata.annotations?.[DEFAULT_CLASS] === "true")) return undefined;
    return `no --storage-class given and the cluster has no default StorageClass (it has: ${names.join(", ") || "none"}); give --storage-class`;
  }
  if (names.includes(storageClass)) return undefined;
  return `StorageClass "${storageClass}" not found (the cluster has: ${names.join(", ") || "none"}); give one of them with --storage-class`;
}

const claimsOf = (snapshot: Snapshot, ref: SetRef, template: string): string[] =>
  snapshot.claims
    .map((c) => ({ name: c.metadata.name, ordinal: claimOrdinal(c.metadata.name, template, ref.name) }))
    .filter((c): c is { name: string; ordinal: number } => c.ordinal !== undefined)
    .sort((a, b) => a.ordinal - b.ordinal)
    .map((c) => c.name);

const lowestPod = (snapshot: Snapshot, ref: SetRef): string =>
  `${ref.name}-${snapshot.statefulSet.spec.ordinals?.start ?? 0}`;

async function templateSet(ctx: Context): Promise<number> {
  const flags = ctx.flags;
  const nothing = "; nothing written";
  if (flags.add && flags.remove)
    throw new UsageError(`set: give --add or --remove, not both (one template at a time)${nothing}`);
  if (flags.remove) {
    const extra = (["storage", "vac", "allow-smaller", "hold-pods", ...ADD_ONLY] as const).find(
      (f) => flags[f] !== undefined,
    );
    if (extra) throw new UsageError(`set: --remove takes no --${extra}: it removes the whole template${nothing}`);
  } else {
    if (flags.storage === undefined)
      throw new UsageError(
        `set: --add needs --storage, the new template's size, e.g. claimstep set web logs --add --storage 1Gi${nothing}`,
      );
    const storageProblem = storageFlagProblem(flags.storage);
    if (storageProblem) throw new UsageError(`set: ${storageProblem} Nothing written`);
    const extra = (["allow-smaller", "hold-pods"] as const).find((f) => flags[f] !== undefined);
    if (extra) throw new UsageError(`set: --${extra} does not go with --add${nothing}`);
    if (flags.container !== undefined && flags["mount-path"] === undefined)
      throw new UsageError(
        `set: --container goes with --mount-path: give the path to mount the new volume at${nothing}`,
      );
  }
  const accessModes = (flags["access-mode"] ?? "ReadWriteOnce").split(",").map((m) => m.trim());
  const badMode = accessModes.find((m) => !ACCESS_MODES.includes(m));
  if (badMode !== undefined)
    throw new UsageError(
      `set: --access-mode ${JSON.stringify(badMode)}: not an access mode (one or more of ${ACCESS_MODES.join(", ")}, comma-separated)${nothing}`,
    );
  const target = await ctx.target();
  const ref = refOf(flags, target, ctx.args[0], "set");
  const name = ctx.args[1];
  if (!name)
    throw new UsageError(`set: name the claim template too, e.g. claimstep set ${ref.name} logs --add --storage 1Gi`);
  const snapshot = await target.reader.load(ref, { volumeAttributesClasses: flags.vac !== undefined });
  const setName = `${ref.namespace}/${ref.name}`;
  let change: Change;
  if (flags.add) {
    const why = classProblem(snapshot, flags["storage-class"]);
    if (why) throw new UsageError(`set: ${setName}: ${why}${nothing}`);
    if (flags.vac) {
      const missing = missingClass(snapshot, flags.vac);
      if (missing) throw new UsageError(missing);
    }
    const template: ClaimTemplate = {
      metadata: { name },
      spec: {
        accessModes,
        ...(flags["storage-class"] !== undefined ? { storageClassName: flags["storage-class"] } : {}),
        ...(flags.vac !== undefined ? { volumeAttributesClassName: flags.vac } : {}),
        resources: { requests: { storage: flags.storage! } },
      },
    };
    change = changeOf(snapshot.statefulSet, {
      kind: "add",
      template,
      options: {
        ...(flags["mount-path"] !== undefined ? { mountPath: flags["mount-path"] } : {}),
        ...(flags.container !== undefined ? { container: flags.container } : {}),
      },
    });
  } else {
    change = changeOf(snapshot.statefulSet, { kind: "remove", template: name });
  }
  if (!change.ok) throw new UsageError(`set: ${change.message}${nothing}`);
  const dryRun = flags["dry-run"] ?? false;
  const annotations = snapshot.statefulSet.metadata.annotations ?? {};
  const owners = change.changed ? warnGitOps(ctx, snapshot.statefulSet, ref) : [];
  let next;
  if (dryRun) {
    const preview: PolicySnapshot = {
      ...snapshot,
      // The loaded set's policy is not the preview's: parsed when it is planned.
      policy: undefined,
      statefulSet: {
        ...snapshot.statefulSet,
        metadata: { ...snapshot.statefulSet.metadata, annotations: { ...annotations, ...change.annotations } },
      },
    };
    next = await planOf(target, ref, { load: async () => preview });
  } else {
    if (change.changed)
      await target.writers.status.annotateSet(ref, change.annotations, snapshot.statefulSet.metadata.resourceVersion);
    next = await planOf(target, ref, target.reader);
  }
  const outlook = outlookAfter(snapshot.statefulSet, change.annotations);
  const live = snapshot.statefulSet.spec.volumeClaimTemplates ?? [];
  const pendingAdd = !flags.add && !live.some((t) => t.metadata.name === name);
  const mountPath = flags["mount-path"];
  const first = lowestPod(snapshot, ref);
  const claims = claimsOf(snapshot, ref, name);
  const named =
    claims.length > NAMED_ORPHANS
      ? [...claims.slice(0, NAMED_ORPHANS), `and ${claims.length - NAMED_ORPHANS} more`]
      : claims;
  const what: string[] = [];
  const then: string[] = [];
  if (flags.add) {
    const t = change.templates.find((x) => x.metadata.name === name)!;
    what.push(
      `${setName}: ${change.changed ? "added" : "already adds"} claim template ${name} (${flags.storage}, class ${t.spec.storageClassName ?? "(the default)"}, ${accessModes.join(", ")}${t.spec.volumeAttributesClassName ? `, volumeAttributesClassName ${t.spec.volumeAttributesClassName}` : ""}); ${Keys.finalize}: Recreate (adding a template needs a re-create)`,
    );
    if (mountPath)
      what.push(
        `pod template held with ${name} mounted at ${mountPath} in container ${change.containers[0]} (${Keys.podTemplate}, applied by the re-create)`,
      );
    then.push(
      `claimstep re-creates ${ref.name} with ${name} after its claims are at the revision; pods restart one at a time from ${first} (the StatefulSet controller creates each pod's ${name} claim; the pod is evicted once it is bound and the other pods are Ready)`,
    );
    if (!mountPath && !change.podTemplate)
      then.push(
        `the pod template does not mount ${name}: the pods are restarted one by one all the same, so that every pod has the volume (a sidecar may mount it later; --mount-path mounts it now)`,
      );
  } else if (pendingAdd) {
    what.push(
      `${setName}: claim template ${name} is no longer to be added (it was only desired; the live set never had it)${change.podTemplate ? `; held pod template without its mounts${change.containers.length ? ` (${change.containers.join(", ")})` : ""}` : ""}`,
    );
  } else {
    what.push(
      `${setName}: claim template ${name} to be removed (${Keys.removeTemplates}: ${rawAnnotation(change.annotations, "removeTemplates")}); ${Keys.finalize}: Recreate (removing a template needs a re-create)`,
    );
    if (change.containers.length)
      what.push(
        `pod template held without the ${name} mounts (containers ${change.containers.join(", ")}; ${Keys.podTemplate}, applied by the re-create)`,
      );
    then.push(
      `claimstep re-creates ${ref.name} without ${name} after its claims are at the revision; pods restart one at a time from ${first}, so that no pod mounts it`,
    );
    then.push(
      `its claims${claims.length ? ` (${named.join(", ")})` : ""} are kept, labelled ${Keys.orphanedFrom}=${ref.name}: claimstep never deletes a claim; ${continueCommand(ctx, "status", ref)} lists them with the command to delete them`,
    );
    if (change.templates.length === 0)
      then.push(
        `${ref.name} then has no claim templates: its pods keep running, without claims of their own from claimstep's point of view`,
      );
  }
  const nextText = then.join("; ");
  if (ctx.json) {
    emit(ctx, {
      ref,
      ...(dryRun ? { dryRun: true } : {}),
      changed: change.changed,
      ...(flags.add ? { added: name } : { removed: name }),
      revision: change.revision,
      templates: change.templates,
      annotations: change.annotations,
      ...(change.podTemplate ? { podTemplate: change.podTemplate } : {}),
      ...(claims.length && !flags.add ? { keptClaims: claims } : {}),
      ...recreateJSON(outlook),
      ...managedByJSON(owners),
      next: nextText,
      plan: resultJSON(next),
    });
  } else {
    const plan = paintHeadline(renderDecision(next.decision), next.decision.phase, ctx.color);
    const lines: string[] = [];
    if (dryRun) {
      lines.push(
        `${setName}: dry run, nothing written. ${change.changed ? "It would write:" : "Nothing to write: it already desires this."}`,
      );
      if (change.changed)
        for (const [k, v] of Object.entries(change.annotations)) {
          const shown =
            k === Keys.podTemplate
              ? "(a pod template; -o json shows it)"
              : k === Keys.templates
                ? `${change.templates.map((t) => t.metadata.name).join(", ") || "(none)"} (revision ${change.revision}; -o json shows them)`
                : v;
          if (annotations[k] !== v) lines.push(`  ${k}: ${shown}`);
        }
      lines.push(...what.map((w) => `  ${w.replace(`${setName}: `, "")}`));
    } else {
      lines.push(
        ...(change.changed ? what : [`${setName}: nothing to write: it already desires this`, ...what.slice(1)]),
      );
    }
    if (outlook) lines.push(outlook.text);
    if (nextText) lines.push(`Next: ${nextText}.`);
    print(ctx.io, `${lines.join("\n")}\n\n${dryRun ? "The plan it would cause:\n" : ""}${plan}`);
  }
  return exitOf(next.decision);
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
  // Once per command, though a write that lost its race computes the change again (SET_ATTEMPTS).
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
const managedByJSON = (owners: readonly GitOpsOwner[]) =>
  owners.length
    ? { managedBy: owners.map((o) => ({ tool: o.tool, name: o.name, evidence: o.evidence, guess: o.guess })) }
    : {};

/** Whether the set with `written` merged into its annotations ends in a re-create, and why (core/change/outlook.ts). */
const outlookAfter = (set: StatefulSet, written: Record<string, string>): RecreateOutlook | undefined =>
  recreateOutlook({ ...set, metadata: { ...set.metadata, annotations: { ...set.metadata.annotations, ...written } } });

/** `-o json`'s `recreate`: whether the change ends in a re-create of the set and why (absent: it rolls out in place). */
const recreateJSON = (o: RecreateOutlook | undefined) => (o ? { recreate: { recreate: o.recreate, why: o.why } } : {});

/** The plan of the next step as it would be from `reader`'s snapshot (a dry run: nothing written). */
const planOf = (
  target: Awaited<ReturnType<Context["target"]>>,
  ref: SetRef,
  reader: Parameters<typeof runStep>[0]["reader"],
): Promise<StepResult> =>
  runStep({ reader, writers: target.writers, metrics: target.metrics, ref, now: target.now(), dryRun: true });
