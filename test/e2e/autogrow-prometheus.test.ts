// Autogrow on a real API server v1.34 reading a real Prometheus: the node agent plays the
// kubelet's GET /metrics (kubelet_volume_stats_used_bytes / _capacity_bytes of the mounted claims),
// Debian's prometheus scrapes it every second, and the shipped CLI's `claimstep run` queries that
// Prometheus (CLAIMSTEP_PROMETHEUS_URL): usage over the threshold raises the template 1Gi → 2Gi and
// every claim grows. Skipped, saying so, without /usr/bin/prometheus (CI installs it).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasPrometheus, NO_PROMETHEUS, type RealPrometheus, startPrometheus } from "../support/prometheus.js";
import { storageClass, useControlPlane } from "./support/index.js";
import { type CliRun, claimsOf, claimstep, createSet, describeRun, jsonLines } from "./support/scenario-finalize.js";

if (!hasPrometheus) console.warn(NO_PROMETHEUS);

const e2e = useControlPlane({ prefix: "autogrow-prom", needsFakeDriver: true });
const GI = 2 ** 30;
const steps = (r: CliRun) => jsonLines(r.stdout).filter((l) => l.decision);
let sc = "";
let prom: RealPrometheus | undefined;

beforeAll(async () => {
  if (!e2e.local || !hasPrometheus) return;
  sc = `${e2e.namespace}-fast`;
  const r = await e2e.admin.create("storageclasses", null, storageClass(sc, { resizeLatencyMs: 300 }));
  expect(r.status).toBe(201);
  prom = await startPrometheus({ targets: [{ job: "kubelet", url: await e2e.agent!.serveMetrics() }] });
});

afterAll(async () => {
  await prom?.stop();
  if (e2e.local && sc) await e2e.admin.delete("storageclasses", null, sc).catch(() => undefined);
});

describe.skipIf(!hasPrometheus)(
  "autogrow reading a real Prometheus that scrapes the node agent's kubelet metrics",
  () => {
    it("usage over the threshold → the template rises 1Gi → 2Gi, every claim grows, Complete at 2Gi", {
      timeout: 180_000,
    }, async () => {
      if (!e2e.local) return;
      const set = "web-prom";
      await createSet(e2e, set, {
        storageClass: sc,
        replicas: 2,
        annotations: {
          "claimstep.io/volume-claim-update-strategy": "InPlace",
          "claimstep.io/autogrow": JSON.stringify({ threshold: "80%", increase: "50%", max: "8Gi" }),
        },
      });
      const ns = e2e.namespace;
      e2e.agent!.setVolumeUsed(ns, `data-${set}-0`, 0.1 * GI);
      e2e.agent!.setVolumeUsed(ns, `data-${set}-1`, 0.1 * GI);
      const claimSelector = `{namespace="${ns}",persistentvolumeclaim=~"data-${set}-.*"}`;
      await prom!.waitFor(`kubelet_volume_stats_used_bytes${claimSelector}`, (r) => r.length === 2, 30_000);
      const env = { CLAIMSTEP_PROMETHEUS_URL: prom!.url };

      // First the set converges as it is, under the threshold.
      const first = await claimstep(e2e, ["run", set, "--interval", "1s", "--timeout", "1m", "-o", "json"], { env });
      expect(first.code, describeRun(first)).toBe(0);
      expect(steps(first).at(-1)?.decision.phase).toBe("Complete");
      expect(steps(first).some((l) => l.decision.reason === "AutogrowTriggered")).toBe(false);

      // The application fills data-web-prom-1 to 90% of 1Gi (92% of the file system); Prometheus scrapes it.
      e2e.agent!.setVolumeUsed(ns, `data-${set}-1`, 0.9 * GI);
      await prom!.waitFor(
        `kubelet_volume_stats_used_bytes{namespace="${ns}",persistentvolumeclaim="data-${set}-1"} > ${0.8 * GI}`,
        (r) => r.length === 1,
        30_000,
      );
      const r = await claimstep(e2e, ["run", set, "--interval", "1s", "--timeout", "2m", "-o", "json"], { env });
      expect(r.code, describeRun(r)).toBe(0);
      const all = steps(r);
      const reasons = all.map((l) => l.decision.reason);
      expect(reasons[0], describeRun(r)).toBe("AutogrowTriggered");
      expect(all[0]!.decision.message).toMatch(new RegExp(`^data-${set}-1 uses \\S+ of \\S+ \\(9\\d\\.\\d%\\)`));
      expect(all.at(-1)?.decision.phase).toBe("Complete");
      expect(reasons.filter((x) => x === "AutogrowTriggered")).toHaveLength(1);
      const live = (await e2e.api.get("statefulsets", set)).body;
      expect(
        JSON.parse(live.metadata.annotations?.["claimstep.io/volume-claim-templates"] ?? "[]")[0].spec.resources
          .requests.storage,
      ).toBe("2Gi");
      for (const c of await claimsOf(e2e, set)) expect(c.status?.capacity?.storage, c.metadata.name).toBe("2Gi");
      // What Prometheus holds now: the grown file systems.
      const capacity = await prom!.waitFor(
        `kubelet_volume_stats_capacity_bytes${claimSelector}`,
        (x) => x.length === 2 && x.every((s) => Number(s.value[1]) > GI),
        30_000,
      );
      expect(capacity.map((s) => Number(s.value[1]))).toEqual([Math.round(2 * GI * 0.98), Math.round(2 * GI * 0.98)]);
      console.log(`autogrow with a real Prometheus on ${e2e.info.version}: ${reasons.join(" → ")}`);
    });
  },
);
