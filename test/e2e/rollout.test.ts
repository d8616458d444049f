// Real-server scenarios (issue 22, part 3, A): claim rollouts through the SHIPPED command against
// one kube-apiserver + kube-controller-manager + etcd (test/e2e/support), the node agent playing the
// kubelet and the CSI resizer/modifier. Each scenario in a namespace of its own, ending with the
// audit checks: no claim deleted, no pod deleted, no error answered to claimstep but those expected,
// requests per step within B2's budget.
import { afterAll, describe, expect, inject, it } from "vitest";
import { type E2E, ok, quantity, useControlPlane, volumeAttributesClass, waitFor } from "./support/index.js";
import {
  budgetNote,
  checkBudget,
  claims,
  claimstepRequests,
  claimWrites,
  cli,
  createSet,
  createStorageClass,
  describeAudit,
  describeRun,
  lastStep,
  Summary,
  scenarioAudit,
  scoped,
  serve,
  sleep,
  stepsOf,
} from "./support/scenario-cli.js";

const summary = new Summary("rollout.test.ts");
afterAll(() => {
  console.log(summary.line(inject("claimstepE2E")?.version));
});

/** Runs a scenario body, timing it for the summary. */
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

/** How many ordinals have a claim in flight at each of claimstep's writes: from the claims' states
 * sampled while it runs. Returns the max seen. */
function inFlightMonitor(e2e: E2E, target: string) {
  let max = 0;
  let stop = false;
  const samples: string[] = [];
  const loop = (async () => {
    while (!stop) {
      const items = await claims(e2e).catch(() => []);
      // In flight: written (spec at target) and not yet grown (capacity below target).
      const inFlight = items.filter(
        (c) =>
          quantity(c.spec?.resources?.requests?.storage) >= quantity(target) &&
          quantity(c.status?.capacity?.storage) < quantity(target),
      );
      if (inFlight.length > max) max = inFlight.length;
      if (inFlight.length)
        samples.push(`${new Date().toISOString()} ${inFlight.map((c) => c.metadata.name).join(",")}`);
      await sleep(100);
    }
  })();
  return {
    async done() {
      stop = true;
      await loop;
      return { max, samples };
    },
  };
}

describe("1 grow: 1Gi → 2Gi, highest ordinal first, within maxUnavailable", () => {
  const e2e = useControlPlane({ prefix: "grow", needsFakeDriver: true });
  it("Complete, exit 0; every claim 2Gi; claimstep's patches highest ordinal first", async () => {
    await timed("grow", async () => {
      const sc = await createStorageClass(e2e, "fast", { resizeLatencyMs: 1500 });
      await createSet(e2e, { replicas: 3, storageClassName: sc, storage: "1Gi" });
      const since = new Date().toISOString();

      const set = await cli(e2e, ["set", "web", "data", "--storage", "2Gi"]);
      expect(set.code, describeRun(set)).toBe(0);
      const plan = await cli(e2e, ["plan", "web", "-o", "json"]);
      expect(plan.code, describeRun(plan)).toBe(0);
      expect(plan.json[0]?.decision?.action?.claim ?? plan.json[0]?.action?.claim, plan.stdout).toBe("data-web-2");

      const monitor = inFlightMonitor(e2e, "2Gi");
      const run = await cli(e2e, ["run", "web", "--interval", "1s", "--timeout", "3m", "-o", "json"], {
        timeoutMs: 200_000,
      });
      const { max } = await monitor.done();
      expect(run.code, describeRun(run)).toBe(0);
      expect(lastStep(run).decision.phase, describeRun(run)).toBe("Complete");
      expect(max, "ordinals in flight at once (maxUnavailable 1)").toBeLessThanOrEqual(1);

      for (const c of await claims(e2e)) {
        expect(quantity(c.status?.capacity?.storage), `${c.metadata.name} capacity`).toBe(2 * GiB);
        expect(quantity(c.spec?.resources?.requests?.storage), `${c.metadata.name} spec`).toBe(2 * GiB);
      }
      const writes = claimWrites(e2e, since);
      expect(
        writes.map((w) => w.name),
        describeAudit(writes),
      ).toEqual(["data-web-2", "data-web-1", "data-web-0"]);
      expect(
        writes.every((w) => w.verb === "patch" && w.code < 300),
        describeAudit(writes),
      ).toBe(true);

      const status = await cli(e2e, ["status", "web", "-o", "json"]);
      expect(status.code, describeRun(status)).toBe(0);
      expect(JSON.stringify(status.json[0]), status.stdout).toMatch(/Complete/);

      expect(scenarioAudit(e2e)).toEqual([]);
      const budget = checkBudget(claimstepRequests(e2e, run.startedAt, run.endedAt), stepsOf(run));
      expect(budget.problems, JSON.stringify(budget, null, 1)).toEqual([]);
      return budgetNote(budget);
    });
  }, 240_000);
});

describe("2 VolumeAttributesClass silver → gold (set through the CLI, stepped through claimstep serve)", () => {
  const e2e = useControlPlane({ prefix: "vac", needsFakeDriver: true });
  it("every claim ends with currentVolumeAttributesClassName gold; the server's steps reach Complete", async () => {
    await timed("vac (serve)", async () => {
      const silver = scoped(e2e, "silver");
      const gold = scoped(e2e, "gold");
      ok(
        await e2e.admin.create("volumeattributesclasses", null, volumeAttributesClass(silver, { iops: "3000" })),
        "create VAC silver",
      );
      ok(
        await e2e.admin.create("volumeattributesclasses", null, volumeAttributesClass(gold, { iops: "6000" })),
        "create VAC gold",
      );
      const sc = await createStorageClass(e2e, "tiered", { modifyLatencyMs: 1000 });
      await createSet(e2e, { replicas: 2, storageClassName: sc, storage: "1Gi", vac: silver });
      const since = new Date().toISOString();

      const set = await cli(e2e, ["set", "web", "data", "--vac", gold]);
      expect(set.code, describeRun(set)).toBe(0);

      const server = await serve(e2e);
      const steps: any[] = [];
      let last: any;
      try {
        const deadline = Date.now() + 120_000;
        for (;;) {
          const at = new Date().toISOString();
          const r = await server.step("web");
          expect(r.status, JSON.stringify(r.body)).toBe(200);
          steps.push({ ...r.body, at, step: steps.length + 1 });
          last = r.body;
          if (last.decision?.phase === "Complete" || last.decision?.phase === "Blocked") break;
          if (Date.now() > deadline) throw new Error(`not Complete within 120 s: ${JSON.stringify(last.decision)}`);
          await sleep(1000);
        }
      } finally {
        const code = await server.stop();
        expect(code, server.logs.join("\n")).toBe(0);
      }
      const until = new Date().toISOString();
      expect(
        last.decision.phase,
        steps.map((s) => `${s.decision.phase}/${s.decision.reason} ${s.decision.message}`).join("\n"),
      ).toBe("Complete");
      for (const c of await claims(e2e)) {
        expect(c.spec?.volumeAttributesClassName, c.metadata.name).toBe(gold);
        expect(c.status?.currentVolumeAttributesClassName, c.metadata.name).toBe(gold);
        expect(c.status?.modifyVolumeStatus ?? null, c.metadata.name).toBeNull();
      }
      const writes = claimWrites(e2e, since);
      expect(
        writes.map((w) => w.name),
        describeAudit(writes),
      ).toEqual(["data-web-1", "data-web-0"]);

      const status = await cli(e2e, ["status", "web", "-o", "json"]);
      expect(status.code, describeRun(status)).toBe(0);

      expect(scenarioAudit(e2e)).toEqual([]);
      // The templates name a VolumeAttributesClass: one more read a step (its list).
      const budget = checkBudget(claimstepRequests(e2e, server.startedAt, until), steps, { extraReadsPerStep: 1 });
      expect(budget.problems, JSON.stringify(budget, null, 1)).toEqual([]);
      return `POST /v1/steps: ${budgetNote(budget)}`;
    });
  }, 240_000);
});

describe("3 blocked class: allowVolumeExpansion false", () => {
  const e2e = useControlPlane({ prefix: "blocked", needsFakeDriver: true });
  it("exit 2, Blocked/ExpansionNotAllowed, no claim written by claimstep", async () => {
    await timed("blocked class", async () => {
      const sc = await createStorageClass(e2e, "fixed", { allowVolumeExpansion: false });
      await createSet(e2e, { replicas: 2, storageClassName: sc, storage: "1Gi" });
      const since = new Date().toISOString();

      const set = await cli(e2e, ["set", "web", "data", "--storage", "2Gi"]);
      expect([0, 2], describeRun(set)).toContain(set.code);
      expect(set.stdout + set.stderr).toMatch(/ExpansionNotAllowed/);
      const run = await cli(e2e, ["run", "web", "--interval", "1s", "--timeout", "1m", "-o", "json"], {
        timeoutMs: 90_000,
      });
      expect(run.code, describeRun(run)).toBe(2);
      const d = lastStep(run).decision;
      expect(`${d.phase}/${d.reason}`, describeRun(run)).toBe("Blocked/ExpansionNotAllowed");
      expect(d.message).toContain(sc);

      const status = await cli(e2e, ["status", "web", "-o", "json"]);
      expect(JSON.stringify(status.json[0]), status.stdout).toMatch(/ExpansionNotAllowed/);

      expect(claimWrites(e2e, since), describeAudit(claimWrites(e2e, since))).toEqual([]);
      for (const c of await claims(e2e)) expect(c.spec?.resources?.requests?.storage).toBe("1Gi");
      expect(scenarioAudit(e2e)).toEqual([]);
      const budget = checkBudget(claimstepRequests(e2e, run.startedAt, run.endedAt), stepsOf(run));
      expect(budget.problems, JSON.stringify(budget, null, 1)).toEqual([]);
      return `${budgetNote(budget)}; 0 claim writes`;
    });
  }, 120_000);
});

describe("4 quota: requests.storage too small for the rollout", () => {
  const e2e = useControlPlane({ prefix: "quota", needsFakeDriver: true });
  it("the highest claim grows within the quota, the next is refused: Blocked/QuotaExceeded, exit 2", async () => {
    await timed("quota", async () => {
      const sc = await createStorageClass(e2e, "fast", {});
      await createSet(e2e, { replicas: 3, storageClassName: sc, storage: "1Gi" });
      // 3 × 1Gi used; 4Gi allows one claim at 2Gi, not two.
      ok(
        await e2e.api.create("resourcequotas", {
          apiVersion: "v1",
          kind: "ResourceQuota",
          metadata: { name: "storage" },
          spec: { hard: { "requests.storage": "4Gi" } },
        }),
        "create quota",
      );
      await waitFor(
        async () =>
          quantity((await e2e.api.get("resourcequotas", "storage")).body.status?.used?.["requests.storage"]) ===
          3 * GiB,
        { what: "the quota's usage computed", timeoutMs: 30_000 },
      );
      const since = new Date().toISOString();

      const set = await cli(e2e, ["set", "web", "data", "--storage", "2Gi"]);
      expect(set.code, describeRun(set)).toBe(0);
      const run = await cli(e2e, ["run", "web", "--interval", "1s", "--timeout", "2m", "-o", "json"], {
        timeoutMs: 150_000,
      });
      expect(run.code, describeRun(run)).toBe(2);
      const d = lastStep(run).decision;
      expect(`${d.phase}/${d.reason}`, describeRun(run)).toBe("Blocked/QuotaExceeded");

      const byName = new Map((await claims(e2e)).map((c) => [c.metadata.name, c]));
      expect(quantity(byName.get("data-web-2")?.status?.capacity?.storage)).toBe(2 * GiB);
      expect(byName.get("data-web-1")?.spec?.resources?.requests?.storage).toBe("1Gi");
      expect(byName.get("data-web-0")?.spec?.resources?.requests?.storage).toBe("1Gi");

      const writes = claimWrites(e2e, since);
      expect(
        writes.map((w) => `${w.name} ${w.code}`),
        describeAudit(writes),
      ).toEqual(["data-web-2 200", "data-web-1 403"]);
      const quotaRefusal = (e: { resource: string; verb: string; code: number; name: string }) =>
        e.resource === "persistentvolumeclaims" && e.verb === "patch" && e.code === 403 && e.name === "data-web-1";
      expect(scenarioAudit(e2e, { expectedErrors: quotaRefusal })).toEqual([]);
      const budget = checkBudget(claimstepRequests(e2e, run.startedAt, run.endedAt), stepsOf(run));
      expect(budget.problems, JSON.stringify(budget, null, 1)).toEqual([]);
      return `${budgetNote(budget)}; data-web-1's patch refused 403`;
    });
  }, 180_000);
});
