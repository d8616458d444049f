// B7 and B3-alarms on small sizes: the arithmetic and the counts, no timings.
import { describe, expect, it } from "vitest";
import { runRollout } from "../../bench/b3-rollout.js";
import { judgeB7, runB3Alarms, runB7 } from "../../bench/b7-fleet.js";

describe("B3 with alarms", () => {
  it("steps at each decision's requeueAfter after the cron's first poke: the pick-up is half a period", async () => {
    const r = await runRollout({
      replicas: 4,
      maxUnavailable: 1,
      resizeLatencyMs: 60_000,
      trigger: { kind: "alarm", periodMs: 60_000, label: "alarms" },
    });
    expect(r.pickUpMs).toBe(30_000);
    expect(r.claimWrites).toBe(4);
    expect((r.totalMs - r.pickUpMs!) / r.idealMs).toBeLessThanOrEqual(1.05);
  });
});

describe("B7", () => {
  it("every set of every cluster is stepped once, each invocation within the subrequest budget", async () => {
    const b7 = await runB7(() => {}, { clusters: 3, setsPerCluster: 4, replicas: 1 });
    expect(b7.cron.sent).toBe(12);
    expect(b7.queue.poked).toBe(12);
    expect(b7.steppedInTick).toBe(12);
    expect(b7.alarms.outcomes).toEqual({ "ClaimUpdated/applied": 12 });
    // Per cluster: its gate, one LIST of the sets, one of the re-create records (a set deleted mid
    // re-create is found by its record), one batch.
    expect(b7.cron.subrequestsMax).toBe(12);
    expect(b7.alarms.subrequestsMax).toBeLessThanOrEqual(10);
    const b3a = await runB3Alarms(() => {}, { replicas: 2, k: [1] });
    const verdicts = judgeB7(b7, b3a);
    expect(verdicts.map((v) => v.id)).toEqual([
      "B7 12 sets across 3 clusters in one cron period",
      "B7 subrequests per invocation",
      "B7 CPU per invocation",
      "B3-alarms rollout time, alarms (cron 60 s)",
      "B3-alarms rollout time, alarms (cron 300 s)",
    ]);
    expect(verdicts[1]!.met).toBe(true);
  });
});
