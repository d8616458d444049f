// B10 (issue 33): how long a StatefulSet is missing during claimstep's re-create, per shipped mode,
// run hands-off. The window is from the orphan delete (F2) to the create (F3), on the simulated
// cluster's clock (deterministic: the same figures on any machine), with the garbage collector
// taking `gcMs` to release the orphaned pods and claims. Each mode is the code it ships:
//  - serve: the sweep every CLAIMSTEP_INTERVAL_SECONDS (deploy/kubernetes/deployment.yaml: 60 s);
//  - cronjob: `step --all` every 2 minutes (cronjob.yaml), the same sweep;
//  - worker: the Worker's cron sweep every minute, within its subrequest budget (50);
//  - relay: the app stepping the set on each delivered change (debounce quiet 500 ms), the
//    deletion of the set among them;
//  - before: serve's sweep as it was before issue 33 (no follow-up, opted-in sets only listed).
import { listOptedInSets } from "../adapters/kube/reader.js";
import { SimCluster, statefulSetManifest } from "../adapters/sim/cluster.js";
import { Keys } from "../core/keys.js";
import { isOptedIn } from "../core/policy/annotations.js";
import type { Writers } from "../core/ports.js";
import type { SetRef } from "../core/types.js";
import { DEFAULT_DEBOUNCE } from "../functions/relay/debounce.js";
import { runStep, type StepResult } from "../functions/step.js";
import { sweep } from "../functions/sweep.js";

export interface B10Row {
  mode: string;
  gcMs: number;
  /** F2 → F3 on the cluster's clock; null: the set was never created again. */
  windowMs: number | null;
  /** Steps from the orphan delete to the create, both included. */
  steps: number;
}

const REF = { namespace: "default", name: "web" } as const;
const MODES = ["serve", "cronjob", "worker", "relay", "before"] as const;
type Mode = (typeof MODES)[number];
const INTERVAL_MS: Record<Mode, number> = { serve: 60_000, cronjob: 120_000, worker: 60_000, relay: 0, before: 60_000 };

async function build(gcMs: number): Promise<SimCluster> {
  const sim = new SimCluster({ seed: 10, latencies: { gcMs } });
  await sim.addStorageClass("fast", { allowVolumeExpansion: true, driver: { resize: "online", modify: "ok" } });
  await sim.createStatefulSet(
    statefulSetManifest({
      name: REF.name,
      replicas: 3,
      templates: [{ name: "data", storage: "1Gi", storageClassName: "fast" }],
    }),
    3 * 60_000,
  );
  await sim.admin.mergePatch(
    "statefulsets",
    REF.namespace,
    REF.name,
    {
      metadata: {
        annotations: {
          [Keys.templates]: JSON.stringify([
            { metadata: { name: "data" }, spec: { resources: { requests: { storage: "2Gi" } } } },
          ]),
          [Keys.finalize]: "Recreate",
        },
      },
    },
    { fieldManager: "kubectl" },
  );
  return sim;
}

/** The cluster's writers, the times of the orphan delete and of the create noted. */
function timed(sim: SimCluster, at: { orphaned?: number; created?: number }): Writers {
  const w = sim.writers as Writers;
  const recreate = w.recreate!;
  return {
    ...w,
    recreate: {
      ...recreate,
      writeRecord: (a) => recreate.writeRecord(a),
      armRecord: (a) => recreate.armRecord(a),
      deleteRecord: (a) => recreate.deleteRecord(a),
      labelClaim: (a) => recreate.labelClaim(a),
      orphanSet: async (a) => {
        const r = await recreate.orphanSet(a);
        at.orphaned ??= sim.now().getTime();
        return r;
      },
      createSet: async (a) => {
        const r = await recreate.createSet(a);
        at.created ??= sim.now().getTime();
        return r;
      },
    },
  };
}

async function measure(mode: Mode, gcMs: number): Promise<B10Row> {
  const sim = await build(gcMs);
  const at: { orphaned?: number; created?: number } = {};
  const writers = timed(sim, at);
  let steps = 0;
  let stepsAtOrphan = 0;
  const step = async (ref: SetRef): Promise<StepResult> => {
    steps++;
    const r = await runStep({ reader: sim.reader, writers, ref, now: sim.now() });
    if (at.orphaned !== undefined && stepsAtOrphan === 0) stepsAtOrphan = steps;
    return r;
  };
  const before = mode === "before";
  const list = async (ns: string | undefined): Promise<SetRef[]> => {
    if (!before) return listOptedInSets(sim.client, ns);
    const sets = await sim.admin.list("statefulsets", ns);
    return sets.items
      .filter((s: any) => isOptedIn(s))
      .map((s: any) => ({ namespace: s.metadata.namespace, name: s.metadata.name }));
  };
  const deadline = sim.now().getTime() + 30 * 60_000;
  for (let tick = 0; at.created === undefined && sim.now().getTime() < deadline; tick++) {
    if (mode === "relay") {
      // A delivery per change: the step, then the next change it causes (a set gone: its deletion).
      const r = await step(REF).catch(() => undefined);
      const wait = r?.decision.requeueAfter;
      if (at.orphaned !== undefined && at.created === undefined) {
        // The set goes when the garbage collector is done; the relay delivers that after its quiet time.
        while (sim.get("statefulsets", REF.namespace, REF.name)) sim.advance(50);
        sim.advance(DEFAULT_DEBOUNCE.quietMs);
      } else sim.advance(Math.max(DEFAULT_DEBOUNCE.quietMs, (wait ?? 10) * 1000));
      continue;
    }
    let used = 0;
    await sweep({
      listOptedIn: list,
      namespaces: [],
      tick,
      sleep: async (ms) => sim.advance(ms),
      ...(mode === "worker" ? { budget: { limit: 50, perStep: 10, used: () => used } } : {}),
      step: async (ref) => {
        used += 6;
        const r = await step(ref);
        // Before issue 33 nothing was due at once.
        return before && r.decision.requeueAfter !== undefined && r.decision.requeueAfter < 1
          ? { ...r, decision: { ...r.decision, requeueAfter: 2 } }
          : r;
      },
    });
    sim.advance(INTERVAL_MS[mode]);
  }
  return {
    mode,
    gcMs,
    windowMs: at.orphaned !== undefined && at.created !== undefined ? at.created - at.orphaned : null,
    steps: at.created !== undefined ? steps - stepsAtOrphan + 1 : 0,
  };
}

export async function runB10(log: (line: string) => void): Promise<B10Row[]> {
  const rows: B10Row[] = [];
  for (const gcMs of [200, 1_000, 5_000])
    for (const mode of MODES) {
      const row = await measure(mode, gcMs);
      log(
        `  B10 ${mode} (GC ${gcMs} ms): ${row.windowMs === null ? "never re-created" : `${(row.windowMs / 1000).toFixed(2)} s, ${row.steps} step(s)`}`,
      );
      rows.push(row);
    }
  return rows;
}

/** The Markdown table of the report. */
export function b10Report(rows: readonly B10Row[]): string {
  const lines = [
    "## B10 — the set missing during the re-create, per mode (orphan delete → create, cluster clock)",
    "",
    "| mode | GC | missing for | steps |",
    "|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.mode} | ${r.gcMs} ms | ${r.windowMs === null ? "never re-created" : `${(r.windowMs / 1000).toFixed(2)} s`} | ${r.windowMs === null ? "-" : r.steps} |`,
    ),
  ];
  return lines.join("\n");
}
