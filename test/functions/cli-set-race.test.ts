// `claimstep set` while something else writes the set (a running `claimstep serve` records its
// status on every step): the write under the resourceVersion read loses its race (409), and `set`
// reads again and computes its change anew, as kubectl's edits do, instead of failing (found by
// the real-server deployed suite: `set tpl-par logs --add` exited 1 with "the object has been
// modified").
import { describe, expect, it } from "vitest";
import { Keys } from "../../core/keys.js";
import type { StateReader } from "../../core/ports.js";
import { main } from "../../functions/cli.js";
import { simOf } from "../support/cli-target.js";

const capture = () => {
  const out = { text: "", isTTY: false, write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: { NO_COLOR: "1" } }, out, err };
};

/** A reader after whose first `races` loads another writer annotates the set (its resourceVersion moves). */
function racedReader(
  s: Awaited<ReturnType<typeof simOf>>,
  races: number,
): { reader: StateReader; loads: () => number } {
  let loads = 0;
  return {
    loads: () => loads,
    reader: {
      load: async (ref, opts) => {
        const snapshot = await s.sim.reader.load(ref, opts);
        if (loads++ < races)
          await s.sim.admin.mergePatch(
            "statefulsets",
            ref.namespace,
            ref.name,
            { metadata: { annotations: { "example.com/other-writer": String(loads) } } },
            { fieldManager: "other" },
          );
        return snapshot;
      },
    },
  };
}

describe("claimstep set racing another writer of the set", () => {
  it("a size change: the 409 is answered by reading again; the change lands once", async () => {
    const s = await simOf("grow");
    const raced = racedReader(s, 1);
    const { io, err } = capture();
    const code = await main(["set", "web", "data", "--storage", "3Gi"], io, async () => ({
      ...s.target,
      reader: raced.reader,
    }));
    expect(err.text).toBe("");
    expect([0, 2]).toContain(code);
    const desired = JSON.parse((await s.annotations())[Keys.templates]);
    expect(desired.find((t: any) => t.metadata.name === "data").spec.resources.requests.storage).toBe("3Gi");
    expect((await s.annotations())["example.com/other-writer"]).toBe("1"); // the other write is kept
  });

  it("a template added: the same", async () => {
    const s = await simOf("grow");
    const raced = racedReader(s, 2);
    const { io, err } = capture();
    const code = await main(
      ["set", "web", "logs", "--add", "--storage", "1Gi", "--storage-class=fast", "--mount-path", "/logs"],
      io,
      async () => ({ ...s.target, reader: raced.reader }),
    );
    expect(err.text).toBe("");
    expect([0, 2]).toContain(code);
    const desired = JSON.parse((await s.annotations())[Keys.templates]);
    expect(desired.map((t: any) => t.metadata.name)).toEqual(["data", "wal", "logs"]);
  });

  it("a set that keeps changing under it: after 4 attempts the conflict is said, nothing half-written", async () => {
    const s = await simOf("grow");
    const raced = racedReader(s, 100);
    const { io, err } = capture();
    const code = await main(["set", "web", "data", "--storage", "3Gi"], io, async () => ({
      ...s.target,
      reader: raced.reader,
    }));
    expect(code).toBe(1);
    expect(err.text).toMatch(/the object has been modified|Conflict|modified/i);
    expect(raced.loads()).toBe(4);
    expect((await s.annotations())[Keys.templates] ?? "").not.toContain("3Gi");
  });
});
