// Real-server scenarios (issue 22, part 3, A): claim rollouts through the SHIPPED command against
// one kube-apiserver + kube-controller-manager + etcd (test/e2e/support), the node agent playing the
// kubelet and the CSI resizer/modifier. Each scenario in a namespace of its own, ending with the
// audit checks: no claim deleted, no pod deleted, no error answered to claimstep but those expected,
// requests per step within B2's budget.
import { afterAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import {
  Summary,
  checkBudget,
  claimWrites,
  claims,
  claimstepRequests,
  cli,
  createSet,
  createStorageClass,
  describeAudit,
  describeRun,
  lastStep,
  ordinalOf,
  scenarioAudit,
  scoped,
  serve,
  sleep,
  stepsOf,
} from "./support/scenario-cli.js";
import { ok, quantity, useControlPlane, volumeAttributesClass, waitFor, type E2E } from "./support/index.js";

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
      const inFlight = items.filter((c) => quantity(c.spec?.resources?.requests?.storage) >= quantity(target) && quantity(c.status?.capacity?.storage) < quantity(target));
      if (inFlight.length > max) max = inFlight.length;
      if (inFlight.length) samples.push(`${new Date().toISOString()} ${inFlight.map((c) => c.metadata.name).join(",")}`);
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
      const run = await cli(e2e, ["run", "web", "--interval", "1s", "--timeout", "3m", "-o", "json"], { timeoutMs: 200_000 });
      const { max } = await monitor.done();
      expect(run.code, describeRun(run)).toBe(0);
      expect(lastStep(run).decision.phase, describeRun(run)).toBe("Complete");
      expect(max, "ordinals in flight at once (maxUnavailable 1)").toBeLessThanOrEqual(1);

      for (const c of await claims(e2e)) {
        expect(quantity(c.status?.capacity?.storage), `${c.metadata.name} capacity`).toBe(2 * GiB);
        expect(quantity(c.spec?.resources?.requests?.storage), `${c.metadata.name} spec`).toBe(2 * GiB);
      }
      const writes = claimWrites(e2e, since);
      expect(writes.map((w) => w.name), describeAudit(writes)).toEqual(["data-web-2", "data-web-1", "data-web-0"]);
      expect(writes.every((w) => w.verb === "patch" && w.code < 300), describeAudit(writes)).toBe(true);

      const status = await cli(e2e, ["status", "web", "-o", "json"]);
      expect(status.code, describeRun(status)).toBe(0);
      expect(JSON.stringify(status.json[0]), status.stdout).toMatch(/Complete/);

      expect(scenarioAudit(e2e)).toEqual([]);
      const budget = checkBudget(claimstepRequests(e2e, run.startedAt, run.endedAt), stepsOf(run));
      expect(budget.problems, JSON.stringify(budget, null, 1)).toEqual([]);
      return `${budget.steps} steps, ${budget.reads} reads, ${budget.writes} writes, ${budget.eventWrites}+${budget.eventReads} event requests for ${budget.events} events`;
    });
  }, 240_000);
});
