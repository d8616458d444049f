// The Grafana dashboard (deploy/grafana/claimstep.json): the panels issue 25 asks for, every query
// on the dashboard's Prometheus data source variable, only the metrics claimstep and the kubelet
// expose, and every query accepted by a real Prometheus (its engine parses and runs it). The same
// queries also run against claimstep's own series in test/functions/server-prometheus.real.test.ts.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  grafanaQueries,
  hasPrometheus,
  NO_PROMETHEUS,
  type RealPrometheus,
  startPrometheus,
} from "../../support/prometheus.js";

const DASHBOARD = new URL("../../../deploy/grafana/claimstep.json", import.meta.url);
/** The data source variable every panel and query names (Grafana fills it in on import). */
const DATASOURCE = { type: "prometheus", uid: "$" + "{datasource}" };
const load = () => JSON.parse(readFileSync(DASHBOARD, "utf8"));
/** The metrics contract of issue 25 (docs/operating.md#metrics), and the kubelet's. */
const KNOWN = new Set([
  "claimstep_set_phase",
  "claimstep_set_ordinals",
  "claimstep_set_phase_age_seconds",
  "claimstep_set_requested_bytes",
  "claimstep_set_desired_bytes",
  "claimstep_set_info",
  "claimstep_claim_info",
  "claimstep_autogrow_threshold_ratio",
  "claimstep_steps_total",
  "claimstep_step_duration_seconds_bucket",
  "claimstep_api_requests_total",
  "claimstep_api_request_duration_seconds_bucket",
  "claimstep_webhook_deliveries_total",
  "claimstep_admission_reviews_total",
  "claimstep_lease_holder",
  "claimstep_autogrow_growths_total",
  "claimstep_prometheus_query_failures_total",
  "kubelet_volume_stats_used_bytes",
  "kubelet_volume_stats_capacity_bytes",
]);

describe("the Grafana dashboard", () => {
  it("has the panels of issue 25: rollouts by phase, per-set progress, step outcomes and latency, API errors, volume usage next to the autogrow threshold", () => {
    const titles: string[] = load().panels.map((p: { title: string }) => p.title);
    for (const want of [
      /^Rollouts by phase$/,
      /^Per-set progress/,
      /^Step outcomes$/,
      /^Step latency$/,
      /^API errors$/,
      /^Volume usage next to the autogrow threshold$/,
    ]) {
      expect(
        titles.some((t) => want.test(t)),
        `${want} in ${titles.join(" | ")}`,
      ).toBe(true);
    }
  });

  it("queries the data source chosen on import, with unique panel ids, and only series claimstep or the kubelet expose", () => {
    const d = load();
    expect(d.uid).toBe("claimstep");
    expect(d.templating.list.map((v: { name: string }) => v.name)).toEqual(["datasource", "namespace", "name"]);
    const ids = d.panels.map((p: { id: number }) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of d.panels.filter((x: { type: string }) => x.type !== "row")) {
      expect(p.datasource, p.title).toEqual(DATASOURCE);
      expect(p.targets.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets) expect(t.datasource, p.title).toEqual(DATASOURCE);
    }
    const used = new Set(grafanaQueries(d).flatMap((q) => q.expr.match(/\b(claimstep|kubelet)_[a-z_]+/g) ?? []));
    for (const name of used) expect(KNOWN, `${name} is not a series of the metrics contract`).toContain(name);
  });

  it("fails on a variable the test does not know (so none goes unchecked)", () => {
    expect(() =>
      grafanaQueries({ panels: [{ title: "x", targets: [{ refId: "A", expr: 'up{a=~"$nosuch"}' }] }] }),
    ).toThrow(/panel "x": unknown variable \$nosuch/);
  });

  describe.skipIf(!hasPrometheus)("against a real Prometheus", () => {
    let prom: RealPrometheus | undefined;
    beforeAll(async () => {
      prom = await startPrometheus({ targets: [] });
    }, 30_000);
    afterAll(async () => {
      await prom?.stop();
    });

    it("every panel's query is accepted and runs without error or warning", async () => {
      const queries = grafanaQueries(load());
      expect(queries.length).toBeGreaterThan(10);
      for (const q of queries) {
        const a = await prom!.queryRaw(q.expr);
        expect({
          panel: q.panel,
          code: a.code,
          status: a.body.status,
          error: a.body.error,
          warnings: a.body.warnings,
        }).toEqual({ panel: q.panel, code: 200, status: "success", error: undefined, warnings: undefined });
      }
    });
  });
});
if (!hasPrometheus) console.warn(NO_PROMETHEUS);
