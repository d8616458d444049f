// What every command shares: where it acts (a Target), its flags and output, exit codes, and the
// one-line renderings of a step.
import { parseArgs } from "node:util";
import YAML from "yaml";
import type { MetricsReader, StateReader, Writers } from "../../core/ports.js";
import type { KubeClientOptions } from "../../adapters/kube/client.js";
import type { Decision, SetRef } from "../../core/types.js";
import { outcomeJSON } from "../outcome.js";
import type { StepResult } from "../step.js";

export const EXIT = { ok: 0, error: 1, blocked: 2 } as const;

/** Where a command acts: a real cluster or the simulated one. */
export interface Target {
  label: string;
  /** The namespace when none is given. */
  namespace: string;
  reader: StateReader;
  /** The claim writer (per set), and the status writer that also writes the desired templates (`set`). */
  writers: Writers;
  /** Autogrow's metrics (CLAIMSTEP_PROMETHEUS_URL; the simulated cluster's own Prometheus); absent: none. */
  metrics?: MetricsReader;
  listOptedIn(namespace: string | undefined): Promise<SetRef[]>;
  now(): Date;
  /**
   * Wait between the steps of `run` (and the reads of `status --watch`): a real sleep, or virtual
   * time on the simulated cluster. A real sleep ends early when `signal` aborts (stdout closed).
   */
  pause(ms: number, signal?: AbortSignal): Promise<void>;
  /** Real time to leave each frame of the live view on screen when `pause` takes none. */
  frameMs?: number;
  /** Keep what the command did, once it ended (the simulated cluster's state file). */
  save?(): Promise<void>;
  /** A simulated scenario's summary and lesson, told around a timeline. */
  story?: { name: string; summary: string; lesson: string };
  /**
   * Plain requests to the API server, its answer's headers included (`claimstep apply` shows the
   * Warning headers): the server URL, a fetch, the headers of every request (credentials).
   */
  api?: () => Pick<KubeClientOptions, "server" | "fetch" | "headers">;
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

export class UsageError extends Error {
  override readonly name = "UsageError";
}

export const OPTIONS = {
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
  "sim-state": { type: "string" },
  watch: { type: "boolean", short: "w" },
  "allow-smaller": { type: "boolean" },
  "hold-pods": { type: "boolean" },
  "no-color": { type: "boolean" },
  filename: { type: "string", short: "f" },
} as const;

export type Flags = ReturnType<typeof parse>["values"];

export const parse = (argv: string[]) => parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });

/** `500ms`, `5s`, `2m`, `1h`, or plain seconds. */
export function parseDuration(s: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(s.trim());
  if (!m) throw new UsageError(`--${flag} ${JSON.stringify(s)}: expected a duration such as 500ms, 5s, 2m or 1h`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? "s") as "ms" | "s" | "m" | "h"];
  return Math.round(Number(m[1]) * unit);
}

export const exitOf = (d: Decision): number => (d.phase === "Blocked" ? EXIT.blocked : EXIT.ok);

export const resultJSON = (r: StepResult) => ({ decision: r.decision, outcome: outcomeJSON(r), writer: r.writer });

export const outcomeText = (r: StepResult): string => {
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
export const plainLine = (at: Date, r: StepResult): string => {
  const d = r.decision;
  const c = d.status.counts;
  return `${at.toISOString()}  ${d.ref.namespace}/${d.ref.name}  ${d.phase}  ${d.reason}  ${c.updated}/${c.total} updated  ${d.message}  (${outcomeText(r)})`;
};

export function refOf(flags: Flags, target: Target, name: string | undefined, what: string): SetRef {
  if (!name) throw new UsageError(`${what}: name the StatefulSet, e.g. claimstep ${what} web -n db`);
  return { namespace: flags.namespace ?? target.namespace, name };
}

/** `-o`: which formats a command offers is in its spec (functions/cli/commands.ts). */
export type OutputFormat = "text" | "json" | "yaml" | "wide" | "timeline";

export interface Context {
  flags: Flags;
  args: string[];
  io: CliIO;
  /** `-o json` or `-o yaml`: print objects with `emit`, not text. */
  json: boolean;
  format: OutputFormat;
  /** `-o timeline` (run only). */
  timeline: boolean;
  /** Colour phases: stdout is a terminal, and neither NO_COLOR nor --no-color says otherwise. */
  color: boolean;
  /** Aborts when stdout is gone (a closed pipe): long-running commands stop. */
  signal: AbortSignal;
  target: () => Promise<Target>;
}

export const print = (io: CliIO, s: string) => io.stdout.write(s.endsWith("\n") ? s : `${s}\n`);

/** One object as `-o json` (one line) or `-o yaml`; `stream` (one object per step): YAML documents separated by `---`. */
export function emit(ctx: Pick<Context, "io" | "format">, value: unknown, stream = false): void {
  if (ctx.format === "yaml") print(ctx.io, `${stream ? "---\n" : ""}${YAML.stringify(value, { lineWidth: 0 })}`);
  else print(ctx.io, JSON.stringify(value));
}
