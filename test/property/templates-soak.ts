// Soak of adding and removing claim templates (issue 27, I14): many more random cases than
// `npm test` runs (test/property/templates.test.ts), with tallies at the end.
//   npm run soak:templates                                 300 cases
//   CLAIMSTEP_TEMPLATES_SOAK_RUNS=3000 npm run soak:templates
//   CLAIMSTEP_TEMPLATES_SOAK_SEED=7 npm run soak:templates   (replay)
//   CLAIMSTEP_TEMPLATES_SLOW=1 npm run soak:templates        (with slow steps on old snapshots)
// Exit code 1 when any invariant is violated; each violation is printed with its case (replay one
// with `runTemplatesCase(case, { trace: console.log })`).
import { inline, soakCases, tally } from "../support/soak.js";
import { runTemplatesCase, templatesCase, templatesCaseWithSlowSteps } from "./templates.js";

const runs = Number(process.env.CLAIMSTEP_TEMPLATES_SOAK_RUNS ?? 300);
const seed = Number(process.env.CLAIMSTEP_TEMPLATES_SOAK_SEED ?? 20261202);
const arbitrary = process.env.CLAIMSTEP_TEMPLATES_SLOW === "1" ? templatesCaseWithSlowSteps : templatesCase;

const counts = {
  cases: 0,
  ops: 0,
  completed: 0,
  invocations: 0,
  races: 0,
  kills: 0,
  lost: 0,
  faults: 0,
  conflicts: 0,
  evictions: 0,
  budgetRefusals: 0,
  labels: 0,
  slowSteps: 0,
  edits: 0,
  violations: 0,
};
const byInvariant = new Map<string, number>();
const byOps = new Map<string, number>();
const started = Date.now();

await soakCases(arbitrary, { runs, seed, started, violations: () => counts.violations }, async (c, { batchSeed }) => {
  const r = await runTemplatesCase(c);
  counts.cases++;
  counts.ops += c.ops.length;
  tally(byOps, c.ops.join(" then "));
  for (const k of [
    "completed",
    "invocations",
    "races",
    "kills",
    "lost",
    "faults",
    "conflicts",
    "evictions",
    "budgetRefusals",
    "labels",
    "slowSteps",
    "edits",
  ] as const)
    counts[k] += r[k];
  if (r.violations.length) {
    counts.violations += r.violations.length;
    for (const v of r.violations) tally(byInvariant, v.invariant);
    console.log(
      `VIOLATION in case ${counts.cases} (batch seed ${batchSeed}):\n  ${r.violations.map((v) => `op ${v.op} #${v.at} ${v.invariant}: ${v.message}`).join("\n  ")}\n  case: ${JSON.stringify(c)}`,
    );
  }
});

console.log(`
claimstep claim-template soak on the simulated cluster (seed ${seed})
  cases                   ${counts.cases} (${inline(byOps)})
  ops Complete            ${counts.completed} of ${counts.ops}
  invocations             ${counts.invocations} (${counts.races} racing pairs on one snapshot, ${counts.slowSteps} slow steps on older ones)
  processes killed        ${counts.kills}; answers lost ${counts.lost}; API faults injected ${counts.faults}; conflicts injected ${counts.conflicts}
  the user's partition    set ${counts.edits} times mid-way
  evictions               ${counts.evictions} (${counts.budgetRefusals} refused by a PodDisruptionBudget); claims labelled or unlabelled ${counts.labels}
  invariant violations    ${counts.violations}${byInvariant.size ? ` (${inline(byInvariant)})` : ""}
  time                    ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exitCode = counts.violations ? 1 : 0;
