// Environment → configuration, validated with zod. The same variables serve the Worker (bindings
// and secrets) and Node (process.env). Error messages name the variable and the fix, never a value.

// configFromEnv checks the variables' types and ranges (EnvSchema), then reads each group of
// settings with its own parser (functions/config/*.ts) and lists every problem, in this order.

import type { RepositoryConfig } from "../adapters/gitops/config.js";
import { BUDGET_CHARGE_SECONDS } from "../core/policy/index.js";
import * as z from "../core/zod.js";
import { authConfig } from "./config/auth.js";
import { gitopsConfig } from "./config/gitops.js";
import { type KubeConfig, kubeConfig } from "./config/kube.js";
import { limitsConfig } from "./config/limits.js";
import { namespacesConfig } from "./config/namespaces.js";
import { sweepLeaseConfig } from "./config/sweep-lease.js";
import type { Viewer } from "./config/viewers.js";
import type { LeaseConfig } from "./lease/config.js";

export type { Viewer } from "./config/viewers.js";

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
  kube?: KubeConfig;
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

/** The environment's strings (Worker env also holds bindings such as KV namespaces) of the right types and ranges; throws ConfigError at once if not. */
function checkedEnv(env: Record<string, unknown>): z.infer<typeof EnvSchema> {
  const strings = Object.fromEntries(Object.entries(env).filter(([, v]) => typeof v === "string"));
  const parsed = EnvSchema.safeParse(strings);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
  }
  return parsed.data;
}

/** Read and validate the configuration. Throws ConfigError listing every problem. */
export function configFromEnv(env: Record<string, unknown>, opts: ConfigOptions = {}): AppConfig {
  const e = checkedEnv(env);
  const auth = authConfig(e);
  const namespaces = namespacesConfig(e);
  const kube = kubeConfig(e, opts.requireKube);
  const limits = limitsConfig(e);
  const gitops = gitopsConfig(e);
  const prometheus = prometheusConfig(e);
  const lease = sweepLeaseConfig(e, e.CLAIMSTEP_INTERVAL_SECONDS);
  const problems = [auth, namespaces, kube, limits, gitops, prometheus, lease].flatMap((p) => p.problems);
  if (problems.length) throw new ConfigError(problems);
  return {
    ...auth.config,
    ...namespaces.config,
    ...limits.config,
    ...kube.config,
    ...gitops.config,
    ...(prometheus.config ? { prometheus: prometheus.config } : {}),
    ...lease.config,
  };
}
