// What a simulated cluster is built with (SimCluster's constructor); its saved state (state.ts)
// keeps them too, so both import them from here.
import type { Latencies } from "./controllers/context.js";
import type { FaultPlan } from "./faults.js";
import type { Identity } from "./http.js";

export interface SimClusterOptions {
  /** Seeds every random choice (uids, faults). Default 1. */
  seed?: number;
  /** Virtual start time. Default 2026-11-30T10:00:00Z. */
  start?: Date;
  /** Serve the VolumeAttributesClass API (a v1.31-like server). false: a v1.24 server, as the fixtures. Default true. */
  volumeAttributesClasses?: boolean;
  /** storage.k8s.io versions serving VolumeAttributesClasses when they are served; default ["v1"]. */
  volumeAttributesClassVersions?: ("v1" | "v1beta1")[];
  /**
   * A Kubernetes ≥ 1.34 server (RecoverVolumeExpansionFailure): a claim's request may be lowered to
   * any value strictly above status.capacity. Default: true, false on the v1.24 server
   * (`volumeAttributesClasses: false`), which refuses every decrease.
   */
  expansionRecovery?: boolean;
  faults?: FaultPlan;
  latencies?: Partial<Latencies>;
  /** Where the HTTP server answers (the client's server URL); default SIM_SERVER. */
  baseUrl?: string;
  /** Who unauthenticated requests are, when `tokens` is absent (RBAC rules apply). */
  anonymous?: Identity;
  /** Bearer tokens the HTTP server accepts, with their RBAC rules; absent = no authentication. */
  tokens?: Record<string, Identity>;
  /** The token `client()` sends by default (one of `tokens`). */
  token?: string;
  /** `reportingInstance` of the events `writers.events` records. */
  reportingInstance?: string;
  /** How many requests (and Prometheus queries) the servers' logs keep; default REQUEST_LOG_LIMIT. */
  requestLogLimit?: number;
}
