// CLAIMSTEP_LEASE*: several `claimstep serve` replicas elect one sweeper with a Lease. Problems
// name the variable and the fix, never a value.

/** The Lease's name (deploy/kubernetes/rbac.yaml grants get and patch on this name only). */
export const LEASE_NAME = "claimstep-sweeper";
/** claimstep's own namespace (rbac.yaml's Role claimstep-lease is there). */
export const DEFAULT_LEASE_NAMESPACE = "claimstep";

export interface LeaseConfig {
  namespace: string;
  name: string;
  durationSeconds: number;
  renewSeconds: number;
}

export type LeaseEnv = Partial<
  Record<
    | "CLAIMSTEP_LEASE"
    | "CLAIMSTEP_LEASE_NAMESPACE"
    | "CLAIMSTEP_LEASE_DURATION_SECONDS"
    | "CLAIMSTEP_LEASE_RENEW_SECONDS",
    string | undefined
  >
>;

const dns1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const blank = (v: string | undefined) => (v === undefined || v.trim() === "" ? undefined : v.trim());

/** The CLAIMSTEP_LEASE* variables: a LeaseConfig when CLAIMSTEP_LEASE=true, with the problems found. */
export function leaseConfig(env: LeaseEnv): { config?: LeaseConfig; problems: string[] } {
  const problems: string[] = [];
  const flag = blank(env.CLAIMSTEP_LEASE)?.toLowerCase();
  if (flag !== undefined && flag !== "true" && flag !== "false")
    problems.push("CLAIMSTEP_LEASE: must be true or false");
  const seconds = (
    name: "CLAIMSTEP_LEASE_DURATION_SECONDS" | "CLAIMSTEP_LEASE_RENEW_SECONDS",
    fallback: number,
    min: number,
  ): number => {
    const raw = blank(env[name]);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) {
      problems.push(`${name}: must be an integer ≥ ${min}`);
      return fallback;
    }
    return n;
  };
  const durationSeconds = seconds("CLAIMSTEP_LEASE_DURATION_SECONDS", 15, 3);
  const renewSeconds = seconds("CLAIMSTEP_LEASE_RENEW_SECONDS", 5, 1);
  const namespace = blank(env.CLAIMSTEP_LEASE_NAMESPACE) ?? DEFAULT_LEASE_NAMESPACE;
  if (!dns1123.test(namespace)) problems.push("CLAIMSTEP_LEASE_NAMESPACE: not a valid namespace name");
  // Three passes fit in a lease: a holder survives two failed renewals before it stops sweeping.
  if (renewSeconds * 3 > durationSeconds) {
    problems.push(
      "CLAIMSTEP_LEASE_RENEW_SECONDS: must be at most a third of CLAIMSTEP_LEASE_DURATION_SECONDS (defaults: 5 and 15)",
    );
  }
  if (flag !== "true") {
    const orphans = (
      ["CLAIMSTEP_LEASE_NAMESPACE", "CLAIMSTEP_LEASE_DURATION_SECONDS", "CLAIMSTEP_LEASE_RENEW_SECONDS"] as const
    ).filter((k) => blank(env[k]) !== undefined);
    if (flag === undefined && orphans.length)
      problems.push(
        `${orphans.join(", ")}: set only with CLAIMSTEP_LEASE=true (several server replicas electing one sweeper)`,
      );
    return { problems };
  }
  if (problems.length) return { problems };
  return { config: { namespace, name: LEASE_NAME, durationSeconds, renewSeconds }, problems };
}

/**
 * This replica's name for people: the pod name (HOSTNAME), else `claimstep`. The Elector makes the
 * holder's identity of it and a random UUID of its own, as client-go does (`hostname_uuid`): two
 * processes with the same HOSTNAME (a pod restarted in place, a copy run by hand, hostNetwork)
 * must never both take the Lease for their own.
 */
export function leaseIdentity(hostname: string | undefined): string {
  return blank(hostname) ?? "claimstep";
}
