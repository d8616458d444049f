// `claimstep serve` (serveFromEnv, as the CLI and the container run it) stopped by SIGTERM between
// the orphan delete and the create of a re-create its steps made (issue 33 item 5): it logs one
// JSON line naming the set, where it stands (read back from the cluster) and who finishes it.
import { afterAll, describe, expect, it } from "vitest";
import { SIM_SERVER } from "../../adapters/sim/http.js";
import { SET } from "../../adapters/sim/scenarios.js";
import { SCENARIOS } from "../../functions/scenarios.js";
import { serveFromEnv } from "../../functions/server.js";
import { type SocketServer, serveFetch } from "../support/sim-server.js";

const TOKEN = "api-token-for-the-serve-interrupt-test";

let kube: SocketServer | undefined;
afterAll(async () => {
  await kube?.close();
});

describe("claimstep serve stopped mid re-create", () => {
  it("SIGTERM with the set deleted and not yet created: one log line names it, where it stands, who finishes it", async () => {
    const sim = await SCENARIOS.finalize!.build(1);
    const http = await serveFetch((request) => sim.http.fetch(request), SIM_SERVER);
    kube = http;
    const logs: Record<string, unknown>[] = [];
    let base = "";
    let done: Promise<number> | undefined;
    await new Promise<void>((resolve, reject) => {
      done = serveFromEnv({
        port: 0,
        env: {
          KUBE_API_SERVER: http.url,
          KUBE_TOKEN: "any-token-the-simulated-cluster-takes",
          CLAIMSTEP_API_TOKEN: TOKEN,
          CLAIMSTEP_INTERVAL_SECONDS: "0",
        },
        log: (e) => {
          logs.push(e);
          if (e.msg === "listening") {
            base = `http://127.0.0.1:${e.port}`;
            resolve();
          }
        },
      });
      void done.then((code) => reject(new Error(`claimstep serve exited (${code}) before listening`)), reject);
    });
    // The rollout and the re-create, one POST /v1/steps at a time, up to the orphan delete.
    let reason = "";
    for (let i = 0; i < 200 && reason !== "SetOrphaned"; i++) {
      const res = await fetch(`${base}/v1/steps`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(SET),
      });
      reason = ((await res.json()) as { decision: { reason: string } }).decision.reason;
      sim.advance(10_000);
    }
    expect(reason).toBe("SetOrphaned");
    sim.advance(60_000); // the garbage collector releases the pods and claims
    expect(sim.get("statefulsets", "default", "web")).toBeUndefined();
    process.emit("SIGTERM", "SIGTERM");
    expect(await done).toBe(0);
    expect(logs.filter((e) => e.msg === "left mid re-create")).toEqual([
      {
        msg: "left mid re-create",
        signal: "SIGTERM",
        set: "default/web",
        standing:
          "StatefulSet default/web is deleted; its pods and claims are kept; ConfigMap default/claimstep-recreate-web holds the set to create: `claimstep run web -n default` re-creates it",
        finishedBy:
          "the next claimstep that steps it (the replica that holds the Lease, this server restarted, or `claimstep run web -n default`) finishes it",
      },
    ]);
    // Nothing was written after the signal: the set is still gone, its record there.
    expect(sim.get("statefulsets", "default", "web")).toBeUndefined();
    expect(sim.get("configmaps", "default", "claimstep-recreate-web")).toBeDefined();
  });
});
