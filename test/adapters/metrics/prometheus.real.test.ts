// Autogrow reads a real Prometheus: the simulated kubelets' volume stats (exposition format, at
// the simulated cluster's /kubelet/metrics on a socket) scraped by Debian's prometheus, and
// claimstep's production PrometheusMetrics querying that Prometheus' HTTP API: the PromQL claimstep
// sends is proven on the real engine (GET and, for many claims, POST), and an autogrow set grows.
// Skipped, saying so, without /usr/bin/prometheus (CI installs it).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusMetrics, usageQuery } from "../../../adapters/metrics/prometheus.js";
import type { SimCluster } from "../../../adapters/sim/cluster.js";
import { SIM_SERVER } from "../../../adapters/sim/http.js";
import { KUBELET_METRICS_PATH } from "../../../adapters/sim/prometheus.js";
import { SET } from "../../../adapters/sim/scenarios.js";
import { SCENARIOS } from "../../../functions/scenarios.js";
import { runStep } from "../../../functions/step.js";
import { hasPrometheus, NO_PROMETHEUS, type RealPrometheus, startPrometheus } from "../../support/prometheus.js";

if (!hasPrometheus) console.warn(NO_PROMETHEUS);

/** The simulated cluster's HTTP surface on 127.0.0.1 (only the paths a scrape asks for). */
async function serveSimHttp(sim: SimCluster): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    void sim.http
      .fetch(new Request(`${SIM_SERVER}${req.url}`, { method: req.method! }))
      .then(async (answer) => {
        res.writeHead(answer.status, Object.fromEntries(answer.headers));
        res.end(Buffer.from(await answer.arrayBuffer()));
      })
      .catch((err: Error) => {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(err.message);
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe.skipIf(!hasPrometheus)("autogrow against a real Prometheus scraping the simulated kubelets", () => {
  let sim: SimCluster;
  let kubelets: { url: string; server: Server } | undefined;
  let prom: RealPrometheus | undefined;
  let claims: string[];

  beforeAll(async () => {
    // web complete at data 1Gi with autogrow (threshold 80%); data-web-2 has just crossed it.
    sim = await SCENARIOS.autogrow!.build(1);
    claims = sim.volumeStats().map((v) => v.claim);
    kubelets = await serveSimHttp(sim);
    prom = await startPrometheus({ targets: [{ job: "kubelet", url: `${kubelets.url}${KUBELET_METRICS_PATH}` }] });
    // The first scrape: every mounted claim's two series.
    await prom.waitFor("kubelet_volume_stats_used_bytes", (r) => r.length === claims.length);
    await prom.waitFor("kubelet_volume_stats_capacity_bytes", (r) => r.length === claims.length);
  }, 40_000);

  afterAll(async () => {
    await prom?.stop();
    if (kubelets) await new Promise<void>((resolve) => kubelets!.server.close(() => resolve()));
  });

  it("the query claimstep sends answers the kubelets' numbers, labelled as claimstep reads them", async () => {
    const metrics = new PrometheusMetrics({ url: prom!.url });
    const reading = await metrics.usage(SET, claims);
    expect(reading.ok, reading.ok ? "" : reading.message).toBe(true);
    const expected = sim
      .volumeStats()
      .map((v) => ({ claim: v.claim, usedBytes: v.usedBytes, capacityBytes: v.capacityBytes }));
    expect(reading.ok && [...reading.volumes].sort((a, b) => a.claim.localeCompare(b.claim))).toEqual(
      expected.sort((a, b) => a.claim.localeCompare(b.claim)),
    );
    // The engine's own answer to the same PromQL: the job's series, the kubelet's labels.
    const raw = await prom!.query(usageQuery(SET.namespace, claims));
    expect(raw).toHaveLength(2 * claims.length);
    expect(raw[0]!.metric).toMatchObject({ job: "kubelet", namespace: "default" });
  });

  it("a set of many claims (a query past the GET limit, sent as a POST form) reads the same", async () => {
    const many = [...claims, ...Array.from({ length: 200 }, (_, i) => `data-other-set-with-a-long-name-${i}`)];
    expect(usageQuery(SET.namespace, many).length).toBeGreaterThan(2_000);
    const reading = await new PrometheusMetrics({ url: prom!.url }).usage(SET, many);
    expect(reading.ok && reading.volumes.map((v) => v.claim).sort()).toEqual([...claims].sort());
  });

  it("a claim no kubelet reports is a reading that says so, from the real engine's empty vector", async () => {
    const reading = await new PrometheusMetrics({ url: prom!.url }).usage(SET, ["data-web-9"]);
    expect(reading).toEqual({
      ok: false,
      message: expect.stringMatching(
        /^Prometheus at http:\/\/127\.0\.0\.1:\d+ has no kubelet_volume_stats for default\/data-web-9/,
      ),
    });
  });

  it("PromQL the engine refuses is a reading naming Prometheus' error", async () => {
    const answer = await prom!.queryRaw('kubelet_volume_stats_used_bytes{persistentvolumeclaim=~"("}');
    expect(answer.code).toBe(400);
    expect(answer.body).toMatchObject({ status: "error", errorType: "bad_data" });
  });

  it("a step reading it grows the set: AutogrowTriggered, the desired template raised", async () => {
    const r = await runStep({
      reader: sim.reader,
      writers: sim.writers,
      metrics: new PrometheusMetrics({ url: prom!.url }),
      ref: SET,
      now: sim.now(),
    });
    expect(r.decision.reason).toBe("AutogrowTriggered");
    expect(r.decision.message).toMatch(/^data-web-2 uses 8\d\dMi of 1Gi \(8\d\.\d%\): raising template data 1Gi → 2Gi/);
    expect(r.outcome.kind).toBe("applied");
  });
});
