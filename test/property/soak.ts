// Soak: many more random rollouts than `npm test` runs, with counts at the end.
//   npm run soak                      10,000 cases
//   CLAIMSTEP_SOAK_RUNS=50000 npm run soak
//   CLAIMSTEP_SOAK_SEED=7 npm run soak   (replay)
// Exit code 1 when any invariant is violated; each violation is printed with its scenario.
import fc from "fast-check";
import { runScenario } from "./harness.js";
import { anyScenario } from "./scenario.js";

const runs = Number(process.env.CLAIMSTEP_SOAK_RUNS ?? 10_000);
const seed = Number(process.env.CLAIMSTEP_SOAK_SEED ?? 20261130);
const BATCH = 250;

const counts = {
  cases: 0,
  clean: 0,
  hostile: 0,
  converged: 0,
  invocations: 0,
  races: 0,
  faultsInjected: 0,
  transientFailures: 0,
  violations: 0,
};
const byInvariant = new Map<string, number>();
const endings = new Map<string, number>();
let cleanSteps = 0;
let cleanOrdinals = 0;
let cleanClaims = 0;
const started = Date.now();

for (let batch = 0; counts.cases < runs; batch++) {
  const scenarios = fc.sample(anyScenario, { numRuns: Math.min(BATCH, runs - counts.cases), seed: seed + batch });
  for (const s of scenarios) {
    const r = await runScenario(s);
    counts.cases++;
    counts[s.kind]++;
    counts.invocations += r.steps;
    counts.races += r.races;
    counts.faultsInjected += r.faults;
    counts.transientFailures += r.transientFailures;
    const ending = `${s.kind} ${r.phase}/${r.reason}`;
    endings.set(ending, (endings.get(ending) ?? 0) + 1);
    if (r.converged) counts.converged++;
    if (s.kind === "clean" && r.converged && r.ordinals > 0) {
      cleanSteps += r.steps;
      cleanOrdinals += r.ordinals;
      cleanClaims += r.claims;
    }
    if (r.violations.length) {
      counts.violations += r.violations.length;
      for (const v of r.violations) byInvariant.set(v.invariant, (byInvariant.get(v.invariant) ?? 0) + 1);
      console.log(`VIOLATION in case ${counts.cases} (batch seed ${seed + batch}):\n  ${r.violations.map((v) => `${v.invariant}: ${v.message}`).join("\n  ")}\n  scenario: ${JSON.stringify(s)}`);
    }
  }
  console.log(`… ${counts.cases}/${runs} cases, ${counts.violations} violation(s), ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

const perOrdinal = cleanOrdinals ? cleanSteps / cleanOrdinals : 0;
const perClaim = cleanClaims ? cleanSteps / cleanClaims : 0;
console.log(`
claimstep soak on the simulated cluster (seed ${seed})
  cases                 ${counts.cases} (${counts.clean} clean, ${counts.hostile} hostile)
  converged             ${counts.converged} (every clean case must: ${counts.clean})
  invocations           ${counts.invocations} (${counts.races} racing pairs)
  API faults injected   ${counts.faultsInjected} (${counts.transientFailures} invocations saw a transient failure)
  invariant violations  ${counts.violations}${byInvariant.size ? ` (${[...byInvariant].map(([k, v]) => `${k}: ${v}`).join(", ")})` : ""}
  mean invocations per ordinal, clean rollouts: ${perOrdinal.toFixed(2)} (${perClaim.toFixed(2)} per claim)
  time                  ${((Date.now() - started) / 1000).toFixed(1)} s
  endings:
${[...endings].sort((a, b) => b[1] - a[1]).map(([k, v]) => `    ${String(v).padStart(6)}  ${k}`).join("\n")}`);
process.exitCode = counts.violations ? 1 : 0;
