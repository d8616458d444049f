// The command line: the flags every command may take, read as kubectl's flag parser reads them,
// and the error of a command line that is wrong.

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
