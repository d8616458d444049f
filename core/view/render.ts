// Plain-text rendering of a Decision for logs and the CLI: a headline, the action, and the
// per-ordinal table (one row per claim), aligned so a person can scan it.
import type { Decision, OrdinalReport } from "../types.js";
import { actionText, ordinalRows } from "./view.js";

/**
 * Rows of the per-ordinal table, highest ordinal first, one per claim; with pods (readiness and
 * template revision) when asked, as where claimstep coordinates them (core/view/view.ts podsCoordinated). The cells are the view model's (core/view/view.ts),
 * the status page's too.
 */
export function tableRows(ordinals: readonly OrdinalReport[], pods = false): string[][] {
  const rows: string[][] = [];
  for (const o of ordinalRows(ordinals)) {
    o.claims.forEach((c, i) => {
      const first = i === 0;
      rows.push([
        first ? String(o.ordinal) : "",
        first ? o.pod : "",
        ...(pods ? [first ? o.ready : "", first ? o.revision : ""] : []),
        first ? o.state : "",
        c.claim,
        c.spec,
        c.capacity,
        c.target,
        c.vac,
        c.revision,
        c.readinessText,
      ]);
    });
  }
  return rows;
}

export const TABLE_HEADER = [
  "ORDINAL",
  "POD",
  "STATE",
  "CLAIM",
  "SPEC",
  "CAPACITY",
  "TARGET",
  "VAC",
  "REVISION",
  "READINESS",
];
/** The header with the pod columns. */
export const TABLE_HEADER_PODS = [
  "ORDINAL",
  "POD",
  "POD-READY",
  "POD-REVISION",
  "STATE",
  "CLAIM",
  "SPEC",
  "CAPACITY",
  "TARGET",
  "VAC",
  "REVISION",
  "READINESS",
];

/** Left-aligned columns separated by two spaces; the last column is not padded. */
export function alignColumns(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

export function renderTable(ordinals: readonly OrdinalReport[], pods = false): string {
  return ordinals.length
    ? alignColumns([pods ? TABLE_HEADER_PODS : TABLE_HEADER, ...tableRows(ordinals, pods)])
    : "(no ordinals)";
}

export function renderHeadline(d: Decision): string {
  const c = d.status.counts;
  const progress = c.total ? `  ${c.updated}/${c.total} updated` : "";
  return `${d.ref.namespace}/${d.ref.name}  ${d.phase}  ${d.reason}${d.revision ? `  revision ${d.revision}` : ""}${progress}\n  ${d.message}`;
}

export function renderDecision(d: Decision): string {
  const lines = [renderHeadline(d)];
  if (d.action) lines.push(`  action: ${actionText(d.action)}`);
  if (d.ordinals.length) lines.push("", renderTable(d.ordinals));
  return lines.join("\n");
}
