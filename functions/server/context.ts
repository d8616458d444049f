// What the parts of `claimstep serve` (functions/server/*.ts) share, built once: the options and
// settings, the log, the metrics' recorder, the step they all run, and the replay store; and the
// shape of the cluster served.
import type { KubeClient } from "../../adapters/kube/client.js";
import type { PromRecorder } from "../../adapters/metrics-node/registry.js";
import type { SetRef } from "../../core/types.js";
import type { AppDeps } from "../app.js";
import { RecentIds } from "../auth.js";
import type { instrumentFetch, serveMetrics } from "../metrics.js";
import { MidRecreate } from "../mid-recreate.js";
import { recordedStep } from "../recorded-step.js";
import type { StepOptions } from "../step.js";
import { jsonLog, type Log } from "./log.js";
import { type ServeFromEnvOptions, type ServeSettings, serveSettings } from "./settings.js";

/** The cluster served: the app's dependencies, the listing the sweep reads and the client of the sweeper's Lease (functions/server/cluster.ts). */
export interface ServedCluster {
  deps: AppDeps;
  /** Opted-in sets of a namespace, or of all namespaces. */
  listOptedIn(namespace: string | undefined): Promise<SetRef[]>;
  /** Where the sweeper's Lease is (CLAIMSTEP_LEASE=true). */
  leaseClient: KubeClient;
  /** Stop the playground's clock (a real cluster's: nothing to stop). */
  stopClock(): void;
}

export interface ServeContext {
  opts: ServeFromEnvOptions;
  settings: ServeSettings;
  log: Log;
  /** The webhook deliveries seen (their ids), shared by every route that checks a signature. */
  replay: RecentIds;
  recorder: PromRecorder;
  /** A step: recorded in the metrics, and watched for a set it leaves mid re-create. */
  recorded: ReturnType<MidRecreate["watch"]>;
  /** The sets a step left mid re-create are named in the log when the server stops (mid-recreate.ts). */
  midRecreate: MidRecreate;
  metrics: { instrumentFetch: typeof instrumentFetch; serveMetrics: typeof serveMetrics };
}

/**
 * Read the settings (throwing on the first bad one) and build the shared parts. `now` is the
 * steps' clock (the playground's virtual one or the wall clock), which the recorder asks.
 */
export async function serveContext(opts: ServeFromEnvOptions, now: () => Date): Promise<ServeContext> {
  const settings = await serveSettings(opts);
  const { instrumentFetch, serveMetrics } = await import("../metrics.js");
  const { PromRecorder } = await import("../../adapters/metrics-node/registry.js");
  const recorder = new PromRecorder({ now: () => now().getTime() });
  const midRecreate = new MidRecreate();
  return {
    opts,
    settings,
    log: opts.log ?? jsonLog,
    replay: new RecentIds(),
    recorder,
    recorded: midRecreate.watch((o: StepOptions) => recordedStep({ ...o, recorder })),
    midRecreate,
    metrics: { instrumentFetch, serveMetrics },
  };
}
