// `claimstep`: plan, step, run, status, set, serve and relay from a terminal or a CI job, against
// a cluster (kubeconfig, like kubectl) or the embedded simulated cluster (`--cluster sim`).
// Exit codes: 0 done or progressing, 2 blocked, 1 error. One file per command in functions/cli/.

import { colorEnabled } from "./cli/color.js";
import { misuse, objectArgs, SPECS, suggestionsFor, usageOf } from "./cli/commands.js";
import type { Context } from "./cli/context.js";
import { EXIT, INTERRUPT_EXIT } from "./cli/exit-codes.js";
import { FlagError, type Flags, parse, UsageError } from "./cli/flags.js";
import { helpOf } from "./cli/help.js";
import type { CliIO, Output, OutputFormat } from "./cli/io.js";
import { asProgram, invocationOf, type Program, programOf } from "./cli/program.js";
import type { InterruptSignal, Interrupts } from "./cli/signals.js";
import type { Target, TargetOptions } from "./cli/target.js";

export { parseDuration } from "./cli/durations.js";
export { HELP } from "./cli/help.js";
/** A fresh in-memory simulated cluster as a Target (serve --cluster sim; tests). */
export const simTarget: typeof import("./cli/sim-target.js").simTarget = async (...args) =>
  (await import("./cli/sim-target.js")).simTarget(...args);
export type { Flags } from "./cli/flags.js";
export type { CliIO } from "./cli/io.js";
export type { Target } from "./cli/target.js";

/** The commands that stop on SIGINT/SIGTERM by themselves, saying where the set stands (exit 130/143). */
const INTERRUPTIBLE: ReadonlySet<string> = new Set(["run", "finalize"]);

/**
 * The process's SIGINT and SIGTERM (bin/claimstep.js): the first goes to the listener (the command
 * stops after the request in flight and says where the set stands); a second one exits at once,
 * with the code a shell gives a command that signal killed.
 */
export function processInterrupts(proc: NodeJS.Process = process): Interrupts {
  return {
    on(listener) {
      let seen = false;
      const handle = (signal: InterruptSignal) => {
        if (seen) proc.exit(INTERRUPT_EXIT[signal]);
        seen = true;
        listener(signal);
      };
      const onInt = () => handle("SIGINT");
      const onTerm = () => handle("SIGTERM");
      proc.on("SIGINT", onInt);
      proc.on("SIGTERM", onTerm);
      return () => {
        proc.off("SIGINT", onInt);
        proc.off("SIGTERM", onTerm);
      };
    },
  };
}

// Each command's module is loaded when it runs: `claimstep --version` need not load the simulation,
// the planner or the HTTP stack.
const COMMANDS: Record<string, (ctx: Context) => Promise<number>> = {
  plan: async (ctx) => (await import("./cli/plan.js")).plan(ctx, true),
  step: async (ctx) => {
    const { plan, stepAll } = await import("./cli/plan.js");
    return ctx.flags.all ? stepAll(ctx) : plan(ctx, ctx.flags["dry-run"] ?? false);
  },
  run: async (ctx) => (await import("./cli/run.js")).run(ctx),
  status: async (ctx) => (await import("./cli/status.js")).status(ctx),
  set: async (ctx) => (await import("./cli/set.js")).set(ctx),
  finalize: async (ctx) => (await import("./cli/finalize.js")).finalize(ctx),
  apply: async (ctx) => (await import("./cli/apply.js")).apply(ctx),
  admission: async (ctx) => (await import("./cli/admission.js")).admission(ctx),
  serve: async (ctx) => (await import("./cli/serve.js")).serve(ctx),
  relay: async (ctx) => (await import("./cli/serve.js")).relay(ctx),
  sim: async (ctx) => (await import("./cli/sim-target.js")).sim(ctx),
  version: async (ctx) => (await import("./cli/version.js")).version(ctx),
  completion: async (ctx) => (await import("./cli/completion.js")).completion(ctx, Object.keys(COMMANDS)),
};

/** Every command the dispatcher knows (the top-level help lists each one). */
export const COMMAND_NAMES: readonly string[] = Object.keys(COMMANDS);

async function connect(flags: Flags, env: CliIO["env"], opts: TargetOptions = {}): Promise<Target> {
  if (flags.cluster) return (await import("./cli/sim-target.js")).persistentSimTarget(flags, env, opts);
  if (flags.seed !== undefined)
    throw new UsageError("--seed applies to the simulated cluster only (--cluster sim[:<scenario>])");
  if (flags["sim-state"] !== undefined)
    throw new UsageError("--sim-state applies to the simulated cluster only (--cluster sim[:<scenario>])");
  const { kubeTarget } = await import("./kube-target.js");
  return kubeTarget({
    env,
    ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
    ...(flags.context ? { context: flags.context } : {}),
  });
}

const describeError = (err: unknown): string => {
  if (err instanceof Error) return err.message;
  return String(err);
};

/** A Target that keeps state (the simulated cluster's file) saves it once the command ended: false if that failed. */
async function saved(target: Promise<Target> | undefined, io: CliIO): Promise<boolean> {
  const t = await target?.catch(() => undefined); // a target that could not be reached was the command's error
  try {
    await t?.save?.();
    return true;
  } catch (err) {
    io.stderr.write(`claimstep: ${describeError(err)}\n`);
    return false;
  }
}

/** The command of an argv that does not parse (for its usage). */
function commandIn(argv: string[]): string | undefined {
  return parse(argv, true).positionals[0];
}

/** An unknown command, as kubectl (cobra) says it: the near ones, else the list. */
function unknownCommand(io: CliIO, command: string, program: Program): number {
  const near = suggestionsFor(command, COMMAND_NAMES);
  const hint = near.length
    ? `Did you mean this?\n${near.map((c) => `\t${c}\n`).join("")}`
    : `Commands: ${COMMAND_NAMES.join(", ")}\n`;
  io.stderr.write(
    `claimstep: unknown command ${JSON.stringify(command)} for "${program}"\n\n${hint}\nRun 'claimstep --help' for usage.\n`,
  );
  return EXIT.error;
}

/** An unknown or misplaced flag or argument: the message, then the command's usage (exit 1). */
function usageError(io: CliIO, command: string | undefined, message: string): number {
  const spec = command ? SPECS[command] : undefined;
  if (spec) io.stderr.write(`claimstep ${command}: ${message}\n\n${usageOf(command!, spec)}`);
  else io.stderr.write(`claimstep: ${message}\nRun claimstep --help for usage.\n`);
  return EXIT.error;
}

/**
 * A closed pipe (`claimstep … | head -1`) is the reader saying it has seen enough: stop writing
 * and let the command end (its signal aborts), instead of an unhandled EPIPE. The listeners stay:
 * the error is emitted after the write that failed, possibly once main has returned.
 */
function guardPipes(io: CliIO, program: Program): { out: Output; err: Output; signal: AbortSignal } {
  const closed = new AbortController();
  type Stream = Output & { on?: (event: "error", listener: (err: NodeJS.ErrnoException) => void) => unknown };
  const stdout = io.stdout as Stream;
  const stderr = io.stderr as Stream;
  stdout.on?.("error", (err) => {
    if (err.code !== "EPIPE" && err.code !== "ERR_STREAM_DESTROYED" && !closed.signal.aborted)
      io.stderr.write(`claimstep: stdout: ${err.message}\n`);
    closed.abort();
  });
  if (stderr !== stdout) stderr.on?.("error", () => undefined);
  // As the kubectl plugin, every command line claimstep prints reads `kubectl claimstep …`.
  const out: Output = {
    write: (s) => void (closed.signal.aborted || stdout.write(asProgram(s, program))),
    // A terminal that reports a width of 0 (a pseudo-terminal nobody sized: docker run -t in a CI
    // job, whose log keeps every frame) is no screen to redraw: plain lines, as in a pipe.
    get isTTY() {
      return stdout.isTTY && stdout.columns !== 0;
    },
    // A size of 0 is an unknown size.
    get rows() {
      return stdout.rows || undefined;
    },
    get columns() {
      return stdout.columns || undefined;
    },
  };
  const err: Output = program === "claimstep" ? stderr : { write: (s) => stderr.write(asProgram(s, program)) };
  return { out, err, signal: closed.signal };
}

/** `connectTo` replaces how a Target is reached (tests pass a simulated cluster they keep). */
export async function main(
  argv: string[],
  given: CliIO,
  connectTo: (flags: Flags, env: CliIO["env"], opts?: TargetOptions) => Promise<Target> = connect,
): Promise<number> {
  const invocation = invocationOf(given.invokedAs);
  const program = programOf(invocation);
  // kubectl_complete-claimstep: kubectl passes the words after `kubectl claimstep`.
  if (invocation === "plugin-completion") argv = ["__complete", ...argv];
  const { out, err: errOut, signal } = guardPipes(given, program);
  const io: CliIO = { ...given, stdout: out, stderr: errOut };
  if (argv[0] === "__complete") {
    const { complete } = await import("./cli/complete.js");
    return complete(argv.slice(1), io, connectTo);
  }
  let parsed;
  try {
    // `claimstep --version` is `claimstep version`.
    parsed = parse(argv[0] === "--version" ? ["version", ...argv.slice(1)] : argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    const command = commandIn(argv);
    if (command && !COMMANDS[command] && command !== "help") return unknownCommand(io, command, program);
    return usageError(io, command, err.message);
  }
  const { values: flags, positionals } = parsed;
  const [command, ...rest] = positionals;
  let args = rest;
  // `claimstep <cmd> --help`, `claimstep help <cmd>`: that command's usage.
  const about = command === "help" ? args[0] : flags.help ? command : undefined;
  if (about && SPECS[about]) {
    io.stdout.write(usageOf(about, SPECS[about]));
    return EXIT.ok;
  }
  if (flags.help || !command || command === "help") {
    io.stdout.write(helpOf(program));
    return command || flags.help ? EXIT.ok : EXIT.error;
  }
  const handler = COMMANDS[command];
  if (!handler) return unknownCommand(io, command, program);
  const spec = SPECS[command];
  const wrong = spec && misuse(command, spec, flags, args);
  if (wrong) return usageError(io, command, wrong);
  // The objects it names (`sts/web` is web), checked before any cluster is looked for.
  try {
    if (spec) args = objectArgs(command, spec, flags, args);
  } catch (err) {
    io.stderr.write(`claimstep: ${describeError(err)}\n`);
    return EXIT.error;
  }
  const formats: readonly string[] = spec?.output ?? ["text", "json", "yaml"];
  const output = flags.output ?? formats[0]!;
  if (!formats.includes(output)) {
    io.stderr.write(`claimstep ${command}: --output ${JSON.stringify(output)}: use ${formats.join(", ")}\n`);
    return EXIT.error;
  }
  const format = output as OutputFormat;
  let target: Promise<Target> | undefined;
  // run and finalize: a signal aborts ctx.signal (its reason the signal's name); the command says
  // where the set stands and exits 130 or 143. The others end as the signal ends them.
  const interrupted = new AbortController();
  const unsubscribe = INTERRUPTIBLE.has(command) ? io.interrupts?.on((s) => interrupted.abort(s)) : undefined;
  try {
    return await handler({
      flags,
      args,
      io,
      json: format === "json" || format === "yaml",
      format,
      timeline: format === "timeline",
      color: colorEnabled(io, flags["no-color"]),
      signal: AbortSignal.any([signal, interrupted.signal]),
      target: (opts) => (target ??= connectTo(flags, io.env, { command: [command, ...args].join(" "), ...opts })),
    });
  } catch (err) {
    // A message that names claimstep itself (`claimstep cannot list …`) needs no prefix.
    const message = describeError(err);
    io.stderr.write(message.startsWith("claimstep ") ? `${message}\n` : `claimstep: ${message}\n`);
    return EXIT.error;
  } finally {
    unsubscribe?.();
    // What the command did stays, even when it failed (as on a real cluster).
    // biome-ignore lint/correctness/noUnsafeFinally: a state file that could not be saved fails the command, whatever it returned.
    if (!(await saved(target, io))) return EXIT.error;
  }
}
