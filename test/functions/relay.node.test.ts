// The relay end to end on Node: client-node watches (through a kubeconfig) of a small watch-serving
// API server on 127.0.0.1, debounce, and signed POSTs to the Node server running the app, which
// verifies them and steps the set.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Keys } from "../../core/keys.js";
import { createApp } from "../../functions/app.js";
import { RecentIds } from "../../functions/auth.js";
import { kubeWatchSource } from "../../functions/kube-target.js";
import { deliver, Relay, systemClock } from "../../functions/relay/index.js";
import { type RunningServer, startServer } from "../../functions/server.js";
import { fixtureJson as fixture } from "../fixtures/apiserver.js";
import { capturedSim, claimApplies, desiredData } from "../support/index.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const TOKEN = "watch-token";
const SECRET = `whsec_${Buffer.from("relay-e2e-secret-0123456789abcd").toString("base64")}`;
const RESOURCES = {
  "/apis/apps/v1/namespaces/default/statefulsets": () => {
    const web = fixture("statefulset-web.json");
    web.metadata.annotations = { [Keys.strategy]: "InPlace" };
    return [web];
  },
  "/api/v1/namespaces/default/persistentvolumeclaims": () => fixture("pvc-list.json").items,
  "/api/v1/namespaces/default/pods": () => fixture("pod-list.json").items,
} as Record<string, () => any[]>;

/** LIST and WATCH of three resources; `emit` writes a watch line to the open streams of a path. */
const watchServer = () => {
  const streams = new Map<string, ServerResponse[]>();
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url!, "http://x");
    seen.push(`${url.pathname}${url.searchParams.get("watch") ? " watch" : ""}`);
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401, { "content-type": "application/json" });
      return res.end(JSON.stringify({ kind: "Status", code: 401, reason: "Unauthorized", message: "Unauthorized" }));
    }
    const items = RESOURCES[url.pathname];
    if (!items) {
      res.writeHead(404);
      return res.end();
    }
    if (url.searchParams.get("watch") === "true") {
      res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
      res.flushHeaders();
      streams.set(url.pathname, [...(streams.get(url.pathname) ?? []), res]);
      req.on("close", () =>
        streams.set(
          url.pathname,
          (streams.get(url.pathname) ?? []).filter((r) => r !== res),
        ),
      );
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ kind: "List", metadata: { resourceVersion: "500" }, items: items() }));
  });
  return {
    server,
    seen,
    watching: (path: string) => (streams.get(path) ?? []).length,
    emit: (path: string, type: string, object: unknown) => {
      for (const res of streams.get(path) ?? []) res.write(`${JSON.stringify({ type, object })}\n`);
    },
    closeStreams: () => {
      for (const list of streams.values()) for (const res of list) res.end();
    },
  };
};

const until = async (cond: () => boolean, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe("relay on Node", () => {
  const kube = watchServer();
  const cluster = capturedSim(desiredData("2Gi"));
  const logs: any[] = [];
  let app: RunningServer;
  let dir = "";
  let kubeconfig = "";

  beforeAll(async () => {
    await new Promise<void>((resolve) => kube.server.listen(0, "127.0.0.1", resolve));
    const port = (kube.server.address() as AddressInfo).port;
    dir = mkdtempSync(join(tmpdir(), "claimstep-relay-"));
    kubeconfig = join(dir, "config");
    writeFileSync(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: ${TOKEN}}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`,
    );
    app = await startServer({
      app: createApp({
        reader: cluster.reader,
        writers: cluster.writers,
        auth: { bearerTokens: [], webhookSecrets: [SECRET], replay: new RecentIds() },
        now: () => new Date(),
        log: (e) => logs.push(e),
      }),
      port: 0,
      hostname: "127.0.0.1",
      log: () => {},
    });
  });

  afterAll(async () => {
    kube.closeStreams();
    await new Promise<void>((resolve) => kube.server.close(() => resolve()));
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lists and watches through the kubeconfig, and each burst of changes steps the set once", async () => {
    const relayLogs: any[] = [];
    const relay = new Relay({
      source: kubeWatchSource({ kubeconfig }),
      clock: systemClock,
      namespaces: ["default"],
      debounce: { quietMs: 100, maxWaitMs: 1000 },
      log: (e) => relayLogs.push(e),
      send: (event) =>
        deliver(event, {
          url: `http://127.0.0.1:${app.port}/v1/relay`,
          secret: SECRET,
          fetch,
          clock: systemClock,
          newId: () => `evt_${crypto.randomUUID()}`,
          log: () => {},
        }),
    });
    relay.start();
    try {
      // The initial list of the opted-in set is a change: one signed event, one step that applies.
      await until(() => claimApplies(cluster).length === 1);
      expect(relay.tracked()).toEqual([{ namespace: "default", name: "web" }]);
      const pvcPath = "/api/v1/namespaces/default/persistentvolumeclaims";
      await until(() => kube.watching(pvcPath) === 1 && kube.watching("/api/v1/namespaces/default/pods") === 1);
      expect(kube.seen).toEqual(expect.arrayContaining([pvcPath, `${pvcPath} watch`]));

      // A burst of claim and pod changes: one more event, one more step.
      const steps = () => logs.filter((l) => l.msg === "step" && l.via === "relay").length;
      const before = steps();
      const pvc = fixture("pvc-list.json").items[2];
      pvc.metadata.resourceVersion = "600";
      kube.emit(pvcPath, "MODIFIED", pvc);
      kube.emit(pvcPath, "MODIFIED", { ...pvc, metadata: { ...pvc.metadata, resourceVersion: "601" } });
      kube.emit("/api/v1/namespaces/default/pods", "MODIFIED", fixture("pod-list.json").items[2]);
      await until(() => steps() === before + 1);
      await new Promise((r) => setTimeout(r, 300));
      expect(steps()).toBe(before + 1);
      expect(relayLogs.filter((l) => l.msg === "relay event").at(-1)).toMatchObject({ name: "web", causes: 2 }); // the two claim events share one cause
      expect(logs.filter((l) => l.msg === "auth rejected")).toEqual([]);
    } finally {
      await relay.stop();
    }
  }, 30_000);

  it("`claimstep relay` (spawned) sends a signed event for the opted-in set and exits 0 on SIGTERM", async () => {
    const before = logs.filter((l) => l.msg === "step" && l.via === "relay").length;
    const child = spawn(
      process.execPath,
      [`${ROOT}bin/claimstep.js`, "relay", "--kubeconfig", kubeconfig, "-n", "default"],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          CLAIMSTEP_WEBHOOK_SECRET: SECRET,
          CLAIMSTEP_RELAY_URL: `http://127.0.0.1:${app.port}/v1/relay`,
        },
      },
    );
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    try {
      // Its initial list of the opted-in set is a change: one signed event, verified and stepped.
      await until(() => logs.filter((l) => l.msg === "step" && l.via === "relay").length === before + 1, 30_000);
      expect(output).toMatch(/"msg":"relay started".*"namespaces":\["default"\]/);
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(output).toMatch(/"msg":"relay stopped"/);
      expect(output).not.toContain(SECRET);
      expect(logs.filter((l) => l.msg === "auth rejected")).toEqual([]);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 60_000);
});
