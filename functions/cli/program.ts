// How the command was run, from the name of the file the shell or kubectl ran (argv[1]): as
// `claimstep`, as the kubectl plugin `kubectl-claimstep` (`kubectl claimstep …`), or as the plugin's
// completion helper `kubectl_complete-claimstep` (kubectl ≥ 1.26 runs it for `kubectl claimstep <TAB>`).
// The package installs the one program under all three names (package.json "bin").

/** What a person types to run claimstep: the command lines claimstep prints start with it. */
export type Program = "claimstep" | "kubectl claimstep";

export const PLUGIN_BINARY = "kubectl-claimstep";
export const PLUGIN_COMPLETION_BINARY = "kubectl_complete-claimstep";

/** The file's name without its folder and a `.js`, `.cmd` or `.exe` ending. */
const baseOf = (path: string): string => (path.split(/[\\/]/).pop() ?? path).replace(/\.(js|mjs|cmd|exe)$/i, "");

export type Invocation = "claimstep" | "plugin" | "plugin-completion";

/** `claimstep`, the plugin, or the plugin's completion helper: from argv[1] (undefined: claimstep). */
export function invocationOf(invokedAs: string | undefined): Invocation {
  const base = invokedAs ? baseOf(invokedAs) : "";
  if (base === PLUGIN_COMPLETION_BINARY) return "plugin-completion";
  if (base === PLUGIN_BINARY) return "plugin";
  return "claimstep";
}

export const programOf = (invocation: Invocation): Program =>
  invocation === "claimstep" ? "claimstep" : "kubectl claimstep";

// `claimstep` as the start of a command line: followed by a command, a flag or a placeholder; not
// part of another word (kubectl-claimstep, _claimstep, claimstep.io/…, claimstep's), nor already
// `kubectl claimstep` (rewriting twice changes nothing).
const COMMAND_LINE =
  /(?<![\w./-]|kubectl )claimstep (?=(?:plan|step|run|status|set|finalize|apply|admission|serve|relay|sim|version|completion|help)\b|-{1,2}[a-zA-Z]|<)/g;

/** The text with every command line it suggests (`claimstep run web …`) as `program` runs it. */
export function asProgram(text: string, program: Program): string {
  return program === "claimstep" ? text : text.replace(COMMAND_LINE, `${program} `);
}
