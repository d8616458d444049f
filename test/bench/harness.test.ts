// The arithmetic and parsing the benchmark figures rest on: medians, percentiles, ratios, growth
// slopes, the GC-trace peak, source-map attribution, profile summaries, the verdicts. No timing
// is asserted.
import { describe, expect, it } from "vitest";
import type { B1Result, B1Row } from "../../bench/b1-planner.js";
import type { B2Result } from "../../bench/b2-requests.js";
import type { B3Result, RolloutResult } from "../../bench/b3-rollout.js";
import { gcEvents, peakBetween } from "../../bench/b5-memory.js";
import { type CpuProfile, groupOf, summarize } from "../../bench/cpuprofile.js";
import { compare, growthExponent, markdownTable, median, percentile, ratio, statsOf } from "../../bench/harness.js";
import { cpuModel } from "../../bench/machine.js";
import { bytesBySource, decodeVlq, packageOf } from "../../bench/sourcemap.js";
import { judgeB1, judgeB2, judgeB3, judgeB3ClaimsFirst, overallSlope } from "../../bench/targets.js";

describe("statistics", () => {
  it("median of odd and even counts, unsorted input left alone", () => {
    const xs = [3, 1, 2];
    expect(median(xs)).toBe(2);
    expect(xs).toEqual([3, 1, 2]);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow(/no values/);
  });
  it("percentile by nearest rank", () => {
    const xs = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1];
    expect(percentile(xs, 90)).toBe(9);
    expect(percentile(xs, 50)).toBe(5);
    expect(percentile(xs, 100)).toBe(10);
    expect(percentile(xs, 0)).toBe(1);
    expect(() => percentile(xs, 101)).toThrow(/0..100/);
  });
  it("ratio refuses a zero floor", () => {
    expect(ratio(1, 4)).toBe(0.25);
    expect(() => ratio(1, 0)).toThrow(/floor must be positive/);
  });
  it("overall slope weighs each span by its decades", () => {
    expect(
      overallSlope([
        { from: 10, to: 100, exponent: 1 },
        { from: 100, to: 1000, exponent: 2 },
      ]),
    ).toBeCloseTo(1.5, 10);
    expect(
      overallSlope([
        { from: 10, to: 100, exponent: 1 },
        { from: 100, to: 10_000, exponent: 2 },
      ]),
    ).toBeCloseTo(5 / 3, 10);
  });
  it("growth exponent: 1 is linear, 2 quadratic", () => {
    expect(growthExponent(10, 1, 100, 10)).toBeCloseTo(1, 10);
    expect(growthExponent(10, 1, 100, 100)).toBeCloseTo(2, 10);
    expect(growthExponent(100, 2, 1000, 2)).toBeCloseTo(0, 10);
    expect(() => growthExponent(100, 1, 10, 1)).toThrow();
  });
});

describe("compare", () => {
  it("samples every case the same number of times and reports per-operation figures", () => {
    const calls = { a: 0, b: 0 };
    const r = compare(
      { a: () => calls.a++, b: () => calls.b++ },
      { warmupMs: 1, samples: 5, minSamples: 5, minSampleMs: 0.01, maxTotalMs: 10_000 },
    );
    for (const k of ["a", "b"] as const) {
      expect(r[k].wall.samples).toBe(5);
      expect(r[k].cpu.samples).toBe(5);
      expect(calls[k]).toBeGreaterThanOrEqual(5 * r[k].wall.batch);
      expect(r[k].wall.median).toBeGreaterThanOrEqual(0);
      expect(r[k].wall.p90).toBeGreaterThanOrEqual(r[k].wall.median);
      expect(r[k].wall.min).toBeLessThanOrEqual(r[k].wall.median);
    }
  });
});

describe("B5: peak heap from a --trace-gc output", () => {
  const trace = [
    "[1:0x1]       50 ms: Scavenge 3.9 (4.0) -> 3.7 (5.0) MB, 6.61 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure; ",
    "[1:0x1]      194 ms: Mark-Compact 32.9 (54.2) -> 23.8 (59.9) MB, 51.72 / 0.00 ms  (average mu = 1.000, current mu = 1.000) testing; GC in old space requested",
    "unrelated output",
    "[1:0x1]      200 ms: Scavenge 40.5 (60.0) -> 30.1 (60.0) MB, 2.0 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure; ",
    "[1:0x1]      210 ms: Scavenge 45.0 (60.0) -> 31.0 (60.0) MB, 2.0 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure; ",
    "[1:0x1]      230 ms: Mark-Compact 36.0 (60.0) -> 25.0 (59.9) MB, 51.72 / 0.00 ms  (average mu = 1.000, current mu = 1.000) testing; GC in old space requested",
  ].join("\n");
  it("reads every GC line and which were forced", () => {
    const events = gcEvents(trace);
    expect(events).toHaveLength(5);
    expect(events[1]).toEqual({ kind: "Mark-Compact", beforeMiB: 32.9, afterMiB: 23.8, forced: true });
    expect(events.filter((e) => e.forced)).toHaveLength(2);
  });
  it("the peak between two forced GCs is the largest heap any GC found", () => {
    expect(peakBetween(gcEvents(trace), 1, 2)).toEqual({ baseMiB: 23.8, peakMiB: 45.0, gcs: 2 });
    expect(() => peakBetween(gcEvents(trace), 2, 3)).toThrow(/not both in the trace/);
  });
});

describe("source maps", () => {
  it("decodes base64 VLQ", () => {
    expect(decodeVlq("AAAA")).toEqual([0, 0, 0, 0]);
    expect(decodeVlq("C")).toEqual([1]);
    expect(decodeVlq("D")).toEqual([-1]);
    expect(decodeVlq("gB")).toEqual([16]);
    expect(decodeVlq("2HF")).toEqual([123, -2]);
    expect(() => decodeVlq("g")).toThrow(/truncated/);
    expect(() => decodeVlq("A!")).toThrow(/invalid/);
  });
  it("attributes each generated byte to the source mapped before it", () => {
    // line 0: "abcdef" — a.js from column 0, b.js from column 4; line 1: "xy" from b.js
    const map = { sources: ["a.js", "b.js"], mappings: "AAAA,ICAC;AAAA" };
    const bytes = bytesBySource(map, "abcdef\nxy");
    expect(bytes.get("a.js")).toBe(4);
    expect(bytes.get("b.js")).toBe(3 + 2);
  });
  it("groups sources by package or repository directory", () => {
    expect(packageOf("/r/node_modules/zod/v4/core/x.js", "/r")).toBe("zod");
    expect(packageOf("/r/node_modules/@hono/node-server/dist/i.js", "/r")).toBe("@hono/node-server");
    expect(packageOf("/r/core/plan/plan.ts", "/r")).toBe("core/");
    expect(packageOf("/elsewhere/x.ts", "/r")).toBe("/elsewhere/x.ts");
  });
});

describe("CPU profile summaries", () => {
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: { functionName: "(root)", url: "", lineNumber: -1, columnNumber: -1 }, children: [2] },
      {
        id: 2,
        callFrame: { functionName: "planStep", url: "file:///r/core/plan/plan.ts", lineNumber: 0, columnNumber: 10 },
        children: [3],
      },
      {
        id: 3,
        callFrame: { functionName: "parse", url: "file:///r/node_modules/zod/x.js", lineNumber: 3, columnNumber: 0 },
      },
    ],
    startTime: 0,
    endTime: 10,
    samples: [2, 3, 3, 3, 1],
    timeDeltas: [1000, 1000, 1000, 1000, 0],
  };
  it("self time by function and by file", () => {
    const s = summarize(profile, (f) => ({
      function: f.functionName,
      file: f.url.replace("file:///r/", ""),
      line: f.lineNumber + 1,
    }));
    expect(s.totalMs).toBe(4);
    expect(s.functions[0]).toEqual({ name: "parse (node_modules/zod/x.js:4)", selfMs: 3, share: 0.75 });
    expect(s.files.map((f) => f.name)).toEqual(["zod", "core/plan/plan.ts"]);
  });
  it("groups node internals and dependencies", () => {
    expect(groupOf("node:internal/deps/undici/undici")).toBe("node:undici");
    expect(groupOf("node:internal/url")).toBe("node:internal");
    expect(groupOf("/x/node_modules/@mswjs/interceptors/lib/a.mjs")).toBe("@mswjs/interceptors");
  });
});

describe("verdicts", () => {
  const b1 = (planRatios: number[], planSlopes: number[], parseSlopes: number[]): B1Result => {
    const m = { wall: statsOf([1], 1), cpu: statsOf([1], 1) };
    const rows: B1Row[] = planRatios.map((planRatio, i) => ({
      replicas: 10 ** (i + 1),
      claims: 3 * 10 ** (i + 1),
      responseBytes: 1,
      parse: m,
      plan: m,
      validate: m,
      validateAndPlan: m,
      planRatio,
      readSideRatio: 0.9,
      cpuRatios: { plan: planRatio, readSide: 0.9 },
      decision: "",
    }));
    const growth = (slopes: number[]) =>
      slopes.map((exponent, i) => ({ from: 10 ** (i + 1), to: 10 ** (i + 2), exponent }));
    return {
      rows,
      planGrowth: growth(planSlopes),
      parseGrowth: growth(parseSlopes),
      targets: { planRatio: 0.5, readSideRatio: 1 },
    };
  };
  it("B1: every size must be within the ratio; growth is judged against JSON.parse's own", () => {
    const [ratioOk, growthOk, readOk] = judgeB1(b1([0.4, 0.45, 0.4], [1.4, 1.0], [1.2, 1.2]));
    expect([ratioOk!.met, growthOk!.met, readOk!.met]).toEqual([true, true, true]);
    const [ratioMiss, growthMiss] = judgeB1(b1([0.6, 0.45, 0.4], [1.5, 1.3], [1.2, 1.2]));
    expect(ratioMiss!.met).toBe(false);
    expect(ratioMiss!.figure).toMatch(/worst 0.600 at 10 replicas/);
    expect(growthMiss!.met).toBe(false);
  });
  const b2 = (reads: number[], constant: boolean): B2Result => ({
    rows: reads.map((n, i) => ({
      replicas: 10 ** (i + 1),
      claims: 3 * 10 ** (i + 1),
      stage: "start",
      decision: "",
      reads: n,
      writes: 2,
      eventWrites: 2,
      byRequest: {},
    })),
    constant,
    target: { reads: 4, writes: 2 },
  });
  it("B2 is met only when constant and within the counts", () => {
    expect(judgeB2(b2([4, 4], true))[0]!.met).toBe(true);
    expect(judgeB2(b2([4, 5], false))[0]!.met).toBe(false);
  });
  it("B3 judges the relay rows only", () => {
    const row = (trigger: string, ratio: number): RolloutResult => ({
      trigger,
      replicas: 50,
      maxUnavailable: 1,
      idealMs: 1,
      totalMs: ratio,
      ratio,
      steps: 1,
      claimWrites: 1,
    });
    const b3: B3Result = {
      resizeLatencyMs: 60_000,
      measuredLatencyMs: 60_000,
      rows: [row("relay", 1.01), row("cron", 5)],
      target: { relayRatio: 1.05 },
    };
    expect(judgeB3(b3, "relay")[0]!.met).toBe(true);
    expect(() => judgeB3(b3, "nope")).toThrow(/no rows/);
  });
  it("B3-claims-first: every k of the trigger within the target; absent from older runs", () => {
    const row = (trigger: string, maxUnavailable: number, ratio: number): RolloutResult => ({
      mode: "claims-first",
      trigger,
      replicas: 50,
      maxUnavailable,
      idealMs: 1,
      totalMs: ratio,
      ratio,
      steps: 1,
      claimWrites: 1,
      partitionPatches: 1,
    });
    const b3 = (ratios: number[]): B3Result => ({
      resizeLatencyMs: 60_000,
      measuredLatencyMs: 60_000,
      rows: [],
      claimsFirst: {
        podStartMs: 30_000,
        claimLatencyMs: 60_000,
        podLatencyMs: 30_000,
        rows: [...ratios.map((r, i) => row("relay", i + 1, r)), row("cron", 1, 1.5)],
      },
      target: { relayRatio: 1.05 },
    });
    const [met] = judgeB3ClaimsFirst(b3([1.01, 1.02]), "relay");
    expect(met).toMatchObject({ met: true, figure: "N=50, L_claim 60 s, L_pod 30 s; k=1: 1.010, k=2: 1.020" });
    expect(judgeB3ClaimsFirst(b3([1.01, 1.06]), "relay")[0]!.met).toBe(false);
    expect(() => judgeB3ClaimsFirst(b3([1]), "nope")).toThrow(/no rows/);
    expect(
      judgeB3ClaimsFirst({ resizeLatencyMs: 1, measuredLatencyMs: 1, rows: [], target: { relayRatio: 1.05 } }, "relay"),
    ).toEqual([]);
  });
});

describe("report helpers", () => {
  it("markdown tables", () => {
    expect(markdownTable(["a", "b"], [["1", "2"]])).toBe("| a | b |\n| --- | --- |\n| 1 | 2 |");
  });
  it("the CPU model from /proc/cpuinfo", () => {
    expect(cpuModel("processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t: x\n")).toBe("AMD EPYC 7B13");
  });
});
