// Environment → configuration, validated with zod. The same variables serve the Worker (bindings
// and secrets) and Node (process.env). Error messages name the variable and the fix, never a value.

import { parseRepositoryConfig, type RepositoryConfig, RepositoryConfigError } from "../adapters/gitops/config.js";
import { BUDGET_CHARGE_SECONDS } from "../core/policy/index.js";
import * as z from "../core/zod.js";
import { decodeWebhookSecret } from "./auth.js";
import { type LeaseConfig, leaseConfig } from "./lease/config.js";

/** Split a comma/space separated list, dropping empty entries. */
const list = (raw: string | undefined): string[] =>
  (raw ?? "")
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

const intVar = (min: number, fallback: number) =>
  z.pipe(
    z.optional(z.string()),
    z.transform((s: string | undefined, ctx): number => {
      if (s === undefined || s.trim() === "") return fallback;
      const n = Number(s);
      if (!Number.isInteger(n) || n < min) {
        ctx.issues.push({ code: "custom", message: `must be an integer ≥ ${min}`, input: s });
        return z.NEVER;
      }
      return n;
    }),
  );

const whsec = /^whsec_[A-Za-z0-9+/]+={0,2}$/;
const dns1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const EnvSchema = z.looseObject({
  /** Bearer tokens accepted by the HTTP app (several during a rotation). */
  CLAIMSTEP_API_TOKEN: z.optional(z.string()),
  /**
   * The status page's viewer tokens (read-only; never a step token): `<token>` sees every
   * namespace claimstep manages, `<ns>+<ns>:<token>` only those (several during a rotation).
   */
  CLAIMSTEP_VIEWER_TOKEN: z.optional(z.string()),
  /** Standard Webhooks secrets `whsec_<base64>` (several during a rotation). */
  CLAIMSTEP_WEBHOOK_SECRET: z.optional(z.string()),
  /** Namespaces claimstep may act in; empty = all. */
  CLAIMSTEP_NAMESPACES: z.optional(z.string()),
  CLAIMSTEP_BODY_LIMIT_BYTES: intVar(1024, 256 * 1024),
  /** Subrequests one invocation may make (Workers free: 50, paid: 1000). */
  CLAIMSTEP_SUBREQUEST_BUDGET: intVar(1, 50),
  /** Worst-case subrequests of one step: 5 reads, 1 apply, 1 annotation, events. */
  CLAIMSTEP_SUBREQUESTS_PER_STEP: intVar(1, 10),
  /** Interval of the cron trigger, for the rotation of sets across ticks. */
  CLAIMSTEP_TICK_SECONDS: intVar(1, 60),
  /** Node server: step every opted-in set this often; 0 = off. */
  CLAIMSTEP_INTERVAL_SECONDS: intVar(0, 0),
  /** Worker: the API server reached with plain fetch (through Cloudflare Tunnel when private). */
  KUBE_API_SERVER: z.optional(z.url({ protocol: /^https?$/ })),
  KUBE_TOKEN: z.optional(z.string()),
  /** Cloudflare Access service token, sent as CF-Access-Client-Id/-Secret. */
  CF_ACCESS_CLIENT_ID: z.optional(z.string()),
  CF_ACCESS_CLIENT_SECRET: z.optional(z.string()),
  /** GitOps repository (JSON, adapters/gitops/config.ts) for sets with `claimstep.io/apply-via: pull-request`. */
  CLAIMSTEP_GITOPS_REPOSITORY: z.optional(z.string()),
  /** Its API token (a secret, kept out of the JSON). */
  CLAIMSTEP_GITOPS_TOKEN: z.optional(z.string()),
  CLAIMSTEP_GITHUB_WEBHOOK_SECRET: z.optional(z.string()),
  CLAIMSTEP_GITLAB_WEBHOOK_TOKEN: z.optional(z.string()),
  /** Autogrow's metrics: a Prometheus-compatible HTTP API (Prometheus, Thanos, VictoriaMetrics, Mimir). */
  CLAIMSTEP_PROMETHEUS_URL: z.optional(z.string()),
  /** Its bearer token (a secret), or … */
  CLAIMSTEP_PROMETHEUS_TOKEN: z.optional(z.string()),
  /** … basic auth (the password a secret). */
  CLAIMSTEP_PROMETHEUS_USERNAME: z.optional(z.string()),
  CLAIMSTEP_PROMETHEUS_PASSWORD: z.optional(z.string()),
  /** How long one query may take. */
  CLAIMSTEP_PROMETHEUS_TIMEOUT_SECONDS: z.optional(z.string()),
  /** Node server: several replicas elect one sweeper with a Lease (functions/lease/config.ts). */
  CLAIMSTEP_LEASE: z.optional(z.string()),
  CLAIMSTEP_LEASE_NAMESPACE: z.optional(z.string()),
  CLAIMSTEP_LEASE_DURATION_SECONDS: z.optional(z.string()),
  CLAIMSTEP_LEASE_RENEW_SECONDS: z.optional(z.string()),
});

/** A viewer token of the status page and the namespaces it may see (absent: all claimstep manages). */
export interface Viewer {
  token: string;
  namespaces?: string[];
}

/** `CLAIMSTEP_VIEWER_TOKEN`'s entries: `<token>` or `<ns>+<ns>:<token>`. */
export function parseViewers(raw: string | undefined): { viewers: Viewer[]; problems: string[] } {
  const viewers: Viewer[] = [];
  const problems: string[] = [];
  for (const entry of list(raw)) {
    const colon = entry.lastIndexOf(":");
    const token = colon < 0 ? entry : entry.slice(colon + 1);
    const namespaces = colon < 0 ? undefined : entry.slice(0, colon).split("+").filter(Boolean);
    if (token.length < 16)
      problems.push("CLAIMSTEP_VIEWER_TOKEN: each token must be at least 16 characters (e.g. `openssl rand -hex 32`)");
    if (namespaces !== undefined && namespaces.length === 0)
      problems.push(
        "CLAIMSTEP_VIEWER_TOKEN: name the namespaces before the colon (`prod+staging:<token>`), or give the token alone",
      );
    for (const ns of (namespaces ?? []).filter((n) => !dns1123.test(n)))
      problems.push(`CLAIMSTEP_VIEWER_TOKEN: "${ns}" is not a valid namespace name`);
    viewers.push({ token, ...(namespaces?.length ? { namespaces } : {}) });
  }
  return { viewers, problems: [...new Set(problems)] };
}

/** Where autogrow reads the claims' usage (adapters/metrics/prometheus.ts). */
export interface PrometheusConfig {
  url: string;
  token?: string;
  basic?: { username: string; password: string };
  timeoutMs: number;
}

const PROMETHEUS_VARS = [
  "CLAIMSTEP_PROMETHEUS_URL",
  "CLAIMSTEP_PROMETHEUS_TOKEN",
  "CLAIMSTEP_PROMETHEUS_USERNAME",
  "CLAIMSTEP_PROMETHEUS_PASSWORD",
  "CLAIMSTEP_PROMETHEUS_TIMEOUT_SECONDS",
] as const;

/**
 * The CLAIMSTEP_PROMETHEUS_* variables alone (the CLI reads them without the server's), with the
 * problems found; never a value in a message.
 */
export function prometheusConfig(env: Partial<Record<(typeof PROMETHEUS_VARS)[number], string | undefined>>): {
  config?: PrometheusConfig;
  problems: string[];
} {
  const problems: string[] = [];
  const [url, token, username, password, timeout] = PROMETHEUS_VARS.map((k) => (env[k] === "" ? undefined : env[k]));
  const P = "CLAIMSTEP_PROMETHEUS_";
  const seconds = Number(timeout ?? 10);
  if (!Number.isInteger(seconds) || seconds < 1) problems.push(`${P}TIMEOUT_SECONDS: must be an integer ≥ 1`);
  if (url === undefined) {
    const orphans = PROMETHEUS_VARS.filter((k) => env[k]);
    if (orphans.length) problems.push(`${orphans.join(", ")}: set only with ${P}URL`);
    return { problems };
  }
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    // reported below
  }
  if (!u || !/^https?:$/.test(u.protocol))
    problems.push(
      `${P}URL: expected the http(s) URL of a Prometheus HTTP API, e.g. http://prometheus-operated.monitoring:9090`,
    );
  else if (u.username || u.password)
    problems.push(`${P}URL: leave credentials out of the URL; use ${P}USERNAME and ${P}PASSWORD (a secret)`);
  else if (u.search || u.hash || /\/api\/v1(\/|$)/.test(u.pathname))
    problems.push(`${P}URL: give the base URL, without /api/v1 or a query (claimstep adds /api/v1/query)`);
  if (token && (username || password))
    problems.push(`${P}TOKEN and ${P}USERNAME/_PASSWORD: a bearer token or basic auth, not both`);
  else if (!username !== !password) problems.push(`${P}USERNAME and ${P}PASSWORD: basic auth needs both`);
  if (problems.length) return { problems };
  return {
    config: {
      url: url.replace(/\/+$/, ""),
      ...(token ? { token } : {}),
      ...(username && password ? { basic: { username, password } } : {}),
      timeoutMs: seconds * 1000,
    },
    problems,
  };
}

/**
 * `CLAIMSTEP_BUDGET_CHARGE_SECONDS`, for tests only (the CLI and `claimstep serve` read it, never
 * the Worker): how long R3 waits after a PodDisruptionBudget refused an eviction, shortened from
 * the disruption controller's two minutes (core/policy/pod-policy.ts BUDGET_CHARGE_SECONDS) so that a test
 * of it waits seconds. Unset: the default.
 */
export function budgetChargeOf(env: { CLAIMSTEP_BUDGET_CHARGE_SECONDS?: string | undefined }): {
  seconds?: number;
  problems: string[];
} {
  const raw = env.CLAIMSTEP_BUDGET_CHARGE_SECONDS?.trim();
  if (!raw) return { problems: [] };
  const seconds = Number(raw);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > BUDGET_CHARGE_SECONDS)
    return {
      problems: [
        `CLAIMSTEP_BUDGET_CHARGE_SECONDS: must be an integer from 1 to ${BUDGET_CHARGE_SECONDS} (a test's; unset, the charge is ${BUDGET_CHARGE_SECONDS})`,
      ],
    };
  return { seconds, problems: [] };
}

export interface AppConfig {
  bearerTokens: string[];
  /** The status page's viewer tokens; absent: the page is off. */
  viewers?: Viewer[];
  webhookSecrets: string[];
  namespaces: string[];
  bodyLimitBytes: number;
  subrequestBudget: number;
  subrequestsPerStep: number;
  tickSeconds: number;
  intervalSeconds: number;
  kube?: { server: string; token?: string; headers: Record<string, string> };
  gitops?: RepositoryConfig;
  githubWebhookSecret?: string;
  gitlabWebhookToken?: string;
  /** Autogrow's metrics; absent: sets asking for autogrow go on without it, saying so. */
  prometheus?: PrometheusConfig;
  /** Node server: sweep only while this replica holds the Lease (CLAIMSTEP_LEASE=true). */
  lease?: LeaseConfig;
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

export interface ConfigOptions {
  /** The Worker needs KUBE_API_SERVER; Node may use kubeconfig instead. */
  requireKube?: boolean;
}

/** Read and validate the configuration. Throws ConfigError listing every problem. */
export function configFromEnv(env: Record<string, unknown>, opts: ConfigOptions = {}): AppConfig {
  // Only string values are configuration (Worker env also holds bindings such as KV namespaces).
  const strings = Object.fromEntries(Object.entries(env).filter(([, v]) => typeof v === "string"));
  const parsed = EnvSchema.safeParse(strings);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
  }
  const e = parsed.data;
  const problems: string[] = [];
  const bearerTokens = list(e.CLAIMSTEP_API_TOKEN);
  const webhookSecrets = list(e.CLAIMSTEP_WEBHOOK_SECRET);
  const namespaces = list(e.CLAIMSTEP_NAMESPACES);
  const { viewers, problems: viewerProblems } = parseViewers(e.CLAIMSTEP_VIEWER_TOKEN);
  problems.push(...viewerProblems);
  if (viewers.some((v) => bearerTokens.includes(v.token))) {
    problems.push(
      "CLAIMSTEP_VIEWER_TOKEN: a viewer token must not be a CLAIMSTEP_API_TOKEN (the page is read-only; give it a token of its own)",
    );
  }

  if (bearerTokens.length === 0 && webhookSecrets.length === 0 && viewers.length === 0) {
    problems.push(
      "no authentication configured: set CLAIMSTEP_API_TOKEN (bearer) and/or CLAIMSTEP_WEBHOOK_SECRET (whsec_<base64>) (or CLAIMSTEP_VIEWER_TOKEN for the status page alone)",
    );
  }
  if (bearerTokens.some((t) => t.length < 16)) {
    problems.push("CLAIMSTEP_API_TOKEN: each token must be at least 16 characters (e.g. `openssl rand -hex 32`)");
  }
  const secretProblem = (secret: string): string | undefined => {
    if (!whsec.test(secret)) return "must look like whsec_<base64>";
    try {
      decodeWebhookSecret(secret);
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  };
  const badSecret = webhookSecrets.map(secretProblem).find((p) => p !== undefined);
  if (badSecret) {
    problems.push(`CLAIMSTEP_WEBHOOK_SECRET: ${badSecret} (e.g. \`echo whsec_$(openssl rand -base64 32)\`)`);
  }
  for (const ns of namespaces.filter((n) => !dns1123.test(n))) {
    problems.push(`CLAIMSTEP_NAMESPACES: "${ns}" is not a valid namespace name`);
  }
  if (e.CF_ACCESS_CLIENT_ID !== undefined && e.CF_ACCESS_CLIENT_SECRET === undefined) {
    problems.push("CF_ACCESS_CLIENT_SECRET: required when CF_ACCESS_CLIENT_ID is set");
  }
  if (e.CF_ACCESS_CLIENT_SECRET !== undefined && e.CF_ACCESS_CLIENT_ID === undefined) {
    problems.push("CF_ACCESS_CLIENT_ID: required when CF_ACCESS_CLIENT_SECRET is set");
  }
  if (opts.requireKube && !e.KUBE_API_SERVER) {
    problems.push(
      "KUBE_API_SERVER: required (the API server URL, e.g. https://kube.example.com behind Cloudflare Tunnel)",
    );
  }
  if (e.KUBE_API_SERVER && !e.KUBE_TOKEN) {
    problems.push(
      "KUBE_TOKEN: required with KUBE_API_SERVER (a ServiceAccount token: `kubectl create token claimstep`)",
    );
  }
  if (e.CLAIMSTEP_SUBREQUESTS_PER_STEP > e.CLAIMSTEP_SUBREQUEST_BUDGET) {
    problems.push("CLAIMSTEP_SUBREQUEST_BUDGET: must be at least CLAIMSTEP_SUBREQUESTS_PER_STEP");
  }
  let gitops: RepositoryConfig | undefined;
  if (e.CLAIMSTEP_GITOPS_REPOSITORY) {
    try {
      const repo = JSON.parse(e.CLAIMSTEP_GITOPS_REPOSITORY) as Record<string, unknown>;
      if (typeof repo === "object" && repo !== null && "token" in repo) {
        problems.push(
          "CLAIMSTEP_GITOPS_REPOSITORY: leave the token out of the JSON; put it in the secret CLAIMSTEP_GITOPS_TOKEN",
        );
      } else {
        gitops = parseRepositoryConfig({ ...repo, token: e.CLAIMSTEP_GITOPS_TOKEN ?? "" });
      }
    } catch (err) {
      if (err instanceof RepositoryConfigError)
        problems.push(`CLAIMSTEP_GITOPS_REPOSITORY / CLAIMSTEP_GITOPS_TOKEN: ${err.message}`);
      else problems.push(`CLAIMSTEP_GITOPS_REPOSITORY: not valid JSON (${(err as Error).message})`);
    }
  }
  const prometheus = prometheusConfig(e);
  problems.push(...prometheus.problems);
  const lease = leaseConfig(e);
  problems.push(...lease.problems);
  if (lease.config && e.CLAIMSTEP_INTERVAL_SECONDS === 0) {
    problems.push("CLAIMSTEP_LEASE: elects the replica that sweeps; set CLAIMSTEP_INTERVAL_SECONDS too (e.g. 60)");
  }
  if (problems.length) throw new ConfigError(problems);

  const headers: Record<string, string> = {};
  if (e.CF_ACCESS_CLIENT_ID && e.CF_ACCESS_CLIENT_SECRET) {
    headers["CF-Access-Client-Id"] = e.CF_ACCESS_CLIENT_ID;
    headers["CF-Access-Client-Secret"] = e.CF_ACCESS_CLIENT_SECRET;
  }
  return {
    bearerTokens,
    ...(viewers.length ? { viewers } : {}),
    webhookSecrets,
    namespaces,
    bodyLimitBytes: e.CLAIMSTEP_BODY_LIMIT_BYTES,
    subrequestBudget: e.CLAIMSTEP_SUBREQUEST_BUDGET,
    subrequestsPerStep: e.CLAIMSTEP_SUBREQUESTS_PER_STEP,
    tickSeconds: e.CLAIMSTEP_TICK_SECONDS,
    intervalSeconds: e.CLAIMSTEP_INTERVAL_SECONDS,
    ...(e.KUBE_API_SERVER
      ? {
          kube: {
            server: e.KUBE_API_SERVER.replace(/\/+$/, ""),
            ...(e.KUBE_TOKEN ? { token: e.KUBE_TOKEN } : {}),
            headers,
          },
        }
      : {}),
    ...(gitops ? { gitops } : {}),
    ...(e.CLAIMSTEP_GITHUB_WEBHOOK_SECRET ? { githubWebhookSecret: e.CLAIMSTEP_GITHUB_WEBHOOK_SECRET } : {}),
    ...(e.CLAIMSTEP_GITLAB_WEBHOOK_TOKEN ? { gitlabWebhookToken: e.CLAIMSTEP_GITLAB_WEBHOOK_TOKEN } : {}),
    ...(prometheus.config ? { prometheus: prometheus.config } : {}),
    ...(lease.config ? { lease: lease.config } : {}),
  };
}
