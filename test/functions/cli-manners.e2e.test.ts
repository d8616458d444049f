// The CLI spawned through its bin launcher: its stdout read by a reader that closes early (as
// `claimstep … | head -1`), it stops writing and exits cleanly, with no EPIPE stack trace; serve
// with a bad port or a port in use exits at once with one line.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

import { ROOT, runClaimstep } from "../support/spawn-cli.js";

// The simulated cluster's saved state goes to a directory of this test's own.
const STATE = mkdtempSync(join(tmpdir(), "claimstep-pipe-"));
afterAll(() => rmSync(STATE, { recursive: true, force: true }));

const ENV = { NO_COLOR: "1", XDG_STATE_HOME: STATE, CLAIMSTEP_API_TOKEN: "0123456789abcdef0123456789abcdef" };

interface Closed {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** What the reader read before it closed. */
  read: string;
  stderr: string;
}

/** Spawn claimstep; the reader closes stdout after `lines` lines (0: before anything is written). */
const closedEarly = (lines: number, ...args: string[]) =>
  new Promise<Closed>((resolve, reject) => {
    const child = spawn(process.execPath, [`${ROOT}bin/claimstep.js`, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...ENV },
    });
    let read = "";
    let stderr = "";
    if (lines === 0) child.stdout.destroy();
    else
      child.stdout.on("data", (d) => {
        read += d;
        if (read.split("\n").length > lines) child.stdout.destroy();
      });
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, read, stderr });
    });
  });

describe("claimstep | a reader that closes early", () => {
  it("run | head -1: exit 0, no EPIPE trace", async () => {
    const r = await closedEarly(1, "run", "web", "--cluster", "sim:grow", "-o", "json", "--interval", "1s");
    expect(r.stderr).toBe("");
    expect(r.signal).toBeNull();
    expect(r.code).toBe(0);
    expect(JSON.parse(r.read.split("\n")[0]!)).toMatchObject({ step: 1 });
  });

  it("a reader gone before the first line: exit 0, no EPIPE trace", async () => {
    for (const args of [["run", "web", "--cluster", "sim:vac"], ["--help"], ["completion", "bash"]]) {
      const r = await closedEarly(0, ...args);
      expect(r.stderr, args.join(" ")).toBe("");
      expect(r.code, args.join(" ")).toBe(0);
    }
  });
});

describe("claimstep serve that cannot listen", () => {
  /** Spawn claimstep serve; killed (code null) if still running after 20 s. */
  const serve = (...args: string[]) => runClaimstep(["serve", "--cluster", "sim", ...args], ENV, 20_000);

  it("--port abc: exit 1 at once, one line (it used to hang)", async () => {
    const r = await serve("--port", "abc");
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `claimstep: serve: --port "abc" is not a port: give a number from 1 to 65535 (0: any free one), e.g. --port 8080\n`,
    );
  });

  it("a port in use: exit 1, one line naming the fix (no EADDRINUSE trace)", async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const r = await serve("--port", String(port));
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `claimstep: cannot listen on 127.0.0.1:${port}: the port is in use (EADDRINUSE); stop what listens there or choose another with --port (or PORT)\n`,
      );
    } finally {
      busy.close();
    }
  });
});
