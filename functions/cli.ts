// `claimstep`: plan, step, run, status, set, serve and relay from a terminal or a CI job, against
// a cluster (kubeconfig, like kubectl) or the embedded simulated cluster (`--cluster sim`).
// Exit codes: 0 done or progressing, 2 blocked, 1 error.
import { parseArgs } from "node:util";
import type { StateReader, Writers } from "../core/ports.js";
import { renderDecision } from "../core/render.js";
import { Keys, type Decision, type SetRef, type StatusRecord } from "../core/types.js";
import { ApiError } from "../adapters/api-error.js";
import { outcomeJSON } from "./app.js";
import { claimEdit } from "../core/desired.js";
import { isOptedIn } from "../core/statefulset.js";
import { SCENARIOS, SET, scenarioName } from "../adapters/sim/scenarios.js";
import { runStep, type StepResult } from "./step.js";
import { sweep } from "./sweep.js";
import { Timeline } from "./timeline.js";

export const EXIT = { ok: 0, error: 1, blocked: 2 } as const;

export const HELP = `claimstep — roll out StatefulSet volumeClaimTemplates changes to existing PVCs, one ordinal at a time

Usage:
  claimstep plan   <statefulset>                       show the next step and the per-ordinal table (no writes)
  claimstep step   <statefulset> [--dry-run]           run one step
  claimstep step   --all [-n <ns> | -A]                one step of every opted-in set (for a CronJob)
  claimstep run    <statefulset> [--interval 5s] [--timeout 30m]
                                                       step until Complete or Blocked, showing progress
  claimstep status [<statefulset>] [-A]                what claimstep last recorded (all opted-in sets without a name)
  claimstep set    <statefulset> <claim> [--storage 20Gi] [--vac gold]
                                                       write the desired claim template and opt the set in
  claimstep serve  [--port 8080] [--host 127.0.0.1]   the HTTP app on Node (env: CLAIMSTEP_API_TOKEN …); --host 0.0.0.0
                                                       (the container image's default) listens on every interface
  claimstep relay  --url https://claimstep.example.com/v1/relay
                                                       watch opted-in sets and POST signed events (env: CLAIMSTEP_WEBHOOK_SECRET)

Options:
  -n, --namespace <ns>     namespace (default: the context's, else "default")
      --context <name>     kubeconfig context
      --kubeconfig <path>  kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)
      --cluster sim[:<scenario>]
                           use the embedded simulated cluster instead (StatefulSet ${SET.namespace}/${SET.name}; scenarios:
                           ${Object.keys(SCENARIOS).join(", ")})
      --seed <n>           with --cluster sim: seed of the simulation (uids, injected faults); default 1
  -A, --all-namespaces     status, step --all: every namespace
      --all                step: every opted-in set of the namespace
  -o, --output text|json|timeline
                           output format (json: one object; for run, one object per step;
                           timeline, run only: one line per invocation, as npm start shows)
  -h, --help               this help

Exit codes: 0 done or progressing, 2 blocked (the reason is printed), 1 error.

Examples:
  claimstep plan web -n db
  claimstep set web data --storage 20Gi -n db && claimstep run web -n db
  claimstep run web --cluster sim                  # a whole rollout on the simulated cluster
  claimstep run web --cluster sim:blocked; echo $?  # 2: the class does not allow expansion
  claimstep run web --cluster sim:flaky-api --seed 7 -o timeline
  claimstep step web -n db -o json | jq .decision.phase
  claimstep status -A
`;

/** Where a command acts: a real cluster or the simulated one. */
export interface Target {
  label: string;
  /** The namespace when none is given. */
  namespace: string;
  reader: StateReader;
  /** The claim writer (per set), and the status writer that also writes the desired templates (`set`). */
  writers: Writers;
  listOptedIn(namespace: string | undefined): Promise<SetRef[]>;
  now(): Date;
  /** Wait between the steps of `run`: a real sleep, or virtual time on the simulated cluster. */
  pause(ms: number): Promise<void>;
  /** Real time to leave each frame of the live view on screen when `pause` takes none. */
  frameMs?: number;
  /** A simulated scenario's summary and lesson, told around a timeline. */
  story?: { name: string; summary: string; lesson: string };
}

export interface Output {
  write(s: string): void;
  isTTY?: boolean;
  /** Terminal size, when a terminal. */
  rows?: number;
  columns?: number;
}

export interface CliIO {
  stdout: Output;
  stderr: Output;
  env: Record<string, string | undefined>;
}

class UsageError extends Error {
  override readonly name = "UsageError";
}

const OPTIONS = {
  namespace: { type: "string", short: "n" },
  context: { type: "string" },
  kubeconfig: { type: "string" },
  cluster: { type: "string" },
  "all-namespaces": { type: "boolean", short: "A" },
  all: { type: "boolean" },
  output: { type: "string", short: "o" },
  help: { type: "boolean", short: "h" },
  "dry-run": { type: "boolean" },
  interval: { type: "string" },
  timeout: { type: "string" },
  storage: { type: "string" },
  vac: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  url: { type: "string" },
  seed: { type: "string" },
} as const;

export type Flags = ReturnType<typeof parse>["values"];

const parse = (argv: string[]) => parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });

/** `500ms`, `5s`, `2m`, `1h`, or plain seconds. */
export function parseDuration(s: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(s.trim());
  if (!m) throw new UsageError(`--${flag} ${JSON.stringify(s)}: expected a duration such as 500ms, 5s, 2m or 1h`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? "s") as "ms" | "s" | "m" | "h"];
  return Math.round(Number(m[1]) * unit);
}

const exitOf = (d: Decision): number => (d.phase === "Blocked" ? EXIT.blocked : EXIT.ok);

const resultJSON = (r: StepResult) => ({ decision: r.decision, outcome: outcomeJSON(r), writer: r.writer });

const outcomeText = (r: StepResult): string => {
  const o = r.outcome;
  switch (o.kind) {
    case "none":
      return "nothing to apply";
    case "dry-run":
      return "dry run: nothing written";
    case "applied":
      return o.detail ?? "applied";
    case "proposed":
      return `proposed: ${o.detail}`;
    case "refused":
      return `refused${o.error ? `: ${o.error.message}` : ""}`;
    case "retry":
      return `will retry${o.retryAfterSeconds ? ` in ${o.retryAfterSeconds}s` : ""}: ${o.error.message}`;
  }
};

/** One line per step for logs and pipes. */
const plainLine = (at: Date, r: StepResult): string => {
  const d = r.decision;
  const c = d.status.counts;
  return `${at.toISOString()}  ${d.ref.namespace}/${d.ref.name}  ${d.phase}  ${d.reason}  ${c.updated}/${c.total} updated  ${d.message}  (${outcomeText(r)})`;
};

function refOf(flags: Flags, target: Target, name: string | undefined, what: string): SetRef {
  if (!name) throw new UsageError(`${what}: name the StatefulSet, e.g. claimstep ${what} web -n db`);
  return { namespace: flags.namespace ?? target.namespace, name };
}

/** Redraws a block of lines in place on a terminal. */
class LiveView {
  private lines = 0;
  constructor(private readonly out: Output) {}

  draw(text: string): void {
    // Lines longer than the terminal is wide take several rows.
    const width = this.out.columns ?? Infinity;
    const height = text.split("\n").reduce((rows, line) => rows + Math.max(1, Math.ceil(line.length / width)), 0);
    // Moving up works only within the screen: a taller view is redrawn from the top instead.
    const tall = this.out.rows !== undefined && Math.max(height, this.lines) >= this.out.rows;
    const clear = tall ? "\x1b[H\x1b[2J" : this.lines ? `\x1b[${this.lines}A\x1b[0J` : "";
    this.out.write(`${clear}${text}\n`);
    this.lines = height;
  }
}

interface Context {
  flags: Flags;
  args: string[];
  io: CliIO;
  json: boolean;
  /** `-o timeline` (run only). */
  timeline: boolean;
  target: () => Promise<Target>;
}

const print = (io: CliIO, s: string) => io.stdout.write(s.endsWith("\n") ? s : `${s}\n`);

async function plan(ctx: Context, dryRun = true): Promise<number> {
  const target = await ctx.target();
  const ref = refOf(ctx.flags, target, ctx.args[0], dryRun ? "plan" : "step");
  const r = await runStep({ reader: target.reader, writers: target.writers, ref, now: target.now(), dryRun });
  if (ctx.json) print(ctx.io, JSON.stringify(resultJSON(r)));
  else print(ctx.io, `${renderDecision(r.decision)}\n\n${outcomeText(r)}`);
  return exitOf(r.decision);
}

async function run(ctx: Context): Promise<number> {
  const target = await ctx.target();
  const ref = refOf(ctx.flags, target, ctx.args[0], "run");
  const interval = parseDuration(ctx.flags.interval ?? "5s", "interval");
  const timeout = ctx.flags.timeout ? parseDuration(ctx.flags.timeout, "timeout") : undefined;
  const started = target.now().getTime();
  const realStart = Date.now();
  const timeline = ctx.timeline ? new Timeline((line) => print(ctx.io, line), started) : undefined;
  const live = !ctx.json && !timeline && ctx.io.stdout.isTTY ? new LiveView(ctx.io.stdout) : undefined;
  if (timeline && target.story) {
    print(ctx.io, `claimstep run · ${target.label}: ${target.story.summary}`);
    print(ctx.io, `one invocation every ${interval / 1000} ${target.frameMs !== undefined ? "virtual " : ""}seconds\n`);
  }
  let previous = "";
  let last: Decision | undefined;
  const finish = (code: number): number => {
    if (!timeline) return code;
    timeline.end(last, target.now().getTime(), Date.now() - realStart);
    if (target.story) print(ctx.io, `${target.story.lesson}.`);
    return code;
  };
  for (let n = 1; ; n++) {
    const now = target.now();
    let r: StepResult;
    try {
      r = await runStep({ reader: target.reader, writers: target.writers, ref, now });
    } catch (err) {
      // The set could not be read (429, 5xx, timeout after the client's retries): nothing was
      // written, so the run goes on; anything else (not found, permissions) ends it.
      if (!(err instanceof ApiError && err.isTransient)) throw err;
      if (timeline) timeline.failed(now.getTime(), n, err);
      else if (ctx.json) print(ctx.io, JSON.stringify({ step: n, at: now.toISOString(), error: err.message }));
      else ctx.io.stderr.write(`claimstep: ${ref.namespace}/${ref.name}: could not load the set (${err.message}); retrying\n`);
      await target.pause(Math.max(interval, (err.retryAfterSeconds ?? 0) * 1000));
      continue;
    }
    const d = r.decision;
    last = d;
    const elapsed = Math.round((now.getTime() - started) / 1000);
    if (timeline) {
      timeline.step(now.getTime(), n, r);
    } else if (ctx.json) {
      print(ctx.io, JSON.stringify({ step: n, at: now.toISOString(), ...resultJSON(r) }));
    } else if (live) {
      live.draw(`${renderDecision(d)}\n\nstep ${n} · ${elapsed}s · ${target.label} · ${outcomeText(r)}`);
    } else {
      const key = `${d.phase}|${d.reason}|${d.message}|${r.outcome.kind}`;
      if (key !== previous || r.outcome.kind === "applied") print(ctx.io, plainLine(now, r));
      previous = key;
    }
    if (d.phase === "Complete" || d.phase === "Blocked" || d.phase === "Idle") {
      if (!ctx.json && !live && !timeline) print(ctx.io, `\n${renderDecision(d)}`);
      const code = finish(exitOf(d));
      if (d.phase === "Blocked" && !ctx.json) ctx.io.stderr.write(`claimstep: ${d.ref.namespace}/${d.ref.name} is blocked (${d.reason}): ${d.message}\n`);
      return code;
    }
    if (timeout !== undefined && target.now().getTime() - started >= timeout) {
      const code = finish(EXIT.error);
      ctx.io.stderr.write(`claimstep: ${ref.namespace}/${ref.name} is still ${d.phase} (${d.reason}) after ${ctx.flags.timeout}: ${d.message}\n`);
      return code;
    }
    if (live && target.frameMs) await new Promise((resolve) => setTimeout(resolve, target.frameMs));
    // The server's Retry-After after a transient failure; else the decision's requeueAfter, with
    // --interval as the default and the cap.
    const wait =
      r.outcome.kind === "retry" && r.outcome.retryAfterSeconds
        ? r.outcome.retryAfterSeconds * 1000
        : d.requeueAfter !== undefined
          ? Math.min(d.requeueAfter * 1000, interval)
          : interval;
    await target.pause(wait);
  }
}

const parseStatus = (raw: string | undefined): StatusRecord | null => {
  if (!raw) return null;
  try {
    return JSON.parse(raw) as StatusRecord;
  } catch {
    return null;
  }
};

async function status(ctx: Context): Promise<number> {
  const target = await ctx.target();
  const refs = ctx.args[0]
    ? [refOf(ctx.flags, target, ctx.args[0], "status")]
    : await target.listOptedIn(ctx.flags["all-namespaces"] ? undefined : (ctx.flags.namespace ?? target.namespace));
  const rows = [];
  for (const ref of refs) {
    const set = (await target.reader.load(ref)).statefulSet;
    const a = set.metadata.annotations ?? {};
    rows.push({
      ref,
      strategy: a[Keys.strategy] ?? "OnClaimDelete",
      updateRevision: a[Keys.updateRevision] ?? null,
      currentRevision: a[Keys.currentRevision] ?? null,
      status: parseStatus(a[Keys.status]),
    });
  }
  if (ctx.json) {
    print(ctx.io, JSON.stringify(ctx.args[0] ? rows[0] : rows));
  } else if (rows.length === 0) {
    print(ctx.io, "no opted-in StatefulSets (annotate one with claimstep.io/volume-claim-update-strategy: InPlace, or use claimstep set)");
  } else {
    const table = [["NAMESPACE", "NAME", "PHASE", "REASON", "UPDATED", "REVISION", "OBSERVED", "MESSAGE"]];
    for (const r of rows) {
      const s = r.status;
      table.push([
        r.ref.namespace,
        r.ref.name,
        s?.phase ?? (r.strategy === "InPlace" ? "-" : "Idle"),
        s?.reason ?? "-",
        s ? `${s.counts.updated}/${s.counts.total}` : "-",
        r.updateRevision ?? "-",
        s?.observedAt ?? "-",
        s?.message ?? (r.strategy === "InPlace" ? "no step yet" : `not opted in (${r.strategy})`),
      ]);
    }
    const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
    print(ctx.io, table.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")).join("\n"));
  }
  return rows.some((r) => r.status?.phase === "Blocked") ? EXIT.blocked : EXIT.ok;
}

async function set(ctx: Context): Promise<number> {
  const target = await ctx.target();
  const ref = refOf(ctx.flags, target, ctx.args[0], "set");
  const claim = ctx.args[1];
  if (!claim) throw new UsageError("set: name the claim template too, e.g. claimstep set web data --storage 20Gi");
  const snapshot = await target.reader.load(ref);
  const change = claimEdit(snapshot.statefulSet, claim, {
    ...(ctx.flags.storage !== undefined ? { storage: ctx.flags.storage } : {}),
    ...(ctx.flags.vac !== undefined ? { volumeAttributesClassName: ctx.flags.vac } : {}),
  });
  if (!change.ok) throw new UsageError(`set: ${change.message}`);
  if (change.changed) await target.writers.status.annotateSet(ref, change.annotations, snapshot.statefulSet.metadata.resourceVersion);
  const next = await runStep({ reader: target.reader, writers: target.writers, ref, now: target.now(), dryRun: true });
  if (ctx.json) {
    print(ctx.io, JSON.stringify({ ref, changed: change.changed, revision: change.revision, templates: change.templates, plan: resultJSON(next) }));
  } else {
    const t = change.templates.find((x) => x.metadata.name === claim)!;
    const vac = t.spec.volumeAttributesClassName ? `, volumeAttributesClassName ${t.spec.volumeAttributesClassName}` : "";
    print(
      ctx.io,
      `${ref.namespace}/${ref.name}: ${change.changed ? "desired" : "already desires"} ${claim} storage ${t.spec.resources?.requests?.storage}${vac} (revision ${change.revision}); opted in (InPlace)\n\n${renderDecision(next.decision)}`,
    );
  }
  // Written either way; a plan that is already Blocked (e.g. an unknown VAC) says so in the exit code.
  return exitOf(next.decision);
}

async function serve(ctx: Context): Promise<number> {
  const { serveFromEnv } = await import("./server.js");
  return serveFromEnv({
    env: ctx.io.env,
    ...(ctx.flags.port ? { port: Number(ctx.flags.port) } : {}),
    ...(ctx.flags.host ? { host: ctx.flags.host } : {}),
    ...(ctx.flags.kubeconfig ? { kubeconfig: ctx.flags.kubeconfig } : {}),
    ...(ctx.flags.context ? { context: ctx.flags.context } : {}),
    ...(ctx.flags.cluster ? { cluster: ctx.flags.cluster } : {}),
  });
}

async function relay(ctx: Context): Promise<number> {
  const url = ctx.flags.url ?? ctx.io.env.CLAIMSTEP_RELAY_URL;
  if (!url) throw new UsageError("relay: give --url (the app's /v1/relay endpoint) or set CLAIMSTEP_RELAY_URL");
  if (ctx.flags.cluster) throw new UsageError("relay: watches need a real cluster; --cluster sim is not supported here");
  const { relayFromEnv } = await import("./relay/index.js");
  return relayFromEnv({
    url,
    env: ctx.io.env,
    ...(ctx.flags.namespace ? { namespaces: [ctx.flags.namespace] } : {}),
    ...(ctx.flags.kubeconfig ? { kubeconfig: ctx.flags.kubeconfig } : {}),
    ...(ctx.flags.context ? { context: ctx.flags.context } : {}),
  });
}

/** `step --all`: one step of every opted-in set; exit 2 when one is blocked, 1 when one failed. */
async function stepAll(ctx: Context): Promise<number> {
  if (ctx.args[0]) throw new UsageError("step --all steps every opted-in set: give no StatefulSet name");
  const target = await ctx.target();
  const namespaces = ctx.flags["all-namespaces"] ? [] : [ctx.flags.namespace ?? target.namespace];
  const dryRun = ctx.flags["dry-run"] ?? false;
  const report = await sweep({
    listOptedIn: (ns) => target.listOptedIn(ns),
    namespaces,
    step: (ref) => runStep({ reader: target.reader, writers: target.writers, ref, now: target.now(), dryRun }),
    tick: 0,
  });
  if (ctx.json) print(ctx.io, JSON.stringify(report));
  else if (report.found === 0) print(ctx.io, "no opted-in StatefulSets");
  else {
    for (const e of report.stepped) {
      print(ctx.io, "error" in e ? `${e.ref.namespace}/${e.ref.name}  error: ${e.error}` : `${e.ref.namespace}/${e.ref.name}  ${e.phase}  ${e.reason}  (${e.outcome})`);
    }
  }
  if (report.stepped.some((e) => "error" in e)) return EXIT.error;
  return report.stepped.some((e) => "phase" in e && e.phase === "Blocked") ? EXIT.blocked : EXIT.ok;
}

const COMMANDS: Record<string, (ctx: Context) => Promise<number>> = {
  plan: (ctx) => plan(ctx, true),
  step: (ctx) => (ctx.flags.all ? stepAll(ctx) : plan(ctx, ctx.flags["dry-run"] ?? false)),
  run,
  status,
  set,
  serve,
  relay,
};

/** The simulated cluster of a scenario as a Target. */
export async function simTarget(cluster: string, seed?: string): Promise<Target> {
  const name = scenarioName(cluster);
  const seedValue = seed === undefined ? 1 : Number(seed);
  if (!Number.isSafeInteger(seedValue)) throw new UsageError(`--seed ${JSON.stringify(seed)}: expected an integer`);
  const scenario = SCENARIOS[name]!;
  const sim = await scenario.build(seedValue);
  return {
    label: `simulated cluster (${name})`,
    story: { name, summary: scenario.summary, lesson: scenario.lesson },
    namespace: "default",
    reader: sim.reader,
    writers: sim.writers,
    async listOptedIn(namespace) {
      const list = await sim.admin.list("statefulsets", namespace);
      return list.items
        .filter((s: any) => isOptedIn(s))
        .map((s: any) => ({ namespace: s.metadata.namespace, name: s.metadata.name }));
    },
    now: () => sim.now(),
    pause: async (ms) => sim.advance(ms),
    // Virtual time passes at once: slow the terminal view down enough to watch the rollout.
    frameMs: 120,
  };
}

async function connect(flags: Flags, env: CliIO["env"]): Promise<Target> {
  if (flags.cluster) return simTarget(flags.cluster, flags.seed);
  if (flags.seed !== undefined) throw new UsageError("--seed applies to the simulated cluster only (--cluster sim[:<scenario>])");
  const { kubeTarget } = await import("./kube-target.js");
  return kubeTarget({
    env,
    ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
    ...(flags.context ? { context: flags.context } : {}),
  });
}

const describeError = (err: unknown): string => {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
};

/** `connectTo` replaces how a Target is reached (tests pass a simulated cluster they keep). */
export async function main(argv: string[], io: CliIO, connectTo: (flags: Flags, env: CliIO["env"]) => Promise<Target> = connect): Promise<number> {
  let parsed;
  try {
    parsed = parse(argv);
  } catch (err) {
    io.stderr.write(`claimstep: ${(err as Error).message}\nRun claimstep --help for usage.\n`);
    return EXIT.error;
  }
  const { values: flags, positionals } = parsed;
  const [command, ...args] = positionals;
  if (flags.help || !command || command === "help") {
    io.stdout.write(HELP);
    return command || flags.help ? EXIT.ok : EXIT.error;
  }
  const handler = COMMANDS[command];
  if (!handler) {
    io.stderr.write(`claimstep: unknown command ${JSON.stringify(command)}; commands: ${Object.keys(COMMANDS).join(", ")}\n`);
    return EXIT.error;
  }
  const output = flags.output ?? "text";
  if (output !== "text" && output !== "json" && !(output === "timeline" && command === "run")) {
    io.stderr.write(`claimstep: --output ${JSON.stringify(output)}: use text or json${command === "run" ? " or timeline" : ""}\n`);
    return EXIT.error;
  }
  let target: Promise<Target> | undefined;
  try {
    return await handler({ flags, args, io, json: output === "json", timeline: output === "timeline", target: () => (target ??= connectTo(flags, io.env)) });
  } catch (err) {
    io.stderr.write(`claimstep: ${describeError(err)}\n`);
    return EXIT.error;
  }
}
