// Autogrow on the simulated cluster: workloads filling volumes over virtual time, the simulated
// Prometheus answering the real API's bodies for the kubelets' volume stats, and claimstep's steps
// reading it through the production PrometheusMetrics: usage over the threshold → RaiseTemplate →
// the rollout → Complete at the new size, no claim above the threshold; the requests that costs.
import { setupServer } from "msw/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusMetrics } from "../../../adapters/metrics/prometheus.js";
import { SimCluster, statefulSetManifest } from "../../../adapters/sim/cluster.js";
import { SIM_SERVER } from "../../../adapters/sim/http.js";
import { parseSelector } from "../../../adapters/sim/prometheus.js";
import { AUTOGROW_POLICY, SET } from "../../../adapters/sim/scenarios.js";
import { Keys } from "../../../core/keys.js";
import { percentOf } from "../../../core/plan/autogrow.js";
import { SCENARIOS } from "../../../functions/scenarios.js";
import { runStep, type StepResult } from "../../../functions/step.js";
import { createSimServer } from "../../support/index.js";

const MI = 1024 * 1024;
const GI = 1024 * MI;

async function cluster(): Promise<SimCluster> {
  const sim = new SimCluster({ seed: 3 });
  await sim.addStorageClass("fast", { allowVolumeExpansion: true });
  await sim.createStatefulSet(
    statefulSetManifest({
      name: "web",
      replicas: 3,
      templates: [
        { name: "data", storage: "1Gi", storageClassName: "fast" },
        { name: "wal", storage: "1Gi", storageClassName: "fast" },
      ],
    }),
  );
  return sim;
}

const used = (sim: SimCluster) => Object.fromEntries(sim.volumeStats().map((v) => [v.claim, Number(v.usedBytes) / MI]));

const query = async (sim: SimCluster, q: string, method: "GET" | "POST" = "GET") => {
  const url = `${SIM_SERVER}/prometheus/api/v1/query`;
  const res =
    method === "GET"
      ? await sim.http.fetchLike(`${url}?${new URLSearchParams({ query: q })}`)
      : await sim.http.fetchLike(url, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ query: q }).toString(),
        });
  return { status: res.status, type: res.headers.get("content-type"), body: (await res.json()) as any };
};

describe("workloads", () => {
  it("fill each mounted claim they name at their rate from startUsed; an exact name beats a prefix; other claims stay at 0", async () => {
    const sim = await cluster();
    sim.setWorkload("default", "data-web-", { bytesPerSecond: 1 * MI, startUsed: "100Mi" });
    sim.setWorkload("default", "data-web-2", { bytesPerSecond: 3 * MI });
    sim.advance(60_000);
    expect(used(sim)).toEqual({
      "data-web-0": 160,
      "data-web-1": 160,
      "data-web-2": 280,
      "wal-web-0": 0,
      "wal-web-1": 0,
      "wal-web-2": 0,
    });
  });

  it("never beyond the file system's size, and on past it once the volume grew", async () => {
    const sim = await cluster();
    sim.setWorkload("default", "data-web-0", { bytesPerSecond: 10 * MI, startUsed: "1000Mi" });
    sim.advance(60_000);
    expect(sim.volumeStats().find((v) => v.claim === "data-web-0")).toMatchObject({
      usedBytes: BigInt(GI),
      capacityBytes: BigInt(GI),
    });
    await sim.admin.mergePatch(
      "persistentvolumeclaims",
      "default",
      "data-web-0",
      { spec: { resources: { requests: { storage: "2Gi" } } } },
      { fieldManager: "kubectl" },
    );
    sim.advance(5 * 60_000);
    const v = sim.volumeStats().find((x) => x.claim === "data-web-0")!;
    expect(v.capacityBytes).toBe(BigInt(2 * GI));
    expect(v.usedBytes).toBeGreaterThan(BigInt(GI));
  });

  it("write nothing while no pod mounts the claim; the kubelet reports only mounted claims", async () => {
    const sim = await cluster();
    sim.setWorkload("default", "data-web-", { bytesPerSecond: 1 * MI, startUsed: "0" });
    await sim.scale("default", "web", 2);
    sim.advance(60_000);
    expect(sim.volumeStats().map((v) => v.claim)).not.toContain("data-web-2");
    await sim.scale("default", "web", 3);
    sim.advance(60_000);
    const u = used(sim);
    expect(u["data-web-0"]).toBe(120);
    // web-2 was gone a minute and took a few seconds to start again.
    expect(u["data-web-2"]).toBeGreaterThan(50);
    expect(u["data-web-2"]).toBeLessThan(70);
  });

  it("are kept in the saved state: a restored cluster fills on exactly as one never saved", async () => {
    const sim = await cluster();
    sim.setWorkload("default", "data-web-", { bytesPerSecond: 0.7 * MI, startUsed: 123_456 });
    sim.advance(33_000);
    const restored = SimCluster.restore(JSON.parse(JSON.stringify(sim.toJSON())));
    expect(restored.listWorkloads()).toEqual(sim.listWorkloads());
    sim.advance(90_000);
    restored.advance(90_000);
    expect(restored.volumeStats()).toEqual(sim.volumeStats());
    expect(restored.toJSON()).toEqual(sim.toJSON());
  });

  it("refuses a rate that is not a number ≥ 0", async () => {
    const sim = await cluster();
    expect(() => sim.setWorkload("default", "data-web-", { bytesPerSecond: -1 })).toThrow(
      /bytesPerSecond must be a number ≥ 0/,
    );
  });
});

describe("the simulated Prometheus", () => {
  it("answers an instant query with the real vector shape and the kubelet's labels, GET or POST", async () => {
    const sim = await cluster();
    sim.setWorkload("default", "data-web-", { bytesPerSecond: MI, startUsed: "10Mi" });
    sim.advance(10_000);
    const q =
      '{__name__=~"kubelet_volume_stats_(used|capacity)_bytes", namespace="default", persistentvolumeclaim="data-web-1"}';
    for (const method of ["GET", "POST"] as const) {
      const r = await query(sim, q, method);
      expect(r.status).toBe(200);
      expect(r.type).toBe("application/json");
      expect(r.body).toEqual({
        status: "success",
        data: {
          resultType: "vector",
          result: [
            {
              metric: {
                __name__: "kubelet_volume_stats_capacity_bytes",
                instance: "10.0.0.12:10250",
                job: "kubelet",
                namespace: "default",
                node: "sim-node-2",
                persistentvolumeclaim: "data-web-1",
              },
              value: [sim.now().getTime() / 1000, String(GI)],
            },
            {
              metric: {
                __name__: "kubelet_volume_stats_used_bytes",
                instance: "10.0.0.12:10250",
                job: "kubelet",
                namespace: "default",
                node: "sim-node-2",
                persistentvolumeclaim: "data-web-1",
              },
              value: [sim.now().getTime() / 1000, String(20 * MI)],
            },
          ],
        },
      });
    }
    // Outside the API server's request log.
    expect(sim.http.counters().total).toBe(0);
    expect(sim.prometheus.queries().map((x) => x.method)).toEqual(["GET", "POST"]);
  });

  it("matches =, !=, =~ and !~ and a bare metric name", async () => {
    const sim = await cluster();
    const claims = async (q: string) =>
      (await query(sim, q)).body.data.result.map(
        (s: any) => `${s.metric.__name__.replace("kubelet_volume_stats_", "")} ${s.metric.persistentvolumeclaim}`,
      );
    expect(
      await claims(
        'kubelet_volume_stats_used_bytes{persistentvolumeclaim=~"data-.*", persistentvolumeclaim!="data-web-0"}',
      ),
    ).toEqual(["used_bytes data-web-1", "used_bytes data-web-2"]);
    expect(await claims('kubelet_volume_stats_capacity_bytes{persistentvolumeclaim!~"data-.*|wal-web-[01]"}')).toEqual([
      "capacity_bytes wal-web-2",
    ]);
    expect(await claims("kubelet_volume_stats_used_bytes")).toHaveLength(6);
    expect(await claims('{namespace="other"}')).toEqual([]);
  });

  it.each([
    ["", 'invalid parameter "query": 1:1: parse error: no expression found in input'],
    ["{}", 'invalid parameter "query": 1:1: parse error: vector selector must contain at least one non-empty matcher'],
    [
      '{job=~".*"}',
      'invalid parameter "query": 1:1: parse error: vector selector must contain at least one non-empty matcher',
    ],
    [
      '{job="kubelet"',
      'invalid parameter "query": 1:15: parse error: unexpected end of input in label matching, expected "," or "}"',
    ],
    [
      "{job=kubelet}",
      'invalid parameter "query": 1:6: parse error: unexpected character "k" in label matching, expected string',
    ],
    ['{job=~"("}', 'invalid parameter "query": 1:10: parse error: error parsing regexp: '],
    [
      "sum(kubelet_volume_stats_used_bytes)",
      'invalid parameter "query": 1:4: the simulated Prometheus evaluates vector selectors only',
    ],
  ])("answers %j with the API's bad_data error (400)", async (q, error) => {
    const sim = await cluster();
    const r = await query(sim, q);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ status: "error", errorType: "bad_data", error: expect.stringContaining(error) });
  });

  it("parses escapes of PromQL strings", () => {
    expect(parseSelector('{a="x\\"y\\\\z", b=`raw\\d`}')).toEqual([
      { label: "a", op: "=", value: 'x"y\\z' },
      { label: "b", op: "=", value: "raw\\d" },
    ]);
  });

  it("404s other paths, as Prometheus's mux does", async () => {
    const sim = await cluster();
    const res = await sim.http.fetchLike(`${SIM_SERVER}/prometheus/api/v1/query_range?query=up`);
    expect(res.status).toBe(404);
    expect(await res.text()).toBe("404 page not found\n");
  });

  it("is reached by the production PrometheusMetrics over fetch (msw) at <server>/prometheus", async () => {
    const fake = createSimServer({ baseUrl: "https://kube.test:6443/k8s" });
    await fake.addStorageClass("fast", { allowVolumeExpansion: true });
    await fake.createStatefulSet(
      statefulSetManifest({
        name: "web",
        replicas: 2,
        templates: [{ name: "data", storage: "1Gi", storageClassName: "fast" }],
      }),
    );
    fake.setWorkload("default", "data-web-", { bytesPerSecond: 0, startUsed: "256Mi" });
    const server = setupServer(...fake.handlers);
    server.listen({ onUnhandledRequest: "error" });
    try {
      const r = await new PrometheusMetrics({ url: "https://kube.test:6443/k8s/prometheus", token: "whatever" }).usage(
        SET,
        ["data-web-0", "data-web-1", "data-web-9"],
      );
      expect(r).toEqual({
        ok: true,
        volumes: [
          { claim: "data-web-0", usedBytes: BigInt(256 * MI), capacityBytes: BigInt(GI) },
          { claim: "data-web-1", usedBytes: BigInt(256 * MI), capacityBytes: BigInt(GI) },
        ],
      });
      expect(fake.prometheus.queries()[0]!.headers.get("authorization")).toBe("Bearer whatever");
    } finally {
      server.close();
    }
  });
});

describe("autogrow end to end (scenario autogrow)", () => {
  let sim: SimCluster;
  const results: StepResult[] = [];
  const costs: { reason: string; reads: number; writes: number; queries: number; byRequest: Record<string, number> }[] =
    [];

  beforeAll(async () => {
    sim = await SCENARIOS.autogrow!.build(1);
    for (let i = 0; i < 100; i++) {
      sim.http.resetCounters();
      sim.prometheus.reset();
      const r = await runStep({
        reader: sim.reader,
        writers: sim.writers,
        metrics: sim.metrics,
        ref: SET,
        now: sim.now(),
      });
      const c = sim.http.counters();
      costs.push({
        reason: r.decision.reason,
        reads: c.reads,
        writes: c.writes,
        queries: sim.prometheus.queries().length,
        byRequest: c.byRequest,
      });
      results.push(r);
      if (r.decision.reason === "RolloutComplete") break;
      sim.advance(10_000);
    }
  });

  afterAll(() => {
    // What a step costs with autogrow on (the report of issue 18).
    const seen = new Map<string, (typeof costs)[number]>();
    for (const c of costs) if (!seen.has(c.reason)) seen.set(c.reason, c);
    console.log(
      [
        "requests per step with autogrow on:",
        ...[...seen.values()].map(
          (c) =>
            `  ${c.reason.padEnd(18)} ${c.reads} reads, ${c.queries} query, ${c.writes} writes  ${JSON.stringify(c.byRequest)}`,
        ),
      ].join("\n"),
    );
  });

  it("usage over the threshold → RaiseTemplate, the rollout, Complete at the new size", () => {
    const first = results[0]!;
    expect(first.decision.reason).toBe("AutogrowTriggered");
    expect(first.decision.message).toMatch(
      /^data-web-2 uses 8\d\dMi of 1Gi \(8\d\.\d%\): raising template data 1Gi → 2Gi/,
    );
    expect(first.outcome.kind).toBe("applied");
    const last = results.at(-1)!;
    expect(last.decision.reason).toBe("RolloutComplete");
    expect(
      results
        .filter((r) => r.decision.action?.type === "PatchClaim" && r.decision.action.claim.startsWith("data-"))
        .map((r) => (r.decision.action as { claim: string }).claim),
    ).toEqual(["data-web-2", "data-web-1", "data-web-0"]);
    const set = sim.get("statefulsets", "default", "web")!;
    expect(JSON.parse(set.metadata.annotations[Keys.templates])[0].spec.resources.requests.storage).toBe("2Gi");
    expect(set.metadata.annotations[Keys.autogrownFrom]).toBe(first.decision.revision);
    expect(sim.events("default").map((e) => e.reason)).toContain("AutogrowTriggered");
  });

  it("ends with every data claim at 2Gi and none above the threshold", () => {
    const stats = sim.volumeStats().filter((v) => v.claim.startsWith("data-"));
    expect(stats.map((v) => v.capacityBytes)).toEqual([2n, 2n, 2n].map((n) => n * BigInt(GI)));
    for (const v of stats)
      expect(
        Number(v.usedBytes) / Number(v.capacityBytes),
        `${v.claim} at ${percentOf(v.usedBytes, v.capacityBytes)}`,
      ).toBeLessThan(0.8);
  });

  it("queries Prometheus once, only where autogrow may act (no rollout in progress)", () => {
    // The raise is one merge patch of the set; the rest are its Event.
    expect(costs[0]).toMatchObject({ reason: "AutogrowTriggered", queries: 1 });
    expect(costs[0]!.byRequest["patch statefulsets"]).toBe(1);
    expect(costs[0]!.byRequest["patch persistentvolumeclaims"]).toBeUndefined();
    // The step right after the raise sees the desired templates' revision ahead of current-revision:
    // no query (functions/step.ts withUsage).
    expect(costs[1]).toMatchObject({ reason: "ClaimUpdated", queries: 0 });
    const during = costs.slice(1, -1);
    expect(during.every((c) => c.queries === 0)).toBe(true);
    // The step that finds the rollout complete records it; the next one reads the usage.
    expect(costs.at(-1)!.queries).toBe(0);
  });

  it("after the rollout, the next step reads the usage and finds nothing to do (one query, no write)", async () => {
    sim.http.resetCounters();
    sim.prometheus.reset();
    const r = await runStep({
      reader: sim.reader,
      writers: sim.writers,
      metrics: sim.metrics,
      ref: SET,
      now: sim.now(),
    });
    expect(r.decision.reason).toBe("Converged");
    expect(sim.prometheus.queries()).toHaveLength(1);
    expect(sim.http.counters().writes).toBe(0);
    costs.push({
      reason: "Converged",
      reads: sim.http.counters().reads,
      writes: 0,
      queries: 1,
      byRequest: sim.http.counters().byRequest,
    });
  });

  it("keeps growing as the disks fill, one growth per revision, until the max: Blocked/AutogrowLimit", async () => {
    const s = await SCENARIOS.autogrow!.build(2);
    s.setWorkload("default", "data-web-2", { bytesPerSecond: 40 * MI });
    const grown: string[] = [];
    let last: StepResult | undefined;
    for (let i = 0; i < 2_000; i++) {
      last = await runStep({ reader: s.reader, writers: s.writers, metrics: s.metrics, ref: SET, now: s.now() });
      if (last.decision.action?.type === "RaiseTemplate") grown.push(last.decision.action.to);
      if (last.decision.phase === "Blocked") break;
      s.advance(10_000);
    }
    expect(grown).toEqual(["2Gi", "3Gi", "5Gi", "8Gi"]);
    expect(last!.decision.reason).toBe("AutogrowLimit");
    expect(last!.decision.message).toMatch(/^data-web-2 uses .* but template data is already at the autogrow max 8Gi/);
    expect(AUTOGROW_POLICY.max).toBe("8Gi");
  });

  it("goes on without autogrow, saying why, when Prometheus fails (not Waiting)", async () => {
    const s = await SCENARIOS.autogrow!.build(3);
    s.prometheus.failNext({
      code: 502,
      body: "<html><head><title>502 Bad Gateway</title></head></html>",
      contentType: "text/html",
    });
    const r = await runStep({ reader: s.reader, writers: s.writers, metrics: s.metrics, ref: SET, now: s.now() });
    expect(r.decision.phase).toBe("Complete");
    expect(r.decision.message).toMatch(
      /autogrow skipped this step: Prometheus at https:\/\/sim\.claimstep\.invalid\/prometheus answered HTTP 502 with a non-JSON body \(text\/html: 502 Bad Gateway\)/,
    );
    expect(r.decision.action).toBeUndefined();
    // The next step reads it again and grows.
    expect(
      (await runStep({ reader: s.reader, writers: s.writers, metrics: s.metrics, ref: SET, now: s.now() })).decision
        .reason,
    ).toBe("AutogrowTriggered");
  });

  it("without a metrics reader a step says so", async () => {
    const s = await SCENARIOS.autogrow!.build(4);
    const r = await runStep({ reader: s.reader, writers: s.writers, ref: SET, now: s.now() });
    expect(r.decision.message).toMatch(
      /autogrow skipped this step: no metrics were read \(no Prometheus configured: CLAIMSTEP_PROMETHEUS_URL\)/,
    );
  });
});
