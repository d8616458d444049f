// `status`: what claimstep last recorded on one set or on every opted-in set; `status <set>
// --watch`: follow it, read-only, as `kubectl rollout status` follows a rollout.
import { ApiError } from "../../adapters/api-error.js";
import { revisionOf } from "../../core/revision.js";
import { OPT_IN } from "../../core/statefulset.js";
import { desiredTemplates } from "../../core/templates.js";
import { Keys, type SetRef, type StatusRecord } from "../../core/types.js";
import { paintPhase } from "./color.js";
import { EXIT, UsageError, emit, parseDuration, print, refOf, type Context, type Target } from "./context.js";

const parseStatus = (raw: string | undefined): StatusRecord | null => {
  if (!raw) return null;
  try {
    return JSON.parse(raw) as StatusRecord;
  } catch {
    return null;
  }
};

interface Row {
  ref: SetRef;
  strategy: string;
  updateRevision: string | null;
  currentRevision: string | null;
  /** The revision of the desired templates as they are now (null: they are invalid). */
  desiredRevision: string | null;
  status: StatusRecord | null;
}

async function readRow(target: Target, ref: SetRef): Promise<Row> {
  const set = (await target.reader.load(ref)).statefulSet;
  const a = set.metadata.annotations ?? {};
  const desired = desiredTemplates(set);
  return {
    ref,
    strategy: a[Keys.strategy] ?? "OnClaimDelete",
    updateRevision: a[Keys.updateRevision] ?? null,
    currentRevision: a[Keys.currentRevision] ?? null,
    desiredRevision: desired.ok ? revisionOf(desired.templates) : null,
    status: parseStatus(a[Keys.status]),
  };
}

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
  if (ctx.flags.interval !== undefined || ctx.flags.timeout !== undefined) throw new UsageError("status: --interval and --timeout go with --watch");
  const target = await ctx.target();
  const refs = ctx.args[0]
    ? [refOf(ctx.flags, target, ctx.args[0], "status")]
    : await target.listOptedIn(ctx.flags["all-namespaces"] ? undefined : (ctx.flags.namespace ?? target.namespace));
  const rows: Row[] = [];
  for (const ref of refs) rows.push(await readRow(target, ref));
  if (ctx.json) {
    const json = rows.map(({ desiredRevision: _, ...r }) => r);
    emit(ctx, ctx.args[0] ? json[0] : json);
  } else if (rows.length === 0) {
    print(ctx.io, "no opted-in StatefulSets (annotate one with claimstep.io/volume-claim-update-strategy: InPlace, or use claimstep set)");
  } else {
    const wide = ctx.format === "wide";
    const header = ["NAMESPACE", "NAME", "PHASE", "REASON", "UPDATED", "REVISION"];
    if (wide) header.push("CURRENT", "STRATEGY", "IN-FLIGHT", "PENDING", "BLOCKED", "ORDINAL", "SINCE");
    header.push("OBSERVED", "MESSAGE");
    const lines = [header];
    for (const r of rows) {
      const s = r.status;
      const line = [
        r.ref.namespace,
        r.ref.name,
        s?.phase ?? (r.strategy === "InPlace" ? "-" : "Idle"),
        s?.reason ?? "-",
        s ? `${s.counts.updated}/${s.counts.total}` : "-",
        r.updateRevision ?? "-",
      ];
      if (wide) {
        line.push(
          r.currentRevision ?? "-",
          r.strategy,
          s ? String(s.counts.inFlight) : "-",
          s ? String(s.counts.pending) : "-",
          s ? String(s.counts.blocked) : "-",
          s?.ordinal !== undefined ? String(s.ordinal) : "-",
          s?.since ?? "-",
        );
      }
      line.push(s?.observedAt ?? "-", s?.message ?? (r.strategy === "InPlace" ? "no step yet" : `not opted in (${r.strategy})`));
      lines.push(line);
    }
    print(ctx.io, table(lines, ctx.color, 2));
  }
  return rows.some((r) => r.status?.phase === "Blocked") ? EXIT.blocked : EXIT.ok;
}

interface Seen {
  phase: string;
  reason: string;
  message: string;
  updated?: string;
  /** The exit code when this ends the watch. */
  end?: number;
}

/** What the watch reports of a row: the recorded status, once it is about the desired revision. */
function seen(r: Row): Seen {
  if (r.strategy !== OPT_IN[Keys.strategy]) {
    return { phase: "Idle", reason: "NotOptedIn", message: `not opted in: ${Keys.strategy} is ${r.strategy}; set it to InPlace (claimstep set does) to let claimstep update this set's claims`, end: EXIT.blocked };
  }
  const s = r.status;
  // A status of an earlier revision says nothing of this one yet (as a rollout's observedGeneration).
  if (!s || (s.revision ?? null) !== r.desiredRevision) {
    return {
      phase: "-",
      reason: "NotObserved",
      message: `no step recorded for revision ${r.desiredRevision ?? "(invalid templates)"} yet (claimstep serve, a step --all CronJob or claimstep run steps it)`,
    };
  }
  const updated = `${s.counts.updated}/${s.counts.total} updated`;
  if (s.phase === "Complete") return { phase: s.phase, reason: s.reason, message: s.message, updated, end: EXIT.ok };
  // Blocked until a person acts; Idle (spec.updateStrategy OnDelete): never updated by claimstep.
  if (s.phase === "Blocked" || s.phase === "Idle") return { phase: s.phase, reason: s.reason, message: s.message, updated, end: EXIT.blocked };
  return { phase: s.phase, reason: s.reason, message: s.message, updated };
}

/** `status <set> --watch`: re-read every --interval, one line per change; never writes. */
async function watch(ctx: Context): Promise<number> {
  if (!ctx.args[0]) throw new UsageError("status --watch: name the StatefulSet, e.g. claimstep status web -n db --watch");
  if (ctx.flags["all-namespaces"]) throw new UsageError("status --watch follows one StatefulSet: -A does not apply");
  if (ctx.format === "wide") throw new UsageError("status --watch: -o wide does not apply; use text, json or yaml");
  const target = await ctx.target();
  const ref = refOf(ctx.flags, target, ctx.args[0], "status");
  const interval = parseDuration(ctx.flags.interval ?? "2s", "interval");
  const timeout = ctx.flags.timeout ? parseDuration(ctx.flags.timeout, "timeout") : undefined;
  const started = target.now().getTime();
  let previous = "";
  let last: Seen | undefined;
  for (;;) {
    if (ctx.signal.aborted) return EXIT.ok;
    const at = target.now();
    try {
      const now = seen(await readRow(target, ref));
      last = now;
      const key = `${now.phase}|${now.reason}|${now.message}`;
      if (key !== previous) {
        previous = key;
        if (ctx.json) emit(ctx, { at: at.toISOString(), ref, phase: now.phase, reason: now.reason, message: now.message }, true);
        else print(ctx.io, `${at.toISOString()}  ${ref.namespace}/${ref.name}  ${paintPhase(now.phase, ctx.color)}  ${now.reason}  ${now.updated ? `${now.updated}  ` : ""}${now.message}`);
      }
      if (now.end !== undefined) {
        if (now.end === EXIT.blocked && !ctx.json) ctx.io.stderr.write(`claimstep: ${ref.namespace}/${ref.name} is ${now.phase === "Idle" ? "left alone" : "blocked"} (${now.reason}): ${now.message}\n`);
        return now.end;
      }
    } catch (err) {
      // A read the API server could not answer now (429, 5xx, timeout): read again; anything else ends the watch.
      if (!(err instanceof ApiError && err.isTransient)) throw err;
      ctx.io.stderr.write(`claimstep: ${ref.namespace}/${ref.name}: could not read the set (${err.message}); retrying\n`);
    }
    if (timeout !== undefined && target.now().getTime() - started >= timeout) {
      ctx.io.stderr.write(`claimstep: ${ref.namespace}/${ref.name} is still ${last?.phase ?? "unread"} (${last?.reason ?? "-"}) after ${ctx.flags.timeout}: ${last?.message ?? ""}\n`);
      return EXIT.error;
    }
    await target.pause(interval, ctx.signal);
  }
}
