// GET /metrics on the Node server (docs/operating.md "Metrics"): on the main port behind a bearer
// token (an API token or CLAIMSTEP_METRICS_TOKEN), and, with CLAIMSTEP_METRICS_ADDR, without one on
// an address of its own (for a Prometheus inside the cluster's network). The app's fetch is
// wrapped: the wrapper answers /metrics and counts the deliveries and admission reviews by their
// answers, so the routes themselves (shared with the Worker) know nothing of metrics. Node only.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { PromRecorder } from "../adapters/metrics-node/registry.js";
import type { Recorder } from "../core/view/index.js";
import { bearerMatches } from "./auth.js";
import { deliveryOf } from "./observe.js";

/** A metrics token is a bearer token: as long as an API token must be. */
export const MIN_METRICS_TOKEN_LENGTH = 16;

export interface MetricsConfig {
  /** Bearer tokens GET /metrics on the main port accepts: the API tokens and CLAIMSTEP_METRICS_TOKEN. */
  tokens: string[];
  /** CLAIMSTEP_METRICS_ADDR: serve /metrics, unauthenticated, here too. */
  addr?: { host: string; port: number };
}

/** CLAIMSTEP_METRICS_TOKEN (comma-separated) and CLAIMSTEP_METRICS_ADDR (host:port); a bad value throws, naming the variable and the fix. */
export function metricsConfigFromEnv(
  env: Record<string, string | undefined>,
  apiTokens: readonly string[],
): MetricsConfig {
  const own = (env.CLAIMSTEP_METRICS_TOKEN ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  if (own.some((t) => t.length < MIN_METRICS_TOKEN_LENGTH)) {
    throw new Error(
      `CLAIMSTEP_METRICS_TOKEN: each token must be at least ${MIN_METRICS_TOKEN_LENGTH} characters (e.g. \`openssl rand -hex 32\`)`,
    );
  }
  const raw = env.CLAIMSTEP_METRICS_ADDR?.trim();
  let addr: MetricsConfig["addr"];
  if (raw) {
    const m = /^(\[[0-9a-fA-F:]+\]|[^\s:/]+):(\d+)$/.exec(raw);
    if (!m)
      throw new Error(
        `CLAIMSTEP_METRICS_ADDR: ${JSON.stringify(raw)} is not host:port; write e.g. 127.0.0.1:9464 (or 0.0.0.0:9464 for the pod's network)`,
      );
    const port = Number(m[2]);
    if (port < 1 || port > 65535)
      throw new Error(`CLAIMSTEP_METRICS_ADDR: port ${m[2]} is out of range; choose a port from 1 to 65535, e.g. 9464`);
    addr = { host: m[1]!.replace(/^\[|\]$/g, ""), port };
  }
  return { tokens: [...apiTokens, ...own], ...(addr ? { addr } : {}) };
}

type AppFetch = (request: Request, ...rest: any[]) => Response | Promise<Response>;

const problem = (status: number, error: string, message: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ error, message }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });

/** The exposition, as GET /metrics answers it. */
export async function metricsResponse(recorder: PromRecorder): Promise<Response> {
  return new Response(await recorder.metrics(), {
    status: 200,
    headers: { "content-type": recorder.contentType, "cache-control": "no-store" },
  });
}

/**
 * The app's fetch with GET /metrics in front (bearer: `tokens`), the deliveries and the admission
 * reviews counted by their answers.
 */
export function instrumentFetch(appFetch: AppFetch, recorder: PromRecorder, tokens: readonly string[]): AppFetch {
  return async (request, ...rest) => {
    const path = new URL(request.url).pathname;
    if (path === "/metrics") {
      if (request.method !== "GET" && request.method !== "HEAD")
        return problem(405, "MethodNotAllowed", "use GET /metrics", { allow: "GET, HEAD" });
      if (!(await bearerMatches(request.headers.get("authorization") ?? undefined, tokens))) {
        return problem(
          401,
          "Unauthorized",
          "send Authorization: Bearer <token> (CLAIMSTEP_API_TOKEN or CLAIMSTEP_METRICS_TOKEN), or scrape CLAIMSTEP_METRICS_ADDR",
          {
            "www-authenticate": 'Bearer realm="claimstep"',
          },
        );
      }
      return metricsResponse(recorder);
    }
    const res = await appFetch(request, ...rest);
    await count(recorder, request, res);
    return res;
  };
}

/** Deliveries and admission reviews, classified as the Worker logs them (functions/observe.ts). */
async function count(recorder: Recorder, request: Request, res: Response): Promise<void> {
  const e = await deliveryOf(request, res);
  if (e?.event === "delivery") recorder.delivery(e.source, e.result);
  else if (e?.event === "admission_review") recorder.admissionReview(e.result);
}

/** /metrics alone, unauthenticated, on an address of its own (CLAIMSTEP_METRICS_ADDR). */
export async function serveMetrics(opts: {
  recorder: PromRecorder;
  host: string;
  port: number;
}): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics") {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ error: "NotFound", message: "only GET /metrics is served here" }));
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res
        .writeHead(405, { "content-type": "application/json", allow: "GET, HEAD" })
        .end(JSON.stringify({ error: "MethodNotAllowed", message: "use GET /metrics" }));
      return;
    }
    opts.recorder.metrics().then(
      (text) =>
        res
          .writeHead(200, { "content-type": opts.recorder.contentType, "cache-control": "no-store" })
          .end(req.method === "HEAD" ? undefined : text),
      (err: Error) =>
        res
          .writeHead(500, { "content-type": "application/json" })
          .end(JSON.stringify({ error: "InternalError", message: err.message })),
    );
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.maxConnections = 64;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          `cannot listen on CLAIMSTEP_METRICS_ADDR ${opts.host}:${opts.port}: ${err.code === "EADDRINUSE" ? "the port is in use (EADDRINUSE); choose another" : err.message}`,
        ),
      ),
    );
    server.listen(opts.port, opts.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
