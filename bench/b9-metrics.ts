// B9 (issue 25): what the Node server's metrics cost. GET /metrics with 1,000 sets' series (target
// under 50 ms), and B1–B3 side by side with the recorder on and off in one run (target: the
// difference within noise). B4 is the Worker, which carries no recorder: its bundle is compared in
// docs/benchmarks.md. `npm run bench -- --only b9`.
import { request } from "node:http";
import { loadavg } from "node:os";
import { PromRecorder } from "../adapters/metrics-node/registry.js";
import { planStep } from "../core/plan/plan.js";
import { observeSet, outcomeLabel, type SetObservation } from "../core/view/recorder.js";
import { instrumentFetch } from "../functions/metrics.js";
import { recordedStep } from "../functions/recorded-step.js";
import { startServer } from "../functions/server.js";
import { runStep } from "../functions/step.js";
import { B3_TRIGGERS, type RolloutCase, runRollout } from "./b3-rollout.js";
import {
  DIRECT_WRITER,
  GENERATED_AT,
  generateCluster,
  NAMESPACE,
  parseResponses,
  type RolloutStage,
  responsesOf,
  SET_NAME,
} from "./generate.js";
import { compare, median, percentile, ratio } from "./harness.js";
import { directAdapters, simWith, withMsw } from "./sim-set.js";

/** /metrics must answer within this for 1,000 sets (issue 25). */
export const METRICS_TARGET_MS = 50;
export const METRICS_SETS = 1000;
const TOKEN = "bench-metrics-token-0123456789";

export interface B9Result {
  scrape: {
    sets: number;
    series: number;
    bytes: number;
    medianMs: number;
    p90Ms: number;
    maxMs: number;
    buildMedianMs: number;
    loadAverage: number;
    samples: number;
    target: number;
  };
  /** B1: planStep vs planStep + observeSet + the recorder's step, per size: on/off of the median wall times. */
  b1: { replicas: number; off: number; on: number; ratio: number; cpuRatio: number }[];
  /** B2: the real step over the simulated cluster (msw), recorder and request hook on vs off. */
  b2: { replicas: number; stage: RolloutStage; offMs: number; onMs: number; ratio: number; samples: number }[];
  /** B3: a whole rollout's wall time (virtual time must be equal). */
  b3: {
    replicas: number;
    trigger: string;
    offMs: number;
    onMs: number;
    ratio: number;
    rolloutRatioOff: number;
    rolloutRatioOn: number;
    runs: number;
  }[];
}

/** A set's gauges as a 3-replica, 2-template set in the middle of its rollout shows them. */
function observation(i: number): SetObservation {
  const claims = ["data", "logs"].flatMap((t) => [0, 1, 2].map((o) => `${t}-set-${i}-${o}`));
  return {
    phase: i % 5 === 0 ? "Progressing" : "Complete",
    reason: i % 5 === 0 ? "ClaimUpdated" : "Converged",
    counts: { updated: 1, inFlight: 1, pending: 1, blocked: 0 },
    sinceMs: Date.now() - i * 1000,
    strategy: "InPlace",
    autogrow: i % 2 === 0,
    ...(i % 2 === 0 ? { thresholdRatio: 0.8 } : {}),
    templates: [
      { template: "data", desiredBytes: 20 * 2 ** 30, requestedBytes: 10 * 2 ** 30 },
      { template: "logs", desiredBytes: 2 ** 30, requestedBytes: 2 ** 30 },
    ],
    claims,
  };
}

export async function benchScrape(log: (line: string) => void, samples: number): Promise<B9Result["scrape"]> {
  const recorder = new PromRecorder();
  for (let i = 0; i < METRICS_SETS; i++) {
    const ref = { namespace: `ns-${i % 20}`, name: `set-${i}` };
    recorder.step({
      ref,
      outcome: "waiting",
      seconds: 0.004 + (i % 7) * 0.01,
      set: observation(i),
      grew: i % 50 === 0,
    });
  }
  // A sweep's worth of API requests of every kind a step makes.
  for (const [verb, resource] of [
    ["get", "statefulsets"],
    ["list", "pods"],
    ["list", "persistentvolumeclaims"],
    ["list", "storageclasses"],
    ["patch", "persistentvolumeclaims"],
    ["patch", "statefulsets"],
    ["create", "events"],
    ["patch", "events"],
    ["list", "statefulsets"],
  ] as const) {
    for (const code of [200, 409, 429, 500, "error"] as const)
      recorder.apiRequest({ verb, resource, code, seconds: 0.01 });
  }
  // What Prometheus sees: GET /metrics on the Node server (startServer, the bearer check), over a socket, to the last byte.
  const server = await startServer({
    app: { fetch: instrumentFetch(() => new Response("not here", { status: 404 }), recorder, [TOKEN]) },
    port: 0,
    hostname: "127.0.0.1",
    log: () => {},
  });
  const scrape = () =>
    new Promise<string>((resolve, reject) => {
      const req = request(
        { host: "127.0.0.1", port: server.port, path: "/metrics", headers: { authorization: `Bearer ${TOKEN}` } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (d: Buffer) => chunks.push(d));
          res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
        },
      );
      req.on("error", reject);
      req.end();
    });
  let text = "";
  const times: number[] = [];
  const build: number[] = [];
  try {
    for (let i = 0; i < 5; i++) text = await scrape(); // warm-up
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now();
      text = await scrape();
      times.push(performance.now() - t0);
      // The exposition alone, in the process (no HTTP).
      const t1 = performance.now();
      await recorder.metrics();
      build.push(performance.now() - t1);
    }
  } finally {
    await server.close();
  }
  const series = text.split("\n").filter((l) => l && !l.startsWith("#")).length;
  const result = {
    sets: METRICS_SETS,
    series,
    bytes: Buffer.byteLength(text),
    medianMs: median(times),
    p90Ms: percentile(times, 90),
    maxMs: Math.max(...times),
    buildMedianMs: median(build),
    loadAverage: loadavg()[0]!,
    samples,
    target: METRICS_TARGET_MS,
  };
  log(
    `  B9 GET /metrics over HTTP, ${METRICS_SETS} sets (${series} series, ${(result.bytes / 1024).toFixed(0)} KiB): median ${result.medianMs.toFixed(1)} ms, p90 ${result.p90Ms.toFixed(1)} ms; the exposition alone ${result.buildMedianMs.toFixed(1)} ms (load average ${result.loadAverage.toFixed(1)})`,
  );
  return result;
}

export function benchB1(log: (line: string) => void, sizes: readonly number[]): B9Result["b1"] {
  const rows: B9Result["b1"] = [];
  for (const replicas of sizes) {
    const snapshot = parseResponses(responsesOf(generateCluster({ replicas, stage: "mid" })));
    const recorder = new PromRecorder({ defaultMetrics: false });
    const ref = { namespace: NAMESPACE, name: SET_NAME };
    const stats = compare(
      {
        off: () => planStep(snapshot, GENERATED_AT, DIRECT_WRITER),
        on: () => {
          const decision = planStep(snapshot, GENERATED_AT, DIRECT_WRITER);
          recorder.step({
            ref,
            outcome: outcomeLabel("none", decision.phase),
            seconds: 0.001,
            set: observeSet(snapshot, decision),
            grew: false,
          });
          return decision;
        },
      },
      replicas >= 1000
        ? { warmupMs: 500, samples: 21, minSampleMs: 20, maxTotalMs: 10_000 }
        : { warmupMs: 300, samples: 51, minSampleMs: 10, maxTotalMs: 8000 },
    );
    const row = {
      replicas,
      off: stats.off.wall.median,
      on: stats.on.wall.median,
      ratio: ratio(stats.on.wall.median, stats.off.wall.median),
      cpuRatio: ratio(stats.on.cpu.median, stats.off.cpu.median),
    };
    log(
      `  B9/B1 ${replicas} replicas: planStep with the recorder / without ${row.ratio.toFixed(3)} (CPU ${row.cpuRatio.toFixed(3)})`,
    );
    rows.push(row);
  }
  return rows;
}

async function benchB2(log: (line: string) => void, rounds: number): Promise<B9Result["b2"]> {
  const rows: B9Result["b2"] = [];
  for (const stage of ["mid", "converged"] as const) {
    for (const replicas of [10, 1000]) {
      const fake = simWith({ replicas, stage });
      const recorder = new PromRecorder({ defaultMetrics: false });
      const off = directAdapters();
      const on = directAdapters(recorder.apiRequest);
      const ref = { namespace: NAMESPACE, name: SET_NAME };
      const now = new Date("2026-11-30T09:10:00Z");
      const times = { off: [] as number[], on: [] as number[] };
      await withMsw(fake, async () => {
        // The first step acts (mid): the rest repeat the same waiting step, as a sweep does.
        await runStep({ reader: off.reader, writers: off.writers, ref, now });
        const cases = {
          off: () => runStep({ reader: off.reader, writers: off.writers, ref, now }),
          on: () => recordedStep({ reader: on.reader, writers: on.writers, ref, now, recorder }),
        };
        for (let i = 0; i < 3; i++) for (const c of Object.values(cases)) await c();
        for (let round = 0; round < rounds; round++) {
          for (const name of round % 2 ? (["on", "off"] as const) : (["off", "on"] as const)) {
            const t0 = performance.now();
            await cases[name]();
            times[name].push(performance.now() - t0);
          }
        }
      });
      const row = {
        replicas,
        stage,
        offMs: median(times.off),
        onMs: median(times.on),
        ratio: ratio(median(times.on), median(times.off)),
        samples: rounds,
      };
      log(
        `  B9/B2 ${replicas} replicas, ${stage}: step with the recorder / without ${row.ratio.toFixed(3)} (${row.onMs.toFixed(2)} / ${row.offMs.toFixed(2)} ms)`,
      );
      rows.push(row);
    }
  }
  return rows;
}

async function benchB3(log: (line: string) => void, runs: number): Promise<B9Result["b3"]> {
  const relay = B3_TRIGGERS[0]!;
  const base: RolloutCase = { replicas: 50, maxUnavailable: 1, resizeLatencyMs: 60_000, trigger: relay };
  const times = { off: [] as number[], on: [] as number[] };
  let rolloutOff = 0;
  let rolloutOn = 0;
  for (let i = 0; i < runs; i++) {
    for (const name of i % 2 ? (["on", "off"] as const) : (["off", "on"] as const)) {
      const t0 = performance.now();
      const r = await runRollout(
        name === "on" ? { ...base, recorder: new PromRecorder({ defaultMetrics: false }) } : base,
      );
      times[name].push(performance.now() - t0);
      if (name === "on") rolloutOn = r.ratio;
      else rolloutOff = r.ratio;
    }
  }
  const row = {
    replicas: base.replicas,
    trigger: relay.label,
    offMs: median(times.off),
    onMs: median(times.on),
    ratio: ratio(median(times.on), median(times.off)),
    rolloutRatioOff: rolloutOff,
    rolloutRatioOn: rolloutOn,
    runs,
  };
  log(
    `  B9/B3 ${base.replicas} replicas, ${relay.label}: rollout wall time with the recorder / without ${row.ratio.toFixed(3)}; rollout / ideal ${rolloutOn.toFixed(3)} vs ${rolloutOff.toFixed(3)}`,
  );
  return [row];
}

export async function runB9(log: (line: string) => void = () => {}, quick = false): Promise<B9Result> {
  const scrape = await benchScrape(log, quick ? 10 : 50);
  const b1 = benchB1(log, quick ? [10, 100] : [10, 100, 1000]);
  const b2 = await benchB2(log, quick ? 10 : 40);
  const b3 = await benchB3(log, quick ? 2 : 6);
  return { scrape, b1, b2, b3 };
}
