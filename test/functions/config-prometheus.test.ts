// CLAIMSTEP_PROMETHEUS_*: autogrow's metrics configuration, validated with the other variables,
// errors naming the variable and the fix, never a value; the wiring hands a PrometheusMetrics to
// every step.
import { describe, expect, it } from "vitest";
import { KubeClient } from "../../adapters/kube/client.js";
import { PrometheusMetrics } from "../../adapters/metrics/prometheus.js";
import { RecentIds } from "../../functions/auth.js";
import { ConfigError, configFromEnv, prometheusConfig } from "../../functions/config.js";
import { wire } from "../../functions/wiring.js";

const BASE = { CLAIMSTEP_API_TOKEN: "token-aaaaaaaaaaaaaaaa" };

const problems = (env: Record<string, string>): string[] => {
  try {
    configFromEnv({ ...BASE, ...env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe("CLAIMSTEP_PROMETHEUS_*", () => {
  it("absent: no metrics", () => {
    expect(configFromEnv(BASE).prometheus).toBeUndefined();
  });

  it("a URL alone, a bearer token, or basic auth; the timeout in seconds", () => {
    expect(
      configFromEnv({ ...BASE, CLAIMSTEP_PROMETHEUS_URL: "http://prometheus-operated.monitoring:9090/" }).prometheus,
    ).toEqual({ url: "http://prometheus-operated.monitoring:9090", timeoutMs: 10_000 });
    expect(
      configFromEnv({
        ...BASE,
        CLAIMSTEP_PROMETHEUS_URL: "https://thanos.example.com/prom",
        CLAIMSTEP_PROMETHEUS_TOKEN: "tok",
        CLAIMSTEP_PROMETHEUS_TIMEOUT_SECONDS: "3",
      }).prometheus,
    ).toEqual({
      url: "https://thanos.example.com/prom",
      token: "tok",
      timeoutMs: 3_000,
    });
    expect(
      configFromEnv({
        ...BASE,
        CLAIMSTEP_PROMETHEUS_URL: "https://vm.example.com",
        CLAIMSTEP_PROMETHEUS_USERNAME: "claimstep",
        CLAIMSTEP_PROMETHEUS_PASSWORD: "pw",
      }).prometheus,
    ).toEqual({
      url: "https://vm.example.com",
      basic: { username: "claimstep", password: "pw" },
      timeoutMs: 10_000,
    });
  });

  it.each([
    [
      { CLAIMSTEP_PROMETHEUS_URL: "prometheus:9090" },
      /CLAIMSTEP_PROMETHEUS_URL: expected the http\(s\) URL of a Prometheus HTTP API/,
    ],
    [{ CLAIMSTEP_PROMETHEUS_URL: "ftp://prometheus" }, /CLAIMSTEP_PROMETHEUS_URL: expected the http\(s\) URL/],
    [
      { CLAIMSTEP_PROMETHEUS_URL: "https://u:s3cret@prom.example.com" },
      /CLAIMSTEP_PROMETHEUS_URL: leave credentials out of the URL/,
    ],
    [
      { CLAIMSTEP_PROMETHEUS_URL: "https://prom.example.com/api/v1/query" },
      /without \/api\/v1 or a query \(claimstep adds \/api\/v1\/query\)/,
    ],
    [{ CLAIMSTEP_PROMETHEUS_URL: "https://prom.example.com?x=1" }, /without \/api\/v1 or a query/],
    [{ CLAIMSTEP_PROMETHEUS_TOKEN: "s3cret" }, /CLAIMSTEP_PROMETHEUS_TOKEN: set only with CLAIMSTEP_PROMETHEUS_URL/],
    [
      {
        CLAIMSTEP_PROMETHEUS_URL: "https://p",
        CLAIMSTEP_PROMETHEUS_TOKEN: "s3cret",
        CLAIMSTEP_PROMETHEUS_USERNAME: "u",
        CLAIMSTEP_PROMETHEUS_PASSWORD: "s3cret",
      },
      /a bearer token or basic auth, not both/,
    ],
    [
      { CLAIMSTEP_PROMETHEUS_URL: "https://p", CLAIMSTEP_PROMETHEUS_USERNAME: "u" },
      /CLAIMSTEP_PROMETHEUS_USERNAME and CLAIMSTEP_PROMETHEUS_PASSWORD: basic auth needs both/,
    ],
    [{ CLAIMSTEP_PROMETHEUS_URL: "https://p", CLAIMSTEP_PROMETHEUS_PASSWORD: "s3cret" }, /basic auth needs both/],
    [
      { CLAIMSTEP_PROMETHEUS_URL: "https://p", CLAIMSTEP_PROMETHEUS_TIMEOUT_SECONDS: "0.5" },
      /CLAIMSTEP_PROMETHEUS_TIMEOUT_SECONDS: must be an integer ≥ 1/,
    ],
  ])("%j is refused: %s", (env, message) => {
    const found = problems(env);
    expect(found.join("\n")).toMatch(message);
    expect(found.join("\n")).not.toContain("s3cret");
  });

  it("the CLI reads them alone, without the server's variables", () => {
    expect(prometheusConfig({ CLAIMSTEP_PROMETHEUS_URL: "http://localhost:9090" })).toEqual({
      config: { url: "http://localhost:9090", timeoutMs: 10_000 },
      problems: [],
    });
    expect(prometheusConfig({})).toEqual({ problems: [] });
  });

  it("the wiring gives the app, the sweep and the webhook routes a PrometheusMetrics over its fetch", async () => {
    const fetched: string[] = [];
    const f = async (url: string) => {
      fetched.push(url);
      return Response.json({ status: "success", data: { resultType: "vector", result: [] } });
    };
    const config = configFromEnv({ ...BASE, CLAIMSTEP_PROMETHEUS_URL: "http://prom.test:9090" });
    const w = wire({
      client: new KubeClient({ server: "https://kube.test" }),
      config,
      now: () => new Date(),
      replay: new RecentIds(),
      fetch: f,
    });
    expect(w.deps.metrics).toBeInstanceOf(PrometheusMetrics);
    await w.deps.metrics!.usage({ namespace: "default", name: "web" }, ["data-web-0"]);
    expect(fetched).toEqual([expect.stringMatching(/^http:\/\/prom\.test:9090\/api\/v1\/query\?query=/)]);
    expect(
      wire({
        client: new KubeClient({ server: "https://kube.test" }),
        config: configFromEnv(BASE),
        now: () => new Date(),
        replay: new RecentIds(),
      }).deps.metrics,
    ).toBeUndefined();
  });
});
