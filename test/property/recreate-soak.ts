// Soak of the re-create's crash safety (issue 14): many more random re-creates than `npm test`
// runs, with tallies at the end: where processes died and that the next invocations finished.
//   npm run soak:recreate                              3,000 cases
//   CLAIMSTEP_RECREATE_SOAK_RUNS=20000 npm run soak:recreate
//   CLAIMSTEP_RECREATE_SOAK_SEED=7 npm run soak:recreate   (replay)
//   CLAIMSTEP_RECREATE_SLOW=1 npm run soak:recreate        (with slow steps on old snapshots: finds the KNOWN BUG of recreate.ts)
// Exit code 1 when any invariant is violated; each violation is printed with its case (replay one
// with `runRecreateCase(case, { trace: console.log })`).
import { addRecreateCase, inline, recreateTotals, rows, rowsByCount, soakCases, tally } from "../support/soak.js";
import { recreateCase, recreateCaseWithSlowSteps, runRecreateCase } from "./recreate.js";

const runs = Number(process.env.CLAIMSTEP_RECREATE_SOAK_RUNS ?? 3_000);
const seed = Number(process.env.CLAIMSTEP_RECREATE_SOAK_SEED ?? 20261130);
const arbitrary = process.env.CLAIMSTEP_RECREATE_SLOW === "1" ? recreateCaseWithSlowSteps : recreateCase;

const counts = { cases: 0, slowSteps: 0, finishedDuringChaos: 0, violations: 0 };
const totals = recreateTotals();
const byInvariant = new Map<string, number>();
const killPoints = new Map<string, number>();
const started = Date.now();

await soakCases(arbitrary, { runs, seed, started, violations: () => counts.violations }, async (c, { batchSeed }) => {
  const r = await runRecreateCase(c);
  counts.cases++;
  addRecreateCase(totals, r);
  counts.slowSteps += r.slowSteps;
  if (r.finishedInChaos) counts.finishedDuringChaos++;
  for (const k of r.killPoints) tally(killPoints, k);
  if (r.violations.length) {
    counts.violations += r.violations.length;
    for (const v of r.violations) tally(byInvariant, v.invariant);
    console.log(
      `VIOLATION in case ${counts.cases} (batch seed ${batchSeed}):\n  ${r.violations.map((v) => `#${v.at} ${v.invariant}: ${v.message}`).join("\n  ")}\n  case: ${JSON.stringify(c)}`,
    );
  }
});

// Kill points at the re-create's own requests, one row each; the rest (reads, status, events) summed.
const writes = /POST configmaps|DELETE statefulsets|POST statefulsets|DELETE configmaps/;
const atWrites = [...killPoints].filter(([k]) => writes.test(k)).sort((a, b) => a[0].localeCompare(b[0]));
const elsewhere = new Map<string, number>();
for (const [k, v] of killPoints) {
  if (writes.test(k)) continue;
  const mode = k.includes("answer lost")
    ? "answer lost"
    : k.includes("killed after")
      ? "killed after"
      : "killed before";
  const what = /(GET|LIST) /.test(k)
    ? "a read"
    : /PATCH statefulsets/.test(k)
      ? "the status patch"
      : /events/.test(k)
        ? "an event"
        : "another request";
  const key = `${mode} ${what}`;
  tally(elsewhere, key, v);
}
console.log(`
claimstep re-create soak on the simulated cluster (seed ${seed})
  cases                   ${counts.cases} (every one finished its re-create once the faults stopped, or is a violation)
  invocations             ${totals.invocations} (${totals.races} racing pairs on one snapshot, ${counts.slowSteps} slow steps on older ones)
  processes killed        ${totals.kills}; answers lost ${totals.lost}; API faults injected ${totals.faults}
  a person's edits        ${totals.edits}
  invocations that found  the set absent (F3 pending): ${totals.absent}; the old set still orphaning: ${totals.deleting}
  finished during chaos   ${counts.finishedDuringChaos}
  invariant violations    ${counts.violations}${byInvariant.size ? ` (${inline(byInvariant)})` : ""}
  time                    ${((Date.now() - started) / 1000).toFixed(1)} s
  where steps died or lost an answer (the action the step planned: the point); each case then finished:
${rows(atWrites)}
${rowsByCount(elsewhere)}`);
process.exitCode = counts.violations ? 1 : 0;
