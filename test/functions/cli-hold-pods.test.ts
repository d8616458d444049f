// `claimstep set … --hold-pods` (P5): the desired templates, ClaimsFirst and the held partition
// (the user's recorded) in one patch of the StatefulSet; refused without a pod writer.
import { describe, expect, it } from "vitest";
import { Keys } from "../../core/keys.js";
import { main } from "../../functions/cli.js";
import { simOf } from "../support/cli-target.js";

const capture = () => {
  const out = { text: "", isTTY: false, write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: { NO_COLOR: "1" } }, out, err };
};

describe("set --hold-pods", () => {
  it("writes templates, ClaimsFirst, partition = replicas and the user's partition in one request", async () => {
    const s = await simOf("opted-out");
    const before = s.sim.http.requests().length;
    const { io, out } = capture();
    expect(await main(["set", "web", "data", "--storage", "4Gi", "--hold-pods"], io, s.connect)).toBe(0);
    const set = (await s.sim.admin.get("statefulsets", "default", "web")) as any;
    expect(set.spec.updateStrategy.rollingUpdate.partition).toBe(3);
    expect(set.metadata.annotations[Keys.userPartition]).toBe("0");
    expect(set.metadata.annotations[Keys.podCoordination]).toBe("ClaimsFirst");
    expect(set.metadata.annotations[Keys.templates]).toMatch(/"4Gi"/);
    const patches = s.sim.http
      .requests()
      .slice(before)
      .filter((r) => r.verb === "patch" && r.resource === "statefulsets");
    expect(patches).toHaveLength(1);
    expect(out.text).toMatch(/pods held: partition 0 → 3 \(yours, 0, recorded in claimstep.io\/user-partition\)/);
    // The one patch, byte for byte (its keys in order): the desired templates and opt-in, ClaimsFirst,
    // the user's partition recorded, the partition held, under the resourceVersion read.
    const written = patches[0]!.body as any;
    expect(Object.keys(written.metadata.annotations)).toEqual([
      Keys.templates,
      Keys.strategy,
      Keys.podCoordination,
      Keys.userPartition,
    ]);
    expect(JSON.stringify(written)).toBe(
      JSON.stringify({
        metadata: {
          resourceVersion: written.metadata.resourceVersion,
          annotations: {
            [Keys.templates]: set.metadata.annotations[Keys.templates],
            [Keys.strategy]: "InPlace",
            [Keys.podCoordination]: "ClaimsFirst",
            [Keys.userPartition]: "0",
          },
        },
        spec: { updateStrategy: { rollingUpdate: { partition: 3 } } },
      }),
    );
    expect(typeof written.metadata.resourceVersion).toBe("string");
  });

  it("--dry-run says it would hold the pods and writes nothing", async () => {
    const s = await simOf("opted-out");
    const { io, out } = capture();
    expect(await main(["set", "web", "data", "--storage", "4Gi", "--hold-pods", "--dry-run"], io, s.connect)).toBe(0);
    expect(out.text).toMatch(/pods held: partition 0 → 3/);
    expect(s.claimstepWrites()).toBe(0);
    const set = (await s.sim.admin.get("statefulsets", "default", "web")) as any;
    expect(set.spec.updateStrategy.rollingUpdate?.partition ?? 0).toBe(0);
  });

  it("--dry-run -o json prints exactly the annotations the real run writes (ClaimsFirst and the user's partition included)", async () => {
    const dry = await simOf("opted-out");
    const json = capture();
    expect(
      await main(
        ["set", "web", "data", "--storage", "4Gi", "--hold-pods", "--dry-run", "-o", "json"],
        json.io,
        dry.connect,
      ),
    ).toBe(0);
    const o = JSON.parse(json.out.text);
    expect(dry.claimstepWrites()).toBe(0);
    expect(o.holdPods).toEqual({ partition: 3, from: 0, userPartition: 0 });
    expect(o.annotations[Keys.podCoordination]).toBe("ClaimsFirst");
    expect(o.annotations[Keys.userPartition]).toBe("0");

    const real = await simOf("opted-out");
    const before = real.sim.http.requests().length;
    expect(await main(["set", "web", "data", "--storage", "4Gi", "--hold-pods"], capture().io, real.connect)).toBe(0);
    const [patch] = real.sim.http
      .requests()
      .slice(before)
      .filter((r) => r.verb === "patch" && r.resource === "statefulsets");
    expect(JSON.stringify((patch!.body as any).metadata.annotations)).toBe(JSON.stringify(o.annotations));
  });

  it("keeps a partition the user set, recorded", async () => {
    const s = await simOf("opted-out");
    await s.sim.admin.mergePatch(
      "statefulsets",
      "default",
      "web",
      { spec: { updateStrategy: { rollingUpdate: { partition: 1 } } } },
      { fieldManager: "kubectl" },
    );
    expect(await main(["set", "web", "data", "--storage", "4Gi", "--hold-pods"], capture().io, s.connect)).toBe(0);
    const set = (await s.sim.admin.get("statefulsets", "default", "web")) as any;
    expect(set.metadata.annotations[Keys.userPartition]).toBe("1");
    expect(set.spec.updateStrategy.rollingUpdate.partition).toBe(3);
    // Held again: the record stays as it is (not written again), the rest is the same one patch.
    const before = s.sim.http.requests().length;
    expect(await main(["set", "web", "data", "--storage", "5Gi", "--hold-pods"], capture().io, s.connect)).toBe(0);
    const patches = s.sim.http
      .requests()
      .slice(before)
      .filter((r) => r.verb === "patch" && r.resource === "statefulsets");
    expect(patches).toHaveLength(1);
    const written = patches[0]!.body as any;
    expect(Object.keys(written.metadata.annotations)).toEqual([Keys.templates, Keys.strategy, Keys.podCoordination]);
    expect(written.spec).toEqual({ updateStrategy: { rollingUpdate: { partition: 3 } } });
    const again = (await s.sim.admin.get("statefulsets", "default", "web")) as any;
    expect(again.metadata.annotations[Keys.userPartition]).toBe("1");
  });
});
