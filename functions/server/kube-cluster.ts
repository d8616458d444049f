// A real cluster: the API server client (KUBE_API_SERVER + KUBE_TOKEN when set, else kubeconfig /
// in-cluster), each request told to the metrics, wired as the Worker is (functions/wiring.ts).
import { KubeClient, type KubeClientOptions } from "../../adapters/kube/client.js";
import type { AppConfig } from "../config.js";
import { countingMetrics } from "../recorded-step.js";
import { wire } from "../wiring.js";
import type { ServeContext, ServedCluster } from "./context.js";

async function kubeClientFor(
  config: AppConfig,
  opts: { kubeconfig?: string | undefined; context?: string | undefined },
  onRequest: KubeClientOptions["onRequest"],
): Promise<KubeClient> {
  if (config.kube) {
    const { server, token, headers } = config.kube;
    return new KubeClient({
      server,
      headers: { ...headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      onRequest,
    });
  }
  const { nodeKubeTarget } = await import("../../adapters/kube-node/kubeconfig.js");
  return nodeKubeTarget(
    { ...(opts.kubeconfig ? { kubeconfig: opts.kubeconfig } : {}), ...(opts.context ? { context: opts.context } : {}) },
    { onRequest },
  ).client;
}

export async function kubeCluster(ctx: ServeContext): Promise<ServedCluster> {
  const { config } = ctx.settings;
  const client = await kubeClientFor(config, ctx.opts, ctx.recorder.apiRequest);
  const wiring = wire({
    client,
    config,
    now: () => new Date(),
    replay: ctx.replay,
    log: ctx.log,
    instance: ctx.opts.env.HOSTNAME ?? "claimstep",
    runStep: ctx.recorded,
    wrapMetrics: (m) => countingMetrics(m, ctx.recorder),
  });
  return {
    deps: wiring.deps,
    listOptedIn: (ns) => wiring.listOptedIn(ns),
    leaseClient: client,
    stopClock: () => {},
  };
}
