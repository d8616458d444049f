// Side-by-side timing: the cases of one comparison run interleaved (A B A B …) after a warm-up,
// so drift on a shared machine hits them alike; each sample times a batch long enough for the
// clock. Figures are medians (and p90) per operation, in milliseconds; what we report are the
// ratios between cases, since absolute times on shared machines are noise.
import { performance } from "node:perf_hooks";

export interface Stats {
  /** Per operation, milliseconds. */
  median: number;
  p90: number;
  min: number;
  /** Number of samples (each a batch of `batch` operations). */
  samples: number;
  batch: number;
}

/** The p-th percentile (0–100) by nearest rank of sorted values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new Error("percentile of no values");
  if (!(p >= 0 && p <= 100)) throw new Error(`percentile must be within 0..100, got ${p}`);
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

/** The median: the middle value, or the mean of the two middle values. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error("median of no values");
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function statsOf(perOpMs: readonly number[], batch: number): Stats {
  return {
    median: median(perOpMs),
    p90: percentile(perOpMs, 90),
    min: Math.min(...perOpMs),
    samples: perOpMs.length,
    batch,
  };
}

/** a / b, guarded: a ratio of a zero floor is a broken measurement, not infinity. */
export function ratio(a: number, b: number): number {
  if (!(b > 0)) throw new Error(`ratio: the floor must be positive, got ${b}`);
  return a / b;
}

/**
 * Growth exponent between two sizes: log(t2/t1) / log(n2/n1). 1 is linear, 2 quadratic.
 * (A tenfold size with a tenfold time gives exactly 1.)
 */
export function growthExponent(n1: number, t1: number, n2: number, t2: number): number {
  if (!(n1 > 0 && n2 > n1 && t1 > 0 && t2 > 0)) throw new Error("growthExponent needs 0 < n1 < n2 and positive times");
  return Math.log(t2 / t1) / Math.log(n2 / n1);
}

export interface CompareOptions {
  /** Warm-up time per case before sampling (JIT tiers up). */
  warmupMs: number;
  /** Samples per case, at least. */
  samples: number;
  /** Each sample runs the operation enough times to last at least this long. */
  minSampleMs: number;
  /** Stop sampling once this much time has been spent (after at least `minSamples`). */
  maxTotalMs: number;
  minSamples: number;
}

export const DEFAULT_COMPARE: CompareOptions = {
  warmupMs: 200,
  samples: 31,
  minSampleMs: 5,
  maxTotalMs: 8000,
  minSamples: 7,
};

/** Keeps results alive so the engine cannot drop the work that produced them. */
let sink: unknown;
export const keep = (v: unknown): void => {
  sink = v;
};
/** What keep() last kept: a read of the sink, so its writes are not dead stores. @public (nothing calls it) */
export const sunk = (): unknown => sink;

/**
 * Wall and CPU time of one batch, ms. No forced GC between batches: a full GC measurably slows
 * the planner's next calls, so each case runs in the steady state it reaches by itself.
 */
function runBatch(fn: () => unknown, n: number): { wall: number; cpu: number } {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) keep(fn());
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000 };
}

export interface Measured {
  /** Wall-clock time per operation. */
  wall: Stats;
  /** CPU time of the process per operation (user + system, V8's helper threads included). */
  cpu: Stats;
}

/** Time each case side by side; returns per-operation stats by case name. */
export function compare<K extends string>(
  cases: Record<K, () => unknown>,
  options: Partial<CompareOptions> = {},
): Record<K, Measured> {
  const o = { ...DEFAULT_COMPARE, ...options };
  const names = Object.keys(cases) as K[];
  const batch = {} as Record<K, number>;
  for (const name of names) {
    const fn = cases[name];
    // Warm-up, and calibrate the batch from the last warm-up runs.
    const until = performance.now() + o.warmupMs;
    let once = runBatch(fn, 1).wall;
    while (performance.now() < until) once = runBatch(fn, 1).wall;
    batch[name] = Math.max(1, Math.ceil(o.minSampleMs / Math.max(once, 1e-4)));
  }
  const wall = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<K, number[]>;
  const cpu = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<K, number[]>;
  const started = performance.now();
  for (let round = 0; round < o.samples; round++) {
    // Alternate the order each round so neither case always runs right after the other.
    const order = round % 2 ? [...names].reverse() : names;
    for (const name of order) {
      const t = runBatch(cases[name], batch[name]);
      wall[name].push(t.wall / batch[name]);
      cpu[name].push(t.cpu / batch[name]);
    }
    if (round + 1 >= o.minSamples && performance.now() - started > o.maxTotalMs) break;
  }
  return Object.fromEntries(
    names.map((n) => [n, { wall: statsOf(wall[n], batch[n]), cpu: statsOf(cpu[n], batch[n]) }]),
  ) as Record<K, Measured>;
}

/** A Markdown table from a header and rows. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** Milliseconds to a short human figure: 3 significant digits, µs below 1 ms. */
export function formatMs(ms: number): string {
  if (ms < 1) return `${(ms * 1000).toPrecision(3)} µs`;
  return `${ms.toPrecision(3)} ms`;
}

export const formatRatio = (r: number): string => r.toFixed(r < 10 ? 3 : 1);
