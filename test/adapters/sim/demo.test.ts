// `npm start` (functions/demo.ts) on the embedded simulated cluster: exit codes and messages.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));

function demo(...args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", "functions/demo.ts", ...args], { cwd: root }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr });
    });
  });
}

describe("npm start", () => {
  it("completes the default rollout and exits 0", { timeout: 60_000 }, async () => {
    const { code, out } = await demo("--quiet");
    expect(code).toBe(0);
    expect(out).toMatch(/^Complete: revision \w+ on every claim in scope \(\d+ invocations, 10 claim writes/m);
    expect(out.match(/Updated/g)?.length).toBe(5);
  });

  it("exits 2 with the blocking message of blocked-class", { timeout: 60_000 }, async () => {
    const { code, out } = await demo("--scenario", "blocked-class");
    expect(code).toBe(2);
    expect(out).toContain('Blocked: StorageClassMismatch: data-db-4 has storage class fast but template "data" asks for premium');
  });

  it("rejects an unknown scenario with the list of scenarios", { timeout: 60_000 }, async () => {
    const { code, out } = await demo("--scenario", "nope");
    expect(code).toBe(1);
    expect(out).toContain("choose one of: grow, blocked-class, offline-driver, flaky-api, quota");
  });
});
