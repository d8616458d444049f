// runStep with the pod side, on the simulated cluster through the production client: a partition
// patch carries the step's annotations itself (one request), a budget's refusal is recorded so no
// step asks again for two minutes, a lost race on the uid changes nothing.
import { describe, expect, it } from "vitest";
import type { SimCluster } from "../../adapters/sim/cluster.js";
import { SET } from "../../adapters/sim/scenarios.js";
import { Keys } from "../../core/keys.js";
import { SCENARIOS } from "../../functions/scenarios.js";
import { runStep, type StepResult } from "../../functions/step.js";
import { fixtureStatus } from "../fixtures/apiserver.js";

const step = (sim: SimCluster): Promise<StepResult> =>
  runStep({ reader: sim.reader, writers: sim.writers, ref: SET, now: sim.now() });

/** Step every 10 s of virtual time until `until` says stop. */
async function stepUntil(sim: SimCluster, until: (r: StepResult) => boolean, limit = 500): Promise<StepResult> {
  for (let i = 0; i < limit; i++) {
    const r = await step(sim);
    if (until(r)) return r;
    sim.advance(10_000);
  }
  throw new Error("never happened");
}

describe("runStep with the pod side", () => {
  // Found on a real v1.34 server (test/e2e/pods.test.ts): right after an eviction the StatefulSet
  // controller writes the set's status, so the step's status patch under the resourceVersion read
  // before it loses (409) — and the PodEvicted event used to be lost with it.
  it("an eviction whose status write loses its race still records PodEvicted; the next step repairs the status", async () => {
    const sim = await SCENARIOS["node-expansion-restart"]!.build();
    for (let i = 0; i < 200; i++) {
      const planned = await runStep({
        reader: sim.reader,
        writers: sim.writers,
        ref: SET,
        now: sim.now(),
        dryRun: true,
      });
      if (planned.decision.action?.type === "EvictPod") break;
      await step(sim);
      sim.advance(10_000);
    }
    let patches = 0;
    sim.http.failNext((q) => q.verb === "patch" && q.resource === "statefulsets" && ++patches === 2, {
      code: 409,
      body: fixtureStatus("sts-partition-patch-stale-rv.txt").body,
    });
    const r = await step(sim);
    expect(r.decision.action?.type).toBe("EvictPod");
    expect(patches).toBe(2);
    expect(sim.http.requests().filter((q) => q.subresource === "eviction")).toHaveLength(1);
    expect(sim.list("events", SET.namespace).filter((e: any) => e.reason === "PodEvicted")).toHaveLength(1);
    const next = await step(sim);
    expect(next.outcome.kind).not.toBe("retry");
  });

  it("records an eviction before attempting it; no record (a lost race on the set), no eviction", async () => {
    const sim = await SCENARIOS["node-expansion-restart"]!.build();
    for (let i = 0; i < 200; i++) {
      const planned = await runStep({
        reader: sim.reader,
        writers: sim.writers,
        ref: SET,
        now: sim.now(),
        dryRun: true,
      });
      if (planned.decision.action?.type === "EvictPod") break;
      await step(sim);
      sim.advance(10_000);
    }
    const pod = sim.get("pods", SET.namespace, "web-2")!.metadata.uid;
    sim.http.failNext("patch statefulsets", { code: 500 });
    const r = await step(sim);
    expect(r.outcome.kind).toBe("retry");
    expect(sim.http.requests().filter((q) => q.subresource === "eviction")).toHaveLength(0);
    expect(sim.get("pods", SET.namespace, "web-2")!.metadata.uid).toBe(pod);
    const again = await step(sim);
    expect(again.decision.action?.type).toBe("EvictPod");
    const order = sim.http
      .requests()
      .map((q) => `${q.verb} ${q.resource}${q.subresource ? `/${q.subresource}` : ""}`)
      .filter((x) => x.startsWith("patch statefulsets") || x.includes("eviction"));
    expect(order.slice(-3)).toEqual(["patch statefulsets", "create pods/eviction", "patch statefulsets"]);
    expect(
      JSON.parse(sim.get("statefulsets", SET.namespace, SET.name)!.metadata.annotations[Keys.lastEviction]),
    ).toMatchObject({ pod: "web-2", result: "Evicted" });
  });

  it("a partition patch writes the step's annotations in the same request", async () => {
    const sim = await SCENARIOS["pods-claims-first"]!.build();
    sim.http.resetCounters();
    const r = await stepUntil(sim, (x) => x.decision.action?.type === "PatchPartition");
    expect(r.outcome).toEqual({ kind: "applied", detail: "patched default/web: partition 5 → 4" });
    const last = sim.http
      .requests()
      .filter((q) => q.resource === "statefulsets" && q.verb === "patch")
      .at(-1)!;
    expect((last.body as any).metadata.annotations[Keys.status]).toContain('"reason":"PartitionLowered"');
    const set = sim.get("statefulsets", SET.namespace, SET.name)!;
    expect(JSON.parse(set.metadata.annotations[Keys.status]).reason).toBe("PartitionLowered");
    expect(set.spec.updateStrategy.rollingUpdate.partition).toBe(4);
  });

  it("a budget's refusal is Waiting/DisruptionBudget, recorded; the next step does not ask again", async () => {
    const sim = await SCENARIOS["pdb-blocks"]!.build();
    const r = await stepUntil(sim, (x) => x.decision.reason === "DisruptionBudget");
    expect(r.decision.phase).toBe("Waiting");
    expect(r.outcome).toEqual({ kind: "none" });
    const record = JSON.parse(
      sim.get("statefulsets", SET.namespace, SET.name)!.metadata.annotations[Keys.lastEviction],
    );
    expect(record).toMatchObject({
      pod: "web-2",
      result: "DisruptionBudget",
      message: "The disruption budget web needs 3 healthy pods and has 3 currently",
    });
    const evictions = () => sim.http.requests().filter((q) => q.subresource === "eviction").length;
    const before = evictions();
    sim.advance(60_000);
    const again = await step(sim);
    expect(again.decision.reason).toBe("DisruptionBudget");
    expect(again.decision.action).toBeUndefined();
    expect(evictions()).toBe(before);
    const events = sim.events(SET.namespace).filter((e) => e.reason === "DisruptionBudget");
    expect(events[0]).toMatchObject({ type: "Warning", regarding: { kind: "StatefulSet", name: "web" } });
  });

  it("an eviction whose pod was replaced meanwhile (409 on the uid) changes nothing; the next step re-plans", async () => {
    const sim = await SCENARIOS["node-expansion-restart"]!.build();
    // Step until the eviction is due (planned, not yet carried out).
    for (let i = 0; i < 200; i++) {
      const planned = await runStep({
        reader: sim.reader,
        writers: sim.writers,
        ref: SET,
        now: sim.now(),
        dryRun: true,
      });
      if (planned.decision.action?.type === "EvictPod") break;
      await step(sim);
      sim.advance(10_000);
    }
    // A person deletes the pod between claimstep's read and its eviction; the controller re-creates it.
    sim.http.beforeNext("create pods/eviction", async () => {
      await sim.deletePod(SET.namespace, "web-2");
      sim.settle();
    });
    const r = await step(sim);
    expect(r.decision.action?.type, `${r.decision.reason}: ${r.decision.message}`).toBe("EvictPod");
    expect(r.outcome.kind).toBe("retry");
    expect(r.decision.phase).toBe("Progressing");
    // The attempt was recorded before the eviction (R3: no second one while a budget may be charged).
    expect(
      JSON.parse(sim.get("statefulsets", SET.namespace, SET.name)!.metadata.annotations[Keys.lastEviction]),
    ).toMatchObject({ pod: "web-2", result: "Attempted" });
    // The replacement mounted the volume: the next step finds nothing to restart.
    sim.advance(10_000);
    expect((await step(sim)).decision.action?.type).toBe("PatchClaim");
  });

  it("an eviction of a pod gone meanwhile (404) is a lost race too, not a refusal", async () => {
    const sim = await SCENARIOS["node-expansion-restart"]!.build();
    for (let i = 0; i < 200; i++) {
      const planned = await runStep({
        reader: sim.reader,
        writers: sim.writers,
        ref: SET,
        now: sim.now(),
        dryRun: true,
      });
      if (planned.decision.action?.type === "EvictPod") break;
      await step(sim);
      sim.advance(10_000);
    }
    sim.http.beforeNext("create pods/eviction", () => sim.deletePod(SET.namespace, "web-2"));
    const r = await step(sim);
    expect(r.outcome.kind).toBe("retry");
    expect(r.decision.phase).not.toBe("Blocked");
  });
});
