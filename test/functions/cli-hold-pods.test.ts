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
  });
});
