// Autogrow and the relay on a real API server v1.34, through the shipped CLI: usage read from a
// fake Prometheus HTTP API (the real response shape) raises the template and grows the claims;
// `claimstep relay` follows a real watch and POSTs signed events, which a spawned
// `claimstep serve` turns into the steps of a whole rollout (its sweep off).
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeAudit, storageClass, useControlPlane, waitFor } from "./support/index.js";
import {
  auditCaughtUp,
  type CliRun,
  claimsOf,
  claimstep,
  claimstepRequestsIn,
  countRequests,
  createSet,
  describeRun,
  expectBudgetPerStep,
  expectCleanAudit,
  expectWithinBudget,
  jsonLines,
  RELAY_USER,
  relayKubeconfig,
  sleep,
} from "./support/scenario-finalize.js";

const e2e = useControlPlane({ prefix: "autogrow", needsFakeDriver: true });
const passed: string[] = [];
let sc = "";
const GI = 2 ** 30;

beforeAll(async () => {
  if (!e2e.local) return;
  sc = `${e2e.namespace}-fast`;
  const r = await e2e.admin.create("storageclasses", null, storageClass(sc, { resizeLatencyMs: 300 }));
  expect(r.status).toBe(201);
});

afterAll(async () => {
  if (!e2e.local) return;
  await e2e.admin.delete("storageclasses", null, sc).catch(() => undefined);
  console.log(
    `real-server scenarios: ${passed.length} passed against ${e2e.info.version} (autogrow and relay: ${passed.join("; ")})`,
  );
});

const timed = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
  const t0 = Date.now();
  const out = await fn();
  passed.push(`${what} ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return out;
};
const steps = (r: CliRun) => jsonLines(r.stdout).filter((l) => l.decision);
const listen = (s: Server) =>
  new Promise<number>((res) => s.listen(0, "127.0.0.1", () => res((s.address() as AddressInfo).port)));
const close = (s: Server) => new Promise<void>((res) => s.close(() => res()));
const stop = async (child: ChildProcess | undefined, run: Promise<CliRun>) => {
  child?.kill("SIGTERM");
  return run;
};

describe("autogrow against a Prometheus HTTP API", () => {
  it("usage over the threshold → the template rises 1Gi → 2Gi, every claim grows, Complete at 2Gi", {
    timeout: 180_000,
  }, async () => {
    await timed("autogrow", async () => {
      const set = "web-grow";
      const since = Date.now();
      await createSet(e2e, set, {
        storageClass: sc,
        replicas: 2,
        annotations: {
          "claimstep.io/volume-claim-update-strategy": "InPlace",
          "claimstep.io/autogrow": JSON.stringify({ threshold: "80%", increase: "50%", max: "8Gi" }),
        },
      });
      // The kubelet's figures: used bytes per claim (set by the test), capacity as the claim's
      // status says now (read from the API server at each query).
      const used: Record<string, number> = { [`data-${set}-0`]: 0.1 * GI, [`data-${set}-1`]: 0.1 * GI };
      const queries: string[] = [];
      const prom = createServer((req, res) => {
        void (async () => {
          const url = new URL(req.url ?? "/", "http://x");
          if (url.pathname !== "/api/v1/query") {
            res.writeHead(404, { "content-type": "text/plain" }).end("404 page not found");
            return;
          }
          const query = url.searchParams.get("query") ?? "";
          queries.push(query);
          const at = Date.now() / 1000;
          const result: unknown[] = [];
          for (const c of await claimsOf(e2e, set)) {
            const name = c.metadata.name!;
            if (!query.includes(name)) continue;
            const capacity =
              c.status?.capacity?.storage === "2Gi" ? 2 * GI : c.status?.capacity?.storage === "1Gi" ? GI : Number.NaN;
            const labels = {
              endpoint: "https-metrics",
              instance: "10.0.0.10:10250",
              job: "kubelet",
              metrics_path: "/metrics",
              namespace: e2e.namespace,
              node: "e2e-node",
              persistentvolumeclaim: name,
              service: "kubelet",
            };
            // The file system is a little smaller than the volume, as the kubelet reports it.
            result.push({
              metric: { __name__: "kubelet_volume_stats_capacity_bytes", ...labels },
              value: [at, String(Math.round(capacity * 0.98))],
            });
            result.push({
              metric: { __name__: "kubelet_volume_stats_used_bytes", ...labels },
              value: [at, String(Math.round(used[name] ?? 0))],
            });
          }
          res
            .writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify({ status: "success", data: { resultType: "vector", result } }));
        })();
      });
      const port = await listen(prom);
      const env = { CLAIMSTEP_PROMETHEUS_URL: `http://127.0.0.1:${port}` };
      try {
        // First the set converges as it is (claimstep records its current revision), under the threshold.
        const first = await claimstep(e2e, ["run", set, "--interval", "1s", "--timeout", "1m", "-o", "json"], { env });
        expect(first.code, describeRun(first)).toBe(0);
        expect(steps(first).at(-1)?.decision.phase).toBe("Complete");
        expect(steps(first).some((l) => l.decision.reason === "AutogrowTriggered")).toBe(false);
        const before = queries.length;

        // The application fills data-web-grow-1 to ~92%.
        used[`data-${set}-1`] = 0.9 * GI;
        const r = await claimstep(e2e, ["run", set, "--interval", "1s", "--timeout", "2m", "-o", "json"], { env });
        expect(r.code, describeRun(r)).toBe(0);
        const all = steps(r);
        const reasons = all.map((l) => l.decision.reason);
        expect(reasons[0], describeRun(r)).toBe("AutogrowTriggered");
        expect(all.at(-1)?.decision.phase).toBe("Complete");
        expect(
          reasons.filter((x) => x === "AutogrowTriggered"),
          reasons.join(", "),
        ).toHaveLength(1);
        const live = (await e2e.api.get("statefulsets", set)).body;
        const desired = JSON.parse(live.metadata.annotations?.["claimstep.io/volume-claim-templates"] ?? "[]");
        expect(desired[0].spec.resources.requests.storage).toBe("2Gi");
        for (const c of await claimsOf(e2e, set)) expect(c.status?.capacity?.storage, c.metadata.name).toBe("2Gi");
        const events = (await e2e.api.list("events.events.k8s.io")).body.items ?? [];
        expect(
          events.some((e) => e.reason === "AutogrowTriggered" && e.regarding?.name === set),
          JSON.stringify(events.map((e) => e.reason)),
        ).toBe(true);
        // One instant query per step that may act (a complete set), none during the rollout.
        expect(queries.length - before).toBeLessThanOrEqual(all.length);
        await auditCaughtUp(e2e);
        expectWithinBudget(claimstepRequestsIn(e2e, r.startedAt, r.endedAt), all.length, `run ${set} (autogrow)`);
        const perStep = expectBudgetPerStep(e2e, r, all, `run ${set} (autogrow)`);
        autogrowBudget = all
          .map(
            (l, i) => `${l.decision.reason} ${perStep[i]!.reads}r/${perStep[i]!.writes}w/${perStep[i]!.eventWrites}e`,
          )
          .join(", ");
        expectCleanAudit(e2e, since);
        autogrowTrail = `${reasons.join(" → ")}; ${queries.length} Prometheus queries`;
      } finally {
        await close(prom);
      }
    });
  });
});

let autogrowTrail = "";
let autogrowBudget = "";
let relayTrail = "";
afterAll(() => {
  if (autogrowTrail)
    console.log(`autogrow: ${autogrowTrail}; requests per step (reads/writes/event writes): ${autogrowBudget}`);
  if (relayTrail) console.log(`relay: ${relayTrail}`);
});

describe("the relay following a real watch, driving claimstep serve", () => {
  it("claimstep set → a signed POST within seconds → serve steps → Complete at 2Gi, with no sweep", {
    timeout: 240_000,
  }, async () => {
    await timed("relay+serve", async () => {
      const set = "web-relay";
      const since = Date.now();
      await createSet(e2e, set, { storageClass: sc, replicas: 2 });
      const secret = `whsec_${randomBytes(32).toString("base64")}`;
      const verifier = new Webhook(secret);

      // claimstep serve (its sweep off: CLAIMSTEP_INTERVAL_SECONDS=0), acting only in this namespace.
      const servePort = await (async () => {
        const s = createServer();
        const p = await listen(s);
        await close(s);
        return p;
      })();
      let serveChild: ChildProcess | undefined;
      const serve = claimstep(
        e2e,
        ["serve", "--port", String(servePort), "--kubeconfig", e2e.info.claimstepKubeconfig, "--no-color"],
        {
          bare: true,
          timeoutMs: 230_000,
          env: {
            CLAIMSTEP_WEBHOOK_SECRET: secret,
            CLAIMSTEP_NAMESPACES: e2e.namespace,
            CLAIMSTEP_INTERVAL_SECONDS: "0",
          },
          onSpawn: (c) => (serveChild = c),
        },
      );
      await waitFor(
        async () =>
          new Promise<boolean>((res) => {
            const q = httpRequest({ host: "127.0.0.1", port: servePort, path: "/healthz" }, (r) => {
              r.resume();
              res(r.statusCode === 200);
            });
            q.on("error", () => res(false));
            q.end();
          }),
        { timeoutMs: 30_000, intervalMs: 250, what: "claimstep serve answering /healthz" },
      );

      // The receiver: verifies each POST's signature, records it, hands it on to serve.
      const received: { at: number; type: string; name: string; verified: boolean; status: number }[] = [];
      const receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8");
          let verified = false;
          let payload: { type?: string; data?: { name?: string } } = {};
          try {
            payload = verifier.verify(body, req.headers as Record<string, string>) as typeof payload;
            verified = true;
          } catch {
            /* recorded as unverified */
          }
          const fwd = httpRequest(
            {
              host: "127.0.0.1",
              port: servePort,
              path: "/v1/relay",
              method: "POST",
              headers: { ...req.headers, host: `127.0.0.1:${servePort}` },
            },
            (up) => {
              const out: Buffer[] = [];
              up.on("data", (c: Buffer) => out.push(c));
              up.on("end", () => {
                received.push({
                  at: Date.now(),
                  type: payload.type ?? "?",
                  name: payload.data?.name ?? "?",
                  verified,
                  status: up.statusCode ?? 0,
                });
                res.writeHead(up.statusCode ?? 502, up.headers).end(Buffer.concat(out));
              });
            },
          );
          fwd.on("error", (e) => res.writeHead(502).end(String(e)));
          fwd.end(body);
        });
      });
      const receiverPort = await listen(receiver);
      let relayChild: ChildProcess | undefined;
      // The relay runs as its own ServiceAccount (relay.yaml: list and watch only), as deployed.
      const relayConfig = await relayKubeconfig(e2e, mkdtempSync(join(tmpdir(), "claimstep-e2e-relay-")));
      const relay = claimstep(e2e, ["relay", "--url", `http://127.0.0.1:${receiverPort}/v1/relay`], {
        kubeconfig: relayConfig,
        timeoutMs: 230_000,
        env: { CLAIMSTEP_WEBHOOK_SECRET: secret },
        onSpawn: (c) => (relayChild = c),
      });
      let serveRun: CliRun | undefined;
      let relayRun: CliRun | undefined;
      let failure: unknown;
      let setEndedAt = Date.now();
      try {
        // Let the relay list and start watching before the change.
        await sleep(3000);
        const changedAt = Date.now();
        const s = await claimstep(e2e, ["set", set, "data", "--storage", "2Gi"]);
        expect(s.code, describeRun(s)).toBe(0);
        setEndedAt = s.endedAt;
        await waitFor(async () => received.some((r) => r.name === set && r.at >= changedAt), {
          timeoutMs: 10_000,
          intervalMs: 100,
          what: "a relay POST for the set",
        });
        const firstPost = received.find((r) => r.name === set && r.at >= changedAt)!;
        expect(firstPost.verified, JSON.stringify(received)).toBe(true);
        expect(firstPost.type).toBe("statefulset.changed");
        expect(firstPost.status, JSON.stringify(received)).toBeLessThan(300);
        const latency = firstPost.at - s.endedAt;

        // The relay's events drive serve's steps until the rollout is done.
        await waitFor(
          async () => {
            const live = (await e2e.api.get("statefulsets", set)).body;
            const status = live.metadata.annotations?.["claimstep.io/status"];
            return status
              ? (JSON.parse(status) as { phase: string }).phase === "Complete" &&
                  (await claimsOf(e2e, set)).every((c) => c.status?.capacity?.storage === "2Gi")
              : false;
          },
          { timeoutMs: 120_000, intervalMs: 500, what: `${set} Complete at 2Gi through relay → serve` },
        );
        expect(
          received.every((r) => r.verified),
          JSON.stringify(received),
        ).toBe(true);
        relayTrail = `first signed POST ${latency} ms after \`claimstep set\` exited; ${received.filter((r) => r.name === set).length} POSTs for ${set} until Complete (every signature verified, serve answered ${[...new Set(received.map((r) => r.status))].join("/")})`;
      } catch (e) {
        failure = e;
      } finally {
        relayRun = await stop(relayChild, relay);
        serveRun = await stop(serveChild, serve);
        await close(receiver);
      }
      if (failure)
        throw new Error(
          `${(failure as Error).message}\nreceived: ${JSON.stringify(received)}\n--- relay ${describeRun(relayRun)}\n--- serve ${describeRun(serveRun)}`,
        );
      expect(relayRun.signal ?? relayRun.code, describeRun(relayRun)).not.toBe("SIGKILL");
      expect([0, null], describeRun(serveRun)).toContain(serveRun.code);
      await auditCaughtUp(e2e);
      // serve's steps and the relay's watches are claimstep's user too: the audit checks cover them.
      expectCleanAudit(e2e, since);
      // The relay's requests: only lists and watches, none refused once running.
      const relayRequests = e2e.audit({ since: new Date(since), user: RELAY_USER });
      expect(
        relayRequests.filter((e) => e.verb === "watch").length,
        describeAudit(relayRequests),
      ).toBeGreaterThanOrEqual(3);
      expect(
        relayRequests.filter((e) => e.verb !== "watch" && e.verb !== "list"),
        describeAudit(relayRequests),
      ).toEqual([]);
      expect(
        relayRequests.filter((e) => e.code >= 400),
        describeAudit(relayRequests),
      ).toEqual([]);
      // serve's steps (all of claimstep's requests after `set` exited): within B2's budget per
      // step, each step starting with its read of the set.
      const serveWindow = claimstepRequestsIn(e2e, setEndedAt, Date.now()).filter(
        (e) => e.name === set || e.name === "" || e.resource === "events",
      );
      const serveSteps = serveWindow.filter((e) => e.verb === "get" && e.resource === "statefulsets").length;
      relayTrail += `; serve: ${serveSteps} steps, ${JSON.stringify(countRequests(serveWindow))}`;
      expectWithinBudget(serveWindow, serveSteps, "serve's steps");
    });
  });
});
