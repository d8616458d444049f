// Issue 39 point 6: `--storage 1.5` and `--storage 7` are bytes; refused (nothing written) with the
// unit most likely meant, instead of a claim of 7 bytes.
import { describe, expect, it } from "vitest";
import { isUnitless } from "../../../core/kube/quantity.js";
import { storageFlagProblem } from "../../../functions/cli/set-flags.js";
import { main } from "../../../functions/cli.js";
import { simOf } from "../../support/cli-target.js";

// The simulated clusters `--cluster sim` keeps go to this file's state directory (test/support/state-home.ts).
const STATE_ENV = { XDG_STATE_HOME: process.env.XDG_STATE_HOME };

const capture = () => {
  const out = { text: "", write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: STATE_ENV }, out, err };
};

describe("--storage without a unit", () => {
  it("is refused with the Gi meant, nothing written (set, and set --add)", async () => {
    const s = await simOf("grow");
    for (const [argv, meant] of [
      [["set", "web", "data", "--storage", "1.5"], "1.5Gi"],
      [["set", "web", "data", "--storage", "7"], "7Gi"],
      [["set", "web", "logs", "--add", "--storage", "2"], "2Gi"],
    ] as const) {
      const { io, err } = capture();
      expect(await main([...argv], io, s.connect), argv.join(" ")).toBe(1);
      expect(err.text).toMatch(
        new RegExp(`a number without a unit is bytes .*; did you mean ${meant.replace(".", "\\.")}\\?`),
      );
    }
    expect(s.writes()).toBe(0);
  });

  it("a unit, or a byte count of a plausible size, is a size", () => {
    expect(storageFlagProblem("1.5Gi")).toBeUndefined();
    expect(storageFlagProblem("500M")).toBeUndefined();
    expect(storageFlagProblem("21474836480")).toBeUndefined();
    expect(storageFlagProblem("1e9")).toBeUndefined();
    expect(storageFlagProblem("1.5")).toBe(
      '--storage "1.5": a number without a unit is bytes (1.5 bytes); did you mean 1.5Gi?',
    );
  });

  it("core/kube/quantity.ts says which quantities have no unit", () => {
    for (const q of ["7", "1.5", ".5", "+3", 7]) expect(isUnitless(q), String(q)).toBe(true);
    for (const q of ["7Gi", "1e3", "500m", "1.5k", "x", ""]) expect(isUnitless(q), q).toBe(false);
  });
});
