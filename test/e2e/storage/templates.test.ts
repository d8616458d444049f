// Issue 34: templates added and removed, and the restart of pods whose file system waits for them,
// on real storage and real pods, with BOTH shipped modes running at once as deployed — the
// Deployment's `claimstep serve` (two replicas, the Lease) and the CronJob's `step --all -A` — so
// each change is carried by whichever comes first while the other acts on the same set. A person
// asks with `claimstep set`; nobody steps by hand. Data is read back from the driver's directories.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CronLoop,
  type Deployed,
  type SetWatch,
  startCronLoop,
  startDeployment,
  watchSets,
} from "../support/deployed.js";
import { describeAudit, type KubeObject, ok, useControlPlane } from "../support/index.js";
import {
  checkCompleteIsTrue,
  claimsOfSet,
  createRealSet,
  isPodReady,
  K,
  podsOfSet,
  statusOf,
  volumeData,
  waitSet,
} from "../support/real-storage.js";
import { claimstep, describeRun } from "../support/scenario-finalize.js";

const e2e = useControlPlane({ prefix: "rs-templates" });
const report: string[] = [];
const uids = (xs: KubeObject[]) => Object.fromEntries(xs.map((x) => [x.metadata.name!, x.metadata.uid!]));
const mounts = (p: KubeObject): string[] =>
  (p.spec?.volumes ?? [])
    .map((v: { persistentVolumeClaim?: { claimName?: string } }) => v.persistentVolumeClaim?.claimName)
    .filter(Boolean)
    .sort();

async function set(args: string[]): Promise<void> {
  const r = await claimstep(e2e, ["set", ...args], { kubeconfig: e2e.info.adminKubeconfig });
  expect(r.code, `claimstep set ${args.join(" ")}\n${describeRun(r)}`).toBe(0);
}

afterAll(() => {
  if (e2e.available) console.log(`issue 34, templates and restarts on real storage:\n${report.join("\n")}`);
});

describe.sequential("on the real node, serve and the CronJob both running as deployed", () => {
  let dep: Deployed | undefined;
  let cron: CronLoop | undefined;
  let watch: SetWatch | undefined;
  let ns = "";

  beforeAll(async () => {
    if (!e2e.available) return;
    ns = e2e.namespace;
    dep = await startDeployment(e2e, { env: { CLAIMSTEP_INTERVAL_SECONDS: "3", CLAIMSTEP_NAMESPACES: ns } });
    await dep.waitSweeper();
    cron = startCronLoop(e2e, { periodMs: 4_000 });
    watch = await watchSets(e2e);
  });
  afterAll(async () => {
    await watch?.stop();
    await cron?.stop();
    await dep?.stop();
  });

  it("a template added (logs), then removed: re-created each time, every pod back mounting what the set says, data claims and bytes untouched, the removed claims kept with their bytes", async () => {
    const name = "tpl";
    await createRealSet(e2e, name, { templates: [{ name: "data", size: "1Gi" }], replicas: 2 });
    const dataClaims = await claimsOfSet(e2e, name, ["data"]);
    const data = await volumeData(e2e, dataClaims);
    const podsBefore = uids(await podsOfSet(e2e, name));
    const since = Date.now();
    const completeAdd = checkCompleteIsTrue(e2e, watch!, name, ["data", "logs"]);

    await set([name, "logs", "--add", "--storage", "1Gi", "--mount-path", "/logs", "-n", ns]);
    // The set's pods mount only `data` until the set is re-created with `logs`; the new pod template
    // (written by `set`) then writes a marker on /logs, and becomes Ready only once it is there.
    await waitSet(
      e2e,
      name,
      ["data", "logs"],
      "re-created with logs, every pod mounting data and logs, Complete",
      async (live) => {
        if (statusOf(live).phase !== "Complete") return false;
        if (live.spec.volumeClaimTemplates.map((t: KubeObject) => t.metadata.name).join() !== "data,logs") return false;
        const pods = await podsOfSet(e2e, name);
        return (
          pods.length === 2 &&
          pods.every(
            (p) =>
              isPodReady(p) &&
              mounts(p).join() === [`data-${p.metadata.name}`, `logs-${p.metadata.name}`].sort().join(),
          )
        );
      },
      240_000,
    );
    const tAdd = ((Date.now() - since) / 1000).toFixed(1);
    await completeAdd.settled();
    expect(
      completeAdd.violations,
      `Complete said only of pods mounting data and logs\n${watch!.describe(name, since)}`,
    ).toEqual([]);
    const logsClaims = await claimsOfSet(e2e, name, ["logs"]);
    expect(logsClaims.map((c) => c.metadata.name)).toEqual([`logs-${name}-0`, `logs-${name}-1`]);
    const logs = await volumeData(e2e, logsClaims);
    expect(uids(await claimsOfSet(e2e, name, ["data"]))).toEqual(uids(dataClaims));
    expect(await volumeData(e2e, dataClaims)).toEqual(data);
    for (const p of await podsOfSet(e2e, name))
      expect(p.metadata.uid, `${p.metadata.name} restarted to mount logs`).not.toBe(podsBefore[p.metadata.name!]);

    const since2 = Date.now();
    const complete = checkCompleteIsTrue(e2e, watch!, name, ["data"]);
    await set([name, "logs", "--remove", "-n", ns]);
    await waitSet(
      e2e,
      name,
      ["data", "logs"],
      "re-created without logs, every pod mounting data only, Complete",
      async (live) => {
        if (statusOf(live).phase !== "Complete") return false;
        if (live.spec.volumeClaimTemplates.map((t: KubeObject) => t.metadata.name).join() !== "data") return false;
        const pods = await podsOfSet(e2e, name);
        return pods.length === 2 && pods.every((p) => isPodReady(p) && mounts(p).join() === `data-${p.metadata.name}`);
      },
      240_000,
    );
    await complete.settled();
    const tRemove = ((Date.now() - since2) / 1000).toFixed(1);
    const kept = await claimsOfSet(e2e, name, ["logs"]);
    expect(uids(kept), "the removed template's claims are kept").toEqual(uids(logsClaims));
    for (const c of kept) expect(c.metadata.labels?.[K.orphanedFrom], c.metadata.name).toBe(name);
    expect(await volumeData(e2e, kept), "their bytes too").toEqual(logs);
    expect(uids(await claimsOfSet(e2e, name, ["data"]))).toEqual(uids(dataClaims));
    expect(await volumeData(e2e, dataClaims)).toEqual(data);
    expect(complete.violations, watch!.describe(name, since2)).toEqual([]);
    const claimDeletes = e2e
      .audit({ since: new Date(since), resource: "persistentvolumeclaims" })
      .filter((a) => a.verb === "delete");
    expect(describeAudit(claimDeletes), "no claim deleted by anyone").toBe("");
    const runs = cron!.runs.filter((r) => r.startedAt >= since);
    report.push(
      `add logs: Complete ${tAdd} s after the request; remove logs: ${tRemove} s; CronJob runs meanwhile: ${runs.length} (exit codes ${[...new Set(runs.map((r) => r.code ?? r.signal))].join(",")})\n${watch!.describe(name, since)}`,
    );
  });

  it("restart-pods WhenRequired (restart-after 1s): a pod whose file system still waits is evicted and comes back on the same claim; the claim grows, the bytes stay", async () => {
    const name = "rst";
    await createRealSet(e2e, name, {
      templates: [{ name: "data", size: "1Gi" }],
      replicas: 2,
      annotations: {
        [K.strategy]: "InPlace",
        "claimstep.io/restart-pods": "WhenRequired",
        "claimstep.io/restart-after": "1s",
      },
    });
    const before = await claimsOfSet(e2e, name, ["data"]);
    const data = await volumeData(e2e, before);
    // A pod claimstep evicted may still be starting when the claims are all done: Complete waits
    // for it to be Ready (design rule 21, issue 36 point 3).
    const complete = checkCompleteIsTrue(e2e, watch!, name, ["data"]);
    const since = Date.now();
    await set([name, "data", "--storage", "2Gi", "-n", ns]);
    await waitSet(e2e, name, ["data"], "Complete at 2Gi", async (live) => {
      if (statusOf(live).phase !== "Complete") return false;
      return (await claimsOfSet(e2e, name, ["data"])).every((c) => c.status?.capacity?.storage === "2Gi");
    });
    await complete.settled();
    const after = await claimsOfSet(e2e, name, ["data"]);
    expect(uids(after)).toEqual(uids(before));
    expect(await volumeData(e2e, after)).toEqual(data);
    expect(complete.violations).toEqual([]);
    const mine = e2e.audit({ since: new Date(since), user: e2e.info.claimstepUser });
    const evictions = mine.filter((a) => a.resource === "pods" && a.subresource === "eviction" && a.code === 201);
    const deletes = mine.filter(
      (a) => a.verb === "delete" && (a.resource === "pods" || a.resource === "persistentvolumeclaims"),
    );
    expect(describeAudit(deletes)).toBe("");
    // Each eviction was of a pod whose claim's file system resize was pending (the only reason R1 gives).
    const events = ok(await e2e.api.list("events.events.k8s.io")).items ?? [];
    const evicted = events.filter((e: KubeObject) => e.reason === "PodEvicted" && e.regarding?.name === name);
    // Events are named from (set, reason, note): the same pod evicted again while the same resize
    // waits (its new pod older than restart-after, 1 s here) raises the series count of the one
    // written, as the API server's own recorder does. Count occurrences, not objects.
    const occurrences = evicted.reduce((n: number, e: KubeObject) => n + (e.series?.count ?? 1), 0);
    expect(occurrences, "one PodEvicted occurrence per eviction").toBe(evictions.length);
    report.push(
      `restart-pods WhenRequired, restart-after 1s: ${complete.notReady.join("; ") || "every pod Ready at Complete"}; ${evictions.length} eviction(s) (${evictions.map((e) => e.name).join(", ") || "the kubelet's own sync finished first"}); Complete at 2Gi\n${evicted.map((e: KubeObject) => `  ${e.series?.count ?? 1}× ${e.note}`).join("\n")}\n${watch!.describe(name, since)}`,
    );
  });
});
