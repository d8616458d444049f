// B3 on a small set: whole rollouts on the simulated cluster's virtual clock, claims only and
// claims first (ClaimsFirst with a pod template change). Virtual time is deterministic, so the
// figures are asserted; nothing here depends on the machine.
import { beforeAll, describe, expect, it } from "vitest";
import {
  B3_TRIGGERS,
  type B3Result,
  latenciesOf,
  runB3,
  type StepRecord,
  traceRollout,
} from "../../bench/b3-rollout.js";
import { b3ClaimsFirstTable } from "../../bench/report.js";
import { judgeB3, judgeB3ClaimsFirst } from "../../bench/targets.js";

const SHIPPED = B3_TRIGGERS[0]!;
const EVERY_CHANGE = B3_TRIGGERS[1]!;
const CRON_60 = B3_TRIGGERS[3]!;
const N = 4;

describe("B3 and B3-claims-first, 4 replicas", () => {
  let b3: B3Result;
  beforeAll(async () => {
    b3 = await runB3(() => {}, {
      replicas: N,
      claimsOnlyK: [1, 2],
      claimsFirstK: [1, 2],
      triggers: [SHIPPED, EVERY_CHANGE],
      claimsFirstTriggers: [SHIPPED, EVERY_CHANGE, CRON_60],
    });
  });

  it("calibrates L_claim and L_pod on one replica: the configured latencies", () => {
    expect(b3.measuredLatencyMs).toBe(60_000);
    expect(b3.claimsFirst).toMatchObject({ podStartMs: 30_000, claimLatencyMs: 60_000, podLatencyMs: 30_000 });
  });

  it("claims first: every claim written once, each ordinal's pod replaced through the partition", () => {
    const rows = b3.claimsFirst!.rows;
    expect(rows.map((r) => [r.trigger, r.maxUnavailable])).toEqual([
      [SHIPPED.label, 1],
      [EVERY_CHANGE.label, 1],
      [CRON_60.label, 1],
      [SHIPPED.label, 2],
      [EVERY_CHANGE.label, 2],
      [CRON_60.label, 2],
    ]);
    for (const r of rows) {
      expect(r.mode).toBe("claims-first");
      expect(r.claimWrites).toBe(N);
      expect(r.idealMs).toBe(Math.ceil(N / r.maxUnavailable) * 90_000);
      // At least one lowering per round of k ordinals, and the restore; at most one per ordinal and the restore.
      expect(r.partitionPatches).toBeGreaterThanOrEqual(Math.ceil(N / r.maxUnavailable) + 1);
      expect(r.partitionPatches).toBeLessThanOrEqual(N + 1);
    }
  });

  it("a step at every change reaches the ideal ⌈N/k⌉·(L_claim + L_pod) exactly; the shipped relay within the target", () => {
    const cf = b3.claimsFirst!.rows;
    for (const r of cf.filter((x) => x.trigger === EVERY_CHANGE.label)) expect(r.totalMs).toBe(r.idealMs);
    for (const r of cf.filter((x) => x.trigger === SHIPPED.label)) {
      expect(r.ratio).toBeGreaterThan(1);
      expect(r.ratio).toBeLessThanOrEqual(b3.target.relayRatio);
    }
    // Cron: one action per tick, and an ordinal takes two (its claim, then its pod's partition).
    for (const r of cf.filter((x) => x.trigger === CRON_60.label)) expect(r.ratio).toBeGreaterThan(1.2);
    for (const r of b3.rows.filter((x) => x.trigger === EVERY_CHANGE.label)) expect(r.ratio).toBe(1);
  });

  it("judged like the claims-only rows, side by side in the report", () => {
    const [claims] = judgeB3(b3, SHIPPED.label);
    const [first] = judgeB3ClaimsFirst(b3, SHIPPED.label);
    expect(claims!.met).toBe(true);
    expect(first).toMatchObject({
      id: `B3-claims-first rollout time, ${SHIPPED.label}`,
      target: "≤ 1.05 × ⌈N/k⌉·(L_claim + L_pod)",
      met: true,
    });
    expect(first!.figure).toMatch(/^N=4, L_claim 60 s, L_pod 30 s; k=1: 1\.\d{3}, k=2: 1\.\d{3}$/);
    const table = b3ClaimsFirstTable(b3).split("\n");
    expect(table).toHaveLength(2 + 6);
    // The shipped relay at k = 1: claims-first ratio, then the claims-only ratio of the same trigger and k.
    const claimsOnly = b3.rows.find((r) => r.trigger === SHIPPED.label && r.maxUnavailable === 1)!;
    expect(table[2]).toContain(`| ${claimsOnly.ratio.toFixed(3)} |`);
    expect(table[4]).toContain("| — |"); // cron 60 s: no claims-only row in this run
  });
});

describe("B3-claims-first timeline", () => {
  it("per ordinal, highest first: the claim, then the partition lowered to it, then the next ordinal's claim", async () => {
    const { timeline } = await traceRollout({
      replicas: 3,
      maxUnavailable: 1,
      resizeLatencyMs: 60_000,
      trigger: EVERY_CHANGE,
      claimsFirst: { podStartMs: 30_000 },
    });
    expect(timeline.map((s) => [s.atMs / 1000, s.reason])).toEqual([
      [0, "ClaimUpdated"],
      [60, "PartitionLowered"],
      [90, "ClaimUpdated"],
      [150, "PartitionLowered"],
      [180, "ClaimUpdated"],
      [240, "PartitionLowered"],
      [270, "PartitionRestored"],
      [270, "RolloutComplete"],
    ]);
  });

  it("the shipped relay adds its quiet period after the claim is ready and after the pod is", async () => {
    const { timeline } = await traceRollout({
      replicas: 2,
      maxUnavailable: 1,
      resizeLatencyMs: 60_000,
      trigger: SHIPPED,
      claimsFirst: { podStartMs: 30_000 },
    });
    expect(timeline.map((s) => [s.atMs / 1000, s.reason])).toEqual([
      [0.5, "ClaimUpdated"],
      [61, "PartitionLowered"],
      [91.5, "ClaimUpdated"],
      [152, "PartitionLowered"],
      [182.5, "PartitionRestored"],
      [183, "RolloutComplete"],
    ]);
  });

  it("latenciesOf reads L_claim and L_pod off a calibration timeline, and refuses one without them", () => {
    const t: StepRecord[] = [
      { atMs: 0, phase: "Progressing", reason: "ClaimUpdated", action: "PatchClaim" },
      { atMs: 60_000, phase: "Progressing", reason: "PartitionLowered", action: "PatchPartition" },
      { atMs: 95_000, phase: "Progressing", reason: "PartitionRestored", action: "PatchPartition" },
      { atMs: 95_000, phase: "Complete", reason: "RolloutComplete" },
    ];
    expect(latenciesOf(t)).toEqual({ claimMs: 60_000, podMs: 35_000 });
    expect(() => latenciesOf(t.slice(0, 1))).toThrow(/no PartitionLowered/);
    expect(() => latenciesOf(t.slice(1))).toThrow(/wrote no claim/);
  });
});
