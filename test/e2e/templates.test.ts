// Issue 27 on a real API server (kube-apiserver + kube-controller-manager v1.34, the node agent as
// kubelet and CSI driver): a `logs` claim template added to a running 3-replica set through the
// shipped CLI (`claimstep set … --add`, `claimstep run`) — every pod ends mounting data and logs, the
// data claims keep their uids and what was written on them, the audit log shows claimstep's
// creates, its evictions lowest ordinal first and no claim deleted — then removed again (the logs
// claims kept, labelled, mounted by no pod, listed by `claimstep status`). And what the real
// StatefulSet controller does with the wrong order (the highest pod evicted first after the
// re-create: left down) and with a pod template that mounts a volume the set lacks (422): the
// facts the planner's order and its guard rest on. The planted bug through claimstep's own code: the
// re-create's POST loses the added template on the way — refused by the server, nothing lost, and
// the unfaulted CLI finishes. And an add that must be refused (a StorageClass that does not exist):
// by `set --add`, and Blocked through the annotations, before anything is written.
import { Agent } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeReader } from "../../adapters/kube/reader.js";
import { kubeWriters } from "../../adapters/kube/writer.js";
import { requestWithAgent } from "../../adapters/kube-node/agent-fetch.js";
import { nodeKubeTarget } from "../../adapters/kube-node/kubeconfig.js";
import { runStep } from "../../functions/step.js";
import {
  type AuditEntry,
  byNodeAgent,
  CONTROLLER_MANAGER_USER,
  checkAudit,
  describeAudit,
  type KubeObject,
  NODE_AGENT_USER,
  ok,
  storageClass,
  useControlPlane,
  waitFor,
} from "./support/index.js";
import { budgetNote, checkBudget, claimstepRequests } from "./support/scenario-cli.js";
import {
  auditCaughtUp,
  type CliRun,
  claimstep,
  describeRun,
  jsonLines,
  routineErrors,
  sleep,
} from "./support/scenario-finalize.js";
import {
  addAnnotations,
  addRemoveAudit,
  claimNamesOf,
  cliHasTemplateEdits,
  describeState,
  isReady,
  K,
  podMonitor,
  removeAnnotations,
  setPods,
  templateClaims,
  templatesSetManifest,
  trailOf,
  uidMap,
} from "./support/scenario-templates.js";

const e2e = useControlPlane({ prefix: "templates", needsFakeDriver: true });
let sc = "";
const report: string[] = [];

beforeAll(async () => {
  if (!e2e.local) return;
  sc = `${e2e.namespace}-fast`;
  ok(await e2e.admin.create("storageclasses", null, storageClass(sc)), `create StorageClass ${sc}`);
});

afterAll(async () => {
  if (!e2e.local) return;
  await e2e.admin.delete("storageclasses", null, sc).catch(() => undefined);
  if (report.length) console.log(`issue 27 on the real server (${e2e.info.version}):\n${report.join("\n")}`);
});

/** Creates the set (admin) and waits until every pod is Ready and every claim Bound. */
async function createTemplatesSet(
  name: string,
  replicas = 3,
  policy: "OrderedReady" | "Parallel" = "OrderedReady",
): Promise<KubeObject> {
  ok(
    await e2e.api.create("statefulsets", templatesSetManifest(name, { storageClass: sc, replicas, policy })),
    `create StatefulSet ${name}`,
  );
  await waitFor(
    async () => {
      const s = (await e2e.api.get("statefulsets", name)).body;
      const pods = await setPods(e2e, name);
      const data = await templateClaims(e2e, name, "data");
      return (
        s.status?.readyReplicas === replicas &&
        s.status?.observedGeneration === s.metadata.generation &&
        pods.filter(isReady).length === replicas &&
        data.length === replicas &&
        data.every((c) => c.status?.phase === "Bound")
      );
    },
    { timeoutMs: 90_000, intervalMs: 250, what: `StatefulSet ${name}: ${replicas} pods Ready, claims Bound` },
  );
  return ok(await e2e.api.get("statefulsets", name), `get ${name}`);
}

/** The markers of the claims (by name): what the node agent recorded as written on each claim's uid. */
function markersOf(claims: KubeObject[]): Record<string, string | undefined> {
  return Object.fromEntries(claims.map((c) => [c.metadata.name!, e2e.agent!.markers.get(c.metadata.uid!)]));
}

const evict = (name: string) =>
  e2e.admin
    .sub("eviction")
    .create("pods", e2e.namespace, name, { apiVersion: "policy/v1", kind: "Eviction", metadata: { name } });

// ---------------------------------------------------------------------------------------------

describe("the node agent's written markers", () => {
  it("a marker per claim uid: written when a pod first mounts the claim, kept across a pod restart", {
    timeout: 120_000,
  }, async () => {
    const set = "mark";
    await createTemplatesSet(set, 1);
    const [claim] = await templateClaims(e2e, set, "data");
    const [pod] = await setPods(e2e, set);
    const uid = claim!.metadata.uid!;
    const first = await waitFor(async () => e2e.agent!.markers.get(uid), {
      timeoutMs: 10_000,
      what: `the marker of ${claim!.metadata.name}`,
    });
    expect(first).toBe(`${e2e.namespace}/data-${set}-0 written by pod ${set}-0 (${pod!.metadata.uid})`);
    e2e.agent!.writeMarker(uid, "rows 1-1000");

    expect((await evict(`${set}-0`)).status).toBe(201);
    const restarted = await waitFor(
      async () => {
        const p = (await setPods(e2e, set))[0];
        return p && p.metadata.uid !== pod!.metadata.uid && isReady(p) ? p : undefined;
      },
      { timeoutMs: 60_000, what: `${set}-0 restarted and Ready` },
    );
    expect(claimNamesOf(restarted)).toEqual([`data-${set}-0`]);
    const [again] = await templateClaims(e2e, set, "data");
    expect(again!.metadata.uid).toBe(uid);
    expect(e2e.agent!.markers.get(uid)).toBe("rows 1-1000");
  });
});

// ---------------------------------------------------------------------------------------------

/** The re-create's expected answers: the set read while it is gone (between F2 and F3), the create
 * refused while the old set's orphan finalizer runs. */
const finalizeErrors = (e: AuditEntry) =>
  e.resource === "statefulsets" && ((e.verb === "get" && e.code === 404) || (e.verb === "create" && e.code === 409));
/** A 409 on claimstep's write of the set within 2 s after its own eviction: the eviction made the
 * StatefulSet controller write the set's status, moving its resourceVersion. */
const lostRaceAfterEviction = (e: AuditEntry): boolean => {
  if (!(e.resource === "statefulsets" && (e.verb === "patch" || e.verb === "update") && e.code === 409)) return false;
  const t = Date.parse(e.time);
  return e2e
    .audit({ user: e2e.info.claimstepUser, resource: "pods", subresource: "eviction" })
    .some((v) => v.code === 201 && Date.parse(v.time) <= t && t - Date.parse(v.time) < 2000);
};

interface Before {
  set: KubeObject;
  pods: Record<string, string>;
  data: Record<string, string>;
  dataMarkers: Record<string, string | undefined>;
}

/** `claimstep run` to Complete, with the pods watched; the trail and the state on failure. */
async function runToComplete(
  SET: string,
  what: string,
): Promise<{ run: CliRun; steps: any[]; seconds: number; monitor: ReturnType<typeof podMonitor> }> {
  const monitor = podMonitor(e2e, SET);
  const run = await claimstep(e2e, ["run", SET, "--interval", "1s", "--timeout", "3m", "-o", "json"], {
    timeoutMs: 200_000,
  });
  await monitor.done();
  const steps = jsonLines(run.stdout).filter((l) => l.decision);
  const seconds = (run.endedAt - run.startedAt) / 1000;
  const last = steps.at(-1)?.decision;
  if (run.code !== 0 || last?.phase !== "Complete") {
    const state = await describeState(e2e, SET);
    const msg = `${what}: claimstep run exit ${run.code ?? run.signal} after ${seconds.toFixed(1)} s, last ${last?.phase}/${last?.reason}: ${last?.message}\nsteps: ${trailOf(steps)}\n--- the server's objects\n${state}\n--- stderr\n${run.stderr.slice(-3000)}`;
    report.push(`${what} FAILED:\n${msg}`);
    expect.fail(msg);
  }
  return { run, steps, seconds, monitor };
}

/** 0 claim deletes by anyone; pod deletes only the node agent finishing claimstep's evictions. */
function expectOnlyEvictions(since: number, evictions: AuditEntry[]) {
  const events = e2e.audit({ since: new Date(since) });
  const check = checkAudit({
    events,
    namespace: e2e.namespace,
    claimstepUser: e2e.info.claimstepUser,
    expectedErrors: (e) => routineErrors(e) || finalizeErrors(e) || lostRaceAfterEviction(e),
  });
  expect(check.unexpectedDeletes, describeAudit(check.unexpectedDeletes)).toEqual([]);
  expect(check.unexpectedErrors, `errors answered to claimstep:\n${describeAudit(check.unexpectedErrors)}`).toEqual([]);
  const podDeletes = events.filter(
    (e) => e.verb === "delete" && e.resource === "pods" && e.subresource === "" && e.code < 300,
  );
  for (const d of podDeletes) {
    expect(byNodeAgent(d), describeAudit([d])).toBe(true);
    // The agent only finishes a graceful deletion: here, always one of claimstep's evictions.
    expect(
      evictions.some((v) => v.code === 201 && v.name === d.name && Date.parse(v.time) <= Date.parse(d.time)),
      `pod delete without claimstep's eviction before it: ${describeAudit([d])}\nevictions:\n${describeAudit(evictions)}`,
    ).toBe(true);
  }
  const claimDeletes = events.filter((e) => e.resource === "persistentvolumeclaims" && e.verb.startsWith("delete"));
  expect(claimDeletes, describeAudit(claimDeletes)).toEqual([]);
}

const POLICIES = [
  ["OrderedReady", "web"],
  ["Parallel", "par"],
] as const;
for (const [policy, SET] of POLICIES)
  describe.sequential(`issue 27 (podManagementPolicy ${policy}): a claim template added to a running set, then removed, through the shipped CLI`, () => {
    let before: Before | undefined;
    let logsUids: Record<string, string> = {};
    let logsMarkers: Record<string, string | undefined> = {};

    it("add logs: every pod ends mounting data and logs, data claims keep uids and markers, evictions lowest first, 0 claim deletes", {
      timeout: 360_000,
    }, async () => {
      const set0 = await createTemplatesSet(SET, 3, policy);
      const data0 = await templateClaims(e2e, SET, "data");
      await waitFor(async () => data0.every((c) => e2e.agent!.markers.has(c.metadata.uid!)), {
        timeoutMs: 10_000,
        what: "the data claims' markers",
      });
      before = {
        set: set0,
        pods: uidMap(await setPods(e2e, SET)),
        data: uidMap(data0),
        dataMarkers: markersOf(data0),
      };
      const since = Date.now();

      // The user's request: `claimstep set web logs --add …`, or (until the CLI has it) the
      // annotations it writes, as `kubectl annotate` would.
      const cap = cliHasTemplateEdits();
      let via: string;
      if (cap.add) {
        const args = ["set", SET, "logs", "--add", "--storage", "1Gi"];
        if (cap.mountPath) args.push("--mount-path", "/logs");
        if (cap.storageClass) args.push(`--${cap.storageClass}`, sc);
        const s = await claimstep(e2e, args);
        expect(s.code, describeRun(s)).toBe(0);
        via = `claimstep ${args.join(" ")}`;
        const live = ok(await e2e.api.get("statefulsets", SET), "get set");
        if (live.metadata.annotations?.[K.finalize] !== "Recreate") {
          ok(await e2e.api.patch("statefulsets", SET, { metadata: { annotations: { [K.finalize]: "Recreate" } } }));
          via += ` + ${K.finalize}: Recreate`;
        }
      } else {
        const live = ok(await e2e.api.get("statefulsets", SET), "get set");
        const annotations = addAnnotations(live, "logs", { storageClass: sc, storage: "1Gi", mountPath: "/logs" });
        ok(await e2e.api.patch("statefulsets", SET, { metadata: { annotations } }), "annotate the set");
        via = `the annotations (${Object.keys(annotations).join(", ")})`;
      }

      const { run, steps, seconds, monitor } = await runToComplete(SET, `add logs (${policy})`);

      const state = await describeState(e2e, SET);
      // The set: re-created, with both templates, the user's partition, nothing of claimstep's left held.
      const live = ok(await e2e.api.get("statefulsets", SET), "get set");
      expect(live.metadata.uid, state).not.toBe(before.set.metadata.uid);
      expect(
        live.spec.volumeClaimTemplates.map((t: any) => t.metadata.name),
        state,
      ).toEqual(["data", "logs"]);
      expect(live.spec.updateStrategy?.rollingUpdate?.partition ?? 0, state).toBe(0);
      expect(live.metadata.annotations?.[K.userPartition], state).toBeUndefined();
      expect(live.metadata.annotations?.[K.podTemplate], state).toBeUndefined();

      // Every pod: restarted, Ready, mounting its data and its logs claim.
      const pods = await setPods(e2e, SET);
      expect(
        pods.map((p) => p.metadata.name),
        state,
      ).toEqual([`${SET}-0`, `${SET}-1`, `${SET}-2`]);
      for (const p of pods) {
        const n = p.metadata.name!.slice(SET.length + 1);
        expect(isReady(p), `${p.metadata.name} Ready\n${state}`).toBe(true);
        expect(claimNamesOf(p), state).toEqual([`data-${SET}-${n}`, `logs-${SET}-${n}`]);
        expect(p.metadata.uid, `${p.metadata.name} restarted`).not.toBe(before.pods[p.metadata.name!]);
      }
      // The data claims: the same uids, and what was written on them is still there.
      const data = await templateClaims(e2e, SET, "data");
      expect(uidMap(data), state).toEqual(before.data);
      expect(markersOf(data)).toEqual(before.dataMarkers);
      // The logs claims: created (by the StatefulSet controller), Bound, written by the pods now running.
      const logs = await templateClaims(e2e, SET, "logs");
      expect(
        logs.map((c) => c.metadata.name),
        state,
      ).toEqual([`logs-${SET}-0`, `logs-${SET}-1`, `logs-${SET}-2`]);
      for (const c of logs) {
        expect(c.status?.phase, `${c.metadata.name}\n${state}`).toBe("Bound");
        expect(c.status?.capacity?.storage).toBe("1Gi");
        const pod = pods.find((p) => claimNamesOf(p).includes(c.metadata.name!))!;
        expect(e2e.agent!.markers.get(c.metadata.uid!)).toBe(
          `${e2e.namespace}/${c.metadata.name} written by pod ${pod.metadata.name} (${pod.metadata.uid})`,
        );
      }
      logsUids = uidMap(logs);
      // While it ran: at most one pod down (maxUnavailable 1); every new pod mounted both claims.
      expect(monitor.minReady(), "fewest Ready pods while claimstep ran").toBeGreaterThanOrEqual(2);
      const fresh = monitor.seen().filter((p) => !Object.values(before!.pods).includes(p.uid));
      expect(fresh.map((p) => p.name)).toEqual([`${SET}-0`, `${SET}-1`, `${SET}-2`]);
      for (const p of fresh) expect(p.claims, p.name).toEqual([`data-${p.name}`, `logs-${p.name}`]);

      // The audit log.
      await auditCaughtUp(e2e);
      const a = addRemoveAudit(e2e, SET, since, `add (${policy})`);
      // B2's budget per step (≤ 5 reads, ≤ 2 writes, 3 for an eviction step, ≤ 2 requests per event).
      const budget = checkBudget(
        claimstepRequests(e2e, new Date(run.startedAt).toISOString(), new Date(run.endedAt).toISOString()),
        steps,
      );
      expect(budget.problems, JSON.stringify(budget, null, 1)).toEqual([]);
      const all = describeAudit(a.claimstepWrites);
      expect(
        a.creates.map((e) => `${e.resource} ${e.name}`),
        all,
      ).toEqual(expect.arrayContaining([`configmaps claimstep-recreate-${SET}`, `statefulsets ${SET}`]));
      expect(a.orphanDeletes, all).toHaveLength(1);
      expect(
        a.evictions.filter((e) => e.code === 201).map((e) => e.name),
        all,
      ).toEqual([`${SET}-0`, `${SET}-1`, `${SET}-2`]);
      expect(a.claimDeletes, describeAudit(a.claimDeletes)).toEqual([]);
      expect(a.controllerClaimCreates.map((e) => e.name).sort()).toEqual(logs.map((c) => c.metadata.name).sort());
      expectOnlyEvictions(since, a.evictions);

      report.push(
        `add (${policy}, ${via}): claimstep run Complete in ${steps.length} steps, ${seconds.toFixed(1)} s; fewest Ready pods ${monitor.minReady()}/3`,
        `add (${policy}) steps: ${trailOf(steps)}`,
        `add (${policy}) requests: ${budgetNote(budget)}`,
        ...a.lines,
        `add (${policy}): claimstep's writes (audit log):\n${describeAudit(a.claimstepWrites)
          .split("\n")
          .map((l) => `  ${l}`)
          .join("\n")}`,
      );
    });

    it("remove logs: the logs claims kept (same uids), labelled orphaned-from, mounted by no pod; data intact; status lists them", {
      timeout: 360_000,
    }, async () => {
      expect(before, "the add ran first").toBeDefined();
      expect(Object.keys(logsUids)).toHaveLength(3);
      logsMarkers = markersOf(await templateClaims(e2e, SET, "logs"));
      const afterAdd = ok(await e2e.api.get("statefulsets", SET), "get set");
      const podsAfterAdd = uidMap(await setPods(e2e, SET));
      const since = Date.now();

      const cap = cliHasTemplateEdits();
      let via: string;
      if (cap.add) {
        const args = ["set", SET, "logs", "--remove"];
        const s = await claimstep(e2e, args);
        expect(s.code, describeRun(s)).toBe(0);
        via = `claimstep ${args.join(" ")}`;
        const live = ok(await e2e.api.get("statefulsets", SET), "get set");
        if (live.metadata.annotations?.[K.finalize] !== "Recreate") {
          ok(await e2e.api.patch("statefulsets", SET, { metadata: { annotations: { [K.finalize]: "Recreate" } } }));
          via += ` + ${K.finalize}: Recreate`;
        }
      } else {
        const annotations = removeAnnotations(afterAdd, "logs");
        ok(await e2e.api.patch("statefulsets", SET, { metadata: { annotations } }), "annotate the set");
        via = `the annotations (${Object.keys(annotations).join(", ")})`;
      }

      const { run, steps, seconds, monitor } = await runToComplete(SET, `remove logs (${policy})`);
      const state = await describeState(e2e, SET);

      const live = ok(await e2e.api.get("statefulsets", SET), "get set");
      expect(live.metadata.uid, state).not.toBe(afterAdd.metadata.uid);
      expect(
        live.spec.volumeClaimTemplates.map((t: any) => t.metadata.name),
        state,
      ).toEqual(["data"]);
      expect(
        live.spec.template.spec.containers[0].volumeMounts.map((m: any) => m.name),
        state,
      ).toEqual(["data"]);
      expect(live.spec.updateStrategy?.rollingUpdate?.partition ?? 0, state).toBe(0);
      expect(live.metadata.annotations?.[K.userPartition], state).toBeUndefined();

      // The logs claims: still there (same uids, what was written on them too), labelled, unmounted.
      const logs = await templateClaims(e2e, SET, "logs");
      expect(uidMap(logs), state).toEqual(logsUids);
      expect(markersOf(logs)).toEqual(logsMarkers);
      for (const c of logs) expect(c.metadata.labels?.[K.orphanedFrom], `${c.metadata.name}\n${state}`).toBe(SET);
      const pods = await setPods(e2e, SET);
      expect(pods.map((p) => p.metadata.name)).toEqual([`${SET}-0`, `${SET}-1`, `${SET}-2`]);
      for (const p of pods) {
        expect(isReady(p), `${p.metadata.name} Ready\n${state}`).toBe(true);
        expect(claimNamesOf(p), state).toEqual([`data-${SET}-${p.metadata.name!.slice(SET.length + 1)}`]);
        expect(p.metadata.uid, `${p.metadata.name} restarted`).not.toBe(podsAfterAdd[p.metadata.name!]);
      }
      // The data claims: the uids and markers of before the add.
      const data = await templateClaims(e2e, SET, "data");
      expect(uidMap(data)).toEqual(before!.data);
      expect(markersOf(data)).toEqual(before!.dataMarkers);
      expect(monitor.minReady(), "fewest Ready pods while claimstep ran").toBeGreaterThanOrEqual(2);

      // `claimstep status` lists them with the command that deletes them.
      const st = await claimstep(e2e, ["status", SET]);
      expect(st.code, describeRun(st)).toBe(0);
      for (const name of Object.keys(logsUids)) expect(st.stdout, describeRun(st)).toContain(name);
      expect(st.stdout, describeRun(st)).toContain(
        `kubectl delete pvc -n ${e2e.namespace} ${Object.keys(logsUids).sort().join(" ")}`,
      );

      await auditCaughtUp(e2e);
      const a = addRemoveAudit(e2e, SET, since, `remove (${policy})`);
      // B2's budget per step (≤ 5 reads, ≤ 2 writes, 3 for an eviction step, ≤ 2 requests per event).
      const budget = checkBudget(
        claimstepRequests(e2e, new Date(run.startedAt).toISOString(), new Date(run.endedAt).toISOString()),
        steps,
      );
      expect(budget.problems, JSON.stringify(budget, null, 1)).toEqual([]);
      const all = describeAudit(a.claimstepWrites);
      expect(a.orphanDeletes, all).toHaveLength(1);
      expect(
        a.evictions.filter((e) => e.code === 201).map((e) => e.name),
        all,
      ).toEqual([`${SET}-0`, `${SET}-1`, `${SET}-2`]);
      // Claim patches: the revision label (data) and the orphaned-from label (logs, after the re-create).
      const patched = new Set(a.claimPatches.filter((e) => e.code < 300).map((e) => e.name));
      for (const name of Object.keys(logsUids)) expect(patched.has(name), `${name} labelled\n${all}`).toBe(true);
      expect(a.claimDeletes, describeAudit(a.claimDeletes)).toEqual([]);
      expectOnlyEvictions(since, a.evictions);

      report.push(
        `remove (${policy}, ${via}): claimstep run Complete in ${steps.length} steps, ${seconds.toFixed(1)} s; fewest Ready pods ${monitor.minReady()}/3`,
        `remove (${policy}) steps: ${trailOf(steps)}`,
        `remove (${policy}) requests: ${budgetNote(budget)}`,
        ...a.lines,
        `remove (${policy}): claimstep status lists ${Object.keys(logsUids).join(", ")} with kubectl delete pvc`,
      );
    });

    // Once is enough for the reuse: the same steps as the add (declared for OrderedReady only, so
    // that the run shows no skipped test).
    if (policy === "OrderedReady")
      it("re-add logs: the orphaned claims are reused (same uids, what was written on them), the label removed", {
        timeout: 360_000,
      }, async () => {
        expect(Object.keys(logsUids), "the remove ran first").toHaveLength(3);
        const podsBefore = uidMap(await setPods(e2e, SET));
        const since = Date.now();
        const args = ["set", SET, "logs", "--add", "--storage", "1Gi", "--storage-class", sc, "--mount-path", "/logs"];
        const s = await claimstep(e2e, args);
        expect(s.code, describeRun(s)).toBe(0);
        const { run, steps, seconds, monitor } = await runToComplete(SET, `re-add logs (${policy})`);
        const state = await describeState(e2e, SET);

        const logs = await templateClaims(e2e, SET, "logs");
        expect(uidMap(logs), state).toEqual(logsUids);
        expect(markersOf(logs), state).toEqual(logsMarkers);
        for (const c of logs) {
          expect(c.metadata.labels?.[K.orphanedFrom], `${c.metadata.name}\n${state}`).toBeUndefined();
          expect(c.status?.phase, `${c.metadata.name}\n${state}`).toBe("Bound");
        }
        const pods = await setPods(e2e, SET);
        for (const p of pods) {
          expect(isReady(p), `${p.metadata.name} Ready\n${state}`).toBe(true);
          expect(claimNamesOf(p), state).toEqual([`data-${p.metadata.name}`, `logs-${p.metadata.name}`]);
          expect(p.metadata.uid, `${p.metadata.name} restarted`).not.toBe(podsBefore[p.metadata.name!]);
        }
        const data = await templateClaims(e2e, SET, "data");
        expect(uidMap(data), state).toEqual(before!.data);
        expect(markersOf(data)).toEqual(before!.dataMarkers);
        expect(monitor.minReady(), "fewest Ready pods while claimstep ran").toBeGreaterThanOrEqual(2);

        await auditCaughtUp(e2e);
        const a = addRemoveAudit(e2e, SET, since, `re-add (${policy})`);
        const all = describeAudit(a.claimstepWrites);
        expect(
          a.evictions.filter((e) => e.code === 201).map((e) => e.name),
          all,
        ).toEqual([`${SET}-0`, `${SET}-1`, `${SET}-2`]);
        expect(a.controllerClaimCreates, describeAudit(a.controllerClaimCreates)).toEqual([]);
        expect(a.claimDeletes, describeAudit(a.claimDeletes)).toEqual([]);
        expectOnlyEvictions(since, a.evictions);
        const budget = checkBudget(
          claimstepRequests(e2e, new Date(run.startedAt).toISOString(), new Date(run.endedAt).toISOString()),
          steps,
        );
        expect(budget.problems, JSON.stringify(budget, null, 1)).toEqual([]);
        report.push(
          `re-add (${policy}, claimstep ${args.join(" ")}): claimstep run Complete in ${steps.length} steps, ${seconds.toFixed(1)} s; the 3 orphaned logs claims reused (same uids and markers), label removed; the controller created no claim`,
          `re-add (${policy}) steps: ${trailOf(steps)}`,
          ...a.lines,
        );
      });
  });

// ---------------------------------------------------------------------------------------------

describe("the real StatefulSet controller and the order (the facts the planner rests on)", () => {
  it("the planted bug, highest first: evicting pod-2 after a re-create that adds a template leaves it down until pods 0 and 1 match", {
    timeout: 240_000,
  }, async () => {
    const set = "order";
    const old = await createTemplatesSet(set);
    const data = uidMap(await templateClaims(e2e, set, "data"));
    const since = Date.now();

    // F2 and F3 by hand (what claimstep does): the orphan delete, the re-create with logs (and its
    // mount), the partition held at the top.
    const d = await e2e.api.delete("statefulsets", set, {
      propagationPolicy: "Orphan",
      preconditions: { uid: old.metadata.uid },
    });
    expect(d.status).toBe(200);
    await waitFor(async () => (await e2e.api.get("statefulsets", set)).status === 404, {
      timeoutMs: 30_000,
      what: `${set} gone`,
    });
    const next = templatesSetManifest(set, { storageClass: sc });
    next.spec.volumeClaimTemplates.push({
      metadata: { name: "logs" },
      spec: { accessModes: ["ReadWriteOnce"], storageClassName: sc, resources: { requests: { storage: "1Gi" } } },
    });
    next.spec.template.spec.containers[0].volumeMounts.push({ name: "logs", mountPath: "/logs" });
    next.spec.updateStrategy = { type: "RollingUpdate", rollingUpdate: { partition: 3 } };
    ok(await e2e.api.create("statefulsets", next), `re-create ${set} with logs`);
    // The controller adopts the pods and, from the lowest, creates pod-0's missing claim.
    await waitFor(async () => (await e2e.api.get("persistentvolumeclaims", `logs-${set}-0`)).status === 200, {
      timeoutMs: 30_000,
      what: `logs-${set}-0 created by the StatefulSet controller`,
    });

    // The wrong order: the highest pod first.
    const pod2 = ok(await e2e.api.get("pods", `${set}-2`), "get pod-2");
    const evicted = await evict(`${set}-2`);
    expect(evicted.status).toBe(201);
    await waitFor(
      async () => {
        const r = await e2e.api.get("pods", `${set}-2`);
        return r.status === 404 || r.body.metadata.uid !== pod2.metadata.uid;
      },
      { timeoutMs: 30_000, what: `${set}-2 gone` },
    );
    const goneAt = Date.now();
    // The controller has synced since (its status says 2 replicas, and it has tried pod-0 again)…
    await waitFor(async () => (await e2e.api.get("statefulsets", set)).body.status?.replicas === 2, {
      timeoutMs: 30_000,
      what: `${set} status.replicas 2`,
    });
    const refused = await waitFor(
      async () => {
        const r = e2e.audit({
          user: CONTROLLER_MANAGER_USER,
          verb: "update",
          resource: "pods",
          name: `${set}-0`,
          where: (e) =>
            e.code === 422 && Date.parse(e.time) >= goneAt - 1000 && /statefulset-controller$/.test(e.userAgent),
        });
        return r.length ? r : undefined;
      },
      { timeoutMs: 30_000, what: `the StatefulSet controller's refused update of ${set}-0 after ${set}-2 left` },
    );
    // …and has not re-created pod-2, nor created the claims of pods 1 and 2.
    const downState = await describeState(e2e, set);
    expect((await e2e.api.get("pods", `${set}-2`)).status, downState).toBe(404);
    expect((await e2e.api.get("persistentvolumeclaims", `logs-${set}-1`)).status, downState).toBe(404);
    expect((await e2e.api.get("persistentvolumeclaims", `logs-${set}-2`)).status, downState).toBe(404);
    const events = ok(await e2e.api.list("events"), "list events").items ?? [];
    const failed = events.find((e: KubeObject) => e.involvedObject?.name === set && e.reason === "FailedUpdate");
    expect(String(failed?.message ?? ""), downState).toMatch(/pod updates may not change fields other than/);
    const recreatedEarly = e2e.audit({
      user: CONTROLLER_MANAGER_USER,
      verb: "create",
      resource: "pods",
      since: new Date(goneAt),
    });
    expect(
      recreatedEarly.filter((e) => e.name === `${set}-2`),
      describeAudit(recreatedEarly),
    ).toEqual([]);

    // The order the controller can follow: lowest first. pod-0 → it comes back with logs; the
    // controller moves on to pod-1 (its claim), still not pod-2; pod-1 → then pod-2 comes back.
    const replace = async (n: number) => {
      const p = ok(await e2e.api.get("pods", `${set}-${n}`), `get ${set}-${n}`);
      expect((await evict(`${set}-${n}`)).status).toBe(201);
      return waitFor(
        async () => {
          const r = await e2e.api.get("pods", `${set}-${n}`);
          return r.status === 200 && r.body.metadata.uid !== p.metadata.uid && isReady(r.body) ? r.body : undefined;
        },
        { timeoutMs: 60_000, what: `${set}-${n} replaced and Ready` },
      );
    };
    const p0 = await replace(0);
    expect(claimNamesOf(p0)).toEqual([`data-${set}-0`, `logs-${set}-0`]);
    await waitFor(async () => (await e2e.api.get("persistentvolumeclaims", `logs-${set}-1`)).status === 200, {
      timeoutMs: 30_000,
      what: `logs-${set}-1 created once pod-0 matches`,
    });
    expect((await e2e.api.get("pods", `${set}-2`)).status, await describeState(e2e, set)).toBe(404);
    const p1 = await replace(1);
    expect(claimNamesOf(p1)).toEqual([`data-${set}-1`, `logs-${set}-1`]);
    const p2 = await waitFor(
      async () => {
        const r = await e2e.api.get("pods", `${set}-2`);
        return r.status === 200 && isReady(r.body) ? r.body : undefined;
      },
      { timeoutMs: 60_000, what: `${set}-2 re-created once pods 0 and 1 match` },
    );
    expect(claimNamesOf(p2)).toEqual([`data-${set}-2`, `logs-${set}-2`]);
    expect(uidMap(await templateClaims(e2e, set, "data"))).toEqual(data);

    await auditCaughtUp(e2e);
    const all = e2e.audit({ since: new Date(since) });
    const claimDeletes = all.filter((e) => e.resource === "persistentvolumeclaims" && e.verb.startsWith("delete"));
    expect(claimDeletes, describeAudit(claimDeletes)).toEqual([]);
    const podDeletes = all.filter((e) => e.resource === "pods" && e.verb === "delete" && e.subresource === "");
    for (const p of podDeletes) expect(p.user, describeAudit([p])).toBe(NODE_AGENT_USER);
    report.push(
      `highest first (by hand, the planted bug): ${set}-2 evicted after the re-create → status.replicas 2, ${set}-2 not re-created, the controller's update of ${set}-0 refused (${refused[0]!.code}: FailedUpdate "${String(failed?.message ?? "").slice(0, 120)}…"); ${set}-2 back only after ${set}-0 and ${set}-1 were replaced; data claims kept, 0 claim deletes`,
    );
  });

  it("a StatefulSet whose pod template mounts a volume it lacks is refused (422), nothing created", async () => {
    const m = templatesSetManifest("lacks", { storageClass: sc });
    m.spec.template.spec.containers[0].volumeMounts.push({ name: "logs", mountPath: "/logs" });
    const r = await e2e.api.create("statefulsets", m);
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(String((r.body as any).message)).toMatch(
      /spec\.template\.spec\.containers\[0\]\.volumeMounts\[1\]\.name: Not found: "logs"/,
    );
    expect((await e2e.api.get("statefulsets", "lacks")).status).toBe(404);
    report.push(`a pod template mounting a volume the set lacks: 422 ${String((r.body as any).message)}`);
  });
});

// ---------------------------------------------------------------------------------------------

describe("the planted bug through claimstep's own code: the re-create loses the added claim template", () => {
  it("the real server refuses the create (422: the pod template mounts logs, the set lacks it); pods and claims untouched; the unfaulted CLI finishes", {
    timeout: 300_000,
  }, async () => {
    const set = "planted";
    await createTemplatesSet(set, 2);
    const pods0 = uidMap(await setPods(e2e, set));
    const data0 = uidMap(await templateClaims(e2e, set, "data"));
    const since = Date.now();
    const s = await claimstep(e2e, [
      "set",
      set,
      "logs",
      "--add",
      "--storage",
      "1Gi",
      "--storage-class",
      sc,
      "--mount-path",
      "/logs",
    ]);
    expect(s.code, describeRun(s)).toBe(0);

    // The production client, reader and writers over the production transport, with the `logs`
    // claim template taken out of every StatefulSet POST on the way (no production code edited).
    const agent = new Agent({ ca: e2e.info.caPem, keepAlive: true });
    const dropped: string[] = [];
    const t = nodeKubeTarget(
      { kubeconfig: e2e.info.claimstepKubeconfig },
      {
        fetch: (url, init) => {
          if ((init.method ?? "GET").toUpperCase() === "POST" && /\/statefulsets(\?|$)/.test(url)) {
            const body = JSON.parse(String(init.body)) as KubeObject;
            const before = body.spec?.volumeClaimTemplates?.length ?? 0;
            body.spec.volumeClaimTemplates = (body.spec.volumeClaimTemplates ?? []).filter(
              (x: KubeObject) => x.metadata?.name !== "logs",
            );
            if (body.spec.volumeClaimTemplates.length !== before) dropped.push(url);
            init = { ...init, body: JSON.stringify(body) };
          }
          return requestWithAgent(url, init, agent);
        },
      },
    );
    const reader = new KubeReader(t.client);
    const writers = kubeWriters(t.client, { reportingInstance: "claimstep-e2e-planted" });
    const ref = { namespace: e2e.namespace, name: set };
    const trail: string[] = [];
    // Stops after the re-create has been refused (or the step has failed) this many times in a row.
    let failures = 0;
    try {
      for (let i = 0; i < 60 && failures < 5; i++) {
        let line: string;
        try {
          const r = await runStep({ reader, writers, ref, now: new Date() });
          const d = r.decision;
          line = `${d.phase}/${d.reason}${d.action ? ` → ${d.action.type}` : ""} [${r.outcome.kind}]: ${d.message}`;
          // The refused create: its step plans CreateSet, or (once the server's 422 is in) is Blocked on it.
          const refused =
            d.action?.type === "CreateSet" || (d.reason === "ApplyRejected" && r.outcome.kind === "refused");
          failures = refused && r.outcome.kind !== "applied" ? failures + 1 : 0;
          if (d.phase === "Complete" && !d.action && d.requeueAfter === undefined) break;
        } catch (err) {
          line = `threw: ${err instanceof Error ? err.message : String(err)}`;
          failures++;
        }
        if (trail.at(-1)?.replace(/ ×\d+$/, "") === line) {
          const n = Number(/ ×(\d+)$/.exec(trail.at(-1)!)?.[1] ?? 1);
          trail[trail.length - 1] = `${line} ×${n + 1}`;
        } else trail.push(line);
        await sleep(1000);
      }
    } finally {
      agent.destroy();
    }
    const faulted = `${trail.join("\n")}\n--- the server's objects\n${await describeState(e2e, set)}`;
    expect(dropped.length, faulted).toBeGreaterThan(0);

    // The real server refused every faulted create, saying why.
    await auditCaughtUp(e2e);
    const posts = e2e
      .audit({ since: new Date(since), user: e2e.info.claimstepUser, verb: "create", resource: "statefulsets" })
      .filter((e) => e.code !== 409);
    expect(
      posts.map((e) => e.code),
      `${describeAudit(posts)}\n${faulted}`,
    ).toEqual(posts.map(() => 422));
    expect(posts.length, faulted).toBeGreaterThan(0);
    // The pods and claims: untouched (same uids, pods still Ready: the orphans keep running).
    expect(uidMap(await setPods(e2e, set)), faulted).toEqual(pods0);
    for (const p of await setPods(e2e, set)) expect(isReady(p), `${p.metadata.name}\n${faulted}`).toBe(true);
    expect(uidMap(await templateClaims(e2e, set, "data")), faulted).toEqual(data0);
    const deletes = e2e
      .audit({ since: new Date(since) })
      .filter(
        (e) =>
          e.verb.startsWith("delete") &&
          e.subresource === "" &&
          (e.resource === "pods" || e.resource === "persistentvolumeclaims"),
      );
    expect(deletes, describeAudit(deletes)).toEqual([]);

    // Without the fault, the shipped CLI finishes from where it stands.
    const run = await claimstep(e2e, ["run", set, "--interval", "1s", "--timeout", "3m", "-o", "json"], {
      timeoutMs: 200_000,
    });
    const steps = jsonLines(run.stdout).filter((l) => l.decision);
    const after = await describeState(e2e, set);
    expect(run.code, `${describeRun(run)}\nsteps: ${trailOf(steps)}\n${after}`).toBe(0);
    expect(steps.at(-1)?.decision.phase, after).toBe("Complete");
    for (const p of await setPods(e2e, set)) {
      expect(isReady(p), after).toBe(true);
      expect(claimNamesOf(p), after).toEqual([`data-${p.metadata.name}`, `logs-${p.metadata.name}`]);
    }
    expect(uidMap(await templateClaims(e2e, set, "data")), after).toEqual(data0);
    await auditCaughtUp(e2e);
    const claimDeletes = e2e
      .audit({ since: new Date(since) })
      .filter((e) => e.resource === "persistentvolumeclaims" && e.verb.startsWith("delete"));
    expect(claimDeletes, describeAudit(claimDeletes)).toEqual([]);
    report.push(
      `planted bug (the re-create's POST without the logs template, ${dropped.length} POST(s) altered): the real server answered ${[...new Set(posts.map((e) => `${e.code}${e.message ? ` (${e.message})` : ""}`))].map((x) => `${posts.filter((e) => `${e.code}${e.message ? ` (${e.message})` : ""}` === x).length} × ${x}`).join(", ")}; claimstep's steps:\n  ${trail.join("\n  ")}\n  pods and claims untouched (same uids, pods Ready); the unfaulted CLI then: ${trailOf(steps)}`,
    );
  });
});

describe("an add claimstep must refuse on the real server", () => {
  it("an added template whose StorageClass does not exist: `set --add` refuses, the annotations' door is Blocked naming it; nothing re-created, no pod evicted", {
    timeout: 180_000,
  }, async () => {
    const set = "noclass";
    const old = await createTemplatesSet(set, 2);
    const pods0 = uidMap(await setPods(e2e, set));
    const since = Date.now();
    const missing = `${e2e.namespace}-missing`;
    // The CLI's door: refused, nothing written.
    const s = await claimstep(e2e, [
      "set",
      set,
      "logs",
      "--add",
      "--storage",
      "1Gi",
      "--storage-class",
      missing,
      "--mount-path",
      "/logs",
    ]);
    expect(s.code, describeRun(s)).toBe(1);
    expect(s.stderr, describeRun(s)).toContain(`StorageClass "${missing}" not found`);
    expect(s.stderr, describeRun(s)).toContain("nothing written");
    const unchanged = ok(await e2e.api.get("statefulsets", set), "get set");
    expect(unchanged.metadata.resourceVersion).toBe(old.metadata.resourceVersion);

    // The annotations' door (kubectl annotate, the webhook, GitOps): the planner blocks, naming it.
    const annotations = addAnnotations(unchanged, "logs", {
      storageClass: missing,
      storage: "1Gi",
      mountPath: "/logs",
    });
    ok(await e2e.api.patch("statefulsets", set, { metadata: { annotations } }), "annotate the set");
    const run = await claimstep(e2e, ["run", set, "--interval", "1s", "--timeout", "1m", "-o", "json"], {
      timeoutMs: 90_000,
    });
    const steps = jsonLines(run.stdout).filter((l) => l.decision);
    const last = steps.at(-1)?.decision;
    const state = await describeState(e2e, set);
    const why = `${describeRun(run)}\nsteps: ${trailOf(steps)}\n${state}`;
    expect(run.code, why).toBe(2);
    expect(last?.phase, why).toBe("Blocked");
    expect(last?.message, why).toContain(missing);
    const live = ok(await e2e.api.get("statefulsets", set), "get set");
    expect(live.metadata.uid, state).toBe(old.metadata.uid);
    expect(
      live.spec.volumeClaimTemplates.map((t: any) => t.metadata.name),
      state,
    ).toEqual(["data"]);
    expect(live.spec.updateStrategy?.rollingUpdate?.partition ?? 0, state).toBe(0);
    expect(live.metadata.annotations?.[K.userPartition], state).toBeUndefined();
    expect(uidMap(await setPods(e2e, set)), state).toEqual(pods0);
    await auditCaughtUp(e2e);
    // No create or delete of anything (a record, the set, an eviction) by claimstep; no claim written.
    const writes = e2e
      .audit({ since: new Date(since), user: e2e.info.claimstepUser })
      .filter(
        (e) =>
          e.resource !== "events" &&
          (["create", "delete"].includes(e.verb) || (e.resource === "persistentvolumeclaims" && e.verb !== "list")),
      );
    expect(writes, describeAudit(writes)).toEqual([]);
    report.push(
      `an added template naming a StorageClass that does not exist: set --add exit 1 ("${s.stderr.trim().slice(0, 160)}"); through the annotations: run exit 2 after ${steps.length} step(s), ${last?.phase}/${last?.reason}: ${last?.message}; nothing re-created, no pod evicted, no claim written`,
    );
  });
});
