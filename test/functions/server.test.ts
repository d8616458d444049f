// The Node server: real sockets, the interval loop, graceful shutdown, and `claimstep serve`
// spawned on the simulated cluster and stopped with SIGTERM.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { createApp } from "../../functions/app.js";
import { RecentIds } from "../../functions/auth.js";
import { startServer } from "../../functions/server.js";
import { capturedSim, desiredData } from "../support/index.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const TOKEN = "serve-token-0123456789abcdef";

const until = async (cond: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe("startServer", () => {
  it("serves the app over HTTP and runs the interval loop, never two passes at once", async () => {
    const cluster = capturedSim(desiredData("2Gi"));
    const app = createApp({
      reader: cluster.reader,
      writers: cluster.writers,
      auth: { bearerTokens: [TOKEN], webhookSecrets: [], replay: new RecentIds() },
      now: () => new Date(),
    });
    let passes = 0;
    let concurrent = 0;
    let maxConcurrent = 0;
    const logs: any[] = [];
    const server = await startServer({
      app,
      port: 0,
      hostname: "127.0.0.1",
      intervalMs: 10,
      log: (e) => logs.push(e),
      tick: async () => {
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        await new Promise((r) => setTimeout(r, 50)); // longer than the interval
        passes++;
        concurrent--;
      },
    });
    const res = await fetch(`http://127.0.0.1:${server.port}/v1/statefulsets/default/web`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).decision.phase).toBe("Progressing");
    await until(() => passes >= 3);
    await server.close();
    const after = passes;
    await new Promise((r) => setTimeout(r, 100));
    expect(passes).toBe(after); // the loop stopped
    expect(maxConcurrent).toBe(1);
    await expect(fetch(`http://127.0.0.1:${server.port}/healthz`)).rejects.toThrow();
    expect(logs.map((l) => l.msg)).toEqual(expect.arrayContaining(["listening", "shutting down", "stopped"]));
  });

  it("lets an in-flight request finish on shutdown", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const app = new Hono().get("/slow", async (c) => {
      await gate;
      return c.text("done");
    });
    const server = await startServer({ app, port: 0, hostname: "127.0.0.1", log: () => {} });
    const pending = fetch(`http://127.0.0.1:${server.port}/slow`);
    await new Promise((r) => setTimeout(r, 100));
    const closed = server.close();
    release();
    const res = await pending;
    expect(await res.text()).toBe("done");
    await closed;
  });
});

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

describe("claimstep serve (spawned)", () => {
  it("serves the simulated cluster and exits 0 on SIGTERM", async () => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [`${ROOT}bin/claimstep.js`, "serve", "--cluster", "sim", "--port", String(port)],
      {
        cwd: ROOT,
        env: { ...process.env, CLAIMSTEP_API_TOKEN: TOKEN, CLAIMSTEP_INTERVAL_SECONDS: "1" },
      },
    );
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    try {
      await until(() => output.includes('"msg":"listening"'), 30_000);
      const res = await fetch(`http://127.0.0.1:${port}/v1/statefulsets/default/web`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).decision.ref).toEqual({ namespace: "default", name: "web" });
      await until(() => output.includes('"msg":"sweep"'), 15_000); // the interval loop stepped
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(output).toMatch(/"msg":"signal","signal":"SIGTERM"/);
      expect(output).toMatch(/"msg":"stopped"/);
      expect(output).not.toContain(TOKEN);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 60_000);
});
