// Reading a V8 CPU profile (inspector Profiler.stop, or node --cpu-prof): self time per function
// and per file or package, so a missed target names the function where the time goes. Async
// code resumes on microtask stacks, so self time (not inclusive time) is what stays meaningful.

export interface CallFrame {
  functionName: string;
  url: string;
  /** 0-based, in the code V8 ran (transpiled). */
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame is in the sources a person reads: `file` relative to the repository, 1-based line. */
export interface Place {
  function: string;
  file: string;
  line?: number;
}

export interface SelfTime {
  name: string;
  selfMs: number;
  share: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** Largest self time first. */
  functions: SelfTime[];
  /** Self time by package (`zod`, `node:internal`, …) or repository file (`core/plan/plan.ts`). */
  files: SelfTime[];
}

/** The package or file a place belongs to: `zod` for …/node_modules/zod/…, else the file itself. */
export function groupOf(file: string): string {
  const nm = file.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const parts = file.slice(nm + "node_modules/".length).split("/");
    return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (file.startsWith("node:"))
    return file.startsWith("node:internal/deps/") ? `node:${file.split("/")[2]}` : "node:internal";
  return file || "(VM)";
}

const top = (m: Map<string, number>, totalUs: number, limit: number): SelfTime[] =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([name, us]) => ({ name, selfMs: us / 1000, share: totalUs ? us / totalUs : 0 }));

/** Self time per function and per file, the frames named by `place`. */
export function summarize(profile: CpuProfile, place: (frame: CallFrame) => Place, limit = 15): ProfileSummary {
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id);
    if (!us) continue;
    const p = place(node.callFrame);
    const name = p.file ? `${p.function} (${p.file}${p.line ? `:${p.line}` : ""})` : p.function;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    const group = p.file ? groupOf(p.file) : p.function;
    byFile.set(group, (byFile.get(group) ?? 0) + us);
    total += us;
  }
  return { totalMs: total / 1000, functions: top(byFunction, total, limit), files: top(byFile, total, limit) };
}
