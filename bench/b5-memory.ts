// B5: peak heap while planning 10,000 replicas. Runs b5-memory-child.ts in its own process
// (--expose-gc --trace-gc) and reads V8's GC trace: the child's forced GCs mark the phases, and
// the peak of a phase is the largest heap seen before any GC within it, or at its end.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface GcEvent {
  kind: string;
  beforeMiB: number;
  afterMiB: number;
  /** A forced `gc()` (V8 reports its reason as "testing"). */
  forced: boolean;
}

const GC_LINE = /ms: ([A-Za-z -]+?) ([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB.*$/;

/** The GC events of a `--trace-gc` output, in order. */
export function gcEvents(trace: string): GcEvent[] {
  const out: GcEvent[] = [];
  for (const line of trace.split("\n")) {
    const m = GC_LINE.exec(line);
    if (m)
      out.push({ kind: m[1]!.trim(), beforeMiB: Number(m[2]), afterMiB: Number(m[4]), forced: /testing/.test(line) });
  }
  return out;
}

/**
 * Peak used heap between the `from`-th and `to`-th forced GC (1-based): the largest size any
 * GC in between found before collecting, including the closing forced GC itself.
 */
export function peakBetween(
  events: readonly GcEvent[],
  from: number,
  to: number,
): { baseMiB: number; peakMiB: number; gcs: number } {
  const forced = events.map((e, i) => (e.forced ? i : -1)).filter((i) => i >= 0);
  const start = forced[from - 1];
  const end = forced[to - 1];
  if (start === undefined || end === undefined) {
    throw new Error(`peakBetween: forced GCs ${from} and ${to} not both in the trace (found ${forced.length})`);
  }
  const window = events.slice(start + 1, end + 1);
  return {
    baseMiB: events[start]!.afterMiB,
    peakMiB: Math.max(...window.map((e) => e.beforeMiB)),
    gcs: window.length - 1,
  };
}

export interface B5Result {
  replicas: number;
  claims: number;
  responseMiB: number;
  /** Heap with the parsed snapshot alive, before planning. */
  snapshotHeapMiB: number;
  /** Peak used heap while planStep ran, and its rise over the snapshot. */
  planPeakMiB: number;
  planPeakRiseMiB: number;
  /** Peak over the whole step from the response text: JSON.parse, then planStep. */
  stepPeakMiB: number;
  /** Heap still held by the decision (its per-ordinal table) after a full GC. */
  decisionRetainedMiB: number;
  gcsWhilePlanning: number;
  decision: string;
}

export async function runB5(replicas = 10_000): Promise<B5Result> {
  const child = fileURLToPath(new URL("./b5-memory-child.ts", import.meta.url));
  const output = await new Promise<string>((resolve, reject) => {
    const p = spawn(
      process.execPath,
      ["--expose-gc", "--trace-gc", "--max-old-space-size=4096", "--import", "tsx", child, String(replicas)],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    let err = "";
    p.stdout.on("data", (d: Buffer) => (out += d.toString()));
    p.stderr.on("data", (d: Buffer) => (err += d.toString()));
    p.on("error", reject);
    p.on("close", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`b5-memory-child exited ${code}: ${err.trim()}`)),
    );
  });
  const line = output.split("\n").find((l) => l.startsWith("B5RESULT "));
  if (!line) throw new Error("b5-memory-child printed no result");
  const r = JSON.parse(line.slice("B5RESULT ".length)) as {
    replicas: number;
    claims: number;
    responseMiB: number;
    withSnapshotMiB: number;
    withDecisionMiB: number;
    decision: string;
  };
  const events = gcEvents(output);
  const plan = peakBetween(events, 2, 3);
  const step = peakBetween(events, 1, 3);
  return {
    replicas: r.replicas,
    claims: r.claims,
    responseMiB: r.responseMiB,
    snapshotHeapMiB: plan.baseMiB,
    planPeakMiB: plan.peakMiB,
    planPeakRiseMiB: plan.peakMiB - plan.baseMiB,
    stepPeakMiB: step.peakMiB,
    decisionRetainedMiB: events.filter((e) => e.forced)[2]!.afterMiB - plan.baseMiB,
    gcsWhilePlanning: plan.gcs,
    decision: r.decision,
  };
}
