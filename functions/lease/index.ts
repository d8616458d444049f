// The Node server's sweeper election (CLAIMSTEP_LEASE=true): the Elector over the Lease through the
// direct adapter.
import type { KubeClient } from "../../adapters/kube/client.js";
import { KubeLease } from "../../adapters/kube/lease.js";
import { defaultMarginMs } from "../../core/kube/index.js";
import type { LeaseConfig } from "./config.js";
import { Elector, type ElectorClock } from "./elector.js";

export { LEASE_NAME, type LeaseConfig, leaseIdentity } from "./config.js";
export { Elector, type ElectorClock } from "./elector.js";

export interface KubeElectorOptions {
  client: KubeClient;
  config: LeaseConfig;
  /** This replica's name for people (leaseIdentity(HOSTNAME)); the Elector adds a random part of its own. */
  identity: string;
  log?: (entry: Record<string, unknown>) => void;
  clock?: ElectorClock;
}

export function kubeElector(opts: KubeElectorOptions): Elector {
  const leaseDurationMs = opts.config.durationSeconds * 1000;
  const renewMs = opts.config.renewSeconds * 1000;
  return new Elector({
    // A request may take one renew period; the next pass tries again.
    lease: new KubeLease(opts.client, { namespace: opts.config.namespace, name: opts.config.name, timeoutMs: renewMs }),
    identity: opts.identity,
    leaseDurationMs,
    marginMs: defaultMarginMs(leaseDurationMs),
    renewMs,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.log ? { log: opts.log } : {}),
  });
}
