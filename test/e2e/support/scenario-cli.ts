// Shared helpers of the real-server scenarios (test/e2e/rollout.test.ts, pods.test.ts): the SHIPPED
// command (bin/claimstep.js in a child process, with claimstep's kubeconfig: its ServiceAccount,
// bound only by the shipped RBAC), the admin's StatefulSet and classes, and the audit checks every
// scenario ends with (no claim deleted, pods deleted only by whom the scenario allows, no error
// answered to claimstep it did not expect, the requests per step within B2's budget).
import { type ChildProcess, spawn } from "node:child_process";
import { ROOT, type Run, runClaimstep } from "../../support/spawn-cli.js";
import {
  type AuditEntry,
  auditEvents,
  byStatefulSetController,
  describeAudit,
  type E2E,
  type KubeObject,
  ok,
  type StorageClassBehaviour,
  storageClass,
  waitFor,
} from "./index.js";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// the command

export interface CliRun extends Run {
  args: string[];
  /** Wall time of the process. */
  ms: number;
  startedAt: string;
  endedAt: string;
  /** stdout parsed as JSON lines (`-o json`: one object per step); lines that are not JSON skipped. */
  json: any[];
}

/** `node bin/claimstep.js <args> --kubeconfig <claimstep's> -n <namespace>`, as a user runs it. */
export async function cli(
  e2e: E2E,
  args: string[],
  o: { timeoutMs?: number; env?: Record<string, string>; asAdmin?: boolean } = {},
): Promise<CliRun> {
  // asAdmin: the admin's kubeconfig (a person looking on with kubectl's credentials), so that its
  // reads are not counted among claimstep's ServiceAccount's while a `run` steps.
  const kubeconfig = o.asAdmin ? e2e.info.adminKubeconfig : e2e.info.claimstepKubeconfig;
  const full = [...args, "--kubeconfig", kubeconfig, "-n", e2e.namespace, "--no-color"];
  const startedAt = new Date().toISOString();
  const t0 = Date.now();
  // KUBECONFIG pointed away from anything of the machine; NO_COLOR for plain text.
  const r = await runClaimstep(full, { NO_COLOR: "1", KUBECONFIG: kubeconfig, ...o.env }, o.timeoutMs ?? 60_000);
  const ms = Date.now() - t0;
  return { ...r, args: full, ms, startedAt, endedAt: new Date().toISOString(), json: jsonLines(r.stdout) };
}

/** The JSON documents of a stdout: JSON lines, or one (pretty-printed) document. */
export function jsonLines(stdout: string): any[] {
  const out: any[] = [];
  const trimmed = stdout.trim();
  if (!trimmed) return out;
  for (const line of trimmed.split("\n")) {
    const l = line.trim();
    if (!l.startsWith("{") && !l.startsWith("[")) continue;
    try {
      out.push(JSON.parse(l));
    } catch {
      /* a pretty-printed document: tried whole below */
    }
  }
  if (!out.length) {
    try {
      out.push(JSON.parse(trimmed));
    } catch {
      /* not JSON */
    }
  }
  return out;
}

/** For assertion messages. */
export function describeRun(r: CliRun): string {
  const steps = r.json
    .filter((s) => s?.decision)
    .map(
      (s) =>
        `#${s.step} ${s.at} ${s.decision.phase}/${s.decision.reason} ${s.decision.message ?? ""} [${s.outcome?.kind ?? "?"}${s.outcome?.detail ? `: ${s.outcome.detail}` : ""}]`,
    )
    .join("\n");
  return `claimstep ${r.args.join(" ")} → exit ${r.code} in ${r.ms} ms\n--- steps\n${steps}\n--- stderr\n${r.stderr.slice(-3000)}\n--- stdout (tail)\n${steps ? "" : r.stdout.slice(-3000)}`;
}

/** The steps of a `run -o json`. */
export const stepsOf = (r: CliRun): any[] => r.json.filter((s) => s && typeof s === "object" && s.decision);
export const lastStep = (r: CliRun): any => stepsOf(r).at(-1);

// ---------------------------------------------------------------------------------------------
// `claimstep serve`

export interface Served {
  port: number;
  token: string;
  startedAt: string;
  logs: string[];
  /** POST /v1/steps {namespace, name}: status and body. */
  step(name: string): Promise<{ status: number; body: any }>;
  stop(): Promise<number | null>;
}

/** `claimstep serve --port 0` with claimstep's kubeconfig and CLAIMSTEP_API_TOKEN, no interval loop. */
export async function serve(e2e: E2E, env: Record<string, string> = {}): Promise<Served> {
  const token = `e2e-${"x".repeat(8)}-${Math.random().toString(36).slice(2)}-token`;
  const startedAt = new Date().toISOString();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      `${ROOT}bin/claimstep.js`,
      "serve",
      "--port",
      "0",
      "--host",
      "127.0.0.1",
      "--kubeconfig",
      e2e.info.claimstepKubeconfig,
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        NO_COLOR: "1",
        CLAIMSTEP_API_TOKEN: token,
        CLAIMSTEP_NAMESPACES: e2e.namespace,
        CLAIMSTEP_INTERVAL_SECONDS: "0",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const logs: string[] = [];
  let exited: number | null | undefined;
  const exit = new Promise<number | null>((res) => child.on("exit", (code) => res((exited = code))));
  const port = await new Promise<number>((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(
      () => reject(new Error(`claimstep serve did not listen within 30 s:\n${logs.join("\n")}`)),
      30_000,
    );
    child.stdout!.on("data", (d: Buffer) => {
      buf += d.toString();
      let i: number;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        logs.push(line);
        try {
          const o = JSON.parse(line);
          if (o.msg === "listening") {
            clearTimeout(timer);
            resolve(o.port);
          }
        } catch {
          /* not JSON */
        }
      }
    });
    child.stderr!.on("data", (d: Buffer) => logs.push(`[stderr] ${d.toString()}`));
    void exit.then((c) => {
      clearTimeout(timer);
      reject(new Error(`claimstep serve exited (${c}) before listening:\n${logs.join("\n")}`));
    });
  });
  return {
    port,
    token,
    startedAt,
    logs,
    async step(name: string) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/steps`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ namespace: e2e.namespace, name }),
      });
      const text = await res.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* text */
      }
      return { status: res.status, body };
    },
    async stop() {
      if (exited !== undefined) return exited;
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const code = await exit;
      clearTimeout(t);
      return code;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// the admin's objects

/** A cluster-scoped name of this namespace's own (classes are shared by every test file). */
export const scoped = (e2e: E2E, name: string) => `${e2e.namespace}-${name}`;

export async function createStorageClass(e2e: E2E, name: string, b: StorageClassBehaviour = {}): Promise<string> {
  const full = scoped(e2e, name);
  ok(await e2e.admin.create("storageclasses", null, storageClass(full, b)), `create StorageClass ${full}`);
  return full;
}

export interface SetSpec {
  name?: string;
  replicas?: number;
  storageClassName: string;
  storage?: string;
  vac?: string;
  maxUnavailable?: number;
  image?: string;
  annotations?: Record<string, string>;
  /** More claim templates (same class and size). */
  extraClaims?: string[];
}

export function statefulSet(s: SetSpec): KubeObject {
  const name = s.name ?? "web";
  const claims = ["data", ...(s.extraClaims ?? [])];
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name, ...(s.annotations ? { annotations: s.annotations } : {}) },
    spec: {
      replicas: s.replicas ?? 3,
      serviceName: name,
      podManagementPolicy: "Parallel",
      selector: { matchLabels: { app: name } },
      updateStrategy: {
        type: "RollingUpdate",
        rollingUpdate: { partition: 0, ...(s.maxUnavailable ? { maxUnavailable: s.maxUnavailable } : {}) },
      },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 5,
          containers: [
            {
              name: "app",
              image: s.image ?? "registry.example/app:1",
              volumeMounts: claims.map((c) => ({ name: c, mountPath: `/${c}` })),
            },
          ],
        },
      },
      volumeClaimTemplates: claims.map((c) => ({
        metadata: { name: c },
        spec: {
          accessModes: ["ReadWriteOnce"],
          storageClassName: s.storageClassName,
          resources: { requests: { storage: s.storage ?? "1Gi" } },
          ...(s.vac ? { volumeAttributesClassName: s.vac } : {}),
        },
      })),
    },
  };
}

/** Creates the set and waits until every pod is Running and Ready and every claim Bound. */
export async function createSet(e2e: E2E, s: SetSpec): Promise<KubeObject> {
  const obj = statefulSet(s);
  ok(await e2e.api.create("statefulsets", obj), `create StatefulSet ${obj.metadata.name}`);
  await waitSetReady(e2e, obj.metadata.name!, s.replicas ?? 3);
  return ok(await e2e.api.get("statefulsets", obj.metadata.name!), "get the set");
}

export async function waitSetReady(e2e: E2E, name: string, replicas: number, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    async () => {
      const set = (await e2e.api.get("statefulsets", name)).body;
      const pods = (await e2e.api.list("pods", { labelSelector: `app=${name}` })).body.items ?? [];
      const claims = (await e2e.api.list("persistentvolumeclaims")).body.items ?? [];
      const ready = pods.filter(
        (p) =>
          !p.metadata.deletionTimestamp &&
          (p.status?.conditions ?? []).some((c: any) => c.type === "Ready" && c.status === "True"),
      );
      const bound = claims.filter((c) => c.status?.phase === "Bound");
      return (
        ready.length === replicas &&
        bound.length >= replicas &&
        (set.status?.readyReplicas ?? 0) === replicas &&
        set.status?.observedGeneration === set.metadata.generation
      );
    },
    { timeoutMs, intervalMs: 250, what: `StatefulSet ${name}: ${replicas} pods Ready, claims Bound` },
  );
}

export async function claims(e2e: E2E): Promise<KubeObject[]> {
  return ok(await e2e.api.list("persistentvolumeclaims"), "list claims").items ?? [];
}
export async function pods(e2e: E2E, set = "web"): Promise<KubeObject[]> {
  return ok(await e2e.api.list("pods", { labelSelector: `app=${set}` }), "list pods").items ?? [];
}

/** The ordinal of `data-web-2`, `web-2`. */
export const ordinalOf = (name: string): number => Number(/-(\d+)$/.exec(name)?.[1] ?? Number.NaN);

// ---------------------------------------------------------------------------------------------
// the audit log

/** This namespace's entries (and cluster-scoped ones) made by claimstep's user in [since, until]. */
export function claimstepRequests(
  e2e: E2E,
  since: string,
  until?: string,
  o: { clusterScoped?: boolean } = {},
): AuditEntry[] {
  const path = e2e.info.auditLogPath;
  if (!path) return [];
  const end = until ? Date.parse(until) : Number.POSITIVE_INFINITY;
  return auditEvents(path, { since, user: e2e.info.claimstepUser }).filter(
    (e) =>
      (e.namespace === e2e.namespace || (o.clusterScoped !== false && e.namespace === "" && e.resource !== "")) &&
      Date.parse(e.time) <= end,
  );
}

/** claimstep's writes to claims (patch/update/create of persistentvolumeclaims), in the log's order. */
export function claimWrites(e2e: E2E, since?: string): AuditEntry[] {
  return e2e
    .audit({ user: e2e.info.claimstepUser, resource: "persistentvolumeclaims", ...(since ? { since } : {}) })
    .filter((e) => e.verb !== "get" && e.verb !== "list" && e.verb !== "watch");
}

const READ_VERBS = new Set(["get", "list", "watch"]);
export const isRead = (e: AuditEntry) => READ_VERBS.has(e.verb);
export const isEventWrite = (e: AuditEntry) => !isRead(e) && e.resource === "events";

export interface Budget {
  steps: number;
  events: number;
  reads: number;
  writes: number;
  eventWrites: number;
  eventReads: number;
  perStepReads: number;
  /** The most of each kind one step made (steps told apart by their `at`). */
  maxPerStep: { reads: number; writes: number; eventRequests: number };
  byRequest: Record<string, number>;
  problems: string[];
}

/** For the summary: the steps and the most one step read and wrote. */
export const budgetNote = (b: Budget): string =>
  `${b.steps} steps, at most ${b.maxPerStep.reads} reads + ${b.maxPerStep.writes} writes + ${b.maxPerStep.eventRequests} event requests per step`;

const key = (e: AuditEntry) =>
  `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ""}${e.code >= 400 ? ` → ${e.code}` : ""}`;

/**
 * B2's budget (bench/b2-requests.ts, docs/benchmarks.md: ≤ 5 reads, ≤ 2 writes + 2 requests per
 * event), per step — each step's requests are those from its `at` to the next step's — adapted
 * honestly to what a real step does: reads ≤ 5 (the set and its re-create record, pods, claims,
 * classes; + `extraReadsPerStep`: the
 * VolumeAttributesClass list where the templates name one); writes ≤ 2, and 3 for an EvictPod
 * step (R3 writes the eviction's record before it, then the eviction, then the outcome); events ≤
 * 2 requests per event of the step's decision (a new event: a PATCH answered 404, then its create).
 * Requests before the first step's `at` (none expected) are a problem.
 */
export function checkBudget(requests: AuditEntry[], steps: any[], o: { extraReadsPerStep?: number } = {}): Budget {
  const n = steps.length;
  const events = steps.reduce((k, s) => k + (s.decision?.events?.length ?? 0), 0);
  const reads = requests.filter((e) => isRead(e) && e.resource !== "events").length;
  const eventReads = requests.filter((e) => isRead(e) && e.resource === "events").length;
  const eventWrites = requests.filter(isEventWrite).length;
  const writes = requests.filter((e) => !isRead(e) && !isEventWrite(e)).length;
  const byRequest: Record<string, number> = {};
  for (const e of requests) byRequest[key(e)] = (byRequest[key(e)] ?? 0) + 1;
  const perStepReads = 5 + (o.extraReadsPerStep ?? 0);
  const problems: string[] = [];
  if (n === 0) problems.push("no steps counted");
  const maxPerStep = { reads: 0, writes: 0, eventRequests: 0 };
  const timed = steps.filter((s) => typeof s?.at === "string");
  if (timed.length === n && n > 0) {
    const starts = timed.map((s) => Date.parse(s.at));
    const early = requests.filter((e) => Date.parse(e.time) < starts[0]!);
    if (early.length) problems.push(`requests before the first step:\n${describeAudit(early)}`);
    timed.forEach((s, i) => {
      const from = starts[i]!;
      const to = starts[i + 1] ?? Number.POSITIVE_INFINITY;
      const mine = requests.filter((e) => Date.parse(e.time) >= from && Date.parse(e.time) < to);
      const r = mine.filter((e) => isRead(e) && e.resource !== "events").length;
      const w = mine.filter((e) => !isRead(e) && !isEventWrite(e)).length;
      const ev = mine.filter((e) => e.resource === "events").length;
      maxPerStep.reads = Math.max(maxPerStep.reads, r);
      maxPerStep.writes = Math.max(maxPerStep.writes, w);
      maxPerStep.eventRequests = Math.max(maxPerStep.eventRequests, ev);
      // An eviction step (evicted, or refused: Waiting/DisruptionBudget) writes its record first.
      const allowedWrites =
        s.decision?.action?.type === "EvictPod" || mine.some((e) => e.subresource === "eviction") ? 3 : 2;
      const stepEvents = s.decision?.events?.length ?? 0;
      const what = () =>
        `step #${s.step ?? i + 1} (${s.decision?.phase}/${s.decision?.reason}): ${mine.map(key).join(", ")}`;
      if (r > perStepReads) problems.push(`${r} reads > ${perStepReads}: ${what()}`);
      if (w > allowedWrites) problems.push(`${w} writes > ${allowedWrites}: ${what()}`);
      if (ev > 2 * stepEvents) problems.push(`${ev} event requests > 2 × ${stepEvents} events: ${what()}`);
    });
  } else {
    if (reads > perStepReads * n) problems.push(`${reads} reads for ${n} steps: more than ${perStepReads} per step`);
    if (writes > 2 * n) problems.push(`${writes} writes for ${n} steps: more than 2 per step`);
    if (eventWrites + eventReads > 2 * events)
      problems.push(
        `${eventWrites} event writes + ${eventReads} event reads for ${events} events: more than 2 per event`,
      );
  }
  for (const e of requests)
    if (e.namespace === "" && e.code >= 400)
      problems.push(`cluster-scoped error answered to claimstep: ${describeAudit([e])}`);
  return { steps: n, events, reads, writes, eventWrites, eventReads, perStepReads, maxPerStep, byRequest, problems };
}

export interface ScenarioAuditOptions {
  /** Pod deletes the scenario allows besides the node agent's (default none). */
  allowPodDeletes?: (e: AuditEntry) => boolean;
  /** claimstep's error answers the scenario expects. */
  expectedErrors?: (e: AuditEntry) => boolean;
}

/** The checks after each scenario: returns the failures (empty when all holds), for one expect(). */
export function scenarioAudit(e2e: E2E, o: ScenarioAuditOptions = {}): string[] {
  // A new event is a PATCH answered 404, then its create (adapters/kube/writer.ts recordEvent: a
  // repeat bumps series.count without a read): expected, when the create of that event follows.
  const created = new Set(
    e2e
      .audit({ user: e2e.info.claimstepUser, resource: "events", verb: "create" })
      .filter((e) => e.code < 300)
      .map((e) => e.name),
  );
  const newEvent = (e: AuditEntry) =>
    e.resource === "events" && e.verb === "patch" && e.code === 404 && created.has(e.name);
  const expected = (e: AuditEntry) => newEvent(e) || (o.expectedErrors?.(e) ?? false);
  const c = e2e.checkAudit({
    ...(o.allowPodDeletes ? { allowPodDeletes: o.allowPodDeletes } : {}),
    expectedErrors: expected,
  });
  if (!c) return [];
  const out: string[] = [];
  if (c.unexpectedDeletes.length) out.push(`unexpected deletes:\n${describeAudit(c.unexpectedDeletes)}`);
  if (c.unexpectedErrors.length) out.push(`errors answered to claimstep:\n${describeAudit(c.unexpectedErrors)}`);
  return out;
}

/** A 409 on claimstep's write of the set, answered within 3 s after the StatefulSet controller wrote
 * that set (its status): the race claimstep's resourceVersion precondition is there to lose. */
export function lostRaceWithController(e2e: E2E, e: AuditEntry): boolean {
  if (!(e.resource === "statefulsets" && (e.verb === "patch" || e.verb === "update") && e.code === 409)) return false;
  const t = Date.parse(e.time);
  return e2e
    .audit({ resource: "statefulsets", name: e.name, where: byStatefulSetController })
    .some((c) => c.code < 300 && Date.parse(c.time) <= t && t - Date.parse(c.time) < 3_000);
}

/** The pod deletes a pod template change allows: the StatefulSet controller replacing pods. */
export const controllerReplacing = byStatefulSetController;
export { describeAudit };

/** One line per scenario for the file's summary. */
export class Summary {
  readonly rows: { name: string; ok: boolean; ms: number; note?: string }[] = [];
  constructor(readonly file: string) {}
  add(name: string, ok: boolean, ms: number, note?: string) {
    this.rows.push({ name, ok, ms, ...(note ? { note } : {}) });
  }
  line(version: string | undefined): string {
    const passed = this.rows.filter((r) => r.ok);
    const detail = this.rows
      .map((r) => `${r.name} ${r.ok ? "ok" : "FAILED"} ${(r.ms / 1000).toFixed(1)}s${r.note ? ` ${r.note}` : ""}`)
      .join("; ");
    return `real-server scenarios: ${passed.length} passed against ${version ?? "no cluster"} (${this.file}: ${detail || "none ran"})`;
  }
}
