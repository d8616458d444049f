// A profiled process (run by profile.ts with --enable-source-maps): warm a workload up, sample it
// with the inspector's CPU profiler, and print self time by function and by file, the frames
// mapped back to the TypeScript sources through the loader's source maps.

import { Session } from "node:inspector/promises";
import { findSourceMap } from "node:module";
import { fileURLToPath } from "node:url";
import { planStep } from "../core/plan/plan.js";
import { invokeScheduled, recordScheduled, withReplay } from "./b4-worker.js";
import { type CallFrame, type CpuProfile, type Place, summarize } from "./cpuprofile.js";
import { DIRECT_WRITER, GENERATED_AT, generateCluster, parseResponses, responsesOf } from "./generate.js";
import { parseRaw, validateResponses } from "./validate.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));

/** A workload: set up, then `run` is sampled (after one warm-up call). */
export const WORKLOADS: Record<string, () => Promise<{ run: () => Promise<void> | void }>> = {
  /** planStep over a mid-rollout snapshot of 1,000 replicas × 3 templates. */
  plan: async () => planLoop(1000, 30),
  /** The same at 10 replicas, where the per-step fixed costs show. */
  "plan-10": async () => planLoop(10, 3000),
  /** Schema validation of the 1,000-replica responses, as the reader does it. */
  validate: async () => {
    const raw = parseRaw(responsesOf(generateCluster({ replicas: 1000, stage: "mid" })));
    return { run: () => repeat(20, () => validateResponses(raw)) };
  },
  /** The Worker's scheduled invocation over 100 replicas × 3 templates, answered from recorded responses. */
  scheduled: async () => {
    const recorded = await recordScheduled();
    return {
      run: async () => {
        for (let i = 0; i < 150; i++) await withReplay(recorded, invokeScheduled);
      },
    };
  },
};

function repeat(n: number, fn: () => unknown): void {
  for (let i = 0; i < n; i++) fn();
}

function planLoop(replicas: number, times: number) {
  const snapshot = parseResponses(responsesOf(generateCluster({ replicas, stage: "mid" })));
  return { run: () => repeat(times, () => planStep(snapshot, GENERATED_AT, DIRECT_WRITER)) };
}

const maps = new Map<string, ReturnType<typeof findSourceMap>>();

function place(frame: CallFrame): Place {
  // Profiling through an in-process inspector session costs time in its message dispatch.
  if (frame.functionName === "dispatch" && !frame.url)
    return { function: "(profiler overhead: inspector dispatch)", file: "" };
  const fn = frame.functionName || (frame.url ? "(anonymous)" : "(program)");
  if (!frame.url.startsWith("file://")) return { function: fn, file: frame.url };
  if (!maps.has(frame.url)) maps.set(frame.url, findSourceMap(frame.url));
  const entry = maps.get(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber) as
    | { originalSource?: string; originalLine?: number }
    | undefined;
  const source = entry?.originalSource ?? frame.url;
  const file = fileURLToPath(source).replace(REPO, "");
  const line = entry?.originalLine !== undefined ? entry.originalLine + 1 : undefined;
  return { function: fn, file, ...(line !== undefined && entry?.originalSource ? { line } : {}) };
}

const name = process.argv[2] ?? "";
const workload = WORKLOADS[name];
if (!workload)
  throw new Error(
    `profile-child: unknown workload ${JSON.stringify(name)} (one of ${Object.keys(WORKLOADS).join(", ")})`,
  );
const { run } = await workload();
await run();
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: 200 });
await session.post("Profiler.start");
await run();
const { profile } = (await session.post("Profiler.stop")) as { profile: CpuProfile };
session.disconnect();
process.stdout.write(`PROFILE ${JSON.stringify(summarize(profile, place, 40))}\n`);
