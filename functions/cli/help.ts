// `claimstep --help`: what a person reads first, kept apart so the commands stay short.
import { SCENARIO_NAMES, SET } from "../../adapters/sim/scenario-names.js";
import { asProgram, type Program } from "./program.js";

export const HELP = `claimstep — roll out StatefulSet volumeClaimTemplates changes to existing PVCs, one ordinal at a time

Usage:
  claimstep plan   <statefulset>                       show the next step and the per-ordinal table (no writes)
  claimstep step   <statefulset> [--dry-run]           run one step
  claimstep step   --all [-n <ns> | -A] [-l k=v]       one step of every opted-in set (for a CronJob)
  claimstep run    <statefulset> [--interval 5s] [--timeout 30m]
                                                       step until Complete or Blocked, showing progress
  claimstep status [<statefulset>[,…]] [-A] [-l k=v]   where sets stand: the plan of their next step (all opted-in sets
                                                       without a name; with one name, also the claims of removed templates)
  claimstep status <statefulset> --watch [--timeout 30m]
                                                       follow it until nothing is left to do (0) or Blocked (2), read-only (-w)
  claimstep set    <statefulset> <claim> [--storage 20Gi] [--vac gold] [--dry-run]
                                                       write the desired claim template and opt the set in
                                                       (--dry-run: the annotation diff and the plan, nothing written)
  claimstep set    <statefulset> <template> --add --storage 1Gi [--storage-class fast] [--mount-path /logs [-c app]]
  claimstep set    <statefulset> <template> --remove
                                                       add or remove a claim template: the set is re-created, pods
                                                       restart one at a time from the lowest ordinal, claims are kept
  claimstep finalize <statefulset> [--dry-run]         re-create the set with its new claim templates once complete
                                                       (orphan delete + create; pods and claims compared by uid)
  claimstep apply -f <sts.yaml> [--dry-run]            apply a StatefulSet as kubectl apply --server-side does; a claim
                                                       template change goes through claimstep's webhook into a rollout
  claimstep admission certs [-n <ns>]                  the admission webhook's TLS without cert-manager (docs/admission.md)
  claimstep serve  [--port 8080] [--host 127.0.0.1]    the HTTP app on Node (env: CLAIMSTEP_API_TOKEN …); --host 0.0.0.0
                                                       (the container image's default) listens on every interface
  claimstep relay  --url https://claimstep.example.com/v1/relay
                                                       watch opted-in sets and POST signed events (env: CLAIMSTEP_WEBHOOK_SECRET)
  claimstep version                                    the version of claimstep (also: claimstep --version)
  claimstep completion bash|zsh|fish                   a shell completion script
  claimstep sim    reset [--cluster sim:<scenario> | --all]
                                                       forget the simulated cluster kept between commands

Each command's own flags: claimstep <command> --help (a flag another command owns is refused).

Options:
  -n, --namespace <ns>     namespace (default: the context's, else "default")
      --context <name>     kubeconfig context
      --kubeconfig <path>  kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)
      --cluster sim[:<scenario>]
                           use the embedded simulated cluster instead (StatefulSet ${SET.namespace}/${SET.name}; scenarios:
                           ${SCENARIO_NAMES.join(", ")})
      --seed <n>           with --cluster sim: seed of the simulation (uids, injected faults); default 1
      --sim-state <file>   with --cluster sim: the file that keeps the simulated cluster between commands, its
                           clock moving on with real time (default $XDG_STATE_HOME/claimstep/sim-<scenario>.json,
                           else ~/.local/state/claimstep/…; none: keep nothing)
  -A, --all-namespaces     status, step --all: every namespace (status -A web: the sets named web in every namespace)
  -l, --selector <k=v,…>   status, step --all: only the opted-in sets with these labels (as kubectl -l)
      --all                step: every opted-in set of the namespace
  -o, --output text|json|yaml|wide|timeline
                           output format (json, yaml: one object; for run, one object per step;
                           wide, status only: more columns; timeline, run only: one line per
                           invocation, as npm start shows)
      --no-color           no colour (also NO_COLOR=1; never coloured when stdout is not a terminal)
  -h, --help               this help (after a command: that command's usage)

Exit codes: 0 done or progressing, 2 blocked or not opted in (the reason is printed), 1 error;
run and finalize stopped by SIGINT or SIGTERM: 130 or 143, after saying where the set stands.

Examples:
  claimstep plan web -n db
  claimstep set web data --storage 20Gi -n db && claimstep run web -n db
  claimstep run web --cluster sim                  # a whole rollout on the simulated cluster
  claimstep sim reset                              # … which is kept between commands: start it over
  claimstep run web --cluster sim:blocked; echo $?  # 2: the class does not allow expansion
  claimstep run web --cluster sim:flaky-api --seed 7 -o timeline
  claimstep step web -n db -o json | jq .decision.phase
  claimstep status -A -o wide
  claimstep status web -n db -w --timeout 30m     # like kubectl rollout status
  source <(claimstep completion bash)
`;

/** Where the usage lines' descriptions start (the column continuation lines are indented to). */
const DESCRIPTION_COLUMN = 55;

/**
 * The overall help as `program` runs it: as the kubectl plugin, every command line reads
 * `kubectl claimstep …`, the usage's descriptions still in one column.
 */
export function helpOf(program: Program): string {
  if (program === "claimstep") return HELP;
  const extra = program.length - "claimstep".length;
  const wide = " ".repeat(DESCRIPTION_COLUMN);
  let usage = false;
  const lines = HELP.split("\n").map((line) => {
    if (line === "Usage:") usage = true;
    else if (line === "") usage = false;
    return usage && line.startsWith(wide) ? `${" ".repeat(extra)}${line}` : line;
  });
  return asProgram(lines.join("\n"), program);
}
