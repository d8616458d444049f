// `claimstep serve` (serveFromEnv, as the CLI and the container run it) on the simulated cluster,
// scraped by a real Prometheus on 127.0.0.1 (Debian's; CI installs it) with the bearer token and
// honor_labels, as deploy/kubernetes/monitoring/servicemonitor.yaml scrapes it, beside the simulated
// kubelets. A rollout runs (scenario grow, one POST /v1/steps at a time, the simulated clock moved
// between them); Prometheus' HTTP API then shows the phase changes, the step counts and a histogram
// with samples; every Grafana panel's query runs on those series, and the alert rules load and
// evaluate without error. Skipped, saying so, without /usr/bin/prometheus.

import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SimCluster } from "../../adapters/sim/cluster.js";
import { SIM_SERVER } from "../../adapters/sim/http.js";
import { KUBELET_METRICS_PATH } from "../../adapters/sim/prometheus.js";
import { SET } from "../../adapters/sim/scenarios.js";
import { SCENARIOS } from "../../functions/scenarios.js";
import { serveFromEnv } from "../../functions/server.js";
import {
  grafanaQueries,
  hasPrometheus,
  NO_PROMETHEUS,
  type RealPrometheus,
  startPrometheus,
} from "../support/prometheus.js";
import { type SocketServer, serveFetch } from "../support/sim-server.js";

if (!hasPrometheus) console.warn(NO_PROMETHEUS);

const TOKEN = "api-token-for-the-real-prometheus-test";
const METRICS_TOKEN = "metrics-token-for-the-real-prometheus-test";
const RULES = new URL("../../deploy/prometheus/claimstep.rules.yml", import.meta.url).pathname;
const DASHBOARD = new URL("../../deploy/grafana/claimstep.json", import.meta.url);
/** How long the alert rules may take to be evaluated once (every second). */
const RULES_EVALUATED_MS = 10_000;
/** Steps of the rollout at most (scenario grow completes in a few dozen). */
const MAX_STEPS = 200;

describe.skipIf(!hasPrometheus)("claimstep serve scraped by a real Prometheus", () => {
  let sim: SimCluster;
  let kube: SocketServer | undefined;
  let prom: RealPrometheus | undefined;
  let base = "";
  let done: Promise<number> | undefined;
  const phases: string[] = [];
  let steps = 0;

  beforeAll(async () => {
    sim = await SCENARIOS.grow!.build(1);
    kube = await serveFetch((request) => sim.http.fetch(request), SIM_SERVER);
    const listening = new Promise<void>((resolve, reject) => {
      done = serveFromEnv({
        port: 0,
        env: {
          KUBE_API_SERVER: kube!.url,
          KUBE_TOKEN: "any-token-the-simulated-cluster-takes",
          CLAIMSTEP_API_TOKEN: TOKEN,
          CLAIMSTEP_METRICS_TOKEN: METRICS_TOKEN,
          CLAIMSTEP_INTERVAL_SECONDS: "0",
        },
        log: (e) => {
          if (e.msg === "listening") {
            base = `http://127.0.0.1:${e.port}`;
            resolve();
          }
        },
      });
      void done.then((code) => reject(new Error(`claimstep serve exited (${code}) before listening`)), reject);
    });
    await listening;
    prom = await startPrometheus({
      targets: [
        { job: "claimstep", url: `${base}/metrics`, bearer: METRICS_TOKEN, honorLabels: true },
        { job: "kubelet", url: `${kube.url}${KUBELET_METRICS_PATH}` },
      ],
      ruleFiles: [RULES],
    });
    await prom.waitFor('up{job="claimstep"} == 1 and on () up{job="kubelet"} == 1', (r) => r.length === 1);

    // The rollout: one step at a time; each new phase waits for Prometheus to have scraped it.
    for (let i = 0; i < MAX_STEPS; i++) {
      const res = await fetch(`${base}/v1/steps`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(SET),
      });
      const body = (await res.json()) as { decision: { phase: string; reason: string } };
      steps++;
      const phase = body.decision.phase;
      if (!phases.includes(phase)) {
        phases.push(phase);
        await prom.waitFor(
          `claimstep_set_phase{namespace="default",name="web",phase="${phase}"} == 1`,
          (r) => r.length === 1,
        );
      }
      if (phase === "Complete" || phase === "Blocked") break;
      sim.advance(10_000);
    }
  }, 55_000);

  afterAll(async () => {
    await prom?.stop();
    if (done) {
      process.emit("SIGTERM", "SIGTERM");
      await done.catch(() => 1);
    }
    await kube?.close();
  });

  it("the rollout completed", () => {
    console.log(`rollout of default/web under claimstep serve: ${steps} steps, phases ${phases.join(" → ")}`);
    expect(phases.at(-1), phases.join(" → ")).toBe("Complete");
    expect(phases).toContain("Progressing");
  });

  it("Prometheus saw the set's phase change: each phase's series, and now only Complete", async () => {
    const seen = await prom!.query(
      'count by (phase) (max_over_time(claimstep_set_phase{namespace="default",name="web"}[5m]))',
    );
    expect(seen.map((s) => s.metric.phase).sort()).toEqual([...phases].sort());
    const now = await prom!.waitFor(
      'claimstep_set_phase{namespace="default",name="web"} == 1',
      (r) => r.length === 1 && r[0]!.metric.phase === "Complete",
    );
    // honor_labels: the set's namespace, not a target's.
    expect(now[0]!.metric).toMatchObject({ job: "claimstep", namespace: "default", name: "web", phase: "Complete" });
    const ordinals = await prom!.waitFor(
      'claimstep_set_ordinals{namespace="default",name="web",state="updated"}',
      (r) => r.length === 1 && r[0]!.value[1] === "3",
    );
    expect(ordinals).toHaveLength(1);
  });

  it("every series the alert rules and the dashboard name is one claimstep exposes (those of events this rollout has none of aside)", async () => {
    const names = new Set<string>((await prom!.get("/api/v1/label/__name__/values")).data);
    const named = new Set(
      [readFileSync(RULES, "utf8"), readFileSync(DASHBOARD, "utf8")].flatMap(
        (t) => t.match(/\bclaimstep_[a-z_]+/g) ?? [],
      ),
    );
    // A histogram is named by its family (claimstep_step_duration_seconds), exposed as _bucket, _sum and _count.
    const missing = [...named].filter((n) => !names.has(n) && !names.has(`${n}_bucket`)).sort();
    // No autogrow, admission webhook or failed Prometheus query here: their labelled series appear with the first event.
    expect(missing).toEqual([
      "claimstep_admission_reviews_total",
      "claimstep_autogrow_growths_total",
      "claimstep_autogrow_threshold_ratio",
    ]);
  });

  it("the step counts: every step by its outcome, applied ones among them", async () => {
    const total = await prom!.waitFor("sum(claimstep_steps_total)", (r) => Number(r[0]?.value[1]) === steps);
    expect(Number(total[0]!.value[1])).toBe(steps);
    const applied = await prom!.query('claimstep_steps_total{outcome="applied"}');
    expect(Number(applied[0]?.value[1])).toBeGreaterThan(0);
  });

  it("the step and API histograms have samples, and histogram_quantile answers a number", async () => {
    const count = await prom!.query("claimstep_step_duration_seconds_count");
    expect(Number(count[0]?.value[1])).toBe(steps);
    const p50 = await prom!.query("histogram_quantile(0.5, sum by (le) (claimstep_step_duration_seconds_bucket))");
    expect(Number.isFinite(Number(p50[0]?.value[1])), JSON.stringify(p50)).toBe(true);
    const api = await prom!.query(
      'sum by (verb, resource) (claimstep_api_request_duration_seconds_count{resource="persistentvolumeclaims"})',
    );
    expect(api.map((s) => s.metric.verb)).toContain("patch");
  });

  it("every Grafana panel's query runs on these series without error, the main ones with data", async () => {
    const queries = grafanaQueries(JSON.parse(readFileSync(DASHBOARD, "utf8")));
    const empty: string[] = [];
    for (const q of queries) {
      const a = await prom!.queryRaw(q.expr);
      expect({
        panel: q.panel,
        code: a.code,
        status: a.body.status,
        error: a.body.error,
        warnings: a.body.warnings,
      }).toEqual({ panel: q.panel, code: 200, status: "success", error: undefined, warnings: undefined });
      if ((a.body.data!.result as unknown[]).length === 0) empty.push(q.panel);
    }
    console.log(`Grafana: ${queries.length} queries ran; empty on this rollout: ${empty.join(", ") || "none"}`);
    // What this rollout produces is on the dashboard (no autogrow, admission or delivery here beyond the API's).
    for (const panel of [
      "Sets by phase (A)",
      "Rollouts by phase (A)",
      "Per-set progress: ordinals by state (A)",
      "Per-set progress: share of ordinals updated (A)",
      "Claims: requested vs desired bytes (A)",
      "Claims: requested vs desired bytes (B)",
      "Volume usage next to the autogrow threshold (A)",
      "Step outcomes (A)",
      "Step latency (A)",
      "API latency (p95) (A)",
      "Sweeper Lease holder (A)",
    ]) {
      expect(empty, panel).not.toContain(panel);
    }
  });

  it("the alert rules load and evaluate on these series without error; none fires on a healthy rollout", async () => {
    type Rule = { name: string; health: string; lastError?: string; state?: string };
    // Evaluated at least once (health "unknown" before), at most RULES_EVALUATED_MS from now.
    const deadline = Date.now() + RULES_EVALUATED_MS;
    let all: Rule[] = [];
    do {
      const groups = (await prom!.get("/api/v1/rules")).data.groups as { rules: Rule[] }[];
      all = groups.flatMap((g) => g.rules);
      if (all.length > 0 && all.every((r) => r.health !== "unknown")) break;
      await new Promise((r) => setTimeout(r, 250));
    } while (Date.now() < deadline);
    expect(all).toHaveLength(6);
    // No interval sweeps here (CLAIMSTEP_INTERVAL_SECONDS=0): ClaimstepNoSweeper is pending, rightly; no other.
    expect(all.filter((r) => r.state !== "inactive").map((r) => `${r.name} ${r.state}`)).toEqual([
      "ClaimstepNoSweeper pending",
    ]);
    const firing = await prom!.query('ALERTS{alertstate="firing"}');
    expect(firing).toEqual([]);
    for (const r of all)
      expect({ name: r.name, health: r.health, lastError: r.lastError ?? "" }).toEqual({
        name: r.name,
        health: "ok",
        lastError: "",
      });
  });
});
