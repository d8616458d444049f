// From a configured Kubernetes REST client to everything an entry point serves with: reader,
// writers (the claim writer chosen per set, direct or pull request; the set-status writer and
// event recorder, always direct), autogrow's metrics (Prometheus, when configured), the GitOps
// webhook routes, and the listing of opted-in sets.
// Shared by the Worker and the Node server; free of Node-only imports.

import { writerFor } from "../adapters/gitops/apply-via.js";
import type { Fetch } from "../adapters/gitops/http.js";
import { pullRequestWriter } from "../adapters/gitops/writer.js";
import type { KubeClient } from "../adapters/kube/client.js";
import { KubeReader, listOptedInSets } from "../adapters/kube/reader.js";
import { kubeWriters } from "../adapters/kube/writer.js";
import { PrometheusMetrics } from "../adapters/metrics/prometheus.js";
import type { MetricsReader, Writers } from "../core/ports.js";
import type { SetRef } from "../core/types.js";
import type { AppDeps, Mount } from "./app.js";
import { type AnyReplayGuard, RecentIds } from "./auth.js";
import type { AppConfig } from "./config.js";
import { gitopsWebhookRoutes } from "./routes/gitops-webhooks.js";
import { runStep, type StepOptions, type StepResult } from "./step.js";
import { uiSource } from "./ui/source.js";

export interface WiringOptions {
  client: KubeClient;
  config: AppConfig;
  now: () => Date;
  replay: AnyReplayGuard;
  /**
   * Delivery ids of the GitHub/GitLab webhooks: a store of their own, so that forge deliveries never
   * use up the relay's (`replay`) budget. Default: a new in-memory store.
   */
  forgeReplay?: AnyReplayGuard;
  log?: (entry: Record<string, unknown>) => void;
  /** fetch for the Git hosting API and Prometheus (the Worker passes its counting fetch). */
  fetch?: Fetch;
  /** `reportingInstance` of Events. */
  instance?: string;
  /**
   * Run a (non-dry-run) step some other way than here and now: the Worker's fleet mode sends it to
   * the set's Durable Object, which serializes the steps of its set (functions/fleet/).
   */
  step?: (ref: SetRef) => Promise<StepResult>;
  /** How a step runs here; default runStep (the Node server's records it for its metrics: functions/recorded-step.ts). */
  runStep?: (opts: StepOptions) => Promise<StepResult>;
  /** Wraps autogrow's metrics reader (the Node server counts its failed queries). */
  wrapMetrics?: (metrics: MetricsReader) => MetricsReader;
}

export interface Wiring {
  deps: AppDeps;
  /** Opted-in sets of a namespace, or of all namespaces. */
  listOptedIn(namespace: string | undefined): Promise<SetRef[]>;
}

export function wire(opts: WiringOptions): Wiring {
  const { client, config } = opts;
  const reader = new KubeReader(client);
  const direct = kubeWriters(client, { reportingInstance: opts.instance ?? "claimstep" });
  const pullRequest = config.gitops
    ? pullRequestWriter(config.gitops, opts.fetch ? { fetch: opts.fetch } : {})
    : undefined;
  const writers: Writers = {
    ...direct,
    claims: writerFor({ direct: direct.claims, ...(pullRequest ? { pullRequest } : {}) }),
  };
  const prometheus: MetricsReader | undefined = config.prometheus
    ? new PrometheusMetrics({ ...config.prometheus, ...(opts.fetch ? { fetch: opts.fetch } : {}) })
    : undefined;
  const metrics = prometheus && opts.wrapMetrics ? opts.wrapMetrics(prometheus) : prometheus;
  const step = opts.runStep ?? runStep;

  const githubRepository = config.gitops?.provider === "github" ? config.gitops.repository : undefined;
  const gitlabRepository = config.gitops?.provider === "gitlab" ? config.gitops.repository : undefined;
  const mounts: Mount[] = [];
  if (config.githubWebhookSecret || config.gitlabWebhookToken) {
    mounts.push({
      prefix: "/v1/webhooks",
      // The app's body reader, placed after the forges' header checks (refused before any body is read).
      app: (body) =>
        gitopsWebhookRoutes({
          body,
          // Only pull requests whose head is the GitOps repository step the set (a fork's are ignored).
          ...(config.githubWebhookSecret
            ? {
                github: {
                  secret: config.githubWebhookSecret,
                  ...(githubRepository ? { repository: githubRepository } : {}),
                },
              }
            : {}),
          ...(config.gitlabWebhookToken
            ? {
                gitlab: {
                  token: config.gitlabWebhookToken,
                  ...(gitlabRepository ? { repository: gitlabRepository } : {}),
                },
              }
            : {}),
          step: (ref) => (opts.step ? opts.step(ref) : step({ reader, writers, metrics, ref, now: opts.now() })),
          namespaces: config.namespaces,
          replay: opts.forgeReplay ?? new RecentIds(),
          ...(opts.log ? { log: opts.log } : {}),
        }),
    });
  }

  const deps: AppDeps = {
    reader,
    writers,
    auth: { bearerTokens: config.bearerTokens, webhookSecrets: config.webhookSecrets, replay: opts.replay },
    now: opts.now,
    namespaces: config.namespaces,
    bodyLimitBytes: config.bodyLimitBytes,
    mounts,
    ...(opts.log ? { log: opts.log } : {}),
    ...(config.viewers?.length ? { ui: { viewers: config.viewers, source: uiSource(client) } } : {}),
    ...(metrics ? { metrics } : {}),
    ...(opts.step ? { stepper: opts.step } : {}),
    ...(opts.runStep ? { runStep: opts.runStep } : {}),
  };

  return {
    deps,
    listOptedIn: (namespace) => listOptedInSets(client, namespace),
  };
}
