// CLAIMSTEP_LEASE*: read and checked with the rest of the configuration (functions/config.ts).
import { describe, expect, it } from "vitest";
import { type ConfigError, configFromEnv } from "../../../functions/config.js";
import { leaseConfig, leaseIdentity } from "../../../functions/lease/config.js";

const base = { CLAIMSTEP_API_TOKEN: "token-aaaaaaaaaaaaaaaa", CLAIMSTEP_INTERVAL_SECONDS: "60" };
const problems = (env: Record<string, string>): string[] => {
  try {
    configFromEnv({ ...base, ...env });
    return [];
  } catch (err) {
    return (err as ConfigError).problems;
  }
};

describe("CLAIMSTEP_LEASE", () => {
  it("is off unless set to true", () => {
    expect(configFromEnv(base).lease).toBeUndefined();
    expect(configFromEnv({ ...base, CLAIMSTEP_LEASE: "false" }).lease).toBeUndefined();
  });

  it("true: the Lease claimstep/claimstep-sweeper, 15 s, renewed every 5 s, unless told", () => {
    expect(configFromEnv({ ...base, CLAIMSTEP_LEASE: "true" }).lease).toEqual({
      namespace: "claimstep",
      name: "claimstep-sweeper",
      durationSeconds: 15,
      renewSeconds: 5,
    });
    expect(
      configFromEnv({
        ...base,
        CLAIMSTEP_LEASE: "TRUE",
        CLAIMSTEP_LEASE_NAMESPACE: "ops",
        CLAIMSTEP_LEASE_DURATION_SECONDS: "30",
        CLAIMSTEP_LEASE_RENEW_SECONDS: "10",
      }).lease,
    ).toEqual({
      namespace: "ops",
      name: "claimstep-sweeper",
      durationSeconds: 30,
      renewSeconds: 10,
    });
  });

  it("names each bad variable and the fix, never its value", () => {
    expect(problems({ CLAIMSTEP_LEASE: "yes" })).toEqual(["CLAIMSTEP_LEASE: must be true or false"]);
    expect(problems({ CLAIMSTEP_LEASE: "true", CLAIMSTEP_LEASE_DURATION_SECONDS: "2" })).toEqual([
      "CLAIMSTEP_LEASE_DURATION_SECONDS: must be an integer ≥ 3",
    ]);
    expect(problems({ CLAIMSTEP_LEASE: "true", CLAIMSTEP_LEASE_RENEW_SECONDS: "0.5" })).toEqual([
      "CLAIMSTEP_LEASE_RENEW_SECONDS: must be an integer ≥ 1",
    ]);
    expect(problems({ CLAIMSTEP_LEASE: "true", CLAIMSTEP_LEASE_RENEW_SECONDS: "6" })).toEqual([
      "CLAIMSTEP_LEASE_RENEW_SECONDS: must be at most a third of CLAIMSTEP_LEASE_DURATION_SECONDS (defaults: 5 and 15)",
    ]);
    expect(problems({ CLAIMSTEP_LEASE: "true", CLAIMSTEP_LEASE_NAMESPACE: "Kube_System" })).toEqual([
      "CLAIMSTEP_LEASE_NAMESPACE: not a valid namespace name",
    ]);
    expect(problems({ CLAIMSTEP_LEASE: "true", CLAIMSTEP_INTERVAL_SECONDS: "0" })).toEqual([
      "CLAIMSTEP_LEASE: elects the replica that sweeps; set CLAIMSTEP_INTERVAL_SECONDS too (e.g. 60)",
    ]);
    expect(problems({ CLAIMSTEP_LEASE_DURATION_SECONDS: "30" })).toEqual([
      "CLAIMSTEP_LEASE_DURATION_SECONDS: set only with CLAIMSTEP_LEASE=true (several server replicas electing one sweeper)",
    ]);
    expect(leaseConfig({ CLAIMSTEP_LEASE: "false", CLAIMSTEP_LEASE_DURATION_SECONDS: "30" })).toEqual({ problems: [] });
  });
});

describe("leaseIdentity", () => {
  it("is the pod name (HOSTNAME), else claimstep: the Elector adds the random part (issue 37, item 5e)", () => {
    expect(leaseIdentity("claimstep-7d9f8b6c4-x2x9q")).toBe("claimstep-7d9f8b6c4-x2x9q");
    expect(leaseIdentity(undefined)).toBe("claimstep");
    expect(leaseIdentity(" ")).toBe("claimstep");
  });
});
