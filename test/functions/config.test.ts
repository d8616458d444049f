import { describe, expect, it } from "vitest";
import { budgetChargeOf, ConfigError, configFromEnv } from "../../functions/config.js";
import { serveFromEnv } from "../../functions/server.js";

const secret = `whsec_${btoa("0123456789abcdef0123456789abcdef")}`;

describe("configFromEnv", () => {
  it("reads a full Worker configuration", () => {
    const cfg = configFromEnv(
      {
        CLAIMSTEP_API_TOKEN: "token-aaaaaaaaaaaaaaaa, token-bbbbbbbbbbbbbbbb",
        CLAIMSTEP_WEBHOOK_SECRET: secret,
        CLAIMSTEP_NAMESPACES: "db, queues",
        CLAIMSTEP_SUBREQUEST_BUDGET: "1000",
        KUBE_API_SERVER: "https://kube.example.com/",
        KUBE_TOKEN: "sa-token",
        CF_ACCESS_CLIENT_ID: "id.access",
        CF_ACCESS_CLIENT_SECRET: "access-secret",
        SOME_KV_BINDING: { get: () => null },
      },
      { requireKube: true },
    );
    expect(cfg).toEqual({
      bearerTokens: ["token-aaaaaaaaaaaaaaaa", "token-bbbbbbbbbbbbbbbb"],
      webhookSecrets: [secret],
      namespaces: ["db", "queues"],
      bodyLimitBytes: 262144,
      subrequestBudget: 1000,
      subrequestsPerStep: 10,
      tickSeconds: 60,
      intervalSeconds: 0,
      kube: {
        server: "https://kube.example.com",
        token: "sa-token",
        headers: { "CF-Access-Client-Id": "id.access", "CF-Access-Client-Secret": "access-secret" },
      },
    });
  });

  it("lists every problem, naming the variable and never the secret values", () => {
    let error: unknown;
    try {
      configFromEnv(
        {
          CLAIMSTEP_API_TOKEN: "short-secret",
          CLAIMSTEP_WEBHOOK_SECRET: "not-whsec-value",
          CLAIMSTEP_NAMESPACES: "Bad_NS",
          CF_ACCESS_CLIENT_ID: "id-only",
        },
        { requireKube: true },
      );
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems.join("\n")).toMatch(/CLAIMSTEP_API_TOKEN: each token must be at least 16/);
    expect(problems.join("\n")).toMatch(/CLAIMSTEP_WEBHOOK_SECRET: must look like whsec_<base64>/);
    expect(problems.join("\n")).toMatch(/"Bad_NS" is not a valid namespace/);
    expect(problems.join("\n")).toMatch(/CF_ACCESS_CLIENT_SECRET: required/);
    expect(problems.join("\n")).toMatch(/KUBE_API_SERVER: required/);
    expect((error as Error).message).not.toMatch(/short-secret|not-whsec-value/);
  });

  it("refuses a webhook secret too short to be one", () => {
    expect(() => configFromEnv({ CLAIMSTEP_WEBHOOK_SECRET: `whsec_${btoa("short")}` })).toThrow(
      /CLAIMSTEP_WEBHOOK_SECRET: webhook secret is shorter than 16 bytes/,
    );
  });

  it("reads the GitOps repository without its token, which comes from its own secret", () => {
    const repo = JSON.stringify({
      provider: "github",
      repository: "acme/infra",
      pathTemplate: "claims/{namespace}/{name}.yaml",
    });
    const cfg = configFromEnv({
      CLAIMSTEP_API_TOKEN: "x".repeat(20),
      CLAIMSTEP_GITOPS_REPOSITORY: repo,
      CLAIMSTEP_GITOPS_TOKEN: "ghp_secret",
    });
    expect(cfg.gitops).toMatchObject({
      provider: "github",
      repository: "acme/infra",
      token: "ghp_secret",
      baseBranch: "main",
    });
    expect(() => configFromEnv({ CLAIMSTEP_API_TOKEN: "x".repeat(20), CLAIMSTEP_GITOPS_REPOSITORY: repo })).toThrow(
      /token is empty/,
    );
    expect(() =>
      configFromEnv({
        CLAIMSTEP_API_TOKEN: "x".repeat(20),
        CLAIMSTEP_GITOPS_REPOSITORY: JSON.stringify({ ...JSON.parse(repo), token: "inline" }),
      }),
    ).toThrow(/leave the token out of the JSON/);
    expect(() => configFromEnv({ CLAIMSTEP_API_TOKEN: "x".repeat(20), CLAIMSTEP_GITOPS_REPOSITORY: "{" })).toThrow(
      /CLAIMSTEP_GITOPS_REPOSITORY: not valid JSON/,
    );
  });

  it("refuses to start without any authentication", () => {
    expect(() => configFromEnv({})).toThrow(/no authentication configured/);
  });

  it("rejects a non-numeric budget and a non-http API server", () => {
    expect(() => configFromEnv({ CLAIMSTEP_API_TOKEN: "x".repeat(20), CLAIMSTEP_SUBREQUEST_BUDGET: "lots" })).toThrow(
      /CLAIMSTEP_SUBREQUEST_BUDGET: must be an integer/,
    );
    expect(() =>
      configFromEnv({ CLAIMSTEP_API_TOKEN: "x".repeat(20), KUBE_API_SERVER: "ftp://x", KUBE_TOKEN: "t" }),
    ).toThrow(/KUBE_API_SERVER/);
    expect(() => configFromEnv({ CLAIMSTEP_API_TOKEN: "x".repeat(20), KUBE_API_SERVER: "https://x" })).toThrow(
      /KUBE_TOKEN: required/,
    );
  });
});

// Issue 38 point 4: R3's two-minute charge, shortened by a test (the CLI reads it: functions/kube-target.ts).
describe("budgetChargeOf (CLAIMSTEP_BUDGET_CHARGE_SECONDS, tests only)", () => {
  it("unset or empty: the default (no value)", () => {
    expect(budgetChargeOf({})).toEqual({ problems: [] });
    expect(budgetChargeOf({ CLAIMSTEP_BUDGET_CHARGE_SECONDS: " " })).toEqual({ problems: [] });
  });

  it("whole seconds from 1 to the default's 120", () => {
    expect(budgetChargeOf({ CLAIMSTEP_BUDGET_CHARGE_SECONDS: "15" })).toEqual({ seconds: 15, problems: [] });
    expect(budgetChargeOf({ CLAIMSTEP_BUDGET_CHARGE_SECONDS: "120" })).toEqual({ seconds: 120, problems: [] });
    for (const bad of ["0", "121", "1.5", "2m", "-3"])
      expect(budgetChargeOf({ CLAIMSTEP_BUDGET_CHARGE_SECONDS: bad }).problems, bad).toEqual([
        "CLAIMSTEP_BUDGET_CHARGE_SECONDS: must be an integer from 1 to 120 (a test's; unset, the charge is 120)",
      ]);
  });

  it("claimstep serve reads it too: a bad value stops it before it serves", async () => {
    const env = { CLAIMSTEP_API_TOKEN: "0123456789abcdef", CLAIMSTEP_BUDGET_CHARGE_SECONDS: "0" };
    await expect(serveFromEnv({ env, cluster: "sim", port: 0, log: () => {} })).rejects.toThrow(
      /CLAIMSTEP_BUDGET_CHARGE_SECONDS: must be an integer from 1 to 120/,
    );
  });
});
