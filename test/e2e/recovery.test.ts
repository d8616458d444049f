// Recovering from a failed expansion (X1–X3) on a real API server v1.34 (RecoverVolumeExpansionFailure
// GA), through the shipped CLI: the node agent's driver finds any expansion above 3Gi infeasible.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeAudit, ok, storageClass, useControlPlane } from "./support/index.js";
import {
  auditCaughtUp,
  type CliRun,
  claimsOf,
  claimstep,
  claimstepRequestsIn,
  createSet,
  describeRun,
  expectBudgetPerStep,
  expectCleanAudit,
  expectWithinBudget,
  jsonLines,
} from "./support/scenario-finalize.js";

const e2e = useControlPlane({ prefix: "recovery", needsFakeDriver: true });
const passed: string[] = [];
let sc = "";

beforeAll(async () => {
  if (!e2e.local) return;
  sc = `${e2e.namespace}-capped`;
  const r = await e2e.admin.create("storageclasses", null, storageClass(sc, { resizeLatencyMs: 300, maxSize: "3Gi" }));
  expect(r.status).toBe(201);
});

afterAll(async () => {
  if (!e2e.local) return;
  await e2e.admin.delete("storageclasses", null, sc).catch(() => undefined);
  console.log(
    `real-server scenarios: ${passed.length} passed against ${e2e.info.version} (recovery: ${passed.join("; ")})`,
  );
});

const timed = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
  const t0 = Date.now();
  const out = await fn();
  passed.push(`${what} ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return out;
};

const steps = (r: CliRun) => jsonLines(r.stdout).filter((l) => l.decision);

/** set --storage 5Gi, run: the highest ordinal's claim fails as ControllerResizeInfeasible, Blocked/ResizeFailed. */
async function failExpansion(set: string): Promise<void> {
  await createSet(e2e, set, { storageClass: sc, replicas: 2 });
  const s = await claimstep(e2e, ["set", set, "data", "--storage", "5Gi"]);
  expect(s.code, describeRun(s)).toBe(0);
  const r = await claimstep(e2e, ["run", set, "--interval", "1s", "--timeout", "1m", "-o", "json"]);
  expect(r.code, describeRun(r)).toBe(2);
  const last = steps(r).at(-1)?.decision;
  expect(`${last?.phase}/${last?.reason}`, describeRun(r)).toBe("Blocked/ResizeFailed");
  expect(last?.message).toContain(`data-${set}-1`);
  // Issue 36 point 7: the block names the way out (X1) in sizes a person writes.
  expect(last?.message).toContain(
    `To recover (X1, Kubernetes ≥ 1.34): set the desired template to more than the claim's capacity 1Gi and no more than the storage provides, e.g. claimstep set ${set} data --storage 2Gi -n ${e2e.namespace}: claimstep lowers the claim's request from 5Gi to it`,
  );
  const failed = (await e2e.api.get("persistentvolumeclaims", `data-${set}-1`)).body;
  expect(failed.spec.resources.requests.storage).toBe("5Gi");
  expect(failed.status?.allocatedResourceStatuses?.storage).toBe("ControllerResizeInfeasible");
  expect(failed.status?.capacity?.storage).toBe("1Gi");
  // Only the highest ordinal was written.
  expect((await e2e.api.get("persistentvolumeclaims", `data-${set}-0`)).body.spec.resources.requests.storage).toBe(
    "1Gi",
  );
  await auditCaughtUp(e2e);
  expectWithinBudget(claimstepRequestsIn(e2e, r.startedAt, r.endedAt), steps(r).length, `run ${set}`);
  expectBudgetPerStep(e2e, r, steps(r), `run ${set}`);
}

describe("X1: the template lowered above the capacity", () => {
  it("5Gi infeasible → Blocked/ResizeFailed; 2Gi → the failed claim comes back down 5Gi → 2Gi, the driver completes, Complete", {
    timeout: 180_000,
  }, async () => {
    await timed("X1", async () => {
      const set = "web-x1";
      const since = Date.now();
      await failExpansion(set);

      const s = await claimstep(e2e, ["set", set, "data", "--storage", "2Gi"]);
      expect(s.code, describeRun(s)).toBe(0);
      expect(s.stdout, describeRun(s)).toMatch(/Recovering from a failed expansion/);
      expect(s.stdout).toContain(`data-${set}-1`);
      const r = await claimstep(e2e, ["run", set, "--interval", "1s", "--timeout", "1m", "-o", "json"]);
      expect(r.code, describeRun(r)).toBe(0);
      const all = steps(r);
      expect(all.at(-1)?.decision.phase).toBe("Complete");
      const first = all.find((l) => l.outcome?.kind === "applied");
      expect(first?.outcome.detail, describeRun(r)).toContain(`data-${set}-1`);
      for (const c of await claimsOf(e2e, set)) {
        expect(c.spec.resources.requests.storage, c.metadata.name).toBe("2Gi");
        expect(c.status?.capacity?.storage, c.metadata.name).toBe("2Gi");
        expect(c.status?.allocatedResourceStatuses?.storage, c.metadata.name).toBeUndefined();
      }
      await auditCaughtUp(e2e);
      expectWithinBudget(claimstepRequestsIn(e2e, r.startedAt, r.endedAt), all.length, `run ${set}`);
      expectBudgetPerStep(e2e, r, all, `run ${set}`);
      // The lowering went through as claimstep's claim write, answered 200 by the real server.
      const writes = e2e.audit({
        since: new Date(r.startedAt),
        user: e2e.info.claimstepUser,
        resource: "persistentvolumeclaims",
        name: `data-${set}-1`,
        verb: "patch",
      });
      expect(
        writes.map((w) => w.code),
        describeAudit(writes),
      ).toContain(200);
      expectCleanAudit(e2e, since);
    });
  });
});

describe("X2: the template lowered to the capacity (issue 36 point 4: the KEP proceeds)", () => {
  it("1Gi = capacity: set refuses naming the recovery in sizes (point 7); written anyway → the rollout goes on to Complete, the failed request kept and reported (status, Warning Event), no 422", {
    timeout: 180_000,
  }, async () => {
    await timed("X2", async () => {
      const set = "web-x2";
      const since = Date.now();
      await failExpansion(set);

      const refused = await claimstep(e2e, ["set", set, "data", "--storage", "1Gi"]);
      expect(refused.code, describeRun(refused)).toBe(1);
      expect(refused.stderr, describeRun(refused)).toContain(
        `data-${set}-1's expansion to 5Gi failed (ControllerResizeInfeasible) and it stays at 1Gi`,
      );
      expect(refused.stderr).toContain("Give more than 1Gi, a size the storage can provide (e.g. --storage 2Gi)");
      expect(refused.stderr).not.toMatch(/1073741825|at least 5Gi/);
      const anyway = await claimstep(e2e, ["set", set, "data", "--storage", "1Gi", "--allow-smaller"]);
      expect(anyway.code, describeRun(anyway)).toBe(0);
      expect(anyway.stdout, describeRun(anyway)).toMatch(/desired data storage 1Gi/);
      const r = await claimstep(e2e, ["run", set, "--interval", "1s", "--timeout", "1m", "-o", "json"]);
      expect(r.code, describeRun(r)).toBe(0);
      const last = steps(r).at(-1)?.decision;
      expect(last?.phase, describeRun(r)).toBe("Complete");
      expect(last?.message, describeRun(r)).toContain(
        `data-${set}-1 still requests 5Gi, which its storage could not provide (ControllerResizeInfeasible); it stays at 1Gi`,
      );
      expect(last?.message).toContain(
        `kubectl -n ${e2e.namespace} patch pvc data-${set}-1 --type merge -p '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}'`,
      );
      const failed = (await e2e.api.get("persistentvolumeclaims", `data-${set}-1`)).body;
      expect(failed.spec.resources.requests.storage).toBe("5Gi");
      expect(failed.metadata.labels?.["claimstep.io/revision"]).toBe(last?.revision);
      // Reported as a Warning Event on the set.
      const events = ok(await e2e.admin.list("events.events.k8s.io", e2e.namespace), "list events").items ?? [];
      expect(
        events.some(
          (e: any) =>
            e.reason === "ResizeFailed" &&
            e.type === "Warning" &&
            String(e.note).includes(`data-${set}-1 still requests 5Gi`),
        ),
        JSON.stringify(events.map((e: any) => `${e.reason} ${e.note}`)),
      ).toBe(true);
      await auditCaughtUp(e2e);
      expectWithinBudget(claimstepRequestsIn(e2e, r.startedAt, r.endedAt), steps(r).length, `run ${set}`);
      expectBudgetPerStep(e2e, r, steps(r), `run ${set}`);
      // Only the revision stamped, the request as it was (no lowering the server would refuse): no 422.
      const mine = e2e.audit({
        since: new Date(r.startedAt),
        user: e2e.info.claimstepUser,
        resource: "persistentvolumeclaims",
      });
      expect(
        mine.filter((e) => e.verb !== "list" && e.verb !== "get").every((e) => e.code === 200),
        describeAudit(mine),
      ).toBe(true);
      expect(e2e.audit({ since: new Date(since), where: (e) => e.code === 422 }), "422 answers").toEqual([]);
      expectCleanAudit(e2e, since);
      refusedText = `${refused.stderr.trim()} | ${last?.message}`;
    });
  });
});

let refusedText = "";
afterAll(() => {
  if (refusedText) console.log(`X2: ${refusedText}`);
});
