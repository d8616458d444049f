// Reading `claimstep serve`'s environment and command line, checked before anything starts, in
// this order (the first bad one is the error): the configuration (functions/config.ts), a test's
// shorter R3 charge, the TLS files, the metrics' token and address.
import { type AppConfig, budgetChargeOf, ConfigError, configFromEnv } from "../config.js";
import type { TlsFiles } from "../http/tls-files.js";
import { tlsFilesFromEnv } from "../http/tls-files.js";
import type { MetricsConfig } from "../metrics.js";
import { DEFAULT_HOST } from "./listen.js";
import type { Log } from "./log.js";

export interface ServeFromEnvOptions {
  env: Record<string, string | undefined>;
  port?: number;
  /** The address to bind (--host); else CLAIMSTEP_HOST, else 127.0.0.1. */
  host?: string;
  kubeconfig?: string;
  context?: string;
  /** `sim[:scenario]`: serve the simulated cluster, its virtual time following the wall clock. */
  cluster?: string;
  log?: Log;
}

export interface ServeSettings {
  config: AppConfig;
  /** CLAIMSTEP_BUDGET_CHARGE_SECONDS, if set. */
  chargeSeconds: number | undefined;
  tls: TlsFiles | undefined;
  port: number;
  host: string;
  /** Seconds between two sweeps; 0: none. */
  intervalSeconds: number;
  metrics: MetricsConfig;
}

export async function serveSettings(opts: ServeFromEnvOptions): Promise<ServeSettings> {
  const config = configFromEnv(opts.env);
  // A test's shorter R3 charge (CLAIMSTEP_BUDGET_CHARGE_SECONDS), read here as the CLI reads it:
  // Node only, so the Worker's bundle carries none of it.
  const charge = budgetChargeOf(opts.env);
  if (charge.problems.length) throw new ConfigError(charge.problems);
  const tls = tlsFilesFromEnv(opts.env);
  const port = opts.port ?? Number(opts.env.PORT ?? 8080);
  // The metrics (docs/operating.md "Metrics"): GET /metrics behind a bearer token, and on CLAIMSTEP_METRICS_ADDR.
  const { metricsConfigFromEnv } = await import("../metrics.js");
  const metrics = metricsConfigFromEnv(opts.env, config.bearerTokens);
  return {
    config,
    chargeSeconds: charge.seconds,
    tls,
    port,
    host: opts.host ?? (opts.env.CLAIMSTEP_HOST || DEFAULT_HOST),
    // The playground steps its sets by itself (every 2 s) unless CLAIMSTEP_INTERVAL_SECONDS says otherwise.
    intervalSeconds: opts.cluster && !opts.env.CLAIMSTEP_INTERVAL_SECONDS ? 2 : config.intervalSeconds,
    metrics,
  };
}
