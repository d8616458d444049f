// The claimstep command spawned as a user runs it (bin/claimstep.js in a new node process), its
// output collected until it exits; killed (code null) when it outlives `timeoutMs`.
import { spawn } from "node:child_process";

export const ROOT = new URL("../..", import.meta.url).pathname;

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runClaimstep(args: readonly string[], env: Record<string, string>, timeoutMs: number): Promise<Run> {
  return new Promise<Run>((resolve, reject) => {
    const child = spawn(process.execPath, [`${ROOT}bin/claimstep.js`, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
