// The simulated kubelets' volume stats in the Prometheus exposition format, at
// `<server>/kubelet/metrics` (what a real Prometheus scrapes: test/adapters/metrics/prometheus.real.test.ts),
// the same numbers the simulated query API answers; promtool lints the exposition when installed.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SimCluster, statefulSetManifest } from "../../../adapters/sim/cluster.js";
import { SIM_SERVER } from "../../../adapters/sim/http.js";
import { KUBELET_METRICS_PATH } from "../../../adapters/sim/prometheus.js";

const MI = 1024 * 1024;
const PROMTOOL = process.env.CLAIMSTEP_PROMTOOL ?? "/usr/bin/promtool";

async function cluster(): Promise<SimCluster> {
  const sim = new SimCluster({ seed: 3 });
  await sim.addStorageClass("fast", { allowVolumeExpansion: true });
  await sim.createStatefulSet(
    statefulSetManifest({
      name: "web",
      replicas: 2,
      templates: [{ name: "data", storage: "1Gi", storageClassName: "fast" }],
    }),
  );
  return sim;
}

describe("the simulated kubelets' /metrics", () => {
  it("expose kubelet_volume_stats_used_bytes and _capacity_bytes of every mounted claim, as the kubelet labels them", async () => {
    const sim = await cluster();
    sim.setWorkload("default", "data-web-", { bytesPerSecond: 1 * MI, startUsed: "100Mi" });
    sim.advance(60_000);
    const res = await sim.http.fetchLike(`${SIM_SERVER}${KUBELET_METRICS_PATH}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    expect(text).toContain("# TYPE kubelet_volume_stats_used_bytes gauge\n");
    expect(text).toContain("# TYPE kubelet_volume_stats_capacity_bytes gauge\n");
    expect(text).toContain(
      `kubelet_volume_stats_used_bytes{namespace="default",persistentvolumeclaim="data-web-0"} ${160 * MI}\n`,
    );
    expect(text).toContain(
      `kubelet_volume_stats_capacity_bytes{namespace="default",persistentvolumeclaim="data-web-1"} ${1024 * MI}\n`,
    );
    expect(text.split("\n").filter((l) => l.startsWith("kubelet_"))).toHaveLength(4);
    if (existsSync(PROMTOOL)) {
      const lint = await new Promise<{ code: number; out: string }>((resolve) => {
        const p = execFile(PROMTOOL, ["check", "metrics"], { timeout: 10_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
        );
        p.stdin!.end(text);
      });
      expect(lint, lint.out).toEqual({ code: 0, out: "" });
    }
  });

  it("answer only GET (and HEAD), outside the API server's authentication", async () => {
    const sim = new SimCluster({ tokens: { t: { user: "u" } } });
    expect((await sim.http.fetchLike(`${SIM_SERVER}${KUBELET_METRICS_PATH}`)).status).toBe(200);
    expect(
      (await sim.http.fetchLike(`${SIM_SERVER}${KUBELET_METRICS_PATH}`, { method: "POST", body: "" })).status,
    ).toBe(405);
  });
});
