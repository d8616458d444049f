// The fleet's events (issue 25, docs/observability-workers.md): a step run by a set object, the API
// calls it makes and the cron's sweep without bindings are logged (schema claimstep.event.v1) with
// their cluster, and written to the CLAIMSTEP_ANALYTICS binding when there is one (here a recording
// one: miniflare's local dataset keeps nothing).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { LedgerObject, SetObject } from "../../../functions/fleet/objects.js";
import { dataPoint } from "../../../functions/observe.js";
import worker from "../../../functions/worker.js";
import { type SocketSim, serveSim, statefulSetObjects, storageClassObjects } from "../../support/index.js";
import { memoryNamespace } from "./memory-do.js";

const KUBE_TOKEN = "kube-token-observe-0123456789";
const API_TOKEN = "api-token-observe-0123456789";

let alpha: SocketSim;
beforeAll(async () => {
  alpha = await serveSim({ token: KUBE_TOKEN });
  alpha.fake.seed(
    ...storageClassObjects(),
    ...statefulSetObjects({ desired: [{ name: "data", storage: "2Gi", storageClassName: "fast" }] }),
  );
});
afterAll(async () => {
  await alpha?.close();
});
afterEach(() => vi.restoreAllMocks());

const recording = () => {
  const points: unknown[] = [];
  return { points, writeDataPoint: (p: unknown) => void points.push(structuredClone(p)) };
};

/** The event lines console.log receives while `run` runs. */
async function eventsOf(run: () => Promise<unknown>) {
  const lines: string[] = [];
  vi.spyOn(console, "log").mockImplementation((l: unknown) => void lines.push(String(l)));
  await run();
  vi.restoreAllMocks();
  return {
    lines,
    events: lines
      .filter((l) => l.includes('"schema":"claimstep.event.v1"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

function env(fleet: boolean) {
  const dataset = recording();
  const e: Record<string, unknown> = {
    KUBE_API_SERVER: alpha.url,
    KUBE_TOKEN,
    CLAIMSTEP_DEFAULT_CLUSTER: "alpha",
    CLAIMSTEP_CLUSTERS: JSON.stringify([
      { name: "beta", server: alpha.url, tokenSecret: "KUBE_TOKEN_BETA", namespaces: ["none"] },
    ]),
    KUBE_TOKEN_BETA: KUBE_TOKEN,
    CLAIMSTEP_API_TOKEN: API_TOKEN,
    CLAIMSTEP_NAMESPACES: "default",
    CLAIMSTEP_ANALYTICS: dataset,
  };
  if (fleet) {
    const sets = memoryNamespace((storage) => new SetObject({ storage }, e));
    const ledgers = memoryNamespace((storage) => new LedgerObject({ storage }, e));
    Object.assign(e, { SETS: sets.ns, LEDGER: ledgers.ns, STEP_QUEUE: { sendBatch: async () => {} } });
  }
  return { env: e, dataset };
}

describe("the fleet's events", () => {
  it("a step through the set object: the step, its API calls and the delivery, with the cluster, as lines and data points", async () => {
    const { env: e, dataset } = env(true);
    const { events } = await eventsOf(async () => {
      const res = await worker.fetch(
        new Request("https://claimstep.example/v1/clusters/alpha/steps", {
          method: "POST",
          headers: { authorization: `Bearer ${API_TOKEN}`, "content-type": "application/json" },
          body: JSON.stringify({ namespace: "default", name: "web" }),
        }),
        e,
        { waitUntil: () => {} },
      );
      expect(res.status).toBe(200);
    });
    const steps = events.filter((x) => x.event === "step");
    expect(steps).toEqual([
      expect.objectContaining({
        cluster: "alpha",
        namespace: "default",
        name: "web",
        outcome: "applied",
        durationSeconds: expect.any(Number),
      }),
    ]);
    expect(events).toContainEqual(
      expect.objectContaining({
        event: "api_request",
        cluster: "alpha",
        verb: "patch",
        resource: "persistentvolumeclaims",
        code: "200",
      }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ event: "delivery", cluster: "alpha", source: "api", result: "accepted" }),
    );
    // Each line's event is a data point too, in the documented layout.
    expect(dataset.points).toHaveLength(events.length);
    expect(dataset.points).toContainEqual(dataPoint(steps[0] as never));
  });

  it("the cron's sweep without bindings logs each cluster's steps and API calls", async () => {
    alpha.fake.completeResizes();
    const { env: e } = env(false);
    const { events, lines } = await eventsOf(() =>
      worker.scheduled({ scheduledTime: Date.now(), cron: "* * * * *" }, e),
    );
    expect(events.filter((x) => x.event === "step")).toEqual([
      expect.objectContaining({ cluster: "alpha", namespace: "default", name: "web" }),
    ]);
    expect(events).toContainEqual(
      expect.objectContaining({ event: "api_request", cluster: "alpha", verb: "list", resource: "statefulsets" }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ event: "api_request", cluster: "beta", verb: "list", resource: "statefulsets" }),
    );
    expect(lines.join("\n")).not.toContain(KUBE_TOKEN);
  });
});
