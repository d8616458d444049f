// The pure parts of fleet mode: the clusters' configuration, message routing, the alarm after a
// step, and the backoff of a cluster.
import { describe, expect, it } from "vitest";
import { clusterNamed, fleetFromEnv } from "../../../functions/fleet/clusters.js";
import {
  batches,
  REPLAY_SHARDS,
  replayObjectName,
  StepMessage,
  setObjectName,
  stepMessage,
} from "../../../functions/fleet/routing.js";
import {
  alarmAfterStep,
  backoffMs,
  failed,
  HEALTHY,
  isClusterFailure,
  isOpen,
  nextAlarmAt,
} from "../../../functions/fleet/schedule.js";

const clusters = (list: unknown) => JSON.stringify(list);
const eu = { name: "eu-1", server: "https://kube-eu-1.example.com/", tokenSecret: "KUBE_TOKEN_EU_1" };

describe("fleetFromEnv", () => {
  it("reads KUBE_API_SERVER as the default cluster and the listed ones, each with its secret", () => {
    const { fleet, problems } = fleetFromEnv(
      {
        KUBE_API_SERVER: "https://kube.example.com",
        KUBE_TOKEN: "t0",
        CLAIMSTEP_CLUSTERS: clusters([
          eu,
          { ...eu, name: "us-1", tokenSecret: "KUBE_TOKEN_US_1", namespaces: ["prod"] },
        ]),
        KUBE_TOKEN_EU_1: "t1",
        KUBE_TOKEN_US_1: "t2",
      },
      ["default"],
    );
    expect(problems).toEqual([]);
    expect(fleet!.defaultCluster).toBe("default");
    expect(fleet!.clusters).toEqual([
      { name: "default", server: "https://kube.example.com", token: "t0", namespaces: ["default"] },
      { name: "eu-1", server: "https://kube-eu-1.example.com", token: "t1", namespaces: ["default"] },
      { name: "us-1", server: "https://kube-eu-1.example.com", token: "t2", namespaces: ["prod"] },
    ]);
  });

  it("makes the first listed cluster the default without KUBE_API_SERVER", () => {
    const { fleet } = fleetFromEnv({ CLAIMSTEP_CLUSTERS: clusters([eu]), KUBE_TOKEN_EU_1: "t1" }, []);
    expect(fleet!.defaultCluster).toBe("eu-1");
  });

  it("names the cluster, the field and the fix; never a value", () => {
    const { problems } = fleetFromEnv(
      {
        KUBE_API_SERVER: "https://kube.example.com",
        KUBE_TOKEN: "t0",
        CLAIMSTEP_CLUSTERS: clusters([
          { ...eu, tokenSecret: "KUBE_TOKEN_MISSING" },
          { name: "Bad_Name", server: "ftp://x", tokenSecret: "lower" },
          { name: "default", server: "https://a.example.com", tokenSecret: "KUBE_TOKEN_EU_1" },
          { name: "inline", server: "https://a.example.com", token: "s3cr3t-value" },
          { ...eu, name: "ca", caBundle: "not pem" },
        ]),
        KUBE_TOKEN_EU_1: "t1",
      },
      [],
    );
    expect(problems).toContain(
      'CLAIMSTEP_CLUSTERS cluster "eu-1": the secret KUBE_TOKEN_MISSING is not set (`npx wrangler secret put KUBE_TOKEN_MISSING`)',
    );
    expect(problems.filter((p) => p.startsWith('CLAIMSTEP_CLUSTERS cluster "Bad_Name"'))).toHaveLength(3);
    expect(
      problems.some((p) =>
        p.includes(
          'cluster "default": the name is used twice (KUBE_API_SERVER is the cluster named by CLAIMSTEP_DEFAULT_CLUSTER)',
        ),
      ),
    ).toBe(true);
    expect(problems).toContain(
      'CLAIMSTEP_CLUSTERS cluster "inline": leave the token out of the JSON; put it in a secret and name it in tokenSecret',
    );
    expect(problems.some((p) => p.startsWith('CLAIMSTEP_CLUSTERS cluster "ca": caBundle: must be PEM'))).toBe(true);
    expect(problems.join("\n")).not.toContain("s3cr3t-value");
    expect(fleetFromEnv({ CLAIMSTEP_CLUSTERS: "{" }, []).problems[0]).toMatch(
      /^CLAIMSTEP_CLUSTERS: not valid JSON; CLAIMSTEP_CLUSTERS must be a JSON array such as/,
    );
    expect(fleetFromEnv({}, []).problems).toEqual([
      "no cluster configured: set KUBE_API_SERVER and the secret KUBE_TOKEN, or CLAIMSTEP_CLUSTERS",
    ]);
  });

  it("clusterNamed: an unknown cluster names the configured ones and the fix", () => {
    const { fleet } = fleetFromEnv({ CLAIMSTEP_CLUSTERS: clusters([eu]), KUBE_TOKEN_EU_1: "t1" }, []);
    expect(clusterNamed(fleet!, "eu-1")).toMatchObject({ cluster: { name: "eu-1" } });
    expect(clusterNamed(fleet!, "mars")).toEqual({
      error: 'cluster "mars" is not configured (configured: eu-1); add it to CLAIMSTEP_CLUSTERS',
    });
  });
});

describe("routing", () => {
  it("one object per set of a cluster; messages validated", () => {
    const ref = { namespace: "prod", name: "db" };
    expect(setObjectName("eu-1", ref)).toBe("set:eu-1/prod/db");
    expect(setObjectName("us-1", ref)).not.toBe(setObjectName("eu-1", ref));
    expect(StepMessage.safeParse(stepMessage("eu-1", ref)).success).toBe(true);
    expect(StepMessage.safeParse({ v: 1, cluster: "eu-1", namespace: "../x", name: "db" }).success).toBe(false);
    expect(StepMessage.safeParse({ v: 2, cluster: "eu-1", namespace: "prod", name: "db" }).success).toBe(false);
  });

  it("replay ids spread over the shards, the same id always to the same one", () => {
    const shards = new Set(Array.from({ length: 200 }, (_, i) => replayObjectName(`msg_${i}`)));
    expect(shards.size).toBe(REPLAY_SHARDS);
    expect(replayObjectName("msg_1")).toBe(replayObjectName("msg_1"));
  });

  it("batches of at most 100 messages", () => {
    expect(batches(Array.from({ length: 250 }, (_, i) => i)).map((b) => b.length)).toEqual([100, 100, 50]);
  });
});

describe("schedule", () => {
  const now = 1_000_000;
  it("the alarm is the decision's requeueAfter, clamped; none without one", () => {
    expect(nextAlarmAt(now, 10)).toBe(now + 10_000);
    expect(nextAlarmAt(now, 0)).toBe(now + 1_000);
    expect(nextAlarmAt(now, 1e9)).toBe(now + 3_600_000);
    expect(nextAlarmAt(now, undefined)).toBeUndefined();
  });

  it("backoff doubles from 5 s to 5 min and never undercuts Retry-After", () => {
    expect([1, 2, 3, 4, 10].map((n) => backoffMs(n, undefined))).toEqual([5_000, 10_000, 20_000, 40_000, 300_000]);
    expect(backoffMs(1, 30)).toBe(30_000);
    expect(backoffMs(1, 10_000)).toBe(300_000);
  });

  it("a cluster's backoff grows with each failure and holds until it ends", () => {
    const once = failed(HEALTHY, now);
    expect(once).toEqual({ failures: 1, untilMs: now + 5_000 });
    const twice = failed(once, now + 5_000, 60);
    expect(twice).toEqual({ failures: 2, untilMs: now + 65_000 });
    expect(isOpen(twice, now + 64_999)).toBe(false);
    expect(isOpen(twice, now + 65_000)).toBe(true);
  });

  it("429, 5xx, timeouts and unreachable are the cluster's; 404, 409, 403 are not", () => {
    expect([429, 500, 503].map((code) => isClusterFailure({ code }))).toEqual([true, true, true]);
    expect(isClusterFailure({ kind: "Timeout" })).toBe(true);
    expect([404, 409, 403].map((code) => isClusterFailure({ code, kind: "Other" }))).toEqual([false, false, false]);
  });

  it("after a step: backoff wins, then a trigger during the step, then the decision", () => {
    expect(alarmAfterStep({ nowMs: now, requeueAfterSeconds: 2 })).toBe(now + 2_000);
    expect(alarmAfterStep({ nowMs: now })).toBeUndefined();
    expect(alarmAfterStep({ nowMs: now, triggeredDuringStep: true })).toBe(now);
    expect(
      alarmAfterStep({ nowMs: now, requeueAfterSeconds: 2, backoffUntilMs: now + 40_000, triggeredDuringStep: true }),
    ).toBe(now + 40_000);
  });
});
