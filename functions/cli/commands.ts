// What each command accepts, as kubectl declares it: its own flags, the global flags that make
// sense for it, its -o formats, its arguments; `claimstep <cmd> --help` renders it, and an
// unknown or misplaced flag is refused with it. A command without a spec here (added elsewhere)
// accepts every flag and has only the overall help.
import { SCENARIO_NAMES } from "../../adapters/sim/scenario-names.js";
import { type Flags, OPTIONS, UsageError } from "./flags.js";
import type { OutputFormat } from "./io.js";

type FlagName = keyof typeof OPTIONS;

interface FlagHelp {
  /** The value's placeholder, for flags that take one. */
  value?: string;
  help: string;
}

/** Every flag's help line (a flag missing here is shown without one). */
export const FLAG_HELP: Partial<Record<FlagName, FlagHelp>> = {
  namespace: { value: "ns", help: `namespace (default: the context's, else "default")` },
  context: { value: "name", help: "kubeconfig context" },
  kubeconfig: { value: "path", help: "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)" },
  cluster: {
    value: "sim[:scenario]",
    help: `the embedded simulated cluster instead (scenarios: ${SCENARIO_NAMES.join(", ")})`,
  },
  seed: { value: "n", help: "with --cluster sim: seed of the simulation (uids, injected faults); default 1" },
  "sim-state": {
    value: "file|none",
    help: "with --cluster sim: the file that keeps the cluster between commands (default: under $XDG_STATE_HOME)",
  },
  output: { value: "format", help: "output format" },
  help: { help: "this command's usage" },
  "no-color": { help: "no colour (also NO_COLOR=1; never coloured when stdout is not a terminal)" },
  "all-namespaces": { help: "every namespace" },
  all: { help: "every opted-in set of the namespace (-A: of every namespace)" },
  selector: {
    value: "selector",
    help: "only the opted-in sets whose labels match, as kubectl -l (app=web, tier in (db,cache), !canary)",
  },
  "dry-run": { help: "write nothing; show what would be written" },
  interval: { value: "duration", help: "time between steps (at least 1s)" },
  timeout: {
    value: "duration",
    help: "give up (exit 1) after this long, on the cluster's clock or the wall clock, whichever runs ahead",
  },
  storage: { value: "quantity", help: "desired claim size, e.g. 20Gi (claims never shrink)" },
  vac: { value: "class", help: "desired VolumeAttributesClass (must exist)" },
  "allow-smaller": { help: "write a --storage below the claims' current size anyway (they keep their size)" },
  "hold-pods": {
    help: "hold every pod (partition = replicas, yours recorded) until its claims are ready: pod coordination ClaimsFirst",
  },
  watch: {
    help: "follow the set until nothing is left to do (exit 0) or Blocked (exit 2), printing each transition; never writes",
  },
  port: { value: "port", help: "port to listen on (default: $PORT, else 8080)" },
  host: {
    value: "address",
    help: "address to listen on (default: $CLAIMSTEP_HOST, else 127.0.0.1; 0.0.0.0: every interface)",
  },
  url: { value: "url", help: "the app's /v1/relay endpoint (default: $CLAIMSTEP_RELAY_URL)" },
  filename: { value: "file", help: "the manifest (YAML or JSON, one document); - reads stdin" },
  add: { help: "add the claim template (with --storage): the set is re-created with it (docs/templates.md)" },
  remove: { help: "remove the claim template: the set is re-created without it; its claims are kept" },
  "storage-class": {
    value: "class",
    help: "with --add: the new template's StorageClass (default: the cluster's default)",
  },
  "access-mode": {
    value: "mode[,mode]",
    help: "with --add: the new template's access modes (default ReadWriteOnce)",
  },
  "mount-path": { value: "path", help: "with --add: mount the new volume at this path (a held pod template)" },
  container: { value: "name", help: "with --mount-path: the container to mount it in (default: the first)" },
};

/** Valid for every command (unless its spec leaves one out): where it acts, how it prints. */
export const GLOBAL_FLAGS: readonly FlagName[] = [
  "namespace",
  "context",
  "kubeconfig",
  "cluster",
  "seed",
  "sim-state",
  "output",
  "no-color",
  "help",
];

export interface CommandSpec {
  summary: string;
  /** Usage lines after `claimstep `. */
  usage: string[];
  /** Its own flags. */
  flags: FlagName[];
  /** Global flags that make no sense for it. */
  without?: FlagName[];
  /** Why it leaves a global flag out, when that is not obvious (said when the flag is refused). */
  withoutWhy?: Partial<Record<FlagName, string>>;
  /** `-o` formats it offers; the first is the default. */
  output: OutputFormat[];
  /** How many arguments it takes at most. */
  maxArgs: number;
  /**
   * What its arguments name, in order: a StatefulSet (`web`, or kubectl's `sts/web`,
   * `statefulset/web` …), a claim template; `?` when it may be left out. Checked before the
   * command looks for a cluster.
   */
  objects?: ("statefulset" | "statefulset?" | "claim")[];
  /**
   * Its StatefulSet argument may name several sets, as kubectl takes them: `web,helmdb` or
   * `web helmdb` (status). Without it a comma is refused: the command acts on one set.
   */
  several?: boolean;
  /** Shells it completes its first argument from. */
  argValues?: string[];
  examples: string[];
  /** More to say, after the flags. */
  notes?: string;
  /** What a flag means for this command, when it says more than FLAG_HELP. */
  flagHelp?: Partial<Record<FlagName, string>>;
}

const TARGET_OUTPUT: OutputFormat[] = ["text", "json", "yaml"];

export const SPECS: Record<string, CommandSpec> = {
  plan: {
    summary: "show the next step and the per-ordinal table; writes nothing",
    usage: ["plan <statefulset> [flags]"],
    flags: [],
    output: TARGET_OUTPUT,
    maxArgs: 1,
    objects: ["statefulset"],
    examples: ["claimstep plan web -n db", "claimstep plan web --cluster sim -o yaml"],
  },
  step: {
    summary: "run one step (at most one claim written)",
    usage: ["step <statefulset> [--dry-run] [flags]", "step --all [-n <ns> | -A] [-l <selector>] [--dry-run] [flags]"],
    flags: ["dry-run", "all", "all-namespaces", "selector"],
    flagHelp: { "dry-run": "plan the step, write nothing (as plan)" },
    output: TARGET_OUTPUT,
    maxArgs: 1,
    objects: ["statefulset"],
    examples: ["claimstep step web -n db", "claimstep step --all -A    # what the CronJob runs"],
  },
  run: {
    summary: "step until Complete or Blocked, showing progress",
    usage: ["run <statefulset> [--interval 5s] [--timeout 30m] [flags]"],
    flags: ["interval", "timeout"],
    flagHelp: { interval: "time between steps (default 5s, at least 1s; shorter while a claim is being written)" },
    output: ["text", "json", "yaml", "timeline"],
    maxArgs: 1,
    objects: ["statefulset"],
    examples: [
      "claimstep run web -n db --timeout 30m",
      "claimstep run web --cluster sim:flaky-api --seed 7 -o timeline",
    ],
    notes:
      "Exit codes: 0 Complete, 2 Blocked or not opted in (the reason goes to stderr), 1 error or --timeout,\n130/143 stopped by SIGINT/SIGTERM (after the request in flight; it says where the set stands and\nthe command that goes on). -o json|yaml: one object per step; -o timeline: one line per invocation.",
  },
  finalize: {
    summary: "re-create the set with its new claim templates (orphan delete + create, pods and claims kept)",
    usage: ["finalize <statefulset> [--dry-run] [--interval 5s] [--timeout 30m] [flags]"],
    flags: ["dry-run", "interval", "timeout"],
    flagHelp: { "dry-run": "show the template changes and the next request; write nothing" },
    output: ["text", "json", "yaml", "timeline"],
    maxArgs: 1,
    objects: ["statefulset"],
    examples: ["claimstep finalize web -n db --dry-run   # what it would write", "claimstep finalize web -n db"],
    notes:
      "Once a rollout is complete the live spec.volumeClaimTemplates still hold the old sizes (the API\nserver refuses to edit them). finalize writes the new manifest to ConfigMap claimstep-recreate-<set>,\ndeletes the set with propagationPolicy Orphan (uid and resourceVersion preconditions), creates it\nfrom the record and removes the record once the new set has adopted its pods: one request per\nstep, so a crash at any point is finished by the next invocation. Refused while the rollout is not\ncomplete. Needs the claimstep-finalize Role (deploy/kubernetes/rbac-finalize.yaml).\nclaimstep.io/finalize: Recreate on the set makes every step do this on its own.\nExit codes: 0 re-created (or nothing to do), 2 Blocked, 1 error or --timeout, 130/143 stopped by\nSIGINT/SIGTERM (it says where the set stands: deleted, with the command that re-creates it).",
  },
  apply: {
    summary:
      "apply a StatefulSet manifest as kubectl apply --server-side does; a claim template change goes through claimstep's admission webhook into a rollout",
    usage: ["apply -f <sts.yaml | -> [--dry-run] [flags]"],
    flags: ["filename", "dry-run"],
    flagHelp: {
      "dry-run":
        "send it with ?dryRun=All: the API server and its webhooks answer (warnings included), nothing is written",
    },
    without: ["all-namespaces"],
    output: ["text", "json", "yaml"],
    maxArgs: 0,
    examples: [
      "claimstep apply -f web.yaml --dry-run -n db   # what the server and claimstep's webhook would do; nothing written",
      "claimstep apply -f web.yaml -n db && claimstep status web -n db -w",
      "claimstep apply -f web.yaml --cluster sim:apply   # on the simulated cluster, where the webhook is installed",
    ],
    notes:
      "Sends the manifest (one StatefulSet, YAML or JSON; -f - reads stdin) as kubectl apply --server-side\n--force-conflicts does (PATCH application/apply-patch+yaml, fieldManager claimstep-apply), as Argo CD\nand Flux apply: only the fields the manifest states change, whoever wrote them last. A bigger\nspec.volumeClaimTemplates is refused by the API server (422) unless claimstep's admission webhook\n(deploy/kubernetes/admission.yaml) is installed and the set or its namespace is labelled\nclaimstep.io/admission=enabled: the webhook keeps spec as it is, records the new templates in\nclaimstep's annotation and says what claimstep will do (printed as Warning: lines); the rollout\nand the re-create follow (docs/admission.md). Exit codes: 0 applied, 1 refused or error.",
  },
  admission: {
    summary: "the admission webhook's TLS without cert-manager: a CA and a serving certificate (docs/admission.md)",
    usage: ["admission certs [-n <ns>] [--dry-run] [flags]"],
    flags: ["dry-run"],
    flagHelp: {
      "dry-run":
        "read the webhook configuration and the namespace, make the certificates, write nothing; say what would be written",
      namespace:
        "the namespace of the webhook's Service (default: the one mutatingwebhookconfiguration/claimstep calls, else claimstep; not the context's)",
    },
    without: ["seed", "sim-state", "cluster"],
    output: ["text", "json", "yaml"],
    maxArgs: 1,
    argValues: ["certs"],
    examples: [
      "claimstep admission certs --dry-run   # reads the webhook configuration and the namespace; nothing written",
      "claimstep admission certs   # as a cluster admin, after kubectl apply -f deploy/kubernetes/admission.yaml",
    ],
    notes:
      "Writes the Secret claimstep-webhook-tls (tls.crt, tls.key, ca.crt) in the namespace of the Service\nthe configuration calls (a -n that disagrees is warned about; without one, -n, else claimstep) for\nclaimstep-webhook.<ns>.svc, and the CA into the caBundle of every webhook of the\nMutatingWebhookConfiguration claimstep; both are read back. --dry-run reads both first too. Needs openssl. Run it again to\nrotate; claimstep serve reloads the certificate. With cert-manager there is nothing to run.",
  },
  status: {
    summary: "where a set stands (the plan of its next step): one set, or every opted-in set",
    usage: [
      "status [<statefulset>[,<statefulset>…]] [-A] [flags]",
      "status [-A] [-l <selector>] [flags]",
      "status <statefulset> --watch [--interval 2s] [--timeout 30m] [flags]",
    ],
    flags: ["all-namespaces", "selector", "watch", "interval", "timeout"],
    flagHelp: {
      "all-namespaces": "every namespace; with names, the sets of those names in every namespace",
      interval: "with --watch: time between reads (default 2s, at least 1s)",
      timeout:
        "with --watch: give up (exit 1) after this long, on the cluster's clock or the wall clock, whichever runs ahead",
    },
    output: ["text", "json", "yaml", "wide"],
    maxArgs: Number.POSITIVE_INFINITY,
    objects: ["statefulset?"],
    several: true,
    examples: [
      "claimstep status -A -o wide",
      "claimstep status web -n db -w --timeout 30m   # like kubectl rollout status",
      "claimstep status web,helmdb -n db   # two sets (as kubectl: names separated by commas, or spaces)",
      "claimstep status -A -l app.kubernetes.io/part-of=shop",
    ],
    notes:
      "Every surface shows the step claimstep would take now (planned, never written), not an earlier\nstep's record: a new desired revision is NotObserved until a step records it, and a set deleted\nmid re-create is listed (Progressing/SetCreated) with the command that re-creates it.\n--watch re-reads the set every --interval (default 2s) and prints a line when its phase, reason\nor message changes. Exit codes: 0 once claimstep has nothing left to do (Complete, no re-create,\nrestart or partition hand-back to come), 2 Blocked (or not opted in), 1 error or --timeout.\nWith a name it also lists the claims of removed templates (labelled claimstep.io/orphaned-from:\nkept, claimstep never deletes a claim) and the kubectl delete pvc command for those no pod mounts\n(-o json: orphanedClaims, deleteCommand; docs/templates.md).",
  },
  set: {
    summary: "write the desired claim template and opt the set in, then show the plan it causes",
    usage: [
      "set <statefulset> <claim> [--storage 20Gi] [--vac gold] [--hold-pods] [--dry-run] [flags]",
      "set <statefulset> <template> --add --storage 1Gi [--storage-class fast] [--access-mode ReadWriteOnce] [--mount-path /logs [-c app]] [--dry-run] [flags]",
      "set <statefulset> <template> --remove [--dry-run] [flags]",
    ],
    flags: [
      "storage",
      "vac",
      "dry-run",
      "allow-smaller",
      "hold-pods",
      "add",
      "remove",
      "storage-class",
      "access-mode",
      "mount-path",
      "container",
    ],
    flagHelp: {
      "dry-run": "write nothing: print the annotation diff (old → new desired templates) and the plan it would cause",
    },
    output: TARGET_OUTPUT,
    maxArgs: 2,
    objects: ["statefulset", "claim"],
    examples: [
      "claimstep set web data --storage 20Gi -n db --dry-run   # the annotation diff and the plan; nothing written",
      "claimstep set web data --storage 20Gi --vac gold -n db && claimstep run web -n db",
      "claimstep set web data --storage 20Gi --hold-pods -n db   # then change the pod template: each pod waits for its claims",
      "claimstep set web logs --add --storage 1Gi --storage-class fast --mount-path /logs -n db   # a new claim template",
      "claimstep set web logs --remove -n db   # its claims are kept, labelled claimstep.io/orphaned-from=web",
    ],
    notes:
      "Refused, nothing written (exit 1): a --storage below the template's or a claim's current size\n(claims never shrink; --allow-smaller writes it anyway), a --storage without a unit below 1Mi\n(7, 1.5: bytes; did you mean 7Gi?), a --vac the cluster does not have.\nA claim whose expansion failed is no obstacle when --storage is above its capacity: it comes\nback down to it (Kubernetes ≥ 1.34), and set says which claims, to what.\n--hold-pods writes, in the same patch, the partition = replicas, your partition in\nclaimstep.io/user-partition and claimstep.io/pod-coordination: ClaimsFirst: a pod template\nchange applied next replaces each pod only once its claims are ready; claimstep restores your\npartition when done. A GitOps tool that owns the set must ignore the partition (docs/gitops.md).\n--add / --remove add or remove a whole claim template: both write claimstep.io/finalize: Recreate,\nso claimstep re-creates the set (keeping its pods and claims) once its claims are at the revision,\nthen restarts the pods one at a time from the lowest ordinal. A removed template's claims are never\ndeleted: claimstep status lists them with the command to delete them (docs/templates.md).\nOn a set Helm, Argo CD or Flux applies (their labels or annotations), set warns on stderr: the\nchange is on the live set only and the tool's next sync sets it back or resends the old\ntemplates; change the chart's values or Git instead (the admission webhook, docs/admission.md).",
  },
  serve: {
    summary: "the HTTP app on Node (env: CLAIMSTEP_API_TOKEN …)",
    usage: ["serve [--port 8080] [--host 127.0.0.1] [flags]"],
    flags: ["port", "host"],
    without: ["namespace", "seed", "sim-state", "output"],
    output: ["text"],
    maxArgs: 0,
    examples: [
      "CLAIMSTEP_API_TOKEN=$(openssl rand -hex 32) claimstep serve --port 8080",
      "claimstep serve --host 0.0.0.0    # every interface (the container image's default)",
      "CLAIMSTEP_TLS_CERT_FILE=/tls/tls.crt CLAIMSTEP_TLS_KEY_FILE=/tls/tls.key claimstep serve --port 8443   # HTTPS, for the admission webhook (reloaded when the files change)",
    ],
  },
  relay: {
    summary: "watch opted-in sets and POST signed events (env: CLAIMSTEP_WEBHOOK_SECRET)",
    usage: ["relay --url https://claimstep.example.com/v1/relay [flags]"],
    flags: ["url"],
    without: ["seed", "sim-state", "output", "cluster"],
    withoutWhy: { cluster: "relay watches a real cluster: the simulated one has no watches to follow" },
    output: ["text"],
    maxArgs: 0,
    examples: ["claimstep relay --url https://claimstep.example.com/v1/relay -n db"],
  },
  sim: {
    summary: "the simulated cluster's saved state: reset forgets it",
    usage: ["sim reset [--cluster sim:<scenario> | --sim-state <file> | --all]"],
    flags: ["all"],
    flagHelp: { all: "forget every scenario's saved cluster (in the state directory)" },
    without: ["namespace", "context", "kubeconfig", "seed"],
    output: ["text", "json"],
    maxArgs: 1,
    argValues: ["reset"],
    examples: [
      "claimstep sim reset                     # the default scenario (grow) starts afresh",
      "claimstep sim reset --cluster sim:blocked",
      "claimstep sim reset --all",
    ],
  },
  version: {
    summary: "the version of claimstep (also: claimstep --version)",
    usage: ["version [-o json]"],
    flags: [],
    without: ["namespace", "context", "kubeconfig", "cluster", "seed", "sim-state"],
    output: ["text", "json"],
    maxArgs: 0,
    examples: ["claimstep --version", "claimstep version -o json"],
  },
  completion: {
    summary: "print a shell completion script",
    usage: ["completion bash|zsh|fish"],
    flags: [],
    without: ["namespace", "context", "kubeconfig", "cluster", "seed", "sim-state", "output"],
    output: ["text"],
    maxArgs: 1,
    argValues: ["bash", "zsh", "fish"],
    examples: [
      "source <(claimstep completion bash)             # in ~/.bashrc",
      'claimstep completion zsh > "${fpath[1]}/_claimstep"',
      "claimstep completion fish > ~/.config/fish/completions/claimstep.fish",
    ],
  },
};

/** The flags a command accepts: its own, then the global ones it keeps. */
export function flagsOf(spec: CommandSpec): FlagName[] {
  return [...spec.flags, ...GLOBAL_FLAGS.filter((f) => !spec.without?.includes(f))];
}

const flagLabel = (name: FlagName, spec: CommandSpec): string => {
  const short = (OPTIONS[name] as { short?: string }).short;
  const value = name === "output" ? spec.output.join("|") : FLAG_HELP[name]?.value;
  return `${short ? `-${short}, ` : "    "}--${name}${value ? ` <${value}>` : ""}`;
};

const flagLines = (names: readonly FlagName[], spec: CommandSpec): string => {
  const rows = names.map((n) => {
    let help = spec.flagHelp?.[n] ?? FLAG_HELP[n]?.help ?? "";
    if (n === "output") help = `output format (default ${spec.output[0]})`;
    return [flagLabel(n, spec), help] as const;
  });
  const width = Math.max(...rows.map(([l]) => l.length));
  return rows.map(([l, h]) => `  ${l.padEnd(width)}  ${h}`.trimEnd()).join("\n");
};

/** `claimstep <cmd> --help`. */
export function usageOf(command: string, spec: CommandSpec): string {
  const globals = GLOBAL_FLAGS.filter(
    (f) => !spec.without?.includes(f) && !(f === "output" && spec.output.length === 1),
  );
  const parts = [`claimstep ${command} — ${spec.summary}`, "", "Usage:", ...spec.usage.map((u) => `  claimstep ${u}`)];
  if (spec.flags.length) parts.push("", "Flags:", flagLines(spec.flags, spec));
  parts.push("", "Global flags:", flagLines(globals, spec));
  if (spec.notes) parts.push("", spec.notes);
  parts.push("", "Examples:", ...spec.examples.map((e) => `  ${e}`));
  return `${parts.join("\n")}\n`;
}

/** Why these flags and arguments do not suit the command, or undefined when they do. */
export function misuse(command: string, spec: CommandSpec, flags: Flags, args: readonly string[]): string | undefined {
  const accepted = new Set<string>(flagsOf(spec));
  for (const name of Object.keys(flags) as FlagName[]) {
    if (accepted.has(name)) continue;
    const owners = Object.entries(SPECS)
      .filter(([, s]) => s.flags.includes(name))
      .map(([c]) => c);
    // A flag no command claims as its own is global: refused only where its spec leaves it out.
    if (owners.length === 0 && !spec.without?.includes(name)) continue;
    const why = spec.withoutWhy?.[name];
    return `--${name} is not a flag of ${command}${owners.length ? ` (it is a flag of ${owners.join(", ")})` : ""}${why ? `: ${why}` : ""}`;
  }
  if (args.length > spec.maxArgs) return `unexpected argument ${JSON.stringify(args[spec.maxArgs])}`;
  return undefined;
}

/** The kinds kubectl resolves to a StatefulSet in `kind/NAME` (lower-cased; `statefulset.v1.apps` too). */
const STATEFULSET_KINDS: readonly string[] = [
  "sts",
  "statefulset",
  "statefulsets",
  "statefulset.apps",
  "statefulsets.apps",
  "statefulset.v1.apps",
  "statefulsets.v1.apps",
];

/** `web`, `sts/web`, `statefulset/web` …: the StatefulSet's name; another kind is refused, naming it. */
export function statefulSetName(command: string, arg: string): string {
  const slash = arg.indexOf("/");
  if (slash < 0) return arg;
  const kind = arg.slice(0, slash);
  const name = arg.slice(slash + 1);
  const hint = "claimstep acts on StatefulSets: give web, sts/web or statefulset/web";
  if (!STATEFULSET_KINDS.includes(kind.toLowerCase()))
    throw new UsageError(
      `${command}: ${JSON.stringify(arg)} is not a StatefulSet (kind ${JSON.stringify(kind)}); ${hint}`,
    );
  if (!name || name.includes("/")) throw new UsageError(`${command}: ${JSON.stringify(arg)} is not kind/NAME; ${hint}`);
  return name;
}

/**
 * The arguments with the objects they name checked: a StatefulSet given as kubectl's kind/NAME
 * becomes its name; one that is missing is asked for (before any cluster is looked for).
 */
export function objectArgs(command: string, spec: CommandSpec, flags: Flags, args: readonly string[]): string[] {
  // kubectl's comma habit: `web,helmdb` names two sets.
  if (spec.several) {
    const names = args.flatMap((a) => a.split(",")).filter((a) => a !== "");
    return [...new Set(names.map((a) => statefulSetName(command, a)))];
  }
  const many = args.find((a, i) => spec.objects?.[i]?.startsWith("statefulset") && a.includes(","));
  if (many !== undefined)
    throw new UsageError(
      `${command} acts on one StatefulSet: ${JSON.stringify(many)} names ${many.split(",").length}; run it once per set`,
    );
  const out = [...args];
  spec.objects?.forEach((what, i) => {
    const arg = out[i];
    if (what === "claim") {
      if (!arg)
        throw new UsageError(
          `${command}: name the claim template too, e.g. claimstep ${command} web data --storage 20Gi`,
        );
      return;
    }
    if (arg !== undefined) out[i] = statefulSetName(command, arg);
    // step --all steps every opted-in set (and refuses a name); status lists them.
    else if (what === "statefulset" && !(command === "step" && flags.all))
      throw new UsageError(`${command}: name the StatefulSet, e.g. claimstep ${command} web -n db`);
  });
  return out;
}

/** Levenshtein distance, for suggestions. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/** As cobra suggests for an unknown command (SuggestionsMinimumDistance 2). */
export const SUGGESTION_DISTANCE = 2;

/** The commands near `typed`, as cobra finds them: within SUGGESTION_DISTANCE edits, or starting with it; in name order. */
export function suggestionsFor(typed: string, commands: readonly string[]): string[] {
  const t = typed.toLowerCase();
  return commands
    .filter((c) => distance(t, c.toLowerCase()) <= SUGGESTION_DISTANCE || c.toLowerCase().startsWith(t))
    .sort();
}
