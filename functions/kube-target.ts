// Kubernetes access on Node, as kubectl users expect it: a kubeconfig file (--kubeconfig,
// $KUBECONFIG, ~/.kube/config) and a context (--context), or the in-cluster service account
// (adapters/kube-node), for the CLI's commands and the relay's watches.
import { apiErrorFrom } from "../adapters/api-error.js";
import { writerFor } from "../adapters/gitops/apply-via.js";
import { parseRepositoryConfig } from "../adapters/gitops/config.js";
import { pullRequestWriter } from "../adapters/gitops/writer.js";
import type { KubeClient } from "../adapters/kube/client.js";
import { KubeReader, listOptedInSets, listStatefulSetNames } from "../adapters/kube/reader.js";
import { kubeWriters } from "../adapters/kube/writer.js";
import { type KubeConfigSource, kubeClientOptions, nodeKubeTarget } from "../adapters/kube-node/kubeconfig.js";
import { watchStream } from "../adapters/kube-node/watch.js";
import { PrometheusMetrics } from "../adapters/metrics/prometheus.js";
import type { SetRef } from "../core/types.js";
import type { Target } from "./cli/target.js";
import { budgetChargeOf, ConfigError, prometheusConfig } from "./config.js";
import type { WatchEvent, WatchSource } from "./relay/watch.js";

export type KubeConfigOptions = Pick<KubeConfigSource, "kubeconfig" | "context">;

export interface NodeKube {
  client: KubeClient;
  /** The context's namespace, else "default". */
  namespace: string;
  label: string;
}

export function nodeKubeClient(opts: KubeConfigOptions = {}): NodeKube {
  const t = nodeKubeTarget(opts);
  return { client: t.client, namespace: t.namespace, label: `context ${t.context}` };
}

/**
 * The relay's watch source: a plain LIST for (re)syncs and a WATCH stream of our own (client-node's
 * Watch drops a refusal's Status), both through the kubeconfig's agent; a refusal is an ApiError
 * with the server's words (which verb on which resource for whom).
 */
export function kubeWatchSource(opts: KubeConfigOptions = {}): WatchSource {
  const { kubeConfig } = nodeKubeTarget(opts);
  const http = kubeClientOptions(kubeConfig);
  return {
    async list(path) {
      const headers = typeof http.headers === "function" ? await http.headers() : (http.headers ?? {});
      const res = await http.fetch!(`${http.server}${path}`, {
        method: "GET",
        headers: { ...headers, Accept: "application/json" },
      });
      const text = await res.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: the text is the message
      }
      if (!res.ok) throw apiErrorFrom(res.status, body, { request: `list ${path}` });
      return { items: body?.items ?? [], resourceVersion: String(body?.metadata?.resourceVersion ?? "") };
    },
    async watch(path, resourceVersion, onEvent, done) {
      const query: Record<string, string> = { allowWatchBookmarks: "true" };
      if (resourceVersion) query.resourceVersion = resourceVersion;
      return watchStream(
        kubeConfig,
        path,
        query,
        (line) => onEvent({ type: line.type as WatchEvent["type"], object: line.object }),
        done,
      );
    },
  };
}

export const listOptedIn = (
  client: KubeClient,
  namespace: string | undefined,
  labelSelector?: string,
): Promise<SetRef[]> => listOptedInSets(client, namespace, undefined, labelSelector);

/**
 * The CLI's Target on a real cluster: direct writes, or pull requests for sets that ask
 * (CLAIMSTEP_GITOPS_REPOSITORY); autogrow's metrics from CLAIMSTEP_PROMETHEUS_URL (and its
 * credentials), as the server reads them; R3's budget charge shortened for tests
 * (CLAIMSTEP_BUDGET_CHARGE_SECONDS).
 */
export async function kubeTarget(
  opts: KubeConfigOptions & { env: Record<string, string | undefined> },
): Promise<Target> {
  const t = nodeKubeTarget(opts);
  const kube: NodeKube = { client: t.client, namespace: t.namespace, label: `context ${t.context}` };
  const direct = kubeWriters(kube.client, { reportingInstance: "claimstep-cli" });
  // A test's shorter R3 charge, on the pod writer that carries the evictions (Node only: the
  // Worker's bundle carries none of it).
  const charge = budgetChargeOf(opts.env);
  if (charge.seconds) Object.assign(direct.pods, { budgetChargeSeconds: charge.seconds });
  const repo = opts.env.CLAIMSTEP_GITOPS_REPOSITORY;
  const pullRequest = repo
    ? pullRequestWriter(parseRepositoryConfig({ ...JSON.parse(repo), token: opts.env.CLAIMSTEP_GITOPS_TOKEN ?? "" }))
    : undefined;
  const prometheus = prometheusConfig(opts.env);
  const problems = [...charge.problems, ...prometheus.problems];
  if (problems.length) throw new ConfigError(problems);
  return {
    label: kube.label,
    namespace: kube.namespace,
    reader: new KubeReader(kube.client),
    writers: { ...direct, claims: writerFor({ direct: direct.claims, ...(pullRequest ? { pullRequest } : {}) }) },
    ...(prometheus.config ? { metrics: new PrometheusMetrics(prometheus.config) } : {}),
    listOptedIn: (ns, selector) => listOptedIn(kube.client, ns, selector),
    listSets: (ns, signal) => listStatefulSetNames(kube.client, ns, signal),
    api: () => kubeClientOptions(t.kubeConfig),
    now: () => new Date(),
    pause: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener("abort", done, { once: true });
      }),
  };
}
