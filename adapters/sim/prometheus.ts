// The simulated cluster's Prometheus: `GET|POST <server>/prometheus/api/v1/query`, an instant
// query over what the kubelets report of the mounted claims (controllers/workload.ts), answered
// with the real API's bodies: `{"status":"success","data":{"resultType":"vector","result":[…]}}`
// with the kubelet's label set (namespace, persistentvolumeclaim, node, instance, job), or
// `{"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": …"}` (400).
// It evaluates vector selectors (a metric name and/or `{label op "value", …}` with =, !=, =~, !~),
// which is what claimstep asks; other PromQL is refused as bad_data, saying so. The same stats are
// also at `<server>/kubelet/metrics` in the exposition format, for a real Prometheus to scrape.
import type { VolumeStats } from "./controllers/workload.js";
import { REQUEST_LOG_LIMIT, Ring } from "./ring.js";

export const USED = "kubelet_volume_stats_used_bytes";
export const CAPACITY = "kubelet_volume_stats_capacity_bytes";

/** Where the simulated Prometheus answers under the cluster's server URL. */
export const PROMETHEUS_PATH = "/prometheus";
/**
 * Where the simulated kubelets' volume stats are, in the exposition format (what a real
 * Prometheus scrapes), under the cluster's server URL: one endpoint for every node.
 */
export const KUBELET_METRICS_PATH = "/kubelet/metrics";
/** The exposition format's content type (text format 0.0.4), as the kubelet sends it. */
export const EXPOSITION_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const labelValue = (s: string): string => s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

/**
 * The kubelets' volume stats in the exposition format: `kubelet_volume_stats_capacity_bytes` and
 * `_used_bytes` per mounted claim, labelled `namespace` and `persistentvolumeclaim` as the kubelet
 * labels them (Prometheus adds `instance` and `job` from its scrape).
 */
export function kubeletExposition(stats: readonly VolumeStats[]): string {
  const lines: string[] = [];
  for (const [name, help, of] of [
    [CAPACITY, "Capacity in bytes of the volume", (v: VolumeStats) => v.capacityBytes],
    [USED, "Number of used bytes in the volume", (v: VolumeStats) => v.usedBytes],
  ] as const) {
    lines.push(`# HELP ${name} [ALPHA] ${help}`, `# TYPE ${name} gauge`);
    for (const v of stats)
      lines.push(
        `${name}{namespace="${labelValue(v.namespace)}",persistentvolumeclaim="${labelValue(v.claim)}"} ${of(v).toString()}`,
      );
  }
  return `${lines.join("\n")}\n`;
}

/** One query as the simulated Prometheus received it. */
export interface QueryInfo {
  method: string;
  query: string;
  headers: Headers;
}

/** An injected answer instead of the evaluation: a status and body, or no answer until the client gives up. */
export type PrometheusFailure = { code: number; body: string; contentType?: string } | { hang: true };

type Op = "=" | "!=" | "=~" | "!~";
interface Matcher {
  label: string;
  op: Op;
  value: string;
  re?: RegExp;
}

class ParseError extends Error {}

const json = (body: unknown, status = 200): Response =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
const badData = (error: string): Response => json({ status: "error", errorType: "bad_data", error }, 400);

/** A vector selector's matchers, or a ParseError with the position as Prometheus gives it (`1:<col>`). */
export function parseSelector(input: string): Matcher[] {
  const p = new SelectorParser(input);
  p.space();
  if (p.atEnd()) p.fail("no expression found in input");
  const matchers = p.selector();
  p.space();
  if (!p.atEnd()) {
    // Functions, operators, ranges: not evaluated here.
    throw new ParseError(
      `${p.at()}: the simulated Prometheus evaluates vector selectors only (a metric name and/or {label="value", …}), not ${JSON.stringify(p.rest().slice(0, 20))}`,
    );
  }
  if (!matchers.some((m) => !matches(m, "")))
    throw new ParseError("1:1: parse error: vector selector must contain at least one non-empty matcher");
  return matchers;
}

/** What a backslash and the character after it stand for in a quoted string (not a backquoted one). */
const ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "\\": "\\",
  '"': '"',
  "'": "'",
  a: "\x07",
  b: "\b",
  f: "\f",
  v: "\v",
};

const OPS = ["=~", "!~", "!=", "="] as const;

/** A cursor over a selector's text, read as Prometheus's parser reads it; `fail` says where it stopped. */
class SelectorParser {
  private i = 0;

  constructor(private readonly input: string) {}

  at(): string {
    return `1:${this.i + 1}`;
  }

  fail(what: string): never {
    throw new ParseError(`${this.at()}: parse error: ${what}`);
  }

  atEnd(): boolean {
    return this.i >= this.input.length;
  }

  rest(): string {
    return this.input.slice(this.i);
  }

  space(): void {
    while (this.i < this.input.length && /\s/.test(this.input[this.i]!)) this.i++;
  }

  /** A metric name and/or `{…}`: the name as a `__name__` matcher, then the label matchers. */
  selector(): Matcher[] {
    const matchers: Matcher[] = [];
    const name = this.ident();
    if (name !== undefined) matchers.push({ label: "__name__", op: "=", value: name });
    this.space();
    if (this.input[this.i] === "{") {
      this.i++;
      matchers.push(...this.labelMatchers());
      this.i++;
    } else if (name === undefined) {
      this.fail(`unexpected ${describe(this.rest())}`);
    }
    return matchers;
  }

  private ident(): string | undefined {
    const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(this.rest());
    if (!m) return undefined;
    this.i += m[0].length;
    return m[0];
  }

  /** The matchers between `{` and `}`, comma-separated; stops at the `}`. */
  private labelMatchers(): Matcher[] {
    const matchers: Matcher[] = [];
    for (;;) {
      this.space();
      if (this.input[this.i] === "}") return matchers;
      matchers.push(this.labelMatcher());
      this.space();
      if (this.input[this.i] === ",") {
        this.i++;
        continue;
      }
      if (this.input[this.i] !== "}")
        this.fail(`unexpected ${describe(this.rest())} in label matching, expected "," or "}"`);
      return matchers;
    }
  }

  /** `label op "value"`, a regular expression's compiled anchored. */
  private labelMatcher(): Matcher {
    const label = this.ident();
    if (label === undefined) this.fail(`unexpected ${describe(this.rest())} in label matching, expected label`);
    this.space();
    const op = OPS.find((o) => this.input.startsWith(o, this.i));
    if (!op) this.fail(`unexpected ${describe(this.rest())} in label matching, expected label matching operator`);
    this.i += op!.length;
    this.space();
    const value = this.string();
    const m: Matcher = { label: label!, op: op!, value };
    if (op === "=~" || op === "!~") {
      try {
        m.re = new RegExp(`^(?:${value})$`, "s");
      } catch (err) {
        this.fail(`error parsing regexp: ${(err as Error).message}`);
      }
    }
    return m;
  }

  /** A string in double, single or back quotes; backslash escapes in the first two. */
  private string(): string {
    const q = this.input[this.i];
    if (q !== '"' && q !== "'" && q !== "`")
      this.fail(`unexpected ${describe(this.rest())} in label matching, expected string`);
    this.i++;
    let out = "";
    while (this.i < this.input.length && this.input[this.i] !== q) {
      const c = this.input[this.i++]!;
      if (c === "\\" && q !== "`") {
        const e = this.input[this.i++];
        if (e === undefined) break;
        const escaped = ESCAPES[e];
        if (escaped === undefined)
          this.fail(`unknown escape sequence U+${e.charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()} '${e}'`);
        out += escaped;
      } else out += c;
    }
    if (this.input[this.i] !== q) this.fail("unterminated quoted string");
    this.i++;
    return out;
  }
}

const describe = (rest: string): string =>
  rest.length === 0 ? "end of input" : `character ${JSON.stringify(rest[0])}`;

function matches(m: Matcher, value: string): boolean {
  switch (m.op) {
    case "=":
      return value === m.value;
    case "!=":
      return value !== m.value;
    case "=~":
      return m.re!.test(value);
    case "!~":
      return !m.re!.test(value);
  }
}

/** The two series the kubelet exposes for a mounted claim, labelled as kube-prometheus scrapes them. */
export function seriesOf(v: VolumeStats): { labels: Record<string, string>; value: bigint }[] {
  const ordinal = Number(/(\d+)$/.exec(v.node)?.[1] ?? 0);
  const common = {
    instance: `10.0.0.${10 + ordinal}:10250`,
    job: "kubelet",
    namespace: v.namespace,
    node: v.node,
    persistentvolumeclaim: v.claim,
  };
  return [
    { labels: { __name__: CAPACITY, ...common }, value: v.capacityBytes },
    { labels: { __name__: USED, ...common }, value: v.usedBytes },
  ];
}

export class SimPrometheus {
  /** The last queries (a ring, as the API server's request log). */
  private readonly log: Ring<QueryInfo>;
  private failures: PrometheusFailure[] = [];

  constructor(
    private readonly stats: () => VolumeStats[],
    private readonly nowMs: () => number,
    logLimit = REQUEST_LOG_LIMIT,
  ) {
    this.log = new Ring(logLimit);
  }

  /** The last queries received since the last reset (at most the log's limit), in order. */
  queries(): QueryInfo[] {
    return this.log.toArray();
  }

  /** Answer the next query with this instead (a 503, an HTML proxy page, no answer). */
  failNext(failure: PrometheusFailure): void {
    this.failures.push(failure);
  }

  reset(): void {
    this.log.clear();
    this.failures = [];
  }

  /** GET KUBELET_METRICS_PATH: the kubelets' volume stats as of now, in the exposition format. */
  kubeletMetrics(method: string): Response {
    if (method !== "GET" && method !== "HEAD")
      return new Response("Method Not Allowed\n", {
        status: 405,
        headers: { "Content-Type": "text/plain; charset=utf-8", Allow: "GET, HEAD" },
      });
    return new Response(method === "HEAD" ? null : kubeletExposition(this.stats()), {
      status: 200,
      headers: { "Content-Type": EXPOSITION_TYPE },
    });
  }

  /** `path` is what follows PROMETHEUS_PATH, e.g. `/api/v1/query`. */
  async handle(
    method: string,
    path: string,
    search: URLSearchParams,
    headers: Headers,
    text: string,
    signal?: AbortSignal,
  ): Promise<Response> {
    if (path !== "/api/v1/query")
      return new Response("404 page not found\n", {
        status: 404,
        headers: { "Content-Type": "text/plain; charset=utf-8" },
      });
    if (method !== "GET" && method !== "POST")
      return new Response("Method Not Allowed\n", {
        status: 405,
        headers: { "Content-Type": "text/plain; charset=utf-8" },
      });
    const form =
      method === "POST" && (headers.get("content-type") ?? "").startsWith("application/x-www-form-urlencoded")
        ? new URLSearchParams(text)
        : new URLSearchParams();
    const query = form.get("query") ?? search.get("query") ?? "";
    this.log.push({ method, query, headers });
    const failure = this.failures.shift();
    if (failure) {
      if ("hang" in failure) {
        await new Promise<void>((resolve) =>
          !signal || signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true }),
        );
        return json({ status: "error", errorType: "timeout", error: "query timed out in expression evaluation" }, 503);
      }
      return new Response(failure.body, {
        status: failure.code,
        headers: { "Content-Type": failure.contentType ?? "application/json" },
      });
    }
    let matchers: Matcher[];
    try {
      matchers = parseSelector(query);
    } catch (err) {
      if (err instanceof ParseError) return badData(`invalid parameter "query": ${err.message}`);
      throw err;
    }
    const t = this.nowMs() / 1000;
    const result = this.stats()
      .flatMap(seriesOf)
      .filter((s) => matchers.every((m) => matches(m, s.labels[m.label] ?? "")))
      .map((s) => ({ metric: s.labels, value: [t, s.value.toString()] }));
    return json({ status: "success", data: { resultType: "vector", result } });
  }
}
