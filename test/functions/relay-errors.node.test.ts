// Issue 39 point 3: the relay's errors say what is wrong and what fixes it.
// - A watch refused by RBAC (an API server on 127.0.0.1 answering WATCH with the 403 Status the real
//   one sends) names the verb, the resource, the ServiceAccount and relay.yaml's ServiceAccount,
//   and the same refusal again and again is logged at its 1st, 2nd, 4th, 8th… time, with the count.
// - A delivery that gets no answer logs undici's cause (a self-signed certificate, a closed port)
//   and the setting that fixes it, not a bare "fetch failed".
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubeWatchSource } from "../../functions/kube-target.js";
import { deliver, type RelayClock, RelayEvent, ResilientWatch } from "../../functions/relay/index.js";

const SECRET = `whsec_${Buffer.from("relay-errors-secret-0123456789ab").toString("base64")}`;
const USER = "system:serviceaccount:claimstep:claimstep";

/** The refusal as v1.34 words it (the shape of test/fixtures/apiserver/v1.34/lease-get-forbidden.txt). */
const forbidden = (verb: string) => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: `statefulsets.apps is forbidden: User "${USER}" cannot ${verb} resource "statefulsets" in API group "apps" at the cluster scope`,
  reason: "Forbidden",
  details: { group: "apps", kind: "statefulsets" },
  code: 403,
});

/** Timers at once: the backoff is not waited for. */
const instant: RelayClock = {
  now: () => new Date(),
  setTimeout: (fn) => setImmediate(fn),
  clearTimeout: (h) => clearImmediate(h as NodeJS.Immediate),
};

const listen = async (server: Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
};
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

const until = async (cond: () => boolean, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
};

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "claimstep-relay-errors-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a watch refused by RBAC", () => {
  let server: Server;
  let kubeconfig: string;
  const seen: string[] = [];

  beforeAll(async () => {
    // LIST is granted (the claimstep ClusterRole lists sets), WATCH is not: the relay run as claimstep.
    server = createHttpServer((req, res) => {
      const url = new URL(req.url!, "http://x");
      const watch = url.searchParams.get("watch") === "true";
      seen.push(watch ? "watch" : "list");
      res.writeHead(watch ? 403 : 200, { "content-type": "application/json" });
      res.end(
        JSON.stringify(
          watch ? forbidden("watch") : { kind: "StatefulSetList", metadata: { resourceVersion: "7" }, items: [] },
        ),
      );
    });
    const port = await listen(server);
    kubeconfig = join(dir, "kubeconfig");
    writeFileSync(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}"}}]
users: [{name: u, user: {token: t0ken}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`,
    );
  });
  afterAll(() => close(server));

  it("names the verb, the resource, the ServiceAccount and the fix; repeats are logged at the 1st, 2nd, 4th, 8th… time", async () => {
    const logs: Record<string, any>[] = [];
    const watch = new ResilientWatch({
      source: kubeWatchSource({ kubeconfig }),
      clock: instant,
      path: "/apis/apps/v1/statefulsets",
      onObject: () => {},
      onResync: () => {},
      log: (e) => logs.push(e),
    });
    await until(() => logs.some((l) => l.failures === 16));
    watch.stop();
    await watch.finished;

    const failed = logs.filter((l) => l.msg === "watch failed: reconnecting");
    const first = failed[0]!;
    expect(first).toMatchObject({
      path: "/apis/apps/v1/statefulsets",
      error: forbidden("watch").message,
      forbidden: `${USER} cannot watch statefulsets.apps at the cluster scope`,
      serviceAccount: "claimstep/claimstep",
      failures: 1,
    });
    expect(first.fix).toContain(
      "the relay runs as the ServiceAccount claimstep/claimstep, which may not watch statefulsets.apps",
    );
    expect(first.fix).toContain("run it as the ServiceAccount claimstep-relay of deploy/kubernetes/relay.yaml");
    expect(first.fix).toContain("grant the ServiceAccount claimstep/claimstep list and watch on statefulsets.apps");
    expect(JSON.stringify(first)).not.toMatch(/"error":"Forbidden"/);

    // Throttled: 16 refusals in a row (or a few more), logged at the 1st, 2nd, 4th, 8th and 16th.
    const refusals = seen.filter((s) => s === "watch").length;
    expect(refusals).toBeGreaterThanOrEqual(16);
    expect(refusals).toBeLessThan(32);
    expect(failed.map((l) => l.failures)).toEqual([1, 2, 4, 8, 16]);
    expect(failed[1]).toMatchObject({ failures: 2, nextLogAfter: 4 });
    expect(seen.filter((s) => s === "list")).toHaveLength(1);
  });

  it("a relay that is claimstep-relay already is told to apply relay.yaml's ClusterRole", async () => {
    const { watchFailure } = await import("../../functions/relay/explain.js");
    const { apiErrorFrom } = await import("../../adapters/api-error.js");
    const status = forbidden("list");
    status.message = status.message.replace("claimstep:claimstep", "claimstep:claimstep-relay");
    const fields = watchFailure(apiErrorFrom(403, status));
    expect(fields.serviceAccount).toBe("claimstep/claimstep-relay");
    expect(fields.fix).toMatch(
      /^grant the ServiceAccount claimstep\/claimstep-relay list and watch on statefulsets\.apps: kubectl apply -f deploy\/kubernetes\/relay\.yaml/,
    );
  });
});

describe("a delivery that gets no answer", () => {
  const event = RelayEvent.parse({
    type: "statefulset.changed",
    timestamp: "2026-12-03T10:00:00.000Z",
    data: { namespace: "db", name: "web" },
  });
  const send = (url: string, logs: Record<string, any>[]) =>
    deliver(event, {
      url,
      secret: SECRET,
      fetch: (u, i) => fetch(u, i),
      clock: instant,
      newId: () => "evt_1",
      maxAttempts: 2,
      log: (e) => logs.push(e),
    });

  it("to an https endpoint with a self-signed certificate: the cause's code and the CA setting", async () => {
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"]
        .concat(["-keyout", "self.key", "-out", "self.crt", "-subj", "/CN=127.0.0.1"])
        .concat(["-addext", "subjectAltName=IP:127.0.0.1"]),
      { cwd: dir, stdio: "pipe" },
    );
    const server = createHttpsServer(
      { key: readFileSync(join(dir, "self.key")), cert: readFileSync(join(dir, "self.crt")) },
      (_req, res) => res.end("ok"),
    );
    const port = await listen(server as unknown as Server);
    const logs: Record<string, any>[] = [];
    try {
      const result = await send(`https://127.0.0.1:${port}/v1/relay`, logs);
      expect(result.ok).toBe(false);
      expect(logs.map((l) => l.msg)).toEqual(["relay delivery failed: retrying", "relay delivery gave up"]);
      for (const l of logs) {
        expect(l.cause).toBe("DEPTH_ZERO_SELF_SIGNED_CERT");
        // Node 24 adds its own hint after the message ("; if the root CA is installed locally, try running Node.js with --use-system-ca").
        expect(l.error).toMatch(/^fetch failed \(DEPTH_ZERO_SELF_SIGNED_CERT: self[- ]signed certificate(; [^)]*)?\)$/);
        expect(l.hint).toContain(`the relay does not trust the certificate of https://127.0.0.1:${port}`);
        expect(l.hint).toContain("NODE_EXTRA_CA_CERTS");
      }
      expect(!result.ok && result.error).toContain("DEPTH_ZERO_SELF_SIGNED_CERT");
    } finally {
      await close(server as unknown as Server);
    }
  });

  it("to a port nothing listens on: ECONNREFUSED and the URL setting", async () => {
    const server = createHttpServer();
    const port = await listen(server);
    await close(server);
    const logs: Record<string, any>[] = [];
    await send(`http://127.0.0.1:${port}/v1/relay`, logs);
    expect(logs.at(-1)).toMatchObject({ msg: "relay delivery gave up", cause: "ECONNREFUSED" });
    expect(logs.at(-1)!.error).toMatch(/^fetch failed \(ECONNREFUSED/);
    expect(logs.at(-1)!.hint).toBe(
      `nothing listens at http://127.0.0.1:${port}: check CLAIMSTEP_RELAY_URL (--url) and that the app runs`,
    );
  });
});
