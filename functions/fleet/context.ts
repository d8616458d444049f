// The Worker's configuration with its clusters, and a cluster's Kubernetes client: shared by the
// fetch, scheduled and queue handlers and the Durable Objects. Worker-safe (no Node built-ins).
import { type FetchLike, KubeClient, type KubeClientOptions } from "../../adapters/kube/client.js";
import { type AppConfig, ConfigError, configFromEnv } from "../config.js";
import { type Cluster, type Fleet, fleetFromEnv } from "./clusters.js";
import type { FleetBindings } from "./runtime.js";

export interface FleetContext {
  config: AppConfig;
  fleet: Fleet;
}

const contexts = new WeakMap<object, FleetContext>();

/** The configuration and clusters of an env (once per env object: the isolate's). Throws ConfigError. */
export function fleetContext(env: Record<string, unknown>): FleetContext {
  let ctx = contexts.get(env);
  if (!ctx) {
    const listed = typeof env.CLAIMSTEP_CLUSTERS === "string" && env.CLAIMSTEP_CLUSTERS.trim() !== "";
    const config = configFromEnv(env, { requireKube: !listed });
    const { fleet, problems } = fleetFromEnv(env, config.namespaces);
    if (!fleet) throw new ConfigError(problems);
    ctx = { config, fleet };
    contexts.set(env, ctx);
  }
  return ctx;
}

/** Whether the Worker runs in fleet mode: the bindings are there and CLAIMSTEP_DISPATCH is not "sweep". */
export const fleetBindings = (env: Record<string, unknown>): FleetBindings | undefined =>
  env.SETS && env.LEDGER && env.STEP_QUEUE && env.CLAIMSTEP_DISPATCH !== "sweep"
    ? (env as unknown as FleetBindings)
    : undefined;

/** Whether the Worker must take the multi-cluster path (clusters listed, or fleet mode). */
export const usesFleet = (env: Record<string, unknown>): boolean =>
  (typeof env.CLAIMSTEP_CLUSTERS === "string" && env.CLAIMSTEP_CLUSTERS.trim() !== "") ||
  fleetBindings(env) !== undefined;

/** A client of one cluster: its token, and the Cloudflare Access service token when configured. */
export function clusterClient(
  env: Record<string, unknown>,
  cluster: Cluster,
  fetchImpl: FetchLike,
  opts: { attempts?: number; timeoutMs?: number; onRequest?: KubeClientOptions["onRequest"] } = {},
): KubeClient {
  const access: Record<string, string> =
    typeof env.CF_ACCESS_CLIENT_ID === "string" && typeof env.CF_ACCESS_CLIENT_SECRET === "string"
      ? { "CF-Access-Client-Id": env.CF_ACCESS_CLIENT_ID, "CF-Access-Client-Secret": env.CF_ACCESS_CLIENT_SECRET }
      : {};
  return new KubeClient({
    server: cluster.server,
    serverOrigin: `the server of cluster "${cluster.name}" (CLAIMSTEP_CLUSTERS, or KUBE_API_SERVER for the default cluster)`,
    fetch: fetchImpl,
    headers: { ...access, Authorization: `Bearer ${cluster.token}` },
    ...(opts.attempts !== undefined ? { retry: { attempts: opts.attempts } } : {}),
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.onRequest ? { onRequest: opts.onRequest } : {}),
  });
}

/** A fetch that counts the subrequests it makes (reset per invocation). */
export function countingFetch(base: () => FetchLike = () => fetch) {
  let count = 0;
  return {
    fetch: (url: string, init?: RequestInit) => {
      count++;
      return base()(url, init ?? {});
    },
    used: () => count,
    reset: () => void (count = 0),
    add: (n: number) => void (count += n),
  };
}
