// Issue 24 item 3: what unauthenticated clients cost `claimstep serve`. Starts `claimstep serve
// --cluster sim` in its own process, opens N connections on 127.0.0.1 that each POST /v1/steps
// without a token and send the body one byte short of the body limit (then stall), and reports the
// server process's RSS before and after, and what the connections got back.
//
//   npx tsx bench/stalled-bodies.ts [connections=300] [path=/v1/steps] [limit=262144]
// (the admission webhook, unauthenticated by design: /v1/admission/statefulsets 8388608)
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const N = Number(process.argv[2] ?? 300);
const PATH = process.argv[3] ?? "/v1/steps";
const LIMIT = Number(process.argv[4] ?? 256 * 1024); // CLAIMSTEP_BODY_LIMIT_BYTES's default
const TOKEN = "bench-token-0123456789abcdef";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

const port = await freePort();
const child = spawn(
  process.execPath,
  [`${ROOT}bin/claimstep.js`, "serve", "--cluster", "sim", "--port", String(port)],
  {
    cwd: ROOT,
    env: { ...process.env, CLAIMSTEP_API_TOKEN: TOKEN, CLAIMSTEP_INTERVAL_SECONDS: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  },
);
let out = "";
child.stdout.on("data", (d) => (out += d));
for (let i = 0; i < 600 && !out.includes('"msg":"listening"'); i++) await sleep(50);
if (!out.includes('"msg":"listening"')) throw new Error(`the server did not start:\n${out}`);

// Warm up (the first request loads the routes), then settle.
await fetch(`http://127.0.0.1:${port}/healthz`);
await sleep(1000);
const before = rssMiB(child.pid!);

const head = [
  `POST ${PATH} HTTP/1.1`,
  "Host: 127.0.0.1",
  "Content-Type: application/json",
  `Content-Length: ${LIMIT}`,
  "",
  "",
].join("\r\n");
const body = Buffer.alloc(LIMIT - 1, 0x78);
const conns: Array<{ socket: Socket; answered: boolean; closed: boolean }> = [];
await Promise.all(
  Array.from(
    { length: N },
    () =>
      new Promise<void>((resolve) => {
        const socket = connect(port, "127.0.0.1");
        const c = { socket, answered: false, closed: false };
        conns.push(c);
        socket.on("data", () => (c.answered = true));
        socket.on("error", () => undefined);
        socket.on("close", () => {
          c.closed = true;
          resolve();
        });
        socket.on("connect", () => {
          socket.write(head);
          socket.write(body, () => resolve()); // flushed to the kernel; the last byte never comes
        });
      }),
  ),
);
await sleep(3000);
const after = rssMiB(child.pid!);
let peak = after;
for (let i = 0; i < 5; i++) {
  await sleep(500);
  peak = Math.max(peak, rssMiB(child.pid!));
}
const answered = conns.filter((c) => c.answered).length;
const closed = conns.filter((c) => c.closed).length;
console.log(
  JSON.stringify({
    path: PATH,
    connections: N,
    bodyBytes: LIMIT - 1,
    rssBeforeMiB: Math.round(before),
    rssAfterMiB: Math.round(after),
    rssPeakMiB: Math.round(peak),
    answered,
    closedByServer: closed,
  }),
);

for (const c of conns) c.socket.destroy();
child.kill("SIGTERM");
await new Promise((r) => child.on("close", r));
