// `status`: what claimstep last recorded on one set or on every opted-in set.
import { Keys, type StatusRecord } from "../../core/types.js";
import { EXIT, print, refOf, type Context } from "./context.js";

const parseStatus = (raw: string | undefined): StatusRecord | null => {
  if (!raw) return null;
  try {
    return JSON.parse(raw) as StatusRecord;
  } catch {
    return null;
  }
};

export async function status(ctx: Context): Promise<number> {
  const target = await ctx.target();
  const refs = ctx.args[0]
    ? [refOf(ctx.flags, target, ctx.args[0], "status")]
    : await target.listOptedIn(ctx.flags["all-namespaces"] ? undefined : (ctx.flags.namespace ?? target.namespace));
  const rows = [];
  for (const ref of refs) {
    const set = (await target.reader.load(ref)).statefulSet;
    const a = set.metadata.annotations ?? {};
    rows.push({
      ref,
      strategy: a[Keys.strategy] ?? "OnClaimDelete",
      updateRevision: a[Keys.updateRevision] ?? null,
      currentRevision: a[Keys.currentRevision] ?? null,
      status: parseStatus(a[Keys.status]),
    });
  }
  if (ctx.json) {
    print(ctx.io, JSON.stringify(ctx.args[0] ? rows[0] : rows));
  } else if (rows.length === 0) {
    print(ctx.io, "no opted-in StatefulSets (annotate one with claimstep.io/volume-claim-update-strategy: InPlace, or use claimstep set)");
  } else {
    const table = [["NAMESPACE", "NAME", "PHASE", "REASON", "UPDATED", "REVISION", "OBSERVED", "MESSAGE"]];
    for (const r of rows) {
      const s = r.status;
      table.push([
        r.ref.namespace,
        r.ref.name,
        s?.phase ?? (r.strategy === "InPlace" ? "-" : "Idle"),
        s?.reason ?? "-",
        s ? `${s.counts.updated}/${s.counts.total}` : "-",
        r.updateRevision ?? "-",
        s?.observedAt ?? "-",
        s?.message ?? (r.strategy === "InPlace" ? "no step yet" : `not opted in (${r.strategy})`),
      ]);
    }
    const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
    print(ctx.io, table.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")).join("\n"));
  }
  return rows.some((r) => r.status?.phase === "Blocked") ? EXIT.blocked : EXIT.ok;
}
