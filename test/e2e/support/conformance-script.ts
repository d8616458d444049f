// The conformance script (issue 22): one sequence of requests, sent by claimstep's production
// client, reader and writers (and, for the shapes only a person sends, by the same KubeClient), to
// a real API server and to the simulated one. Every request and its answer is recorded through a
// wrapping fetch, so that the two recordings can be compared (test/e2e/conformance.test.ts) and
// the real one written as fixtures (scripts/capture-fixtures.ts).
//
// A Side is one server: how to reach it (a fetch, tokens) and how to wait for its controllers
// (real time on the real server, the virtual clock on the simulated one).
import { readFileSync } from "node:fs";
import { Agent as HttpsAgent } from "node:https";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { type FetchLike, KubeClient } from "../../../adapters/kube/client.js";
import { KubeLease } from "../../../adapters/kube/lease.js";
import { KubeReader, listOptedInSets } from "../../../adapters/kube/reader.js";
import { RecreateRoutes, type Route, Routes } from "../../../adapters/kube/routes.js";
import {
  KubeClaimWriter,
  KubeEventRecorder,
  KubePodWriter,
  KubeRecreateWriter,
  KubeSetStatusWriter,
  MERGE_PATCH,
} from "../../../adapters/kube/writer.js";
import { agentFetch } from "../../../adapters/kube-node/agent-fetch.js";
import { SimCluster } from "../../../adapters/sim/cluster.js";
import { type PolicyRule, SIM_SERVER } from "../../../adapters/sim/http.js";
import type { SimClusterOptions } from "../../../adapters/sim/options.js";
import type { PatchClaim } from "../../../core/types.js";
import * as z from "../../../core/zod.js";
import type { ClusterInfo } from "./control-plane.js";
import { type StorageClassBehaviour, storageClass, volumeAttributesClass } from "./node-agent.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

export const CLAIMSTEP_USER = "system:serviceaccount:claimstep:claimstep";

/** One request of the script and the server's answer. */
export interface Exchange {
  /** The script's name of the request (unique: `<step>` or `<step>-<n>` when a step sends several). */
  name: string;
  step: string;
  /** Who sent it: claimstep's identity, the admin (reads of what a refusal left), or a bad token. */
  as: "claimstep" | "admin" | "bad-token";
  method: string;
  path: string;
  query: Record<string, string>;
  contentType?: string;
  requestBody?: unknown;
  status: number;
  body: unknown;
}

/** One API server the script runs against. */
export interface Side {
  name: "real" | "sim";
  server: string;
  /** How each identity reaches the server: a transport (TLS to the real server, the simulated server's fetch handler) and its auth headers. */
  transport(as: Exchange["as"]): { fetch: FetchLike; headers: Record<string, string> };
  /** Until fn is true: polls in real time (real) or advances the virtual clock (sim). */
  until(what: string, fn: () => Promise<boolean>, timeoutMs?: number): Promise<void>;
  /** Let the controllers run for a while (real time, or the virtual clock). */
  pause(ms: number): Promise<void>;
  /** How a StorageClass's volumes behave: the real node agent reads the class's annotations; the sim needs to be told. */
  classBehaviour?(name: string, b: StorageClassBehaviour): void;
}

/** Names of everything the script creates (the same on both sides, so messages compare as they are). */
export interface ScriptNames {
  namespace: string;
  fast: string;
  fixed: string;
  silver: string;
  gold: string;
  /** A Lease claimstep may create (not claimstep-sweeper: RBAC lets it read only that one). */
  lease: string;
  /** The namespace claimstep's Lease Role is in. */
  leaseNamespace: string;
}

export const SET = "web";
const OTHER_SET = "other";
const PENDING_CLAIM = "pending-data";

// ---------------------------------------------------------------------------------------------
// claimstep's RBAC, as shipped: the rules the sim's claimstep identity gets

/** The rules deploy/kubernetes/rbac*.yaml bind to ServiceAccount claimstep/claimstep (a Role's namespace is not modelled by the sim). */
export function shippedRules(): PolicyRule[] {
  const docs = ["deploy/kubernetes/rbac.yaml", "deploy/kubernetes/rbac-finalize.yaml"].flatMap((f) =>
    parseAllDocuments(readFileSync(join(repoRoot, f), "utf8")).map(
      (d) =>
        d.toJS() as {
          kind: string;
          metadata: { name: string; namespace?: string };
          rules?: PolicyRule[];
          roleRef?: { kind: string; name: string };
          subjects?: { kind: string; name: string; namespace?: string }[];
        },
    ),
  );
  const rules: PolicyRule[] = [];
  for (const b of docs.filter((d) => d?.kind === "ClusterRoleBinding" || d?.kind === "RoleBinding")) {
    if (!b.subjects?.some((s) => s.kind === "ServiceAccount" && s.name === "claimstep" && s.namespace === "claimstep"))
      continue;
    const role = docs.find((d) => d?.kind === b.roleRef!.kind && d.metadata.name === b.roleRef!.name);
    if (!role?.rules)
      throw new Error(`${b.metadata.name} binds ${b.roleRef!.kind} ${b.roleRef!.name}, which is not shipped`);
    rules.push(
      ...role.rules.map((r) => ({
        apiGroups: r.apiGroups,
        resources: r.resources,
        verbs: r.verbs,
        ...(r.resourceNames ? { resourceNames: r.resourceNames } : {}),
      })),
    );
  }
  return rules;
}

// ---------------------------------------------------------------------------------------------
// the recorder

const route = (verb: Route["verb"], group: string, version: string, resource: string, namespaced = true): Route => ({
  verb,
  group,
  version,
  resource,
  namespaced,
  retry: false,
});
const R = {
  getClaim: route("get", "", "v1", "persistentvolumeclaims"),
  createClaim: route("create", "", "v1", "persistentvolumeclaims"),
  deleteClaim: route("delete", "", "v1", "persistentvolumeclaims"),
  getPod: route("get", "", "v1", "pods"),
  getBudget: route("get", "policy", "v1", "poddisruptionbudgets"),
  createBudget: route("create", "policy", "v1", "poddisruptionbudgets"),
  patchBudget: route("patch", "policy", "v1", "poddisruptionbudgets"),
  createSet: route("create", "apps", "v1", "statefulsets"),
  getSet: route("get", "apps", "v1", "statefulsets"),
  createStorageClass: route("create", "storage.k8s.io", "v1", "storageclasses", false),
  createVac: route("create", "storage.k8s.io", "v1", "volumeattributesclasses", false),
  deleteLease: route("delete", "coordination.k8s.io", "v1", "leases"),
  getConfigMap: route("get", "", "v1", "configmaps"),
};

class Recorder {
  readonly exchanges: Exchange[] = [];
  step = "setup";
  /** Off during setup and waits: only the script's requests are recorded. */
  on = false;

  fetchFor(as: Exchange["as"], transport: FetchLike): FetchLike {
    return async (url, init) => {
      const res = await transport(url, init);
      if (!this.on) return res;
      const text = await res.text();
      const u = new URL(url);
      const headers = new Headers(init.headers);
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        /* kept as text */
      }
      let requestBody: unknown;
      if (typeof init.body === "string") {
        try {
          requestBody = JSON.parse(init.body);
        } catch {
          requestBody = init.body;
        }
      }
      this.exchanges.push({
        name: this.step,
        step: this.step,
        as,
        method: (init.method ?? "GET").toUpperCase(),
        path: u.pathname,
        query: Object.fromEntries(u.searchParams),
        ...(headers.get("content-type") ? { contentType: headers.get("content-type")! } : {}),
        ...(requestBody !== undefined ? { requestBody } : {}),
        status: res.status,
        body,
      });
      return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
  }

  /**
   * Names each exchange `<step>`, or `<step>-<n>` when a step sent several: ordered by method and
   * path (a reader's concurrent requests arrive in any order), sequential ones of the same path
   * in the order sent.
   */
  named(): Exchange[] {
    const steps = [...new Set(this.exchanges.map((e) => e.step))];
    return steps.flatMap((step) => {
      const of = this.exchanges.filter((e) => e.step === step);
      const sorted = of
        .map((e, i) => ({ e, i }))
        .sort((a, b) => (a.e.method + a.e.path).localeCompare(b.e.method + b.e.path) || a.i - b.i)
        .map((x) => x.e);
      return sorted.map((e, i) => ({ ...e, name: sorted.length > 1 ? `${step}-${i + 1}` : step }));
    });
  }

  /** Drop what a step recorded (a retried attempt). */
  discard(step: string): void {
    for (let i = this.exchanges.length - 1; i >= 0; i--)
      if (this.exchanges[i]!.step === step) this.exchanges.splice(i, 1);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// the script

type Obj = any;

/**
 * Runs the script against one side and returns what it recorded. Needs, on the real server, a
 * namespace `names.namespace` (created by the caller) and a node agent serving it; creates the
 * classes, sets, budget and Lease it names, and deletes the cluster-scoped ones and the Lease at
 * the end (the namespace is the caller's to delete).
 */
export async function runConformanceScript(side: Side, names: ScriptNames): Promise<Exchange[]> {
  const rec = new Recorder();
  const client = (as: Exchange["as"]) => {
    const t = side.transport(as);
    // The admin's writes are not claimstep's: managedFields name the User-Agent of an Update.
    const headers = as === "admin" ? { ...t.headers, "User-Agent": "conformance-admin" } : t.headers;
    return new KubeClient({
      server: side.server,
      fetch: rec.fetchFor(as, t.fetch),
      headers,
      retry: { attempts: 1 },
      timeoutMs: 20_000,
    });
  };
  const cs = client("claimstep");
  const admin = client("admin");
  const bad = client("bad-token");
  const ns = names.namespace;
  const ref = { namespace: ns, name: SET };
  const reader = new KubeReader(cs);
  const claims = new KubeClaimWriter(cs);
  const status = new KubeSetStatusWriter(cs);
  const pods = new KubePodWriter(cs);
  const recreate = new KubeRecreateWriter(cs);

  /** A script step: its requests are recorded under `name`; an expected refusal is the answer, not a failure. */
  const step = async <T>(name: string, fn: () => Promise<T>): Promise<T | undefined> => {
    rec.step = name;
    rec.on = true;
    try {
      return await fn();
    } catch {
      return undefined;
    } finally {
      rec.on = false;
      rec.step = "setup";
    }
  };
  /** Admin reads and writes of the setup, not recorded; a failure stops the script. */
  const get = async (r: Route, name: string, namespace: string | undefined = ns): Promise<Obj> =>
    admin.send(r, { ...(namespace ? { namespace } : {}), name });
  const claim = (name: string) => get(R.getClaim, name);
  const waitClaim = (name: string, what: string, fn: (c: Obj) => boolean, timeoutMs?: number) =>
    side.until(`${name}: ${what}`, async () => fn(await claim(name)), timeoutMs);

  const applyAction = (
    name: string,
    c: Obj,
    storage: string,
    o: { vac?: string; resourceVersion?: string } = {},
  ): PatchClaim => ({
    type: "PatchClaim",
    namespace: ns,
    claim: name,
    template: name.split("-")[0]!,
    ordinal: Number(name.split("-").at(-1)),
    storage,
    ...(o.vac !== undefined ? { volumeAttributesClassName: o.vac } : {}),
    labels: { ...(c.metadata.labels ?? {}), "claimstep.io/revision": "5b48d59cf5" },
    annotations: {},
    uid: c.metadata.uid,
    resourceVersion: o.resourceVersion ?? c.metadata.resourceVersion,
  });

  // --- setup: classes, the sets, a budget -------------------------------------------------------
  const fastBehaviour: StorageClassBehaviour = { allowVolumeExpansion: true, maxSize: "4Gi" };
  const fixedBehaviour: StorageClassBehaviour = { allowVolumeExpansion: false };
  await admin.create(R.createStorageClass, {}, storageClass(names.fast, fastBehaviour));
  await admin.create(R.createStorageClass, {}, storageClass(names.fixed, fixedBehaviour));
  side.classBehaviour?.(names.fast, fastBehaviour);
  side.classBehaviour?.(names.fixed, fixedBehaviour);
  await admin.create(R.createVac, {}, volumeAttributesClass(names.silver, { iops: "3000" }));
  await admin.create(R.createVac, {}, volumeAttributesClass(names.gold, { iops: "6000" }));

  const labels = { app: SET };
  const template = (name: string, cls: string, vac?: string) => ({
    metadata: { name },
    spec: {
      accessModes: ["ReadWriteOnce"],
      storageClassName: cls,
      ...(vac ? { volumeAttributesClassName: vac } : {}),
      resources: { requests: { storage: "1Gi" } },
    },
  });
  const setManifest = {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: SET, namespace: ns, annotations: { "claimstep.io/volume-claim-update-strategy": "InPlace" } },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels },
      serviceName: SET,
      podManagementPolicy: "Parallel",
      template: { metadata: { labels }, spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.9" }] } },
      volumeClaimTemplates: [template("data", names.fast, names.silver), template("cold", names.fixed)],
    },
  };
  await admin.create(R.createSet, { namespace: ns }, setManifest);
  await admin.create(
    R.createSet,
    { namespace: ns },
    {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: OTHER_SET, namespace: ns },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: OTHER_SET } },
        serviceName: OTHER_SET,
        template: {
          metadata: { labels: { app: OTHER_SET } },
          spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.9" }] },
        },
      },
    },
  );
  // A claim that never binds (its class does not exist).
  await admin.create(
    R.createClaim,
    { namespace: ns },
    {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: PENDING_CLAIM, namespace: ns },
      spec: {
        accessModes: ["ReadWriteOnce"],
        storageClassName: `${names.fast}-missing`,
        resources: { requests: { storage: "1Gi" } },
      },
    },
  );
  const claimNames = ["data-web-0", "data-web-1", "cold-web-0", "cold-web-1"];
  const stable = async () => {
    const s = await get(R.getSet, SET);
    return (
      s.status?.readyReplicas === 2 &&
      s.status?.observedGeneration === s.metadata.generation &&
      s.status?.currentRevision === s.status?.updateRevision &&
      s.status?.updatedReplicas === 2
    );
  };
  await side.until(
    "web: 2 ready pods, claims Bound",
    async () => {
      for (const c of claimNames) if ((await claim(c).catch(() => undefined))?.status?.phase !== "Bound") return false;
      return stable();
    },
    90_000,
  );
  await admin.create(
    R.createBudget,
    { namespace: ns },
    {
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: SET, namespace: ns },
      spec: { minAvailable: 2, selector: { matchLabels: labels } },
    },
  );
  const budgetObserved = async (allowed: number) => {
    const b = await get(R.getBudget, SET);
    return (
      b.status?.observedGeneration === b.metadata.generation &&
      b.status?.currentHealthy === 2 &&
      b.status?.disruptionsAllowed === allowed
    );
  };
  await side.until("budget web observed, no disruption allowed", () => budgetObserved(0));

  // --- the reader -------------------------------------------------------------------------------
  await step("load", () => reader.load(ref, { volumeAttributesClasses: true, recreateRecord: true }));
  await step("list-opted-in-sets", () => listOptedInSets(cs, ns));
  await step("get-missing-set", () => reader.load({ namespace: ns, name: "missing" }));
  await step("unauthorized", () => new KubeReader(bad).load(ref));

  // --- the claim writer ---------------------------------------------------------------------------
  const d1 = await claim("data-web-1");
  await step("apply-claim", () => claims.apply(applyAction("data-web-1", d1, "2Gi", { vac: names.gold })));
  await step("apply-claim-stale-rv", () => claims.apply(applyAction("data-web-1", d1, "2Gi", { vac: names.gold })));
  await waitClaim(
    "data-web-1",
    "resized to 2Gi and on the gold class",
    (c) =>
      c.status?.capacity?.storage === "2Gi" &&
      c.status?.currentVolumeAttributesClassName === names.gold &&
      !c.status?.modifyVolumeStatus,
  );
  await step("get-claim-resized", () => admin.send(R.getClaim, { namespace: ns, name: "data-web-1" }));

  const d0 = await claim("data-web-0");
  await step("apply-claim-shrink", () => claims.apply(applyAction("data-web-0", d0, "500Mi")));
  await step("merge-claim-stale-rv", () =>
    cs.patch(
      Routes.applyClaim,
      { namespace: ns, name: "data-web-0" },
      { metadata: { resourceVersion: staleOf(d0), labels: { tier: "x" } } },
      MERGE_PATCH,
    ),
  );
  await step("merge-claim-class", () =>
    cs.patch(
      Routes.applyClaim,
      { namespace: ns, name: "data-web-0" },
      { spec: { storageClassName: names.fixed } },
      MERGE_PATCH,
    ),
  );
  const c0 = await claim("cold-web-0");
  await step("apply-claim-not-expandable", () => claims.apply(applyAction("cold-web-0", c0, "2Gi")));
  const p0 = await claim(PENDING_CLAIM);
  await step("apply-claim-unbound", () => claims.apply(applyAction(PENDING_CLAIM, p0, "2Gi")));

  // A failed expansion (beyond the class's 4Gi), then lowered: to capacity (refused), above it (allowed).
  await step("apply-claim-infeasible", () => claims.apply(applyAction("data-web-0", d0, "5Gi")));
  await waitClaim(
    "data-web-0",
    "expansion infeasible",
    (c) => c.status?.allocatedResourceStatuses?.storage === "ControllerResizeInfeasible",
  );
  await step("get-claim-infeasible", () => admin.send(R.getClaim, { namespace: ns, name: "data-web-0" }));
  const d0f = await claim("data-web-0");
  await step("apply-claim-to-capacity", () => claims.apply(applyAction("data-web-0", d0f, "1Gi")));
  await step("merge-claim-to-capacity", () =>
    cs.patch(
      Routes.applyClaim,
      { namespace: ns, name: "data-web-0" },
      { spec: { resources: { requests: { storage: "1Gi" } } } },
      MERGE_PATCH,
    ),
  );
  await step("apply-claim-above-capacity", () => claims.apply(applyAction("data-web-0", d0f, "1536Mi")));
  await waitClaim(
    "data-web-0",
    "resized to 1536Mi",
    (c) => c.status?.capacity?.storage === "1536Mi" && !c.status?.allocatedResourceStatuses,
  );
  await step("delete-claim-forbidden", () =>
    cs.delete(R.deleteClaim, { namespace: ns, name: "data-web-0" }, { apiVersion: "v1", kind: "DeleteOptions" }),
  );

  // --- the set: templates, annotations, partition ------------------------------------------------
  await step("vct-update-forbidden", () =>
    cs.patch(
      Routes.annotateStatefulSet,
      ref,
      {
        spec: {
          volumeClaimTemplates: [
            {
              ...template("data", names.fast, names.silver),
              spec: { ...template("data", names.fast, names.silver).spec, resources: { requests: { storage: "2Gi" } } },
            },
            template("cold", names.fixed),
          ],
        },
      },
      MERGE_PATCH,
    ),
  );
  const note = { "claimstep.io/status": JSON.stringify({ phase: "Progressing", reason: "ClaimUpdated" }) };
  /** A write under a resourceVersion just read, and its repeat (stale): again if the StatefulSet controller wrote the set in between. */
  const underReadVersion = async (
    first: string,
    second: string,
    send: (rv: string) => Promise<unknown>,
    repeat: (rv: string) => Promise<unknown>,
  ) => {
    for (let attempt = 1; ; attempt++) {
      await side.until("web at rest", stable);
      const rv = (await get(R.getSet, SET)).metadata.resourceVersion;
      rec.discard(first);
      rec.discard(second);
      await step(first, () => send(rv));
      await step(second, () => repeat(rv));
      if (rec.exchanges.find((e) => e.step === first)?.status !== 409 || attempt >= 5) return;
      await sleep(200);
    }
  };
  await underReadVersion(
    "annotate-set",
    "annotate-set-stale-rv",
    (rv) => status.annotateSet(ref, note, rv),
    (rv) => status.annotateSet(ref, { ...note, "claimstep.io/observed": "x" }, rv),
  );
  await underReadVersion(
    "patch-partition",
    "patch-partition-stale-rv",
    (rv) =>
      pods.patchPartition(
        {
          type: "PatchPartition",
          namespace: ns,
          set: SET,
          partition: 1,
          from: 0,
          userPartition: 0,
          resourceVersion: rv,
        },
        note,
      ),
    (rv) =>
      pods.patchPartition(
        {
          type: "PatchPartition",
          namespace: ns,
          set: SET,
          partition: 0,
          from: 1,
          userPartition: null,
          resourceVersion: rv,
        },
        note,
      ),
  );

  // --- events -----------------------------------------------------------------------------------
  const events = new KubeEventRecorder(cs, { reportingInstance: "claimstep-conformance" });
  const event = {
    type: "Normal" as const,
    reason: "ClaimUpdated" as const,
    action: "PatchClaim",
    note: "updating data-web-1: storage 1Gi → 2Gi",
  };
  const at = new Date("2026-12-01T10:00:00Z");
  await step("event-first", () => events.recordEvents(ref, [event], at));
  await step("event-repeat", () => events.recordEvents(ref, [event], new Date(at.getTime() + 60_000)));
  await step("event-repeat-other-writer", () =>
    new KubeEventRecorder(cs, { reportingInstance: "claimstep-conformance" }).recordEvents(
      ref,
      [event],
      new Date(at.getTime() + 120_000),
    ),
  );
  await step("event-invalid-generatename", () =>
    cs.create(
      Routes.createEvent,
      { namespace: ns },
      {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { generateName: "web.", namespace: ns },
        reportingController: "claimstep.io/stepper",
        reportingInstance: "claimstep-conformance",
        action: "PatchClaim",
        reason: "ClaimUpdated",
        type: "Normal",
        note: "x",
        regarding: { apiVersion: "apps/v1", kind: "StatefulSet", namespace: ns, name: SET },
      },
    ),
  );
  await step("list-events", () => cs.list(Routes.listEvents, { namespace: ns }, anyItem));

  // --- evictions --------------------------------------------------------------------------------
  const pod1 = await get(R.getPod, "web-1");
  await step("evict-budget", () =>
    pods.evict({
      type: "EvictPod",
      namespace: ns,
      pod: "web-1",
      uid: pod1.metadata.uid,
      ordinal: 1,
      claim: "data-web-1",
    }),
  );
  await admin.patch(R.patchBudget, { namespace: ns, name: SET }, { spec: { minAvailable: 1 } }, MERGE_PATCH);
  await side.until("budget web allows one disruption", () => budgetObserved(1));
  await step("evict-uid-mismatch", () =>
    pods.evict({
      type: "EvictPod",
      namespace: ns,
      pod: "web-1",
      uid: "00000000-0000-4000-8000-000000000000",
      ordinal: 1,
      claim: "data-web-1",
    }),
  );
  // The disruption controller recounts the budget (the pod charged in disruptedPods is not healthy).
  await side.pause(2000);
  await step("get-budget-after-failed-eviction", () => admin.send(R.getBudget, { namespace: ns, name: SET }));

  // --- the re-create (F1–F4) --------------------------------------------------------------------
  await side.until("web at rest", stable);
  const live = await get(R.getSet, SET);
  const manifest = structuredClone(live);
  for (const k of ["uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"])
    delete manifest.metadata[k];
  delete manifest.status;
  manifest.spec.volumeClaimTemplates[0].spec.resources.requests.storage = "2Gi";
  const recordName = `claimstep-recreate-${SET}`;
  const record = {
    metadata: { name: recordName, namespace: ns, labels: { "app.kubernetes.io/managed-by": "claimstep" } },
    data: {
      manifest: JSON.stringify(manifest),
      uid: live.metadata.uid,
      resourceVersion: live.metadata.resourceVersion,
    },
  };
  await step("record-create", () =>
    recreate.writeRecord({ type: "WriteRecord", namespace: ns, set: SET, record: record as never }),
  );
  await step("record-create-exists", () =>
    recreate.writeRecord({ type: "WriteRecord", namespace: ns, set: SET, record: record as never }),
  );
  const rec1 = await get(R.getConfigMap, recordName);
  await step("record-arm", () =>
    recreate.armRecord({
      type: "ArmRecord",
      namespace: ns,
      set: SET,
      name: recordName,
      armed: true,
      resourceVersion: rec1.metadata.resourceVersion,
    }),
  );
  await step("record-arm-stale-rv", () =>
    recreate.armRecord({
      type: "ArmRecord",
      namespace: ns,
      set: SET,
      name: recordName,
      armed: false,
      resourceVersion: rec1.metadata.resourceVersion,
    }),
  );
  // The StatefulSet controller may still write the set's status in real time: retry on a moved resourceVersion.
  for (let attempt = 1; ; attempt++) {
    const cur = await get(R.getSet, SET);
    rec.discard("orphan-delete-stale-rv");
    rec.discard("orphan-delete-uid-mismatch");
    rec.discard("orphan-delete");
    await step("orphan-delete-stale-rv", () =>
      recreate.orphanSet({
        type: "OrphanSet",
        namespace: ns,
        set: SET,
        uid: cur.metadata.uid,
        resourceVersion: staleOf(live),
      }),
    );
    await step("orphan-delete-uid-mismatch", () =>
      recreate.orphanSet({
        type: "OrphanSet",
        namespace: ns,
        set: SET,
        uid: "00000000-0000-4000-8000-000000000000",
        resourceVersion: cur.metadata.resourceVersion,
      }),
    );
    await step("orphan-delete", () =>
      recreate.orphanSet({
        type: "OrphanSet",
        namespace: ns,
        set: SET,
        uid: cur.metadata.uid,
        resourceVersion: cur.metadata.resourceVersion,
      }),
    );
    const last = rec.exchanges.at(-1)!;
    if (last.status !== 409 || attempt >= 5) break;
    await sleep(200);
  }
  await side.until("web gone (orphaned)", async () => {
    try {
      await get(R.getSet, SET);
      return false;
    } catch {
      return true;
    }
  });
  await step("create-set", () => recreate.createSet({ type: "CreateSet", namespace: ns, set: SET, manifest }));
  await step("create-set-exists", () => recreate.createSet({ type: "CreateSet", namespace: ns, set: SET, manifest }));
  const rec2 = await get(R.getConfigMap, recordName);
  await step("record-delete-uid-mismatch", () =>
    recreate.deleteRecord({
      type: "DeleteRecord",
      namespace: ns,
      set: SET,
      name: recordName,
      uid: "00000000-0000-4000-8000-000000000000",
    }),
  );
  await step("record-delete", () =>
    recreate.deleteRecord({ type: "DeleteRecord", namespace: ns, set: SET, name: recordName, uid: rec2.metadata.uid }),
  );

  // A background delete with preconditions (stale, then current).
  const other = await get(R.getSet, OTHER_SET);
  const background = (rv: string) => ({
    apiVersion: "v1",
    kind: "DeleteOptions",
    propagationPolicy: "Background",
    preconditions: { uid: other.metadata.uid, resourceVersion: rv },
  });
  await step("background-delete-stale-rv", () =>
    cs.delete(RecreateRoutes.deleteStatefulSet, { namespace: ns, name: OTHER_SET }, background(staleOf(other))),
  );
  await step("background-delete", () =>
    cs.delete(
      RecreateRoutes.deleteStatefulSet,
      { namespace: ns, name: OTHER_SET },
      background(other.metadata.resourceVersion),
    ),
  );

  // --- a claim template added by an orphan delete and a re-create (issue 27) ----------------------
  await templatesAdded(side, { admin, step, get, claim, ns, fast: names.fast }, "OrderedReady");
  await templatesAdded(side, { admin, step, get, claim, ns, fast: names.fast }, "Parallel");
  await templatesAdded(side, { admin, step, get, claim, ns, fast: names.fast }, "ScaleDown");

  // --- the Lease --------------------------------------------------------------------------------
  const lease = new KubeLease(cs, { namespace: names.leaseNamespace, name: names.lease, timeoutMs: 20_000 });
  const spec = {
    holderIdentity: "claimstep-conformance",
    leaseDurationSeconds: 15,
    acquireTime: "2026-12-01T10:00:00.000000Z",
    renewTime: "2026-12-01T10:00:00.000000Z",
    leaseTransitions: 0,
  };
  await step("lease-create", () => lease.create(spec));
  await step("lease-create-exists", () => lease.create(spec));
  await step("lease-get-forbidden", () => lease.get());
  await admin
    .delete(
      R.deleteLease,
      { namespace: names.leaseNamespace, name: names.lease },
      { apiVersion: "v1", kind: "DeleteOptions" },
    )
    .catch(() => undefined);
  // The classes stay (unique names in a test run; the node agent still serves the namespace's volumes with them).

  return rec.named();
}

/** The sets of the claim-template case (issue 27), by pod management policy; each set's steps are named after it. */
const TEMPLATES_SETS = { OrderedReady: "tpl", Parallel: "tpp", ScaleDown: "tps" } as const;
/** The steps of that case whose answers are Event lists: compared as the set's FailedUpdate events only. */
const TEMPLATES_EVENTS_STEP = /^(tp[lps])-events$/;

/**
 * Issue 27, as the real v1.34 StatefulSet controller behaves: set `tpl` (3 replicas, template
 * `data`, OrderedReady) is deleted with propagationPolicy Orphan and created again with a second
 * template `logs` that its pod template mounts. The controller adopts the pods and processes them
 * from the lowest ordinal: tpl-0's volumes do not match the set's templates, so it creates
 * logs-tpl-0, fails to update the pod (FailedUpdate) and stops there, every sync — no claim for
 * tpl-1 or tpl-2, no rolling update, and an evicted tpl-2 is not re-created (status.replicas 2).
 * Evicting tpl-0 lets it be re-created with both volumes; then tpl-1 is the one stuck
 * (logs-tpl-1 created). Then the 422s of a pod template mounting a volume the set lacks.
 */
async function templatesAdded(
  side: Side,
  t: {
    admin: KubeClient;
    step: <T>(name: string, fn: () => Promise<T>) => Promise<T | undefined>;
    get: (r: Route, name: string) => Promise<Obj>;
    claim: (name: string) => Promise<Obj>;
    ns: string;
    fast: string;
  },
  policy: keyof typeof TEMPLATES_SETS,
): Promise<void> {
  const { admin, step, get, claim, ns } = t;
  const name = TEMPLATES_SETS[policy];
  const labels = { app: name };
  const claimTemplate = (n: string) => ({
    metadata: { name: n },
    spec: { accessModes: ["ReadWriteOnce"], storageClassName: t.fast, resources: { requests: { storage: "1Gi" } } },
  });
  const manifest = (templates: string[], mounts: string[]) => ({
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: name as string, namespace: ns },
    spec: {
      replicas: 3,
      selector: { matchLabels: labels },
      serviceName: name,
      podManagementPolicy: policy === "Parallel" ? "Parallel" : "OrderedReady",
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: "app",
              image: "registry.k8s.io/pause:3.9",
              volumeMounts: mounts.map((m) => ({ name: m, mountPath: `/${m}` })),
            },
          ],
        },
      },
      volumeClaimTemplates: templates.map(claimTemplate),
    },
  });
  const target = { namespace: ns };
  const pod = (n: string) => get(R.getPod, n).catch(() => undefined);
  const ready = (p: Obj) =>
    p?.status?.phase === "Running" &&
    (p.status.conditions ?? []).some((c: Obj) => c.type === "Ready" && c.status === "True");
  const bound = async (n: string) => (await claim(n).catch(() => undefined))?.status?.phase === "Bound";
  const list = (route: Route) => admin.send(route, target, { query: { labelSelector: `app=${name}` } });
  const evict = (n: string) =>
    admin.create(
      Routes.evictPod,
      { namespace: ns, name: n },
      { apiVersion: "policy/v1", kind: "Eviction", metadata: { name: n, namespace: ns } },
    );
  /** A while for the controller to do what it would (it would not: that is what is compared). */
  const SETTLE_MS = 6_000;

  await admin.create(R.createSet, target, manifest(["data"], ["data"]));
  await side.until(
    `${name}: 3 ready pods, data claims Bound`,
    async () => {
      for (const o of [0, 1, 2])
        if (!ready(await pod(`${name}-${o}`)) || !(await bound(`data-${name}-${o}`))) return false;
      const s = await get(R.getSet, name);
      return s.status?.readyReplicas === 3 && s.status?.currentRevision === s.status?.updateRevision;
    },
    120_000,
  );
  const live = await get(R.getSet, name);
  const uid0 = (await pod(`${name}-0`)).metadata.uid;
  await admin.delete(
    RecreateRoutes.deleteStatefulSet,
    { namespace: ns, name },
    { apiVersion: "v1", kind: "DeleteOptions", propagationPolicy: "Orphan", preconditions: { uid: live.metadata.uid } },
  );
  await side.until(
    `${name} gone (orphaned)`,
    async () => (await get(R.getSet, name).catch(() => undefined)) === undefined,
  );

  if (policy === "ScaleDown") {
    // Re-created at 1 replica: tps-1 and tps-2 are condemned, but the sync ends at tps-0 before
    // the condemned pods are considered; once tps-0 is replaced they go.
    const one = manifest(["data", "logs"], ["data", "logs"]);
    one.spec.replicas = 1;
    await step(`${name}-recreate`, () => admin.create(R.createSet, target, one));
    await side.until(`logs-${name}-0 Bound`, () => bound(`logs-${name}-0`), 60_000);
    await side.pause(SETTLE_MS);
    await step(`${name}-pods-after-recreate`, () => list(Routes.listPods));
    await step(`${name}-evict-0`, () => evict(`${name}-0`));
    await side.until(
      `${name}-0 re-created and Ready`,
      async () => {
        const p = await pod(`${name}-0`);
        if (p === undefined || p.metadata.uid === uid0 || !ready(p)) return false;
        // Then the scale-down: tps-2, then tps-1, each once the one before is gone.
        return (((await list(Routes.listPods)) as Obj).items as Obj[]).length === 1;
      },
      120_000,
    );
    await step(`${name}-pods-after-evict-0`, () => list(Routes.listPods));
    await step(`${name}-events`, () => admin.send(Routes.listEvents, target));
    return;
  }
  await step(`${name}-recreate`, () => admin.create(R.createSet, target, manifest(["data", "logs"], ["data", "logs"])));
  await side.until(`logs-${name}-0 Bound`, () => bound(`logs-${name}-0`), 60_000);
  await side.pause(SETTLE_MS);
  await step(`${name}-claims-after-recreate`, () => list(Routes.listClaims));
  await step(`${name}-pods-after-recreate`, () => list(Routes.listPods));
  if ((await pod(`${name}-0`))?.metadata.uid !== uid0)
    throw new Error(`${side.name}: ${name}-0 was replaced after the re-create with an added template`);

  await step(`${name}-evict-2`, () => evict(`${name}-2`));
  await side.until(`${name}-2 gone`, async () => (await pod(`${name}-2`)) === undefined);
  await side.pause(SETTLE_MS);
  await step(`${name}-set-after-evict-2`, () => get(R.getSet, name));
  await step(`${name}-pods-after-evict-2`, () => list(Routes.listPods));

  await step(`${name}-evict-0`, () => evict(`${name}-0`));
  await side.until(
    `${name}-0 re-created and Ready, logs-${name}-1 Bound`,
    async () => {
      const p = await pod(`${name}-0`);
      if (p === undefined || p.metadata.uid === uid0 || !ready(p) || !(await bound(`logs-${name}-1`))) return false;
      // Every pod there is Ready (Parallel: tpp-2 comes back in the batch where tpp-1 fails).
      const items = ((await list(Routes.listPods)) as Obj).items as Obj[];
      return items.every(ready);
    },
    90_000,
  );
  await side.pause(SETTLE_MS);
  await step(`${name}-set-after-evict-0`, () => get(R.getSet, name));
  await step(`${name}-pods-after-evict-0`, () => list(Routes.listPods));
  await step(`${name}-claims-after-evict-0`, () => list(Routes.listClaims));
  await step(`${name}-events`, () => admin.send(Routes.listEvents, target));

  if (policy !== "OrderedReady") return;
  // The API server's validation: a mount (or device) naming neither a volume nor a claim template.
  const bad = manifest(["data"], ["data", "cache"]);
  bad.metadata.name = `${name}-bad`;
  await step(`${name}-create-mount-missing`, () => admin.create(R.createSet, target, bad));
  const bad2: Obj = manifest(["data"], ["data"]);
  bad2.metadata.name = `${name}-bad2`;
  bad2.spec.template.spec.initContainers = [
    { name: "init", image: "registry.k8s.io/pause:3.9", volumeMounts: [{ name: "cache", mountPath: "/cache" }] },
  ];
  bad2.spec.template.spec.containers[0].volumeDevices = [{ name: "raw", devicePath: "/dev/raw" }];
  bad2.spec.template.spec.volumes = [{ name: "scratch", emptyDir: {} }];
  await step(`${name}-create-init-and-device-missing`, () => admin.create(R.createSet, target, bad2));
  await step(`${name}-update-mount-missing`, () =>
    admin.patch(
      Routes.annotateStatefulSet,
      { namespace: ns, name },
      { spec: { template: manifest([], ["data", "logs", "cache"]).spec.template } },
      MERGE_PATCH,
    ),
  );
  await step(`${name}-update-template-removed`, () =>
    admin.patch(
      Routes.annotateStatefulSet,
      { namespace: ns, name },
      { spec: { volumeClaimTemplates: [claimTemplate("data")] } },
      MERGE_PATCH,
    ),
  );
}

/** What an Event list of the claim-template case shows: the StatefulSet controller's FailedUpdate events, by their first line. */
function failedUpdates(b: Obj, set: string): Obj {
  const lines = new Set<string>();
  for (const i of (b.items ?? []) as Obj[]) {
    if (i.reason !== "FailedUpdate" || i.regarding?.name !== set) continue;
    // The refusals only: a real controller acting on its cache right after an eviction may also
    // record `failed error: pods "tpp-0" not found` (a race of timing, not of the model).
    if (!String(i.note ?? "").includes(" is invalid: ")) continue;
    lines.add(`${i.type} ${i.regarding?.kind} ${i.reason}: ${String(i.note ?? "").split("\n")[0]}`);
  }
  return { kind: b.kind, failedUpdates: [...lines].sort() };
}

/** A schema accepting any list item (the recorder keeps the raw answer anyway). */
const anyItem = z.unknown();

/** A resourceVersion older than the object's (a precondition that must fail). */
const staleOf = (o: Obj): string => String(Number(o.metadata.resourceVersion) - 1);

// ---------------------------------------------------------------------------------------------
// the two sides

export const SIM_TOKENS = { claimstep: "claimstep-token", admin: "admin-token" } as const;

/** The simulated cluster as a Side: claimstep's identity with the shipped rules, an unrestricted admin. */
export function simSide(sim: SimCluster): Side {
  const fetch: FetchLike = (url, init) => sim.http.fetch(new Request(url, init));
  const token = { claimstep: SIM_TOKENS.claimstep, admin: SIM_TOKENS.admin, "bad-token": "not-a-token" } as const;
  return {
    name: "sim",
    server: SIM_SERVER,
    transport: (as) => ({ fetch, headers: { Authorization: `Bearer ${token[as]}` } }),
    async until(what, fn, timeoutMs = 10 * 60_000) {
      const deadline = sim.clock.nowMs() + timeoutMs;
      for (;;) {
        if (await fn()) return;
        if (sim.clock.nowMs() >= deadline)
          throw new Error(`sim: timed out after ${timeoutMs} virtual ms waiting for ${what}`);
        sim.advance(500);
      }
    },
    async pause(ms) {
      sim.advance(ms);
    },
    classBehaviour(name, b) {
      sim.setDriver(name, {
        resize: "online",
        nodeExpansion: b.nodeExpansion === "offline" ? "offline" : "online",
        modify: "ok",
        ...(b.maxSize ? { maxStorage: b.maxSize } : {}),
      });
    },
  };
}

/** A simulated cluster that knows claimstep's identity (shipped RBAC) and an admin. */
export function newSimCluster(opts: SimClusterOptions = {}): SimCluster {
  return new SimCluster({
    ...opts,
    tokens: {
      [SIM_TOKENS.claimstep]: { user: CLAIMSTEP_USER, rules: shippedRules() },
      [SIM_TOKENS.admin]: { user: "admin" },
    },
  });
}

/** The real cluster as a Side (claimstep's ServiceAccount token; the admin's token or client certificate). */
export function realSide(info: Pick<ClusterInfo, "server" | "caPem" | "admin" | "claimstepToken">): Side {
  const plain = new HttpsAgent({ keepAlive: true, ca: info.caPem });
  const adminAgent =
    info.admin.certPem && info.admin.keyPem
      ? new HttpsAgent({ keepAlive: true, ca: info.caPem, cert: info.admin.certPem, key: info.admin.keyPem })
      : plain;
  const viaPlain = agentFetch(() => plain);
  const viaAdmin = agentFetch(() => adminAgent);
  return {
    name: "real",
    server: info.server,
    transport: (as) =>
      as === "admin"
        ? {
            fetch: viaAdmin,
            headers: (info.admin.token ? { Authorization: `Bearer ${info.admin.token}` } : {}) as Record<
              string,
              string
            >,
          }
        : {
            fetch: viaPlain,
            headers: { Authorization: `Bearer ${as === "claimstep" ? info.claimstepToken : "not-a-token"}` },
          },
    pause: async (ms) => {
      await sleep(ms);
    },
    async until(what, fn, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      let lastError: unknown;
      for (;;) {
        try {
          if (await fn()) return;
        } catch (e) {
          lastError = e;
        }
        if (Date.now() >= deadline)
          throw new Error(
            `real: timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ""}`,
          );
        await sleep(200);
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// comparing

const UID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g;

/** A message with what differs by nature between two servers replaced: uids, resourceVersions, times, generated name suffixes. */
export function scrub(text: string): string {
  return text
    .replace(UID, "<uid>")
    .replace(TIME, "<time>")
    .replace(/\((\d+)\)/g, "(<rv>)")
    .replace(/resourceVersion: "?\d+"?/g, "resourceVersion: <rv>")
    .replace(/(\bweb\.)[a-z0-9]{5}\b/g, "$1<gen>");
}

const scrubDeep = (v: unknown): unknown => {
  if (typeof v === "string") return scrub(v);
  if (Array.isArray(v)) return v.map(scrubDeep);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrubDeep(x)]));
  return v;
};

const pick = (o: Obj, keys: string[]): Obj => {
  if (!o || typeof o !== "object") return o;
  const out: Obj = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
};

/** claimstep's own entries of managedFields: what its writes own. */
const managedByClaimstep = (m: Obj) =>
  ((m?.managedFields ?? []) as Obj[])
    .filter((f) => f.manager === "claimstep")
    .map((f) => pick(f, ["manager", "operation", "apiVersion", "fieldsType", "fieldsV1", "subresource"]));

const conditionTypes = (cs: Obj[] | undefined) =>
  (cs ?? []).map((c) => pick(c, ["type", "status", "reason"])).sort((a, b) => (a.type < b.type ? -1 : 1));

/** The fields of an object a request affects or claimstep reads, by kind. */
export function projectObject(o: Obj, kind = o?.kind): Obj {
  if (!o || typeof o !== "object") return o;
  const m = o.metadata ?? {};
  const meta = {
    name: m.name,
    ...(m.generateName ? { generateName: m.generateName } : {}),
    ...(m.labels ? { labels: m.labels } : {}),
    ...(m.finalizers ? { finalizers: m.finalizers } : {}),
    ...(m.deletionTimestamp ? { deletionTimestamp: "<present>" } : {}),
    ...(m.ownerReferences
      ? {
          ownerReferences: m.ownerReferences.map((r: Obj) =>
            pick(r, ["apiVersion", "kind", "name", "controller", "blockOwnerDeletion"]),
          ),
        }
      : {}),
    ...(managedByClaimstep(m).length ? { managedByClaimstep: managedByClaimstep(m) } : {}),
  };
  switch (kind) {
    case "PersistentVolumeClaim":
      return {
        kind,
        metadata: meta,
        spec: pick(o.spec, ["accessModes", "resources", "storageClassName", "volumeAttributesClassName", "volumeMode"]),
        status: {
          ...pick(o.status, [
            "phase",
            "capacity",
            "allocatedResources",
            "allocatedResourceStatuses",
            "currentVolumeAttributesClassName",
            "modifyVolumeStatus",
            "accessModes",
          ]),
          conditions: conditionTypes(o.status?.conditions),
        },
      };
    case "StatefulSet": {
      const annotations = Object.fromEntries(
        Object.entries((m.annotations ?? {}) as Record<string, string>).filter(([k]) => k.startsWith("claimstep.io/")),
      );
      return {
        kind,
        metadata: { ...meta, annotations, generation: m.generation },
        spec: pick(o.spec, [
          "replicas",
          "selector",
          "serviceName",
          "podManagementPolicy",
          "updateStrategy",
          "volumeClaimTemplates",
          "persistentVolumeClaimRetentionPolicy",
          "revisionHistoryLimit",
          "minReadySeconds",
          "ordinals",
        ]),
        status: pick(o.status, [
          "replicas",
          "readyReplicas",
          "currentReplicas",
          "updatedReplicas",
          "availableReplicas",
        ]),
      };
    }
    case "Pod":
      return {
        kind,
        metadata: {
          ...meta,
          labels: Object.fromEntries(
            Object.entries((m.labels ?? {}) as Record<string, string>).map(([k, v]) => [
              k,
              k === "controller-revision-hash" ? "<hash>" : v,
            ]),
          ),
        },
        spec: {
          // Sorted: the StatefulSet controller lists a pod's claim volumes from a Go map (any order).
          volumes: ((o.spec?.volumes ?? []) as Obj[])
            .filter((v) => v.persistentVolumeClaim)
            .map((v) => pick(v, ["name", "persistentVolumeClaim"]))
            .sort((a: Obj, b: Obj) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
        },
        status: {
          phase: o.status?.phase,
          ready: (o.status?.conditions ?? []).find((c: Obj) => c.type === "Ready")?.status,
        },
      };
    case "StorageClass":
      return {
        kind,
        metadata: { name: m.name },
        ...pick(o, ["provisioner", "allowVolumeExpansion", "reclaimPolicy", "volumeBindingMode"]),
      };
    case "VolumeAttributesClass":
      return { kind, metadata: { name: m.name }, ...pick(o, ["driverName", "parameters"]) };
    case "ConfigMap": {
      // The re-create record: its manifest compared as JSON (each server orders keys its own way), its resourceVersion scrubbed.
      const data = Object.fromEntries(
        Object.entries((o.data ?? {}) as Record<string, string>).map(([k, v]) => {
          if (k === "resourceVersion") return [k, "<rv>"];
          if (k === "manifest") {
            try {
              const man = JSON.parse(v);
              return [k, projectObject({ ...man, status: undefined }, "StatefulSet")];
            } catch {
              return [k, v];
            }
          }
          return [k, v];
        }),
      );
      return { kind, metadata: { ...meta, annotations: m.annotations }, data };
    }
    case "Event":
      return {
        kind,
        metadata: meta,
        ...pick(o, ["reason", "note", "type", "action", "reportingController", "reportingInstance", "regarding"]),
        eventTime: o.eventTime ? "<present>" : undefined,
        series: o.series ? { count: o.series.count } : undefined,
      };
    case "Lease":
      return { kind, metadata: meta, spec: o.spec };
    case "PodDisruptionBudget":
      return {
        kind,
        metadata: { ...meta, generation: m.generation },
        spec: o.spec,
        status: {
          ...pick(o.status, ["disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"]),
          disruptedPods: Object.keys(o.status?.disruptedPods ?? {}).sort(),
          conditions: conditionTypes(o.status?.conditions),
        },
      };
    default:
      return { kind, metadata: meta };
  }
}

/** The same value with every object's keys sorted (servers serialize in their own order). */
const sortKeys = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object")
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Obj)[k])]),
    );
  return v;
};

/** What is compared of an answer: a Status's reason, code, details and message; an object's projection; a list's items' projections. */
export function projection(e: Exchange, ours: ScriptNames): unknown {
  return sortKeys(projectionOf(e, ours));
}

function projectionOf(e: Exchange, ours: ScriptNames): unknown {
  const b = e.body as Obj;
  if (!b || typeof b !== "object") return b;
  const eventsOf = TEMPLATES_EVENTS_STEP.exec(e.step)?.[1];
  if (eventsOf && Array.isArray(b.items)) return scrubDeep(failedUpdates(b, eventsOf));
  if (b.kind === "Status") {
    return scrubDeep({
      status: b.status,
      reason: b.reason,
      code: b.code,
      message: b.message,
      details: b.details
        ? {
            ...pick(b.details, ["name", "group", "kind", "retryAfterSeconds"]),
            ...(b.details.uid ? { uid: "<uid>" } : {}),
            ...(b.details.causes ? { causes: b.details.causes } : {}),
          }
        : undefined,
    });
  }
  if (Array.isArray(b.items)) {
    const kind = String(b.kind).replace(/List$/, "");
    // Cluster-scoped lists hold other tests' classes too: only the script's.
    const mine = new Set<string>([ours.fast, ours.fixed, ours.silver, ours.gold]);
    // Events: claimstep's (the status page's); the controllers' differ by nature (the node agent plays the resizer).
    const items = (b.items as Obj[])
      .filter((i) => (kind !== "StorageClass" && kind !== "VolumeAttributesClass" ? true : mine.has(i.metadata?.name)))
      .filter((i) => kind !== "Event" || i.reportingController === "claimstep.io/stepper");
    return scrubDeep({ kind: b.kind, apiVersion: b.apiVersion, items: items.map((i) => projectObject(i, kind)) });
  }
  return scrubDeep({ apiVersion: b.apiVersion, ...projectObject(b) });
}

/** A unified diff of two texts (small ones: an LCS over lines). */
export function unifiedDiff(a: string, b: string, labels: [string, string] = ["real", "sim"], context = 3): string {
  const x = a.split("\n");
  const y = b.split("\n");
  const n = x.length;
  const m = y.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const ops: { t: " " | "-" | "+"; s: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      ops.push({ t: " ", s: x[i]! });
      i++;
      j++;
    } else if (j < m && (i >= n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) ops.push({ t: "+", s: y[j++]! });
    else ops.push({ t: "-", s: x[i++]! });
  }
  const keep = ops.map((_, k) => ops.slice(Math.max(0, k - context), k + context + 1).some((o) => o.t !== " "));
  const out = [`--- ${labels[0]}`, `+++ ${labels[1]}`];
  let skipped = false;
  ops.forEach((o, k) => {
    if (keep[k]) {
      out.push(`${o.t}${o.s}`);
      skipped = false;
    } else if (!skipped) {
      out.push("@@");
      skipped = true;
    }
  });
  return out.join("\n");
}

export interface Mismatch {
  name: string;
  what: string;
  diff: string;
}

/** A difference left as it is: both projections go through `ignore` before they are compared (only in the exchanges named). */
export interface KnownDifference {
  names: string[];
  why: string;
  ignore: (projection: unknown) => unknown;
}

/** Every difference between the two recordings, request by request (same names, same order). */
export function compareRecordings(
  real: Exchange[],
  sim: Exchange[],
  names: ScriptNames,
  known: KnownDifference[] = [],
): Mismatch[] {
  const adjust = (e: Exchange) =>
    known.filter((k) => k.names.includes(e.name)).reduce((p, k) => k.ignore(p), projection(e, names));
  const out: Mismatch[] = [];
  const simByName = new Map(sim.map((e) => [e.name, e]));
  const realNames = new Set(real.map((e) => e.name));
  for (const r of real) {
    const s = simByName.get(r.name);
    const request = `${r.method} ${r.path}${Object.keys(r.query).length ? `?${new URLSearchParams(r.query)}` : ""}`;
    if (!s) {
      out.push({ name: r.name, what: `${request}: sent to the real server only (HTTP ${r.status})`, diff: "" });
      continue;
    }
    const sreq = `${s.method} ${s.path}${Object.keys(s.query).length ? `?${new URLSearchParams(s.query)}` : ""}`;
    if (scrub(request) !== scrub(sreq))
      out.push({ name: r.name, what: `different requests: ${request} vs ${sreq}`, diff: "" });
    const a = JSON.stringify(adjust(r), null, 2);
    const b = JSON.stringify(adjust(s), null, 2);
    if (r.status !== s.status || a !== b) {
      out.push({
        name: r.name,
        what: `${request}: real HTTP ${r.status}, sim HTTP ${s.status}`,
        diff: a === b ? "" : unifiedDiff(a, b),
      });
    }
  }
  for (const s of sim)
    if (!realNames.has(s.name))
      out.push({ name: s.name, what: `${s.method} ${s.path}: sent to the sim only (HTTP ${s.status})`, diff: "" });
  return out;
}

/** The fixture text of an answer: the body, then the status code on the last line. */
export function fixtureText(e: Exchange): string {
  const body = typeof e.body === "string" ? e.body : JSON.stringify(e.body, null, 2);
  return `${body ?? ""}\n${e.status}\n`;
}
