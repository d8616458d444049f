// Helpers of the real-server scenarios of finalize, recovery, autogrow and the relay
// (test/e2e/{finalize,recovery,autogrow-relay}.test.ts): the shipped CLI as a child process, the
// StatefulSet the admin creates, the uids of its pods and claims, the audit checks every scenario
// ends with, and a forwarding proxy that kills the CLI right after a chosen request has landed.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Agent, request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { expect } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { applyManifest, kubeconfigYaml } from "./control-plane.js";
import {
  type AuditEntry,
  auditEvents,
  checkAudit,
  describeAudit,
  type E2E,
  type KubeObject,
  waitFor,
} from "./index.js";

export const ROOT = new URL("../../..", import.meta.url).pathname;

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time of the process (ms since epoch): audit entries between them are its requests. */
  startedAt: number;
  endedAt: number;
}

export interface CliOptions {
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Another kubeconfig (e.g. through the killing proxy). */
  kubeconfig?: string;
  /** Called once spawned (e.g. to kill it). */
  onSpawn?: (child: ChildProcess) => void;
  /** No --kubeconfig/-n (serve, relay take theirs from the env). */
  bare?: boolean;
}

/** `node bin/claimstep.js <args> --kubeconfig <claimstep's> -n <ns> --no-color`, to its exit. */
export function claimstep(e2e: E2E, args: readonly string[], o: CliOptions = {}): Promise<CliRun> {
  const full = o.bare
    ? [...args]
    : [...args, "--kubeconfig", o.kubeconfig ?? e2e.info.claimstepKubeconfig, "-n", e2e.namespace, "--no-color"];
  const startedAt = Date.now();
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1", ...o.env };
    delete env.KUBECONFIG;
    const child = spawn(process.execPath, [join(ROOT, "bin/claimstep.js"), ...full], { cwd: ROOT, env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), o.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, startedAt, endedAt: Date.now() });
    });
    o.onSpawn?.(child);
  });
}

/** The JSON objects a `-o json` command printed (one per line). */
export function jsonLines(stdout: string): any[] {
  return stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
}

export const describeRun = (r: CliRun) =>
  `exit ${r.code ?? r.signal}\n--- stdout\n${r.stdout.slice(-6000)}\n--- stderr\n${r.stderr.slice(-3000)}`;

// ---------------------------------------------------------------------------------------------
// the set

export interface SetOptions {
  replicas?: number;
  storageClass: string;
  size?: string;
  whenDeleted?: "Delete" | "Retain";
  annotations?: Record<string, string>;
}

export function statefulSetManifest(name: string, o: SetOptions): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name, ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      replicas: o.replicas ?? 3,
      serviceName: name,
      podManagementPolicy: "Parallel",
      selector: { matchLabels: { app: name } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: o.whenDeleted ?? "Retain", whenScaled: "Retain" },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            { name: "app", image: "registry.k8s.io/pause:3.10", volumeMounts: [{ name: "data", mountPath: "/data" }] },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: "data" },
          spec: {
            accessModes: ["ReadWriteOnce"],
            storageClassName: o.storageClass,
            resources: { requests: { storage: o.size ?? "1Gi" } },
          },
        },
      ],
    },
  };
}

const podRe = (set: string) => new RegExp(`^${set}-\\d+$`);
const claimRe = (set: string) => new RegExp(`^data-${set}-\\d+$`);

export async function podsOf(e2e: E2E, set: string): Promise<KubeObject[]> {
  const r = await e2e.api.list("pods");
  return (r.body.items ?? []).filter((p) => podRe(set).test(p.metadata.name ?? ""));
}
export async function claimsOf(e2e: E2E, set: string): Promise<KubeObject[]> {
  const r = await e2e.api.list("persistentvolumeclaims");
  return (r.body.items ?? []).filter((c) => claimRe(set).test(c.metadata.name ?? ""));
}

export interface Uids {
  pods: Record<string, string>;
  claims: Record<string, string>;
}
export async function uidsOf(e2e: E2E, set: string): Promise<Uids> {
  const map = (xs: KubeObject[]) => Object.fromEntries(xs.map((x) => [x.metadata.name!, x.metadata.uid!]).sort());
  return { pods: map(await podsOf(e2e, set)), claims: map(await claimsOf(e2e, set)) };
}

/** The set's pod rollout at rest with every replica Ready and every claim Bound (at `capacity`). */
export async function waitSetReady(
  e2e: E2E,
  set: string,
  o: { replicas?: number; capacity?: string; timeoutMs?: number } = {},
): Promise<KubeObject> {
  const replicas = o.replicas ?? 3;
  let last: KubeObject | undefined;
  await waitFor(
    async () => {
      const r = await e2e.api.get("statefulsets", set);
      if (r.status !== 200) return false;
      last = r.body;
      const s = r.body.status ?? {};
      if (
        !(
          s.readyReplicas === replicas &&
          s.currentRevision &&
          s.currentRevision === s.updateRevision &&
          s.observedGeneration === r.body.metadata.generation
        )
      )
        return false;
      const claims = await claimsOf(e2e, set);
      if (claims.length < replicas) return false;
      return claims.every(
        (c) => c.status?.phase === "Bound" && (!o.capacity || c.status?.capacity?.storage === o.capacity),
      );
    },
    { timeoutMs: o.timeoutMs ?? 60_000, intervalMs: 250, what: `StatefulSet ${set} ready (${replicas} replicas)` },
  ).catch((e) => {
    throw new Error(`${(e as Error).message}; last status ${JSON.stringify(last?.status)}`);
  });
  return last!;
}

export async function createSet(e2e: E2E, name: string, o: SetOptions): Promise<KubeObject> {
  const r = await e2e.api.create("statefulsets", statefulSetManifest(name, o));
  if (r.status !== 201)
    throw new Error(`create StatefulSet ${name}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 400)}`);
  return waitSetReady(e2e, name, { replicas: o.replicas ?? 3, capacity: o.size ?? "1Gi" });
}

// ---------------------------------------------------------------------------------------------
// the audit log

/** Waits until the audit log has caught up with `until` (an entry at or after it exists). */
export async function auditCaughtUp(e2e: E2E, until = Date.now()): Promise<void> {
  // Any request now is logged after everything answered before it.
  await e2e.api.get("namespaces", e2e.namespace).catch(() => undefined);
  await waitFor(async () => e2e.audit({ since: new Date(until) }).length > 0, {
    timeoutMs: 10_000,
    intervalMs: 100,
    what: "the audit log caught up",
  });
}

const isEvent = (e: AuditEntry) => e.resource === "events";
const READ_VERBS = new Set(["get", "list"]);
const WRITE_VERBS = new Set(["create", "update", "patch", "delete", "deletecollection"]);

/** claimstep's requests in a time window (namespaced and cluster-scoped: files run one at a time). */
export function claimstepRequestsIn(e2e: E2E, from: number, to: number): AuditEntry[] {
  const user = e2e.info.claimstepUser;
  if (!e2e.info.auditLogPath) return [];
  return auditEvents(e2e.info.auditLogPath, {
    since: new Date(from - 5),
    where: (e) =>
      e.user === user && Date.parse(e.time) <= to + 50 && (e.namespace === e2e.namespace || e.namespace === ""),
  });
}

export interface Budget {
  reads: number;
  writes: number;
  eventWrites: number;
  watches: number;
}
export function countRequests(entries: AuditEntry[]): Budget {
  return {
    reads: entries.filter((e) => READ_VERBS.has(e.verb) && !isEvent(e)).length,
    writes: entries.filter((e) => WRITE_VERBS.has(e.verb) && !isEvent(e)).length,
    eventWrites: entries.filter((e) => WRITE_VERBS.has(e.verb) && isEvent(e)).length,
    watches: entries.filter((e) => e.verb === "watch").length,
  };
}

/** B2's budget per step: ≤ 4 reads + the record's read, ≤ 2 writes + events. `loads`: the
 * non-stepping loads the command makes besides its steps (set's and finalize's preview). */
export function expectWithinBudget(entries: AuditEntry[], steps: number, what: string, loads = 0): Budget {
  const b = countRequests(entries);
  const msg = `${what}: ${b.reads} reads, ${b.writes} writes, ${b.eventWrites} event writes over ${steps} step(s) (+${loads} load(s))\n${describeAudit(entries)}`;
  expect(steps, msg).toBeGreaterThan(0);
  expect(b.reads, msg).toBeLessThanOrEqual(5 * (steps + loads));
  expect(b.writes, msg).toBeLessThanOrEqual(2 * steps);
  return b;
}

/** Errors claimstep expects from a real server in every scenario: the event recorder's first PATCH
 * of an event that is not there yet (it creates it), the record read while there is none. */
export const routineErrors = (e: AuditEntry) =>
  (e.resource === "events" && e.verb === "patch" && e.code === 404) ||
  (e.resource === "configmaps" && e.verb === "get" && e.code === 404);

/** The scenario-end audit checks: 0 claim deletes, 0 pod deletes (but the node agent finishing
 * ones the scenario allows), no unexpected error answered to claimstep. Entries since `since`. */
export function expectCleanAudit(
  e2e: E2E,
  since: number,
  o: { expectedErrors?: (e: AuditEntry) => boolean; allowPodDeletes?: (e: AuditEntry) => boolean } = {},
) {
  const events = e2e.audit({ since: new Date(since) });
  const check = checkAudit({
    events,
    namespace: e2e.namespace,
    claimstepUser: e2e.info.claimstepUser,
    expectedErrors: (e) => routineErrors(e) || (o.expectedErrors?.(e) ?? false),
    ...(o.allowPodDeletes ? { allowPodDeletes: o.allowPodDeletes } : {}),
  });
  const deletes = events.filter(
    (e) =>
      (e.verb === "delete" || e.verb === "deletecollection") &&
      e.subresource === "" &&
      (e.resource === "pods" || e.resource === "persistentvolumeclaims"),
  );
  expect(deletes, `pod or claim deletes:\n${describeAudit(deletes)}`).toEqual([]);
  expect(check.unexpectedDeletes, describeAudit(check.unexpectedDeletes)).toEqual([]);
  expect(check.unexpectedErrors, `errors answered to claimstep:\n${describeAudit(check.unexpectedErrors)}`).toEqual([]);
  return { ...check, events };
}

// ---------------------------------------------------------------------------------------------
// a forwarding proxy that kills the CLI right after a request has landed

export interface KillingProxy {
  kubeconfig: string;
  /** Arms it: after forwarding the `nth` (1-based) request matching, and receiving its answer,
   * it destroys the client's socket (no answer) and calls `onHit` (SIGKILL the child). */
  arm(
    match: (method: string, path: string, status: number, body: string) => boolean,
    onHit: () => void,
    nth?: number,
  ): void;
  disarm(): void;
  /** Every request forwarded, in order. */
  readonly seen: { method: string; path: string; status: number; killed: boolean }[];
  close(): Promise<void>;
}

export async function startKillingProxy(e2e: E2E, dir: string): Promise<KillingProxy> {
  const target = new URL(e2e.info.server);
  const agent = new Agent({ ca: e2e.info.caPem, keepAlive: true });
  let armed:
    | { match: (m: string, p: string, status: number, body: string) => boolean; onHit: () => void; left: number }
    | undefined;
  const seen: KillingProxy["seen"] = [];
  const sockets = new Set<import("node:net").Socket>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const method = req.method ?? "GET";
      const path = req.url ?? "/";
      const headers = { ...req.headers, host: target.host };
      const up = httpsRequest({ host: target.hostname, port: target.port, path, method, headers, agent }, (upRes) => {
        const out: Buffer[] = [];
        upRes.on("data", (c: Buffer) => out.push(c));
        upRes.on("end", () => {
          const status = upRes.statusCode ?? 0;
          let kill = false;
          if (armed?.match(method, path.split("?")[0]!, status, body.toString("utf8"))) {
            armed.left--;
            if (armed.left === 0) kill = true;
          }
          seen.push({ method, path, status, killed: kill });
          if (kill) {
            const hit = armed!.onHit;
            armed = undefined;
            // The request landed and was answered: the process dies first, never hearing of it.
            hit();
            req.socket.destroy();
            return;
          }
          res.writeHead(status, upRes.headers);
          res.end(Buffer.concat(out));
        });
      });
      up.on("error", (e) => {
        res.writeHead(502);
        res.end(String(e));
      });
      up.end(body);
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const kubeconfig = join(dir, `proxy-${port}.kubeconfig`);
  // Plain HTTP to the proxy (kubectl proxy's way); the token goes through to the API server.
  writeFileSync(
    kubeconfig,
    kubeconfigYaml(`http://127.0.0.1:${port}`, e2e.info.caPem, { token: e2e.info.claimstepToken }),
    { mode: 0o600 },
  );
  return {
    kubeconfig,
    seen,
    arm(match, onHit, nth = 1) {
      armed = { match, onHit, left: nth };
    },
    disarm() {
      armed = undefined;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      agent.destroy();
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// the relay's own identity (deploy/kubernetes/relay.yaml: ServiceAccount claimstep/claimstep-relay,
// list and watch only), which the harness does not install

export const RELAY_USER = "system:serviceaccount:claimstep:claimstep-relay";

/** Applies relay.yaml's ServiceAccount, ClusterRole and ClusterRoleBinding verbatim (not its
 * Deployment), mints a token for the ServiceAccount and writes a kubeconfig with it. */
export async function relayKubeconfig(e2e: E2E, dir: string): Promise<string> {
  const text = readFileSync(join(ROOT, "deploy/kubernetes/relay.yaml"), "utf8");
  const docs = parseAllDocuments(text)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => !!o && o.kind !== "Deployment");
  await applyManifest(e2e.admin, docs.map((d) => stringify(d)).join("---\n"), "deploy/kubernetes/relay.yaml");
  const token = await waitFor(
    async () => {
      const r = await e2e.admin
        .sub("token")
        .create<{ status: { token: string } }>("serviceaccounts", "claimstep", "claimstep-relay", {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenRequest",
          spec: { expirationSeconds: 3600 },
        });
      return r.status === 201 ? r.body.status.token : undefined;
    },
    { timeoutMs: 15_000, what: "a token for ServiceAccount claimstep/claimstep-relay" },
  );
  const path = join(dir, "relay.kubeconfig");
  writeFileSync(path, kubeconfigYaml(e2e.info.server, e2e.info.caPem, { token }), { mode: 0o600 });
  return path;
}

/** B2's budget step by step: each `-o json` step's requests, from its `at` to the next step's
 * (the last to the process's end): ≤ 4 reads + the record's read, ≤ 2 writes, besides events. */
export function expectBudgetPerStep(
  e2e: E2E,
  run: CliRun,
  steps: { at: string; decision: { phase: string; reason: string } }[],
  what: string,
): Budget[] {
  const all = claimstepRequestsIn(e2e, run.startedAt, run.endedAt);
  const out: Budget[] = [];
  steps.forEach((s, i) => {
    const from = Date.parse(s.at);
    const to = i + 1 < steps.length ? Date.parse(steps[i + 1]!.at) : run.endedAt + 50;
    const mine = all.filter((e) => {
      const t = Date.parse(e.time);
      return t >= from && t < to;
    });
    const b = countRequests(mine);
    const msg = `${what} step ${i + 1} (${s.decision.phase}/${s.decision.reason}): ${b.reads} reads, ${b.writes} writes, ${b.eventWrites} event writes\n${describeAudit(mine)}`;
    expect(b.reads, msg).toBeLessThanOrEqual(5);
    expect(b.writes, msg).toBeLessThanOrEqual(2);
    out.push(b);
  });
  return out;
}
