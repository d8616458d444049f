// The soaks' case loop (test/property/soak.ts, recreate-soak.ts): many random cases in batches,
// each batch sampled with a seed of its own (seed + batch number, so a case is replayed from the
// batch seed printed with it), a progress line after each batch, and tallies printed as rows.
import fc from "fast-check";
import type { RecreateResult } from "../property/recreate.js";

/** Cases per batch: a progress line after each. */
export const SOAK_BATCH = 250;

export interface SoakCase {
  /** 1-based, across batches. */
  number: number;
  /** The seed its batch was sampled with (what a replay needs). */
  batchSeed: number;
}

/**
 * Runs `runs` cases of `arbitrary`, one at a time, in batches of SOAK_BATCH; after each batch
 * prints `… n/runs cases, v violation(s), t s` with `violations()` as counted by the caller.
 */
export async function soakCases<T>(
  arbitrary: fc.Arbitrary<T>,
  o: { runs: number; seed: number; started: number; violations: () => number },
  each: (c: T, at: SoakCase) => Promise<void>,
): Promise<void> {
  let done = 0;
  for (let batch = 0; done < o.runs; batch++) {
    const cases = fc.sample(arbitrary, { numRuns: Math.min(SOAK_BATCH, o.runs - done), seed: o.seed + batch });
    for (const c of cases) {
      done++;
      await each(c, { number: done, batchSeed: o.seed + batch });
    }
    console.log(
      `… ${done}/${o.runs} cases, ${o.violations()} violation(s), ${((Date.now() - o.started) / 1000).toFixed(0)} s`,
    );
  }
}

/** Adds `n` to `key`'s count. */
export const tally = (counts: Map<string, number>, key: string, n = 1): void => {
  counts.set(key, (counts.get(key) ?? 0) + n);
};

/** `a: 1, b: 2`: the counts in the order they were first seen. */
export const inline = (counts: Map<string, number>): string => [...counts].map(([k, v]) => `${k}: ${v}`).join(", ");

/** One indented row per count, `    <count>  <key>`. */
export const rows = (entries: Iterable<[string, number]>): string =>
  [...entries].map(([k, v]) => `    ${String(v).padStart(6)}  ${k}`).join("\n");

/** The counts as rows, the largest first. */
export const rowsByCount = (counts: Map<string, number>): string => rows([...counts].sort((a, b) => b[1] - a[1]));

/** What the re-create cases did, summed over cases (test/property/recreate.test.ts and recreate-soak.ts). */
export interface RecreateTotals {
  invocations: number;
  kills: number;
  lost: number;
  races: number;
  faults: number;
  edits: number;
  /** Invocations that found the set absent (F3 pending). */
  absent: number;
  /** Invocations that found the old set still orphaning. */
  deleting: number;
}

export const recreateTotals = (): RecreateTotals => ({
  invocations: 0,
  kills: 0,
  lost: 0,
  races: 0,
  faults: 0,
  edits: 0,
  absent: 0,
  deleting: 0,
});

/** Adds one re-create case's counts (runRecreateCase's result) to the totals. */
export function addRecreateCase(
  t: RecreateTotals,
  r: Pick<
    RecreateResult,
    "invocations" | "kills" | "lost" | "races" | "faults" | "edits" | "sawAbsent" | "sawDeleting"
  >,
): void {
  t.invocations += r.invocations;
  t.kills += r.kills;
  t.lost += r.lost;
  t.races += r.races;
  t.faults += r.faults;
  t.edits += r.edits;
  t.absent += r.sawAbsent;
  t.deleting += r.sawDeleting;
}
