// Issue 33, item 4: `claimstep status`, `-A`, `-o json` and `status -w` say where the set stands
// from the plan of its next step (functions/dry-run.ts, core/view/summary.ts), on the simulated cluster:
// a set deleted mid re-create is listed and marked with the command that finishes it; the watch
// ends with 0 only when claimstep has nothing left to do (not at the first RolloutComplete of a
// re-create still to come); a new desired revision is NotObserved everywhere, never the previous
// Complete. Read-only throughout.
import { describe, expect, it } from "vitest";
import type { SimCluster } from "../../adapters/sim/cluster.js";
import { nothingLeftToDo } from "../../core/plan/decision.js";
import { main } from "../../functions/cli.js";
import { runStep } from "../../functions/step.js";
import { simOf } from "../support/cli-target.js";

const REF = { namespace: "default", name: "web" };
const capture = () => {
  const out = { text: "" };
  const err = { text: "" };
  const io = {
    stdout: { write: (s: string) => void (out.text += s) },
    stderr: { write: (s: string) => void (err.text += s) },
    env: { NO_COLOR: "1" },
  };
  return { out, err, io: io as never };
};
/** claimstep serve's part: one step of default/web in each pause of the watch. */
const controller = async (sim: SimCluster) => {
  await runStep({ reader: sim.reader, writers: sim.writers, ref: REF, now: sim.now() });
};
const DELETED =
  /StatefulSet default\/web is deleted; its pods and claims are kept; `claimstep run web -n default` re-creates it/;

describe("a set deleted mid re-create (sim:finalize-crash: orphan-deleted, its record left)", () => {
  it("status, -A and -o json list it as Progressing/SetCreated with the command that re-creates it, never Complete", async () => {
    const s = await simOf("finalize-crash");
    expect(s.sim.get("statefulsets", "default", "web")).toBeUndefined();
    const before = s.writes();
    for (const argv of [["status"], ["status", "-A"], ["status", "web"]]) {
      const c = capture();
      expect(await main(argv, c.io, s.connect), argv.join(" ")).toBe(0);
      const row = c.out.text.split("\n")[1]!;
      expect(row, argv.join(" ")).toMatch(/^default +web +Progressing +SetCreated +- +\w+ /);
      expect(row).toMatch(DELETED);
      expect(row).not.toMatch(/Complete|RolloutComplete/);
    }
    const json = capture();
    expect(await main(["status", "web", "-o", "json"], json.io, s.connect)).toBe(0);
    const doc = JSON.parse(json.out.text);
    expect(doc).toMatchObject({
      phase: "Progressing",
      reason: "SetCreated",
      setMissing: true,
      done: false,
      command: "claimstep run web -n default",
      next: { action: expect.stringMatching(/^CreateSet default\/web /) },
      // The status as the last step wrote it, before the orphan delete: the claims done, the
      // re-create next (RecreateNext, issue 34: not Complete).
      status: { phase: "Progressing" },
    });
    expect(s.writes()).toBe(before);
  });

  it("status -w never exits 0 while it is missing; once `run` re-created it, it does at once", async () => {
    const s = await simOf("finalize-crash"); // nobody steps it
    const w = capture();
    expect(await main(["status", "web", "-w", "--interval", "1s", "--timeout", "10s"], w.io, s.connect)).toBe(1);
    expect(w.out.text.trim().split("\n")).toEqual([
      expect.stringMatching(/ default\/web {2}Progressing {2}SetCreated {2}/),
    ]);
    expect(w.err.text).toMatch(/default\/web is still Progressing \(SetCreated\) after 10s/);

    expect(await main(["run", "web"], capture().io, s.connect)).toBe(0);
    expect(s.sim.get("statefulsets", "default", "web")).toBeDefined();
    const after = capture();
    expect(await main(["status", "web", "-w"], after.io, s.connect)).toBe(0);
    expect(after.out.text).toMatch(/ default\/web {2}Complete {2}RolloutComplete {2}3\/3 updated/);
  });
});

describe("status -w follows a whole re-create (sim:add-template: a template added to a running set)", () => {
  it("goes past the first RolloutComplete, through the record, the orphan delete, the create and the restarts, and exits 0 only when nothing is left to do", async () => {
    const s = await simOf("add-template", controller);
    const { io, out, err } = capture();
    expect(await main(["status", "web", "-w", "--interval", "5s", "--timeout", "2h"], io, s.connect)).toBe(0);
    expect(err.text).toBe("");
    const lines = out.text.trim().split("\n");
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    const firstComplete = at(/ RecreateNext /);
    // Before: the watch ended at the claims' RolloutComplete, with the re-create and every restart
    // still to come; now the step itself says the re-create is next (issue 34), and so does the line.
    expect(firstComplete).toBeGreaterThan(0);
    expect(firstComplete).toBeLessThan(lines.length - 1);
    expect(lines[firstComplete]).toMatch(/ Progressing {2}RecreateNext {2}3\/3 updated /);
    expect(lines.slice(0, -1).filter((l) => / Complete {2}/.test(l))).toEqual([]);
    for (const step of [/ PartitionHeld /, / SetOrphaned /, / Recreating /, / PodEvicted /])
      expect(at(step), String(step)).toBeGreaterThan(firstComplete);
    expect(lines.at(-1)).toMatch(/ default\/web {2}Complete {2}RolloutComplete {2}3\/3 updated/);
    // And then there is indeed nothing left: the set re-created with logs, the record gone, the partition handed back.
    const next = await runStep({
      reader: s.sim.reader,
      writers: s.sim.writers,
      ref: REF,
      now: s.sim.now(),
      dryRun: true,
    });
    expect(nothingLeftToDo(next.decision)).toBe(true);
    const set = s.sim.get("statefulsets", "default", "web") as any;
    expect(set.spec.volumeClaimTemplates.map((t: any) => t.metadata.name)).toContain("logs");
    expect(set.spec.updateStrategy.rollingUpdate?.partition ?? 0).toBe(0);
    expect(s.sim.get("configmaps", "default", "claimstep-recreate-web")).toBeUndefined();
  });
});

describe("a new desired revision", () => {
  it("is NotObserved in status and status -w alike, never the previous revision's Complete", async () => {
    const s = await simOf("grow");
    expect(await main(["run", "web"], capture().io, s.connect)).toBe(0);
    const complete = capture();
    expect(await main(["status", "web"], complete.io, s.connect)).toBe(0);
    expect(complete.out.text).toMatch(/default +web +Complete +RolloutComplete +3\/3 /);

    expect(await main(["set", "web", "data", "--storage", "3Gi"], capture().io, s.connect)).toBe(0);
    const table = capture();
    expect(await main(["status", "web"], table.io, s.connect)).toBe(0);
    expect(table.out.text).toMatch(
      /default +web +- +NotObserved +\d\/3 +(\w+) +\S+ +no step recorded for revision \1 yet .*; the next step: updating data-web-2: storage 2Gi → 3Gi/,
    );
    const json = capture();
    await main(["status", "web", "-o", "json"], json.io, s.connect);
    expect(JSON.parse(json.out.text)).toMatchObject({
      phase: "-",
      reason: "NotObserved",
      observed: false,
      done: false,
    });
    const watch = capture();
    expect(
      await main(["status", "web", "-w", "-o", "json", "--interval", "1s", "--timeout", "1ms"], watch.io, s.connect),
    ).toBe(1);
    expect(JSON.parse(watch.out.text.split("\n")[0]!)).toMatchObject({ phase: "-", reason: "NotObserved" });
  });
});
