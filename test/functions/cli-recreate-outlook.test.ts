// No surprise re-create (issue 33 item 6): before a change is made, `set`, `set --dry-run` and
// `plan` say when it ends in a re-create of the StatefulSet (orphan delete + create; pods and claims
// kept) and why; and a `claimstep.io/finalize: Recreate` claimstep wrote on the user's behalf
// (`set --add`) is spent by the re-create it was written for: a later size change rolls out in
// place, and says so (docs/finalize.md "Who wrote Recreate").
import { describe, expect, it } from "vitest";
import { Keys } from "../../core/keys.js";
import { revisionOf } from "../../core/kube/revision.js";
import { finalizeHintOf, templatesView } from "../../core/view/view.js";
import { main } from "../../functions/cli.js";
import { simOf } from "../support/cli-target.js";

const capture = () => {
  const out = { text: "", isTTY: false, write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: { NO_COLOR: "1" } }, out, err };
};

const ENDS =
  /This change ends in a re-create of StatefulSet default\/web once its claims are at revision (\w+) \(orphan delete \+ create; its pods and claims are kept\): /;

describe("set, set --dry-run and plan name the re-create before it happens", () => {
  it("the user's own claimstep.io/finalize: Recreate: set --dry-run, set and plan say the change ends in a re-create, and why", async () => {
    const s = await simOf("finalize");
    const yours =
      "claimstep.io/finalize: Recreate on the set (yours: every change of its claim templates ends in a re-create).";
    const dry = capture();
    expect(await main(["set", "web", "data", "--storage", "3Gi", "--dry-run"], dry.io, s.connect)).toBe(0);
    expect(dry.out.text).toMatch(ENDS);
    expect(dry.out.text).toContain(yours);
    expect(dry.out.text.indexOf(yours)).toBeLessThan(dry.out.text.indexOf("The plan it would cause:"));
    const json = capture();
    expect(await main(["set", "web", "data", "--storage", "3Gi", "--dry-run", "-o", "json"], json.io, s.connect)).toBe(
      0,
    );
    expect(JSON.parse(json.out.text).recreate).toEqual({ recreate: true, why: yours.slice(0, -1) });
    const set = capture();
    expect(await main(["set", "web", "data", "--storage", "3Gi"], set.io, s.connect)).toBe(0);
    expect(set.out.text).toMatch(ENDS);
    expect(set.out.text).toContain(yours);
    const plan = capture();
    expect(await main(["plan", "web"], plan.io, s.connect)).toBe(0);
    expect(plan.out.text).toMatch(ENDS);
    expect(plan.out.text).toContain(yours);
    const planJson = capture();
    expect(await main(["plan", "web", "-o", "json"], planJson.io, s.connect)).toBe(0);
    expect(JSON.parse(planJson.out.text).recreate.recreate).toBe(true);
  });

  it("set --add: the template added, which only a re-create does; the Recreate claimstep writes is for this change only", async () => {
    const s = await simOf("grow");
    const { io, out } = capture();
    expect(
      await main(
        ["set", "web", "logs", "--add", "--storage", "1Gi", "--storage-class", "fast", "--dry-run"],
        io,
        s.connect,
      ),
    ).toBe(0);
    expect(out.text).toMatch(ENDS);
    expect(out.text).toMatch(
      /claim template logs added, which only a re-create does \(the API server forbids editing spec\.volumeClaimTemplates\); claimstep\.io\/finalize: Recreate, written by claimstep for this change only \(claimstep\.io\/finalize-for: \w+; later changes roll out in place\)\./,
    );
  });

  it("a plain size change of a set without Recreate says nothing of a re-create (it rolls out in place, as always)", async () => {
    const s = await simOf("grow");
    const { io, out } = capture();
    expect(await main(["set", "web", "data", "--storage", "3Gi", "--dry-run"], io, s.connect)).toBe(0);
    expect(out.text).not.toMatch(/re-create/);
  });
});

describe("a Recreate claimstep wrote is spent by the re-create it was written for", () => {
  it("set --add, run (re-created), then a size change rolls out in place, saying why; the set is not re-created again", async () => {
    const s = await simOf("grow");
    const add = ["set", "web", "logs", "--add", "--storage", "1Gi", "--storage-class", "fast", "--mount-path", "/logs"];
    expect(await main(add, capture().io, s.connect)).toBe(0);
    const written = await s.annotations();
    expect(written[Keys.finalize]).toBe("Recreate");
    expect(written[Keys.finalizeFor]).toBe(revisionOf(JSON.parse(written[Keys.templates])));
    expect(await main(["run", "web"], capture().io, s.connect)).toBe(0);
    const recreated = s.sim.get("statefulsets", "default", "web")!;
    expect(recreated.spec.volumeClaimTemplates.map((t: any) => t.metadata.name)).toEqual(["data", "wal", "logs"]);
    // The new set names the revision it was re-created at: the Recreate is spent.
    expect(recreated.metadata.annotations[Keys.finalizeFor]).toBe(revisionOf(recreated.spec.volumeClaimTemplates));

    const dry = capture();
    expect(await main(["set", "web", "data", "--storage", "3Gi", "--dry-run"], dry.io, s.connect)).toBe(0);
    expect(dry.out.text).toContain(
      `No re-create: claimstep.io/finalize: Recreate was written by claimstep for revision ${revisionOf(recreated.spec.volumeClaimTemplates)}, and the set was re-created at it; this change rolls out in place (the live spec.volumeClaimTemplates stay at revision ${revisionOf(recreated.spec.volumeClaimTemplates)}; claimstep finalize web -n default re-creates it on demand).`,
    );
    expect(await main(["set", "web", "data", "--storage", "3Gi"], capture().io, s.connect)).toBe(0);
    expect(await main(["run", "web"], capture().io, s.connect)).toBe(0);
    const after = s.sim.get("statefulsets", "default", "web")!;
    expect(after.metadata.uid).toBe(recreated.metadata.uid);
    expect(
      s.sim
        .list("persistentvolumeclaims", "default")
        .filter((c) => c.metadata.name.startsWith("data-web-"))
        .map((c) => c.spec.resources.requests.storage),
    ).toEqual(["3Gi", "3Gi", "3Gi"]);
    // The status page's hint does not ask for the Recreate the set already carries, spent.
    const hint = finalizeHintOf(after as any, { phase: "Complete" } as any, templatesView(after as any));
    expect(hint).toMatch(
      /run claimstep finalize web -n default, or make its claimstep\.io\/finalize: Recreate yours \(claimstep wrote it for an earlier change, spent since\): kubectl annotate sts web -n default claimstep\.io\/finalize-for-\.$/,
    );
    // On demand, it is re-created all the same.
    expect(await main(["finalize", "web"], capture().io, s.connect)).toBe(0);
    expect(s.sim.get("statefulsets", "default", "web")!.metadata.uid).not.toBe(recreated.metadata.uid);
  });
});
