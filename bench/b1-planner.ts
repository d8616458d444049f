// B1: the planner against its floor. For each size, side by side: JSON.parse of the step's
// API responses (the least any step must do with its input), planStep on the parsed snapshot,
// and the whole read side after parsing (zod validation as the reader does it, then planStep).
import { planStep } from "../core/plan/plan.js";
import {
  DIRECT_WRITER,
  GENERATED_AT,
  generateCluster,
  parseResponses,
  responseBytes,
  responsesOf,
} from "./generate.js";
import { type CompareOptions, compare, growthExponent, type Measured, ratio } from "./harness.js";
import { parseRaw, validateResponses } from "./validate.js";

export const B1_SIZES = [10, 100, 1000, 10_000] as const;

export interface B1Row {
  replicas: number;
  claims: number;
  responseBytes: number;
  parse: Measured;
  plan: Measured;
  validate: Measured;
  validateAndPlan: Measured;
  /** planStep / JSON.parse, of the median wall times. Target ≤ 0.5. */
  planRatio: number;
  /** (validation + planStep) / JSON.parse, of the median wall times. Target ≤ 1.0. */
  readSideRatio: number;
  /** The same ratios of the median CPU times (a cross-check, less sensitive to other processes). */
  cpuRatios: { plan: number; readSide: number };
  /** What the decision was, to show the planner did the full walk. */
  decision: string;
}

export interface B1Result {
  rows: B1Row[];
  /** log-log slope of planStep time between consecutive sizes (1 = linear). */
  planGrowth: { from: number; to: number; exponent: number }[];
  parseGrowth: { from: number; to: number; exponent: number }[];
  targets: { planRatio: number; readSideRatio: number };
}

/** Fewer, longer samples at the largest sizes keep the whole run within its time budget. */
const optionsFor = (replicas: number): Partial<CompareOptions> =>
  replicas >= 10_000
    ? { warmupMs: 1500, samples: 9, minSamples: 7, minSampleMs: 1, maxTotalMs: 25_000 }
    : replicas >= 1000
      ? { warmupMs: 500, samples: 21, minSampleMs: 20, maxTotalMs: 10_000 }
      : { warmupMs: 300, samples: 51, minSampleMs: 10, maxTotalMs: 8000 };

export function benchPlannerAt(replicas: number, options: Partial<CompareOptions> = optionsFor(replicas)): B1Row {
  const cluster = generateCluster({ replicas, stage: "mid" });
  const responses = responsesOf(cluster);
  const snapshot = parseResponses(responses);
  const raw = parseRaw(responses);
  const decision = planStep(snapshot, GENERATED_AT, DIRECT_WRITER);
  const stats = compare(
    {
      parse: () => parseResponses(responses),
      plan: () => planStep(snapshot, GENERATED_AT, DIRECT_WRITER),
      validate: () => validateResponses(raw),
      validateAndPlan: () => planStep(validateResponses(raw), GENERATED_AT, DIRECT_WRITER),
    },
    options,
  );
  return {
    replicas,
    claims: cluster.claims.length,
    responseBytes: responseBytes(responses),
    ...stats,
    planRatio: ratio(stats.plan.wall.median, stats.parse.wall.median),
    readSideRatio: ratio(stats.validateAndPlan.wall.median, stats.parse.wall.median),
    cpuRatios: {
      plan: ratio(stats.plan.cpu.median, stats.parse.cpu.median),
      readSide: ratio(stats.validateAndPlan.cpu.median, stats.parse.cpu.median),
    },
    decision: `${decision.phase}/${decision.reason} at ordinal ${decision.status.ordinal ?? "-"}`,
  };
}

const growth = (rows: B1Row[], pick: (r: B1Row) => number) =>
  rows.slice(1).map((r, i) => ({
    from: rows[i]!.replicas,
    to: r.replicas,
    exponent: growthExponent(rows[i]!.replicas, pick(rows[i]!), r.replicas, pick(r)),
  }));

export function runB1(sizes: readonly number[] = B1_SIZES, log: (line: string) => void = () => {}): B1Result {
  const rows: B1Row[] = [];
  for (const n of sizes) {
    const row = benchPlannerAt(n);
    log(
      `  B1 ${n} replicas: plan/parse ${row.planRatio.toFixed(3)} (CPU ${row.cpuRatios.plan.toFixed(3)}), (validate+plan)/parse ${row.readSideRatio.toFixed(3)} (CPU ${row.cpuRatios.readSide.toFixed(3)})`,
    );
    rows.push(row);
  }
  return {
    rows,
    planGrowth: growth(rows, (r) => r.plan.wall.median),
    parseGrowth: growth(rows, (r) => r.parse.wall.median),
    targets: { planRatio: 0.5, readSideRatio: 1.0 },
  };
}
