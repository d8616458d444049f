// Autogrow's metrics from a Prometheus-compatible HTTP API (Prometheus, Thanos, VictoriaMetrics,
// Mimir): one instant query per step for the set's claims, kubelet_volume_stats_used_bytes and
// kubelet_volume_stats_capacity_bytes, validated with zod from the API's real response shape.
// Never throws: a query error, an empty result or an unreachable server is a reading that says
// why, naming the server's URL (never its credentials), and the step goes on without autogrow.
// Plain fetch, no Node built-ins: it runs on Workers as on Node.

import type { MetricsReader } from "../../core/ports.js";
import type { SetRef, UsageReading, VolumeUsage } from "../../core/types.js";
import * as z from "../../core/zod.js";

export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

export const USED = "kubelet_volume_stats_used_bytes";
export const CAPACITY = "kubelet_volume_stats_capacity_bytes";

export const DEFAULT_PROMETHEUS_TIMEOUT_MS = 10_000;
/** Longer queries (sets of many claims) go as a POST form: proxies cap URLs at 2–8 KiB. */
const MAX_GET_URL = 2_000;

export interface PrometheusOptions {
  /** The API's base URL, under which `/api/v1/query` answers, e.g. `http://prometheus:9090` or `https://thanos.example.com/prom`. */
  url: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Sent as HTTP basic auth (not with `token`). */
  basic?: { username: string; password: string };
  /** Per query; default 10 s. */
  timeoutMs?: number;
  fetch?: Fetch;
}

// The response envelope (https://prometheus.io/docs/prometheus/latest/querying/api/#format-overview).
// A sample is `[<unix seconds>, "<value>"]` (z.tuple would add to the Worker bundle: checked here).
const Sample = z
  .array(z.union([z.number(), z.string()]))
  .check(
    z.refine(
      (v) => v.length === 2 && typeof v[0] === "number" && typeof v[1] === "string",
      'expected [<unix time>, "<value>"]',
    ),
  );
const VectorSeries = z.object({ metric: z.record(z.string(), z.string()), value: Sample });
const Success = z.looseObject({ status: z.literal("success"), data: z.looseObject({ resultType: z.string() }) });
const Vector = z.array(VectorSeries);
const Failure = z.object({
  status: z.literal("error"),
  errorType: z.optional(z.string()),
  error: z.optional(z.string()),
});

/** A regex that matches `s` literally (RE2 metacharacters escaped). */
export const regexLiteral = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** A PromQL double-quoted string literal. */
export const promString = (s: string): string =>
  `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;

/** The one instant query of a step: both metrics for the set's claims in its namespace. */
export function usageQuery(namespace: string, claims: readonly string[]): string {
  return `{__name__=~${promString(`${USED}|${CAPACITY}`)},namespace=${promString(namespace)},persistentvolumeclaim=~${promString(claims.map(regexLiteral).join("|"))}}`;
}

/** `https://user:pw@host/p?x` → `https://host/p`: what messages may show of the URL. */
const shown = (url: string): string => {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`.replace(/\/+$/, "");
  } catch {
    return "(an invalid URL)";
  }
};

const listed = (names: readonly string[], namespace: string): string => {
  const shownNames = names.slice(0, 5).map((n) => `${namespace}/${n}`);
  return names.length > 5 ? `${shownNames.join(", ")} and ${names.length - 5} more` : shownNames.join(", ");
};

/** `<title>` or the first words of an HTML/text body, for a message. */
const gist = (text: string): string => {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1];
  const plain = (title ?? text.replace(/<[^>]*>/g, " ")).replace(/\s+/g, " ").trim();
  return plain.length > 120 ? `${plain.slice(0, 117)}…` : plain || "(empty body)";
};

/** Bytes from a sample value ("1234", "1.073741824e+09"); undefined for NaN, ±Inf or negative. */
const bytesOf = (value: string): bigint | undefined => {
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? BigInt(Math.round(n)) : undefined;
};

const btoaUtf8 = (s: string): string => btoa(String.fromCharCode(...new TextEncoder().encode(s)));

export class PrometheusMetrics implements MetricsReader {
  private readonly base: string;
  private readonly where: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly fetch: Fetch;

  constructor(opts: PrometheusOptions) {
    if (opts.token !== undefined && opts.basic !== undefined)
      throw new Error("PrometheusMetrics: give a bearer token or basic auth, not both");
    this.base = opts.url.replace(/\/+$/, "");
    this.where = `Prometheus at ${shown(opts.url)}`;
    this.headers = {
      Accept: "application/json",
      ...(opts.token !== undefined ? { Authorization: `Bearer ${opts.token}` } : {}),
      ...(opts.basic ? { Authorization: `Basic ${btoaUtf8(`${opts.basic.username}:${opts.basic.password}`)}` } : {}),
    };
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_PROMETHEUS_TIMEOUT_MS;
    // Called unbound: a Worker's fetch refuses another `this`.
    this.fetch = opts.fetch ?? ((input, init) => fetch(input, init));
  }

  async usage(ref: SetRef, claims: readonly string[], signal?: AbortSignal): Promise<UsageReading> {
    if (claims.length === 0) return { ok: true, volumes: [] };
    const query = usageQuery(ref.namespace, claims);
    const form = new URLSearchParams({ query }).toString();
    const get = `${this.base}/api/v1/query?${form}`;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const init: RequestInit = {
      headers:
        get.length <= MAX_GET_URL
          ? this.headers
          : { ...this.headers, "Content-Type": "application/x-www-form-urlencoded" },
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      ...(get.length <= MAX_GET_URL ? { method: "GET" } : { method: "POST", body: form }),
    };
    let res: Response;
    let text: string;
    try {
      res = await this.fetch(get.length <= MAX_GET_URL ? get : `${this.base}/api/v1/query`, init);
      text = await res.text();
    } catch (err) {
      if (timeout.aborted)
        return { ok: false, message: `${this.where} did not answer within ${this.timeoutMs / 1000} s` };
      if (signal?.aborted) return { ok: false, message: `the query to ${this.where} was cancelled` };
      return { ok: false, message: `${this.where} is unreachable (${causeOf(err)})` };
    }
    return this.read(res, text, ref.namespace, claims);
  }

  private read(res: Response, text: string, namespace: string, claims: readonly string[]): UsageReading {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      const type = (res.headers.get("content-type") ?? "no content type").split(";")[0];
      return {
        ok: false,
        message: `${this.where} answered HTTP ${res.status} with a non-JSON body (${type}: ${gist(text)}): is that the URL of the Prometheus HTTP API?`,
      };
    }
    const failure = Failure.safeParse(body);
    if (failure.success) {
      const e = failure.data;
      return {
        ok: false,
        message: `${this.where} refused the query (HTTP ${res.status}${e.errorType ? `, ${e.errorType}` : ""}): ${e.error ?? "no error message"}`,
      };
    }
    if (res.status === 401 || res.status === 403) {
      return {
        ok: false,
        message: `${this.where} refused the credentials (HTTP ${res.status}): check CLAIMSTEP_PROMETHEUS_TOKEN, or CLAIMSTEP_PROMETHEUS_USERNAME and _PASSWORD`,
      };
    }
    const success = Success.safeParse(body);
    if (!res.ok || !success.success) {
      return {
        ok: false,
        message: `${this.where} answered HTTP ${res.status} with a body that is not a Prometheus API response: ${gist(text)}`,
      };
    }
    const { data } = success.data;
    if (data.resultType !== "vector")
      return { ok: false, message: `${this.where} answered a ${data.resultType}, not a vector` };
    const series = Vector.safeParse(data.result);
    if (!series.success) {
      const issue = series.error.issues[0]!;
      return {
        ok: false,
        message: `${this.where} answered a vector that is not well-formed (result.${issue.path.join(".")}: ${issue.message})`,
      };
    }
    // The latest sample of each metric per claim: two kubelets may report one volume during a move.
    const wanted = new Set(claims);
    const latest = new Map<string, { used?: [number, bigint]; capacity?: [number, bigint] }>();
    for (const s of series.data) {
      const value = s.value as [number, string];
      const claim = s.metric.persistentvolumeclaim;
      const name = s.metric.__name__;
      if (
        claim === undefined ||
        !wanted.has(claim) ||
        (s.metric.namespace !== undefined && s.metric.namespace !== namespace)
      )
        continue;
      const key = name === USED ? "used" : name === CAPACITY ? "capacity" : undefined;
      const bytes = bytesOf(value[1]);
      if (!key || bytes === undefined) continue;
      const entry = latest.get(claim) ?? {};
      if (!entry[key] || entry[key][0] < value[0]) entry[key] = [value[0], bytes];
      latest.set(claim, entry);
    }
    const volumes: VolumeUsage[] = [];
    for (const claim of claims) {
      const e = latest.get(claim);
      if (e?.used && e.capacity) volumes.push({ claim, usedBytes: e.used[1], capacityBytes: e.capacity[1] });
    }
    if (volumes.length === 0) {
      return {
        ok: false,
        message: `${this.where} has no ${USED.replace(/_used_bytes$/, "")} for ${listed(claims, namespace)}: is the kubelet scraped, and are the claims mounted?`,
      };
    }
    return { ok: true, volumes };
  }
}

/** The network error's own words (undici hides them in `cause`). */
function causeOf(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e.cause?.code ?? e.cause?.message;
  return [e.message, cause].filter(Boolean).join(": ") || String(err);
}
