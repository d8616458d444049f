// `claimstep finalize`: refused before the rollout is complete (nothing written), --dry-run shows
// the template changes and writes nothing, then the re-create runs to the end with every pod and
// claim kept.
import { describe, expect, it } from "vitest";
import { main } from "../../functions/cli.js";
import { simOf } from "../support/cli-target.js";

const capture = () => {
  const out = { text: "", isTTY: false, write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: { NO_COLOR: "1" } }, out, err };
};

describe("claimstep finalize", () => {
  it("is refused while the rollout is not complete, nothing written (exit 1)", async () => {
    const s = await simOf("grow");
    const { io, err } = capture();
    expect(await main(["finalize", "web"], io, s.connect)).toBe(1);
    expect(err.text).toMatch(
      /finalize: default\/web is Progressing \(ClaimUpdated\): the re-create starts only once the rollout is complete; run `claimstep run web -n default` first\. Nothing written/,
    );
    expect(s.claimstepWrites()).toBe(0);
  });

  it("--dry-run after the rollout: the template changes and the first request, nothing written", async () => {
    const s = await simOf("grow");
    expect(await main(["run", "web"], capture().io, s.connect)).toBe(0);
    const before = s.claimstepWrites();
    const { io, out } = capture();
    expect(await main(["finalize", "web", "--dry-run"], io, s.connect)).toBe(0);
    expect(out.text).toMatch(
      /default\/web: dry run, nothing written\. re-create with the new claim templates \(record: ConfigMap default\/claimstep-recreate-web\)/,
    );
    expect(out.text).toContain("  data: storage 1Gi → 2Gi");
    expect(out.text).toContain("  wal: volumeAttributesClassName silver → gold");
    expect(out.text).toMatch(/Progressing +RecordWritten/);
    expect(s.claimstepWrites()).toBe(before);
  });

  it("re-creates the set: new uid, the new templates live, every pod and claim kept", async () => {
    const s = await simOf("grow");
    expect(await main(["run", "web"], capture().io, s.connect)).toBe(0);
    const old = s.sim.get("statefulsets", "default", "web")!;
    const pods = Object.fromEntries(s.sim.list("pods", "default").map((p) => [p.metadata.name, p.metadata.uid]));
    const claims = s.sim
      .list("persistentvolumeclaims", "default")
      .map((c) => c.metadata.uid)
      .sort();
    const { io, out } = capture();
    expect(await main(["finalize", "web"], io, s.connect)).toBe(0);
    const set = s.sim.get("statefulsets", "default", "web")!;
    expect(set.metadata.uid).not.toBe(old.metadata.uid);
    expect(
      set.spec.volumeClaimTemplates.map((t: any) => [
        t.metadata.name,
        t.spec.resources.requests.storage,
        t.spec.volumeAttributesClassName ?? null,
      ]),
    ).toEqual([
      ["data", "2Gi", null],
      ["wal", "1Gi", "gold"],
    ]);
    expect(set.metadata.annotations).not.toHaveProperty("claimstep.io/volume-claim-templates");
    expect(Object.fromEntries(s.sim.list("pods", "default").map((p) => [p.metadata.name, p.metadata.uid]))).toEqual(
      pods,
    );
    expect(
      s.sim
        .list("persistentvolumeclaims", "default")
        .map((c) => c.metadata.uid)
        .sort(),
    ).toEqual(claims);
    expect(s.sim.get("configmaps", "default", "claimstep-recreate-web")).toBeUndefined();
    expect(out.text).toMatch(/SetRecreated/);
    // A second finalize has nothing left to do.
    const again = capture();
    expect(await main(["finalize", "web"], again.io, s.connect)).toBe(0);
    expect(again.out.text).toMatch(/nothing to re-create/);
  });
});
