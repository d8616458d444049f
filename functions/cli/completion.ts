// `claimstep completion bash|zsh|fish`: a completion script built from the command specs
// (functions/cli/commands.ts): commands, each command's flags, -o formats, the simulated
// cluster's scenarios after --cluster, kubeconfig contexts after --context (from kubectl), and
// StatefulSet names from the cluster (`claimstep __complete`, functions/cli/complete.ts).
import { SCENARIO_NAMES } from "../../adapters/sim/scenario-names.js";
import { type CommandSpec, flagsOf, GLOBAL_FLAGS, SPECS } from "./commands.js";
import type { Context } from "./context.js";
import { EXIT } from "./exit-codes.js";
import { OPTIONS, UsageError } from "./flags.js";

type FlagName = keyof typeof OPTIONS;

interface Model {
  commands: { name: string; summary: string; flags: string[]; outputs: string[]; args: string[] }[];
  /** Flags that take a value (the next word is not a command). */
  valued: string[];
  clusters: string[];
}

const words = (name: FlagName): string[] => {
  const short = (OPTIONS[name] as { short?: string }).short;
  return [`--${name}`, ...(short ? [`-${short}`] : [])];
};

function model(commands: readonly string[]): Model {
  return {
    commands: commands.map((name) => {
      const spec: CommandSpec | undefined = SPECS[name];
      return {
        name,
        summary: spec?.summary ?? name,
        flags: (spec ? flagsOf(spec) : [...GLOBAL_FLAGS]).flatMap(words),
        outputs: spec?.output ?? ["text", "json", "yaml"],
        args: spec?.argValues ?? [],
      };
    }),
    valued: (Object.keys(OPTIONS) as FlagName[]).filter((n) => OPTIONS[n].type === "string").flatMap(words),
    clusters: ["sim", ...SCENARIO_NAMES.map((s) => `sim:${s}`)],
  };
}

const BINARIES = "claimstep kubectl-claimstep";

function bash(m: Model): string {
  const perCommand = m.commands
    .map(
      (c) =>
        `    ${c.name}) flags=${JSON.stringify(c.flags.join(" "))}; outputs=${JSON.stringify(c.outputs.join(" "))}; args=${JSON.stringify(c.args.join(" "))} ;;`,
    )
    .join("\n");
  return `# claimstep completion for bash. Load it with:  source <(claimstep completion bash)
_claimstep() {
  # Words from the line itself: COMP_WORDS splits at ':' (--cluster sim:grow).
  local line="\${COMP_LINE:0:COMP_POINT}" cur prev cmd="" flags outputs args i
  local -a w
  read -ra w <<< "$line"
  if [[ "$line" == *" " ]]; then cur=""; else cur="\${w[\${#w[@]}-1]}"; unset 'w[\${#w[@]}-1]'; fi
  prev="\${w[\${#w[@]}-1]}"
  local valued=" ${m.valued.join(" ")} "
  for ((i = 1; i < \${#w[@]}; i++)); do
    if [[ "$valued" == *" \${w[i]} "* ]]; then ((i++)); continue; fi
    [[ "\${w[i]}" == -* ]] && continue
    cmd="\${w[i]}"; break
  done
  case "$cmd" in
${perCommand}
    *) flags=${JSON.stringify(GLOBAL_FLAGS.flatMap(words).join(" "))}; outputs=""; args="" ;;
  esac
  case "$prev" in
    --cluster) COMPREPLY=($(compgen -W "${m.clusters.join(" ")}" -- "$cur")) ;;
    -o|--output) COMPREPLY=($(compgen -W "$outputs" -- "$cur")) ;;
    --context) COMPREPLY=($(compgen -W "$(kubectl config get-contexts -o name 2>/dev/null)" -- "$cur")) ;;
    --kubeconfig) COMPREPLY=($(compgen -f -- "$cur")) ;;
    *)
      if [[ "$valued" == *" $prev "* ]]; then COMPREPLY=()
      elif [[ -z "$cmd" && "$cur" != -* ]]; then COMPREPLY=($(compgen -W "${m.commands.map((c) => c.name).join(" ")} help" -- "$cur"))
      elif [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$flags" -- "$cur"))
      elif [[ -n "$args" ]]; then COMPREPLY=($(compgen -W "$args" -- "$cur"))
      else
        # StatefulSet names, from the cluster of the line's flags: claimstep's own __complete (cobra's protocol).
        local names
        names=$("\${w[0]}" __complete "\${w[@]:1}" "$cur" 2>/dev/null | grep -v '^:')
        COMPREPLY=($(compgen -W "$names" -- "$cur"))
        [[ \${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=($(compgen -W "$flags" -- "$cur"))
      fi ;;
  esac
  # What bash shows and inserts starts after the last ':' of the word.
  if [[ "$cur" == *:* ]]; then
    local prefix="\${cur%"\${cur##*:}"}"
    COMPREPLY=("\${COMPREPLY[@]#"$prefix"}")
  fi
}
complete -o default -F _claimstep ${BINARIES}
`;
}

const zshQuote = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;

function zsh(m: Model): string {
  const perCommand = m.commands
    .map(
      (c) =>
        `    ${c.name}) flags=(${c.flags.join(" ")}); outputs=(${c.outputs.join(" ")}); args=(${c.args.join(" ")}) ;;`,
    )
    .join("\n");
  return `#compdef ${BINARIES}
# claimstep completion for zsh. Load it with:  source <(claimstep completion zsh)
# or save it as _claimstep in a directory of $fpath.
_claimstep() {
  local -a commands flags outputs args valued
  local cmd="" i
  commands=(${m.commands.map((c) => zshQuote(`${c.name}:${c.summary}`)).join(" ")})
  valued=(${m.valued.join(" ")})
  for ((i = 2; i < CURRENT; i++)); do
    if (( \${valued[(Ie)\${words[i]}]} )); then ((i++)); continue; fi
    [[ \${words[i]} == -* ]] && continue
    cmd=\${words[i]}; break
  done
  case $cmd in
${perCommand}
    *) flags=(${GLOBAL_FLAGS.flatMap(words).join(" ")}); outputs=(); args=() ;;
  esac
  case \${words[CURRENT-1]} in
    --cluster) compadd -- ${m.clusters.join(" ")}; return ;;
    -o|--output) compadd -- $outputs; return ;;
    --context) compadd -- \${(f)"$(kubectl config get-contexts -o name 2>/dev/null)"}; return ;;
    --kubeconfig) _files; return ;;
  esac
  if (( \${valued[(Ie)\${words[CURRENT-1]}]} )); then return; fi
  if [[ -z $cmd && $PREFIX != -* ]]; then _describe 'command' commands; return; fi
  if [[ $PREFIX == -* ]]; then compadd -- $flags; return; fi
  if (( \${#args} )); then compadd -- $args; return; fi
  # StatefulSet names, from the cluster of the line's flags: claimstep's own __complete (cobra's protocol).
  local -a names
  names=(\${(f)"$(\${words[1]} __complete \${words[2,CURRENT-1]} "$PREFIX" 2>/dev/null | grep -v '^:')"})
  if (( \${#names} )); then compadd -- $names; else compadd -- $flags; fi
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _claimstep "$@"
else
  compdef _claimstep ${BINARIES}
fi
`;
}

const fishQuote = (s: string): string => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

function fish(m: Model): string {
  const lines = [
    "# claimstep completion for fish. Load it with:  claimstep completion fish | source",
    "# or save it as ~/.config/fish/completions/claimstep.fish",
  ];
  const all = m.commands.map((c) => c.name).join(" ");
  for (const bin of BINARIES.split(" ")) {
    const c = `complete -c ${bin}`;
    lines.push(`${c} -f`);
    for (const cmd of m.commands)
      lines.push(`${c} -n '__fish_use_subcommand' -a ${cmd.name} -d ${fishQuote(cmd.summary)}`);
    for (const name of Object.keys(OPTIONS) as FlagName[]) {
      if (name === "output") continue;
      const users = m.commands.filter((cmd) => cmd.flags.includes(`--${name}`)).map((cmd) => cmd.name);
      if (users.length === 0) continue;
      const short = (OPTIONS[name] as { short?: string }).short;
      const cond = users.length === m.commands.length ? "" : ` -n '__fish_seen_subcommand_from ${users.join(" ")}'`;
      const value = OPTIONS[name].type === "string" ? " -r" : "";
      const values =
        name === "cluster"
          ? ` -a ${fishQuote(m.clusters.join(" "))}`
          : name === "kubeconfig"
            ? " -F"
            : name === "context"
              ? " -a '(kubectl config get-contexts -o name 2>/dev/null)'"
              : "";
      lines.push(`${c}${cond}${short ? ` -s ${short}` : ""} -l ${name}${value}${values}`);
    }
    for (const cmd of m.commands) {
      if (cmd.flags.includes("--output"))
        lines.push(
          `${c} -n '__fish_seen_subcommand_from ${cmd.name}' -s o -l output -r -a ${fishQuote(cmd.outputs.join(" "))}`,
        );
      if (cmd.args.length)
        lines.push(
          `${c} -n '__fish_seen_subcommand_from ${cmd.name}; and not __fish_seen_subcommand_from ${cmd.args.join(" ")}' -a ${fishQuote(cmd.args.join(" "))}`,
        );
    }
    lines.push(`${c} -n '__fish_seen_subcommand_from help' -a ${fishQuote(all)}`);
    // StatefulSet names, from the cluster of the line's flags: claimstep's own __complete (cobra's protocol).
    const named = m.commands
      .filter((cmd) => SPECS[cmd.name]?.objects?.[0]?.startsWith("statefulset"))
      .map((x) => x.name);
    lines.push(
      `${c} -n '__fish_seen_subcommand_from ${named.join(" ")}' -a '(${bin} __complete (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null | string match -v ":*")'`,
    );
  }
  return `${lines.join("\n")}\n`;
}

export async function completion(ctx: Context, commands: readonly string[]): Promise<number> {
  const shell = ctx.args[0];
  const scripts = { bash, zsh, fish };
  if (!shell || !(shell in scripts))
    throw new UsageError(
      `completion: name the shell: claimstep completion bash|zsh|fish${shell ? ` (not ${JSON.stringify(shell)})` : ""}`,
    );
  ctx.io.stdout.write(scripts[shell as keyof typeof scripts](model(commands)));
  return EXIT.ok;
}
