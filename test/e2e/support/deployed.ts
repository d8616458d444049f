// claimstep as deployed (issue 33's proof): the shipped modes started as child processes of the
// built CLI with the command, args and env of deploy/kubernetes/deployment.yaml (`claimstep serve`,
// two replicas electing one sweeper with the Lease) and cronjob.yaml (`step --all` on a schedule,
// one run at a time: concurrencyPolicy Forbid), read from the manifests themselves, under the
// identity of the claimstep ServiceAccount (the harness applies rbac.yaml and rbac-finalize.yaml).
// Only what a pod's environment gives differs: KUBECONFIG for the in-cluster service account,
// HOSTNAME (the pod name), the Secret's values, a loopback host and a free port, and the interval
// and namespaces each scenario asks for. And a watch of the namespace's StatefulSets that keeps
// their trail (uid, being deleted, claimstep.io/status) with the time each change was seen.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { CLAIMSTEP_NAMESPACE, type E2E, type KubeObject, waitFor } from "./index.js";
import { Informer } from "./informer.js";
import { ROOT } from "./scenario-finalize.js";

function manifestOf(file: string, kind: string): any {
  const docs = parseAllDocuments(readFileSync(join(ROOT, "deploy/kubernetes", file), "utf8")).map((d) => d.toJS());
  const found = docs.find((d) => d?.kind === kind);
  if (!found) throw new Error(`deploy/kubernetes/${file} has no ${kind}`);
  return found;
}

export interface ShippedServer {
  replicas: number;
  serviceAccountName: string;
  args: string[];
  /** The container's `env` (name → value). */
  env: Record<string, string>;
  /** The Secret its `envFrom` names (the keys deployment.yaml's comment creates). */
  secret: string | undefined;
  terminationGracePeriodSeconds: number;
}

/** deploy/kubernetes/deployment.yaml's Deployment, as its pods run it. */
export function shippedServer(): ShippedServer {
  const d = manifestOf("deployment.yaml", "Deployment");
  const pod = d.spec.template.spec;
  const c = pod.containers[0];
  return {
    replicas: d.spec.replicas ?? 1,
    serviceAccountName: pod.serviceAccountName,
    args: [...(c.command ?? []), ...(c.args ?? [])],
    env: Object.fromEntries((c.env ?? []).map((e: { name: string; value?: string }) => [e.name, e.value ?? ""])),
    secret: (c.envFrom ?? []).find((e: any) => e.secretRef)?.secretRef?.name,
    terminationGracePeriodSeconds: pod.terminationGracePeriodSeconds ?? 30,
  };
}

export interface ShippedCron {
  schedule: string;
  serviceAccountName: string;
  args: string[];
  concurrencyPolicy: string;
  activeDeadlineSeconds: number;
}

/** deploy/kubernetes/cronjob.yaml's CronJob. */
export function shippedCron(): ShippedCron {
  const cj = manifestOf("cronjob.yaml", "CronJob");
  const job = cj.spec.jobTemplate.spec;
  const c = job.template.spec.containers[0];
  return {
    schedule: cj.spec.schedule,
    serviceAccountName: job.template.spec.serviceAccountName,
    args: [...(c.command ?? []), ...(c.args ?? [])],
    concurrencyPolicy: cj.spec.concurrencyPolicy ?? "Allow",
    activeDeadlineSeconds: job.activeDeadlineSeconds ?? 300,
  };
}

/** The values of the Secret deployment.yaml's comment creates (`openssl rand -hex 32`, `whsec_…`). */
const secretValues = (): Record<string, string> => ({
  CLAIMSTEP_API_TOKEN: randomBytes(32).toString("hex"),
  CLAIMSTEP_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString("base64")}`,
  CLAIMSTEP_METRICS_TOKEN: randomBytes(32).toString("hex"),
});

/** A process's environment as a pod's: nothing of the test runner's kubeconfig, the pod's name. */
function podEnv(e2e: E2E, hostname: string, extra: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith("CLAIMSTEP_")) delete env[k];
  return {
    ...env,
    // The in-cluster service account of `serviceAccountName: claimstep`: its token, its RBAC.
    KUBECONFIG: e2e.info.claimstepKubeconfig,
    HOSTNAME: hostname,
    NO_COLOR: "1",
    ...extra,
  };
}

// ---------------------------------------------------------------------------------------------
// the Deployment: `claimstep serve` replicas

export interface Replica {
  /** Its pod name (HOSTNAME): the Lease's holder identity starts with it. */
  readonly name: string;
  readonly child: ChildProcess;
  /** Its JSON log lines, each with the time it was read. */
  readonly logs: { at: number; line: Record<string, unknown> }[];
  readonly text: string[];
  port: number;
  /** Exit code or signal, once exited. */
  exit: string | undefined;
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM, as the kubelet stops a pod: waits for its exit (SIGKILL after the grace period). */
  stop(): Promise<string>;
}

async function startReplica(
  e2e: E2E,
  shipped: ShippedServer,
  name: string,
  env: Record<string, string>,
  secret: Record<string, string>,
): Promise<Replica> {
  // As the container runs it, but on the loopback and a free port (two replicas on one machine).
  const args = shipped.args.map((a, i, all) =>
    all[i - 1] === "--host" ? "127.0.0.1" : all[i - 1] === "--port" ? "0" : a,
  );
  if (args[0] !== "serve") throw new Error(`deployment.yaml runs ${args.join(" ")}, not serve`);
  const child = spawn(process.execPath, [join(ROOT, "bin/claimstep.js"), ...args], {
    cwd: ROOT,
    env: podEnv(e2e, name, { ...shipped.env, ...secret, ...env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Replica["logs"] = [];
  const text: string[] = [];
  let resolveExit!: (s: string) => void;
  const exited = new Promise<string>((r) => (resolveExit = r));
  const replica: Replica = {
    name,
    child,
    logs,
    text,
    port: 0,
    exit: undefined,
    kill: (signal) => {
      if (replica.exit === undefined) child.kill(signal);
    },
    async stop() {
      if (replica.exit !== undefined) return replica.exit;
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), (shipped.terminationGracePeriodSeconds + 5) * 1000);
      const how = await exited;
      clearTimeout(t);
      return how;
    },
  };
  child.on("exit", (code, signal) => {
    replica.exit = signal ?? `exit ${code}`;
    resolveExit(replica.exit);
  });
  let buf = "";
  child.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      text.push(line);
      try {
        logs.push({ at: Date.now(), line: JSON.parse(line) });
      } catch {
        /* not JSON */
      }
    }
  });
  child.stderr!.on("data", (d: Buffer) => text.push(`[stderr] ${d.toString().trimEnd()}`));
  replica.port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`claimstep serve (${name}) did not listen within 30 s:\n${text.join("\n")}`)),
      30_000,
    );
    const check = setInterval(() => {
      const l = logs.find((l) => l.line.msg === "listening");
      if (l) {
        clearTimeout(timer);
        clearInterval(check);
        resolve(Number(l.line.port));
      }
    }, 50);
    void exited.then((how) => {
      clearTimeout(timer);
      clearInterval(check);
      reject(new Error(`claimstep serve (${name}) exited (${how}) before listening:\n${text.join("\n")}`));
    });
  });
  return replica;
}

export interface Deployed {
  readonly replicas: Replica[];
  /** What each replica runs (for the report). */
  readonly command: string;
  /** The replica holding the Lease claimstep/claimstep-sweeper (its holderIdentity), if any. */
  sweeper(): Promise<Replica | undefined>;
  /** Waits until one of the replicas holds the Lease. */
  waitSweeper(timeoutMs?: number): Promise<Replica>;
  /** Every replica's log, for a failure message. */
  describe(): string;
  stop(): Promise<string[]>;
}

export const LEASE_NAME = "claimstep-sweeper";

/** The Deployment's replicas (`replicas` of deployment.yaml unless told), each a `claimstep serve`. */
export async function startDeployment(
  e2e: E2E,
  o: { env: Record<string, string>; replicas?: number; prefix?: string },
): Promise<Deployed> {
  const shipped = shippedServer();
  if (shipped.serviceAccountName !== "claimstep")
    throw new Error(`deployment.yaml runs as ${shipped.serviceAccountName}, not the claimstep ServiceAccount`);
  const secret = secretValues();
  const n = o.replicas ?? shipped.replicas;
  const suffix = randomBytes(3).toString("hex");
  const names = Array.from({ length: n }, (_, i) => `${o.prefix ?? "claimstep"}-${suffix}-${i}`);
  const replicas = await Promise.all(names.map((name) => startReplica(e2e, shipped, name, o.env, secret)));
  const env = { ...shipped.env, ...o.env };
  const command = `${n} × claimstep ${shipped.args.join(" ")} (${Object.entries(env)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ")})`;
  const sweeper = async () => {
    const r = await e2e.admin.get("leases", CLAIMSTEP_NAMESPACE, LEASE_NAME);
    const holder: string | undefined = r.status === 200 ? r.body.spec?.holderIdentity : undefined;
    return holder ? replicas.find((p) => holder.startsWith(`${p.name}_`) && p.exit === undefined) : undefined;
  };
  return {
    replicas,
    command,
    sweeper,
    waitSweeper: (timeoutMs = 30_000) =>
      waitFor(sweeper, { timeoutMs, intervalMs: 200, what: "a claimstep serve replica holding the Lease" }),
    describe: () =>
      replicas.map((p) => `--- ${p.name} (${p.exit ?? "running"})\n${p.text.slice(-40).join("\n")}`).join("\n"),
    stop: () => Promise.all(replicas.map((p) => p.stop())),
  };
}

// ---------------------------------------------------------------------------------------------
// the CronJob: `step --all` on a schedule, one run at a time

export interface CronRun {
  startedAt: number;
  endedAt: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CronLoop {
  readonly command: string;
  readonly runs: CronRun[];
  stop(): Promise<void>;
}

/** cronjob.yaml's Job every `periodMs` (its schedule is every two minutes; a loop is the same
 * schedule faster), never two at once (concurrencyPolicy: Forbid: a run that outlasts its slot
 * makes the next start at the slot after it ends), each killed at activeDeadlineSeconds. */
export function startCronLoop(e2e: E2E, o: { periodMs: number }): CronLoop {
  const shipped = shippedCron();
  if (shipped.serviceAccountName !== "claimstep")
    throw new Error(`cronjob.yaml runs as ${shipped.serviceAccountName}, not the claimstep ServiceAccount`);
  if (shipped.concurrencyPolicy !== "Forbid")
    throw new Error(`cronjob.yaml's concurrencyPolicy is ${shipped.concurrencyPolicy}: the loop runs one at a time`);
  const runs: CronRun[] = [];
  let stopped = false;
  let current: ChildProcess | undefined;
  let wake: (() => void) | undefined;
  const once = (n: number) =>
    new Promise<CronRun>((resolve, reject) => {
      const startedAt = Date.now();
      const child = spawn(process.execPath, [join(ROOT, "bin/claimstep.js"), ...shipped.args], {
        cwd: ROOT,
        env: podEnv(e2e, `claimstep-${startedAt}-${n}`, {}),
      });
      current = child;
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      const deadline = setTimeout(() => child.kill("SIGKILL"), shipped.activeDeadlineSeconds * 1000);
      child.on("error", reject);
      child.on("close", (code, signal) => {
        clearTimeout(deadline);
        current = undefined;
        resolve({ startedAt, endedAt: Date.now(), code, signal, stdout, stderr });
      });
    });
  const loop = (async () => {
    for (let n = 0; !stopped; n++) {
      const run = await once(n);
      runs.push(run);
      const slots = Math.max(1, Math.ceil((run.endedAt - run.startedAt) / o.periodMs));
      const next = run.startedAt + slots * o.periodMs;
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, Math.max(0, next - Date.now()));
      });
    }
  })();
  return {
    command: `claimstep ${shipped.args.join(" ")} every ${o.periodMs / 1000} s (cronjob.yaml: "${shipped.schedule}", concurrencyPolicy ${shipped.concurrencyPolicy})`,
    runs,
    async stop() {
      stopped = true;
      wake?.();
      // The Job running now finishes (a CronJob is not stopped mid-run by the next schedule).
      await loop;
      current?.kill("SIGKILL");
    },
  };
}

// ---------------------------------------------------------------------------------------------
// the namespace's StatefulSets, watched

export interface SetSighting {
  at: number;
  name: string;
  type: "ADDED" | "MODIFIED" | "DELETED";
  uid: string;
  deleting: boolean;
  /** claimstep.io/status: phase/reason. */
  status: string | undefined;
}

export interface SetWatch {
  /** Each change of a set's uid, deletion or status, in the order seen. */
  readonly trail: SetSighting[];
  readonly errors: string[];
  /** Called on every event of the watch (after the trail is updated). */
  onEvent(fn: (s: SetSighting, obj: KubeObject) => void): void;
  /** The first time the set with this uid was seen being deleted (or gone). */
  deletedAt(name: string, uid: string): number | undefined;
  /** The first time a set of this name with another uid than `oldUid` was seen. */
  createdAt(name: string, oldUid: string): number | undefined;
  /** One line per sighting of `name`, times relative to `t0`. */
  describe(name: string, t0: number): string;
  stop(): Promise<void>;
}

const statusOf = (o: KubeObject): string | undefined => {
  const raw = o.metadata.annotations?.["claimstep.io/status"];
  if (!raw) return undefined;
  try {
    const s = JSON.parse(raw);
    return `${s.phase}/${s.reason}`;
  } catch {
    return `unparsable ${raw.slice(0, 60)}`;
  }
};

export async function watchSets(e2e: E2E): Promise<SetWatch> {
  const trail: SetSighting[] = [];
  const errors: string[] = [];
  const listeners: ((s: SetSighting, obj: KubeObject) => void)[] = [];
  const last = new Map<string, SetSighting>();
  const informer = new Informer({
    credentials: e2e.info.admin,
    path: `/apis/apps/v1/namespaces/${e2e.namespace}/statefulsets`,
    onError: (m) => errors.push(m),
    onChange: (type, obj) => {
      if (type === "SYNC" || !obj) return;
      const s: SetSighting = {
        at: Date.now(),
        name: obj.metadata.name!,
        type,
        uid: obj.metadata.uid!,
        deleting: type === "DELETED" || Boolean(obj.metadata.deletionTimestamp),
        status: statusOf(obj),
      };
      const prev = last.get(s.name);
      if (!prev || prev.uid !== s.uid || prev.deleting !== s.deleting || prev.status !== s.status || type === "DELETED")
        trail.push(s);
      last.set(s.name, s);
      for (const fn of listeners) fn(s, obj);
    },
  });
  await informer.synced;
  return {
    trail,
    errors,
    onEvent: (fn) => void listeners.push(fn),
    deletedAt: (name, uid) => trail.find((s) => s.name === name && s.uid === uid && s.deleting)?.at,
    createdAt: (name, oldUid) => trail.find((s) => s.name === name && s.uid !== oldUid && !s.deleting)?.at,
    describe: (name, t0) =>
      trail
        .filter((s) => s.name === name)
        .map(
          (s) =>
            `  +${((s.at - t0) / 1000).toFixed(1)} s ${s.type} uid ${s.uid.slice(0, 8)}${s.deleting ? (s.type === "DELETED" ? " gone" : " being deleted") : ""} status ${s.status ?? "-"}`,
        )
        .join("\n"),
    stop: () => informer.stop(),
  };
}
