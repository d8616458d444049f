// What a pull request says: a title naming the change, and a body saying what merging does, what
// closing does, and the per-ordinal plan as a Markdown table built from the Decision.
import type { Decision, OrdinalReport, PatchClaim } from "../../core/types.js";

const cell = (s: string | undefined): string => (s === undefined || s === "" ? "–" : s.replace(/\|/g, "\\|").replace(/\n/g, " "));

function changeSummary(action: PatchClaim): string {
  const parts = [`storage ${action.storage}`];
  if (action.volumeAttributesClassName) parts.push(`volumeAttributesClassName ${action.volumeAttributesClassName}`);
  return parts.join(", ");
}

export function pullRequestTitle(action: PatchClaim, decision: Decision): string {
  return `claimstep: ${action.namespace}/${action.claim} → ${changeSummary(action)} (${decision.ref.name} ordinal ${action.ordinal}, revision ${decision.revision ?? "?"})`;
}

export function commitMessage(action: PatchClaim, decision: Decision): string {
  return `claimstep: ${action.claim} → ${changeSummary(action)}\n\nStatefulSet ${decision.ref.namespace}/${decision.ref.name}, ordinal ${action.ordinal}, revision ${decision.revision ?? "?"}.`;
}

/** GitHub caps a body at 65,536 characters; a table of this many rows stays well below. */
export const MAX_TABLE_ROWS = 200;

function rows(ordinals: readonly OrdinalReport[], action: PatchClaim): string[] {
  const out: string[] = [];
  for (const o of ordinals) {
    const claims = o.claims.length ? o.claims : [undefined];
    for (const c of claims) {
      const vac = c?.volumeAttributesClassName;
      const vacCell = vac ? `${cell(vac.current)} → ${cell(vac.desired)}` : "–";
      const here = c?.claim === action.claim ? " **← this PR**" : "";
      out.push(
        `| ${o.ordinal} | ${cell(o.pod)} | ${o.state}${here} | ${cell(c?.claim)} | ${cell(c?.spec)} | ${cell(c?.capacity)} | ${cell(c?.target)} | ${vacCell} | ${cell(c?.revision)} | ${cell(c ? (c.readiness.state === "Ready" ? "Ready" : `${c.readiness.state}: ${c.readiness.message}`) : undefined)} |`,
      );
    }
  }
  if (out.length <= MAX_TABLE_ROWS) return out;
  // Keep the row of this pull request's claim visible.
  const mine = out.findIndex((r) => r.includes("**← this PR**"));
  const kept = out.slice(0, MAX_TABLE_ROWS);
  if (mine >= MAX_TABLE_ROWS) kept[MAX_TABLE_ROWS - 1] = out[mine]!;
  return [...kept, `| … | | ${out.length - MAX_TABLE_ROWS} more claims not shown | | | | | | | |`];
}

/** The Markdown body: what merging does, what closing does, and the plan of every ordinal. */
export function pullRequestBody(action: PatchClaim, decision: Decision, path: string): string {
  const set = `${decision.ref.namespace}/${decision.ref.name}`;
  return [
    `claimstep proposes the next step of the rollout of StatefulSet \`${set}\` to revision \`${decision.revision ?? "?"}\`.`,
    "",
    `**Merging** this pull request changes \`${path}\`: PersistentVolumeClaim \`${action.claim}\` (ordinal ${action.ordinal}) requests ${changeSummary(action)} and is labelled \`claimstep.io/revision: ${decision.revision ?? "?"}\`. Your GitOps controller (Argo CD with \`ServerSideApply=true\`, or Flux) applies it; claimstep then waits until the claim is resized and ready before it proposes the next ordinal. Merging is the approval: nothing else changes the cluster.`,
    "",
    `**Closing** it without merging pauses the rollout of \`${set}\` (Blocked, reason ChangeRejected) until the desired templates change (a new revision) or this pull request is reopened.`,
    "",
    `Status now: **${decision.phase}** (${decision.reason}) — ${decision.message}`,
    "",
    "| ordinal | pod | state | claim | spec | capacity | target | volume attributes class | revision | readiness |",
    "|---:|---|---|---|---|---|---|---|---|---|",
    ...rows(decision.ordinals, action),
    "",
    "<sub>Opened by claimstep. The branch name encodes the set, the revision and the ordinal; do not rename it.</sub>",
    "",
  ].join("\n");
}
