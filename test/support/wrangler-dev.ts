// `wrangler dev` (workerd) as the workerd tests run it: on 127.0.0.1 on a free port (and a free
// inspector port), with --test-scheduled, the Worker's vars given as --var, state persisted to a
// directory of its own, the output collected; ready once /healthz answers, stopped as a whole
// process group (wrangler and its workerd). Stopped and started again it keeps its ports and its
// persisted state (a restart of the runtime: new isolates, the same Durable Objects).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = new URL("../..", import.meta.url).pathname;

/** How long `wrangler dev` may take to answer /healthz (its first start bundles the Worker). */
export const WRANGLER_START_MS = 120_000;

/** A TCP port free on 127.0.0.1 right now. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface WranglerDevOptions {
  /** The Worker's vars and secrets (`--var NAME:value`). */
  vars: Record<string, string>;
  /** The prefix of the state directory (under the system's temporary directory). */
  persistPrefix: string;
  /** A wrangler config of the test's own (`--config`); default: the project's wrangler.toml. */
  config?: string;
}

export class WranglerDev {
  /** Everything wrangler and workerd printed since the last start. */
  output = "";
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    readonly inspectorPort: number,
    readonly persist: string,
    private readonly opts: WranglerDevOptions,
  ) {}

  /** Free ports and a state directory; not started yet. */
  static async create(opts: WranglerDevOptions): Promise<WranglerDev> {
    const [port, inspector] = [await freePort(), await freePort()];
    return new WranglerDev(port, inspector, mkdtempSync(join(tmpdir(), opts.persistPrefix)), opts);
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts it and waits (at most `deadlineMs`) until /healthz answers; throws with the output when it exits or does not answer. */
  async start(deadlineMs = WRANGLER_START_MS): Promise<void> {
    this.output = "";
    const args = [
      join(ROOT, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      ...(this.opts.config ? ["--config", this.opts.config] : []),
      "--ip",
      "127.0.0.1",
      "--port",
      String(this.port),
      "--inspector-port",
      String(this.inspectorPort),
      "--test-scheduled",
      "--show-interactive-dev-session=false",
      "--persist-to",
      this.persist,
      "--log-level",
      "log",
      ...Object.entries(this.opts.vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
    ];
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true", NO_COLOR: "1" },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    child.stdout!.on("data", (d) => (this.output += d));
    child.stderr!.on("data", (d) => (this.output += d));
    const until = Date.now() + deadlineMs;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`wrangler dev exited ${child.exitCode}:\n${this.output}`);
      if (
        await fetch(`${this.base}/healthz`)
          .then((r) => r.ok)
          .catch(() => false)
      )
        return;
      if (Date.now() > until) throw new Error(`wrangler dev did not answer within ${deadlineMs} ms:\n${this.output}`);
      await sleep(250);
    }
  }

  /** Stops the whole process group: SIGTERM, up to 5 s to exit, then SIGKILL. */
  async stop(): Promise<void> {
    const c = this.child;
    if (!c?.pid || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    try {
      process.kill(-c.pid, "SIGTERM");
    } catch {
      // already gone
    }
    await Promise.race([exited, sleep(5000)]);
    try {
      process.kill(-c.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }

  /** Stops it and removes its state directory. */
  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.persist, { recursive: true, force: true });
  }
}
