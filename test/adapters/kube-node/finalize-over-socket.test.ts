// The data loss of issue 22, reproduced without a real cluster: `claimstep finalize` through the
// production Node transport (kubeconfig → agentFetch → node:http) to the simulated cluster served
// on a real socket. With a DELETE body sent unframed, the server read no body: the set went in the
// background and the garbage collector took every pod and claim (whenDeleted: Delete), which
// claimstep then reported as "every pod and claim kept". Here: both retention policies keep every
// uid, and the output says kept only after comparing them.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { KubeClientOptions } from "../../../adapters/kube/client.js";
import { KubeReader } from "../../../adapters/kube/reader.js";
import { kubeWriters } from "../../../adapters/kube/writer.js";
import { requestWithAgent } from "../../../adapters/kube-node/agent-fetch.js";
import { nodeKubeTarget } from "../../../adapters/kube-node/kubeconfig.js";
import type { SimCluster } from "../../../adapters/sim/cluster.js";
import { SIM_SERVER } from "../../../adapters/sim/http.js";
import { main, type Target } from "../../../functions/cli.js";
import { SCENARIOS } from "../../../functions/scenarios.js";
import { runStep } from "../../../functions/step.js";

const ref = { namespace: "default", name: "web" };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const bodyOf = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/** `sim` on http://127.0.0.1:<port>, every request handed to its HTTP server as node:http parsed it. */
async function serve(sim: SimCluster): Promise<{ url: string; deletes: { path: string; body: string }[] }> {
  const deletes: { path: string; body: string }[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      if (req.method === "DELETE") deletes.push({ path: req.url ?? "", body: body.toString("utf8") });
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
      const answer = await sim.http.fetch(
        new Request(`${SIM_SERVER}${req.url}`, {
          method: req.method!,
          headers,
          ...(body.length && req.method !== "GET" ? { body: new Uint8Array(body) } : {}),
        }),
      );
      res.writeHead(answer.status, Object.fromEntries(answer.headers));
      res.end(Buffer.from(await answer.arrayBuffer()));
    })().catch((err) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.closeAllConnections?.bind(server);
  cleanups.push(() => server.closeAllConnections());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, deletes };
}

/** The CLI's target on that socket: the production kubeconfig client; pauses move the sim's clock. */
function socketTarget(sim: SimCluster, url: string, extra: Partial<KubeClientOptions> = {}): Target {
  const dir = mkdtempSync(join(tmpdir(), "claimstep-socket-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = join(dir, "config");
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters: [{name: sim, cluster: {server: "${url}"}}]\nusers: [{name: claimstep, user: {token: t}}]\ncontexts: [{name: sim, context: {cluster: sim, user: claimstep, namespace: default}}]\ncurrent-context: sim\n`,
  );
  const { client } = nodeKubeTarget({ kubeconfig }, extra);
  return {
    label: "socket sim",
    namespace: "default",
    reader: new KubeReader(client),
    writers: kubeWriters(client, { reportingInstance: "claimstep-cli" }),
    listOptedIn: async () => [ref],
    now: () => sim.now(),
    pause: async (ms) => sim.advance(ms),
  };
}

const capture = () => {
  const out = { text: "", isTTY: false, write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: { NO_COLOR: "1" } }, out, err };
};

const uids = (sim: SimCluster, resource: "pods" | "persistentvolumeclaims") =>
  Object.fromEntries(
    sim
      .list(resource, "default")
      .filter((o) => o.metadata.name.includes("web-"))
      .map((o) => [o.metadata.name, o.metadata.uid]),
  );

describe("claimstep finalize over node:http (issue 22's data loss)", () => {
  for (const whenDeleted of ["Delete", "Retain"] as const) {
    it(`keeps every pod and claim of a set with whenDeleted: ${whenDeleted}, and says so only after comparing uids`, async () => {
      const sim = await SCENARIOS.grow!.build();
      await sim.admin.mergePatch(
        "statefulsets",
        "default",
        "web",
        { spec: { persistentVolumeClaimRetentionPolicy: { whenDeleted, whenScaled: "Retain" } } },
        { fieldManager: "kubectl" },
      );
      // The rollout to Complete on the simulated cluster itself, then finalize through the socket.
      for (let i = 0; i < 200; i++) {
        const r = await runStep({ reader: sim.reader, writers: sim.writers, ref, now: sim.now() });
        if (r.decision.phase === "Complete") break;
        sim.advance(10_000);
      }
      const pods = uids(sim, "pods");
      const claims = uids(sim, "persistentvolumeclaims");
      expect(Object.keys(pods)).toEqual(["web-0", "web-1", "web-2"]);
      // whenDeleted: Delete makes the set own its claims: a Background delete would take them.
      const owned = sim
        .list("persistentvolumeclaims", "default")
        .filter((c) => c.metadata.ownerReferences?.some((o: { kind: string }) => o.kind === "StatefulSet"));
      expect(owned.length).toBe(whenDeleted === "Delete" ? 6 : 0);
      const oldUid = sim.get("statefulsets", "default", "web")!.metadata.uid;

      const { url, deletes } = await serve(sim);
      const target = socketTarget(sim, url);
      const { io, out } = capture();
      const code = await main(["finalize", "web", "--interval", "5s", "--timeout", "10m"], io, async () => target);

      // What reached the server: the DELETE of the set with its options whole.
      const setDelete = deletes.find((d) => d.path.includes("/statefulsets/web"));
      expect(setDelete, "no DELETE of the set reached the server").toBeDefined();
      expect(JSON.parse(setDelete!.body)).toMatchObject({
        propagationPolicy: "Orphan",
        preconditions: { uid: oldUid },
      });
      expect(uids(sim, "pods")).toEqual(pods);
      expect(uids(sim, "persistentvolumeclaims")).toEqual(claims);
      expect(
        sim.audit.filter(
          (e) => e.verb === "delete" && (e.resource === "pods" || e.resource === "persistentvolumeclaims"),
        ),
      ).toEqual([]);
      expect(sim.get("statefulsets", "default", "web")!.metadata.uid).not.toBe(oldUid);
      expect(out.text).toMatch(/every pod and claim kept \(3 pod\(s\), 6 claim\(s\): the same uids as recorded\)/);
      expect(code).toBe(0);
    });
  }

  // The planted transport bug (the old agentFetch): every DELETE reaches the server with no body.
  const dropDeleteBodies: KubeClientOptions["fetch"] = (url, init) =>
    requestWithAgent(url, init.method === "DELETE" ? { ...init, body: null } : init, undefined);

  for (const whenDeleted of ["Delete", "Retain"] as const) {
    it(`with DELETE bodies dropped (whenDeleted: ${whenDeleted}): Blocked/RecreateReplaced naming what was replaced, a Warning, exit 2, the record kept`, async () => {
      const sim = await SCENARIOS.grow!.build();
      await sim.admin.mergePatch(
        "statefulsets",
        "default",
        "web",
        { spec: { persistentVolumeClaimRetentionPolicy: { whenDeleted, whenScaled: "Retain" } } },
        { fieldManager: "kubectl" },
      );
      for (let i = 0; i < 200; i++) {
        const r = await runStep({ reader: sim.reader, writers: sim.writers, ref, now: sim.now() });
        if (r.decision.phase === "Complete") break;
        sim.advance(10_000);
      }
      const { url } = await serve(sim);
      const target = socketTarget(sim, url, { fetch: dropDeleteBodies });
      const { io, out } = capture();
      const code = await main(["finalize", "web", "--interval", "5s", "--timeout", "10m"], io, async () => target);
      expect(code).toBe(2);
      expect(out.text).not.toMatch(/kept \(/);
      expect(out.text).toMatch(/Blocked +RecreateReplaced/);
      if (whenDeleted === "Delete") {
        // Every pod and claim gone: nothing proves the record is this set's, and a set created from
        // it would start on new, empty claims. Nothing is created; a person decides.
        expect(out.text).toMatch(/pods gone: web-0, web-1, web-2; claims gone: data-web-0, data-web-1, data-web-2/);
        expect(out.text).toMatch(/claimstep creates nothing from it/);
        expect(sim.get("statefulsets", "default", "web"), "no set created from the record").toBeUndefined();
      } else {
        expect(out.text).toMatch(/pods re-created: web-0, web-1, web-2/);
        expect(out.text).not.toMatch(/claims (re-created|gone|deleting)/);
      }
      expect(sim.get("configmaps", "default", "claimstep-recreate-web"), "the record must be kept").toBeDefined();
      const warnings = sim.list("events", "default").filter((e: any) => e.reason === "RecreateReplaced");
      expect(warnings.map((e: any) => e.type)).toContain("Warning");
    });
  }
});
