// Issue 34: the rollout's cases on real storage and real pods, with claimstep running as deployed
// (deployment.yaml's `claimstep serve`, the Lease, its RBAC) and a person asking with
// `claimstep set` — nobody steps by hand. The real external-resizer, its VolumeAttributesClass
// modifier, the CSI hostpath driver (10Gi cap, `iops`/`throughput` mutable) and the kubelet decide
// when a claim is done; claimstep must wait for them, report what they say, and never touch data:
// each case reads back every volume's marker file (sha256, from the driver's directory on the host)
// and checks that each Complete claimstep wrote was true of every claim at that moment.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Deployed, type SetWatch, startDeployment, watchSets } from "../support/deployed.js";
import { describeAudit, type KubeObject, ok, useControlPlane, waitFor } from "../support/index.js";
import { Informer } from "../support/informer.js";
import {
  checkCompleteIsTrue,
  claimLine,
  claimsOfSet,
  createRealSet,
  nodeProcess,
  podsOfSet,
  statusOf,
  volumeData,
  waitSet,
} from "../support/real-storage.js";
import { claimstep, describeRun, sleep } from "../support/scenario-finalize.js";

const e2e = useControlPlane({ prefix: "rs-rollout" });
const report: string[] = [];
const uids = (xs: KubeObject[]) => Object.fromEntries(xs.map((x) => [x.metadata.name!, x.metadata.uid!]));

/** The person's `claimstep set …`, with the admin's kubeconfig. */
async function set(args: string[]): Promise<void> {
  const r = await claimstep(e2e, ["set", ...args], { kubeconfig: e2e.info.adminKubeconfig });
  expect(r.code, `claimstep set ${args.join(" ")}\n${describeRun(r)}`).toBe(0);
}

const completeWith = (live: KubeObject) => statusOf(live).phase === "Complete";

/** claimstep deleted no pod and no claim since `since` (evictions are the restart rule's own). */
function expectNoDeletes(since: number) {
  const deletes = e2e
    .audit({ since: new Date(since), user: e2e.info.claimstepUser })
    .filter((a) => a.verb === "delete" && (a.resource === "pods" || a.resource === "persistentvolumeclaims"));
  expect(describeAudit(deletes), "claimstep deleted no pod or claim").toBe("");
}

afterAll(() => {
  if (e2e.available) console.log(`issue 34, the rollout on real storage:\n${report.join("\n")}`);
});

describe.sequential("on the real node, claimstep serve as deployed", () => {
  let dep: Deployed | undefined;
  let watch: SetWatch | undefined;
  let ns = "";

  beforeAll(async () => {
    if (!e2e.available) return;
    ns = e2e.namespace;
    dep = await startDeployment(e2e, { env: { CLAIMSTEP_INTERVAL_SECONDS: "2", CLAIMSTEP_NAMESPACES: ns } });
    await dep.waitSweeper();
    watch = await watchSets(e2e);
  });
  afterAll(async () => {
    await watch?.stop();
    await dep?.stop();
  });

  it("VolumeAttributesClass: to a class the driver accepts (Complete, current class on every claim); to one it refuses (Blocked/ModifyVolumeFailed, one ordinal touched); back (Complete)", async () => {
    const fast = `${ns}-fast`;
    const bad = `${ns}-bad`;
    const vac = (name: string, parameters: Record<string, string>) => ({
      apiVersion: "storage.k8s.io/v1",
      kind: "VolumeAttributesClass",
      metadata: { name },
      driverName: e2e.info.realNode!.driver,
      parameters,
    });
    ok(await e2e.admin.create("volumeattributesclasses", null, vac(fast, { iops: "3000", throughput: "125" })));
    ok(await e2e.admin.create("volumeattributesclasses", null, vac(bad, { tier: "gold" })));
    try {
      const name = "vac";
      await createRealSet(e2e, name, { templates: [{ name: "data", size: "1Gi" }], replicas: 2 });
      const before = await claimsOfSet(e2e, name, ["data"]);
      const data = await volumeData(e2e, before);
      const complete = checkCompleteIsTrue(e2e, watch!, name, ["data"]);
      const since = Date.now();

      await set([name, "data", "--vac", fast, "-n", ns]);
      await waitSet(e2e, name, ["data"], `Complete at ${fast}`, async (live) => {
        if (!completeWith(live)) return false;
        const claims = await claimsOfSet(e2e, name, ["data"]);
        return claims.every(
          (c) => c.status?.currentVolumeAttributesClassName === fast && !c.status?.modifyVolumeStatus,
        );
      });
      const t1 = ((Date.now() - since) / 1000).toFixed(1);

      await set([name, "data", "--vac", bad, "-n", ns]);
      const blocked = await waitSet(
        e2e,
        name,
        ["data"],
        "Blocked/ModifyVolumeFailed",
        (live) => statusOf(live).phase === "Blocked",
        90_000,
      );
      expect(statusOf(blocked).reason, JSON.stringify(statusOf(blocked))).toBe("ModifyVolumeFailed");
      const mid = await claimsOfSet(e2e, name, ["data"]);
      expect(
        mid.filter((c) => c.spec.volumeAttributesClassName === bad).map((c) => c.metadata.name),
        `one ordinal at a time, the highest first:\n${mid.map(claimLine).join("\n")}`,
      ).toEqual([`data-${name}-1`]);
      // The claim still runs on the class it had: the driver refused the change, nothing else moved.
      expect(mid.map((c) => c.status?.currentVolumeAttributesClassName)).toEqual([fast, fast]);
      // Still blocked a sweep later: not a transient state.
      await sleep(5_000);
      expect(statusOf(ok(await e2e.api.get("statefulsets", name))).phase).toBe("Blocked");

      await set([name, "data", "--vac", fast, "-n", ns]);
      await waitSet(e2e, name, ["data"], `Complete back at ${fast}`, async (live) => {
        if (!completeWith(live)) return false;
        const claims = await claimsOfSet(e2e, name, ["data"]);
        return claims.every(
          (c) =>
            c.spec.volumeAttributesClassName === fast &&
            c.status?.currentVolumeAttributesClassName === fast &&
            !c.status?.modifyVolumeStatus,
        );
      });
      await complete.settled();
      const after = await claimsOfSet(e2e, name, ["data"]);
      expect(uids(after)).toEqual(uids(before));
      expect(await volumeData(e2e, after)).toEqual(data);
      expect(complete.violations).toEqual([]);
      expectNoDeletes(since);
      report.push(
        `VAC: to ${fast} Complete after ${t1} s; to ${bad}: Blocked/${statusOf(blocked).reason} "${statusOf(blocked).message}"; back to ${fast}: Complete\n${watch!.describe(name, since)}`,
      );
    } finally {
      await e2e.admin.delete("volumeattributesclasses", null, fast).catch(() => undefined);
      await e2e.admin.delete("volumeattributesclasses", null, bad).catch(() => undefined);
    }
  });

  it("an infeasible expansion (20Gi, above the driver's 10Gi) blocks on the highest ordinal; asking for 3Gi recovers it (the claim's request lowered) and every claim reaches 3Gi", async () => {
    const name = "big";
    await createRealSet(e2e, name, { templates: [{ name: "data", size: "1Gi" }], replicas: 2 });
    const before = await claimsOfSet(e2e, name, ["data"]);
    const data = await volumeData(e2e, before);
    const complete = checkCompleteIsTrue(e2e, watch!, name, ["data"]);
    const since = Date.now();
    await set([name, "data", "--storage", "20Gi", "-n", ns]);
    const blocked = await waitSet(
      e2e,
      name,
      ["data"],
      "Blocked on the infeasible size",
      (live) => statusOf(live).phase === "Blocked",
      90_000,
    );
    const mid = await claimsOfSet(e2e, name, ["data"]);
    const failed = mid.find((c) => c.metadata.name === `data-${name}-1`)!;
    expect(failed.status?.allocatedResourceStatuses?.storage, claimLine(failed)).toBe("ControllerResizeInfeasible");
    expect(mid.find((c) => c.metadata.name === `data-${name}-0`)!.spec.resources.requests.storage).toBe("1Gi");
    expect(statusOf(blocked).message ?? "").toMatch(/data-big-1/);

    await set([name, "data", "--storage", "3Gi", "-n", ns]);
    await waitSet(e2e, name, ["data"], "Complete at 3Gi", async (live) => {
      if (!completeWith(live)) return false;
      const claims = await claimsOfSet(e2e, name, ["data"]);
      return claims.every((c) => c.status?.capacity?.storage === "3Gi");
    });
    await complete.settled();
    const after = await claimsOfSet(e2e, name, ["data"]);
    expect(uids(after)).toEqual(uids(before));
    for (const c of after) {
      expect(c.spec.resources.requests.storage, claimLine(c)).toBe("3Gi");
      expect(c.status?.allocatedResourceStatuses, claimLine(c)).toBeUndefined();
    }
    expect(await volumeData(e2e, after)).toEqual(data);
    expect(complete.violations).toEqual([]);
    expectNoDeletes(since);
    report.push(
      `infeasible 20Gi: Blocked/${statusOf(blocked).reason} "${statusOf(blocked).message}"; recovered to 3Gi\n${watch!.describe(name, since)}`,
    );
  });

  it("the external-resizer stopped mid-rollout: claimstep waits (never Complete) until it runs again, then finishes", async () => {
    const name = "stall";
    await createRealSet(e2e, name, { templates: [{ name: "data", size: "1Gi" }], replicas: 2 });
    const before = await claimsOfSet(e2e, name, ["data"]);
    const data = await volumeData(e2e, before);
    const resizer = nodeProcess(e2e, "csi-resizer");
    const since = Date.now();
    process.kill(resizer, "SIGSTOP");
    let stoppedFor = 0;
    let requested = Date.now();
    try {
      await set([name, "data", "--storage", "2Gi", "-n", ns]);
      requested = Date.now();
      // The first claim is written, then nothing can move: 20 s of sweeps every 2 s.
      await waitFor(
        async () =>
          (await claimsOfSet(e2e, name, ["data"])).some((c) => c.spec.resources.requests.storage === "2Gi") ||
          undefined,
        { timeoutMs: 30_000, intervalMs: 500, what: `${name}: the first claim's request raised` },
      );
      await sleep(20_000);
      stoppedFor = Date.now() - since;
      const live = ok(await e2e.api.get("statefulsets", name));
      const seen = watch!.trail.filter((s) => s.name === name && s.at > requested).map((s) => s.status);
      expect(
        seen.filter((s) => s?.startsWith("Complete")),
        watch!.describe(name, since),
      ).toEqual([]);
      expect(statusOf(live).phase, JSON.stringify(statusOf(live))).toBe("Waiting");
      const mid = await claimsOfSet(e2e, name, ["data"]);
      expect(
        mid.filter((c) => c.spec.resources.requests.storage === "2Gi").map((c) => c.metadata.name),
        "one ordinal at a time: the next waits for the first",
      ).toHaveLength(1);
    } finally {
      process.kill(resizer, "SIGCONT");
    }
    await waitSet(e2e, name, ["data"], "Complete at 2Gi once the resizer runs", async (live) => {
      if (!completeWith(live)) return false;
      const claims = await claimsOfSet(e2e, name, ["data"]);
      return claims.every((c) => c.status?.capacity?.storage === "2Gi");
    });
    const after = await claimsOfSet(e2e, name, ["data"]);
    expect(uids(after)).toEqual(uids(before));
    expect(await volumeData(e2e, after)).toEqual(data);
    expectNoDeletes(since);
    report.push(
      `resizer stopped ${(stoppedFor / 1000).toFixed(0)} s: Waiting the whole time, Complete after it ran again\n${watch!.describe(name, since)}`,
    );
  });

  it("ClaimsFirst (--hold-pods) with a pod template change: each new pod starts only after its claims reached 2Gi; pods replaced one at a time, the partition given back", async () => {
    const name = "cf";
    await createRealSet(e2e, name, { templates: [{ name: "data", size: "1Gi" }], replicas: 3 });
    const before = await claimsOfSet(e2e, name, ["data"]);
    const data = await volumeData(e2e, before);
    const podsBefore = uids(await podsOfSet(e2e, name));
    // When each claim first showed 2Gi capacity, and when each new pod was first seen.
    const grownAt: Record<string, number> = {};
    const podSeenAt: Record<string, number> = {};
    const errors: string[] = [];
    const claimsInformer = new Informer({
      credentials: e2e.info.admin,
      path: `/api/v1/namespaces/${ns}/persistentvolumeclaims`,
      onError: (m) => errors.push(m),
      onChange: (_t, c) => {
        const n = c?.metadata.name;
        if (n && c?.status?.capacity?.storage === "2Gi" && grownAt[n] === undefined) grownAt[n] = Date.now();
      },
    });
    const podsInformer = new Informer({
      credentials: e2e.info.admin,
      path: `/api/v1/namespaces/${ns}/pods`,
      onError: (m) => errors.push(m),
      onChange: (_t, p) => {
        const n = p?.metadata.name;
        if (n && p?.metadata.uid !== podsBefore[n] && /^cf-\d+$/.test(n) && podSeenAt[n] === undefined)
          podSeenAt[n] = Date.now();
      },
    });
    await Promise.all([claimsInformer.synced, podsInformer.synced]);
    const since = Date.now();
    try {
      await set([name, "data", "--storage", "2Gi", "--hold-pods", "-n", ns]);
      // The person's pod template change, applied right after (as kubectl apply would).
      ok(
        await e2e.api.patch(
          "statefulsets",
          name,
          { spec: { template: { metadata: { annotations: { "example.com/config": "v2" } } } } },
          "strategic",
        ),
        "change the pod template",
      );
      await waitSet(
        e2e,
        name,
        ["data"],
        "Complete with every pod replaced",
        async (live) => {
          if (!completeWith(live)) return false;
          if (live.status?.updatedReplicas !== 3 || live.status?.readyReplicas !== 3) return false;
          return Object.keys(podSeenAt).length === 3;
        },
        240_000,
      );
    } finally {
      await claimsInformer.stop();
      await podsInformer.stop();
    }
    const live = ok(await e2e.api.get("statefulsets", name));
    expect(live.spec.updateStrategy.rollingUpdate.partition, "the user's partition given back").toBe(0);
    expect(live.metadata.annotations?.["claimstep.io/user-partition"]).toBeUndefined();
    const lines: string[] = [];
    for (let i = 0; i < 3; i++) {
      const claim = `data-${name}-${i}`;
      const pod = `${name}-${i}`;
      lines.push(
        `  ordinal ${i}: claim at 2Gi +${((grownAt[claim]! - since) / 1000).toFixed(1)} s, new pod +${((podSeenAt[pod]! - since) / 1000).toFixed(1)} s`,
      );
      expect(grownAt[claim], `${claim} grew`).toBeDefined();
      expect(
        podSeenAt[pod]! >= grownAt[claim]!,
        `pod ${pod} replaced only after ${claim} reached 2Gi\n${lines.join("\n")}`,
      ).toBe(true);
    }
    const after = await claimsOfSet(e2e, name, ["data"]);
    expect(uids(after)).toEqual(uids(before));
    expect(await volumeData(e2e, after)).toEqual(data);
    expect(errors).toEqual([]);
    report.push(`ClaimsFirst: claims before pods, per ordinal\n${lines.join("\n")}\n${watch!.describe(name, since)}`);
  });
});
