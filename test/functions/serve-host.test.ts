// `claimstep serve` binds 127.0.0.1 unless told otherwise (--host, or CLAIMSTEP_HOST as the
// container image sets it): spawned on the simulated cluster, reached (or not) through this
// machine's non-loopback address.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { networkInterfaces } from "node:os";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../..", import.meta.url).pathname;
const TOKEN = "serve-token-0123456789abcdef";

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

/** An IPv4 address of this machine other than loopback, if it has one. */
const external = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === "IPv4" && !a.internal)?.address;

const reachable = async (host: string, port: number): Promise<boolean> => {
  try {
    const res = await fetch(`http://${host}:${port}/healthz`, { signal: AbortSignal.timeout(3000) });
    return res.ok;
  } catch {
    return false;
  }
};

async function serve(args: string[], env: Record<string, string> = {}) {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [`${ROOT}bin/claimstep.js`, "serve", "--cluster", "sim", "--port", String(port), ...args],
    {
      cwd: ROOT,
      env: { ...process.env, CLAIMSTEP_HOST: "", CLAIMSTEP_API_TOKEN: TOKEN, ...env },
    },
  );
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const end = Date.now() + 30_000;
  while (!output.includes('"msg":"listening"')) {
    if (Date.now() > end || child.exitCode !== null) throw new Error(`serve did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const listening = JSON.parse(output.split("\n").find((l) => l.includes('"msg":"listening"'))!);
  return {
    port,
    listening,
    stop: async () => {
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    },
  };
}

describe("claimstep serve --host", () => {
  // Defect: serve always bound 0.0.0.0, exposing the API on every interface of a laptop or CI runner.
  it("binds 127.0.0.1 by default: reachable on loopback only", async () => {
    const s = await serve([]);
    try {
      expect(s.listening).toMatchObject({ host: "127.0.0.1", port: s.port });
      expect(await reachable("127.0.0.1", s.port)).toBe(true);
      if (external) expect(await reachable(external, s.port)).toBe(false);
    } finally {
      await s.stop();
    }
  }, 60_000);

  it("binds what --host (or CLAIMSTEP_HOST, as the container image sets it) names", async () => {
    const s = await serve([], { CLAIMSTEP_HOST: "0.0.0.0" });
    try {
      expect(s.listening).toMatchObject({ host: "0.0.0.0" });
      if (external) expect(await reachable(external, s.port)).toBe(true);
    } finally {
      await s.stop();
    }
    const flag = await serve(["--host", "127.0.0.1"], { CLAIMSTEP_HOST: "0.0.0.0" });
    try {
      expect(flag.listening).toMatchObject({ host: "127.0.0.1" });
      if (external) expect(await reachable(external, flag.port)).toBe(false);
    } finally {
      await flag.stop();
    }
  }, 60_000);
});
