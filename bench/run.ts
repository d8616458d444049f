// `npm run bench`: every benchmark of issue 7 in one run, a Markdown report on stdout and the
// figures in bench/results.json. Progress goes to stderr.
//   npm run bench                  # everything (a few minutes on 2 cores)
//   npm run bench -- --quick       # small sizes only, for trying changes (not for results.json)
//   npm run bench -- --only b3     # B3 alone (with B3-claims-first): its figures and verdicts
//                                  # replace those in bench/results.json, the rest is kept
//   npm run bench -- --only b7     # B7 (fleet mode, 1,000 sets × 10 clusters) and B3-alarms, likewise
//   npm run bench -- --only b9     # B9: GET /metrics at 1,000 sets, and B1–B3 with the metrics recorder on vs off
//   npm run bench -- --only b10    # B10: how long the set is missing during the re-create, per shipped mode
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { B1_SIZES, runB1 } from "./b1-planner.js";
import { runB2 } from "./b2-requests.js";
import { B3_TRIGGERS, runB3 } from "./b3-rollout.js";
import { runB4 } from "./b4-worker.js";
import { runB5 } from "./b5-memory.js";
import { runB6 } from "./b6-cold-start.js";
import { judgeB7, runB3Alarms, runB7 } from "./b7-fleet.js";
import { runB8 } from "./b8-admission.js";
import { runB9 } from "./b9-metrics.js";
import { b10Report, runB10 } from "./b10-recreate-window.js";
import { machine } from "./machine.js";
import { profileWorkload, type Workload } from "./profile.js";
import { type Results, report } from "./report.js";
import { judgeB1, judgeB2, judgeB3, judgeB3ClaimsFirst, judgeB4, judgeB8, type Verdict } from "./targets.js";

const quick = process.argv.includes("--quick");
const onlyAt = process.argv.indexOf("--only");
const only = onlyAt >= 0 ? process.argv[onlyAt + 1] : undefined;
if (only !== undefined && !["b3", "b7", "b8", "b9", "b10"].includes(only))
  throw new Error(`--only: only b3, b7, b8, b9 and b10 can run alone (got ${only})`);
const log = (line: string) => process.stderr.write(`${line}\n`);
const started = performance.now();
const loadAtStart = loadavg()[0]!;
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
const resultsFile = fileURLToPath(new URL("./results.json", import.meta.url));

/** The shipped relay (its debounce), and the event-driven model of the issue (a step at every change). */
const judgeAllB3 = (b3: Awaited<ReturnType<typeof runB3>>): Verdict[] =>
  [B3_TRIGGERS[0]!, B3_TRIGGERS[1]!].flatMap((t) => [...judgeB3(b3, t.label), ...judgeB3ClaimsFirst(b3, t.label)]);

if (only === "b7") {
  // B7 (fleet mode: 1,000 sets across 10 clusters in one cron period) with B3-alarms.
  log("B7 fleet mode and B3-alarms");
  const b7 = await runB7(log);
  const b3Alarms = await runB3Alarms(log);
  const verdicts = judgeB7(b7, b3Alarms);
  const previous = JSON.parse(readFileSync(resultsFile, "utf8")) as Results;
  const results = {
    ...previous,
    b7: { ...b7, b3Alarms },
    verdicts: [
      ...previous.verdicts.filter((v) => !v.id.startsWith("B7") && !v.id.startsWith("B3-alarms")),
      ...verdicts,
    ],
    reruns: [
      ...(previous.reruns ?? []).filter((x) => x.benchmark !== "b7"),
      {
        benchmark: "b7",
        at: new Date().toISOString(),
        durationSeconds: (performance.now() - started) / 1000,
        loadAverage: { atStart: loadAtStart, atEnd: loadavg()[0]! },
      },
    ],
  } as Results;
  process.stdout.write(
    `${verdicts.map((v) => `- ${v.met ? "met" : "MISSED"} — ${v.id}: ${v.figure} (target ${v.target})`).join("\n")}\n`,
  );
  if (quick) log(`quick run: bench/results.json left as it was (${elapsed()})`);
  else {
    writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
    log(`wrote the B7 figures into ${resultsFile} (${elapsed()})`);
  }
  process.exit(0);
}

if (only === "b9") {
  // B9 (issue 25): the Node server's metrics: GET /metrics at 1,000 sets, and B1–B3 with the recorder on vs off, side by side.
  log("B9 metrics: /metrics at 1,000 sets, B1–B3 with the recorder on vs off");
  const b9 = await runB9(log, quick);
  const previous = JSON.parse(readFileSync(resultsFile, "utf8")) as Results;
  const verdicts: Verdict[] = [
    {
      id: "B9 GET /metrics at 1,000 sets (median)",
      target: `< ${b9.scrape.target} ms`,
      figure: `${b9.scrape.medianMs.toFixed(1)} ms over HTTP (p90 ${b9.scrape.p90Ms.toFixed(1)} ms; the exposition alone ${b9.scrape.buildMedianMs.toFixed(1)} ms; ${b9.scrape.series} series, ${b9.scrape.bytes} bytes; load average ${b9.scrape.loadAverage.toFixed(1)})`,
      met: b9.scrape.medianMs < b9.scrape.target,
    },
  ];
  const figures = [
    ...b9.b1.map(
      (r) =>
        `- B1 ${r.replicas} replicas, planStep + recorder / planStep: ${r.ratio.toFixed(3)} (CPU ${r.cpuRatio.toFixed(3)})`,
    ),
    ...b9.b2.map(
      (r) =>
        `- B2 ${r.replicas} replicas, ${r.stage}: step with recorder / without: ${r.ratio.toFixed(3)} (${r.onMs.toFixed(2)} / ${r.offMs.toFixed(2)} ms, ${r.samples} each)`,
    ),
    ...b9.b3.map(
      (r) =>
        `- B3 ${r.replicas} replicas, ${r.trigger}: rollout wall time with recorder / without: ${r.ratio.toFixed(3)} (${r.onMs.toFixed(0)} / ${r.offMs.toFixed(0)} ms); rollout / ideal ${r.rolloutRatioOn.toFixed(3)} vs ${r.rolloutRatioOff.toFixed(3)}`,
    ),
  ];
  process.stdout.write(
    `${verdicts.map((v) => `- ${v.met ? "met" : "MISSED"} — ${v.id}: ${v.figure} (target ${v.target})`).join("\n")}\n${figures.join("\n")}\n`,
  );
  const results = {
    ...previous,
    b9,
    verdicts: [...previous.verdicts.filter((v) => !v.id.startsWith("B9")), ...verdicts],
    reruns: [
      ...(previous.reruns ?? []).filter((x) => x.benchmark !== "b9"),
      {
        benchmark: "b9",
        at: new Date().toISOString(),
        durationSeconds: (performance.now() - started) / 1000,
        loadAverage: { atStart: loadAtStart, atEnd: loadavg()[0]! },
      },
    ],
  } as Results;
  if (quick) log(`quick run: bench/results.json left as it was (${elapsed()})`);
  else {
    writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
    log(`wrote the B9 figures into ${resultsFile} (${elapsed()})`);
  }
  process.exit(0);
}

if (only === "b10") {
  log("B10 the re-create's window per mode, alone");
  const b10 = await runB10(log);
  process.stdout.write(`${b10Report(b10)}\n`);
  const previous = JSON.parse(readFileSync(resultsFile, "utf8")) as Results;
  const results: Results = {
    ...previous,
    b10,
    reruns: [
      ...(previous.reruns ?? []).filter((x) => x.benchmark !== "b10"),
      {
        benchmark: "b10",
        at: new Date().toISOString(),
        durationSeconds: (performance.now() - started) / 1000,
        loadAverage: { atStart: loadAtStart, atEnd: loadavg()[0]! },
      },
    ],
  };
  writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote the B10 figures into ${resultsFile} (${elapsed()})`);
  process.exit(0);
}

if (only === "b8") {
  log("B8 admission webhook, alone");
  const b8 = await runB8(log, quick ? 1000 : 10_000);
  const previous = JSON.parse(readFileSync(resultsFile, "utf8")) as Results;
  const verdicts = judgeB8(b8);
  const results: Results = {
    ...previous,
    b8,
    verdicts: [...previous.verdicts.filter((v) => !v.id.startsWith("B8")), ...verdicts],
    reruns: [
      ...(previous.reruns ?? []).filter((x) => x.benchmark !== "b8"),
      {
        benchmark: "b8",
        at: new Date().toISOString(),
        durationSeconds: (performance.now() - started) / 1000,
        loadAverage: { atStart: loadAtStart, atEnd: loadavg()[0]! },
      },
    ],
  };
  process.stdout.write(`${report(results)}\n`);
  if (quick) log(`quick run: bench/results.json left as it was (${elapsed()})`);
  else {
    writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
    log(`wrote the B8 figures into ${resultsFile} (${elapsed()})`);
  }
  process.exit(0);
}

if (only === "b3") {
  log("B3 rollout time, alone");
  const b3 = await runB3(log);
  const previous = JSON.parse(readFileSync(resultsFile, "utf8")) as Results;
  // The new B3 verdicts where the old ones were.
  const at = previous.verdicts.findIndex((v) => v.id.startsWith("B3"));
  const others = previous.verdicts.filter((v) => !v.id.startsWith("B3"));
  const before = at < 0 ? others.length : previous.verdicts.slice(0, at).filter((v) => !v.id.startsWith("B3")).length;
  const results: Results = {
    ...previous,
    b3,
    verdicts: [...others.slice(0, before), ...judgeAllB3(b3), ...others.slice(before)],
    reruns: [
      ...(previous.reruns ?? []).filter((x) => x.benchmark !== "b3"),
      {
        benchmark: "b3",
        at: new Date().toISOString(),
        durationSeconds: (performance.now() - started) / 1000,
        loadAverage: { atStart: loadAtStart, atEnd: loadavg()[0]! },
      },
    ],
  };
  process.stdout.write(`${report(results)}\n`);
  if (quick) log(`quick run: bench/results.json left as it was (${elapsed()})`);
  else {
    writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
    log(`wrote the B3 figures into ${resultsFile} (${elapsed()})`);
  }
  process.exit(0);
}

log(`B1 planner vs JSON.parse${quick ? " (quick)" : ""}`);
const b1 = runB1(quick ? [10, 100, 1000] : B1_SIZES, log);
log(`B2 requests per step (${elapsed()})`);
const b2 = await runB2(log);
log(`B3 rollout time (${elapsed()})`);
const b3 = await runB3(log);
log(`B4 Worker (${elapsed()})`);
const b4 = await runB4(log);
log(`B5 memory (${elapsed()})`);
// 10,000 replicas is the figure asked for; 1,000 shows how the heap scales.
const b5 = [await runB5(1000), ...(quick ? [] : [await runB5(10_000)])];
log(`B6 CLI cold start (${elapsed()})`);
const b6 = runB6(log, quick ? 10 : 30);
log(`B8 admission webhook (${elapsed()})`);
const b8 = await runB8(log, quick ? 1000 : 10_000);

log(`B10 the re-create's window per mode (${elapsed()})`);
const b10 = await runB10(log);

const judged = {
  b1: judgeB1(b1),
  b2: judgeB2(b2),
  b3: judgeAllB3(b3),
  b4: judgeB4(b4),
  b8: judgeB8(b8),
};

// Profile what missed a timing target, to name the function where the time goes.
const toProfile = new Set<Workload>();
if (judged.b1.some((v) => !v.met && !v.id.includes("validation"))) {
  const worst = b1.rows.reduce((a, r) => (r.planRatio > a.planRatio ? r : a));
  toProfile.add(worst.replicas <= 10 ? "plan-10" : "plan");
}
if (judged.b1.some((v) => !v.met && v.id.includes("validation"))) toProfile.add("validate");
if (judged.b4.some((v) => !v.met)) toProfile.add("scheduled");
const profiles: Results["profiles"] = {};
for (const w of toProfile) {
  log(`profiling ${w} (${elapsed()})`);
  profiles[w] = await profileWorkload(w);
}

const results: Results = {
  generatedAt: new Date().toISOString(),
  durationSeconds: (performance.now() - started) / 1000,
  machine: machine(),
  loadAverage: { atStart: loadAtStart, atEnd: loadavg()[0]! },
  b1,
  b2,
  b3,
  b4,
  b5,
  b6,
  b8,
  b10,
  verdicts: [...judged.b1, ...judged.b2, ...judged.b3, ...judged.b4, ...judged.b8],
  profiles,
};

process.stdout.write(`${report(results)}\n\n${b10Report(b10)}\n`);
if (quick) {
  log(`quick run: bench/results.json left as it was (${elapsed()})`);
} else {
  writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote ${resultsFile} (${elapsed()})`);
}
