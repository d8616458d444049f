// The CLI end to end: spawned through its bin launcher (as `npx claimstep` runs it), against the
// embedded simulated cluster.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

import { type Run, runClaimstep } from "../support/spawn-cli.js";

/** Each run on a simulated cluster of its own: a new state directory (`--cluster sim` keeps the cluster there). */
async function claimstep(...args: string[]): Promise<Run> {
  const state = mkdtempSync(join(tmpdir(), "claimstep-e2e-"));
  try {
    return await runClaimstep(args, { NO_COLOR: "1", XDG_STATE_HOME: state }, 60_000);
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}

describe("claimstep (spawned, --cluster sim)", () => {
  it("--help shows usage and examples, exit 0", async () => {
    const r = await claimstep("--help");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage:/);
    expect(r.stdout).toMatch(/Examples:/);
    expect(r.stdout).toMatch(/claimstep run web --cluster sim/);
  });

  it("run steps a rollout to Complete and exits 0, one plain line per change (no TTY)", async () => {
    const r = await claimstep("run", "web", "--cluster", "sim");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines.filter((l) => / default\/web {2}Progressing {2}ClaimUpdated /.test(l))).toHaveLength(6); // one apply per claim: data and wal of 3 ordinals
    expect(r.stdout).toMatch(/default\/web {2}Complete {2}RolloutComplete .*3\/3 updated/);
    expect(r.stdout).toMatch(/data-web-0 +2Gi +2Gi +2Gi/);
    expect(r.stdout).not.toMatch(/\x1b\[/); // no terminal control codes in a pipe
  });

  it("run on a blocked set exits 2 and says why", async () => {
    const r = await claimstep("run", "web", "--cluster", "sim:blocked");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /default\/web is blocked \(ExpansionNotAllowed\): data-web-2: StorageClass fast does not set allowVolumeExpansion: true/,
    );
  });

  it("run -o json prints one object per step; a resize the driver rejects ends Blocked/ResizeFailed, exit 2", async () => {
    const r = await claimstep("run", "web", "--cluster", "sim:infeasible", "-o", "json");
    expect(r.code).toBe(2);
    const steps = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(steps[0]).toMatchObject({ step: 1, outcome: { kind: "applied" }, decision: { phase: "Progressing" } });
    expect(steps.at(-1).decision).toMatchObject({ phase: "Blocked", reason: "ResizeFailed" });
    expect(steps.at(-1).decision.message).toMatch(/ControllerResizeInfeasible/);
  });

  it("plan writes nothing and prints the table; -o json gives the decision", async () => {
    const text = await claimstep("plan", "web", "--cluster", "sim");
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/action: PatchClaim default\/data-web-2 storage=2Gi/);
    expect(text.stdout).toMatch(/dry run: nothing written/);
    const json = await claimstep("plan", "web", "--cluster", "sim", "-o", "json");
    expect(JSON.parse(json.stdout)).toMatchObject({
      outcome: { kind: "dry-run" },
      decision: { phase: "Progressing", action: { claim: "data-web-2" } },
    });
  });

  it("set writes the desired template, opts the set in, and shows the next step", async () => {
    const r = await claimstep("set", "web", "data", "--storage", "3Gi", "--cluster", "sim:opted-out", "-o", "json");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ changed: true, ref: { namespace: "default", name: "web" } });
    expect(out.templates[0].spec.resources.requests.storage).toBe("3Gi");
    expect(out.plan.decision).toMatchObject({ phase: "Progressing", action: { claim: "data-web-2", storage: "3Gi" } });
  });

  it("errors exit 1 with a message naming the fix", async () => {
    const unknownClaim = await claimstep("set", "web", "logs", "--storage", "3Gi", "--cluster", "sim");
    expect(unknownClaim.code).toBe(1);
    expect(unknownClaim.stderr).toMatch(/has no claim template "logs" \(it has: data, wal\)/);
    const badFlag = await claimstep("plan", "web", "--bogus");
    expect(badFlag.code).toBe(1);
    expect(badFlag.stderr).toMatch(/^claimstep plan: unknown flag: --bogus\n\nclaimstep plan — /);
    const missing = await claimstep("status", "nope", "--cluster", "sim");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/"nope" not found/);
  });
});
