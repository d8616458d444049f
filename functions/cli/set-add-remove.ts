// `set <sts> <template> --add …` / `--remove` (issue 27, docs/templates.md): a claim template added
// to or removed from the desired ones, with the re-create that asks for; the pod template held
// with the new volume mounted (--mount-path) or without the removed one's mounts.
import { changeOf } from "../../core/change/index.js";
import { Keys } from "../../core/keys.js";
import type { ClaimTemplate } from "../../core/kube/index.js";
import { claimOrdinal, ordinalsOf, podName } from "../../core/kube/index.js";
import { rawAnnotation } from "../../core/policy/index.js";
import type { SetRef, Snapshot } from "../../core/types.js";
import { renderDecision } from "../../core/view/index.js";
import { paintHeadline } from "./color.js";
import type { Context } from "./context.js";
import { exitOf } from "./exit-codes.js";
import { type Flags, UsageError } from "./flags.js";
import { continueCommand } from "./interrupt.js";
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

/** The access modes a claim may ask for. */
const ACCESS_MODES: readonly string[] = ["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"];
const DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class";
/** At most this many claims are named in the output. */
const NAMED_ORPHANS = 10;
const NOTHING = "; nothing written";

/** `set <sts> <template> --add/--remove`: check the flags, read the set, compute the change, carry it out, report. */
export async function setTemplates(ctx: Context): Promise<number> {
  const accessModes = checkTemplateFlags(ctx.flags);
  const read = await readSet(
    ctx,
    (ref) => `set: name the claim template too, e.g. claimstep set ${ref.name} logs --add --storage 1Gi`,
  );
  const change = templateChange(read, accessModes);
  const outcome = await carryOut(read, change);
  const report: TemplateReport = { ...read, ...outcome, change, accessModes, claims: claimsOf(read) };
  const said = sayNext(report);
  if (ctx.json) emit(ctx, templateJSON(report, said));
  else print(ctx.io, templateText(report, said));
  return exitOf(outcome.next.decision);
}

/** Refused before the set is read: flags that do not go together or with --add/--remove; the access modes asked for, else. */
function checkTemplateFlags(flags: Flags): string[] {
  if (flags.add && flags.remove)
    throw new UsageError(`set: give --add or --remove, not both (one template at a time)${NOTHING}`);
  if (flags.remove) {
    const extra = (["storage", "vac", "allow-smaller", "hold-pods", ...ADD_ONLY] as const).find(
      (f) => flags[f] !== undefined,
    );
    if (extra) throw new UsageError(`set: --remove takes no --${extra}: it removes the whole template${NOTHING}`);
  } else {
    if (flags.storage === undefined)
      throw new UsageError(
        `set: --add needs --storage, the new template's size, e.g. claimstep set web logs --add --storage 1Gi${NOTHING}`,
      );
    const storageProblem = storageFlagProblem(flags.storage);
    if (storageProblem) throw new UsageError(`set: ${storageProblem} Nothing written`);
    const extra = (["allow-smaller", "hold-pods"] as const).find((f) => flags[f] !== undefined);
    if (extra) throw new UsageError(`set: --${extra} does not go with --add${NOTHING}`);
    if (flags.container !== undefined && flags["mount-path"] === undefined)
      throw new UsageError(
        `set: --container goes with --mount-path: give the path to mount the new volume at${NOTHING}`,
      );
  }
  const accessModes = (flags["access-mode"] ?? "ReadWriteOnce").split(",").map((m) => m.trim());
  const badMode = accessModes.find((m) => !ACCESS_MODES.includes(m));
  if (badMode !== undefined)
    throw new UsageError(
      `set: --access-mode ${JSON.stringify(badMode)}: not an access mode (one or more of ${ACCESS_MODES.join(", ")}, comma-separated)${NOTHING}`,
    );
  return accessModes;
}

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

/** The change (core's changeOf), refused when core refuses it or, for --add, when the cluster lacks its classes. */
function templateChange({ ctx, ref, name, snapshot }: SetRead, accessModes: string[]): ChangeMade {
  const { flags } = ctx;
  if (!flags.add) return made(changeOf(snapshot.statefulSet, { kind: "remove", template: name }));
  const why = classProblem(snapshot, flags["storage-class"]);
  if (why) throw new UsageError(`set: ${ref.namespace}/${ref.name}: ${why}${NOTHING}`);
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
  return made(
    changeOf(snapshot.statefulSet, {
      kind: "add",
      template,
      options: {
        ...(flags["mount-path"] !== undefined ? { mountPath: flags["mount-path"] } : {}),
        ...(flags.container !== undefined ? { container: flags.container } : {}),
      },
    }),
  );
}

const made = (change: ReturnType<typeof changeOf>): ChangeMade => {
  if (!change.ok) throw new UsageError(`set: ${change.message}${NOTHING}`);
  return change;
};

/** The claims of template `name` of the set, lowest ordinal first. */
const claimsOf = ({ snapshot, ref, name }: SetRead): string[] =>
  snapshot.claims
    .map((c) => ({ name: c.metadata.name, ordinal: claimOrdinal(c.metadata.name, name, ref.name) }))
    .filter((c): c is { name: string; ordinal: number } => c.ordinal !== undefined)
    .sort((a, b) => a.ordinal - b.ordinal)
    .map((c) => c.name);

/** What a template's `set` reports: the set read, the change, what carrying it out gave, the template's claims. */
interface TemplateReport extends SetRead, SetOutcome {
  change: ChangeMade;
  accessModes: string[];
  claims: string[];
}

/** Said of the change: what it is (`what`, the first line naming the set) and what claimstep does after (`after`). */
interface Said {
  what: string[];
  after: string[];
}

function sayNext(r: TemplateReport): Said {
  if (r.ctx.flags.add) return sayAdd(r);
  const live = r.snapshot.statefulSet.spec.volumeClaimTemplates ?? [];
  return live.some((t) => t.metadata.name === r.name) ? sayRemove(r) : sayPendingAddUndone(r);
}

const setNameOf = (ref: SetRef): string => `${ref.namespace}/${ref.name}`;

/** The pod that restarts first: the lowest ordinal. */
const lowestPod = (r: TemplateReport): string => podName(r.ref.name, ordinalsOf(r.snapshot.statefulSet).start);

function sayAdd(r: TemplateReport): Said {
  const { ref, name, change, ctx } = r;
  const mountPath = ctx.flags["mount-path"];
  const t = change.templates.find((x) => x.metadata.name === name)!;
  const what = [
    `${setNameOf(ref)}: ${change.changed ? "added" : "already adds"} claim template ${name} (${ctx.flags.storage}, class ${t.spec.storageClassName ?? "(the default)"}, ${r.accessModes.join(", ")}${t.spec.volumeAttributesClassName ? `, volumeAttributesClassName ${t.spec.volumeAttributesClassName}` : ""}); ${Keys.finalize}: Recreate (adding a template needs a re-create)`,
  ];
  if (mountPath)
    what.push(
      `pod template held with ${name} mounted at ${mountPath} in container ${change.containers[0]} (${Keys.podTemplate}, applied by the re-create)`,
    );
  const after = [
    `claimstep re-creates ${ref.name} with ${name} after its claims are at the revision; pods restart one at a time from ${lowestPod(r)} (the StatefulSet controller creates each pod's ${name} claim; the pod is evicted once it is bound and the other pods are Ready)`,
  ];
  if (!mountPath && !change.podTemplate)
    after.push(
      `the pod template does not mount ${name}: the pods are restarted one by one all the same, so that every pod has the volume (a sidecar may mount it later; --mount-path mounts it now)`,
    );
  return { what, after };
}

/** --remove of a template only desired (the live set never had it): the addition is called off. */
function sayPendingAddUndone({ ref, name, change }: TemplateReport): Said {
  return {
    what: [
      `${setNameOf(ref)}: claim template ${name} is no longer to be added (it was only desired; the live set never had it)${change.podTemplate ? `; held pod template without its mounts${change.containers.length ? ` (${change.containers.join(", ")})` : ""}` : ""}`,
    ],
    after: [],
  };
}

function sayRemove(r: TemplateReport): Said {
  const { ref, name, change, claims } = r;
  const named =
    claims.length > NAMED_ORPHANS
      ? [...claims.slice(0, NAMED_ORPHANS), `and ${claims.length - NAMED_ORPHANS} more`]
      : claims;
  const what = [
    `${setNameOf(ref)}: claim template ${name} to be removed (${Keys.removeTemplates}: ${rawAnnotation(change.annotations, "removeTemplates")}); ${Keys.finalize}: Recreate (removing a template needs a re-create)`,
  ];
  if (change.containers.length)
    what.push(
      `pod template held without the ${name} mounts (containers ${change.containers.join(", ")}; ${Keys.podTemplate}, applied by the re-create)`,
    );
  const after = [
    `claimstep re-creates ${ref.name} without ${name} after its claims are at the revision; pods restart one at a time from ${lowestPod(r)}, so that no pod mounts it`,
    `its claims${claims.length ? ` (${named.join(", ")})` : ""} are kept, labelled ${Keys.orphanedFrom}=${ref.name}: claimstep never deletes a claim; ${continueCommand(r.ctx, "status", ref)} lists them with the command to delete them`,
  ];
  if (change.templates.length === 0)
    after.push(
      `${ref.name} then has no claim templates: its pods keep running, without claims of their own from claimstep's point of view`,
    );
  return { what, after };
}

/** `-o json`: the change, the pod template held, the claims kept, what comes next, the plan. */
function templateJSON(r: TemplateReport, said: Said): unknown {
  const { change, claims, name } = r;
  const adding = r.ctx.flags.add;
  return {
    ref: r.ref,
    ...(r.dryRun ? { dryRun: true } : {}),
    changed: change.changed,
    ...(adding ? { added: name } : { removed: name }),
    revision: change.revision,
    templates: change.templates,
    annotations: change.annotations,
    ...(change.podTemplate ? { podTemplate: change.podTemplate } : {}),
    ...(claims.length && !adding ? { keptClaims: claims } : {}),
    ...recreateJSON(r.outlook),
    ...managedByJSON(r.owners),
    next: said.after.join("; "),
    plan: resultJSON(r.next),
  };
}

/** The text: what is written (with --dry-run, what would be), the re-create outlook, what comes next, the plan. */
function templateText(r: TemplateReport, { what, after }: Said): string {
  const { change, next, dryRun } = r;
  const setName = setNameOf(r.ref);
  const plan = paintHeadline(renderDecision(next.decision), next.decision.phase, r.ctx.color);
  const lines = dryRun
    ? [...wouldWrite(r), ...what.map((w) => `  ${w.replace(`${setName}: `, "")}`)]
    : change.changed
      ? [...what]
      : [`${setName}: nothing to write: it already desires this`, ...what.slice(1)];
  if (r.outlook) lines.push(r.outlook.text);
  const nextText = after.join("; ");
  if (nextText) lines.push(`Next: ${nextText}.`);
  return `${lines.join("\n")}\n\n${dryRun ? "The plan it would cause:\n" : ""}${plan}`;
}

/** --dry-run's first lines: the annotations it would write (those that change), the big ones summed up. */
function wouldWrite({ ref, change, snapshot }: TemplateReport): string[] {
  const annotations = snapshot.statefulSet.metadata.annotations ?? {};
  const lines = [
    `${setNameOf(ref)}: dry run, nothing written. ${change.changed ? "It would write:" : "Nothing to write: it already desires this."}`,
  ];
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
  return lines;
}
