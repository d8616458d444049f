// The Markdown report of a run: one table per benchmark, then the verdicts and, for missed
// targets, where the time goes.
import type { B1Result } from "./b1-planner.js";
import type { B2Result } from "./b2-requests.js";
import type { B3Result } from "./b3-rollout.js";
import type { B4Result } from "./b4-worker.js";
import type { B5Result } from "./b5-memory.js";
import type { B6Result } from "./b6-cold-start.js";
import type { B8Result } from "./b8-admission.js";
import type { ProfileSummary } from "./cpuprofile.js";
import { formatMs, formatRatio, markdownTable } from "./harness.js";
import type { Machine } from "./machine.js";
import type { Verdict } from "./targets.js";

export interface Results {
  generatedAt: string;
  durationSeconds: number;
  machine: Machine;
  /** 1-minute load average when the run started and ended: how busy the machine was. */
  loadAverage: { atStart: number; atEnd: number };
  b1: B1Result;
  b2: B2Result;
  b3: B3Result;
  b4: B4Result;
  /** By size, the largest (10,000 replicas) last. */
  b5: B5Result[];
  /** CLI cold start (absent from runs before it was measured). */
  b6?: B6Result;
  /** The admission webhook (absent from runs before it was measured). */
  b8?: B8Result;
  /** The re-create's window (orphan delete → create) per shipped mode, on the cluster's clock (issue 33). */
  b10?: B10Row[];
  verdicts: Verdict[];
  /** Benchmarks run again alone since (`npm run bench -- --only b3`), their figures replacing the run's. */
  reruns?: {
    benchmark: string;
    at: string;
    durationSeconds: number;
    loadAverage: { atStart: number; atEnd: number };
  }[];
  /** Self time by function and file of each workload profiled because a target was missed. */
  profiles: Record<string, ProfileSummary>;
}

import type { B10Row } from "./b10-recreate-window.js";

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const mib = (m: number) => `${m.toFixed(1)} MiB`;
const pct = (share: number) => `${(share * 100).toFixed(1)}%`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;

export function b1Table(b1: B1Result): string {
  return markdownTable(
    [
      "replicas",
      "claims",
      "responses",
      "JSON.parse",
      "planStep",
      "validation",
      "validation + planStep",
      "planStep / parse",
      "(validation + planStep) / parse",
      "same ratios in CPU time",
    ],
    b1.rows.map((r) => [
      String(r.replicas),
      String(r.claims),
      `${(r.responseBytes / 2 ** 20).toFixed(2)} MiB`,
      formatMs(r.parse.wall.median),
      formatMs(r.plan.wall.median),
      formatMs(r.validate.wall.median),
      formatMs(r.validateAndPlan.wall.median),
      `**${formatRatio(r.planRatio)}**`,
      `**${formatRatio(r.readSideRatio)}**`,
      `${formatRatio(r.cpuRatios.plan)} / ${formatRatio(r.cpuRatios.readSide)}`,
    ]),
  );
}

/** The claims-first rows, each beside the claims-only row of the same trigger and k when there is one. */
export function b3ClaimsFirstTable(b3: B3Result): string {
  const cf = b3.claimsFirst;
  if (!cf) return "";
  return markdownTable(
    [
      "trigger",
      "maxUnavailable",
      "ideal ⌈N/k⌉·(L_claim + L_pod)",
      "total",
      "ratio",
      "claims only: ratio",
      "steps",
      "claim writes",
      "partition patches",
    ],
    cf.rows.map((x) => {
      const claimsOnly = b3.rows.find((c) => c.trigger === x.trigger && c.maxUnavailable === x.maxUnavailable);
      return [
        x.trigger,
        String(x.maxUnavailable),
        seconds(x.idealMs),
        seconds(x.totalMs),
        `**${formatRatio(x.ratio)}**`,
        claimsOnly ? formatRatio(claimsOnly.ratio) : "—",
        String(x.steps),
        String(x.claimWrites),
        String(x.partitionPatches ?? "—"),
      ];
    }),
  );
}

export function report(r: Results): string {
  const out: string[] = [];
  out.push(`# claimstep benchmarks`, "");
  out.push(
    `${r.generatedAt} · ${r.machine.cpu} · nproc ${r.machine.nproc} · Node ${r.machine.node} · ${r.machine.platform} · run took ${r.durationSeconds.toFixed(0)} s · load average ${r.loadAverage.atStart.toFixed(1)} → ${r.loadAverage.atEnd.toFixed(1)}`,
    "",
  );

  for (const x of r.reruns ?? [])
    out.push(
      `${x.benchmark.toUpperCase()} run again alone: ${x.at} · took ${x.durationSeconds.toFixed(0)} s · load average ${x.loadAverage.atStart.toFixed(1)} → ${x.loadAverage.atEnd.toFixed(1)}`,
      "",
    );

  out.push(
    `## B1 planner cost vs JSON.parse (median wall time per call, interleaved; mid-rollout snapshot, 3 claim templates)`,
    "",
  );
  out.push(b1Table(r.b1), "");
  out.push(
    `planStep growth (log-log slope, 1 = linear): ${r.b1.planGrowth.map((g) => `${g.from}→${g.to} ${g.exponent.toFixed(2)}`).join(", ")}; JSON.parse: ${r.b1.parseGrowth.map((g) => `${g.from}→${g.to} ${g.exponent.toFixed(2)}`).join(", ")}`,
    "",
  );

  out.push(`## B2 API requests per step (msw fake API server, 3 claim templates)`, "");
  out.push(
    markdownTable(
      ["stage", "replicas", "claims", "decision", "reads", "writes", "event writes", "requests"],
      r.b2.rows.map((x) => [
        x.stage,
        String(x.replicas),
        String(x.claims),
        x.decision,
        String(x.reads),
        String(x.writes),
        String(x.eventWrites),
        Object.entries(x.byRequest)
          .map(([k, v]) => `${k} ×${v}`)
          .join(", "),
      ]),
    ),
    "",
  );

  out.push(
    `## B3 rollout time on the simulated cluster (${r.b3.rows[0]?.replicas ?? "?"} replicas, resize latency ${seconds(r.b3.resizeLatencyMs)}, measured ${seconds(r.b3.measuredLatencyMs)})`,
    "",
  );
  out.push(
    markdownTable(
      ["trigger", "maxUnavailable", "ideal ⌈N/k⌉·L", "total", "ratio", "steps", "claim writes"],
      r.b3.rows.map((x) => [
        x.trigger,
        String(x.maxUnavailable),
        seconds(x.idealMs),
        seconds(x.totalMs),
        `**${formatRatio(x.ratio)}**`,
        String(x.steps),
        String(x.claimWrites),
      ]),
    ),
    "",
  );

  const cf = r.b3.claimsFirst;
  if (cf) {
    out.push(
      `## B3-claims-first: claims, then the pod, per ordinal (ClaimsFirst with a pod template change, ${cf.rows[0]?.replicas ?? "?"} replicas, L_claim ${seconds(cf.claimLatencyMs)}, L_pod ${seconds(cf.podLatencyMs)} (pod start ${seconds(cf.podStartMs)}), measured on 1 replica)`,
      "",
    );
    out.push(b3ClaimsFirstTable(r.b3), "");
  }

  out.push(`## B4 Worker`, "");
  const b = r.b4.bundle;
  out.push(
    `Bundle (\`wrangler deploy --dry-run\`): ${kib(b.rawBytes)} raw, **${kib(b.gzipBytes)} gzip** (wrangler: ${b.wranglerSays}).`,
    "",
  );
  if (b.byPackage.length)
    out.push(
      `By package: ${b.byPackage
        .slice(0, 8)
        .map((p) => `${p.package} ${kib(p.bytes)} (${pct(p.share)})`)
        .join(", ")}.`,
      "",
    );
  out.push(
    `CPU of one \`scheduled\` invocation (Node's process.cpuUsage() for the Worker's code path, not workerd's accounting):`,
    "",
  );
  out.push(
    markdownTable(
      [
        "set",
        "requests",
        "response bytes",
        "replayed answers: median",
        "p90",
        "of which JSON.parse / validation / planStep / rest",
        "with msw in-process: median",
        "first invocation (cold, msw)",
      ],
      r.b4.cpu.map((c) => [
        `${r.b4.replicas} replicas × ${c.templates} template(s)`,
        String(c.invocation.requests),
        kib(c.responseBytes),
        `**${formatMs(c.replay.medianMs)}**`,
        formatMs(c.replay.p90Ms),
        [c.breakdown.parseMs, c.breakdown.validateMs, c.breakdown.planMs, c.breakdown.restMs]
          .map((ms) => formatMs(ms))
          .join(" / "),
        formatMs(c.msw.medianMs),
        formatMs(c.msw.firstMs),
      ]),
    ),
    "",
  );
  const first = r.b4.cpu[0];
  if (first) {
    const b = first.breakdown.bytes;
    out.push(
      `Response bytes of the ${first.templates}-template set: pods ${kib(b.pods)}, claims ${kib(b.claims)}, StatefulSet ${kib(b.statefulSet)}, StatefulSet list ${kib(b.statefulSetList)}, StorageClasses ${kib(b.storageClasses)}.`,
      "",
    );
  }

  out.push(`## B5 heap while planning (used heap, from V8's GC trace)`, "");
  out.push(
    markdownTable(
      [
        "replicas",
        "claims",
        "response text",
        "heap with snapshot",
        "peak while planning",
        "rise over snapshot",
        "peak over the whole step (parse + plan)",
        "held by the decision",
      ],
      r.b5.map((m) => [
        String(m.replicas),
        String(m.claims),
        mib(m.responseMiB),
        mib(m.snapshotHeapMiB),
        `**${mib(m.planPeakMiB)}**`,
        mib(m.planPeakRiseMiB),
        mib(m.stepPeakMiB),
        mib(m.decisionRetainedMiB),
      ]),
    ),
    "",
  );

  if (r.b6) {
    out.push(
      `## B6 CLI cold start (compiled dist/ as installed, a new node process each, wall time from spawn to exit, ${r.b6.rounds} rounds interleaved)`,
      "",
    );
    out.push(
      markdownTable(
        ["command", "median", "p90", "min", "median / node -e 0"],
        [r.b6.floor, ...r.b6.cases].map((c) => [
          `\`${c.label}\``,
          formatMs(c.wall.median),
          formatMs(c.wall.p90),
          formatMs(c.wall.min),
          c === r.b6!.floor ? "1 (floor)" : `**${c.ratio.toFixed(1)}**`,
        ]),
      ),
      "",
    );
  }

  if (r.b8) {
    out.push(
      `## B8 admission webhook (one review handled as the route does, side by side with JSON.parse of the same review)`,
      "",
    );
    out.push(
      markdownTable(
        ["review", "bytes", "handled (median)", "JSON.parse (median)", "handled / JSON.parse"],
        r.b8.cases.map((c) => [
          c.label,
          String(c.bytes),
          formatMs(c.handle.wall.median),
          formatMs(c.parse.wall.median),
          `**${c.ratio.toFixed(1)}**`,
        ]),
      ),
      "",
      `Through the Hono route on Node, ${r.b8.route.reviews.toLocaleString("en")} reviews one after another: p50 ${formatMs(r.b8.route.p50Ms)}, **p99 ${formatMs(r.b8.route.p99Ms)}**, max ${formatMs(r.b8.route.maxMs)} (the API server waits up to ${r.b8.route.timeoutSeconds} s).`,
      "",
    );
  }

  out.push(`## Targets`, "");
  out.push(
    markdownTable(
      ["", "target", "figure", "met"],
      r.verdicts.map((v) => [v.id, v.target, v.figure, v.met ? "yes" : "**no**"]),
    ),
    "",
  );

  for (const [workload, p] of Object.entries(r.profiles)) {
    out.push(`### Where the time goes: ${workload} (self time, ${p.totalMs.toFixed(0)} ms sampled)`, "");
    out.push(
      markdownTable(
        ["function", "self"],
        p.functions.slice(0, 10).map((f) => [f.name, pct(f.share)]),
      ),
      "",
    );
    out.push(
      `By file or package: ${p.files
        .slice(0, 8)
        .map((f) => `${f.name} ${pct(f.share)}`)
        .join(", ")}`,
      "",
    );
  }
  return out.join("\n");
}
