// Crash safety of the re-create (issue 14, I12 and I1), as a property: random sets that completed
// a rollout with claimstep.io/finalize: Recreate, then invocations killed after any request, lost
// answers, racing invocations on one snapshot, API faults, a person's scale-up or annotation, the
// garbage collector still orphaning; the invariants of test/property/recreate.ts after every
// invocation and every advance of the clock, and the re-create finished once the faults stop.
// CLAIMSTEP_RECREATE_RUNS sets the number of cases, CLAIMSTEP_RECREATE_SEED the seed (fixed so CI
// is reproducible; `npm run soak:recreate` explores many more).
// Each planted bug (a wrapped re-create writer) must be caught, by the invariant named for it.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PLANTED_BUGS, recreateCase, runRecreateCase, type PlantedBug, type RecreateCase, type RecreateInvariant } from "./recreate.js";

const runs = Number(process.env.CLAIMSTEP_RECREATE_RUNS ?? 200);
const seed = Number(process.env.CLAIMSTEP_RECREATE_SEED ?? 20261130);

const describeCase = (c: RecreateCase, r: Awaited<ReturnType<typeof runRecreateCase>>) =>
  `case ${JSON.stringify(c)}\n${r.violations.map((v) => `  #${v.at} ${v.invariant}: ${v.message}`).join("\n")}`;

const quiet = (c: RecreateCase): RecreateCase => ({ ...c, killRate: 0, raceRate: 0, editRate: 0, faults: { tooManyRequests: 0, serverError: 0, timeout: 0 } });

describe("the re-create on the simulated cluster (property, I12)", () => {
  it(`keeps every pod and claim and finishes, on ${runs} random re-creates with kills, lost answers, races, faults and edits`, { timeout: 300_000 }, async () => {
    const totals = { invocations: 0, kills: 0, lost: 0, races: 0, faults: 0, edits: 0, absent: 0, deleting: 0 };
    await fc.assert(
      fc.asyncProperty(recreateCase, async (c) => {
        const r = await runRecreateCase(c);
        totals.invocations += r.invocations;
        totals.kills += r.kills;
        totals.lost += r.lost;
        totals.races += r.races;
        totals.faults += r.faults;
        totals.edits += r.edits;
        totals.absent += r.sawAbsent;
        totals.deleting += r.sawDeleting;
        if (r.violations.length) throw new Error(describeCase(c, r));
      }),
      { numRuns: runs, seed },
    );
    // The generator really reaches what it is there for.
    expect(totals.kills).toBeGreaterThan(runs / 4);
    expect(totals.lost).toBeGreaterThan(runs / 10);
    expect(totals.races).toBeGreaterThan(runs / 4);
    expect(totals.faults).toBeGreaterThan(0);
    expect(totals.edits).toBeGreaterThan(0);
    expect(totals.absent).toBeGreaterThan(runs / 2);
    expect(totals.deleting).toBeGreaterThan(0);
  });

  it("a crash before, a crash after, or a lost answer of each request of F1–F4 is finished by the next invocations", { timeout: 60_000 }, async () => {
    const quietCase = quiet(fc.sample(recreateCase, { numRuns: 1, seed: seed + 3 })[0]!);
    for (const request of ["POST configmaps", "DELETE statefulsets", "POST statefulsets", "DELETE configmaps"]) {
      for (const mode of ["die-before", "die-after", "lost"] as const) {
        const r = await runRecreateCase(quietCase, { killAt: { request, mode } });
        expect(r.violations, `${mode} ${request}: ${describeCase(quietCase, r)}`).toEqual([]);
        expect(r.killPoints.some((k) => k.includes(request)), `${mode} ${request}: the kill never happened (${r.killPoints.join("; ")})`).toBe(true);
        expect(r.writes).toEqual(["POST configmaps", "DELETE statefulsets/db", "POST statefulsets", "DELETE configmaps/claimstep-recreate-db"]);
      }
    }
  });

  // Bug → the invariant that must catch it (others may fire too, as its consequences).
  const CATCHES: Record<PlantedBug, RecreateInvariant[]> = {
    "delete-before-record": ["I12-record-first", "I12-set-gone"],
    "delete-without-preconditions": ["I12-delete-options"],
    "delete-without-orphan": ["I12-delete-options", "I12-pods"],
    "record-removed-before-create": ["I12-record-early", "I12-set-gone"],
    "changed-pod-template": ["I12-template", "I12-pods"],
  };
  const sample = fc.sample(recreateCase, { numRuns: 6, seed: seed + 14 });

  for (const bug of PLANTED_BUGS) {
    it(`catches the planted bug ${bug} (${CATCHES[bug].join(", ")})`, { timeout: 60_000 }, async () => {
      let caught = 0;
      for (const [i, c0] of sample.entries()) {
        // Half quiet (the bug alone), half with the chaos as generated.
        const c = i % 2 ? c0 : quiet(c0);
        const r = await runRecreateCase(c, { bug, keepGoing: true });
        const found = new Set(r.violations.map((v) => v.invariant));
        for (const invariant of CATCHES[bug]) expect(found, `${bug} not caught by ${invariant}: ${describeCase(c, r)}`).toContain(invariant);
        caught++;
      }
      expect(caught).toBe(sample.length);
    });
  }

  it("a claim is lost when the set goes in the Background with whenDeleted: Delete (I1)", { timeout: 60_000 }, async () => {
    const c = { ...fc.sample(recreateCase, { numRuns: 1, seed })[0]!, whenDeleted: "Delete" as const, killRate: 0, raceRate: 0, editRate: 0, faults: { tooManyRequests: 0, serverError: 0, timeout: 0 } };
    const r = await runRecreateCase(c, { bug: "delete-without-orphan", keepGoing: true });
    expect(r.violations.map((v) => v.invariant)).toContain("I1");
  });
});
