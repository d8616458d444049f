// PrometheusMetrics against a fake Prometheus behind msw answering the real API's bodies: the one
// instant query, latest samples, claims missing a metric, an empty result, the API's errors
// (bad_data 400, 503), a timeout, an HTML page of a proxy, an unreachable server; auth headers
// sent, and never a credential in a message.
import { delay, HttpResponse, http } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PrometheusMetrics, regexLiteral, usageQuery } from "../../../adapters/metrics/prometheus.js";

const PROM = "http://prometheus.test:9090";
const REF = { namespace: "default", name: "web" };
const CLAIMS = ["data-web-0", "data-web-1", "data-web-2"];
const GI = 1024 ** 3;
const T = 1732962000.123;

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const labels = (name: string, claim: string, node = "node-a") => ({
  __name__: name,
  endpoint: "https-metrics",
  instance: "10.0.0.11:10250",
  job: "kubelet",
  metrics_path: "/metrics",
  namespace: "default",
  node,
  persistentvolumeclaim: claim,
  service: "kube-prometheus-stack-kubelet",
});
const series = (name: "used" | "capacity", claim: string, bytes: number, at = T, node?: string) => ({
  metric: labels(`kubelet_volume_stats_${name}_bytes`, claim, node),
  value: [at, String(bytes)],
});
const success = (result: unknown[]) => ({ status: "success", data: { resultType: "vector", result } });

/** The fake answers `body` with `status`, recording each request. */
function answer(body: unknown, status = 200, init: { contentType?: string } = {}) {
  const seen: Request[] = [];
  server.use(
    http.all(`${PROM}/api/v1/query`, ({ request }) => {
      seen.push(request.clone());
      if (typeof body === "string")
        return new HttpResponse(body, { status, headers: { "Content-Type": init.contentType ?? "text/html" } });
      return HttpResponse.json(body as Record<string, unknown>, { status });
    }),
  );
  return seen;
}

const metrics = (extra: Partial<ConstructorParameters<typeof PrometheusMetrics>[0]> = {}) =>
  new PrometheusMetrics({ url: PROM, ...extra });

describe("the query", () => {
  it("is one instant GET of both metrics for the set's claims in its namespace, names escaped", async () => {
    const seen = answer(success([]));
    await metrics().usage(REF, CLAIMS);
    expect(seen).toHaveLength(1);
    const url = new URL(seen[0]!.url);
    expect(seen[0]!.method).toBe("GET");
    expect(url.pathname).toBe("/api/v1/query");
    expect(url.searchParams.get("query")).toBe(
      '{__name__=~"kubelet_volume_stats_used_bytes|kubelet_volume_stats_capacity_bytes",namespace="default",persistentvolumeclaim=~"data-web-0|data-web-1|data-web-2"}',
    );
    expect(seen[0]!.headers.get("accept")).toBe("application/json");
    expect(seen[0]!.headers.has("authorization")).toBe(false);
  });

  it("escapes regex metacharacters of names (a dot matches only a dot)", () => {
    expect(regexLiteral("data.web-0")).toBe("data\\.web-0");
    expect(usageQuery("ns", ["a.b"])).toContain('persistentvolumeclaim=~"a\\\\.b"');
  });

  it("goes as a POST form when the URL would be long (many claims)", async () => {
    const seen = answer(success([]));
    const many = Array.from({ length: 200 }, (_, i) => `data-web-${i}`);
    await metrics().usage(REF, many);
    expect(seen[0]!.method).toBe("POST");
    expect(seen[0]!.headers.get("content-type")).toBe("application/x-www-form-urlencoded");
    const form = new URLSearchParams(await seen[0]!.text());
    expect(form.get("query")).toBe(usageQuery("default", many));
  });

  it("keeps a path prefix of the URL (a Thanos or Mimir behind a proxy path)", async () => {
    server.use(
      http.get("https://mimir.test/prometheus/api/v1/query", () =>
        HttpResponse.json(success([series("used", "data-web-0", 1), series("capacity", "data-web-0", 2)])),
      ),
    );
    expect(await new PrometheusMetrics({ url: "https://mimir.test/prometheus/" }).usage(REF, ["data-web-0"])).toEqual({
      ok: true,
      volumes: [{ claim: "data-web-0", usedBytes: 1n, capacityBytes: 2n }],
    });
  });

  it("sends a bearer token, or basic auth", async () => {
    const seen = answer(success([]));
    await metrics({ token: "s3cr3t-token" }).usage(REF, CLAIMS);
    await metrics({ basic: { username: "claimstep", password: "pä55" } }).usage(REF, CLAIMS);
    expect(seen[0]!.headers.get("authorization")).toBe("Bearer s3cr3t-token");
    expect(seen[1]!.headers.get("authorization")).toBe(`Basic ${Buffer.from("claimstep:pä55").toString("base64")}`);
  });

  it("refuses a token and basic auth together", () => {
    expect(() => metrics({ token: "t", basic: { username: "u", password: "p" } })).toThrow(/not both/);
  });

  it("costs no request for a set without claims", async () => {
    const seen = answer(success([]));
    expect(await metrics().usage(REF, [])).toEqual({ ok: true, volumes: [] });
    expect(seen).toHaveLength(0);
  });
});

describe("a success", () => {
  it("gives used and capacity per claim, in the claims' order", async () => {
    answer(
      success([
        series("capacity", "data-web-2", GI),
        series("used", "data-web-2", 0.9 * GI),
        series("used", "data-web-0", 1024),
        series("capacity", "data-web-0", GI),
      ]),
    );
    expect(await metrics().usage(REF, CLAIMS)).toEqual({
      ok: true,
      volumes: [
        { claim: "data-web-0", usedBytes: 1024n, capacityBytes: BigInt(GI) },
        { claim: "data-web-2", usedBytes: BigInt(Math.round(0.9 * GI)), capacityBytes: BigInt(GI) },
      ],
    });
  });

  it("takes the latest sample when several series report one claim (two kubelets during a move)", async () => {
    answer(
      success([
        series("used", "data-web-1", 100, T + 30, "node-b"),
        series("used", "data-web-1", 900, T, "node-a"),
        series("capacity", "data-web-1", 1000, T, "node-a"),
        series("capacity", "data-web-1", 2000, T + 30, "node-b"),
      ]),
    );
    expect(await metrics().usage(REF, CLAIMS)).toEqual({
      ok: true,
      volumes: [{ claim: "data-web-1", usedBytes: 100n, capacityBytes: 2000n }],
    });
  });

  it("leaves out claims missing one of the two metrics, and values that are not sizes (NaN)", async () => {
    answer(
      success([
        series("used", "data-web-0", 5),
        series("capacity", "data-web-1", 10),
        series("used", "data-web-2", 5),
        series("capacity", "data-web-2", 10),
        { ...series("used", "data-web-1", 0), value: [T, "NaN"] },
      ]),
    );
    expect(await metrics().usage(REF, CLAIMS)).toEqual({
      ok: true,
      volumes: [{ claim: "data-web-2", usedBytes: 5n, capacityBytes: 10n }],
    });
  });

  it("reads values in exponent notation (as some implementations format them)", async () => {
    answer(
      success([
        { ...series("used", "data-web-0", 0), value: [T, "1.073741824e+09"] },
        series("capacity", "data-web-0", 2 * GI),
      ]),
    );
    expect(await metrics().usage(REF, CLAIMS)).toEqual({
      ok: true,
      volumes: [{ claim: "data-web-0", usedBytes: BigInt(GI), capacityBytes: BigInt(2 * GI) }],
    });
  });

  it("an empty result names the claims and asks whether the kubelet is scraped", async () => {
    answer(success([]));
    const r = await metrics().usage(REF, CLAIMS);
    expect(r).toEqual({
      ok: false,
      message: expect.stringContaining(
        "Prometheus at http://prometheus.test:9090 has no kubelet_volume_stats for default/data-web-0, default/data-web-1, default/data-web-2: is the kubelet scraped",
      ),
    });
  });

  it("an empty result of many claims names five and counts the rest", async () => {
    answer(success([]));
    const r = await metrics().usage(
      REF,
      Array.from({ length: 8 }, (_, i) => `data-web-${i}`),
    );
    expect(!r.ok && r.message).toMatch(/default\/data-web-4 and 3 more: is the kubelet scraped/);
  });

  it("a result that is not a vector, or a malformed one, says so", async () => {
    answer({ status: "success", data: { resultType: "matrix", result: [] } });
    expect(await metrics().usage(REF, CLAIMS)).toEqual({
      ok: false,
      message: expect.stringMatching(/answered a matrix, not a vector/),
    });
    answer(success([{ metric: labels("kubelet_volume_stats_used_bytes", "data-web-0"), value: [T, 5] }]));
    expect(await metrics().usage(REF, CLAIMS)).toEqual({
      ok: false,
      message: expect.stringMatching(
        /a vector that is not well-formed \(result\.0\.value: expected \[<unix time>, "<value>"\]\)/,
      ),
    });
  });
});

describe("failures: a reading that says why, never a throw", () => {
  it("a query error (bad_data, 400) in the server's words", async () => {
    answer(
      {
        status: "error",
        errorType: "bad_data",
        error: 'invalid parameter "query": 1:45: parse error: unexpected "}" in label matching, expected string',
      },
      400,
    );
    expect(await metrics().usage(REF, CLAIMS)).toEqual({
      ok: false,
      message:
        'Prometheus at http://prometheus.test:9090 refused the query (HTTP 400, bad_data): invalid parameter "query": 1:45: parse error: unexpected "}" in label matching, expected string',
    });
  });

  it("an execution error (422) and a query timeout (503)", async () => {
    answer({ status: "error", errorType: "execution", error: "expanding series: context deadline exceeded" }, 422);
    expect(await metrics().usage(REF, CLAIMS)).toMatchObject({
      ok: false,
      message: expect.stringContaining("(HTTP 422, execution): expanding series"),
    });
    answer({ status: "error", errorType: "timeout", error: "query timed out in expression evaluation" }, 503);
    expect(await metrics().usage(REF, CLAIMS)).toMatchObject({
      ok: false,
      message: expect.stringContaining("(HTTP 503, timeout): query timed out in expression evaluation"),
    });
  });

  it("a 503 of a proxy in front (HTML), naming the URL", async () => {
    answer(
      "<html><head><title>503 Service Temporarily Unavailable</title></head><body><center><h1>503</h1></center><hr><center>nginx</center></body></html>",
      503,
    );
    expect(await metrics().usage(REF, CLAIMS)).toEqual({
      ok: false,
      message:
        "Prometheus at http://prometheus.test:9090 answered HTTP 503 with a non-JSON body (text/html: 503 Service Temporarily Unavailable): is that the URL of the Prometheus HTTP API?",
    });
  });

  it("an HTML login page with 200 (an auth proxy) is no reading", async () => {
    answer("<!doctype html><html><head><title>Sign in · Grafana</title></head><body>…</body></html>", 200);
    expect(await metrics().usage(REF, CLAIMS)).toMatchObject({
      ok: false,
      message: expect.stringContaining("HTTP 200 with a non-JSON body (text/html: Sign in · Grafana)"),
    });
  });

  it("401 names the credentials to check, never their values", async () => {
    answer("Unauthorized\n", 401, { contentType: "text/plain" });
    const viaJson = await metrics({ token: "s3cr3t-token" }).usage(REF, CLAIMS);
    expect(viaJson).toMatchObject({ ok: false, message: expect.stringContaining("HTTP 401") });
    answer({ message: "invalid token" }, 401);
    const r = await metrics({ token: "s3cr3t-token" }).usage(REF, CLAIMS);
    expect(r).toEqual({
      ok: false,
      message: expect.stringMatching(/refused the credentials \(HTTP 401\): check CLAIMSTEP_PROMETHEUS_TOKEN/),
    });
    expect(JSON.stringify([viaJson, r])).not.toContain("s3cr3t");
  });

  it("a JSON body that is not the API's (a 404 of another service)", async () => {
    answer({ error: "not found" }, 404);
    expect(await metrics().usage(REF, CLAIMS)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/answered HTTP 404 with a body that is not a Prometheus API response/),
    });
  });

  it("an unreachable server, naming the URL without credentials", async () => {
    server.use(http.get(`${PROM}/api/v1/query`, () => HttpResponse.error()));
    const r = await new PrometheusMetrics({ url: PROM, basic: { username: "u", password: "pa55word" } }).usage(
      REF,
      CLAIMS,
    );
    expect(r).toEqual({
      ok: false,
      message: expect.stringMatching(/^Prometheus at http:\/\/prometheus\.test:9090 is unreachable \(/),
    });
    expect(JSON.stringify(r)).not.toContain("pa55word");
  });

  it("a server that does not answer in time", async () => {
    server.use(
      http.get(`${PROM}/api/v1/query`, async () => {
        await delay("infinite");
        return HttpResponse.json(success([]));
      }),
    );
    const started = Date.now();
    const r = await metrics({ timeoutMs: 200 }).usage(REF, CLAIMS);
    expect(r).toEqual({ ok: false, message: "Prometheus at http://prometheus.test:9090 did not answer within 0.2 s" });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("a cancelled step's query", async () => {
    server.use(
      http.get(`${PROM}/api/v1/query`, async () => {
        await delay("infinite");
        return HttpResponse.json(success([]));
      }),
    );
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 50);
    expect(await metrics().usage(REF, CLAIMS, abort.signal)).toEqual({
      ok: false,
      message: "the query to Prometheus at http://prometheus.test:9090 was cancelled",
    });
  });
});
