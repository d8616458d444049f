// Issue 22 on a real API server (kube-apiserver + kube-controller-manager v1.34, the node agent as
// kubelet and CSI driver): `claimstep finalize` through the shipped CLI keeps every pod and claim
// (same uids) with either retention policy; a DELETE that loses its propagationPolicy (the planted
// bug) is caught by the audit log and by claimstep's own comparison; and the process killed right
// after each of the re-create's requests leaves what the next invocation finishes.
import { mkdtempSync } from "node:fs";
import { Agent } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeReader } from "../../adapters/kube/reader.js";
import { kubeWriters } from "../../adapters/kube/writer.js";
import { requestWithAgent } from "../../adapters/kube-node/agent-fetch.js";
import { nodeKubeTarget } from "../../adapters/kube-node/kubeconfig.js";
import { runStep, type StepResult } from "../../functions/step.js";
import {
  type AuditEntry,
  CONTROLLER_MANAGER_USER,
  describeAudit,
  storageClass,
  useControlPlane,
  waitFor,
} from "./support/index.js";
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
  podsOf,
  sleep,
  startKillingProxy,
  uidsOf,
} from "./support/scenario-finalize.js";

const e2e = useControlPlane({ prefix: "finalize", needsFakeDriver: true });
const passed: string[] = [];
let sc = "";

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
    `real-server scenarios: ${passed.length} passed against ${e2e.info.version} (finalize: ${passed.join("; ")})`,
  );
});

/** A re-create's expected answers: the set read while it is gone (between F2 and F3), the create
 * refused while the old set's orphan finalizer runs. */
const finalizeErrors = (e: AuditEntry) =>
  e.resource === "statefulsets" && ((e.verb === "get" && e.code === 404) || (e.verb === "create" && e.code === 409));

const recordName = (set: string) => `claimstep-recreate-${set}`;
const timed = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
  const t0 = Date.now();
  const out = await fn();
  passed.push(`${what} ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return out;
};

/** set → run → the set at 2Gi everywhere, Complete (the CLI's steps within the budget). */
async function grow(set: string, replicas = 3): Promise<void> {
  const s = await claimstep(e2e, ["set", set, "data", "--storage", "2Gi", "-o", "json"]);
  expect(s.code, describeRun(s)).toBe(0);
  const r = await claimstep(e2e, ["run", set, "--interval", "1s", "--timeout", "2m", "-o", "json"]);
  expect(r.code, describeRun(r)).toBe(0);
  const steps = jsonLines(r.stdout).filter((l) => l.decision);
  expect(steps.at(-1)?.decision.phase).toBe("Complete");
  await auditCaughtUp(e2e);
  expectWithinBudget(claimstepRequestsIn(e2e, r.startedAt, r.endedAt), steps.length, `run ${set}`);
  expectBudgetPerStep(e2e, r, steps, `run ${set}`);
  const claims = await claimsOf(e2e, set);
  expect(claims).toHaveLength(replicas);
  for (const c of claims) expect(c.status?.capacity?.storage, c.metadata.name).toBe("2Gi");
}

async function expectRecreated(
  set: string,
  before: { pods: Record<string, string>; claims: Record<string, string> },
  oldUid: string,
  whenDeleted: "Delete" | "Retain",
) {
  const live = (await e2e.api.get("statefulsets", set)).body;
  expect(live.metadata.uid).not.toBe(oldUid);
  expect(live.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe("2Gi");
  expect(await uidsOf(e2e, set)).toEqual(before);
  for (const p of await podsOf(e2e, set))
    expect(p.metadata.ownerReferences?.find((o) => o.controller)?.uid, p.metadata.name).toBe(live.metadata.uid);
  for (const c of await claimsOf(e2e, set)) {
    const owner = c.metadata.ownerReferences?.find((o) => o.kind === "StatefulSet")?.uid;
    if (whenDeleted === "Delete") {
      await waitFor(
        async () =>
          (await e2e.api.get("persistentvolumeclaims", c.metadata.name!)).body.metadata.ownerReferences?.some(
            (o) => o.uid === live.metadata.uid,
          ),
        {
          timeoutMs: 20_000,
          what: `${c.metadata.name} owned by the new set`,
        },
      );
    } else expect(owner, c.metadata.name).toBeUndefined();
  }
  expect((await e2e.api.get("configmaps", recordName(set))).status).toBe(404);
}

describe.each(["Delete", "Retain"] as const)("finalize through the CLI, whenDeleted: %s", (whenDeleted) => {
  it("keeps every pod and claim (same uids), the template at 2Gi, the record gone", { timeout: 240_000 }, async () => {
    await timed(`F-${whenDeleted}`, async () => {
      const set = `web-${whenDeleted.toLowerCase()}`;
      const since = Date.now();
      const old = await createSet(e2e, set, { storageClass: sc, whenDeleted });
      await grow(set);
      const before = await uidsOf(e2e, set);
      expect(Object.keys(before.pods)).toHaveLength(3);
      expect(Object.keys(before.claims)).toHaveLength(3);

      // Delete: as a person reads it; Retain: -o json, one object per step (the budget per step).
      const json = whenDeleted === "Retain";
      const f = await claimstep(e2e, [
        "finalize",
        set,
        "--interval",
        "1s",
        "--timeout",
        "2m",
        ...(json ? ["-o", "json"] : []),
      ]);
      expect(f.code, describeRun(f)).toBe(0);
      expect(f.stdout, describeRun(f)).toMatch(
        /every pod and claim kept \(3 pod\(s\), 3 claim\(s\): the same uids as recorded\)/,
      );
      if (json) {
        const steps = jsonLines(f.stdout).filter((l) => l.step !== undefined && l.decision);
        expect(steps.map((l) => l.decision.reason)).toContain("SetRecreated");
        expect(steps.at(-1)?.decision.reason).toBe("Converged");
        await auditCaughtUp(e2e);
        // finalize's preview: a dry-run step and a load of the set and its record.
        expectWithinBudget(claimstepRequestsIn(e2e, f.startedAt, f.endedAt), steps.length, `finalize ${set}`, 2);
        const perStep = expectBudgetPerStep(e2e, f, steps, `finalize ${set}`);
        budgetTrail.push(
          `finalize ${set}: ${steps.map((l, i) => `${l.decision.reason} ${perStep[i]!.reads}r/${perStep[i]!.writes}w/${perStep[i]!.eventWrites}e`).join(", ")}`,
        );
      }
      await expectRecreated(set, before, old.metadata.uid!, whenDeleted);

      await auditCaughtUp(e2e);
      const mine = e2e.audit({
        since: new Date(since),
        user: e2e.info.claimstepUser,
        name: set,
        resource: "statefulsets",
      });
      expect(
        mine.filter((e) => e.verb === "delete" && e.code === 200),
        describeAudit(mine),
      ).toHaveLength(1);
      expectCleanAudit(e2e, since, { expectedErrors: finalizeErrors });
      const again = await claimstep(e2e, ["finalize", set]);
      expect(again.code, describeRun(again)).toBe(0);
      expect(again.stdout).toMatch(/nothing to re-create/);
    });
  });
});

describe("the planted bug on the real server: the orphan delete without propagationPolicy", () => {
  it("the garbage collector deletes the pods and claims; the audit log shows it; claimstep says Blocked/RecreateReplaced", {
    timeout: 240_000,
  }, async () => {
    await timed("planted-bug", async () => {
      const set = "web-planted";
      const since = Date.now();
      const old = await createSet(e2e, set, { storageClass: sc, whenDeleted: "Delete", replicas: 2 });
      await grow(set, 2);
      const before = await uidsOf(e2e, set);

      // The production client, reader and writers, over the production transport, but with the
      // propagationPolicy taken out of every DELETE body on the way (no production code edited).
      const agent = new Agent({ ca: e2e.info.caPem, keepAlive: true });
      const dropped: string[] = [];
      const t = nodeKubeTarget(
        { kubeconfig: e2e.info.claimstepKubeconfig },
        {
          fetch: (url, init) => {
            if (
              (init.method ?? "GET").toUpperCase() === "DELETE" &&
              typeof init.body === "string" &&
              init.body.includes("propagationPolicy")
            ) {
              const body = JSON.parse(init.body) as Record<string, unknown>;
              delete body.propagationPolicy;
              dropped.push(url);
              init = { ...init, body: JSON.stringify(body) };
            }
            return requestWithAgent(url, init, agent);
          },
        },
      );
      const reader = new KubeReader(t.client);
      const writers = kubeWriters(t.client, { reportingInstance: "claimstep-e2e-planted" });
      const ref = { namespace: e2e.namespace, name: set };
      const results: StepResult[] = [];
      try {
        for (let i = 0; i < 120; i++) {
          const r = await runStep({ reader, writers, ref, now: new Date(), finalize: true });
          results.push(r);
          const d = r.decision;
          if (d.phase === "Blocked" || (d.phase === "Complete" && !d.action && d.requeueAfter === undefined)) break;
          await sleep(1000);
        }
      } finally {
        agent.destroy();
      }
      const trail = results.map((r) => `${r.decision.phase}/${r.decision.reason}: ${r.decision.message}`).join("\n");
      expect(dropped, trail).toHaveLength(1);
      const last = results.at(-1)!.decision;
      expect(`${last.phase}/${last.reason}`, trail).toBe("Blocked/RecreateReplaced");
      for (const name of [...Object.keys(before.pods), ...Object.keys(before.claims)])
        expect(last.message).toContain(name);
      expect(
        results.some((r) => r.decision.reason === "SetRecreated"),
        trail,
      ).toBe(false);

      // The real server's audit log catches it: the garbage collector deleted the set's pods and claims.
      await auditCaughtUp(e2e);
      const gone = e2e.audit({
        since: new Date(since),
        where: (e) =>
          e.verb === "delete" &&
          e.user === CONTROLLER_MANAGER_USER &&
          (e.resource === "pods" || e.resource === "persistentvolumeclaims"),
      });
      const gcPods = gone
        .filter((e) => e.resource === "pods" && /garbage-collector/.test(e.userAgent))
        .map((e) => e.name);
      const gcClaims = gone
        .filter((e) => e.resource === "persistentvolumeclaims" && /garbage-collector/.test(e.userAgent))
        .map((e) => e.name);
      plantedEvidence = describeAudit(gone);
      expect(new Set(gcPods), plantedEvidence).toEqual(new Set(Object.keys(before.pods)));
      expect(new Set(gcClaims), plantedEvidence).toEqual(new Set(Object.keys(before.claims)));
      const setDelete = e2e.audit({
        since: new Date(since),
        user: e2e.info.claimstepUser,
        verb: "delete",
        resource: "statefulsets",
        name: set,
      });
      expect(setDelete.map((e) => e.code)).toEqual([200]);
      // The uids did change, the new set is another one, the record is kept, a Warning says so.
      const after = await uidsOf(e2e, set);
      for (const [n, uid] of Object.entries(before.pods)) expect(after.pods[n], n).not.toBe(uid);
      expect((await e2e.api.get("statefulsets", set)).body.metadata.uid).not.toBe(old.metadata.uid);
      expect((await e2e.api.get("configmaps", recordName(set))).status).toBe(200);
      const events = (await e2e.api.list("events.events.k8s.io")).body.items ?? [];
      const warning = events.find(
        (e) => e.reason === "RecreateReplaced" && e.type === "Warning" && e.regarding?.name === set,
      );
      expect(warning, JSON.stringify(events.map((e) => [e.reason, e.type, e.regarding?.name]))).toBeDefined();
      plantedEvidence += `\nclaimstep: ${last.phase}/${last.reason}: ${last.message}\nWarning event ${warning?.metadata.name}: ${warning?.note}`;
    });
  });
});

let plantedEvidence = "";
afterAll(() => {
  if (plantedEvidence) console.log(`planted bug (propagationPolicy dropped), the audit log:\n${plantedEvidence}`);
});

describe("finalize killed right after each of its requests", () => {
  it("F1, arm, F2, F3, F5, F4 each killed after landing: the next invocations finish, uids kept, record gone, 0 pod/claim deletes", {
    timeout: 300_000,
  }, async () => {
    await timed("kill-after-each", async () => {
      const set = "web-crash";
      const since = Date.now();
      const old = await createSet(e2e, set, { storageClass: sc, whenDeleted: "Delete", replicas: 2 });
      await grow(set, 2);
      const before = await uidsOf(e2e, set);
      // The annotation asks for the re-create, so that each `claimstep step` does one request of it.
      expect(
        (
          await e2e.api.patch("statefulsets", set, {
            metadata: { annotations: { "claimstep.io/finalize": "Recreate" } },
          })
        ).status,
      ).toBe(200);

      const dir = mkdtempSync(join(tmpdir(), "claimstep-e2e-proxy-"));
      const proxy = await startKillingProxy(e2e, dir);
      const ns = e2e.namespace;
      const cm = `/api/v1/namespaces/${ns}/configmaps`;
      const sts = `/apis/apps/v1/namespaces/${ns}/statefulsets`;
      const points: { name: string; match: (m: string, p: string, s: number, body: string) => boolean }[] = [
        { name: "F1 POST configmaps", match: (m, p, s) => m === "POST" && p === cm && s === 201 },
        {
          name: "arm PATCH configmaps",
          match: (m, p, s) => m === "PATCH" && p === `${cm}/${recordName(set)}` && s === 200,
        },
        { name: "F2 DELETE statefulsets", match: (m, p, s) => m === "DELETE" && p === `${sts}/${set}` && s === 200 },
        { name: "F3 POST statefulsets", match: (m, p, s) => m === "POST" && p === sts && s === 201 },
        {
          // A PATCH of the set like every status write: told apart by what it carries.
          name: "F5 PATCH statefulsets (managedFields)",
          match: (m, p, s, body) =>
            m === "PATCH" && p === `${sts}/${set}` && s === 200 && body.includes('"managedFields"'),
        },
        {
          name: "F4 DELETE configmaps",
          match: (m, p, s) => m === "DELETE" && p === `${cm}/${recordName(set)}` && s === 200,
        },
      ];
      const log: string[] = [];
      const normal: CliRun[] = [];
      try {
        for (const point of points) {
          let killed = false;
          for (let attempt = 0; attempt < 40 && !killed; attempt++) {
            let child: import("node:child_process").ChildProcess | undefined;
            proxy.arm(point.match, () => {
              killed = true;
              child?.kill("SIGKILL");
            });
            const r = await claimstep(e2e, ["step", set, "-o", "json"], {
              kubeconfig: proxy.kubeconfig,
              onSpawn: (c) => (child = c),
            });
            proxy.disarm();
            const d = jsonLines(r.stdout)[0]?.decision;
            log.push(
              `${point.name} #${attempt + 1}: ${r.signal ?? `exit ${r.code}`}${d ? ` ${d.phase}/${d.reason}` : ""}`,
            );
            if (killed) {
              expect(r.signal, describeRun(r)).toBe("SIGKILL");
              break;
            }
            expect(r.code, describeRun(r)).toBe(0);
            expect(d?.phase, describeRun(r)).not.toBe("Blocked");
            normal.push(r);
            await sleep(500);
          }
          expect(killed, `${point.name} never reached:\n${log.join("\n")}`).toBe(true);
        }
      } finally {
        await proxy.close();
      }
      // After the last kill (right after F4's delete): the next invocation finds nothing to do.
      const fin = await claimstep(e2e, ["run", set, "--interval", "1s", "--timeout", "1m", "-o", "json"]);
      expect(fin.code, describeRun(fin)).toBe(0);
      const finSteps = jsonLines(fin.stdout).filter((l) => l.decision);
      expect(finSteps.at(-1)?.decision.phase).toBe("Complete");
      normal.push(fin);
      log.push(`run: ${finSteps.map((l) => `${l.decision.phase}/${l.decision.reason}`).join(", ")}`);
      killLog = log;

      await expectRecreated(set, before, old.metadata.uid!, "Delete");
      await auditCaughtUp(e2e);
      expectCleanAudit(e2e, since, { expectedErrors: finalizeErrors });
      for (const r of normal) {
        const steps = r === fin ? finSteps.length : 1;
        expectWithinBudget(claimstepRequestsIn(e2e, r.startedAt, r.endedAt), steps, `step ${set}`);
      }
    });
  });
});

let killLog: string[] = [];
const budgetTrail: string[] = [];
afterAll(() => {
  if (budgetTrail.length) console.log(`requests per step (reads/writes/event writes):\n${budgetTrail.join("\n")}`);
});
afterAll(() => {
  if (killLog.length) console.log(`finalize killed after each request:\n${killLog.join("\n")}`);
});
