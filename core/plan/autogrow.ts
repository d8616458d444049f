// Autogrow (docs/design.md "Autogrow"): when a claim in scope fills up, raise its template's desired
// size in the desired-templates annotation, and let the normal rollout grow every ordinal, one at
// a time, so replicas stay alike and a scale-up or a re-create matches. Pure: the usage comes in
// the snapshot (one instant Prometheus query per step, read by an adapter).

import type { ClaimTemplate, StatefulSet } from "../kube/k8s.js";
import { formatBytes, humanBytes, toBytes } from "../kube/quantity.js";
import { claimName } from "../kube/statefulset.js";
import { blocked, concluded, Messages } from "../messages.js";
import type { WalkConclusion } from "../parts.js";
import { type AutogrowPolicy, basisPoints } from "../policy/annotations.js";
import { autogrownFromOf } from "../policy/records.js";
import type { UsageReading, VolumeUsage } from "../types.js";

const GI = 1024n ** 3n;

/** How many revisions `claimstep.io/autogrown-from` remembers. */
const GROWN_FROM_KEPT = 16;

/** The revisions autogrow grew from (`claimstep.io/autogrown-from`: comma-separated, oldest first). */
export const grownFrom = (value: string | undefined): string[] =>
  (value ?? "")
    .split(",")
    .map((r) => r.trim())
    .filter(Boolean);

/** The revision of the latest growth. */
export const lastGrownFrom = (value: string | undefined): string | undefined => grownFrom(value).at(-1);

/** The record after a growth from `revision`. */
export const grownFromAfter = (value: string | undefined, revision: string): string =>
  [...grownFrom(value).filter((r) => r !== revision), revision].slice(-GROWN_FROM_KEPT).join(",");

/** The growth one step makes: a template's new desired size, and the usage that caused it. */
export interface Growth {
  template: string;
  from: string;
  to: string;
  /** The claim over the threshold, and its usage. */
  claim: string;
  usedBytes: bigint;
  capacityBytes: bigint;
}

export type AutogrowDecision =
  | { kind: "grow"; growth: Growth }
  | { kind: "limit"; template: string; claim: string; usage: string; max: string }
  | { kind: "none" };

const roundUpGi = (b: bigint): bigint => ((b + GI - 1n) / GI) * GI;

/** `43%` of a claim, for messages. */
export const percentOf = (used: bigint, capacity: bigint): string =>
  capacity > 0n ? `${(Number((used * 10_000n) / capacity) / 100).toFixed(1)}%` : "?";

/**
 * The growth this usage calls for: the fullest claim at or above the threshold (of the named
 * template, when the policy names one), its template raised to min(max, roundUpGi(max(capacity ×
 * (1 + increase) or capacity + increase, desired))); at max already → the limit.
 */
export function autogrowDecision(
  policy: AutogrowPolicy,
  templates: readonly ClaimTemplate[],
  setName: string,
  ordinals: readonly number[],
  volumes: readonly VolumeUsage[],
): AutogrowDecision {
  const threshold = basisPoints(policy.threshold);
  const byClaim = new Map(volumes.map((v) => [v.claim, v]));
  let worst: { t: ClaimTemplate; v: VolumeUsage; ratio: bigint } | undefined;
  for (const t of templates) {
    if (policy.template !== undefined && t.metadata.name !== policy.template) continue;
    for (const o of ordinals) {
      const v = byClaim.get(claimName(t.metadata.name, setName, o));
      if (!v || v.capacityBytes <= 0n) continue;
      const ratio = (v.usedBytes * 10_000n) / v.capacityBytes;
      if (ratio >= threshold && (!worst || ratio > worst.ratio)) worst = { t, v, ratio };
    }
  }
  if (!worst) return { kind: "none" };
  const { t, v } = worst;
  const desired = toBytes(t.spec.resources!.requests!.storage!);
  const max = toBytes(policy.max);
  const grown = policy.increase.endsWith("%")
    ? v.capacityBytes + (v.capacityBytes * basisPoints(policy.increase)) / 10_000n
    : v.capacityBytes + toBytes(policy.increase);
  const target = roundUpGi(grown > desired ? grown : desired);
  const to = target < max ? target : max;
  const usage = `${humanBytes(v.usedBytes)} of ${humanBytes(v.capacityBytes)} (${percentOf(v.usedBytes, v.capacityBytes)})`;
  if (desired >= max) return { kind: "limit", template: t.metadata.name, claim: v.claim, usage, max: policy.max };
  // The desired size already grows it (a rollout in progress): nothing to raise.
  if (to <= desired) return { kind: "none" };
  return {
    kind: "grow",
    growth: {
      template: t.metadata.name,
      from: String(t.spec.resources!.requests!.storage!),
      to: formatBytes(to),
      claim: v.claim,
      usedBytes: v.usedBytes,
      capacityBytes: v.capacityBytes,
    },
  };
}

/**
 * The autogrow step of a set whose rollout is complete at `revision`: a raise of the fullest
 * claim's template, Blocked at max, or nothing (no policy, no claim over the threshold, already
 * grown from this revision, or no usage to read — then `note` says why, and the step goes on).
 */
export function autogrowStep(a: {
  set: StatefulSet;
  policy: AutogrowPolicy;
  reading: UsageReading | undefined;
  templates: readonly ClaimTemplate[];
  ordinals: readonly number[];
  revision: string;
  revisionOf: (templates: readonly ClaimTemplate[]) => string;
}): { conclusion: WalkConclusion } | { note: string } | undefined {
  const { set, policy, reading, templates } = a;
  // One growth per revision, also for a revision a person brings back later.
  const record = autogrownFromOf(set);
  if (grownFrom(record).includes(a.revision)) return undefined;
  if (!reading)
    return {
      note: Messages.autogrowNoMetrics("no metrics were read (no Prometheus configured: CLAIMSTEP_PROMETHEUS_URL)"),
    };
  if (!reading.ok) return { note: Messages.autogrowNoMetrics(reading.message) };
  const decided = autogrowDecision(policy, templates, set.metadata.name, a.ordinals, reading.volumes);
  if (decided.kind === "none") return undefined;
  if (decided.kind === "limit") {
    return {
      conclusion: blocked(
        "AutogrowLimit",
        Messages.autogrowLimit(decided.claim, decided.usage, decided.template, decided.max),
      ),
    };
  }
  const g = decided.growth;
  const raised = templates.map((t) =>
    t.metadata.name === g.template
      ? {
          ...t,
          spec: {
            ...t.spec,
            resources: { ...t.spec.resources, requests: { ...t.spec.resources?.requests, storage: g.to } },
          },
        }
      : t,
  );
  const usage = `${humanBytes(g.usedBytes)} of ${humanBytes(g.capacityBytes)} (${percentOf(g.usedBytes, g.capacityBytes)})`;
  const message = Messages.autogrowTriggered(g.claim, usage, g.template, g.from, g.to);
  return {
    conclusion: {
      ...concluded("AutogrowTriggered", message),
      action: {
        type: "RaiseTemplate",
        namespace: set.metadata.namespace ?? "default",
        set: set.metadata.name,
        template: g.template,
        from: g.from,
        to: g.to,
        templates: raised,
        fromRevision: a.revision,
        toRevision: a.revisionOf(raised),
        autogrownFrom: grownFromAfter(record, a.revision),
        ...(set.metadata.resourceVersion !== undefined ? { resourceVersion: set.metadata.resourceVersion } : {}),
      },
    },
  };
}
