// Where the time goes: run a workload of profile-child.ts in its own process under the CPU
// profiler and return its self time by function and by file.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { ProfileSummary } from "./cpuprofile.js";

export type Workload = "plan" | "plan-10" | "validate" | "scheduled";

export async function profileWorkload(workload: Workload): Promise<ProfileSummary> {
  const child = fileURLToPath(new URL("./profile-child.ts", import.meta.url));
  const output = await new Promise<string>((resolve, reject) => {
    const p = spawn(
      process.execPath,
      ["--enable-source-maps", "--max-old-space-size=4096", "--import", "tsx", child, workload],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    p.stdout.on("data", (d: Buffer) => (out += d.toString()));
    p.stderr.on("data", (d: Buffer) => (err += d.toString()));
    p.on("error", reject);
    p.on("close", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`profile-child ${workload} exited ${code}: ${err.trim()}`)),
    );
  });
  const line = output.split("\n").find((l) => l.startsWith("PROFILE "));
  if (!line) throw new Error(`profile-child ${workload} printed no profile`);
  return JSON.parse(line.slice("PROFILE ".length)) as ProfileSummary;
}
