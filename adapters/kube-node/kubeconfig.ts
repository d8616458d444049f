// Node only: a KubeClient from a kubeconfig (KUBECONFIG, ~/.kube/config, a given file and
// context, exec plugins, client certificates, insecure-skip-tls-verify) or from the pod's
// service account, loaded by @kubernetes/client-node. Never import this from Worker code.
import { readFileSync } from "node:fs";
import type { Agent } from "node:http";
import { KubeConfig } from "@kubernetes/client-node";
import { KubeClient, type KubeClientOptions } from "../kube/client.js";
import { agentFetch } from "./agent-fetch.js";

export interface KubeConfigSource {
  /** A kubeconfig file; default: $KUBECONFIG, ~/.kube/config, then the in-cluster service account. */
  kubeconfig?: string;
  /** A context of the kubeconfig; default its current-context. */
  context?: string;
  /** Use the pod's service account (KUBERNETES_SERVICE_HOST/PORT and its mounted token and CA). */
  inCluster?: boolean;
  /** Root under which the service account is mounted (default `/`), for unusual mounts and tests. */
  inClusterRoot?: string;
}

export interface NodeKubeTarget {
  client: KubeClient;
  kubeConfig: KubeConfig;
  /** API server URL. */
  server: string;
  context: string;
  /** The context's namespace (or the service account's), as kubectl would default it. */
  namespace: string;
}

const SA_DIR = "var/run/secrets/kubernetes.io/serviceaccount";

export class KubeConfigError extends Error {
  override readonly name = "KubeConfigError";
}

export function loadKubeConfig(src: KubeConfigSource = {}): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (src.inCluster) kc.loadFromCluster(src.inClusterRoot ? `${src.inClusterRoot.replace(/\/+$/, "")}/` : "");
    else if (src.kubeconfig) kc.loadFromFile(src.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    const reason = (err as Error).message;
    if (src.inCluster) throw new KubeConfigError(`cannot load the in-cluster service account: ${reason}`);
    if (src.kubeconfig) throw new KubeConfigError(`cannot load kubeconfig ${src.kubeconfig}: ${reason}`);
    // loadFromDefault reads $KUBECONFIG (a list of files), else ~/.kube/config: name the one that failed.
    const env = process.env.KUBECONFIG;
    if (env) {
      throw new KubeConfigError(
        `cannot load kubeconfig from $KUBECONFIG (KUBECONFIG=${env}): ${reason}; point KUBECONFIG at a kubeconfig file, unset it, or pass --kubeconfig`,
      );
    }
    throw new KubeConfigError(`cannot load kubeconfig ~/.kube/config: ${reason}`);
  }
  if (src.context) {
    if (!kc.getContextObject(src.context)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new KubeConfigError(`kubeconfig has no context "${src.context}" (it has: ${known.join(", ") || "none"})`);
    }
    kc.setCurrentContext(src.context);
  }
  const cluster = kc.getCurrentCluster();
  // loadFromDefault's last resort is http://localhost:8080, which is never what anyone meant.
  if (
    !src.inCluster &&
    !src.kubeconfig &&
    kc.getCurrentContext() === "loaded-context" &&
    cluster?.server === "http://localhost:8080"
  ) {
    throw new KubeConfigError(
      "no kubeconfig found: set KUBECONFIG, create ~/.kube/config, pass --kubeconfig, or run in a pod with a service account",
    );
  }
  if (!cluster) throw new KubeConfigError(`kubeconfig context "${kc.getCurrentContext()}" names no cluster`);
  // A plain-HTTP server (`kubectl proxy`'s http://127.0.0.1:8001) is used as kubectl uses it.
  // client-node refuses one unless skipTLSVerify is set, which means nothing without TLS: set it,
  // so that it builds a plain http.Agent.
  if (/^http:/i.test(cluster.server) && !cluster.skipTLSVerify) {
    kc.clusters = kc.clusters.map((c) => (c.name === cluster.name ? { ...c, skipTLSVerify: true } : c));
  }
  return kc;
}

/** Options for KubeClient: the cluster's URL, an agent-aware fetch, and fresh credentials per request. */
export function kubeClientOptions(kc: KubeConfig): KubeClientOptions {
  const server = kc.getCurrentCluster()!.server;
  let agent: { key: string; agent: Agent } | undefined;
  // client-node builds a new agent per call: keep the first while its TLS material is unchanged (keep-alive).
  const keep = (next: Agent | undefined) => {
    if (!next) return;
    const o = (next as unknown as { options?: Record<string, unknown> }).options ?? {};
    const key = JSON.stringify([o.ca, o.cert, o.key, o.pfx, o.rejectUnauthorized, o.servername]);
    if (agent?.key === key) return;
    agent?.agent.destroy();
    agent = { key, agent: next };
  };
  const inCluster = kc.getCurrentContext() === "inClusterContext";
  return {
    server,
    serverOrigin: inCluster
      ? "the pod's KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT"
      : `the kubeconfig's cluster server of context "${kc.getCurrentContext()}" (kubectl config view --minify)`,
    fetch: agentFetch(() => agent?.agent),
    headers: async () => {
      let init: RequestInit & { agent?: Agent };
      try {
        init = (await kc.applyToFetchOptions({})) as RequestInit & { agent?: Agent };
      } catch (err) {
        throw new KubeConfigError(
          `kubeconfig user "${kc.getCurrentUser()?.name ?? "?"}": cannot get credentials: ${(err as Error).message}`,
        );
      }
      keep(init.agent);
      return Object.fromEntries(new Headers(init.headers).entries());
    },
  };
}

/** A KubeClient for a kubeconfig context or the in-cluster service account. */
export function nodeKubeTarget(src: KubeConfigSource = {}, extra: Partial<KubeClientOptions> = {}): NodeKubeTarget {
  const kc = loadKubeConfig(src);
  const options = kubeClientOptions(kc);
  const context = kc.getCurrentContext();
  let namespace = kc.getContextObject(context)?.namespace?.trim();
  if (!namespace && (src.inCluster || context === "inClusterContext")) {
    try {
      namespace = readFileSync(`${src.inClusterRoot?.replace(/\/+$/, "") ?? ""}/${SA_DIR}/namespace`, "utf8").trim();
    } catch {
      // no namespace file: kubectl's default
    }
  }
  return {
    client: new KubeClient({ ...options, ...extra }),
    kubeConfig: kc,
    server: options.server,
    context,
    namespace: namespace || "default",
  };
}
