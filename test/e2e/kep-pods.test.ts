// Issue 36, points 1 and 3, on the real v1.34.2 server (its StatefulSet controller) through the
// shipped command, the node agent playing the kubelet and the CSI resizer:
// 1. ClaimsFirst holding the partition, then the set opted out (OnClaimDelete): the user's partition
//    back after one step, and the controller rolls the pod template out (KEP-4650: "change
//    volumeClaimUpdateStrategy back to OnClaimDelete to unblock normal Pod rollout immediately").
// 3. A pod made not Ready after its claims are done stops the next ordinal's claims
//    (Waiting/PodNotReady); once Ready again, the rollout goes on (KEP table row 9, OrderedReady).
import { afterAll, describe, expect, inject, it } from "vitest";
import { type KubeObject, ok, useControlPlane, waitFor } from "./support/index.js";
import {
  claimstepRequests,
  claimWrites,
  cli,
  controllerReplacing,
  createSet,
  createStorageClass,
  describeAudit,
  describeRun,
  lostRaceWithController,
  pods,
  Summary,
  scenarioAudit,
  sleep,
  stepsOf,
} from "./support/scenario-cli.js";

const summary = new Summary("kep-pods.test.ts");
afterAll(() => {
  console.log(summary.line(inject("claimstepE2E")?.version));
});

async function timed(name: string, fn: () => Promise<string | void>) {
  const t0 = Date.now();
  try {
    const note = await fn();
    summary.add(name, true, Date.now() - t0, note || undefined);
  } catch (e) {
    summary.add(name, false, Date.now() - t0);
    throw e;
  }
}

const isReady = (p: KubeObject) =>
  (p.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True");
const partitionOf = (set: KubeObject): number => set.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
const steps = (r: Awaited<ReturnType<typeof cli>>) =>
  stepsOf(r).map((s) => `${s.decision.phase}/${s.decision.reason}: ${s.decision.message}`);

describe("issue 36 point 1: opting out while ClaimsFirst holds the partition", () => {
  const e2e = useControlPlane({ prefix: "optout", needsFakeDriver: true });
  it("the user's partition is back after one step, then Idle; the controller rolls the pod template out", async () => {
    await timed("opt-out releases the partition", async () => {
      const sc = await createStorageClass(e2e, "fast", { resizeLatencyMs: 500 });
      await createSet(e2e, { replicas: 3, storageClassName: sc, storage: "1Gi", image: "registry.example/app:1" });
      const before = new Map((await pods(e2e)).map((p) => [p.metadata.name!, p.metadata.uid!]));

      // ClaimsFirst holds every pod (P5), then the pod template changes: nothing rolls.
      const set = await cli(e2e, ["set", "web", "data", "--storage", "2Gi", "--hold-pods"]);
      expect(set.code, describeRun(set)).toBe(0);
      ok(
        await e2e.api.patch(
          "statefulsets",
          "web",
          [{ op: "replace", path: "/spec/template/spec/containers/0/image", value: "registry.example/app:2" }],
          "json",
        ),
        "set image",
      );
      let live = ok(await e2e.api.get("statefulsets", "web"), "get set");
      expect(partitionOf(live)).toBe(3);
      expect(live.metadata.annotations?.["claimstep.io/user-partition"]).toBe("0");

      // The user opts out: KEP-4650's OnClaimDelete.
      const since = new Date().toISOString();
      ok(
        await e2e.api.patch(
          "statefulsets",
          "web",
          { metadata: { annotations: { "claimstep.io/volume-claim-update-strategy": "OnClaimDelete" } } },
          "merge",
        ),
        "opt out",
      );
      const t0 = Date.now();
      const run = await cli(e2e, ["run", "web", "--interval", "1s", "--timeout", "1m", "-o", "json"]);
      // The restore, then Idle (which `run` ends on, with the exit code of a set it cannot step).
      expect(
        stepsOf(run).map((s) => `${s.decision.phase}/${s.decision.reason}`),
        describeRun(run),
      ).toEqual(["Progressing/PartitionRestored", "Idle/NotOptedIn"]);
      live = ok(await e2e.api.get("statefulsets", "web"), "get set");
      expect(partitionOf(live), steps(run).join("\n")).toBe(0);
      expect(live.metadata.annotations?.["claimstep.io/user-partition"]).toBeUndefined();

      // Exactly one write of the set's spec (the restore), no claim written, no pod touched.
      const requests = claimstepRequests(e2e, since);
      const setWrites = requests.filter((e) => e.resource === "statefulsets" && e.verb === "patch");
      expect(
        setWrites.map((e) => `${e.verb} ${e.code}`),
        describeAudit(setWrites),
      ).toEqual(["patch 200"]);
      expect(claimWrites(e2e, since), "no claim written").toEqual([]);
      expect(requests.filter((e) => e.resource === "pods" && e.verb !== "get" && e.verb !== "list")).toEqual([]);

      // The StatefulSet controller rolls the new pod template out: every pod replaced at app:2.
      await waitFor(
        async () => {
          const ps = await pods(e2e);
          return (
            ps.length === 3 &&
            ps.every(
              (p) =>
                isReady(p) &&
                p.spec.containers[0].image === "registry.example/app:2" &&
                p.metadata.uid !== before.get(p.metadata.name!),
            )
          );
        },
        { what: "every pod replaced at the new image and Ready", timeoutMs: 60_000 },
      );
      const rolledMs = Date.now() - t0;
      // A second run changes nothing.
      const again = await cli(e2e, ["run", "web", "--interval", "1s", "--timeout", "20s", "-o", "json"]);
      expect(stepsOf(again).map((s) => s.decision.reason)).toEqual(["NotOptedIn"]);
      await sleep(200);
      expect(
        claimstepRequests(e2e, again.startedAt).filter(
          (e) => e.resource === "statefulsets" && e.verb !== "get" && e.verb !== "list",
        ),
      ).toEqual([]);
      expect(scenarioAudit(e2e, { allowPodDeletes: controllerReplacing })).toEqual([]);
      return `restore in ${run.ms} ms (one patch), pods rolled ${rolledMs} ms after the opt-out`;
    });
  }, 180_000);
});

/** The pod's readiness as its kubelet's prober would report it (a strategic merge of the conditions, by type). */
async function setReady(e2e: ReturnType<typeof useControlPlane>, pod: string, ready: boolean): Promise<void> {
  const at = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const cond = (type: string) => ({
    type,
    status: ready ? "True" : "False",
    lastTransitionTime: at,
    ...(ready ? {} : { reason: "ReadinessProbeFailed", message: "readiness probe failed (issue 36 point 3)" }),
  });
  ok(
    await e2e.api.status.patch(
      "pods",
      pod,
      { status: { conditions: [cond("Ready"), cond("ContainersReady")] } },
      "strategic",
    ),
    `pod ${pod} Ready=${ready}`,
  );
}

describe("issue 36 point 3: an ordinal's pod not Ready stops the next one", () => {
  const e2e = useControlPlane({ prefix: "notready", needsFakeDriver: true });
  it("web-2's claims grow, its pod is not Ready: Waiting/PodNotReady and data-web-1 untouched; once Ready, Complete", async () => {
    await timed("pod not Ready stops the next ordinal", async () => {
      const sc = await createStorageClass(e2e, "fast", { resizeLatencyMs: 500 });
      await createSet(e2e, { replicas: 3, storageClassName: sc, storage: "1Gi" });
      const since = new Date().toISOString();
      // The pod of the first ordinal to grow stops being Ready (the agent, playing the kubelet,
      // never marks a started pod Ready again: its prober is this patch).
      await setReady(e2e, "web-2", false);
      const set = await cli(e2e, ["set", "web", "data", "--storage", "2Gi"]);
      expect(set.code, describeRun(set)).toBe(0);

      const run = cli(e2e, ["run", "web", "--interval", "1s", "--timeout", "3m", "-o", "json"], { timeoutMs: 200_000 });
      // claimstep grows web-2's own claim (its slot is its own), then waits on its pod.
      const waitingSince = await waitFor(
        async () => {
          const s = (await e2e.api.get("statefulsets", "web")).body;
          const status = JSON.parse(s.metadata?.annotations?.["claimstep.io/status"] ?? "{}");
          return status.reason === "PodNotReady" ? Date.now() : undefined;
        },
        { what: "claimstep says Waiting/PodNotReady", timeoutMs: 60_000 },
      );
      await sleep(5_000);
      const early = claimWrites(e2e, since).filter((e) => e.code < 300);
      expect(
        early.map((e) => e.name),
        describeAudit(early),
      ).toEqual(["data-web-2"]);
      const status = JSON.parse(
        ok(await e2e.api.get("statefulsets", "web"), "get set").metadata.annotations?.["claimstep.io/status"] ?? "{}",
      );
      expect(status).toMatchObject({ phase: "Waiting", reason: "PodNotReady", ordinal: 2 });
      expect(status.message).toMatch(/pod web-2 is not Ready/);

      const readyAt = new Date().toISOString();
      await setReady(e2e, "web-2", true);
      const done = await run;
      expect(done.code, describeRun(done)).toBe(0);
      const reasons = stepsOf(done).map((s) => s.decision.reason);
      expect(reasons, steps(done).join("\n")).toContain("PodNotReady");
      expect(reasons.at(-1)).toBe("RolloutComplete");
      // data-web-1 and data-web-0 only after web-2 was Ready again.
      const writes = claimWrites(e2e, since).filter((e) => e.code < 300);
      expect(writes.map((e) => e.name)).toEqual(["data-web-2", "data-web-1", "data-web-0"]);
      for (const w of writes.slice(1))
        expect(Date.parse(w.time), `${w.name} written before web-2 was Ready`).toBeGreaterThanOrEqual(
          Date.parse(readyAt),
        );
      // Events: PodNotReady, a Warning.
      const events = ok(await e2e.admin.list("events.events.k8s.io", e2e.namespace), "list events").items ?? [];
      const notReady = events.filter((x: KubeObject) => x.reason === "PodNotReady");
      expect(notReady.length).toBeGreaterThan(0);
      expect(new Set(notReady.map((x: KubeObject) => x.type))).toEqual(new Set(["Warning"]));
      // The one write that may lose a race: claimstep's status write on the set, made under the
      // resourceVersion it read, just after the StatefulSet controller recorded web-2's readiness in
      // the set's status (CI, stop 41). claimstep must not overwrite that write; its next step
      // records the status again (Complete above).
      expect(scenarioAudit(e2e, { expectedErrors: (e) => lostRaceWithController(e2e, e) })).toEqual([]);
      const waited = Date.now() - waitingSince;
      return `waited ${reasons.filter((r: string) => r === "PodNotReady").length} steps (${Math.round(waited / 1000)} s) on web-2; ${writes.length} claim writes`;
    });
  }, 240_000);
});
