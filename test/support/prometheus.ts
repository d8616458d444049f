// A real Prometheus for tests (Debian's /usr/bin/prometheus; CI installs the package): on
// 127.0.0.1 at a free port, its TSDB in a temporary directory, scraping the targets it is given
// every second (and evaluating rule files every second), queried through its HTTP API. Every wait
// is bounded; `stop()` always ends the process (SIGTERM, then SIGKILL) and removes the directory.
// Tests skip when the binary is absent (`hasPrometheus`), saying so.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";

export const PROMETHEUS_BIN = process.env.CLAIMSTEP_PROMETHEUS_BIN ?? "/usr/bin/prometheus";
export const hasPrometheus = existsSync(PROMETHEUS_BIN);
/** Why a test file skips, for its console. */
export const NO_PROMETHEUS = `no prometheus at ${PROMETHEUS_BIN} (apt-get install prometheus, or set CLAIMSTEP_PROMETHEUS_BIN): the tests against a real Prometheus are skipped`;

/** How long Prometheus may take to answer /-/ready on a loaded 2-core machine. */
export const PROMETHEUS_READY_MS = 20_000;
/** How long stop() waits for the process to exit after SIGTERM before SIGKILL. */
export const PROMETHEUS_STOP_MS = 5_000;
/** One HTTP API call. */
const REQUEST_MS = 5_000;

export interface ScrapeTarget {
  job: string;
  /** Where the exposition is, e.g. `http://127.0.0.1:4321/metrics`. */
  url: string;
  /** Sent as `Authorization: Bearer <token>`. */
  bearer?: string;
  /** Keep the target's own labels (claimstep's `namespace`), as the ServiceMonitor does. */
  honorLabels?: boolean;
}

export interface PrometheusSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** An API answer: the status code and the parsed body (`status`, `data` or `errorType`/`error`). */
export interface ApiAnswer {
  code: number;
  body: {
    status: string;
    data?: { resultType: string; result: unknown };
    errorType?: string;
    error?: string;
    warnings?: string[];
  };
}

export interface RealPrometheus {
  /** The API's base URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** An instant query (POST form, as Grafana sends long ones), answered as it comes. */
  queryRaw(expr: string): Promise<ApiAnswer>;
  /** An instant query's vector; throws with Prometheus' error otherwise. */
  query(expr: string): Promise<PrometheusSample[]>;
  /** Polls `expr` until `ok(result)`, at most `timeoutMs`; throws naming the query and what it last saw. */
  waitFor(expr: string, ok: (r: PrometheusSample[]) => boolean, timeoutMs?: number): Promise<PrometheusSample[]>;
  /** GET of an API path (`/api/v1/targets`, `/api/v1/rules`), parsed. */
  get(path: string): Promise<any>;
  /** What Prometheus logged (for failure messages). */
  log(): string;
  stop(): Promise<void>;
}

export interface PrometheusOptions {
  targets: ScrapeTarget[];
  /** Rule files to load (absolute paths), evaluated every second. */
  ruleFiles?: string[];
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

function configOf(opts: PrometheusOptions): string {
  return stringify({
    global: { scrape_interval: "1s", scrape_timeout: "1s", evaluation_interval: "1s" },
    ...(opts.ruleFiles?.length ? { rule_files: opts.ruleFiles } : {}),
    scrape_configs: opts.targets.map((t) => {
      const u = new URL(t.url);
      return {
        job_name: t.job,
        scheme: u.protocol.replace(":", ""),
        metrics_path: u.pathname,
        ...(t.honorLabels ? { honor_labels: true } : {}),
        ...(t.bearer !== undefined ? { authorization: { type: "Bearer", credentials: t.bearer } } : {}),
        static_configs: [{ targets: [u.host] }],
      };
    }),
  });
}

export async function startPrometheus(opts: PrometheusOptions): Promise<RealPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), "claimstep-prometheus-"));
  const config = join(dir, "prometheus.yml");
  writeFileSync(config, configOf(opts));
  let output = "";
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let url = "";
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const done = await Promise.race([exited.then(() => true), delay(PROMETHEUS_STOP_MS).then(() => false)]);
      if (!done) {
        child.kill("SIGKILL");
        await Promise.race([exited, delay(PROMETHEUS_STOP_MS)]);
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // A free port may be taken between its probe and Prometheus' listen: a few tries.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    output = "";
    const proc = spawn(
      PROMETHEUS_BIN,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
        "--storage.tsdb.retention.time=1h",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    child = proc;
    exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    const keep = (b: Buffer) => {
      output = (output + b.toString()).slice(-20_000);
    };
    proc.stdout!.on("data", keep);
    proc.stderr!.on("data", keep);
    const ready = await waitReady(url, proc);
    if (ready) break;
    await stop();
    if (attempt === 3 || !/address already in use/.test(output)) {
      throw new Error(
        `prometheus did not become ready at ${url} within ${PROMETHEUS_READY_MS / 1000} s (exit ${proc.exitCode ?? proc.signalCode ?? "none"}):\n${output}`,
      );
    }
  }

  const api = async (path: string, init?: RequestInit): Promise<ApiAnswer> => {
    const res = await fetch(`${url}${path}`, { ...init, signal: AbortSignal.timeout(REQUEST_MS) });
    const text = await res.text();
    try {
      return { code: res.status, body: JSON.parse(text) };
    } catch {
      throw new Error(`prometheus answered ${path} with HTTP ${res.status} and no JSON: ${text.slice(0, 200)}`);
    }
  };
  const queryRaw = (expr: string) =>
    api("/api/v1/query", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ query: expr }).toString(),
    });
  const query = async (expr: string): Promise<PrometheusSample[]> => {
    const a = await queryRaw(expr);
    if (a.code !== 200 || a.body.status !== "success")
      throw new Error(
        `prometheus refused ${expr}: HTTP ${a.code} ${a.body.errorType ?? ""}: ${a.body.error ?? JSON.stringify(a.body)}`,
      );
    if (a.body.data!.resultType !== "vector") throw new Error(`${expr}: a ${a.body.data!.resultType}, not a vector`);
    return a.body.data!.result as PrometheusSample[];
  };
  return {
    url,
    queryRaw,
    query,
    async waitFor(expr, ok, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      let last: PrometheusSample[] | string = "nothing yet";
      while (Date.now() < deadline) {
        try {
          const r = await query(expr);
          if (ok(r)) return r;
          last = r;
        } catch (err) {
          last = (err as Error).message;
        }
        await delay(250);
      }
      const targets = await api("/api/v1/targets").catch((e: Error) => ({ body: e.message }));
      throw new Error(
        `prometheus: ${expr} not as expected within ${timeoutMs / 1000} s; last: ${JSON.stringify(last).slice(0, 2_000)}\ntargets: ${JSON.stringify(targets.body).slice(0, 2_000)}\nlog:\n${output}`,
      );
    },
    async get(path) {
      return (await api(path)).body;
    },
    log: () => output,
    stop,
  };
}

async function waitReady(url: string, proc: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + PROMETHEUS_READY_MS;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) return false;
    try {
      const res = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.ok) return true;
    } catch {
      // Not listening yet.
    }
    await delay(100);
  }
  return false;
}

/** Grafana's variables as a test fills them: every namespace and set, a rate window Prometheus accepts. */
export const GRAFANA_VARIABLES: Record<string, string> = {
  namespace: ".*",
  name: ".*",
  __rate_interval: "1m",
  __interval: "15s",
  __range: "1h",
};

/** Every query of a Grafana dashboard's panels (rows' nested panels too), with its variables replaced. */
export function grafanaQueries(dashboard: { panels?: any[] }): { panel: string; expr: string }[] {
  const out: { panel: string; expr: string }[] = [];
  const walk = (panels: any[] = []) => {
    for (const p of panels) {
      walk(p.panels);
      for (const t of p.targets ?? []) {
        const expr = String(t.expr ?? "").replace(/\$\{?(\w+)\}?/g, (m, v: string) => {
          if (GRAFANA_VARIABLES[v] === undefined)
            throw new Error(`panel "${p.title}": unknown variable ${m} in ${t.expr}`);
          return GRAFANA_VARIABLES[v];
        });
        out.push({ panel: `${p.title} (${t.refId})`, expr });
      }
    }
  };
  walk(dashboard.panels);
  return out;
}
