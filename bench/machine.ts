// The machine a run's figures came from.
import { readFileSync } from "node:fs";
import { availableParallelism, cpus, totalmem } from "node:os";

export interface Machine {
  cpu: string;
  /** What `nproc` says: CPUs available to this process. */
  nproc: number;
  node: string;
  platform: string;
  memoryGiB: number;
}

/** The CPU model from /proc/cpuinfo (else what Node reports). */
export function cpuModel(cpuinfo?: string): string {
  let text = cpuinfo;
  if (text === undefined) {
    try {
      text = readFileSync("/proc/cpuinfo", "utf8");
    } catch {
      text = "";
    }
  }
  const m = /^model name\s*:\s*(.+)$/m.exec(text);
  return m?.[1]?.trim() || cpus()[0]?.model || "unknown";
}

export function machine(): Machine {
  return {
    cpu: cpuModel(),
    nproc: availableParallelism(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
  };
}
