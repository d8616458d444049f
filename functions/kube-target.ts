// Kubernetes access on Node, as kubectl users expect it: a kubeconfig file (--kubeconfig,
// $KUBECONFIG, ~/.kube/config) and a context (--context), or the in-cluster service account.
// @kubernetes/client-node loads the config (exec plugins, client certificates, CA) and signs each
// request; the one REST client (adapters/kube) does the rest.
import type { KubeConfig } from "@kubernetes/client-node";
import { Keys, type SetRef } from "../core/types.js";
import { KubeClient, type FetchLike } from "../adapters/kube/client.js";
import { KubeReader, listOptedInSets } from "../adapters/kube/reader.js";
import { KubeWriter } from "../adapters/kube/writer.js";
import { StatefulSet } from "../core/k8s.js";
import { Routes } from "../adapters/kube/routes.js";
import { writerFor } from "../adapters/gitops/apply-via.js";
import { parseRepositoryConfig } from "../adapters/gitops/config.js";
import { pullRequestWriter } from "../adapters/gitops/writer.js";
import type { Target } from "./cli.js";

export interface KubeConfigOptions {
  kubeconfig?: string;
  context?: string;
}

export async function loadKubeConfig(opts: KubeConfigOptions = {}): Promise<KubeConfig> {
  const k8s = await import("@kubernetes/client-node");
  const kc = new k8s.KubeConfig();
  if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
  else kc.loadFromDefault();
  if (opts.context) {
    if (!kc.getContextObject(opts.context)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new Error(`context "${opts.context}" is not in the kubeconfig (contexts: ${known.join(", ") || "none"})`);
    }
    kc.setCurrentContext(opts.context);
  }
  if (!kc.getCurrentCluster()) {
    throw new Error("no Kubernetes cluster configured: pass --kubeconfig/--context, set KUBECONFIG, run in a pod, or try --cluster sim");
  }
  return kc;
}

/** fetch through client-node's request options (TLS agent, credentials refreshed per request). */
function kubeconfigFetch(kc: KubeConfig): FetchLike {
  return async (url, init) => {
    const { default: nodeFetch } = await import("node-fetch");
    const signed = (await kc.applyToFetchOptions({})) as Record<string, any>;
    // client-node answers with node-fetch Headers (credentials included), which do not spread.
    const headers: Record<string, string> = {};
    if (typeof signed.headers?.forEach === "function") signed.headers.forEach((v: string, k: string) => (headers[k] = v));
    else Object.assign(headers, signed.headers);
    Object.assign(headers, init.headers);
    const res = await nodeFetch(url, {
      ...signed,
      method: init.method ?? "GET",
      headers,
      ...(init.body !== undefined && init.body !== null ? { body: init.body as string } : {}),
      ...(init.signal ? { signal: init.signal as any } : {}),
    });
    return res as unknown as Response;
  };
}

export interface NodeKube {
  client: KubeClient;
  /** The context's namespace, else "default". */
  namespace: string;
  label: string;
}

export async function nodeKubeClient(opts: KubeConfigOptions = {}): Promise<NodeKube> {
  const kc = await loadKubeConfig(opts);
  const cluster = kc.getCurrentCluster()!;
  const context = kc.getContextObject(kc.getCurrentContext());
  return {
    client: new KubeClient({ server: cluster.server, fetch: kubeconfigFetch(kc) }),
    namespace: context?.namespace ?? "default",
    label: `context ${kc.getCurrentContext()}`,
  };
}

const listAllStatefulSets = { ...Routes.listStatefulSets, namespaced: false };

export async function listOptedIn(client: KubeClient, namespace: string | undefined): Promise<SetRef[]> {
  if (namespace !== undefined) return listOptedInSets(client, namespace);
  const sets = await client.list(listAllStatefulSets, {}, StatefulSet);
  return sets
    .filter((s) => s.metadata.annotations?.[Keys.strategy] === "InPlace")
    .map((s) => ({ namespace: s.metadata.namespace ?? "default", name: s.metadata.name }));
}

/** The CLI's Target on a real cluster: direct writes, or pull requests for sets that ask (CLAIMSTEP_GITOPS_REPOSITORY). */
export async function kubeTarget(opts: KubeConfigOptions & { env: Record<string, string | undefined> }): Promise<Target> {
  const kube = await nodeKubeClient(opts);
  const direct = new KubeWriter(kube.client, { reportingInstance: "claimstep-cli" });
  const repo = opts.env.CLAIMSTEP_GITOPS_REPOSITORY;
  const pullRequest = repo
    ? pullRequestWriter(parseRepositoryConfig({ ...JSON.parse(repo), token: opts.env.CLAIMSTEP_GITOPS_TOKEN ?? "" }), { statusWriter: direct })
    : undefined;
  return {
    label: kube.label,
    namespace: kube.namespace,
    reader: new KubeReader(kube.client),
    writerFor: writerFor({ direct, ...(pullRequest ? { pullRequest } : {}) }),
    annotator: direct,
    listOptedIn: (ns) => listOptedIn(kube.client, ns),
    now: () => new Date(),
    pause: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
}
