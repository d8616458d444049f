// The sweep (`claimstep serve`, CLAIMSTEP_INTERVAL_SECONDS): every opted-in set stepped each
// interval, a set whose write the server refused left alone for a growing pause; with several
// replicas (CLAIMSTEP_LEASE=true) only the holder of the Lease sweeps, and a lost Lease stops the
// running step before its next write. What startServer runs it with.
import { RefusalBackoff } from "../backoff.js";
import type { Leadership } from "../lease/elector.js";
import { type SweepOptions, signalledReader, stopOnAbort, sweep } from "../sweep.js";
import type { ServeContext, ServedCluster } from "./context.js";

export interface Sweeper {
  /** Absent: this replica sweeps alone. */
  leader?: Leadership;
  /** Absent: no sweep (CLAIMSTEP_INTERVAL_SECONDS=0). */
  intervalMs?: number;
  tick?: () => Promise<unknown>;
}

/** Several replicas (CLAIMSTEP_LEASE=true): the Elector of this one, over the cluster's Lease. */
async function electorOf(ctx: ServeContext, cluster: ServedCluster): Promise<Leadership | undefined> {
  const { lease } = ctx.settings.config;
  if (!lease) return undefined;
  const { kubeElector, leaseIdentity } = await import("../lease/index.js");
  return kubeElector({
    client: cluster.leaseClient,
    config: lease,
    identity: leaseIdentity(ctx.opts.env.HOSTNAME),
    log: ctx.log,
  });
}

/** One pass over the opted-in sets; a lost Lease aborts the signal: the running step stops before its next write. */
function sweepPass(
  ctx: ServeContext,
  cluster: ServedCluster,
  pass: Pick<SweepOptions, "listOptedIn" | "tick" | "backoff">,
  leader: Leadership | undefined,
): Promise<unknown> {
  const { deps } = cluster;
  return sweep({
    ...pass,
    namespaces: ctx.settings.config.namespaces,
    step: (ref, signal) =>
      ctx.recorded({
        reader: signal ? signalledReader(deps.reader, signal) : deps.reader,
        writers: signal ? stopOnAbort(deps.writers, signal) : deps.writers,
        metrics: deps.metrics,
        ref,
        now: deps.now(),
      }),
    log: ctx.log,
    ...(leader ? { proceed: () => leader.holds(), signal: leader.signal() } : {}),
  });
}

export async function sweeper(ctx: ServeContext, cluster: ServedCluster): Promise<Sweeper> {
  const { recorder } = ctx;
  const { intervalSeconds } = ctx.settings;
  // A set the sweep no longer lists (deleted, opted out) loses its series.
  const listOptedIn = async (ns: string | undefined) => {
    const refs = await cluster.listOptedIn(ns);
    recorder.setsListed(ns, refs);
    return refs;
  };
  let tick = 0;
  // A set whose write the server refused is left alone for a growing pause (core/plan/backoff.ts), on the steps' clock.
  const backoff = new RefusalBackoff(() => cluster.deps.now().getTime());
  // Several replicas: only the holder of the Lease sweeps; every replica serves requests.
  const leader = await electorOf(ctx, cluster);
  // claimstep_lease_holder: 1 while this replica sweeps (holds the Lease, or sweeps alone).
  recorder.sweeps(() => (leader ? leader.holds() : intervalSeconds > 0));
  return {
    ...(leader ? { leader } : {}),
    ...(intervalSeconds > 0
      ? {
          intervalMs: intervalSeconds * 1000,
          tick: () => sweepPass(ctx, cluster, { listOptedIn, tick: tick++, backoff }, leader),
        }
      : {}),
  };
}
