// The node and the storage side of a cluster that has only a control plane: this agent plays the
// kubelet (binds and runs pods, finishes graceful deletions), the PV controller (provisions and
// binds claims), the CSI external-resizer (controller expansion, v1.34 with
// RecoverVolumeExpansionFailure GA) and its VolumeAttributesClass modifier, and the kubelet's
// node expansion — against the real API server, the way Kubernetes v1.34 writes the objects —
// and the kubelet's volume stats in the exposition format (serveMetrics: for a real Prometheus).
//
// The reference is the real node (real-node.ts, test/e2e/storage/, issue 34): kubelet v1.34.2, the
// CSI hostpath driver, external-resizer v2.0.0; the sequences this agent writes follow the ones
// recorded there (test/fixtures/storage/). The agent stays for the control-plane suite because the
// real stack here cannot produce what many of its scenarios need: a driver that expands offline
// only or needs no node expansion (hostpath always expands online, through the kubelet), chosen
// latencies (the kubelet's node half takes 0–10 s), refusals chosen per class, a cluster with many
// scenarios in seconds and without root, and the kubelet's volume stats on demand for autogrow.
//
// Driven by data, so that one agent serves every scenario: the behaviour of a volume comes from
// annotations on its StorageClass (STORAGE_CLASS_ANNOTATIONS below; storageClass() builds one),
// which map onto the node model's DriverBehaviour (adapters/sim/node-model.ts), the vocabulary
// the simulated cluster's drivers use. The model also says which step a claim is at
// (resizeStage, modifyStage) and what each step writes on it; this agent keeps the REST, the
// watches, the timing (sleeps), the pods, the PVs and its own words for a size above max-size.
// It watches (no polling requests) the pods and claims of its namespaces, the PVs it created
// (label e2e.claimstep.io/namespace), StorageClasses and VolumeAttributesClasses; it never deletes
// a claim and touches nothing outside its namespaces except its Node and its PVs.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  bound as boundStatus,
  controllerResizeInfeasible,
  controllerResizeStarted,
  type DriverBehaviour,
  finishesOnController,
  hasCondition,
  modifyCancelled,
  modifyCompleted,
  modifyInfeasible,
  modifyInProgress,
  modifyPending,
  modifyRefusal,
  modifyStage,
  nodeResizeInProgress,
  nodeResizePending,
  nodeStage,
  resizeFinished,
  resizeStage,
} from "../../../adapters/sim/node-model.js";
import type { PersistentVolumeClaim } from "../../../core/kube/k8s.js";
import { toBytes } from "../../../core/kube/quantity.js";
import type { ClusterInfo } from "./control-plane.js";
import { Informer } from "./informer.js";
import { type Credentials, type KubeObject, type Reply, type Resource, Rest, resourcePath } from "./rest.js";

export const NODE_NAME = "e2e-node";
export const CSI_DRIVER = "e2e.csi.claimstep.io";
export const AGENT_USER_AGENT = "claimstep-e2e-node-agent";
export const NAMESPACE_LABEL = "e2e.claimstep.io/namespace";

/** How a StorageClass's volumes behave (annotations on the StorageClass). */
export const STORAGE_CLASS_ANNOTATIONS = {
  /** Milliseconds from a claim's creation to its volume being provisioned and bound (default 0). */
  provisionLatencyMs: "e2e.claimstep.io/provision-latency-ms",
  /** Milliseconds the controller expansion (ControllerResizeInProgress) takes (default 0). */
  resizeLatencyMs: "e2e.claimstep.io/resize-latency-ms",
  /** `none` (default: the controller step finishes the resize), `online` (NodeResizePending until a
   * pod mounting it runs, then the kubelet grows the file system), `offline` (NodeResizePending until
   * the pod mounting it is restarted: a new uid, Running). */
  nodeExpansion: "e2e.claimstep.io/node-expansion",
  /** Milliseconds the node step (NodeResizeInProgress) takes (default 0). */
  nodeResizeLatencyMs: "e2e.claimstep.io/node-resize-latency-ms",
  /** A quantity: an expansion above it is infeasible (ControllerResizeInfeasible + ControllerResizeError). */
  maxSize: "e2e.claimstep.io/max-size",
  /** Milliseconds a VolumeAttributesClass change (modifyVolumeStatus InProgress) takes (default 0). */
  modifyLatencyMs: "e2e.claimstep.io/modify-latency-ms",
  /** Comma-separated VolumeAttributesClass names the driver refuses (modifyVolumeStatus Infeasible). */
  infeasibleVac: "e2e.claimstep.io/infeasible-vac",
} as const;
/** On a VolumeAttributesClass: "true" makes every change to it infeasible. */
export const VAC_INFEASIBLE_ANNOTATION = "e2e.claimstep.io/infeasible";

export interface StorageClassBehaviour {
  allowVolumeExpansion?: boolean;
  volumeBindingMode?: "Immediate" | "WaitForFirstConsumer";
  provisioner?: string;
  isDefault?: boolean;
  provisionLatencyMs?: number;
  resizeLatencyMs?: number;
  nodeExpansion?: "none" | "online" | "offline";
  nodeResizeLatencyMs?: number;
  maxSize?: string;
  modifyLatencyMs?: number;
  infeasibleVac?: string[];
}

/** The driver a StorageClassBehaviour describes, in the node model's words (unset latencies: 0). */
export function driverBehaviourOf(b: StorageClassBehaviour): DriverBehaviour {
  return {
    resize: "online",
    modify: "ok",
    nodeExpansion: b.nodeExpansion ?? "none",
    ...(b.provisionLatencyMs !== undefined ? { provisionMs: b.provisionLatencyMs } : {}),
    ...(b.resizeLatencyMs !== undefined ? { resizeMs: b.resizeLatencyMs } : {}),
    ...(b.nodeResizeLatencyMs !== undefined ? { nodeResizeMs: b.nodeResizeLatencyMs } : {}),
    ...(b.maxSize !== undefined ? { maxStorage: b.maxSize } : {}),
    ...(b.modifyLatencyMs !== undefined ? { modifyMs: b.modifyLatencyMs } : {}),
    ...(b.infeasibleVac?.length ? { refusedClasses: b.infeasibleVac } : {}),
  };
}

/**
 * The StorageClass annotations of a driver. The agent serves `resize: "online"`, `modify: "ok"`,
 * `nodeExpansion` none/online/offline, the latencies, `maxStorage` and `refusedClasses`; the other
 * fields of DriverBehaviour (offline, infeasible, flaky or no resizer; a node that refuses; no
 * MODIFY_VOLUME; mutable parameters; a cooldown) are the simulated cluster's only: refused here.
 */
export function storageClassAnnotations(d: DriverBehaviour): Record<string, string> {
  const unserved = [
    d.resize !== "online" && `resize ${d.resize}`,
    d.modify !== undefined && d.modify !== "ok" && `modify ${d.modify}`,
    d.nodeExpansion === "infeasible" && "nodeExpansion infeasible",
    d.flakyFailures !== undefined && "flakyFailures",
    d.mutableParameters && "mutableParameters",
    d.modificationCooldownMs !== undefined && "modificationCooldownMs",
  ].filter(Boolean);
  if (unserved.length) throw new Error(`the e2e node agent does not play ${unserved.join(", ")}`);
  const A = STORAGE_CLASS_ANNOTATIONS;
  const a: Record<string, string> = {};
  if (d.provisionMs !== undefined) a[A.provisionLatencyMs] = String(d.provisionMs);
  if (d.resizeMs !== undefined) a[A.resizeLatencyMs] = String(d.resizeMs);
  if (d.nodeExpansion !== undefined && d.nodeExpansion !== "none") a[A.nodeExpansion] = d.nodeExpansion;
  if (d.nodeResizeMs !== undefined) a[A.nodeResizeLatencyMs] = String(d.nodeResizeMs);
  if (d.maxStorage !== undefined) a[A.maxSize] = d.maxStorage;
  if (d.modifyMs !== undefined) a[A.modifyLatencyMs] = String(d.modifyMs);
  if (d.refusedClasses?.length) a[A.infeasibleVac] = d.refusedClasses.join(",");
  return a;
}

/** The driver a StorageClass's annotations describe (storageClassAnnotations' inverse). */
export function driverOfStorageClass(annotations: Record<string, string> | undefined): DriverBehaviour {
  const a = annotations ?? {};
  const A = STORAGE_CLASS_ANNOTATIONS;
  const ms = (key: string) => {
    const n = a[key] === undefined ? Number.NaN : Number(a[key]);
    return Number.isFinite(n) ? n : undefined;
  };
  const mode = a[A.nodeExpansion];
  const refused = (a[A.infeasibleVac] ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return driverBehaviourOf({
    provisionLatencyMs: ms(A.provisionLatencyMs),
    resizeLatencyMs: ms(A.resizeLatencyMs),
    nodeExpansion: mode === "online" || mode === "offline" ? mode : "none",
    nodeResizeLatencyMs: ms(A.nodeResizeLatencyMs),
    maxSize: a[A.maxSize] || undefined,
    modifyLatencyMs: ms(A.modifyLatencyMs),
    infeasibleVac: refused,
  });
}

/** A StorageClass manifest the agent serves as described. */
export function storageClass(name: string, b: StorageClassBehaviour = {}): KubeObject {
  const a = storageClassAnnotations(driverBehaviourOf(b));
  // The agent's default, said only when asked for (the manifests tests create stay as they were).
  if (b.nodeExpansion === "none") a[STORAGE_CLASS_ANNOTATIONS.nodeExpansion] = "none";
  if (b.isDefault) a["storageclass.kubernetes.io/is-default-class"] = "true";
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name, annotations: a },
    provisioner: b.provisioner ?? CSI_DRIVER,
    reclaimPolicy: "Delete",
    volumeBindingMode: b.volumeBindingMode ?? "Immediate",
    allowVolumeExpansion: b.allowVolumeExpansion ?? true,
  };
}

/** A VolumeAttributesClass manifest (storage.k8s.io/v1, GA in 1.34). */
export function volumeAttributesClass(
  name: string,
  parameters: Record<string, string> = {},
  o: { infeasible?: boolean; driverName?: string } = {},
): KubeObject {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "VolumeAttributesClass",
    metadata: { name, ...(o.infeasible ? { annotations: { [VAC_INFEASIBLE_ANNOTATION]: "true" } } : {}) },
    driverName: o.driverName ?? CSI_DRIVER,
    parameters,
  };
}

// ---------------------------------------------------------------------------------------------
// quantities

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** A resource.Quantity as a number (bytes for storage). */
export function quantity(q: string | number | undefined): number {
  if (q === undefined) return Number.NaN;
  if (typeof q === "number") return q;
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/.exec(q.trim());
  if (!m) return Number.NaN;
  const n = Number(m[1]);
  if (m[2]) return n * 10 ** Number(m[2].slice(1));
  const s = m[3] ?? "";
  return n * (BINARY[s] ?? DECIMAL[s] ?? 1);
}

// ---------------------------------------------------------------------------------------------
// the agent

export interface NodeAgentCounts {
  podsBound: number;
  podsStarted: number;
  podDeletesFinished: number;
  volumesProvisioned: number;
  claimsBound: number;
  resizesStarted: number;
  resizesFinished: number;
  resizesInfeasible: number;
  nodeResizes: number;
  modificationsStarted: number;
  modificationsFinished: number;
  modificationsInfeasible: number;
  modificationsPending: number;
  modificationsRolledBack: number;
  volumesReleased: number;
  volumesDeleted: number;
  conflicts: number;
}

export interface FinishedDelete {
  namespace: string;
  name: string;
  uid: string;
  at: string;
}

export interface NodeAgent {
  readonly nodeName: string;
  readonly namespaces: readonly string[];
  readonly counts: NodeAgentCounts;
  /** Anything unexpected it hit (HTTP errors other than a lost race, exceptions): assert it is empty. */
  readonly errors: string[];
  /** The pods whose graceful deletion it finished (DELETE gracePeriodSeconds 0, uid precondition). */
  readonly finishedDeletes: FinishedDelete[];
  /** What it did, in order (the last 2,000 lines): print it when a scenario fails. */
  readonly actions: string[];
  /** Resolves once every watch has listed. */
  readonly synced: Promise<void>;
  /** The bytes an application has written to a claim's volume (0 until set), as the kubelet's volume stats report them. */
  setVolumeUsed(namespace: string, claim: string, bytes: number): void;
  /**
   * What is "written" on each claim's volume, by claim uid (like data on the volume: it survives pod
   * restarts and a re-created StatefulSet, and is gone with the claim: a claim re-created under the
   * same name has a new uid and no marker). Set when the agent first starts a pod that mounts the
   * claim (`<ns>/<claim> written by pod <name> (<pod uid>)`), or by writeMarker.
   */
  readonly markers: ReadonlyMap<string, string>;
  /** Writes `text` as the marker of the claim with this uid (replacing the one it had). */
  writeMarker(claimUid: string, text: string): void;
  /**
   * The kubelet's GET /metrics, volume stats only, in the exposition format:
   * kubelet_volume_stats_capacity_bytes (the claim's status.capacity, less a file system's 2%) and
   * _used_bytes of every Bound claim a Running pod on this node mounts, labelled namespace and
   * persistentvolumeclaim as the kubelet labels them.
   */
  volumeMetrics(): string;
  /** volumeMetrics() served at http://127.0.0.1:<port>/metrics (for a real Prometheus to scrape); closed by stop(). */
  serveMetrics(): Promise<string>;
  stop(): Promise<void>;
}

export interface NodeAgentOptions {
  namespaces: string[];
  nodeName?: string;
  /** Delay from binding a pod to reporting it Running and Ready (default 100 ms). */
  podStartDelayMs?: number;
  /** Delay from a pod's deletionTimestamp to its final delete (default 100 ms). */
  podTerminationDelayMs?: number;
  /** Who the agent is (default: the cluster's node-agent token, else the admin). */
  credentials?: Credentials;
  /** Progress lines (default: CLAIMSTEP_E2E_VERBOSE=1 prints to stderr). */
  log?: (line: string) => void;
}

class HttpError extends Error {
  constructor(
    readonly what: string,
    readonly reply: Reply<unknown>,
  ) {
    const b = reply.body as { message?: string } | string;
    super(`${what}: HTTP ${reply.status} ${typeof b === "string" ? b.slice(0, 300) : (b?.message ?? "")}`);
  }
}

type Cond = {
  type: string;
  status: string;
  lastTransitionTime?: string;
  lastProbeTime?: string | null;
  message?: string;
  reason?: string;
};
const now = () => new Date().toISOString().replace(/\.\d+Z$/, "Z");
/** A condition's time, as the API server keeps it (seconds). */
const stamp = now;
const sleep = (ms: number) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());
const claimNamesOf = (pod: KubeObject): string[] =>
  (pod.spec?.volumes ?? [])
    .map((v: { persistentVolumeClaim?: { claimName: string } }) => v.persistentVolumeClaim?.claimName)
    .filter(Boolean);
const isReady = (pod: KubeObject) =>
  pod.status?.phase === "Running" &&
  (pod.status?.conditions ?? []).some((c: Cond) => c.type === "Ready" && c.status === "True");

export async function startNodeAgent(
  cp: Pick<ClusterInfo, "server" | "caPem" | "admin" | "nodeAgentToken">,
  opts: NodeAgentOptions,
): Promise<NodeAgent> {
  const nodeName = opts.nodeName ?? NODE_NAME;
  const credentials: Credentials =
    opts.credentials ??
    (cp.nodeAgentToken ? { server: cp.server, caPem: cp.caPem, token: cp.nodeAgentToken } : cp.admin);
  const creds = { ...credentials, userAgent: AGENT_USER_AGENT };
  const rest = new Rest(creds);
  const podStartDelayMs = opts.podStartDelayMs ?? 100;
  const podTerminationDelayMs = opts.podTerminationDelayMs ?? 100;
  const verbose = process.env.CLAIMSTEP_E2E_VERBOSE === "1";
  const log = opts.log ?? ((l: string) => verbose && process.stderr.write(`[node-agent] ${l}\n`));
  const namespaces = new Set(opts.namespaces);

  const counts: NodeAgentCounts = {
    podsBound: 0,
    podsStarted: 0,
    podDeletesFinished: 0,
    volumesProvisioned: 0,
    claimsBound: 0,
    resizesStarted: 0,
    resizesFinished: 0,
    resizesInfeasible: 0,
    nodeResizes: 0,
    modificationsStarted: 0,
    modificationsFinished: 0,
    modificationsInfeasible: 0,
    modificationsPending: 0,
    modificationsRolledBack: 0,
    volumesReleased: 0,
    volumesDeleted: 0,
    conflicts: 0,
  };
  const errors: string[] = [];
  const actions: string[] = [];
  const finishedDeletes: FinishedDelete[] = [];
  const markers = new Map<string, string>();
  const act = (line: string) => {
    actions.push(`${new Date().toISOString()} ${line}`);
    if (actions.length > 2000) actions.splice(0, actions.length - 2000);
    log(line);
  };
  const fail = (line: string) => {
    if (errors.length >= 500) return; // a persistent failure retried every second says enough by then
    errors.push(`${new Date().toISOString()} ${line}`);
    log(`ERROR ${line}`);
  };

  // --- the Node
  await ensureNode(rest, nodeName, fail);

  // --- caches
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = (ms = 10) => {
    if (stopped) return;
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      reconcile();
    }, ms);
  };
  const onChange = () => schedule();
  const onError = (m: string) => fail(m);
  const pods = [...namespaces].map(
    (ns) => new Informer({ credentials: creds, path: resourcePath("pods", ns), onChange, onError }),
  );
  const claims = [...namespaces].map(
    (ns) => new Informer({ credentials: creds, path: resourcePath("persistentvolumeclaims", ns), onChange, onError }),
  );
  const pvs = [...namespaces].map(
    (ns) =>
      new Informer({
        credentials: creds,
        path: resourcePath("persistentvolumes"),
        query: { labelSelector: `${NAMESPACE_LABEL}=${ns}` },
        onChange,
        onError,
      }),
  );
  const classes = new Informer({ credentials: creds, path: resourcePath("storageclasses"), onChange, onError });
  const vacs = new Informer({ credentials: creds, path: resourcePath("volumeattributesclasses"), onChange, onError });
  const informers = [...pods, ...claims, ...pvs, classes, vacs];
  const synced = Promise.all(informers.map((i) => i.synced)).then(() => {});
  const allPods = () => pods.flatMap((i) => i.list());
  const allClaims = () => claims.flatMap((i) => i.list());
  const allPvs = () => pvs.flatMap((i) => i.list());
  const findClaim = (ns: string, name: string) => claims.map((i) => i.get(ns, name)).find(Boolean);
  const findPv = (name: string) => pvs.map((i) => i.get(undefined, name)).find(Boolean);

  // --- bookkeeping: one task per (object, kind of work) at a time
  const busy = new Set<string>();
  const done = new Set<string>(); // pod:<uid>:bound / :started / :deleted
  const boundAt = new Map<string, number>();
  const nodePending = new Map<string, { since: number; podUids: Set<string> }>();
  const tasks = new Set<Promise<void>>();
  const run = (key: string, what: string, fn: () => Promise<void>) => {
    if (busy.has(key) || stopped) return;
    busy.add(key);
    const p = (async () => {
      try {
        await fn();
      } catch (e) {
        if (!stopped) fail(`${what}: ${e instanceof Error ? e.message : String(e)}`);
        // Retry later, not in a tight loop.
        await sleep(1000);
      } finally {
        busy.delete(key);
        schedule();
      }
    })();
    tasks.add(p);
    void p.finally(() => tasks.delete(p));
  };

  /** GET, mutate, PUT (the object or its status), retrying lost races; null when the object is gone
   * or is another one (uid). */
  async function update(
    resource: Resource,
    ns: string | null,
    name: string,
    uid: string | undefined,
    sub: "status" | null,
    mutate: (o: KubeObject) => boolean | void,
  ): Promise<KubeObject | null> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const cur = await rest.get(resource, ns, name);
      if (cur.status === 404) return null;
      if (cur.status !== 200) throw new HttpError(`get ${resource} ${name}`, cur);
      if (uid && cur.body.metadata.uid !== uid) return null;
      const next = structuredClone(cur.body);
      if (mutate(next) === false) return cur.body;
      const r = sub ? await rest.status.put(resource, ns, name, next) : await rest.put(resource, ns, name, next);
      if (r.status === 409) {
        counts.conflicts++;
        continue;
      }
      if (r.status === 404) return null;
      if (r.status < 200 || r.status >= 300)
        throw new HttpError(`update ${resource}${sub ? `/${sub}` : ""} ${ns ? `${ns}/` : ""}${name}`, r);
      return r.body;
    }
    throw new Error(`update ${resource} ${name}: 10 conflicts in a row`);
  }

  const classOf = (claim: KubeObject) =>
    claim.spec?.storageClassName ? classes.get(undefined, claim.spec.storageClassName) : undefined;
  const driverOfClass = (cls: KubeObject | undefined): DriverBehaviour =>
    driverOfStorageClass(cls?.metadata.annotations);

  // ------------------------------------------------------------------ pods
  function reconcilePod(pod: KubeObject) {
    const { namespace: ns = "", name = "", uid = "" } = pod.metadata;
    if (pod.metadata.deletionTimestamp) {
      if (pod.spec?.nodeName && pod.spec.nodeName !== nodeName) return;
      if (done.has(`pod:${uid}:deleted`)) return;
      run(`pod:${uid}:delete`, `finish deletion of pod ${ns}/${name}`, async () => {
        await sleep(podTerminationDelayMs);
        const r = await rest.delete("pods", ns, name, {
          apiVersion: "v1",
          kind: "DeleteOptions",
          gracePeriodSeconds: 0,
          preconditions: { uid },
        });
        done.add(`pod:${uid}:deleted`);
        if (r.status === 404 || r.status === 409) return; // already gone / replaced
        if (r.status >= 300) {
          done.delete(`pod:${uid}:deleted`);
          throw new HttpError(`delete pod ${ns}/${name}`, r);
        }
        counts.podDeletesFinished++;
        finishedDeletes.push({ namespace: ns, name, uid, at: new Date().toISOString() });
        act(`finished the graceful deletion of pod ${ns}/${name} (${uid})`);
      });
      return;
    }
    const phase = pod.status?.phase;
    if (phase === "Succeeded" || phase === "Failed") return;
    const claimNames = claimNamesOf(pod);
    if (!pod.spec?.nodeName) {
      if (pod.spec?.schedulerName && pod.spec.schedulerName !== "default-scheduler") return;
      if (done.has(`pod:${uid}:bound`)) return;
      // The scheduler's VolumeBinding: every claim must exist (and not be going away).
      const ready = claimNames.every((c) => {
        const claim = findClaim(ns, c);
        return claim && !claim.metadata.deletionTimestamp;
      });
      if (!ready) return;
      run(`pod:${uid}:bind`, `bind pod ${ns}/${name}`, async () => {
        const r = await rest.sub("binding").create("pods", ns, name, {
          apiVersion: "v1",
          kind: "Binding",
          metadata: { name, uid },
          target: { apiVersion: "v1", kind: "Node", name: nodeName },
        });
        if (r.status === 404 || r.status === 409) {
          done.add(`pod:${uid}:bound`);
          return;
        }
        if (r.status >= 300) throw new HttpError(`bind pod ${ns}/${name}`, r);
        done.add(`pod:${uid}:bound`);
        boundAt.set(uid, Date.now());
        counts.podsBound++;
        act(`bound pod ${ns}/${name} to ${nodeName}`);
      });
      return;
    }
    if (pod.spec.nodeName !== nodeName) return;
    if (isReady(pod) || done.has(`pod:${uid}:started`)) return;
    // The kubelet starts the containers once every volume is attached: claims Bound.
    const volumesReady = claimNames.every((c) => findClaim(ns, c)?.status?.phase === "Bound");
    if (!volumesReady) return;
    const since = boundAt.get(uid) ?? 0;
    const wait = since + podStartDelayMs - Date.now();
    if (wait > 0) {
      schedule(wait + 5);
      return;
    }
    run(`pod:${uid}:start`, `start pod ${ns}/${name}`, async () => {
      const started = now();
      const ip = `10.244.${Math.floor(Math.random() * 250) + 1}.${Math.floor(Math.random() * 250) + 2}`;
      const result = await update("pods", ns, name, uid, "status", (p) => {
        if (p.metadata.deletionTimestamp) return false;
        const cs = (list: { name: string; image: string }[] | undefined, init: boolean) =>
          (list ?? []).map((c) => ({
            name: c.name,
            image: c.image,
            imageID: `${c.image}@sha256:${"0".repeat(64)}`,
            containerID: `containerd://${uid.replace(/-/g, "")}${c.name.length}`,
            ready: !init,
            started: !init,
            restartCount: 0,
            state: init
              ? { terminated: { exitCode: 0, reason: "Completed", startedAt: started, finishedAt: started } }
              : { running: { startedAt: started } },
          }));
        p.status = {
          ...p.status,
          phase: "Running",
          hostIP: "10.0.0.10",
          hostIPs: [{ ip: "10.0.0.10" }],
          podIP: ip,
          podIPs: [{ ip }],
          startTime: p.status?.startTime ?? started,
          conditions: ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"].map(
            (type) => ({ type, status: "True", lastProbeTime: null, lastTransitionTime: started }),
          ),
          containerStatuses: cs(p.spec?.containers, false),
          ...(p.spec?.initContainers?.length ? { initContainerStatuses: cs(p.spec.initContainers, true) } : {}),
        };
      });
      if (!result) return;
      done.add(`pod:${uid}:started`);
      counts.podsStarted++;
      act(`pod ${ns}/${name} Running and Ready (${uid})`);
      // The application's first write to each volume it mounts (kept by claim uid, like data).
      for (const c of claimNamesOf(result)) {
        const claimUid = findClaim(ns, c)?.metadata.uid;
        if (!claimUid || markers.has(claimUid)) continue;
        markers.set(claimUid, `${ns}/${c} written by pod ${name} (${uid})`);
        act(`marker on claim ${ns}/${c} (${claimUid}) written by pod ${name}`);
      }
    });
  }

  // ------------------------------------------------------------------ claims
  function reconcileClaim(claim: KubeObject) {
    const { namespace: ns = "", name = "", uid = "" } = claim.metadata;
    if (claim.metadata.deletionTimestamp) return;
    const cls = classOf(claim);
    const b = driverOfClass(cls);
    if (claim.status?.phase !== "Bound") {
      if (!cls) return; // no class (yet): no provisioner acts
      if (!claim.spec?.volumeName && cls.volumeBindingMode === "WaitForFirstConsumer") {
        const used = allPods().some(
          (p) => p.metadata.namespace === ns && p.spec?.nodeName && claimNamesOf(p).includes(name),
        );
        if (!used) return;
      }
      const created = Date.parse(claim.metadata.creationTimestamp ?? "") || 0;
      const wait = created + (b.provisionMs ?? 0) - Date.now();
      if (wait > 0) {
        schedule(wait + 5);
        return;
      }
      run(`claim:${uid}:bind`, `provision and bind claim ${ns}/${name}`, () => provisionAndBind(claim, cls));
      return;
    }
    const pv = claim.spec?.volumeName ? findPv(claim.spec.volumeName) : undefined;
    if (!pv) return; // not one of ours (or the cache has not seen it yet)
    reconcileResize(claim, pv, b);
    reconcileModify(claim, pv, b);
  }

  async function provisionAndBind(claim: KubeObject, cls: KubeObject) {
    const { namespace: ns = "", name = "", uid = "" } = claim.metadata;
    const pvName = claim.spec?.volumeName || `pvc-${uid}`;
    const size = claim.spec?.resources?.requests?.storage;
    const vac = claim.spec?.volumeAttributesClassName as string | undefined;
    const driver = cls.provisioner ?? CSI_DRIVER;
    let pv = (await rest.get("persistentvolumes", null, pvName)).body;
    if (!pv?.metadata?.uid) {
      const r = await rest.create("persistentvolumes", null, {
        apiVersion: "v1",
        kind: "PersistentVolume",
        metadata: {
          name: pvName,
          labels: { [NAMESPACE_LABEL]: ns },
          annotations: { "pv.kubernetes.io/provisioned-by": driver },
        },
        spec: {
          capacity: { storage: size },
          accessModes: claim.spec?.accessModes ?? ["ReadWriteOnce"],
          persistentVolumeReclaimPolicy: cls.reclaimPolicy ?? "Delete",
          storageClassName: cls.metadata.name,
          volumeMode: claim.spec?.volumeMode ?? "Filesystem",
          ...(vac ? { volumeAttributesClassName: vac } : {}),
          claimRef: {
            apiVersion: "v1",
            kind: "PersistentVolumeClaim",
            namespace: ns,
            name,
            uid,
            resourceVersion: claim.metadata.resourceVersion,
          },
          csi: {
            driver,
            volumeHandle: `vol-${uid}`,
            fsType: "ext4",
            volumeAttributes: { "storage.kubernetes.io/csiProvisionerIdentity": `e2e-${nodeName}` },
          },
        },
      });
      if (r.status === 409) pv = (await rest.get("persistentvolumes", null, pvName)).body;
      else if (r.status >= 300) throw new HttpError(`create pv ${pvName}`, r);
      else {
        pv = r.body;
        counts.volumesProvisioned++;
        act(`provisioned pv ${pvName} (${size}${vac ? `, ${vac}` : ""}) for claim ${ns}/${name}`);
      }
    }
    if (pv.spec?.claimRef?.uid !== uid)
      throw new Error(`pv ${pvName} is bound to another claim (${pv.spec?.claimRef?.uid})`);
    // The PV controller: PV Bound, then the claim's volumeName and annotations, then its status.
    await update("persistentvolumes", null, pvName, pv.metadata.uid, "status", (p) => {
      if (p.status?.phase === "Bound") return false;
      p.status = { ...p.status, phase: "Bound", lastPhaseTransitionTime: now() };
    });
    const bound = await update("persistentvolumeclaims", ns, name, uid, null, (c) => {
      const ann = c.metadata.annotations ?? {};
      if (c.spec.volumeName === pvName && ann["pv.kubernetes.io/bind-completed"] === "yes") return false;
      c.spec.volumeName = pvName;
      c.metadata.annotations = {
        ...ann,
        "pv.kubernetes.io/bind-completed": "yes",
        "pv.kubernetes.io/bound-by-controller": "yes",
        "volume.beta.kubernetes.io/storage-provisioner": driver,
        "volume.kubernetes.io/storage-provisioner": driver,
      };
    });
    if (!bound) return;
    const final = await update("persistentvolumeclaims", ns, name, uid, "status", (c) => {
      if (c.status?.phase === "Bound") return false;
      c.status = {
        ...c.status,
        ...boundStatus(pv.spec.accessModes, pv.spec.capacity.storage, pv.spec.volumeAttributesClassName || undefined),
      };
    });
    if (final) {
      counts.claimsBound++;
      act(`claim ${ns}/${name} Bound to ${pvName} (${pv.spec.capacity.storage})`);
    }
  }

  // ------------------------------------------------------------------ expansion
  function reconcileResize(claim: KubeObject, pv: KubeObject, b: DriverBehaviour) {
    const { namespace: ns = "", name = "", uid = "" } = claim.metadata;
    const spec = claim.spec?.resources?.requests?.storage as string | undefined;
    const cap = claim.status?.capacity?.storage as string | undefined;
    const alloc = claim.status?.allocatedResources?.storage as string | undefined;
    const st = claim.status?.allocatedResourceStatuses?.storage as string | undefined;
    const key = `claim:${uid}:resize`;
    if (busy.has(key)) return;

    if (st === "NodeResizePending") {
      if (b.nodeExpansion === "none") return; // the class changed under it: nothing more happens
      const mounting = allPods().filter(
        (p) =>
          p.metadata.namespace === ns &&
          p.spec?.nodeName === nodeName &&
          !p.metadata.deletionTimestamp &&
          isReady(p) &&
          claimNamesOf(p).includes(name),
      );
      let rec = nodePending.get(uid);
      if (!rec) {
        rec = { since: Date.now(), podUids: new Set(mounting.map((p) => p.metadata.uid!)) };
        nodePending.set(uid, rec);
      }
      const podUids = rec.podUids;
      // A pod that was not mounting the claim when it became NodeResizePending counts as a mount.
      const eligible = mounting.filter(
        (p) =>
          nodeStage(claim as PersistentVolumeClaim, b, podUids.has(p.metadata.uid!) ? "running" : "starting") ===
          "expand",
      );
      if (!eligible.length) return;
      const via = eligible[0]!;
      run(key, `node expansion of claim ${ns}/${name}`, async () => {
        const inProgress = await update("persistentvolumeclaims", ns, name, uid, "status", (c) => {
          if (c.status?.allocatedResourceStatuses?.storage !== "NodeResizePending") return false;
          c.status = nodeResizeInProgress(c.status);
        });
        if (inProgress?.status?.allocatedResourceStatuses?.storage !== "NodeResizeInProgress") return;
        act(
          `claim ${ns}/${name}: NodeResizeInProgress (${b.nodeExpansion}, pod ${via.metadata.name} ${via.metadata.uid})`,
        );
        await sleep(b.nodeResizeMs ?? 0);
        const pvNow = (await rest.get("persistentvolumes", null, pv.metadata.name!)).body;
        const size = pvNow?.spec?.capacity?.storage ?? inProgress.status?.allocatedResources?.storage;
        const fin = await update("persistentvolumeclaims", ns, name, uid, "status", (c) => {
          if (c.status?.allocatedResourceStatuses?.storage !== "NodeResizeInProgress") return false;
          c.status = resizeFinished(c.status, size);
        });
        if (!fin) return;
        nodePending.delete(uid);
        counts.nodeResizes++;
        counts.resizesFinished++;
        act(`claim ${ns}/${name}: file system grown on the node, capacity ${size}`);
      });
      return;
    }
    if (st === "NodeResizeInProgress") return; // a node step of a previous agent; not ours to redo
    if (!spec || !cap) return;
    // The claim's capacity stands for the volume's size: the PV grows only just before the claim.
    const stage = resizeStage(claim as PersistentVolumeClaim, toBytes(cap), b);
    if (stage !== "start" && stage !== "expand") return;
    // expand: an operation no one is running (a previous agent's): resume it at its size.
    const newSize = stage === "expand" && alloc ? alloc : spec;
    const pvSize = pv.spec?.capacity?.storage as string | undefined;
    run(key, `expansion of claim ${ns}/${name}`, async () => {
      let grown = false;
      const started = await update("persistentvolumeclaims", ns, name, uid, "status", (c) => {
        // A stale event of a claim this agent already grew (capacity reached): nothing to start.
        const now = c.status?.capacity?.storage as string | undefined;
        grown = !!now && toBytes(now) >= toBytes(newSize);
        if (grown) return false;
        c.status = controllerResizeStarted(c.status, newSize, stamp());
      });
      if (!started || grown) return;
      counts.resizesStarted++;
      act(`claim ${ns}/${name}: ControllerResizeInProgress ${cap} → ${newSize}${st ? ` (was ${st})` : ""}`);
      await sleep(b.resizeMs ?? 0);
      if (b.maxStorage !== undefined && toBytes(newSize) > toBytes(b.maxStorage)) {
        // This fake driver's words (control-plane.test.ts reads them), not the hostpath driver's.
        const refusal = `code = OutOfRange desc = requested size ${newSize} exceeds the maximum volume size ${b.maxStorage} of storage class ${claim.spec?.storageClassName}`;
        const r = await update("persistentvolumeclaims", ns, name, uid, "status", (c) => {
          c.status = controllerResizeInfeasible(c.status, refusal, stamp());
        });
        if (r) {
          counts.resizesInfeasible++;
          act(`claim ${ns}/${name}: ControllerResizeInfeasible (${newSize} > ${b.maxStorage})`);
        }
        return;
      }
      // ControllerExpandVolume succeeded: the PV's capacity first, then the claim.
      if (!pvSize || toBytes(pvSize) !== toBytes(newSize)) {
        const p = await update("persistentvolumes", null, pv.metadata.name!, pv.metadata.uid, null, (v) => {
          v.spec.capacity = { ...v.spec.capacity, storage: newSize };
        });
        if (!p) throw new Error(`pv ${pv.metadata.name} is gone`);
      }
      if (!finishesOnController(claim as PersistentVolumeClaim, b)) {
        const mountingUids = allPods()
          .filter(
            (p) =>
              p.metadata.namespace === ns &&
              p.spec?.nodeName === nodeName &&
              !p.metadata.deletionTimestamp &&
              isReady(p) &&
              claimNamesOf(p).includes(name),
          )
          .map((p) => p.metadata.uid!);
        const r = await update("persistentvolumeclaims", ns, name, uid, "status", (c) => {
          c.status = nodeResizePending(c.status, stamp());
        });
        if (r) {
          nodePending.set(uid, { since: Date.now(), podUids: new Set(mountingUids) });
          act(
            `claim ${ns}/${name}: NodeResizePending (${b.nodeExpansion}; pods mounting it: ${mountingUids.join(", ") || "none"})`,
          );
        }
        return;
      }
      const r = await update("persistentvolumeclaims", ns, name, uid, "status", (c) => {
        c.status = resizeFinished(c.status, newSize);
      });
      if (r) {
        counts.resizesFinished++;
        act(`claim ${ns}/${name}: resized, capacity ${newSize}`);
      }
    });
  }

  // ------------------------------------------------------------------ VolumeAttributesClass
  function reconcileModify(claim: KubeObject, pv: KubeObject, b: DriverBehaviour) {
    const { namespace: ns = "", name = "", uid = "" } = claim.metadata;
    const key = `claim:${uid}:modify`;
    if (busy.has(key)) return;
    // The agent keeps no list of claims left Pending: one is taken up again when its class appears.
    const next = modifyStage(claim as PersistentVolumeClaim, b);
    const cur = claim.status?.currentVolumeAttributesClassName as string | undefined | null;
    const mvs = claim.status?.modifyVolumeStatus as { status: string } | undefined | null;
    /** The driver as this class finds it: a VolumeAttributesClass annotated infeasible is refused too. */
    const refusing = (target: string): DriverBehaviour =>
      vacs.get(undefined, target)?.metadata.annotations?.[VAC_INFEASIBLE_ANNOTATION] === "true"
        ? { ...b, refusedClasses: [...(b.refusedClasses ?? []), target] }
        : b;
    /** ControllerModifyVolume to `target` answered: refused, or the PV's class then the claim's. */
    const answer = async (target: string) => {
      const vac = vacs.get(undefined, target);
      const refusal = modifyRefusal(refusing(target), target, Object.keys(vac?.parameters ?? {}), pv.metadata.name!);
      // Written only while the claim is still at that target (a stale event finds it done).
      let wrote = false;
      const atTarget = (c: KubeObject) =>
        c.status?.modifyVolumeStatus?.status === "InProgress" &&
        c.status.modifyVolumeStatus.targetVolumeAttributesClassName === target;
      const fresh = await rest.get("persistentvolumeclaims", ns, name);
      if (fresh.status !== 200 || fresh.body.metadata.uid !== uid || !atTarget(fresh.body)) return;
      if (refusal) {
        await update("persistentvolumeclaims", ns, name, uid, "status", (c) => {
          wrote = atTarget(c);
          if (!wrote) return false;
          c.status = modifyInfeasible(c.status, target, refusal, stamp());
        });
        if (wrote) {
          counts.modificationsInfeasible++;
          act(`claim ${ns}/${name}: modifyVolumeStatus Infeasible (${target})`);
        }
        return;
      }
      await update("persistentvolumes", null, pv.metadata.name!, pv.metadata.uid, null, (v) => {
        if (v.spec.volumeAttributesClassName === target) return false;
        v.spec.volumeAttributesClassName = target;
      });
      await update("persistentvolumeclaims", ns, name, uid, "status", (c) => {
        wrote = atTarget(c);
        if (!wrote) return false;
        c.status = modifyCompleted(c.status, target);
      });
      if (wrote) {
        counts.modificationsFinished++;
        act(`claim ${ns}/${name}: currentVolumeAttributesClassName ${target}`);
      }
    };
    switch (next.stage) {
      case "idle":
      case "unsupported":
      case "refused":
      case "parked":
        return;
      case "cancel":
        if (!hasCondition(claim as PersistentVolumeClaim, "ModifyingVolume")) return;
        run(key, `cancel the modification of claim ${ns}/${name}`, async () => {
          const r = await update("persistentvolumeclaims", ns, name, uid, "status", (c) => {
            if (c.spec?.volumeAttributesClassName || !hasCondition(c as PersistentVolumeClaim, "ModifyingVolume"))
              return false;
            c.status = modifyCancelled(c.status);
          });
          if (r) act(`claim ${ns}/${name}: modification cancelled`);
        });
        return;
      case "finish":
        // ControllerModifyVolume of a previous agent, or a stale event of our own: the claim as read decides.
        run(key, `modification of claim ${ns}/${name}`, () => answer(next.target));
        return;
      case "start":
        break;
    }
    const want = next.target;
    if (!vacs.get(undefined, want)) {
      if (mvs?.status === "Pending") return;
      run(key, `modification of claim ${ns}/${name} (class ${want} missing)`, async () => {
        const r = await update("persistentvolumeclaims", ns, name, uid, "status", (c) => {
          c.status = modifyPending(c.status);
        });
        if (r) {
          counts.modificationsPending++;
          act(`claim ${ns}/${name}: modifyVolumeStatus Pending (VolumeAttributesClass ${want} does not exist)`);
        }
      });
      return;
    }
    run(key, `modification of claim ${ns}/${name}`, async () => {
      // Decided on the informer's copy, which may be older than a modification that just finished:
      // the claim as read now decides (else a stale event restarts a finished one).
      let stale = false;
      const started = await update("persistentvolumeclaims", ns, name, uid, "status", (c) => {
        const again = modifyStage(c as PersistentVolumeClaim, b);
        if (again.stage !== "start" || again.target !== want) {
          stale = true;
          return false;
        }
        c.status = modifyInProgress(c.status, want, stamp());
      });
      if (!started || stale) return;
      // Back to the class in effect after a failure: the same steps, to that class.
      if (want === cur) counts.modificationsRolledBack++;
      else counts.modificationsStarted++;
      act(`claim ${ns}/${name}: modifyVolumeStatus InProgress ${cur ?? "(none)"} → ${want}`);
      await sleep(b.modifyMs ?? 0);
      await answer(want);
    });
  }

  // ------------------------------------------------------------------ volumes whose claim is gone
  function reconcilePv(pv: KubeObject) {
    const ref = pv.spec?.claimRef;
    if (!ref || pv.metadata.deletionTimestamp) return;
    const claim = findClaim(ref.namespace, ref.name);
    if (claim && claim.metadata.uid === ref.uid) return;
    const name = pv.metadata.name!;
    if (pv.status?.phase === "Released" && pv.spec.persistentVolumeReclaimPolicy !== "Delete") return;
    run(`pv:${pv.metadata.uid}:release`, `release pv ${name}`, async () => {
      const c = await rest.get("persistentvolumeclaims", ref.namespace, ref.name);
      if (c.status === 200 && c.body.metadata.uid === ref.uid) return; // the cache was behind
      if (c.status !== 200 && c.status !== 404) throw new HttpError(`get claim ${ref.namespace}/${ref.name}`, c);
      const released = await update("persistentvolumes", null, name, pv.metadata.uid, "status", (v) => {
        if (v.status?.phase === "Released") return false;
        v.status = { ...v.status, phase: "Released", lastPhaseTransitionTime: now() };
      });
      if (!released) return;
      counts.volumesReleased++;
      act(`pv ${name} Released (claim ${ref.namespace}/${ref.name} is gone)`);
      if (pv.spec.persistentVolumeReclaimPolicy === "Delete") {
        const d = await rest.delete("persistentvolumes", null, name, { preconditions: { uid: pv.metadata.uid } });
        if (d.status >= 300 && d.status !== 404 && d.status !== 409) throw new HttpError(`delete pv ${name}`, d);
        if (d.status < 300) {
          counts.volumesDeleted++;
          act(`pv ${name} deleted (reclaim policy Delete)`);
        }
      }
    });
  }

  function reconcile() {
    if (stopped) return;
    try {
      for (const pod of allPods()) reconcilePod(pod);
      for (const claim of allClaims()) reconcileClaim(claim);
      for (const pv of allPvs()) reconcilePv(pv);
    } catch (e) {
      fail(`reconcile: ${e instanceof Error ? e.stack : String(e)}`);
    }
  }

  // A slow safety net (no requests: the caches only), for delays and anything a watch missed.
  const tick = setInterval(() => schedule(0), 1000);
  tick.unref();
  await synced;
  schedule(0);

  // ------------------------------------------------------------------ the kubelet's volume stats
  const volumeUsed = new Map<string, number>();
  let metricsServer: Server | undefined;
  const volumeMetrics = (): string => {
    const mounted = new Set(
      allPods()
        .filter((p) => p.spec?.nodeName === nodeName && p.status?.phase === "Running" && !p.metadata.deletionTimestamp)
        .flatMap((p) => claimNamesOf(p).map((c) => `${p.metadata.namespace}/${c}`)),
    );
    const stats = allClaims()
      .filter(
        (c) =>
          c.status?.phase === "Bound" &&
          c.status?.capacity?.storage &&
          mounted.has(`${c.metadata.namespace}/${c.metadata.name}`),
      )
      .map((c) => ({
        labels: `namespace="${c.metadata.namespace}",persistentvolumeclaim="${c.metadata.name}"`,
        capacity: Math.round(quantity(c.status!.capacity!.storage) * 0.98),
        used: volumeUsed.get(`${c.metadata.namespace}/${c.metadata.name}`) ?? 0,
      }));
    return [
      "# HELP kubelet_volume_stats_capacity_bytes [ALPHA] Capacity in bytes of the volume",
      "# TYPE kubelet_volume_stats_capacity_bytes gauge",
      ...stats.map((v) => `kubelet_volume_stats_capacity_bytes{${v.labels}} ${v.capacity}`),
      "# HELP kubelet_volume_stats_used_bytes [ALPHA] Number of used bytes in the volume",
      "# TYPE kubelet_volume_stats_used_bytes gauge",
      ...stats.map((v) => `kubelet_volume_stats_used_bytes{${v.labels}} ${Math.round(v.used)}`),
      "",
    ].join("\n");
  };

  return {
    nodeName,
    namespaces: [...namespaces],
    counts,
    errors,
    finishedDeletes,
    actions,
    synced,
    setVolumeUsed(namespace, claim, bytes) {
      volumeUsed.set(`${namespace}/${claim}`, bytes);
    },
    markers,
    writeMarker(claimUid, text) {
      markers.set(claimUid, text);
      act(`marker on claim ${claimUid}: ${text}`);
    },
    volumeMetrics,
    async serveMetrics() {
      if (!metricsServer) {
        const server = createServer((req, res) => {
          if (req.url !== "/metrics") res.writeHead(404, { "content-type": "text/plain" }).end("404 page not found\n");
          else res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" }).end(volumeMetrics());
        });
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        metricsServer = server;
      }
      return `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics`;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (metricsServer) {
        const server = metricsServer;
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      clearInterval(tick);
      if (timer) clearTimeout(timer);
      await Promise.all(informers.map((i) => i.stop()));
      // Let tasks in flight finish their current request (they stop at the next step).
      await Promise.race([Promise.allSettled([...tasks]), sleep(5000)]);
    },
  };
}

async function ensureNode(rest: Rest, name: string, fail: (l: string) => void) {
  const created = await rest.create("nodes", null, {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      labels: {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "e2e.claimstep.io/node": "true",
      },
    },
    spec: {},
  });
  if (created.status >= 300 && created.status !== 409) {
    fail(`create node ${name}: HTTP ${created.status}`);
    return;
  }
  const node = created.status === 409 ? (await rest.get("nodes", null, name)).body : created.body;
  if ((node.status?.conditions ?? []).some((c: Cond) => c.type === "Ready" && c.status === "True")) return;
  const t = now();
  const r = await rest.status.patch("nodes", null, name, {
    status: {
      capacity: { cpu: "8", memory: "32Gi", pods: "250", "ephemeral-storage": "100Gi" },
      allocatable: { cpu: "8", memory: "32Gi", pods: "250", "ephemeral-storage": "100Gi" },
      addresses: [
        { type: "InternalIP", address: "10.0.0.10" },
        { type: "Hostname", address: name },
      ],
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "KubeletReady",
          message: "e2e node agent is posting ready status",
          lastHeartbeatTime: t,
          lastTransitionTime: t,
        },
        {
          type: "MemoryPressure",
          status: "False",
          reason: "KubeletHasSufficientMemory",
          lastHeartbeatTime: t,
          lastTransitionTime: t,
        },
        {
          type: "DiskPressure",
          status: "False",
          reason: "KubeletHasNoDiskPressure",
          lastHeartbeatTime: t,
          lastTransitionTime: t,
        },
        {
          type: "PIDPressure",
          status: "False",
          reason: "KubeletHasSufficientPID",
          lastHeartbeatTime: t,
          lastTransitionTime: t,
        },
      ],
      nodeInfo: {
        machineID: "e2e",
        systemUUID: "e2e",
        bootID: "e2e",
        kernelVersion: "6.1.0",
        osImage: "claimstep e2e",
        containerRuntimeVersion: "containerd://2.0.0",
        kubeletVersion: "v1.34.2",
        kubeProxyVersion: "",
        operatingSystem: "linux",
        architecture: "amd64",
      },
    },
  });
  if (r.status >= 300 && r.status !== 409)
    fail(`node ${name} status: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
}
