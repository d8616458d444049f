// What every command shares: where it acts (a Target), its flags and output, exit codes, and the
// one-line renderings of a step.
import YAML from "yaml";
import type { KubeClientOptions } from "../../adapters/kube/client.js";
import type { StatefulSet } from "../../core/kube/index.js";
import type { MetricsReader, StateReader, Writers } from "../../core/ports.js";
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
  /** The opted-in sets of a namespace (undefined: of all), those matching `labelSelector` (`-l`) when given. */
  listOptedIn(namespace: string | undefined, labelSelector?: string): Promise<SetRef[]>;
  /** The names of every StatefulSet of a namespace, opted in or not (the completion of set names). */
  listSets?(namespace: string, signal?: AbortSignal): Promise<string[]>;
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
  story?: {
    name: string;
    summary: string;
    lesson: string;
    /** The set as the scenario sets it up: the story is told only by a run that starts from it. */
    initial?: () => Promise<StatefulSet>;
  };
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
  /**
   * The file the shell or kubectl ran (bin/claimstep.js passes argv[1]): `kubectl-claimstep` is the
   * kubectl plugin, whose help and suggested commands say `kubectl claimstep`;
   * `kubectl_complete-claimstep` its completion helper (functions/cli/program.ts).
   */
  invokedAs?: string;
  /** SIGINT and SIGTERM (bin/claimstep.js passes the process's): `run` and `finalize` stop, say where the set stands and exit 130 or 143. */
  interrupts?: Interrupts;
}

/** The signals that stop a command early, as a shell sends them (Ctrl-C, kill). */
export type InterruptSignal = "SIGINT" | "SIGTERM";

/** The exit code of a command a signal stopped, as shells report one it killed (128 + the signal's number). */
export const INTERRUPT_EXIT: Record<InterruptSignal, number> = { SIGINT: 130, SIGTERM: 143 };

/** Where interruptions come from: `on` subscribes, the function it returns unsubscribes. */
export interface Interrupts {
  on(listener: (signal: InterruptSignal) => void): () => void;
}

/** The signal that aborted `signal` (ctx.signal), when an interruption did (not a closed stdout). */
export const interruptOf = (signal: AbortSignal): InterruptSignal | undefined =>
  signal.aborted && (signal.reason === "SIGINT" || signal.reason === "SIGTERM") ? signal.reason : undefined;

export class UsageError extends Error {
  override readonly name = "UsageError";
}

export const OPTIONS = {
  namespace: { type: "string", short: "n" },
  context: { type: "string" },
  kubeconfig: { type: "string" },
  cluster: { type: "string" },
  "all-namespaces": { type: "boolean", short: "A" },
  selector: { type: "string", short: "l" },
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
  // `set <sts> <template> --add/--remove` (issue 27, docs/templates.md).
  add: { type: "boolean" },
  remove: { type: "boolean" },
  "storage-class": { type: "string" },
  "access-mode": { type: "string" },
  "mount-path": { type: "string" },
  container: { type: "string", short: "c" },
} as const;

type OptionName = keyof typeof OPTIONS;
/** The flags given: a string flag's value, a boolean flag's true or false (`--all=false`). */
export type Flags = { -readonly [K in OptionName]?: (typeof OPTIONS)[K]["type"] extends "string" ? string : boolean };

/** A command line that does not parse, worded as kubectl's flag parser (pflag) words it. */
export class FlagError extends UsageError {}

const SHORT: Record<string, OptionName> = Object.fromEntries(
  (Object.entries(OPTIONS) as [OptionName, { short?: string }][])
    .filter(([, o]) => o.short)
    .map(([name, o]) => [o.short!, name]),
);

/** Go's strconv.ParseBool, as pflag reads `--flag=value` of a boolean flag. */
function boolOf(name: OptionName, value: string): boolean {
  if (["1", "t", "T", "true", "TRUE", "True"].includes(value)) return true;
  if (["0", "f", "F", "false", "FALSE", "False"].includes(value)) return false;
  const short = (OPTIONS[name] as { short?: string }).short;
  throw new FlagError(
    `invalid argument ${JSON.stringify(value)} for "${short ? `-${short}, ` : ""}--${name}" flag: strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`,
  );
}

/**
 * The command line as kubectl's flag parser (pflag) reads it: `--flag value`, `--flag=value`,
 * `-f value`, `-f=value`, `-fvalue`, a boolean as `-A`, `-A=true` or `--all=false`, a value that
 * starts with '-' (`--storage -5Gi` is the flag's value, as in kubectl), `--` ends the flags.
 * Errors (FlagError) carry pflag's words; `lenient` skips them (to find the command of a bad line).
 */
export function parse(argv: readonly string[], lenient = false): { values: Flags; positionals: string[] } {
  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  const fail = (message: string) => {
    if (!lenient) throw new FlagError(message);
  };
  const set = (name: OptionName, value: string | true) => {
    if (OPTIONS[name].type === "boolean") {
      try {
        values[name] = value === true ? true : boolOf(name, value);
      } catch (err) {
        fail((err as Error).message);
      }
    } else values[name] = value as string;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = (eq < 0 ? arg.slice(2) : arg.slice(2, eq)) as OptionName;
      if (!Object.hasOwn(OPTIONS, name)) {
        fail(`unknown flag: --${name}`);
        continue;
      }
      if (eq >= 0) set(name, arg.slice(eq + 1));
      else if (OPTIONS[name].type === "boolean") set(name, true);
      else if (i + 1 < argv.length) set(name, argv[++i]!);
      else fail(`flag needs an argument: --${name}`);
      continue;
    }
    if (arg.length < 2 || !arg.startsWith("-")) {
      positionals.push(arg);
      continue;
    }
    // One or more shorthands: -A, -An db, -ojson, -o=json, -A=true.
    for (let j = 1; j < arg.length; j++) {
      const c = arg[j]!;
      const rest = arg.slice(j);
      const name = SHORT[c];
      if (!name) {
        fail(`unknown shorthand flag: '${c}' in -${rest}`);
        break;
      }
      if (arg[j + 1] === "=") {
        set(name, arg.slice(j + 2));
        break;
      }
      if (OPTIONS[name].type === "boolean") {
        set(name, true);
        continue;
      }
      if (j + 1 < arg.length) set(name, arg.slice(j + 1));
      else if (i + 1 < argv.length) set(name, argv[++i]!);
      else fail(`flag needs an argument: '${c}' in -${rest}`);
      break;
    }
  }
  return { values: values as Flags, positionals };
}

const DURATION_UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * A duration as Go (and so kubectl) writes it: `500ms`, `5s`, `2m`, `1h`, `1m30s`, `1h2m3.5s`
 * (units ns, us, ms, s, m, h); also plain seconds (`30`). Never negative. In milliseconds,
 * rounded up (a duration that is not zero never becomes zero).
 */
export function parseDuration(s: string, flag: string): number {
  const text = s.trim();
  const refuse = (why: string) => new UsageError(`--${flag} ${JSON.stringify(s)}: ${why}`);
  if (text.startsWith("-")) throw refuse("a duration cannot be negative");
  if (/^\d+(?:\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let ms = 0;
  let at = 0;
  while (at < text.length) {
    part.lastIndex = at;
    const m = part.exec(text);
    if (!m) at = -1;
    if (!m) break;
    ms += Number(m[1]) * DURATION_UNITS[m[2]!]!;
    at = part.lastIndex;
  }
  if (!text || at !== text.length) throw refuse("expected a duration such as 500ms, 5s, 2m, 1h or 1m30s");
  return Math.ceil(ms - 1e-9);
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

/** One line per step for logs and pipes (no `0/0 updated` while the set does not exist, mid re-create). */
export const plainLine = (at: Date, r: StepResult): string => {
  const d = r.decision;
  const c = d.status.counts;
  const progress = c.total ? `  ${c.updated}/${c.total} updated` : "";
  return `${at.toISOString()}  ${d.ref.namespace}/${d.ref.name}  ${d.phase}  ${d.reason}${progress}  ${d.message}  (${outcomeText(r)})`;
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
  /**
   * Aborts when stdout is gone (a closed pipe), or, for `run` and `finalize`, on SIGINT/SIGTERM
   * (its reason is then the signal's name: interruptOf): long-running commands stop.
   */
  signal: AbortSignal;
  /** The cluster; `readOnly`: the command only reads (the simulated cluster's file is neither locked nor saved). */
  target: (opts?: TargetOptions) => Promise<Target>;
}

/** How a command reaches its Target (cli.ts passes it on to the connection). */
export interface TargetOptions {
  readOnly?: boolean;
  /** The command line's command and objects, e.g. `run web` (named in the simulated cluster's lock). */
  command?: string;
}

export const print = (io: CliIO, s: string) => io.stdout.write(s.endsWith("\n") ? s : `${s}\n`);

/** One object as `-o json` (one line) or `-o yaml`; `stream` (one object per step): YAML documents separated by `---`. */
export function emit(ctx: Pick<Context, "io" | "format">, value: unknown, stream = false): void {
  if (ctx.format === "yaml") print(ctx.io, `${stream ? "---\n" : ""}${YAML.stringify(value, { lineWidth: 0 })}`);
  else print(ctx.io, JSON.stringify(value));
}
