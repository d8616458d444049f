// `npm start`: claimstep rolling out a change on the embedded simulated cluster, step by step,
// on a virtual clock (minutes of cluster time in well under a second). Named scenarios show the
// blocked and faulty paths. Exit 0 on Complete, 2 when the rollout is blocked or stalls (with its
// message, as the CLI does), 1 on a usage error.
import { parseArgs } from "node:util";
import { ApiError } from "../adapters/api-error.js";
import { SimCluster, claimTemplate, statefulSetManifest, type SetSpec } from "../adapters/sim/cluster.js";
import type { DriverBehaviour } from "../adapters/sim/controllers/context.js";
import type { FaultPlan } from "../adapters/sim/faults.js";
import { renderDecision, renderTable } from "../core/render.js";
import { Keys, type Decision } from "../core/types.js";
import { runStep, type StepResult } from "./step.js";

const ref = { namespace: "default", name: "db" };

interface DemoScenario {
  summary: string;
  /** What a person should take away when it ends. */
  lesson: string;
  driver: DriverBehaviour;
  faults?: FaultPlan;
  /** Desired templates: by default data grows to 20Gi and wal moves to VolumeAttributesClass gold. */
  desired?: SetSpec["templates"];
  quota?: string;
}

const LIVE: SetSpec["templates"] = [
  { name: "data", storage: "10Gi", storageClassName: "fast" },
  { name: "wal", storage: "2Gi", storageClassName: "fast", volumeAttributesClassName: "silver" },
];
const CHANGE: SetSpec["templates"] = [
  { name: "data", storage: "20Gi", storageClassName: "fast" },
  { name: "wal", storage: "2Gi", storageClassName: "fast", volumeAttributesClassName: "gold" },
];

const SCENARIOS: Record<string, DemoScenario> = {
  grow: {
    summary: "grow data 10Gi → 20Gi and move wal to VolumeAttributesClass gold, one ordinal at a time",
    lesson: "every claim was updated highest ordinal first, each waiting for the resize or modification to finish before the next",
    driver: { resize: "online", modify: "ok" },
  },
  "blocked-class": {
    summary: "the desired data template names storage class premium, but the claims are of class fast",
    lesson: "a claim's class is immutable: claimstep blocks before writing anything, with the fix in the message",
    driver: { resize: "online", modify: "ok" },
    desired: [{ ...CHANGE[0]!, storageClassName: "premium" }, CHANGE[1]!],
  },
  "offline-driver": {
    summary: "the CSI driver of class fast only expands volumes no pod is using",
    lesson: "the first resize waits on the driver's in-use error; a person must stop the pod (or the driver must support online expansion)",
    driver: { resize: "offline", modify: "ok", driverName: "offline.csi.example.com" },
  },
  "flaky-api": {
    summary: "the API server answers 429, 500 or a timeout to one request in eight; the driver fails transiently too",
    lesson: "a failed invocation leaves the cluster valid; the next one re-reads it and continues from where it really is",
    driver: { resize: "flaky", flakyFailures: 2, modify: "ok" },
    faults: { tooManyRequests: 0.05, serverError: 0.04, timeout: 0.035, retryAfterSeconds: 2 },
  },
  quota: {
    summary: "a ResourceQuota of 100Gi leaves no room to grow data to 20Gi on every claim",
    lesson: "the API server refused the expansion; claimstep reports it as QuotaExceeded with the quota's numbers",
    driver: { resize: "online", modify: "ok" },
    quota: "100Gi",
  },
};

const USAGE = `Usage: npm start [-- --scenario <name>] [--seed <n>] [--quiet]

Runs claimstep on the embedded simulated cluster: StatefulSet default/db (5 replicas, claim
templates data 10Gi and wal 2Gi with VolumeAttributesClass silver), then requests a change and
steps until the rollout completes. Virtual time: the invocations are 10 cluster-seconds apart.

Scenarios:
${Object.entries(SCENARIOS)
  .map(([name, s]) => `  ${name.padEnd(15)} ${s.summary}`)
  .join("\n")}

Options:
  --scenario <name>  one of the above (default: grow)
  --seed <n>         seed of the simulation (uids, faults); default 1
  --quiet            only the summary line and the final table
  --help             this text

Exit status: 0 Complete, 2 blocked or stalled (the message says why), 1 usage error.`;

/** Virtual seconds between invocations (a watch relay or a short cron). */
const INTERVAL_S = 10;
/** A rollout whose decision has not changed for this long is reported as stalled. */
const STALL_S = 15 * 60;
const MAX_INVOCATIONS = 500;

const clock = (start: number, now: Date) => {
  const s = Math.round((now.getTime() - start) / 1000);
  return `${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
};

function progressLine(d: Decision): string {
  const inScope = d.ordinals.filter((o) => o.state !== "OutOfScope" && o.state !== "Condemned");
  return inScope.map((o) => `${o.ordinal} ${o.state}`).join(" · ");
}

async function seed(s: DemoScenario, seedValue: number): Promise<SimCluster> {
  // Cloud-like latencies: a controller resize takes ~25 s, a file system resize ~8 s, a modification ~20 s.
  const cluster = new SimCluster({
    seed: seedValue,
    latencies: { resizeMs: 25_000, nodeResizeMs: 8_000, modifyMs: 20_000, retryMs: 30_000 },
    ...(s.faults ? { faults: s.faults } : {}),
  });
  await cluster.addStorageClass("fast", { allowVolumeExpansion: true, driver: s.driver });
  await cluster.addStorageClass("premium", { allowVolumeExpansion: true });
  await cluster.addVolumeAttributesClass("silver", { iops: "3000", throughput: "125" });
  await cluster.addVolumeAttributesClass("gold", { iops: "12000", throughput: "500" });
  if (s.quota) await cluster.addStorageQuota(ref.namespace, "storage", s.quota);
  await cluster.createStatefulSet(statefulSetManifest({ name: ref.name, replicas: 5, templates: LIVE }));
  // The request, as `kubectl annotate` (or `claimstep set`) writes it.
  await cluster.admin.mergePatch(
    "statefulsets",
    ref.namespace,
    ref.name,
    { metadata: { annotations: { [Keys.templates]: JSON.stringify((s.desired ?? CHANGE).map(claimTemplate)) } } },
    { fieldManager: "kubectl" },
  );
  return cluster;
}

function describeFailure(err: ApiError): string {
  return `${err.code} ${err.reason ?? err.kind}: ${err.message}${err.retryAfterSeconds !== undefined ? ` (Retry-After ${err.retryAfterSeconds}s)` : ""}`;
}

async function main(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArgs({ args: argv, options: { scenario: { type: "string" }, seed: { type: "string" }, quiet: { type: "boolean" }, help: { type: "boolean" } }, strict: true });
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    return 1;
  }
  if (args.values.help) {
    console.log(USAGE);
    return 0;
  }
  const name = args.values.scenario ?? "grow";
  const scenario = SCENARIOS[name];
  if (!scenario) {
    console.error(`unknown scenario "${name}"; choose one of: ${Object.keys(SCENARIOS).join(", ")}`);
    return 1;
  }
  const seedValue = args.values.seed === undefined ? 1 : Number(args.values.seed);
  if (!Number.isInteger(seedValue)) {
    console.error(`--seed must be an integer, not "${args.values.seed}"`);
    return 1;
  }
  const quiet = args.values.quiet === true;
  const say = (text = "") => {
    if (!quiet) console.log(text);
  };

  const realStart = Date.now();
  const cluster = await seed(scenario, seedValue);
  const start = cluster.now().getTime();
  say(`claimstep demo · scenario ${name}: ${scenario.summary}`);
  say(`simulated cluster: StatefulSet ${ref.namespace}/${ref.name}, 5 replicas, claims data 10Gi and wal 2Gi (class fast, wal on VolumeAttributesClass silver)`);
  say(`requested with annotation ${Keys.templates}; one invocation every ${INTERVAL_S} virtual seconds\n`);

  let last: Decision | undefined;
  let lastChange = cluster.now().getTime();
  let lastKey = "";
  let lastProgress = "";
  // Identical Waiting decisions are folded into one line.
  let repeats = 0;
  let quietSince: string | undefined;
  const flushRepeats = () => {
    if (repeats) say(`${" ".repeat(13)}… the same for ${repeats} more invocation(s) from ${quietSince}`);
    repeats = 0;
    quietSince = undefined;
  };
  let invocations = 0;
  let failures = 0;
  let writes = 0;
  for (; invocations < MAX_INVOCATIONS; invocations++) {
    const at = clock(start, cluster.now());
    let result: StepResult | undefined;
    let wait = INTERVAL_S;
    try {
      result = await runStep({ reader: cluster.reader, writer: cluster.writer, ref, now: cluster.now() });
    } catch (err) {
      if (!(err instanceof ApiError && err.isTransient)) throw err;
      failures++;
      flushRepeats();
      say(`[${at}] #${String(invocations + 1).padEnd(3)} ${"(no decision)".padEnd(28)} ↻ could not load the set: ${describeFailure(err)}; nothing was written`);
      wait = Math.max(INTERVAL_S, err.retryAfterSeconds ?? 0);
    }
    if (result) {
      const d = result.decision;
      const first = last === undefined;
      last = d;
      const key = `${d.phase}|${d.reason}|${d.message}`;
      if (key !== lastKey || d.action) lastChange = cluster.now().getTime();
      if (first) say(`${renderDecision(d)}\n`);
      const o = result.outcome;
      const repeat = key === lastKey && !d.action && o.kind !== "retry";
      lastKey = key;
      if (repeat) {
        quietSince ??= at;
        repeats++;
      } else {
        flushRepeats();
        say(`[${at}] #${String(invocations + 1).padEnd(3)} ${`${d.phase}/${d.reason}`.padEnd(28)} ${d.message}`);
      }
      const progress = progressLine(d);
      if (progress !== lastProgress) say(`${" ".repeat(13)}ordinals: ${progress}`);
      lastProgress = progress;
      if (o.kind === "applied") {
        writes++;
        say(`${" ".repeat(13)}✓ ${o.detail ?? "applied"}`);
      } else if (o.kind === "retry") {
        failures++;
        say(`${" ".repeat(13)}↻ ${describeFailure(o.error)}; the next invocation re-reads the cluster and continues`);
        wait = Math.max(INTERVAL_S, o.retryAfterSeconds ?? 0);
      } else if (o.kind === "refused") {
        say(`${" ".repeat(13)}✗ the API server refused the write${o.error ? `: ${describeFailure(o.error)}` : ""}`);
      }
      if (d.phase === "Complete" || d.phase === "Blocked" || d.phase === "Idle") break;
      if (cluster.now().getTime() - lastChange >= STALL_S * 1000) break;
    }
    cluster.advance(wait * 1000);
  }

  flushRepeats();
  const elapsed = clock(start, cluster.now());
  const real = Date.now() - realStart;
  if (!last) {
    console.error(`no invocation could load the set in ${invocations} tries`);
    return 2;
  }
  console.log(quiet ? renderTable(last.ordinals) : `\n${renderDecision(last)}`);
  const tally = `${invocations + 1} invocations, ${writes} claim writes, ${failures} transient failures, ${elapsed} of cluster time in ${real} ms`;
  if (last.phase === "Complete") {
    console.log(`\nComplete: revision ${last.revision} on every claim in scope (${tally}).\n${scenario.lesson}.`);
    return 0;
  }
  const stalled = last.phase !== "Blocked";
  console.log(`\n${stalled ? `Stalled for ${STALL_S / 60} minutes` : "Blocked"}: ${last.reason}: ${last.message}\n(${tally})\n${scenario.lesson}.`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exitCode = 1;
  },
);
