// `claimstep __complete <words…> <word>`, and `kubectl_complete-claimstep <words…> <word>` (what
// kubectl ≥ 1.26 runs for `kubectl claimstep <TAB>`): cobra's completion protocol, as kubectl speaks
// it with its plugins. The words after the command's name come in, the last one being the word to
// complete ("" for a new one); the candidates go out one a line, then `:<directive>` (cobra's
// ShellCompDirective: 4 NoFileComp, 0 the shell's own file completion). Commands, each command's
// flags and -o formats, the simulated cluster's scenarios, and StatefulSet names from the cluster
// (the namespace of -n or of the context); a cluster that does not answer within
// COMPLETION_TIMEOUT_MS completes no name, quietly.
import { SCENARIO_NAMES } from "../../adapters/sim/scenario-names.js";
import { flagsOf, GLOBAL_FLAGS, SPECS } from "./commands.js";
import { EXIT } from "./exit-codes.js";
import { type Flags, OPTIONS, parse } from "./flags.js";
import type { CliIO } from "./io.js";
import type { Target, TargetOptions } from "./target.js";

type FlagName = keyof typeof OPTIONS;

/** cobra's ShellCompDirective values used here. */
export const DIRECTIVE = { default: 0, noFileComp: 4 } as const;

/** How long a completion waits for the cluster's list of StatefulSets. */
export const COMPLETION_TIMEOUT_MS = 3000;

interface Completion {
  candidates: string[];
  directive: number;
}

const flagWords = (name: FlagName): string[] => {
  const short = (OPTIONS[name] as { short?: string }).short;
  return [`--${name}`, ...(short ? [`-${short}`] : [])];
};

const SHORT: Record<string, FlagName> = Object.fromEntries(
  (Object.keys(OPTIONS) as FlagName[])
    .filter((n) => (OPTIONS[n] as { short?: string }).short)
    .map((n) => [(OPTIONS[n] as { short: string }).short, n]),
);

/** The flag a word leaves waiting for its value (`-n`, `--cluster`, `-An`), if any. */
function awaiting(word: string | undefined): FlagName | undefined {
  if (!word?.startsWith("-") || word.includes("=")) return undefined;
  if (word.startsWith("--")) {
    const name = word.slice(2) as FlagName;
    return Object.hasOwn(OPTIONS, name) && OPTIONS[name].type === "string" ? name : undefined;
  }
  const name = SHORT[word.at(-1)!];
  return name && OPTIONS[name].type === "string" && word.length >= 2 ? name : undefined;
}

const only = (prefix: string, words: readonly string[]): string[] => words.filter((w) => w.startsWith(prefix));

/** The StatefulSets' names in the namespace the command would act in; none when the cluster does not answer. */
async function setNames(
  flags: Flags,
  env: CliIO["env"],
  connectTo: (flags: Flags, env: CliIO["env"], opts?: TargetOptions) => Promise<Target>,
): Promise<string[]> {
  const signal = AbortSignal.timeout(COMPLETION_TIMEOUT_MS);
  const names = (async () => {
    const target = await connectTo(flags, env, { readOnly: true });
    return (await target.listSets?.(flags.namespace ?? target.namespace, signal)) ?? [];
  })();
  const late = new Promise<string[]>((resolve) => signal.addEventListener("abort", () => resolve([]), { once: true }));
  return Promise.race([names, late]).catch(() => []);
}

async function completionOf(
  words: readonly string[],
  env: CliIO["env"],
  connectTo: (flags: Flags, env: CliIO["env"], opts?: TargetOptions) => Promise<Target>,
): Promise<Completion> {
  const word = words.at(-1) ?? "";
  const before = words.slice(0, -1);
  const { values: flags, positionals } = parse(before, true);
  const [command, ...args] = positionals;
  const spec = command ? SPECS[command] : undefined;
  const none = { candidates: [], directive: DIRECTIVE.noFileComp };
  const flag = awaiting(before.at(-1));
  if (flag) {
    if (flag === "output") return { candidates: only(word, spec?.output ?? ["text", "json", "yaml"]), directive: 4 };
    if (flag === "cluster")
      return { candidates: only(word, ["sim", ...SCENARIO_NAMES.map((s) => `sim:${s}`)]), directive: 4 };
    if (flag === "kubeconfig" || flag === "filename" || flag === "sim-state")
      return { candidates: [], directive: DIRECTIVE.default };
    return none;
  }
  if (word.startsWith("-")) {
    const names = spec ? flagsOf(spec) : [...GLOBAL_FLAGS];
    return { candidates: only(word, names.flatMap(flagWords)), directive: DIRECTIVE.noFileComp };
  }
  if (!command || (command === "help" && args.length === 0))
    return { candidates: only(word, [...Object.keys(SPECS), ...(command ? [] : ["help"])]), directive: 4 };
  if (!spec) return none;
  if (spec.argValues && args.length === 0) return { candidates: only(word, spec.argValues), directive: 4 };
  const object = spec.objects?.[args.length];
  if (!object?.startsWith("statefulset") || (command === "step" && flags.all)) return none;
  // kubectl's comma habit (`status web,db`): the names after the last comma.
  const comma = word.lastIndexOf(",");
  const given = comma < 0 ? [] : word.slice(0, comma).split(",");
  const names = (await setNames(flags, env, connectTo)).filter((n) => !given.includes(n));
  const head = comma < 0 ? "" : word.slice(0, comma + 1);
  return { candidates: only(word.slice(comma + 1), names).map((n) => head + n), directive: DIRECTIVE.noFileComp };
}

/** The completion of `words` (the last one the word being completed), as cobra prints it. */
export async function complete(
  words: readonly string[],
  io: CliIO,
  connectTo: (flags: Flags, env: CliIO["env"], opts?: TargetOptions) => Promise<Target>,
): Promise<number> {
  const { candidates, directive } = await completionOf(words, io.env, connectTo);
  io.stdout.write(`${candidates.map((c) => `${c}\n`).join("")}:${directive}\n`);
  return EXIT.ok;
}
