// What an e2e test file needs: `const e2e = useControlPlane()` at the top level gives a fresh
// namespace on the real cluster of this run, the admin's REST helper scoped to it, the node agent
// serving it, and the audit checks; every test of the file is skipped when the run has no cluster
// (or when the file needs the fake driver and the cluster is an existing one).
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, beforeEach, inject } from "vitest";
import {
  type AuditCheck,
  type AuditCheckOptions,
  type AuditEntry,
  type AuditFilter,
  auditEvents,
  checkAudit,
} from "./audit.js";
import { admin, asClaimstep, type ClusterInfo, ok, type Rest, waitFor } from "./control-plane.js";
// The ProvidedContext augmentation (claimstepE2E).
import type {} from "./global-setup.js";
import { NAMESPACE_LABEL, type NodeAgent, type NodeAgentOptions, startNodeAgent } from "./node-agent.js";

export * from "./audit.js";
export * from "./control-plane.js";
export * from "./node-agent.js";

export interface UseControlPlaneOptions {
  /** Namespace name prefix (default "e2e"); a random suffix is added. */
  prefix?: string;
  /** The scenario needs the fake driver (node agent): skipped on an existing cluster. */
  needsFakeDriver?: boolean;
  /** Node agent tuning (its namespaces are the namespace of this call). */
  agent?: Omit<NodeAgentOptions, "namespaces">;
  /** Namespace labels. */
  labels?: Record<string, string>;
  /** After the file: "background" (default) deletes the namespace and stops the agent at once (the
   * namespace controller alone takes 10–20 s; the cluster goes away at the end of the run anyway);
   * "wait" keeps the agent running until the namespace and its volumes are gone (≤ 60 s). */
  cleanup?: "background" | "wait";
}

export interface E2E {
  readonly info: ClusterInfo;
  /** This call's namespace (created in beforeAll, deleted in afterAll). */
  readonly namespace: string;
  /** The admin's REST helper (cluster-wide). */
  readonly admin: Rest;
  /** The admin's REST helper with this namespace as default. */
  readonly api: ReturnType<Rest["in"]>;
  /** As claimstep's ServiceAccount (shipped RBAC only). */
  readonly claimstep: Rest;
  /** The node agent for this namespace; null on an existing cluster. */
  readonly agent: NodeAgent | null;
  /** True on a control plane started by this run (audit log, node agent). */
  readonly local: boolean;
  /** False when this file's tests are skipped: guard the file's own beforeAll/afterAll with it
   * (vitest runs them even when every test skips). */
  readonly available: boolean;
  /** Why the file's tests are skipped (undefined when available). */
  readonly skipReason: string | undefined;
  /** This namespace's audit entries (ResponseComplete); [] when there is no audit log. */
  audit(filter?: AuditFilter): AuditEntry[];
  /** checkAudit on this namespace with claimstep's user; null when there is no audit log ("not available"). */
  checkAudit(o?: Omit<AuditCheckOptions, "events" | "namespace" | "claimstepUser">): AuditCheck | null;
}

const SKIP_NO_CLUSTER = "real-server suite skipped (no CLAIMSTEP_KUBE_ASSETS or CLAIMSTEP_E2E_KUBECONFIG)";

/** Call at the top level of a test file (or a describe). */
export function useControlPlane(opts: UseControlPlaneOptions = {}): E2E {
  const info = inject("claimstepE2E");
  let namespace: string | undefined;
  let agent: NodeAgent | null = null;
  let skip: string | undefined;
  if (!info) skip = SKIP_NO_CLUSTER;
  else if (opts.needsFakeDriver && info.mode !== "local")
    skip = "needs the fake driver (node agent): not run on an existing cluster";

  beforeEach((ctx) => {
    if (skip) ctx.skip(skip);
  });

  const need = <T>(v: T | undefined, what: string): T => {
    if (v === undefined)
      throw new Error(`useControlPlane: ${what} is not ready (use it inside tests or hooks, after beforeAll)`);
    return v;
  };

  let adminRest: Rest | undefined;
  beforeAll(async () => {
    if (skip || !info) return;
    adminRest = admin(info);
    const name = `${opts.prefix ?? "e2e"}-${randomBytes(3).toString("hex")}`;
    ok(
      await adminRest.create("namespaces", null, {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name, labels: { [NAMESPACE_LABEL]: name, ...opts.labels } },
      }),
      `create namespace ${name}`,
    );
    namespace = name;
    if (info.mode === "node") {
      // The kubelet starts a pod only once the namespace's CA ConfigMaps exist (real-node.ts).
      await waitFor(
        async () =>
          (await adminRest!.get("configmaps", name, "kube-root-ca.crt")).status === 200 &&
          (await adminRest!.get("configmaps", name, "openshift-service-ca.crt")).status === 200,
        { timeoutMs: 30_000, intervalMs: 200, what: `namespace ${name}: its CA ConfigMaps published` },
      );
    }
    if (info.mode === "local") agent = await startNodeAgent(info, { ...opts.agent, namespaces: [name] });
  });

  afterAll(async () => {
    if (!info || !namespace || !adminRest) return;
    const r = adminRest;
    const ns = namespace;
    const t0 = Date.now();
    await r.delete("namespaces", null, ns);
    // The namespace controller deletes the pods (the agent finishes them), the claims (once no pod
    // uses them) and then the namespace; the agent releases and deletes the claims' volumes.
    if (agent && opts.cleanup !== "wait") {
      await agent.stop();
      return;
    }
    if (agent) {
      try {
        await waitFor(async () => (await r.get("namespaces", null, ns)).status === 404, {
          timeoutMs: 45_000,
          intervalMs: 500,
          what: `namespace ${ns} deleted`,
        });
        await waitFor(
          async () =>
            ((await r.list("persistentvolumes", null, { labelSelector: `${NAMESPACE_LABEL}=${ns}` })).body.items ?? [])
              .length === 0,
          {
            timeoutMs: 10_000,
            intervalMs: 500,
            what: `the volumes of namespace ${ns} deleted`,
          },
        );
      } catch (e) {
        // Not the test's failure: the cluster goes away at the end of the run anyway.
        console.warn(`claimstep e2e: ${e instanceof Error ? e.message : String(e)}`);
      } finally {
        await agent.stop();
        if (process.env.CLAIMSTEP_E2E_VERBOSE === "1")
          console.log(`claimstep e2e: namespace ${ns} and its volumes gone in ${Date.now() - t0} ms`);
      }
    }
  }, 90_000);

  return {
    get info() {
      return need(info ?? undefined, "the cluster");
    },
    get namespace() {
      return need(namespace, "the namespace");
    },
    get admin() {
      return need(adminRest, "the admin client");
    },
    get api() {
      return need(adminRest, "the admin client").in(need(namespace, "the namespace"));
    },
    get claimstep() {
      return asClaimstep(need(info ?? undefined, "the cluster"));
    },
    get agent() {
      return agent;
    },
    get local() {
      return info?.mode === "local";
    },
    get available() {
      return skip === undefined;
    },
    get skipReason() {
      return skip;
    },
    audit(filter: AuditFilter = {}) {
      const i = need(info ?? undefined, "the cluster");
      if (!i.auditLogPath) return [];
      return auditEvents(i.auditLogPath, {
        ...filter,
        namespace: filter.namespace ?? need(namespace, "the namespace"),
      });
    },
    checkAudit(o = {}) {
      const i = need(info ?? undefined, "the cluster");
      if (!i.auditLogPath) return null;
      const ns = need(namespace, "the namespace");
      const events = auditEvents(i.auditLogPath, o.clusterScoped ? {} : { namespace: ns });
      return checkAudit({ ...o, events, namespace: ns, claimstepUser: i.claimstepUser });
    },
  };
}
