// What a pull request says: a title naming the change, and a body saying what merging does, what
// closing does, and the per-ordinal plan as a Markdown table built from the Decision. A re-create
// proposal says what merging approves, the templates before → after (added and removed ones too),
// the pod template paths that change with them, and the GitOps tool's part.
// Autogrow's proposal says the usage that caused it, the template sizes before → after, and that
// merging grows every ordinal through claimstep's rollout, one at a time.

import { Keys } from "../../core/keys.js";
import { recordName } from "../../core/plan/index.js";
import type { Decision, OrdinalReport, PatchClaim, ProposeRecreate, RaiseTemplate } from "../../core/types.js";
import type { Growth } from "./raise-manifest.js";
import { type ManifestChanges, TEMPLATE_FIELDS, type TemplateChange } from "./set-manifest.js";

// Everything in a body that came from the cluster or the forge (messages, names, sizes, values read
// from the repository, annotation values) goes through `text` (escaped prose) or `code` (a code
// span), so that it renders as the words it is: never a heading, a list, an image, a link, an
// @mention, a table column or HTML.

/** One line, no control characters. */
const oneLine = (s: string): string => s.replace(/[\r\n\u2028\u2029]+/g, " ").replace(/[\u0000-\u001f\u007f]/g, "");

/**
 * Inline Markdown that renders as `s` itself: HTML as entities, Markdown punctuation escaped
 * (also `|`, so it stays in its table cell), a leading list marker escaped, and `@` kept from
 * starting a mention (a word joiner after it).
 */
export function text(s: string): string {
  return oneLine(s)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/[\\`*_[\]#|~]/g, "\\$&") // `[` escaped: no link, no image
    .replace(/@/g, "@\u2060")
    .replace(/^(\s*)([-+])/, "$1\\$2")
    .replace(/^(\s*\d+)([.)])/, "$1\\$2");
}

/** A code span holding `s` verbatim, whatever backticks it holds (fenced by a longer run). Not for table cells. */
export function code(s: string): string {
  const line = oneLine(s);
  const longest = Math.max(0, ...[...line.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  const pad =
    line.startsWith("`") || line.endsWith("`") || (line.startsWith(" ") && line.endsWith(" ") && line.trim() !== "")
      ? " "
      : "";
  return `${fence}${pad}${line}${pad}${fence}`;
}

const cell = (s: string | undefined): string => (s === undefined || s === "" ? "–" : text(s));

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
        `| ${o.ordinal} | ${cell(o.pod)} | ${cell(o.state)}${here} | ${cell(c?.claim)} | ${cell(c?.spec)} | ${cell(c?.capacity)} | ${cell(c?.target)} | ${vacCell} | ${cell(c?.revision)} | ${cell(c ? (c.readiness.state === "Ready" ? "Ready" : `${c.readiness.state}: ${c.readiness.message}`) : undefined)} |`,
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

/** `Status now: **Phase** (Reason) — message`, every part escaped. */
const statusLine = (d: Decision): string => `Status now: **${text(d.phase)}** (${text(d.reason)}) — ${text(d.message)}`;

/** The Markdown body: what merging does, what closing does, and the plan of every ordinal. */
export function pullRequestBody(action: PatchClaim, decision: Decision, path: string): string {
  const set = code(`${decision.ref.namespace}/${decision.ref.name}`);
  return [
    `claimstep proposes the next step of the rollout of StatefulSet ${set} to revision ${code(decision.revision ?? "?")}.`,
    "",
    `**Merging** this pull request changes ${code(path)}: PersistentVolumeClaim ${code(action.claim)} (ordinal ${action.ordinal}) requests ${text(changeSummary(action))} and is labelled ${code(`claimstep.io/revision: ${decision.revision ?? "?"}`)}. Your GitOps controller (Argo CD with \`ServerSideApply=true\`, or Flux) applies it; claimstep then waits until the claim is resized and ready before it proposes the next ordinal. Merging is the approval: nothing else changes the cluster.`,
    "",
    `**Closing** it without merging pauses the rollout of ${set} (Blocked, reason ChangeRejected) until the desired templates change (a new revision) or this pull request is reopened.`,
    "",
    statusLine(decision),
    "",
    "| ordinal | pod | state | claim | spec | capacity | target | volume attributes class | revision | readiness |",
    "|---:|---|---|---|---|---|---|---|---|---|",
    ...rows(decision.ordinals, action),
    "",
    "<sub>Opened by claimstep. The branch name encodes the set, the revision and the ordinal; do not rename it.</sub>",
    "",
  ].join("\n");
}

// The re-create proposal (finalize in GitOps mode): one pull request per set and revision.

/** A proposal's changes: the fields of existing templates alone, or everything (issue 27). */
type Changes = readonly TemplateChange[] | ManifestChanges;
const allOf = (c: Changes): ManifestChanges =>
  "fields" in c ? c : { fields: [...c], added: [], removed: [], podTemplate: [] };

/** Pod template paths a summary names; the rest are counted. */
const MAX_POD_PATHS = 10;
const podPaths = (paths: readonly string[]): string[] =>
  paths.length > MAX_POD_PATHS
    ? [...paths.slice(0, MAX_POD_PATHS), `… ${paths.length - MAX_POD_PATHS} more`]
    : [...paths];

/** The changes as one line, e.g. `data: storage 10Gi → 20Gi; logs: added; wal: removed; pod template: spec.volumes`. */
export function templateChangeSummary(changes: Changes): string {
  const c = allOf(changes);
  return [
    ...c.fields.map((f) => `${f.template}: ${f.field} ${f.before} → ${f.after}`),
    ...c.added.map((a) => `${a.template}: added`),
    ...c.removed.map((r) => `${r}: removed`),
    ...(c.podTemplate.length ? [`pod template: ${podPaths(c.podTemplate).join(", ")}`] : []),
  ].join("; ");
}

export function recreateTitle(action: ProposeRecreate): string {
  return `claimstep: re-create StatefulSet ${action.namespace}/${action.set} with the claim templates of revision ${action.revision}`;
}

export function recreateCommitMessage(action: ProposeRecreate, changes: Changes): string {
  const c = allOf(changes);
  const fields = c.fields.length ? ` (${templateChangeSummary(c.fields)})` : "";
  const shape = [
    ...c.added.map((a) => `template ${a.template} is added`),
    ...c.removed.map((r) => `template ${r} is removed`),
    ...(c.podTemplate.length
      ? [`the pod template (spec.template) changes with them (${podPaths(c.podTemplate).join(", ")})`]
      : []),
  ];
  const dropped =
    action.podTemplate === undefined
      ? `the ${Keys.templates} annotation is removed.`
      : `the ${Keys.templates} and ${Keys.podTemplate} annotations are removed.`;
  return [
    `claimstep: ${action.set} volumeClaimTemplates → revision ${action.revision}`,
    "",
    `StatefulSet ${action.namespace}/${action.set}: the claim templates carry the desired values${fields};`,
    ...(shape.length ? [`${shape.join("; ")};`] : []),
    `${dropped} Merging approves the re-create of the set.`,
  ].join("\n");
}

/** The Markdown body: what merging does, the templates before → after, the GitOps tool's part, what closing does. */
export function recreateBody(
  action: ProposeRecreate,
  decision: Decision,
  path: string,
  changes: Changes,
  baseBranch: string,
): string {
  const c = allOf(changes);
  const set = code(`${action.namespace}/${action.set}`);
  const reshaped = c.added.length + c.removed.length + c.podTemplate.length > 0;
  const rows = [
    ...c.fields.map((f) => `| ${cell(f.template)} | ${cell(f.field)} | ${cell(f.before)} | ${cell(f.after)} |`),
    ...c.added.map((a) => `| ${cell(a.template)} | template | – | ${cell(`added: ${a.summary}`)} |`),
    ...c.removed.map((r) => `| ${cell(r)} | template | present | removed |`),
  ];
  const table = rows.length
    ? [`| template | field | before (${cell(baseBranch)}) | after |`, "|---|---|---|---|", ...rows]
    : reshaped
      ? []
      : [`The templates in ${code(path)} already carry these values; only the annotation goes.`];
  const pod = c.podTemplate.length
    ? [
        "",
        `**The pod template changes with it** (\`spec.template\`, as held in \`${Keys.podTemplate}\`): ${podPaths(c.podTemplate).map(code).join(", ")}. It goes into the same create as the claim templates, so that the set never mounts a volume it lacks (the API server refuses such a set); fields the API server sets by default are not written where the file leaves them unset.`,
      ]
    : [];
  const dropped =
    action.podTemplate === undefined
      ? `the annotation \`${Keys.templates}\` is removed`
      : `the annotations \`${Keys.templates}\` and \`${Keys.podTemplate}\` are removed`;
  const what = reshaped
    ? [
        `**Merging** this pull request changes ${code(path)}: the StatefulSet's \`spec.volumeClaimTemplates\` carry the desired templates (${[
          ...c.added.map((a) => `${code(a.template)} added`),
          ...c.removed.map((r) => `${code(r)} removed`),
          `the others' ${TEMPLATE_FIELDS.join(", ")} as desired`,
        ].join(
          "; ",
        )})${c.podTemplate.length ? ", `spec.template` becomes the held pod template" : ""} and ${dropped}; comments and every other field stay as they are. Merging approves the re-create: claimstep records the new manifest in ConfigMap ${code(`${action.namespace}/${recordName(action.set)}`)}, deletes the StatefulSet with \`propagationPolicy: Orphan\`, creates it from the record (claim templates and pod template in one create), and removes the record once the new set has adopted its pods.`,
        "",
        `**The claims are meant to stay**: no claim is deleted, no volume is lost; the record holds the uids of the pods and claims, and claimstep removes it only after finding them under the new set (else it stops, \`Blocked/RecreateReplaced\`). Then the pods are restarted one at a time, lowest ordinal first — each once its new claims exist (and are bound) and every other pod is Ready, through the Eviction API (PodDisruptionBudgets honoured) — and the StatefulSet controller re-creates each with the volumes of every template of the set.${c.removed.length || action.removed?.length ? ` The claims of a removed template are kept, labelled ${code(`${Keys.orphanedFrom}=${action.set}`)}; \`claimstep status\` lists them with the command a person runs to delete them.` : ""}`,
      ]
    : [
        `**Merging** this pull request changes ${code(path)}: the StatefulSet's \`spec.volumeClaimTemplates\` carry the desired templates (${TEMPLATE_FIELDS.join(", ")}; nothing else) and the annotation \`${Keys.templates}\` is removed; comments and every other field stay as they are. Merging approves the re-create: claimstep records the new manifest in ConfigMap ${code(`${action.namespace}/${recordName(action.set)}`)}, deletes the StatefulSet with \`propagationPolicy: Orphan\`, creates it from the record, and removes the record once the new set has adopted its pods. **The pods and the claims are meant to stay**: no pod is restarted, no claim or volume is deleted; the record holds their uids, and claimstep removes it only after finding the same pods and claims (same uids) under the new set, else it stops (\`Blocked/RecreateReplaced\`) and keeps the record.`,
      ];
  return [
    `claimstep proposes re-creating StatefulSet ${set} with the claim templates of revision ${code(action.revision)}. ${
      reshaped
        ? "The set gains or loses a claim template, and the API server refuses any edit of `spec.volumeClaimTemplates`"
        : "Every claim of the set is at that revision; only the set's `spec.volumeClaimTemplates` still hold the old values, and the API server refuses any edit of them"
    }, so the set has to be deleted and created again.`,
    "",
    ...what,
    "",
    ...table,
    ...pod,
    "",
    `**Argo CD / Flux.** After the re-create the live StatefulSet equals this manifest, and your GitOps tool finds it in sync. Until then a sync of the set fails, because the API server refuses to edit \`volumeClaimTemplates\` ("updates to statefulset spec for fields other than … are forbidden"): that is expected and harmless. Wait for claimstep — the merge steps the set at once through the webhook, and the re-create takes a few steps. Do not force the sync (Argo CD \`Replace=true\`/\`Force=true\`, Flux \`spec.force: true\`): that deletes the set without orphaning its pods and bypasses claimstep's recovery record.`,
    "",
    `**Closing** it without merging leaves the set as it is and pauses its re-create (Blocked, reason ChangeRejected) until this pull request is reopened or the desired templates change (a new revision).`,
    "",
    statusLine(decision),
    "",
    "<sub>Opened by claimstep. The branch name encodes the set and the revision; do not rename it.</sub>",
    "",
  ].join("\n");
}

// Autogrow's proposal (RaiseTemplate in GitOps mode): one pull request per set and revision grown from.

/** The growths as one line, e.g. `data 10Gi → 13Gi, wal 1Gi → 2Gi`. */
export const growthSummary = (grown: readonly Growth[]): string =>
  grown.map((g) => `${g.template} ${g.from} → ${g.to}`).join(", ");

export function raiseTitle(action: RaiseTemplate, grown: readonly Growth[]): string {
  return `claimstep: autogrow StatefulSet ${action.namespace}/${action.set} — ${growthSummary(grown)}`;
}

export function raiseCommitMessage(action: RaiseTemplate, grown: readonly Growth[], decision: Decision): string {
  return [
    `claimstep: autogrow ${action.set} — ${growthSummary(grown)}`,
    "",
    `StatefulSet ${action.namespace}/${action.set}, grown from revision ${action.fromRevision}: ${decision.message}.`,
    `${Keys.templates} carries the raised size; ${Keys.autogrownFrom}: ${action.fromRevision}.`,
  ].join("\n");
}

/** The Markdown body: the usage that caused it, the sizes before → after, what merging does, what closing does. */
export function raiseBody(
  action: RaiseTemplate,
  grown: readonly Growth[],
  decision: Decision,
  path: string,
  policy: string | undefined,
): string {
  const set = code(`${action.namespace}/${action.set}`);
  return [
    `claimstep's autogrow proposes growing the claims of StatefulSet ${set}${policy ? ` (${code(`${Keys.autogrow}: ${policy}`)})` : ""}:`,
    "",
    `> ${cell(decision.message)}`,
    "",
    `| template | storage now (revision ${code(action.fromRevision)}) | after |`,
    "|---|---|---|",
    ...grown.map((g) => `| ${cell(g.template)} | ${cell(g.from)} | ${cell(g.to)} |`),
    "",
    `**Merging** this pull request changes ${code(path)}: the annotation \`${Keys.templates}\` carries the raised size, and ${code(`${Keys.autogrownFrom}: ${action.fromRevision}`)} records the revision grown from (one growth per revision); \`spec.volumeClaimTemplates\`, comments and every other field stay as they are. Your GitOps controller (Argo CD, Flux) applies the annotation, and the merge steps the set at once through the webhook. Then **every ordinal grows through claimstep's rollout, one at a time** — in pull-request mode one pull request per claim, as for any change of the desired templates — so the replicas stay alike and a scale-up (or a re-create) gets the new size.`,
    "",
    `While this pull request is open, a later step that finds a claim fuller still updates it (the branch is one per revision grown from) instead of opening another.`,
    "",
    `**Closing** it without merging blocks autogrow of ${set} (Blocked, reason ChangeRejected) for as long as a claim stays over the threshold, until a person acts: reopen this pull request, raise the desired templates in ${code(path)} yourself (a new revision), or change or remove \`${Keys.autogrow}\`.`,
    "",
    statusLine(decision),
    "",
    "<sub>Opened by claimstep. The branch name encodes the set and the revision grown from; do not rename it.</sub>",
    "",
  ].join("\n");
}
