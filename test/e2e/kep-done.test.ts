// Issue 36 point 2 on the real server (rule 20, KEP-4650 Risks): a claim at the current revision is
// done. After a VolumeAttributesClass rollout silver → gold completes, a third party (a tiering
// controller, an admin tuning one replica) moves data-web-1 to platinum and removes a label the
// template carries from data-web-0; the node agent's modifier carries the class change out. A new
// `claimstep run` says Complete and writes no claim: the class stays platinum, the label stays
// removed. (Before rule 20 claimstep reverted both.)
import { describe, expect, it } from "vitest";
import { ok, useControlPlane, volumeAttributesClass, waitFor } from "./support/index.js";
import {
  claims,
  claimWrites,
  cli,
  createSet,
  createStorageClass,
  describeAudit,
  describeRun,
  lastStep,
  scenarioAudit,
  scoped,
} from "./support/scenario-cli.js";

describe("rule 20: a claim at the current revision is never written again", () => {
  const e2e = useControlPlane({ prefix: "done", needsFakeDriver: true });
  it("a third party's class change and label removal on claims at the revision are kept; claimstep says Complete, writes nothing", async () => {
    const [silver, gold, platinum] = ["silver", "gold", "platinum"].map((n) => scoped(e2e, n));
    for (const [name, iops] of [
      [silver!, "3000"],
      [gold!, "6000"],
      [platinum!, "9000"],
    ] as const)
      ok(
        await e2e.admin.create("volumeattributesclasses", null, volumeAttributesClass(name, { iops })),
        `create VAC ${name}`,
      );
    const sc = await createStorageClass(e2e, "tiered", { modifyLatencyMs: 500 });
    await createSet(e2e, { replicas: 2, storageClassName: sc, storage: "1Gi", vac: silver! });

    // The rollout: gold, and a template label tier=db (through the desired-templates annotation).
    const set = await cli(e2e, ["set", "web", "data", "--vac", gold!]);
    expect(set.code, describeRun(set)).toBe(0);
    const sts = ok(await e2e.api.get("statefulsets", "web"), "get web");
    const desired = JSON.parse(sts.metadata.annotations?.["claimstep.io/volume-claim-templates"] ?? "[]");
    desired[0].metadata.labels = { tier: "db" };
    ok(
      await e2e.admin.patch(
        "statefulsets",
        e2e.namespace,
        "web",
        { metadata: { annotations: { "claimstep.io/volume-claim-templates": JSON.stringify(desired) } } },
        "merge",
      ),
      "desire tier=db",
    );
    const first = await cli(e2e, ["run", "web", "--interval", "1s", "--timeout", "2m", "-o", "json"], {
      timeoutMs: 150_000,
    });
    expect(first.code, describeRun(first)).toBe(0);
    expect(lastStep(first).decision.phase, describeRun(first)).toBe("Complete");
    const revision = lastStep(first).decision.revision;
    for (const c of await claims(e2e)) {
      expect(c.metadata.labels?.["claimstep.io/revision"], c.metadata.name).toBe(revision);
      expect(c.metadata.labels?.tier, c.metadata.name).toBe("db");
      expect(c.status?.currentVolumeAttributesClassName, c.metadata.name).toBe(gold);
    }

    // A third party tunes the replicas.
    ok(
      await e2e.admin.patch(
        "persistentvolumeclaims",
        e2e.namespace,
        "data-web-1",
        { spec: { volumeAttributesClassName: platinum } },
        "merge",
      ),
      "move data-web-1 to platinum",
    );
    ok(
      await e2e.admin.patch(
        "persistentvolumeclaims",
        e2e.namespace,
        "data-web-0",
        { metadata: { labels: { tier: null } } },
        "merge",
      ),
      "remove tier from data-web-0",
    );
    await waitFor(
      async () =>
        ok(await e2e.api.get("persistentvolumeclaims", "data-web-1"), "get data-web-1").status
          ?.currentVolumeAttributesClassName === platinum,
      { timeoutMs: 60_000, intervalMs: 250, what: "data-web-1 modified to platinum" },
    );

    const since = new Date().toISOString();
    const again = await cli(e2e, ["run", "web", "--interval", "1s", "--timeout", "1m", "-o", "json"], {
      timeoutMs: 90_000,
    });
    expect(again.code, describeRun(again)).toBe(0);
    const d = lastStep(again).decision;
    expect(d.phase, describeRun(again)).toBe("Complete");
    expect(d.revision).toBe(revision);
    expect(claimWrites(e2e, since), describeAudit(claimWrites(e2e, since))).toEqual([]);
    const byName = new Map((await claims(e2e)).map((c) => [c.metadata.name, c]));
    expect(byName.get("data-web-1")?.spec?.volumeAttributesClassName).toBe(platinum);
    expect(byName.get("data-web-1")?.status?.currentVolumeAttributesClassName).toBe(platinum);
    expect(byName.get("data-web-0")?.metadata.labels?.tier).toBeUndefined();
    expect(scenarioAudit(e2e)).toEqual([]);
  }, 300_000);
});
