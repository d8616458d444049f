// Real-server scenarios (issue 22, part 3, A) of pod coordination (docs/pods.md): ClaimsFirst with a
// pod template change (P1–P5), restarts through the Eviction API where a volume needs one (R1–R2),
// and a PodDisruptionBudget that refuses then allows (R3) — through the SHIPPED command against a
// real kube-apiserver + kube-controller-manager (its StatefulSet and disruption controllers), the
// node agent playing the kubelet and the CSI resizer. Each scenario in a namespace of its own,
// ending with the audit checks.
import { afterAll, describe, expect, inject, it } from "vitest";
import {
  type AuditEntry,
  type E2E,
  type KubeObject,
  NODE_AGENT_USER,
  ok,
  quantity,
  useControlPlane,
  waitFor,
} from "./support/index.js";
import {
  budgetNote,
  type CliRun,
  checkBudget,
  claims,
  claimstepRequests,
  claimWrites,
  cli,
  controllerReplacing,
  createSet,
  createStorageClass,
  describeAudit,
  describeRun,
  lastStep,
  ordinalOf,
  pods,
  Summary,
  scenarioAudit,
  sleep,
  stepsOf,
} from "./support/scenario-cli.js";

const summary = new Summary("pods.test.ts");
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

const GiB = 2 ** 30;
const isReady = (p: KubeObject) =>
  (p.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True");
const partitionOf = (set: KubeObject): number => set.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;

/** Samples the set, its pods, then its claims (in that order, so that a pod seen at the new
 * revision with a claim seen not ready afterwards is a real violation: capacity never goes back). */
function podMonitor(e2e: E2E, target: string) {
  let stop = false;
  const partitions: number[] = [];
  const violations: string[] = [];
  const pendingSeen = new Set<string>();
  const replacedSeen = new Set<string>();
  const loop = (async () => {
    while (!stop) {
      try {
        const set = ok(await e2e.api.get("statefulsets", "web"), "get set");
        const ps = await pods(e2e);
        const cs = await claims(e2e);
        const p = partitionOf(set);
        if (partitions.at(-1) !== p) partitions.push(p);
        const update = set.status?.updateRevision;
        const current = set.status?.currentRevision;
        const capacity = new Map(cs.map((c) => [c.metadata.name!, quantity(c.status?.capacity?.storage)]));
        for (const c of cs)
          if (c.status?.allocatedResourceStatuses?.storage === "NodeResizePending") pendingSeen.add(c.metadata.name!);
        if (update && current && update !== current) {
          for (const pod of ps) {
            if (pod.metadata.labels?.["controller-revision-hash"] !== update) continue;
            replacedSeen.add(pod.metadata.name!);
            const n = ordinalOf(pod.metadata.name!);
            const cap = capacity.get(`data-web-${n}`) ?? 0;
            if (cap < quantity(target))
              violations.push(
                `${new Date().toISOString()} pod ${pod.metadata.name} at the new revision ${update} while data-web-${n} has capacity ${cap} < ${target}`,
              );
          }
        }
        // The partition never below the ordinals whose claims are not ready (P2).
        for (let n = p; n < (set.spec?.replicas ?? 0); n++) {
          if (
            update !== current &&
            (capacity.get(`data-web-${n}`) ?? 0) < quantity(target) &&
            p <= n &&
            partitions.length > 1
          ) {
            // partition p lets the controller replace ordinal n: only once its claim is ready.
            violations.push(
              `${new Date().toISOString()} partition ${p} while data-web-${n} has capacity ${capacity.get(`data-web-${n}`)} < ${target}`,
            );
          }
        }
      } catch {
        /* a transient read error: sample again */
      }
      await sleep(150);
    }
  })();
  return {
    partitions,
    violations,
    pendingSeen,
    replacedSeen,
    async done() {
      stop = true;
      await loop;
    },
  };
}

/** The run's steps, one line each, for messages. */
const stepLines = (r: CliRun) =>
  stepsOf(r).map((s) => `#${s.step} ${s.decision.phase}/${s.decision.reason}: ${s.decision.message}`);

describe("5 ClaimsFirst: --hold-pods, then a pod template change", () => {
  const e2e = useControlPlane({ prefix: "claimsfirst", needsFakeDriver: true });
  it("the partition comes down one ordinal at a time, each after its claims are ready; pods replaced by the controller; Complete", async () => {
    await timed("claims-first", async () => {
      const sc = await createStorageClass(e2e, "fast", { resizeLatencyMs: 1000 });
      await createSet(e2e, { replicas: 3, storageClassName: sc, storage: "1Gi", image: "registry.example/app:1" });
      const since = new Date().toISOString();

      const set = await cli(e2e, ["set", "web", "data", "--storage", "2Gi", "--hold-pods"]);
      expect(set.code, describeRun(set)).toBe(0);
      let live = ok(await e2e.api.get("statefulsets", "web"), "get set");
      expect(partitionOf(live)).toBe(3);
      expect(live.metadata.annotations?.["claimstep.io/pod-coordination"]).toBe("ClaimsFirst");
      expect(live.metadata.annotations?.["claimstep.io/user-partition"]).toBe("0");
      const before = new Map((await pods(e2e)).map((p) => [p.metadata.name!, p.metadata.uid!]));

      // The admin's pod template change: nothing is replaced while the partition holds.
      ok(
        await e2e.api.patch(
          "statefulsets",
          "web",
          [{ op: "replace", path: "/spec/template/spec/containers/0/image", value: "registry.example/app:2" }],
          "json",
        ),
        "set image",
      );
      await waitFor(
        async () => {
          const s = (await e2e.api.get("statefulsets", "web")).body;
          return (
            s.status?.observedGeneration === s.metadata.generation &&
            s.status?.updateRevision !== s.status?.currentRevision
          );
        },
        { what: "the controller sees the new revision" },
      );
      await sleep(1000);
      for (const p of await pods(e2e))
        expect(p.metadata.uid, `${p.metadata.name} replaced before claimstep ran`).toBe(before.get(p.metadata.name!));

      const monitor = podMonitor(e2e, "2Gi");
      const run = await cli(e2e, ["run", "web", "--interval", "1s", "--timeout", "3m", "-o", "json"], {
        timeoutMs: 200_000,
      });
      await monitor.done();
      expect(run.code, describeRun(run)).toBe(0);
      expect(lastStep(run).decision.phase, describeRun(run)).toBe("Complete");
      expect(monitor.violations, stepLines(run).join("\n")).toEqual([]);
      expect(
        monitor.partitions,
        `partitions seen: ${monitor.partitions.join(" → ")}\n${stepLines(run).join("\n")}`,
      ).toEqual([3, 2, 1, 0]);

      // The claimstep steps that lowered the partition saw the ordinals above it ready.
      for (const s of stepsOf(run)) {
        if (s.decision.reason !== "PartitionLowered") continue;
        const to = s.decision.action?.partition;
        if (typeof to !== "number") continue;
        for (const o of s.ordinals ?? []) {
          if (o.ordinal < to) continue;
          for (const c of o.claims ?? [])
            expect(
              quantity(c.capacity),
              `step #${s.step} lowered the partition to ${to}: ${c.claim} capacity ${c.capacity}`,
            ).toBeGreaterThanOrEqual(2 * GiB);
        }
      }

      live = ok(await e2e.api.get("statefulsets", "web"), "get set");
      expect(partitionOf(live)).toBe(0);
      expect(live.metadata.annotations?.["claimstep.io/user-partition"]).toBeUndefined();
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
        { what: "every pod replaced at the new image and Ready", timeoutMs: 30_000 },
      );
      for (const c of await claims(e2e)) expect(quantity(c.status?.capacity?.storage), c.metadata.name).toBe(2 * GiB);
      const writes = claimWrites(e2e, since);
      expect(
        writes.map((w) => w.name),
        describeAudit(writes),
      ).toEqual(["data-web-2", "data-web-1", "data-web-0"]);

      // Pod deletes: the StatefulSet controller replacing each pod once, the agent finishing them.
      const deletes = e2e.audit({ resource: "pods", since }).filter((e) => e.verb === "delete" && e.subresource === "");
      const byController = deletes.filter(controllerReplacing);
      expect(byController.map((e) => e.name).sort(), describeAudit(deletes)).toEqual(["web-0", "web-1", "web-2"]);
      expect(
        byController.map((e) => e.name),
        "highest ordinal first",
      ).toEqual(["web-2", "web-1", "web-0"]);
      expect(
        e2e.audit({ user: e2e.info.claimstepUser, resource: "pods", subresource: "eviction" }),
        "no eviction",
      ).toEqual([]);
      expect(scenarioAudit(e2e, { allowPodDeletes: controllerReplacing })).toEqual([]);
      const budget = checkBudget(claimstepRequests(e2e, run.startedAt, run.endedAt), stepsOf(run));
      expect(budget.problems, JSON.stringify(budget, null, 1)).toEqual([]);
      return `${budgetNote(budget)}; partition ${monitor.partitions.join("→")}`;
    });
  }, 240_000);
});

/** claimstep's evictions (create pods/eviction) in the log. */
const evictions = (e2e: E2E, since?: string): AuditEntry[] =>
  e2e.audit({ user: e2e.info.claimstepUser, resource: "pods", subresource: "eviction", ...(since ? { since } : {}) });
/** The agent's last status write of a claim: the one that grew its capacity. */
const lastAgentStatusWrite = (e2e: E2E, claim: string, since: string): AuditEntry | undefined =>
  e2e
    .audit({ user: NODE_AGENT_USER, resource: "persistentvolumeclaims", subresource: "status", name: claim, since })
    .filter((e) => e.code < 300)
    .at(-1);

/** A 409 on claimstep's patch of the set within 2 s after its own successful eviction: the eviction
 * made the StatefulSet controller write the set's status, moving its resourceVersion. */
function lostRaceAfterEviction(e2e: E2E, e: AuditEntry): boolean {
  if (!(e.resource === "statefulsets" && e.verb === "patch" && e.code === 409)) return false;
  const t = Date.parse(e.time);
  return evictions(e2e).some((v) => v.code === 201 && Date.parse(v.time) <= t && t - Date.parse(v.time) < 2000);
}

/** claimstep's events in the namespace (events.k8s.io), by reason. */
async function eventReasons(e2e: E2E): Promise<string[]> {
  const items = ok(await e2e.admin.list("events.events.k8s.io", e2e.namespace), "list events").items ?? [];
  return items
    .filter(
      (x: any) =>
        x.reportingController === "claimstep.io/claimstep" || /claimstep/.test(String(x.reportingController ?? "")),
    )
    .map((x: any) => String(x.reason));
}

const RESTART_ANNOTATIONS = { "claimstep.io/restart-pods": "WhenRequired", "claimstep.io/restart-after": "5s" };

describe("6 restart-pods with a driver that grows the file system only at mount", () => {
  const e2e = useControlPlane({ prefix: "restart", needsFakeDriver: true });
  it("each claim waits NodeResizePending until claimstep evicts its pod; Complete", async () => {
    await timed("restart-pods", async () => {
      const sc = await createStorageClass(e2e, "offline", { nodeExpansion: "offline", resizeLatencyMs: 500 });
      await createSet(e2e, { replicas: 2, storageClassName: sc, storage: "1Gi", annotations: RESTART_ANNOTATIONS });
      const since = new Date().toISOString();
      const before = new Map((await pods(e2e)).map((p) => [p.metadata.name!, p.metadata.uid!]));

      const set = await cli(e2e, ["set", "web", "data", "--storage", "2Gi"]);
      expect(set.code, describeRun(set)).toBe(0);
      const monitor = podMonitor(e2e, "2Gi");
      const run = await cli(e2e, ["run", "web", "--interval", "1s", "--timeout", "3m", "-o", "json"], {
        timeoutMs: 200_000,
      });
      await monitor.done();
      expect(run.code, describeRun(run)).toBe(0);
      expect(lastStep(run).decision.phase, describeRun(run)).toBe("Complete");

      const ev = evictions(e2e, since);
      expect(
        ev.map((e) => `${e.verb} ${e.name} ${e.code}`),
        describeAudit(ev),
      ).toEqual(["create web-1 201", "create web-0 201"]);
      expect([...monitor.pendingSeen].sort(), "claims seen NodeResizePending").toEqual(["data-web-0", "data-web-1"]);
      for (const e of ev) {
        const n = ordinalOf(e.name);
        const grown = lastAgentStatusWrite(e2e, `data-web-${n}`, since);
        expect(grown, `the agent grew data-web-${n}`).toBeDefined();
        expect(Date.parse(grown!.time), `data-web-${n} grew only after claimstep evicted web-${n}`).toBeGreaterThan(
          Date.parse(e.time),
        );
      }
      expect(
        stepsOf(run)
          .filter((s) => s.decision.reason === "PodEvicted")
          .map((s) => s.decision.action?.pod),
      ).toEqual(["web-1", "web-0"]);
      for (const c of await claims(e2e)) expect(quantity(c.status?.capacity?.storage), c.metadata.name).toBe(2 * GiB);
      for (const p of await pods(e2e))
        expect(p.metadata.uid, `${p.metadata.name} restarted`).not.toBe(before.get(p.metadata.name!));

      // No DELETE of a pod but the agent finishing the evictions' graceful deletions. The one error
      // expected: the step's status write right after its own eviction loses the race with the
      // StatefulSet controller's status update of the set (a 409, repaired by the next step).
      expect(scenarioAudit(e2e, { expectedErrors: (e) => lostRaceAfterEviction(e2e, e) })).toEqual([]);
      const budget = checkBudget(claimstepRequests(e2e, run.startedAt, run.endedAt), stepsOf(run));
      expect(budget.problems, JSON.stringify(budget, null, 1)).toEqual([]);
      const record = JSON.parse(
        ok(await e2e.api.get("statefulsets", "web"), "get set").metadata.annotations?.["claimstep.io/last-eviction"] ??
          "{}",
      );
      return `${budgetNote(budget)}; 2 evictions (last-eviction left ${record.result ?? "absent"})`;
    });
  }, 240_000);

  // Found here, on the real server (the simulated cluster did not show it), fixed in functions/step.ts:
  // after an eviction the StatefulSet controller updates the set's status at once, so runStep's status
  // annotation (written under the resourceVersion of its pre-eviction record) often gets 409; the
  // step's events were recorded after it in the same try and dropped with it. Now every eviction
  // that landed has its PodEvicted event, whether or not its status write won the race.
  it("every eviction that landed has its PodEvicted event, also when its status write lost the race", async () => {
    const reasons = await eventReasons(e2e);
    expect(reasons, reasons.join(", ")).toContain("ClaimUpdated");
    const ok201 = evictions(e2e).filter((v) => v.code === 201);
    const raced = e2e
      .audit({ user: e2e.info.claimstepUser, resource: "statefulsets", verb: "patch" })
      .filter((e) => e.code === 409 && lostRaceAfterEviction(e2e, e));
    const podEvicted = reasons.filter((r) => r === "PodEvicted").length;
    console.log(
      `claimstep e2e: ${ok201.length} evictions, ${raced.length} status writes lost the race after one, ${podEvicted} PodEvicted events`,
    );
    expect(ok201.length).toBeGreaterThan(0);
    expect(podEvicted, `${ok201.length} evictions, ${raced.length} raced; events: ${reasons.join(", ")}`).toBe(
      ok201.length,
    );
  });
});

/**
 * R3's charge for this scenario (CLAIMSTEP_BUDGET_CHARGE_SECONDS, functions/config.ts) rather than
 * the shipped two minutes: long enough for the test to see the refusal and relax the budget, on a
 * loaded machine, before claimstep asks again; the same waits, checked the same way, in seconds.
 */
const BUDGET_CHARGE_SECONDS = 15;

describe("7 a PodDisruptionBudget that refuses, then allows", () => {
  const e2e = useControlPlane({ prefix: "pdb", needsFakeDriver: true });
  it("Waiting/DisruptionBudget on the 429, the admin relaxes the budget, Complete", async () => {
    await timed("pdb", async () => {
      const sc = await createStorageClass(e2e, "offline", { nodeExpansion: "offline", resizeLatencyMs: 500 });
      await createSet(e2e, { replicas: 2, storageClassName: sc, storage: "1Gi", annotations: RESTART_ANNOTATIONS });
      ok(
        await e2e.api.create("poddisruptionbudgets", {
          apiVersion: "policy/v1",
          kind: "PodDisruptionBudget",
          metadata: { name: "web" },
          spec: { minAvailable: 2, selector: { matchLabels: { app: "web" } } },
        }),
        "create PDB",
      );
      await waitFor(
        async () => {
          const b = (await e2e.api.get("poddisruptionbudgets", "web")).body;
          return (
            b.status?.observedGeneration === b.metadata.generation &&
            b.status?.currentHealthy === 2 &&
            b.status?.disruptionsAllowed === 0
          );
        },
        { what: "the disruption controller computed the budget", timeoutMs: 30_000 },
      );
      const since = new Date().toISOString();

      const set = await cli(e2e, ["set", "web", "data", "--storage", "2Gi"]);
      expect(set.code, describeRun(set)).toBe(0);
      // The run in the background; the test watches `claimstep status` (with the admin's kubeconfig:
      // a person looking on, not counted among claimstep's requests) until the budget refuses.
      const running = cli(e2e, ["run", "web", "--interval", "1s", "--timeout", "4m", "-o", "json"], {
        timeoutMs: 270_000,
        env: { CLAIMSTEP_BUDGET_CHARGE_SECONDS: String(BUDGET_CHARGE_SECONDS) },
      });
      const refused = await waitFor(
        async () => {
          const s = await cli(e2e, ["status", "web", "-o", "json"], { asAdmin: true });
          const text = JSON.stringify(s.json[0] ?? {});
          return /DisruptionBudget/.test(text) ? s : undefined;
        },
        { what: "claimstep status: Waiting/DisruptionBudget", timeoutMs: 90_000, intervalMs: 1000 },
      );
      expect(JSON.stringify(refused.json[0])).toMatch(/Waiting/);
      const refusal = evictions(e2e, since);
      expect(
        refusal.map((e) => `${e.name} ${e.code}`),
        describeAudit(refusal),
      ).toEqual(["web-1 429"]);
      const live = ok(await e2e.api.get("statefulsets", "web"), "get set");
      expect(JSON.parse(live.metadata.annotations?.["claimstep.io/last-eviction"] ?? "{}")).toMatchObject({
        pod: "web-1",
        result: "DisruptionBudget",
      });

      // The admin relaxes the budget at once; claimstep asks again after the refusal's charge.
      ok(await e2e.api.patch("poddisruptionbudgets", "web", { spec: { minAvailable: 1 } }), "relax the PDB");
      const run = await running;
      expect(run.code, describeRun(run)).toBe(0);
      expect(lastStep(run).decision.phase, describeRun(run)).toBe("Complete");
      const waits = stepsOf(run).filter((s) => s.decision.reason === "DisruptionBudget");
      expect(waits.length, stepLines(run).join("\n")).toBeGreaterThan(0);
      expect(waits.every((s) => s.decision.phase === "Waiting")).toBe(true);

      const ev = evictions(e2e, since);
      expect(
        ev.map((e) => `${e.name} ${e.code}`),
        describeAudit(ev),
      ).toEqual(["web-1 429", "web-1 201", "web-0 201"]);
      const charge = Date.parse(ev[1]!.time) - Date.parse(ev[0]!.time);
      expect(charge, "no second attempt within the refusal's charge").toBeGreaterThanOrEqual(
        BUDGET_CHARGE_SECONDS * 1000 - 1000,
      );
      for (const c of await claims(e2e)) expect(quantity(c.status?.capacity?.storage), c.metadata.name).toBe(2 * GiB);

      const budgetRefusal = (e: AuditEntry) =>
        (e.subresource === "eviction" && e.code === 429) || lostRaceAfterEviction(e2e, e);
      expect(scenarioAudit(e2e, { expectedErrors: budgetRefusal })).toEqual([]);
      const budget = checkBudget(claimstepRequests(e2e, run.startedAt, run.endedAt), stepsOf(run));
      expect(budget.problems, JSON.stringify(budget, null, 1)).toEqual([]);
      return `${budgetNote(budget)}; refused 429, evicted ${(charge / 1000).toFixed(0)} s later`;
    });
  }, 330_000);
});
