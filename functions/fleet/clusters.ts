// The clusters one Worker serves, validated (pure: env strings in, clusters or problems out).
//
//   CLAIMSTEP_CLUSTERS = '[{"name":"eu-1","server":"https://kube-eu-1.example.com","tokenSecret":"KUBE_TOKEN_EU_1",
//                          "namespaces":["prod"],"caBundle":"-----BEGIN CERTIFICATE-----\n…"}]'
//
// Each token is a secret of its own (`npx wrangler secret put KUBE_TOKEN_EU_1`), named by
// `tokenSecret`, never in the JSON. KUBE_API_SERVER + KUBE_TOKEN, when set, are one more cluster,
// the default one (named by CLAIMSTEP_DEFAULT_CLUSTER, "default" unless set): the routes without
// /v1/clusters/:cluster act on it. Without KUBE_API_SERVER the first listed cluster is the default.
// Messages name the variable and the fix, never a value.
import * as z from "../../core/zod.js";

export interface Cluster {
  name: string;
  server: string;
  token: string;
  /** Namespaces claimstep acts in on this cluster; empty = all. */
  namespaces: string[];
  /** PEM; kept for clients that can pin it (see docs/deploying.md: Workers' fetch trusts public roots only). */
  caBundle?: string;
}

export interface Fleet {
  clusters: Cluster[];
  /** The cluster of the routes without /v1/clusters/:cluster. */
  defaultCluster: string;
}

const dns1123Label = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const envName = /^[A-Z_][A-Z0-9_]*$/;

const ClusterEntry = z.strictObject({
  name: z.string().check(z.regex(dns1123Label, "must be a DNS label: lowercase letters, digits and '-', at most 63")),
  server: z.url({ protocol: /^https?$/, error: "must be the API server's http:// or https:// URL" }),
  tokenSecret: z.string().check(z.regex(envName, "must name the secret holding the token, e.g. KUBE_TOKEN_EU_1")),
  namespaces: z.optional(z.array(z.string().check(z.regex(dns1123Label, "must be a namespace name")))),
  caBundle: z.optional(
    z.string().check(z.regex(/-----BEGIN CERTIFICATE-----/, "must be PEM (-----BEGIN CERTIFICATE-----…)")),
  ),
});

const FIX =
  'CLAIMSTEP_CLUSTERS must be a JSON array such as [{"name":"eu-1","server":"https://kube-eu-1.example.com","tokenSecret":"KUBE_TOKEN_EU_1"}]';

export interface FleetEnv {
  CLAIMSTEP_CLUSTERS?: unknown;
  CLAIMSTEP_DEFAULT_CLUSTER?: unknown;
  KUBE_API_SERVER?: unknown;
  KUBE_TOKEN?: unknown;
  [key: string]: unknown;
}

/**
 * The clusters of an environment: the listed ones and the default one. `namespaces` is
 * CLAIMSTEP_NAMESPACES (already validated), the filter of a cluster that names none.
 */
export function fleetFromEnv(env: FleetEnv, namespaces: readonly string[]): { fleet?: Fleet; problems: string[] } {
  const problems: string[] = [];
  const str = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? v.trim() : undefined);
  const clusters: Cluster[] = [];
  const server = str(env.KUBE_API_SERVER);
  const defaultName = str(env.CLAIMSTEP_DEFAULT_CLUSTER) ?? "default";
  if (!dns1123Label.test(defaultName))
    problems.push("CLAIMSTEP_DEFAULT_CLUSTER: must be a DNS label (lowercase letters, digits and '-')");
  if (server && str(env.KUBE_TOKEN)) {
    clusters.push({
      name: defaultName,
      server: server.replace(/\/+$/, ""),
      token: str(env.KUBE_TOKEN)!,
      namespaces: [...namespaces],
    });
  }
  const raw = str(env.CLAIMSTEP_CLUSTERS);
  if (raw !== undefined) {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      problems.push(`CLAIMSTEP_CLUSTERS: not valid JSON; ${FIX}`);
    }
    if (json !== undefined && !Array.isArray(json)) problems.push(`CLAIMSTEP_CLUSTERS: not an array; ${FIX}`);
    (Array.isArray(json) ? json : []).forEach((entry, i) => {
      const label =
        typeof (entry as { name?: unknown })?.name === "string"
          ? `cluster "${(entry as { name: string }).name}"`
          : `entry ${i}`;
      if (entry && typeof entry === "object" && "token" in entry) {
        problems.push(
          `CLAIMSTEP_CLUSTERS ${label}: leave the token out of the JSON; put it in a secret and name it in tokenSecret`,
        );
        return;
      }
      const parsed = ClusterEntry.safeParse(entry);
      if (!parsed.success) {
        for (const issue of parsed.error.issues)
          problems.push(`CLAIMSTEP_CLUSTERS ${label}: ${issue.path.join(".") || "(entry)"}: ${issue.message}`);
        return;
      }
      const c = parsed.data;
      const token = str(env[c.tokenSecret]);
      if (!token)
        problems.push(
          `CLAIMSTEP_CLUSTERS cluster "${c.name}": the secret ${c.tokenSecret} is not set (\`npx wrangler secret put ${c.tokenSecret}\`)`,
        );
      if (clusters.some((x) => x.name === c.name)) {
        problems.push(
          `CLAIMSTEP_CLUSTERS cluster "${c.name}": the name is used twice${c.name === defaultName && server ? " (KUBE_API_SERVER is the cluster named by CLAIMSTEP_DEFAULT_CLUSTER)" : ""}; give each cluster a name of its own`,
        );
      }
      clusters.push({
        name: c.name,
        server: c.server.replace(/\/+$/, ""),
        token: token ?? "",
        namespaces: c.namespaces ?? [...namespaces],
        ...(c.caBundle ? { caBundle: c.caBundle } : {}),
      });
    });
  }
  if (!clusters.length && !problems.length)
    problems.push("no cluster configured: set KUBE_API_SERVER and the secret KUBE_TOKEN, or CLAIMSTEP_CLUSTERS");
  if (problems.length) return { problems };
  return { fleet: { clusters, defaultCluster: server ? defaultName : clusters[0]!.name }, problems };
}

/**
 * A cluster by name, or an error naming the configured ones and the fix. `listNames: false` (a
 * caller not authenticated) says only that the name is unknown: the configured names are not public.
 */
export function clusterNamed(
  fleet: Fleet,
  name: string,
  { listNames = true }: { listNames?: boolean } = {},
): { cluster: Cluster } | { error: string } {
  const cluster = fleet.clusters.find((c) => c.name === name);
  if (cluster) return { cluster };
  const named = `cluster ${JSON.stringify(name.slice(0, 63))}`;
  if (!listNames)
    return {
      error: `${named} is not configured here; authenticate (Authorization: Bearer <token>) to see the configured ones`,
    };
  return {
    error: `${named} is not configured (configured: ${fleet.clusters.map((c) => c.name).join(", ")}); add it to CLAIMSTEP_CLUSTERS`,
  };
}
