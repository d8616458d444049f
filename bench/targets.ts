// The targets of issue 7, judged from a run's figures: one verdict per target, with the figure
// that decides it.

import type { B1Result } from "./b1-planner.js";
import type { B2Result } from "./b2-requests.js";
import type { B3Result } from "./b3-rollout.js";
import type { B4Result } from "./b4-worker.js";
import type { B8Result } from "./b8-admission.js";

export interface Verdict {
  id: string;
  target: string;
  figure: string;
  met: boolean;
}

/**
 * "Linear" growth: over the whole range of sizes, the log-log slope of planStep's time exceeds
 * JSON.parse's by at most this. JSON.parse's work is linear in the bytes, yet its measured slope
 * is above 1 as the heap outgrows the caches and GC gets dearer: the planner is judged against
 * that same drift, over three decades so one noisy size cannot decide it.
 */
export const LINEAR_TOLERANCE = 0.1;

/** log-log slope between the smallest and the largest size. */
export function overallSlope(growth: readonly { from: number; to: number; exponent: number }[]): number {
  if (!growth.length) throw new Error("overallSlope: no sizes");
  const decades = growth.map((g) => Math.log(g.to / g.from));
  return growth.reduce((sum, g, i) => sum + g.exponent * decades[i]!, 0) / decades.reduce((a, b) => a + b, 0);
}

export function judgeB1(b1: B1Result): Verdict[] {
  const worst = (pick: (r: B1Result["rows"][number]) => number) =>
    b1.rows.reduce((a, r) => (pick(r) > pick(a) ? r : a));
  const plan = worst((r) => r.planRatio);
  const read = worst((r) => r.readSideRatio);
  const planSlope = overallSlope(b1.planGrowth);
  const parseSlope = overallSlope(b1.parseGrowth);
  return [
    {
      id: "B1 planStep / JSON.parse",
      target: `≤ ${b1.targets.planRatio} at every size`,
      figure: `worst ${plan.planRatio.toFixed(3)} at ${plan.replicas} replicas (${b1.rows.map((r) => r.planRatio.toFixed(2)).join(", ")})`,
      met: b1.rows.every((r) => r.planRatio <= b1.targets.planRatio),
    },
    {
      id: "B1 growth",
      target: `linear: log-log slope of planStep over all sizes ≤ JSON.parse's + ${LINEAR_TOLERANCE}`,
      figure: `${planSlope.toFixed(2)} vs ${parseSlope.toFixed(2)} (per tenfold size: ${b1.planGrowth.map((g, i) => `${g.exponent.toFixed(2)} vs ${b1.parseGrowth[i]!.exponent.toFixed(2)}`).join(", ")})`,
      met: planSlope <= parseSlope + LINEAR_TOLERANCE,
    },
    {
      id: "B1 (validation + planStep) / JSON.parse",
      target: `≤ ${b1.targets.readSideRatio} at every size`,
      figure: `worst ${read.readSideRatio.toFixed(3)} at ${read.replicas} replicas (${b1.rows.map((r) => r.readSideRatio.toFixed(2)).join(", ")})`,
      met: b1.rows.every((r) => r.readSideRatio <= b1.targets.readSideRatio),
    },
  ];
}

export function judgeB2(b2: B2Result): Verdict[] {
  const maxReads = Math.max(...b2.rows.map((r) => r.reads));
  const maxWrites = Math.max(...b2.rows.map((r) => r.writes));
  const worstReads = b2.rows.find((r) => r.reads === maxReads)!;
  return [
    {
      id: "B2 requests per step",
      target: `constant; ≤ ${b2.target.reads} reads, ≤ ${b2.target.writes} writes plus events`,
      figure: `${b2.constant ? "constant" : "not constant"}; at most ${maxReads} reads (${worstReads.replicas} replicas, ${worstReads.claims} claims), ${maxWrites} writes`,
      met: b2.constant && maxReads <= b2.target.reads && maxWrites <= b2.target.writes,
    },
  ];
}

export function judgeB3(b3: B3Result, relayLabel: string): Verdict[] {
  const relay = b3.rows.filter((r) => r.trigger === relayLabel);
  if (!relay.length) throw new Error(`judgeB3: no rows for trigger ${relayLabel}`);
  return [
    {
      id: `B3 rollout time, ${relayLabel}`,
      target: `≤ ${b3.target.relayRatio} × ⌈N/k⌉·L`,
      figure: relay.map((r) => `k=${r.maxUnavailable}: ${r.ratio.toFixed(3)}`).join(", "),
      met: relay.every((r) => r.ratio <= b3.target.relayRatio),
    },
  ];
}

/** B3-claims-first: the claims-first rows of a trigger against ⌈N/k⌉·(L_claim + L_pod); none in runs before it was measured. */
export function judgeB3ClaimsFirst(b3: B3Result, relayLabel: string): Verdict[] {
  const cf = b3.claimsFirst;
  if (!cf) return [];
  const relay = cf.rows.filter((r) => r.trigger === relayLabel);
  if (!relay.length) throw new Error(`judgeB3ClaimsFirst: no rows for trigger ${relayLabel}`);
  return [
    {
      id: `B3-claims-first rollout time, ${relayLabel}`,
      target: `≤ ${b3.target.relayRatio} × ⌈N/k⌉·(L_claim + L_pod)`,
      figure: `N=${relay[0]!.replicas}, L_claim ${cf.claimLatencyMs / 1000} s, L_pod ${cf.podLatencyMs / 1000} s; ${relay.map((r) => `k=${r.maxUnavailable}: ${r.ratio.toFixed(3)}`).join(", ")}`,
      met: relay.every((r) => r.ratio <= b3.target.relayRatio),
    },
  ];
}

export function judgeB4(b4: B4Result): Verdict[] {
  return b4.cpu.map((c) => ({
    id: `B4 scheduled CPU, ${b4.replicas} replicas × ${c.templates} template(s)`,
    target: `< ${b4.target.cpuMs} ms`,
    figure: `${c.replay.medianMs.toFixed(1)} ms median (p90 ${c.replay.p90Ms.toFixed(1)}) replayed; ${c.msw.medianMs.toFixed(1)} ms with msw in-process`,
    met: c.replay.medianMs < b4.target.cpuMs,
  }));
}

/** B8: the webhook's p99 far below the API server's timeout (the shipped 5 s): under 50 ms, 1/100 of it. */
export const B8_P99_TARGET_MS = 50;

export function judgeB8(b8: B8Result): Verdict[] {
  const worst = b8.cases.reduce((a, c) => (c.ratio > a.ratio ? c : a));
  return [
    {
      id: `B8 admission review p99 over ${b8.route.reviews.toLocaleString("en")} reviews (Hono route, Node)`,
      target: `< ${B8_P99_TARGET_MS} ms (timeout ${b8.route.timeoutSeconds} s)`,
      figure: `p99 ${b8.route.p99Ms.toFixed(3)} ms, p50 ${b8.route.p50Ms.toFixed(3)} ms, max ${b8.route.maxMs.toFixed(1)} ms; handled / JSON.parse ${b8.cases.map((c) => c.ratio.toFixed(1)).join(" / ")} (worst: ${worst.label})`,
      met: b8.route.p99Ms < B8_P99_TARGET_MS,
    },
  ];
}
