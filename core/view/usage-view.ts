// The status page's autogrow bars: each claim's usage against the set's threshold
// (claimstep.io/autogrow), from the one reading autogrow itself takes (MetricsReader.usage: one
// instant Prometheus query for the set's claims, never one per claim). Pure.

import type { StatefulSet } from "../kube/k8s.js";
import { humanBytes } from "../kube/quantity.js";
import { autogrowOf } from "../policy/annotations.js";
import type { UsageReading } from "../types.js";

export interface UsageBar {
  claim: string;
  /** Used / capacity, in percent, one decimal. */
  percent: number;
  used: string;
  capacity: string;
  /** At or above the threshold. */
  over: boolean;
}

export interface UsageView {
  /** The policy's threshold as written (`80%`). */
  threshold: string;
  thresholdPercent: number;
  /** The one template the policy watches, when it names one. */
  template?: string;
  /** The claims watched, in the per-ordinal table's order. */
  bars: UsageBar[];
  /** Claims watched with no reading (not mounted, not scraped). */
  unread: string[];
  /** Why there is no reading (or the policy is invalid). */
  error?: string;
}

/**
 * The bars of a set with `claimstep.io/autogrow` (undefined without it). `claims` are the set's
 * claims in scope, in the table's order; `reading` what the metrics reader answered (undefined: no
 * Prometheus configured).
 */
export function usageView(
  set: StatefulSet,
  claims: readonly { claim: string; template: string }[],
  reading: UsageReading | undefined,
): UsageView | undefined {
  const policy = autogrowOf(set);
  if (policy.ok && !policy.policy) return undefined;
  if (!policy.ok) return { threshold: "-", thresholdPercent: 0, bars: [], unread: [], error: policy.message };
  const p = policy.policy!;
  const thresholdPercent = Number.parseFloat(p.threshold);
  const base = {
    threshold: p.threshold,
    thresholdPercent,
    ...(p.template !== undefined ? { template: p.template } : {}),
  };
  const watched = claims.filter((c) => p.template === undefined || c.template === p.template).map((c) => c.claim);
  if (!reading)
    return {
      ...base,
      bars: [],
      unread: watched,
      error: "no usage read: no Prometheus configured (CLAIMSTEP_PROMETHEUS_URL), so autogrow cannot act either",
    };
  if (!reading.ok) return { ...base, bars: [], unread: watched, error: reading.message };
  const byClaim = new Map(reading.volumes.map((v) => [v.claim, v]));
  const bars: UsageBar[] = [];
  const unread: string[] = [];
  for (const claim of watched) {
    const v = byClaim.get(claim);
    if (!v || v.capacityBytes <= 0n) {
      unread.push(claim);
      continue;
    }
    const percent = Number((v.usedBytes * 1000n) / v.capacityBytes) / 10;
    bars.push({
      claim,
      percent,
      used: humanBytes(v.usedBytes),
      capacity: humanBytes(v.capacityBytes),
      over: percent >= thresholdPercent,
    });
  }
  return { ...base, bars, unread };
}
