// Plain-text rendering of a Decision for logs and the CLI: a headline, the action, and the
// per-ordinal table (one row per claim), aligned so a person can scan it.
import type { ClaimReport, Decision, OrdinalReport } from "./types.js";

const readinessText = (c: ClaimReport): string =>
  c.readiness.state === "Ready" ? "Ready" : `${c.readiness.state}: ${c.readiness.message.replace(`${c.claim}: `, "")}`;

const vacText = (c: ClaimReport): string => {
  const v = c.volumeAttributesClassName;
  if (!v) return "-";
  if (v.desired && v.current && v.desired !== v.current) return `${v.current}→${v.desired}`;
  return v.desired ?? v.current ?? "-";
};

/** Rows of the per-ordinal table, highest ordinal first. */
export function tableRows(ordinals: readonly OrdinalReport[]): string[][] {
  const rows: string[][] = [];
  for (const o of ordinals) {
    o.claims.forEach((c, i) => {
      rows.push([
        i === 0 ? String(o.ordinal) : "",
        i === 0 ? `${o.pod}${o.podPhase ? ` (${o.podPhase})` : ""}` : "",
        i === 0 ? o.state : "",
        c.claim,
        c.spec ?? "-",
        c.capacity ?? "-",
        c.target ?? "-",
        vacText(c),
        c.revision ?? "-",
        readinessText(c),
      ]);
    });
  }
  return rows;
}

export const TABLE_HEADER = ["ORDINAL", "POD", "STATE", "CLAIM", "SPEC", "CAPACITY", "TARGET", "VAC", "REVISION", "READINESS"];

/** Left-aligned columns separated by two spaces; the last column is not padded. */
export function alignColumns(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ").trimEnd())
    .join("\n");
}

export function renderTable(ordinals: readonly OrdinalReport[]): string {
  return ordinals.length ? alignColumns([TABLE_HEADER, ...tableRows(ordinals)]) : "(no ordinals)";
}

export function renderHeadline(d: Decision): string {
  const c = d.status.counts;
  const progress = c.total ? `  ${c.updated}/${c.total} updated` : "";
  return `${d.ref.namespace}/${d.ref.name}  ${d.phase}  ${d.reason}${d.revision ? `  revision ${d.revision}` : ""}${progress}\n  ${d.message}`;
}

export function renderDecision(d: Decision): string {
  const lines = [renderHeadline(d)];
  if (d.action) lines.push(`  action: ${d.action.type} ${d.action.namespace}/${d.action.claim} storage=${d.action.storage}${d.action.volumeAttributesClassName ? ` volumeAttributesClassName=${d.action.volumeAttributesClassName}` : ""}`);
  if (d.ordinals.length) lines.push("", renderTable(d.ordinals));
  return lines.join("\n");
}
