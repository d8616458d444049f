// CLAIMSTEP_LEASE*: several `claimstep serve` replicas elect one sweeper with a Lease
// (functions/lease/config.ts reads the variables); electing one needs a sweep to elect it for.
import { type LeaseConfig, type LeaseEnv, leaseConfig } from "../lease/config.js";
import type { Parsed } from "./vars.js";

export function sweepLeaseConfig(env: LeaseEnv, intervalSeconds: number): Parsed<{ lease?: LeaseConfig }> {
  const { config, problems } = leaseConfig(env);
  if (config && intervalSeconds === 0) {
    problems.push("CLAIMSTEP_LEASE: elects the replica that sweeps; set CLAIMSTEP_INTERVAL_SECONDS too (e.g. 60)");
  }
  return { config: config ? { lease: config } : {}, problems };
}
