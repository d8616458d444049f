// A real Kubernetes control plane for the tests: etcd, kube-apiserver and kube-controller-manager
// on 127.0.0.1, started from the binaries in CLAIMSTEP_KUBE_ASSETS (never from a path outside the repository), with
// claimstep's shipped RBAC applied verbatim and a token for its ServiceAccount; or a connection
// to an existing cluster (CLAIMSTEP_E2E_KUBECONFIG: kind, k3d) where nothing is started.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { parse, parseAllDocuments, stringify } from "yaml";
import type { RealNodeInfo } from "./real-node.js";
import { type Credentials, closeAgents, KIND_TO_RESOURCE, type KubeObject, ok, Rest, rawRequest } from "./rest.js";

export type { Credentials, KubeObject } from "./rest.js";
export { ok, Rest } from "./rest.js";

const execFileP = promisify(execFile);
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

export const CLAIMSTEP_NAMESPACE = "claimstep";
export const CLAIMSTEP_SERVICE_ACCOUNT = "claimstep";
export const CLAIMSTEP_USER = `system:serviceaccount:${CLAIMSTEP_NAMESPACE}:${CLAIMSTEP_SERVICE_ACCOUNT}`;
/** The users of tokens.csv (a local control plane only). */
export const ADMIN_USER = "admin";
export const NODE_AGENT_USER = "e2e-node-agent";
export const CONTROLLER_MANAGER_USER = "system:kube-controller-manager";
export const FEATURE_GATES = ["MaxUnavailableStatefulSet=true"];

/** Plain data about the cluster: what vitest's global setup provides to the test workers. */
export interface ClusterInfo {
  /** "local": started here, with an audit log and a node agent; "existing": CLAIMSTEP_E2E_KUBECONFIG;
   * "node": started here with a real kubelet and CSI driver (real-node.ts), an audit log, no agent. */
  mode: "local" | "existing" | "node";
  /** The real node's storage and pods (mode "node" only). */
  realNode?: RealNodeInfo;
  server: string;
  caPem: string;
  /** The admin's credentials (a token here; a kind/k3d kubeconfig usually has a client certificate). */
  admin: Credentials;
  adminToken?: string;
  /** A token of ServiceAccount claimstep/claimstep, bound only by deploy/kubernetes/rbac*.yaml. */
  claimstepToken: string;
  claimstepUser: string;
  /** The node agent's own identity (user e2e-node-agent, group system:masters); local mode only. */
  nodeAgentToken?: string;
  adminKubeconfig: string;
  claimstepKubeconfig: string;
  /** JSON lines, level Metadata, stage ResponseComplete (and ResponseStarted for watches); null on an existing cluster. */
  auditLogPath: string | null;
  /** gitVersion of /version, e.g. v1.34.2. */
  version: string;
  featureGates: string[];
  dir: string;
  startupMs: { etcd: number; apiserver: number; controllerManager: number; rbac: number };
}

export interface ControlPlane extends ClusterInfo {
  stop(): Promise<void>;
}

export interface ControlPlaneOptions {
  /** Directory holding kube-apiserver and kube-controller-manager (and maybe etcd). */
  assetsDir: string;
  /** Keep the directory (logs, audit log, data) after stop; default CLAIMSTEP_E2E_KEEP=1. */
  keep?: boolean;
  featureGates?: string[];
  /** Progress lines (default: silent). */
  log?: (line: string) => void;
}

/** The files claimstep ships and the tests apply verbatim. */
export const RBAC_MANIFESTS = ["deploy/kubernetes/rbac.yaml", "deploy/kubernetes/rbac-finalize.yaml"].map((f) =>
  join(repoRoot, f),
);

// ---------------------------------------------------------------------------------------------
// processes

interface Proc {
  name: string;
  child: ChildProcess;
  logPath: string;
  exited: Promise<number | null>;
  exitCode: number | null | undefined;
}

const live = new Set<Proc>();
let exitHookInstalled = false;
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort (a worker or vitest exiting without teardown): SIGKILL every process group we started.
  process.on("exit", () => {
    for (const p of live) killGroup(p, "SIGKILL");
  });
}

function killGroup(p: Proc, signal: NodeJS.Signals) {
  if (p.child.pid === undefined || p.exitCode !== undefined) return;
  try {
    process.kill(-p.child.pid, signal);
  } catch {
    try {
      p.child.kill(signal);
    } catch {
      /* gone */
    }
  }
}

function tail(path: string, lines = 40): string {
  try {
    const all = readFileSync(path, "utf8").split("\n");
    return all.slice(-lines - 1).join("\n");
  } catch (e) {
    return `(no log at ${path}: ${String(e)})`;
  }
}

function startProcess(name: string, bin: string, args: string[], dir: string): Proc {
  installExitHook();
  const logPath = join(dir, `${name}.log`);
  const fd = openSync(logPath, "a");
  // Its own process group (detached), so that stop() and the exit hook kill it and any child.
  const child = spawn(bin, args, {
    cwd: dir,
    detached: true,
    stdio: ["ignore", fd, fd],
    env: { ...process.env, GOMAXPROCS: process.env.GOMAXPROCS ?? "2" },
  });
  closeSync(fd);
  child.unref();
  const p: Proc = { name, child, logPath, exitCode: undefined, exited: Promise.resolve(null) };
  p.exited = new Promise((res) => {
    child.on("exit", (code, sig) => {
      p.exitCode = code ?? (sig ? -1 : null);
      live.delete(p);
      res(p.exitCode);
    });
    child.on("error", (e) => {
      writeFileSync(logPath, `\nspawn ${bin} failed: ${String(e)}\n`, { flag: "a" });
      p.exitCode = -1;
      live.delete(p);
      res(-1);
    });
  });
  live.add(p);
  return p;
}

async function stopProcess(p: Proc, graceMs = 5000) {
  if (p.exitCode !== undefined) return;
  killGroup(p, "SIGTERM");
  const t = setTimeout(() => killGroup(p, "SIGKILL"), graceMs);
  await p.exited;
  clearTimeout(t);
  // Children of the group (none expected) die with it.
  killGroup(p, "SIGKILL");
}

/** A watchdog shell in its own group: when this Node process dies without cleaning up (SIGKILL),
 * it kills the groups listed in `pgids` and removes the directory. */
function startWatchdog(dir: string, keep: boolean): ChildProcess {
  const script = [
    `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done`,
    `for g in $(cat "${dir}/pgids" 2>/dev/null); do kill -s TERM -- -$g 2>/dev/null; done`,
    "sleep 2",
    `for g in $(cat "${dir}/pgids" 2>/dev/null); do kill -s KILL -- -$g 2>/dev/null; done`,
    keep ? "true" : `rm -rf "${dir}"`,
  ].join("\n");
  const w = spawn("sh", ["-c", script], { detached: true, stdio: "ignore" });
  w.unref();
  return w;
}

async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<import("node:net").Server>((res, rej) => {
          const s = createServer();
          s.once("error", rej);
          s.listen(0, "127.0.0.1", () => res(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as import("node:net").AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

function findBinary(name: string, assetsDir: string, pathFallback: boolean): string {
  const inAssets = join(assetsDir, name);
  if (existsSync(inAssets)) return inAssets;
  if (pathFallback) {
    for (const d of (process.env.PATH ?? "").split(delimiter)) {
      if (d && existsSync(join(d, name))) return join(d, name);
    }
  }
  throw new Error(`claimstep e2e: ${name} not found in ${assetsDir}${pathFallback ? " nor on PATH" : ""}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until fn returns something other than undefined/false/null; fails naming `what`, with the
 * last value or error seen. */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  o: { timeoutMs?: number; intervalMs?: number; what: string },
): Promise<Exclude<T, false | null | undefined>> {
  const timeoutMs = o.timeoutMs ?? 30_000;
  const intervalMs = o.intervalMs ?? 150;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== null && v !== false) return v as Exclude<T, false | null | undefined>;
      last = v;
      lastError = undefined;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() >= deadline) {
      const seen =
        lastError !== undefined
          ? `last error: ${lastError instanceof Error ? lastError.message : String(lastError)}`
          : `last value: ${JSON.stringify(last)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${o.what} (${seen})`);
    }
    await sleep(intervalMs);
  }
}

/** Waits for a process's HTTP endpoint; fails at once (with its log's last 40 lines) if it exits. */
async function waitHealthy(p: Proc, probe: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  let lastError = "";
  for (;;) {
    if (p.exitCode !== undefined) {
      throw new Error(
        `claimstep e2e: ${p.name} exited (code ${p.exitCode}) before it was healthy; last lines of ${p.logPath}:\n${tail(p.logPath)}`,
      );
    }
    try {
      if (await probe()) return;
    } catch (e) {
      lastError = String(e);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `claimstep e2e: ${p.name} not healthy within ${timeoutMs} ms (${lastError}); last lines of ${p.logPath}:\n${tail(p.logPath)}`,
      );
    }
    await sleep(100);
  }
}

async function httpOk(url: string, init: { token?: string; ca?: string; insecure?: boolean } = {}): Promise<boolean> {
  if (url.startsWith("http://")) {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  }
  const { request } = await import("node:https");
  return new Promise((res, rej) => {
    const req = request(
      url,
      {
        headers: init.token ? { Authorization: `Bearer ${init.token}` } : {},
        ...(init.ca ? { ca: init.ca } : {}),
        rejectUnauthorized: !init.insecure,
        timeout: 2000,
      },
      (r) => {
        r.resume();
        r.on("end", () => res(r.statusCode === 200));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", rej);
    req.end();
  });
}

// ---------------------------------------------------------------------------------------------
// kubeconfigs and RBAC

export function kubeconfigYaml(
  server: string,
  caPem: string,
  user: { token?: string; certPem?: string; keyPem?: string },
  namespace?: string,
): string {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    "current-context": "e2e",
    clusters: [{ name: "e2e", cluster: { server, "certificate-authority-data": b64(caPem) } }],
    users: [
      {
        name: "e2e",
        user: user.token
          ? { token: user.token }
          : { "client-certificate-data": b64(user.certPem ?? ""), "client-key-data": b64(user.keyPem ?? "") },
      },
    ],
    contexts: [{ name: "e2e", context: { cluster: "e2e", user: "e2e", ...(namespace ? { namespace } : {}) } }],
  });
}

/** Creates every object of a multi-document manifest as admin (an existing object is replaced, so
 * the cluster holds exactly the file). Returns the kinds/names applied. */
export async function applyManifest(rest: Rest, text: string, source = "manifest"): Promise<string[]> {
  const applied: string[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) throw new Error(`${source}: ${doc.errors.map((e) => e.message).join("; ")}`);
    const obj = doc.toJS() as KubeObject | null;
    if (!obj) continue;
    const resource = obj.kind ? KIND_TO_RESOURCE[obj.kind] : undefined;
    if (!resource) throw new Error(`${source}: no resource path known for kind ${obj.kind}`);
    const ns = obj.metadata.namespace ?? null;
    const created = await rest.create(resource, ns, obj);
    if (created.status === 409) {
      const cur = ok(await rest.get(resource, ns, obj.metadata.name!), `get ${obj.kind} ${obj.metadata.name}`);
      ok(
        await rest.put(resource, ns, obj.metadata.name!, {
          ...obj,
          metadata: { ...obj.metadata, resourceVersion: cur.metadata.resourceVersion },
        }),
        `replace ${obj.kind} ${obj.metadata.name}`,
      );
    } else {
      ok(created, `${source}: create ${obj.kind} ${obj.metadata.name}`);
    }
    applied.push(`${obj.kind}/${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ""}${obj.metadata.name}`);
  }
  return applied;
}

/** Applies claimstep's shipped RBAC and mints a token for its ServiceAccount (TokenRequest API). */
export async function installClaimstepIdentity(rest: Rest): Promise<string> {
  for (const file of RBAC_MANIFESTS) await applyManifest(rest, readFileSync(file, "utf8"), file);
  // The ServiceAccount was just created: the TokenRequest may race its visibility for a moment.
  const reply = await waitFor(
    async () => {
      const r = await rest
        .sub("token")
        .create<{ status: { token: string } }>("serviceaccounts", CLAIMSTEP_NAMESPACE, CLAIMSTEP_SERVICE_ACCOUNT, {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenRequest",
          spec: { expirationSeconds: 86400 },
        });
      if (r.status === 404) return undefined;
      return r;
    },
    { timeoutMs: 15_000, what: "a token for ServiceAccount claimstep/claimstep" },
  );
  return ok(reply, "TokenRequest for claimstep/claimstep").status.token;
}

// ---------------------------------------------------------------------------------------------
// a local control plane

export async function startControlPlane(opts: ControlPlaneOptions): Promise<ControlPlane> {
  const keep = opts.keep ?? process.env.CLAIMSTEP_E2E_KEEP === "1";
  const log = opts.log ?? (() => {});
  const featureGates = opts.featureGates ?? FEATURE_GATES;
  const assets = resolve(opts.assetsDir);
  const apiserverBin = findBinary("kube-apiserver", assets, false);
  const kcmBin = findBinary("kube-controller-manager", assets, false);
  const etcdBin = findBinary("etcd", assets, true);

  const dir = mkdtempSync(join(tmpdir(), "claimstep-e2e-"));
  const f = (name: string) => join(dir, name);
  const procs: Proc[] = [];
  const watchdog = startWatchdog(dir, keep);
  const recordGroup = (p: Proc) => {
    procs.push(p);
    writeFileSync(
      f("pgids"),
      `${procs
        .map((q) => q.child.pid)
        .filter(Boolean)
        .join("\n")}\n`,
    );
  };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const p of [...procs].reverse()) await stopProcess(p);
    try {
      if (watchdog.pid) process.kill(-watchdog.pid, "SIGKILL");
    } catch {
      /* gone */
    }
    closeAgents();
    if (!keep) rmSync(dir, { recursive: true, force: true });
    else log(`claimstep e2e: kept ${dir}`);
  };

  try {
    const [etcdClient, etcdPeer, etcdMetrics, apiPort, kcmPort] = (await freePorts(5)) as [
      number,
      number,
      number,
      number,
      number,
    ];
    const t0 = Date.now();
    const etcd = startProcess(
      "etcd",
      etcdBin,
      [
        "--data-dir",
        f("etcd-data"),
        "--listen-client-urls",
        `http://127.0.0.1:${etcdClient}`,
        "--advertise-client-urls",
        `http://127.0.0.1:${etcdClient}`,
        "--listen-peer-urls",
        `http://127.0.0.1:${etcdPeer}`,
        "--initial-advertise-peer-urls",
        `http://127.0.0.1:${etcdPeer}`,
        "--initial-cluster",
        `default=http://127.0.0.1:${etcdPeer}`,
        "--listen-metrics-urls",
        `http://127.0.0.1:${etcdMetrics}`,
      ],
      dir,
    );
    recordGroup(etcd);

    // Meanwhile: certificates, keys, tokens, policy.
    const openssl = (...args: string[]) => execFileP("openssl", args, { cwd: dir });
    await Promise.all([
      openssl(
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        "serving.key",
        "-out",
        "serving.crt",
        "-days",
        "2",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ),
      openssl("genrsa", "-out", "sa.key", "2048").then(() =>
        openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"),
      ),
    ]);
    const caPem = readFileSync(f("serving.crt"), "utf8");
    const token = () => Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("hex");
    const adminToken = token();
    const nodeAgentToken = token();
    const kcmToken = token();
    writeFileSync(
      f("tokens.csv"),
      [
        `${adminToken},${ADMIN_USER},uid-admin,"system:masters"`,
        `${nodeAgentToken},${NODE_AGENT_USER},uid-node-agent,"system:masters"`,
        `${kcmToken},${CONTROLLER_MANAGER_USER},uid-kcm,"system:masters"`,
        "",
      ].join("\n"),
      { mode: 0o600 },
    );
    writeFileSync(
      f("audit-policy.yaml"),
      stringify({
        apiVersion: "audit.k8s.io/v1",
        kind: "Policy",
        omitStages: ["RequestReceived"],
        rules: [{ level: "Metadata" }],
      }),
    );

    // etcd answers /health once it is the leader of its one-member cluster.
    await waitHealthy(
      etcd,
      async () => {
        const res = await fetch(`http://127.0.0.1:${etcdClient}/health`, { signal: AbortSignal.timeout(2000) });
        return res.ok && /true/.test(await res.text());
      },
      30_000,
    );
    const etcdMs = Date.now() - t0;
    log(`etcd healthy in ${etcdMs} ms`);

    const t1 = Date.now();
    const server = `https://127.0.0.1:${apiPort}`;
    const auditLogPath = f("audit.log");
    const apiserver = startProcess(
      "kube-apiserver",
      apiserverBin,
      [
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        `--secure-port=${apiPort}`,
        `--etcd-servers=http://127.0.0.1:${etcdClient}`,
        `--cert-dir=${f("apiserver")}`,
        `--tls-cert-file=${f("serving.crt")}`,
        `--tls-private-key-file=${f("serving.key")}`,
        `--token-auth-file=${f("tokens.csv")}`,
        "--anonymous-auth=false",
        "--authorization-mode=Node,RBAC",
        "--enable-admission-plugins=NamespaceLifecycle,ServiceAccount,DefaultStorageClass,PersistentVolumeClaimResize,ResourceQuota",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        `--service-account-key-file=${f("sa.pub")}`,
        `--service-account-signing-key-file=${f("sa.key")}`,
        "--service-cluster-ip-range=10.96.0.0/16",
        "--endpoint-reconciler-type=none",
        `--audit-policy-file=${f("audit-policy.yaml")}`,
        `--audit-log-path=${auditLogPath}`,
        "--audit-log-maxsize=2000",
        ...(featureGates.length ? [`--feature-gates=${featureGates.join(",")}`] : []),
      ],
      dir,
    );
    recordGroup(apiserver);
    await waitHealthy(apiserver, () => httpOk(`${server}/readyz`, { token: adminToken, ca: caPem }), 90_000);
    const apiserverMs = Date.now() - t1;
    log(`kube-apiserver ready in ${apiserverMs} ms`);

    const adminCreds: Credentials = { server, caPem, token: adminToken, userAgent: "claimstep-e2e-admin" };
    const rest = new Rest(adminCreds);
    const adminKubeconfig = f("admin.kubeconfig");
    writeFileSync(adminKubeconfig, kubeconfigYaml(server, caPem, { token: adminToken }), { mode: 0o600 });
    writeFileSync(f("kcm.kubeconfig"), kubeconfigYaml(server, caPem, { token: kcmToken }), { mode: 0o600 });

    const t2 = Date.now();
    const kcm = startProcess(
      "kube-controller-manager",
      kcmBin,
      [
        `--kubeconfig=${f("kcm.kubeconfig")}`,
        "--bind-address=127.0.0.1",
        `--secure-port=${kcmPort}`,
        "--controllers=statefulset,garbagecollector,persistentvolume-expander,serviceaccount,serviceaccount-token,namespace,resourcequota,pvc-protection,pv-protection,disruption",
        "--use-service-account-credentials=false",
        "--leader-elect=false",
        `--service-account-private-key-file=${f("sa.key")}`,
        `--root-ca-file=${f("serving.crt")}`,
        `--cert-dir=${f("kcm")}`,
        ...(featureGates.length ? [`--feature-gates=${featureGates.join(",")}`] : []),
      ],
      dir,
    );
    recordGroup(kcm);

    // RBAC and claimstep's token while the controller manager starts.
    const t3 = Date.now();
    const rbac = (async () => {
      const claimstepToken = await installClaimstepIdentity(rest);
      return { claimstepToken, ms: Date.now() - t3 };
    })();
    await waitHealthy(kcm, () => httpOk(`https://127.0.0.1:${kcmPort}/healthz`, { insecure: true }), 60_000);
    const controllerManagerMs = Date.now() - t2;
    log(`kube-controller-manager healthy in ${controllerManagerMs} ms`);
    const { claimstepToken, ms: rbacMs } = await rbac;

    const claimstepKubeconfig = f("claimstep.kubeconfig");
    writeFileSync(claimstepKubeconfig, kubeconfigYaml(server, caPem, { token: claimstepToken }), { mode: 0o600 });
    const version = ok(await rest.request<{ gitVersion: string }>("GET", "/version"), "GET /version").gitVersion;

    return {
      mode: "local",
      server,
      caPem,
      admin: adminCreds,
      adminToken,
      claimstepToken,
      claimstepUser: CLAIMSTEP_USER,
      nodeAgentToken,
      adminKubeconfig,
      claimstepKubeconfig,
      auditLogPath,
      version,
      featureGates,
      dir,
      startupMs: { etcd: etcdMs, apiserver: apiserverMs, controllerManager: controllerManagerMs, rbac: rbacMs },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// an existing cluster

/** Connects to the cluster of an admin kubeconfig (its current context): applies claimstep's RBAC,
 * mints its token. No audit log, no node agent. Token and client-certificate users are supported
 * (kind and k3d write client certificates); exec plugins are not. */
export async function connectCluster(kubeconfigPath: string): Promise<ControlPlane> {
  const t0 = Date.now();
  const kc = parse(readFileSync(kubeconfigPath, "utf8")) as any;
  const base = dirname(resolve(kubeconfigPath));
  const ctxName = kc["current-context"];
  const ctx = (kc.contexts ?? []).find((c: { name: string }) => c.name === ctxName)?.context;
  if (!ctx) throw new Error(`claimstep e2e: ${kubeconfigPath} has no current context`);
  const cluster = (kc.clusters ?? []).find((c: { name: string }) => c.name === ctx.cluster)?.cluster;
  const user = (kc.users ?? []).find((u: { name: string }) => u.name === ctx.user)?.user ?? {};
  if (!cluster?.server) throw new Error(`claimstep e2e: ${kubeconfigPath}: cluster ${ctx.cluster} has no server`);
  const fileOrData = (data?: string, file?: string) =>
    data ? Buffer.from(data, "base64").toString("utf8") : file ? readFileSync(resolve(base, file), "utf8") : undefined;
  const caPem = fileOrData(cluster["certificate-authority-data"], cluster["certificate-authority"]);
  if (!caPem) throw new Error(`claimstep e2e: ${kubeconfigPath}: the cluster needs certificate-authority(-data)`);
  const token = user.token ?? (user.tokenFile ? readFileSync(resolve(base, user.tokenFile), "utf8").trim() : undefined);
  const certPem = fileOrData(user["client-certificate-data"], user["client-certificate"]);
  const keyPem = fileOrData(user["client-key-data"], user["client-key"]);
  if (!token && !(certPem && keyPem))
    throw new Error(
      `claimstep e2e: ${kubeconfigPath}: user ${ctx.user} needs a token or a client certificate (exec plugins are not supported here)`,
    );
  const server = String(cluster.server).replace(/\/$/, "");
  const admin: Credentials = {
    server,
    caPem,
    ...(token ? { token } : { certPem, keyPem }),
    userAgent: "claimstep-e2e-admin",
  };
  const rest = new Rest(admin);
  const version = ok(await rawRequest<{ gitVersion: string }>(admin, "GET", "/version"), "GET /version").gitVersion;
  const t1 = Date.now();
  const claimstepToken = await installClaimstepIdentity(rest);
  const rbacMs = Date.now() - t1;
  const dir = mkdtempSync(join(tmpdir(), "claimstep-e2e-"));
  const claimstepKubeconfig = join(dir, "claimstep.kubeconfig");
  writeFileSync(claimstepKubeconfig, kubeconfigYaml(server, caPem, { token: claimstepToken }), { mode: 0o600 });
  const keep = process.env.CLAIMSTEP_E2E_KEEP === "1";
  return {
    mode: "existing",
    server,
    caPem,
    admin,
    ...(token ? { adminToken: token } : {}),
    claimstepToken,
    claimstepUser: CLAIMSTEP_USER,
    adminKubeconfig: resolve(kubeconfigPath),
    claimstepKubeconfig,
    auditLogPath: null,
    version,
    featureGates: [],
    dir,
    startupMs: { etcd: 0, apiserver: 0, controllerManager: 0, rbac: rbacMs || Date.now() - t0 },
    stop: async () => {
      closeAgents();
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The serializable part (what `provide` carries). */
export function clusterInfo(cp: ControlPlane): ClusterInfo {
  const { stop: _stop, ...info } = cp;
  return info;
}

/** The admin's REST helper, for a test's own setup (not claimstep's client). */
export function admin(cp: Pick<ClusterInfo, "admin">): Rest {
  return new Rest(cp.admin);
}

/** A REST helper acting as claimstep's ServiceAccount (to check what its RBAC allows). */
export function asClaimstep(cp: Pick<ClusterInfo, "server" | "caPem" | "claimstepToken">): Rest {
  return new Rest({
    server: cp.server,
    caPem: cp.caPem,
    token: cp.claimstepToken,
    userAgent: "claimstep-e2e-as-claimstep",
  });
}
