// `claimstep`: plan, step, run, status, set, serve and relay from a terminal or a CI job, against
// a cluster (kubeconfig, like kubectl) or the embedded simulated cluster (`--cluster sim`).
// Exit codes: 0 done or progressing, 2 blocked, 1 error. One file per command in functions/cli/.
import { ApiError } from "../adapters/api-error.js";
import { EXIT, UsageError, parse, type CliIO, type Context, type Flags, type Target } from "./cli/context.js";
import { HELP } from "./cli/help.js";
import { plan, stepAll } from "./cli/plan.js";
import { run } from "./cli/run.js";
import { relay, serve } from "./cli/serve.js";
import { set } from "./cli/set.js";
import { persistentSimTarget, sim } from "./cli/sim-target.js";
import { status } from "./cli/status.js";
import { version } from "./cli/version.js";

export { EXIT, parseDuration } from "./cli/context.js";
export { HELP } from "./cli/help.js";
export { simTarget } from "./cli/sim-target.js";
export type { CliIO, Flags, Output, Target } from "./cli/context.js";

const COMMANDS: Record<string, (ctx: Context) => Promise<number>> = {
  plan: (ctx) => plan(ctx, true),
  step: (ctx) => (ctx.flags.all ? stepAll(ctx) : plan(ctx, ctx.flags["dry-run"] ?? false)),
  run,
  status,
  set,
  serve,
  relay,
  sim,
  version,
};

async function connect(flags: Flags, env: CliIO["env"]): Promise<Target> {
  if (flags.cluster) return persistentSimTarget(flags, env);
  if (flags.seed !== undefined) throw new UsageError("--seed applies to the simulated cluster only (--cluster sim[:<scenario>])");
  if (flags["sim-state"] !== undefined) throw new UsageError("--sim-state applies to the simulated cluster only (--cluster sim[:<scenario>])");
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

/** `connectTo` replaces how a Target is reached (tests pass a simulated cluster they keep). */
export async function main(argv: string[], io: CliIO, connectTo: (flags: Flags, env: CliIO["env"]) => Promise<Target> = connect): Promise<number> {
  let parsed;
  try {
    // `claimstep --version` is `claimstep version`.
    parsed = parse(argv[0] === "--version" ? ["version", ...argv.slice(1)] : argv);
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
  } finally {
    // What the command did stays, even when it failed (as on a real cluster).
    if (!(await saved(target, io))) return EXIT.error;
  }
}
