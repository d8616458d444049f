// `status`: where one set or every opted-in set stands; `status <set> --watch`: follow it,
// read-only, as `kubectl rollout status` follows a rollout. Both show the plan of the step a
// controller would run now (functions/dry-run.ts, nothing written), summarized once
// (core/view/summary.ts) as the status page does: never the previous revision's Complete, a set deleted
// mid re-create listed and marked, and a watch that ends only when claimstep has nothing left to do.

import { ApiError } from "../../adapters/api-error.js";
import { Keys } from "../../core/keys.js";
import { recordedRevisionsOf } from "../../core/policy/index.js";
import type { SetRef } from "../../core/types.js";
import {
  type Headline,
  headlineOf,
  nextStepOf,
  type OrphansView,
  orphansView,
  recreateCommand,
  type SetSummary,
} from "../../core/view/index.js";
import { type DryRun, dryRunOf } from "../dry-run.js";
import { paintPhase } from "./color.js";
import type { Context } from "./context.js";
import { parseDuration } from "./durations.js";
import { EXIT } from "./exit-codes.js";
import { UsageError } from "./flags.js";
import { emit, print } from "./io.js";
import { optedIn } from "./listing.js";
import { elapsedSince, intervalOf } from "./run.js";
import { refOf, type Target } from "./target.js";

/** The step a controller would run now, planned with the target's own writers; never written. */
const dryRun = (target: Target, ref: SetRef): Promise<DryRun> =>
  dryRunOf({
    reader: target.reader,
    writers: target.writers,
    ...(target.metrics ? { metrics: target.metrics } : {}),
    ref,
    now: target.now(),
  });

/** The claims of its removed templates (labelled claimstep.io/orphaned-from=<set>), as the plan reports them. */
const orphansOf = (ref: SetRef, d: DryRun): OrphansView | undefined =>
  d.snapshot.claims.some((c) => c.metadata.labels?.[Keys.orphanedFrom] === ref.name)
    ? orphansView(ref, d.planned.orphanedClaims)
    : undefined;

/** `-o json`: where the set stands (the same fields as the table), the next step, and the record as written (`status`). */
const jsonOf = (r: SetSummary, d: DryRun) => {
  const next = nextStepOf(d.planned);
  return {
    ref: r.ref,
    strategy: r.strategy,
    phase: r.phase,
    reason: r.reason,
    message: r.message,
    updated: r.updated,
    revision: r.revision === "-" ? null : r.revision,
    updateRevision: recordedRevisionsOf(d.snapshot.statefulSet).update ?? null,
    currentRevision: r.currentRevision === "-" ? null : r.currentRevision,
    observed: r.observed,
    done: r.done,
    setMissing: r.setMissing,
    ...(r.warnings ? { warnings: r.warnings } : {}),
    // The command that re-creates the set: not offered when the next step would not (Blocked).
    ...(r.setMissing && r.phase !== "Blocked" ? { command: recreateCommand(r.ref) } : {}),
    next: {
      phase: next.phase,
      reason: next.reason,
      action: next.action,
      ...(next.requeueAfter !== undefined ? { requeueAfter: next.requeueAfter } : {}),
    },
    status: r.status,
  };
};

const orphansText = (o: OrphansView): string => {
  const width = Math.max(...o.claims.map((c) => c.claim.length));
  const templates = Math.max(...o.claims.map((c) => c.template.length));
  const lines = [
    "",
    `${o.heading}:`,
    ...o.claims.map((c) => `  ${c.claim.padEnd(width)}  ${c.template.padEnd(templates)}  ${c.note}`),
  ];
  if (o.command)
    lines.push(
      "Delete the ones no pod mounts once their data is no longer needed (claimstep never does):",
      `  ${o.command}`,
    );
  else lines.push("Each is still mounted: once its pod restarts, claimstep status shows the command to delete it.");
  return lines.join("\n");
};

const table = (rows: string[][], color: boolean, phaseColumn: number): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows
    .map((row, r) =>
      row
        .map((c, i) => {
          const cell = i === row.length - 1 ? c : c.padEnd(widths[i]!);
          return r > 0 && i === phaseColumn ? cell.replace(c, paintPhase(c, color)) : cell;
        })
        .join("  "),
    )
    .join("\n");
};

export async function status(ctx: Context): Promise<number> {
  if (ctx.flags.watch) return watch(ctx);
  if (ctx.flags.interval !== undefined || ctx.flags.timeout !== undefined)
    throw new UsageError("status: --interval and --timeout go with --watch");
  const names = ctx.args;
  const selector = ctx.flags.selector;
  // As kubectl: names or a selector, not both.
  if (names.length && selector !== undefined)
    throw new UsageError("status: give StatefulSet names or -l/--selector, not both");
  const allNamespaces = ctx.flags["all-namespaces"] ?? false;
  if (allNamespaces && ctx.flags.namespace !== undefined)
    throw new UsageError("status: -A lists every namespace: -n does not apply");
  const target = await ctx.target({ readOnly: true });
  // Named sets: in the namespace, or with -A those names among the opted-in sets of every namespace.
  let refs: SetRef[];
  let missing: string[] = [];
  if (names.length && allNamespaces) {
    const listed = await optedIn(target, undefined);
    refs = listed.filter((r) => names.includes(r.name));
    missing = names.filter((n) => !refs.some((r) => r.name === n));
  } else if (names.length) refs = names.map((n) => refOf(ctx.flags, target, n, "status"));
  else refs = await optedIn(target, allNamespaces ? undefined : (ctx.flags.namespace ?? target.namespace), selector);
  const read: { row: SetSummary; dry: DryRun }[] = [];
  for (const ref of refs) {
    try {
      const dry = await dryRun(target, ref);
      read.push({ row: dry.summary, dry });
    } catch (err) {
      // Listed, then gone (deleted with its record) before it was read: no longer a set to show.
      if ((names.length && !allNamespaces) || !(err instanceof ApiError && err.kind === "NotFound")) throw err;
    }
  }
  const rows = read.map((r) => r.row);
  // One named set: also the claims of its removed templates (docs/templates.md).
  const one = names.length === 1 && !allNamespaces;
  const orphans = one && read[0] ? orphansOf(refs[0]!, read[0].dry) : undefined;
  if (ctx.json) {
    const json = read.map((r) => ({
      ...jsonOf(r.row, r.dry),
      ...(orphans ? { orphanedClaims: orphans.claims, deleteCommand: orphans.command ?? null } : {}),
    }));
    emit(ctx, one ? json[0] : json);
  } else if (rows.length === 0 && names.length) {
    // Nothing found under those names (said below).
  } else if (rows.length === 0 && selector !== undefined) {
    print(ctx.io, `no opted-in StatefulSets with labels matching ${selector}`);
  } else if (rows.length === 0) {
    print(
      ctx.io,
      "no opted-in StatefulSets (annotate one with claimstep.io/volume-claim-update-strategy: InPlace, or use claimstep set)",
    );
  } else {
    const wide = ctx.format === "wide";
    const header = ["NAMESPACE", "NAME", "PHASE", "REASON", "UPDATED", "REVISION"];
    if (wide) header.push("CURRENT", "STRATEGY", "IN-FLIGHT", "PENDING", "BLOCKED", "ORDINAL", "SINCE");
    header.push("OBSERVED", "MESSAGE");
    const lines = [header];
    for (const r of rows) {
      const c = r.counts;
      const line = [r.ref.namespace, r.ref.name, r.phase, r.reason, r.updated, r.revision];
      if (wide) {
        line.push(
          r.currentRevision,
          r.strategy,
          c ? String(c.inFlight) : "-",
          c ? String(c.pending) : "-",
          c ? String(c.blocked) : "-",
          r.ordinal !== undefined ? String(r.ordinal) : "-",
          r.since,
        );
      }
      line.push(r.observedAt, r.message);
      lines.push(line);
    }
    print(ctx.io, `${table(lines, ctx.color, 2)}${orphans ? `\n${orphansText(orphans)}` : ""}`);
    // As kubectl prints the API server's warnings: on stderr, the table stays as it is.
    for (const r of rows) for (const w of r.warnings ?? []) ctx.io.stderr.write(`Warning: ${w}\n`);
  }
  // As kubectl get says of a name it did not find: on stderr, exit 1.
  for (const n of missing)
    ctx.io.stderr.write(`claimstep: no opted-in StatefulSet ${JSON.stringify(n)} in any namespace\n`);
  if (missing.length) return EXIT.error;
  return rows.some((r) => r.phase === "Blocked") ? EXIT.blocked : EXIT.ok;
}

const EXIT_OF = { complete: EXIT.ok, blocked: EXIT.blocked } as const;

/** `status <set> --watch`: re-read every --interval, one line per change; never writes. */
async function watch(ctx: Context): Promise<number> {
  if (!ctx.args[0])
    throw new UsageError("status --watch: name the StatefulSet, e.g. claimstep status web -n db --watch");
  if (ctx.args.length > 1)
    throw new UsageError(`status --watch follows one StatefulSet: ${ctx.args.join(",")} names ${ctx.args.length}`);
  if (ctx.flags.selector !== undefined)
    throw new UsageError("status --watch follows one StatefulSet: -l does not apply");
  if (ctx.flags["all-namespaces"]) throw new UsageError("status --watch follows one StatefulSet: -A does not apply");
  if (ctx.format === "wide") throw new UsageError("status --watch: -o wide does not apply; use text, json or yaml");
  const interval = intervalOf(ctx, "2s");
  const timeout = ctx.flags.timeout ? parseDuration(ctx.flags.timeout, "timeout") : undefined;
  // A reader: on the simulated cluster it neither moves the shared clock nor saves the file.
  const target = await ctx.target({ readOnly: true });
  const ref = refOf(ctx.flags, target, ctx.args[0], "status");
  const started = target.now().getTime();
  const realStart = Date.now();
  let previous = "";
  let last: Headline | undefined;
  for (;;) {
    if (ctx.signal.aborted) return EXIT.ok;
    const at = target.now();
    try {
      const now = headlineOf((await dryRun(target, ref)).summary);
      last = now;
      const key = `${now.phase}|${now.reason}|${now.message}`;
      if (key !== previous) {
        previous = key;
        if (ctx.json)
          emit(ctx, { at: at.toISOString(), ref, phase: now.phase, reason: now.reason, message: now.message }, true);
        else
          print(
            ctx.io,
            `${at.toISOString()}  ${ref.namespace}/${ref.name}  ${paintPhase(now.phase, ctx.color)}  ${now.reason}  ${now.updated ? `${now.updated}  ` : ""}${now.message}`,
          );
      }
      if (now.end !== undefined) {
        if (now.end === "blocked" && !ctx.json)
          ctx.io.stderr.write(
            `claimstep: ${ref.namespace}/${ref.name} is ${now.phase === "Idle" ? "left alone" : "blocked"} (${now.reason}): ${now.message}\n`,
          );
        return EXIT_OF[now.end];
      }
    } catch (err) {
      // A read the API server could not answer now (429, 5xx, timeout): read again; anything else ends the watch.
      if (!(err instanceof ApiError && err.isTransient)) throw err;
      ctx.io.stderr.write(
        `claimstep: ${ref.namespace}/${ref.name}: could not read the set (${err.message}); retrying\n`,
      );
    }
    if (timeout !== undefined && elapsedSince(target.now().getTime(), started, realStart) >= timeout) {
      ctx.io.stderr.write(
        `claimstep: ${ref.namespace}/${ref.name} is still ${last?.phase ?? "unread"} (${last?.reason ?? "-"}) after ${ctx.flags.timeout}: ${last?.message ?? ""}\n`,
      );
      return EXIT.error;
    }
    const left = timeout === undefined ? Infinity : timeout - elapsedSince(target.now().getTime(), started, realStart);
    await target.pause(Math.min(interval, Math.max(left, 1)), ctx.signal);
  }
}
