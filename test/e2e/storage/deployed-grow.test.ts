// Issue 34 on real storage and real pods: claimstep as deployed (deployment.yaml's `claimstep serve`,
// two replicas, the Lease, its RBAC) grows two claim templates of a running StatefulSet and
// re-creates the set, hands-off, while the real external-resizer, CSI hostpath driver and kubelet do
// the expansion. Data is checked, not assumed: every pod wrote a known file on each volume before
// the change; after it, each file reads back with the same sha256 from the driver's directory on the
// host, every claim has the same uid, and each time claimstep's status said Complete no claim still
// waited for its file system (the kubelet's node expansion finished: capacity recorded, conditions
// gone). The set keeps `whenDeleted: Delete`, so a re-create that let the claims go would lose them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Deployed, type SetWatch, startDeployment, watchSets } from "../support/deployed.js";
import { describeAudit, type KubeObject, ok, useControlPlane, waitFor } from "../support/index.js";
import { Informer } from "../support/informer.js";
import {
  type CompleteCheck,
  checkCompleteIsTrue,
  claimLine,
  claimsOfSet,
  createRealSet,
  K,
  podsOfSet,
  realTemplate,
  statusOf,
  volumeData,
} from "../support/real-storage.js";

const e2e = useControlPlane({ prefix: "rs-deployed" });
const report: string[] = [];
const INTERVAL_SECONDS = 2;

const uids = (xs: KubeObject[]) => Object.fromEntries(xs.map((x) => [x.metadata.name!, x.metadata.uid!]));

afterAll(() => {
  if (e2e.available)
    console.log(
      `issue 34, claimstep as deployed on real storage (${e2e.info.realNode?.versions.join("; ")}):\n${report.join("\n")}`,
    );
});

describe.sequential("claimstep serve as deployed, on the real node", () => {
  let dep: Deployed | undefined;
  let watch: SetWatch | undefined;

  beforeAll(async () => {
    if (!e2e.available) return;
    dep = await startDeployment(e2e, {
      env: { CLAIMSTEP_INTERVAL_SECONDS: String(INTERVAL_SECONDS), CLAIMSTEP_NAMESPACES: e2e.namespace },
    });
    await dep.waitSweeper();
    watch = await watchSets(e2e);
  });
  afterAll(async () => {
    await watch?.stop();
    await dep?.stop();
  });

  it("grows data and logs 1Gi → 2Gi and re-creates the set: same claims, same bytes, Complete only once every file system grew", {
    timeout: 300_000,
  }, async () => {
    const node = e2e.info.realNode!;
    const set = "web";
    const templates = ["data", "logs"];
    await createRealSet(e2e, set, {
      templates: templates.map((name) => ({ name, size: "1Gi" })),
      whenDeleted: "Delete",
    });
    const before = ok(await e2e.api.get("statefulsets", set), `get ${set}`);
    const claimsBefore = await claimsOfSet(e2e, set, templates);
    const podsBefore = await podsOfSet(e2e, set);
    const dataBefore = await volumeData(e2e, claimsBefore);
    expect(Object.keys(dataBefore)).toHaveLength(6);

    const complete: CompleteCheck = checkCompleteIsTrue(e2e, watch!, set, templates);
    // When each claim's request was first seen at 2Gi and its capacity first recorded at 2Gi (the
    // kubelet's node expansion done): one ordinal at a time, highest first (rules 9 and 15).
    const raisedAt: Record<string, number> = {};
    const grownAt: Record<string, number> = {};
    const informerErrors: string[] = [];
    const claimsWatch = new Informer({
      credentials: e2e.info.admin,
      path: `/api/v1/namespaces/${e2e.namespace}/persistentvolumeclaims`,
      onError: (m) => informerErrors.push(m),
      onChange: (_t, c) => {
        const n = c?.metadata.name;
        if (!n) return;
        if (c.spec?.resources?.requests?.storage === "2Gi") raisedAt[n] ??= Date.now();
        if (c.status?.capacity?.storage === "2Gi") grownAt[n] ??= Date.now();
      },
    });
    await claimsWatch.synced;
    const since = Date.now();
    // The admin's request: the templates at 2Gi, opted in, re-create when the claims are done.
    ok(
      await e2e.api.patch("statefulsets", set, {
        metadata: {
          annotations: {
            [K.strategy]: "InPlace",
            [K.templates]: JSON.stringify(templates.map((name) => realTemplate(node, { name, size: "2Gi" }))),
            [K.finalize]: "Recreate",
          },
        },
      }),
      `annotate ${set}`,
    );

    let live: KubeObject | undefined;
    await waitFor(
      async () => {
        const r = await e2e.api.get("statefulsets", set);
        if (r.status !== 200) return false;
        live = r.body;
        return (
          live!.metadata.uid !== before.metadata.uid &&
          statusOf(live!).phase === "Complete" &&
          live!.status?.readyReplicas === 3 &&
          (await e2e.api.get("configmaps", `claimstep-recreate-${set}`)).status === 404
        );
      },
      { timeoutMs: 240_000, intervalMs: 500, what: `${set}: re-created and Complete` },
    ).catch(async (e) => {
      const claims = await claimsOfSet(e2e, set, templates);
      throw new Error(
        `${(e as Error).message}\nstatus ${JSON.stringify(statusOf(live ?? before))}\n${claims.map(claimLine).join("\n")}\n${watch!.describe(set, since)}\n${dep!.describe()}`,
      );
    });
    const seconds = ((Date.now() - since) / 1000).toFixed(1);
    await complete.settled();
    await claimsWatch.stop();
    expect(informerErrors).toEqual([]);
    const order: string[] = [];
    for (const o of [2, 1, 0]) {
      const mine = templates.map((t) => `${t}-${set}-${o}`);
      const at = (m: Record<string, number>, n: string) => `+${(((m[n] ?? Number.NaN) - since) / 1000).toFixed(1)} s`;
      order.push(
        `  ordinal ${o}: ${mine.map((n) => `${n} raised ${at(raisedAt, n)}, grown ${at(grownAt, n)}`).join("; ")}`,
      );
      if (o === 2) continue;
      const above = templates.map((t) => `${t}-${set}-${o + 1}`);
      const firstRaised = Math.min(...mine.map((n) => raisedAt[n]!));
      const aboveGrown = Math.max(...above.map((n) => grownAt[n]!));
      expect(
        firstRaised >= aboveGrown,
        `ordinal ${o}'s claims were raised only after ordinal ${o + 1}'s file systems grew\n${order.join("\n")}`,
      ).toBe(true);
    }

    const claimsAfter = await claimsOfSet(e2e, set, templates);
    expect(uids(claimsAfter), "the same claims (uids)").toEqual(uids(claimsBefore));
    for (const c of claimsAfter) {
      expect(c.status?.capacity?.storage, claimLine(c)).toBe("2Gi");
      expect(c.status?.conditions ?? [], claimLine(c)).toEqual([]);
      expect(c.status?.allocatedResourceStatuses, claimLine(c)).toBeUndefined();
    }
    const dataAfter = await volumeData(e2e, claimsAfter);
    expect(dataAfter, "every marker file reads back with the same sha256").toEqual(dataBefore);
    expect(complete.violations, "claimstep said Complete while a claim was not done").toEqual([]);
    expect(complete.sightings.length, "Complete was seen").toBeGreaterThan(0);
    expect(
      live!.spec.volumeClaimTemplates.map((t: KubeObject) => t.spec.resources.requests.storage),
      "the re-created set's templates",
    ).toEqual(["2Gi", "2Gi"]);
    const podsAfter = await podsOfSet(e2e, set);
    // Online expansion: the kubelet grew each file system in place; the new set adopted the pods.
    expect(uids(podsAfter), "the same pods, adopted by the new set").toEqual(uids(podsBefore));

    const deletes = e2e
      .audit({ since: new Date(since), user: e2e.info.claimstepUser })
      .filter((a) => a.verb === "delete" && a.resource !== "statefulsets" && a.resource !== "configmaps");
    expect(describeAudit(deletes), "claimstep deleted no pod or claim").toBe("");
    report.push(
      `grow data+logs 1Gi→2Gi + re-create of ${set}: done ${seconds} s after the request; Complete seen ${complete.sightings.length}×, every time with all 6 claims settled\n${order.join("\n")}\n${watch!.describe(set, since)}\n${claimsAfter.map(claimLine).join("\n")}`,
    );
  });
});
