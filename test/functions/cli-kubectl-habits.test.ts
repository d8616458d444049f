// Issue 24, items 16 and 17: the CLI takes what a kubectl user types (pflag's flag syntax, Go
// durations, kind/NAME, a value that starts with '-') and fails the way kubectl fails (a flag
// without its value, a mistyped command), checks its arguments before it looks for a cluster,
// lists every command in its help, copes with a terminal that reports 0×0, counts in the
// singular, and `step --all` prints each set's message, as `step <name>` does.
import { describe, expect, it } from "vitest";
import { parseDuration } from "../../functions/cli/durations.js";
import { COMMAND_NAMES, HELP, main } from "../../functions/cli.js";
import { simOf } from "../support/cli-target.js";

const capture = (isTTY = false, env: Record<string, string> = { NO_COLOR: "1" }) => {
  const out = { text: "", isTTY, write: (s: string) => void (out.text += s) } as {
    text: string;
    isTTY: boolean;
    write: (s: string) => void;
    rows?: number;
    columns?: number;
  };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env }, out, err };
};

describe("kubectl's flag syntax (pflag)", () => {
  it.each([
    [
      ["plan", "web", "-o=json"],
      (out: string) => expect(JSON.parse(out).decision.ref).toEqual({ namespace: "default", name: "web" }),
    ],
    [["plan", "web", "-ojson"], (out: string) => expect(JSON.parse(out).decision.phase).toBe("Progressing")],
    [["plan", "web", "-n=default", "--output=yaml"], (out: string) => expect(out).toMatch(/^decision:\n/)],
    [["status", "-A=true", "-o", "json"], (out: string) => expect(JSON.parse(out)).toHaveLength(1)],
    [["status", "--all-namespaces=false", "-o", "json"], (out: string) => expect(JSON.parse(out)).toHaveLength(1)],
    [
      ["step", "--all", "--dry-run=true", "-o", "json"],
      (out: string) => expect(JSON.parse(out).stepped[0].outcome).toBe("dry-run"),
    ],
  ])("%j works", async (argv, check) => {
    const s = await simOf("grow");
    const { io, out, err } = capture();
    expect(await main(argv, io, s.connect), err.text).toBe(0);
    check(out.text);
    expect(s.writes()).toBe(0);
  });

  it.each([
    [["set", "web", "data", "--storage"], "claimstep set: flag needs an argument: --storage\n"],
    [["plan", "web", "-n"], "claimstep plan: flag needs an argument: 'n' in -n\n"],
    [["plan", "web", "-o"], "claimstep plan: flag needs an argument: 'o' in -o\n"],
    [["plan", "web", "--bogus"], "claimstep plan: unknown flag: --bogus\n"],
    [["plan", "web", "-x"], "claimstep plan: unknown shorthand flag: 'x' in -x\n"],
    [
      ["status", "-A=maybe"],
      `claimstep status: invalid argument "maybe" for "-A, --all-namespaces" flag: strconv.ParseBool: parsing "maybe": invalid syntax\n`,
    ],
  ])("%j fails as kubectl does, with the command's usage", async (argv, first) => {
    const s = await simOf("grow");
    const { io, out, err } = capture();
    expect(await main(argv, io, s.connect)).toBe(1);
    expect(err.text.startsWith(`${first}\nclaimstep ${argv[0]} — `), err.text).toBe(true);
    expect(out.text).toBe("");
    expect(s.writes()).toBe(0);
  });

  it("a value that starts with '-' is the flag's value, after '=' or as the next argument (kubectl takes it)", async () => {
    for (const argv of [
      ["set", "web", "data", "--storage=-5Gi"],
      ["set", "web", "data", "--storage", "-5Gi"],
    ]) {
      const s = await simOf("grow");
      const before = await s.annotations();
      const { io, err } = capture();
      expect(await main(argv, io, s.connect), argv.join(" ")).toBe(1);
      expect(err.text).toBe(
        `claimstep: set: --storage "-5Gi": a claim's size cannot be negative; give a size such as 20Gi. Nothing written\n`,
      );
      expect(await s.annotations()).toEqual(before);
      expect(s.writes()).toBe(0);
    }
  });
});

describe("durations as Go (and kubectl) write them", () => {
  it.each([
    ["1m30s", 90_000],
    ["1h2m3.5s", 3_723_500],
    ["1.5h", 5_400_000],
    ["250ms", 250],
    ["1500us", 2],
    ["0", 0],
    ["7", 7000],
  ])("%s → %d ms", (s, ms) => expect(parseDuration(s, "timeout")).toBe(ms));

  it.each(["-1s", "1d", "1m30", "m", "1 m", ""])("%j is refused naming the flag", (s) => {
    expect(() => parseDuration(s, "timeout")).toThrow(
      new RegExp(`^--timeout ${JSON.stringify(s).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: `),
    );
  });

  it("run --timeout 1m30s runs (and gives up after 90 s of the cluster's time)", async () => {
    const s = await simOf("grow");
    const { io, err } = capture();
    const code = await main(["run", "web", "--timeout", "1m30s", "--interval", "30s", "-o", "json"], io, s.connect);
    expect(err.text).not.toMatch(/expected a duration/);
    expect([0, 1]).toContain(code);
    if (code === 1) expect(err.text).toMatch(/after 1m30s/);
  });
});

describe("kind/NAME, as kubectl names a StatefulSet", () => {
  it.each([
    "sts/web",
    "statefulset/web",
    "statefulsets/web",
    "statefulset.apps/web",
    "statefulsets.apps/web",
    "StatefulSet/web",
  ])("plan %s is plan web", async (name) => {
    const s = await simOf("grow");
    const { io, out, err } = capture();
    expect(await main(["plan", name, "-o", "json"], io, s.connect), err.text).toBe(0);
    expect(JSON.parse(out.text).decision.ref).toEqual({ namespace: "default", name: "web" });
  });

  it.each([
    ["plan", "deploy/web"],
    ["set", "deployment/web", "data", "--storage", "5Gi"],
    ["status", "pvc/data-web-0"],
    ["run", "sts/"],
  ])("%s %s: another kind (or no name) is refused naming it, nothing done", async (...argv) => {
    const s = await simOf("grow");
    const { io, err } = capture();
    expect(await main(argv, io, s.connect)).toBe(1);
    expect(err.text).toContain(JSON.stringify(argv[1]));
    expect(err.text).toMatch(/claimstep acts on StatefulSets: give web, sts\/web or statefulset\/web/);
    expect(s.writes()).toBe(0);
  });
});

describe("a mistyped command", () => {
  it("suggests the command as cobra does", async () => {
    // Within 2 edits, or a prefix, in name order (cobra's SuggestionsMinimumDistance and sorting).
    for (const [typed, meant] of [
      ["plna", "plan"],
      ["stat", "set\n\tstatus\n\tstep"],
      ["finalise", "finalize"],
      ["aply", "apply"],
      ["vers", "version"],
    ]) {
      const { io, err } = capture();
      expect(await main([typed!, "web"], io)).toBe(1);
      expect(err.text).toBe(
        `claimstep: unknown command "${typed}" for "claimstep"\n\nDid you mean this?\n\t${meant}\n\nRun 'claimstep --help' for usage.\n`,
      );
    }
    // A bad flag after a mistyped command: the command is what is wrong.
    const both = capture();
    expect(await main(["plna", "web", "--bogus"], both.io)).toBe(1);
    expect(both.err.text).toMatch(
      /^claimstep: unknown command "plna" for "claimstep"\n\nDid you mean this\?\n\tplan\n/,
    );
  });

  it("without a near one, lists the commands", async () => {
    const { io, err } = capture();
    expect(await main(["frobnicate"], io)).toBe(1);
    expect(err.text).toMatch(
      /^claimstep: unknown command "frobnicate" for "claimstep"\n\nCommands: plan, step, run, status, set, finalize, /,
    );
  });
});

describe("set --storage is checked as a flag", () => {
  it.each([
    [
      "10Gb",
      `claimstep: set: --storage "10Gb": not a Kubernetes quantity; did you mean 10G or 10Gi? Nothing written\n`,
    ],
    [
      "10GiB",
      `claimstep: set: --storage "10GiB": not a Kubernetes quantity; did you mean 10G or 10Gi? Nothing written\n`,
    ],
    [
      "5 gigs",
      `claimstep: set: --storage "5 gigs": not a Kubernetes quantity (examples: 20Gi, 500M, 1.5Ti). Nothing written\n`,
    ],
    [
      "0",
      `claimstep: set: --storage "0": a claim's size must be above zero; give a size such as 20Gi. Nothing written\n`,
    ],
  ])("--storage %j names the flag, not the annotation", async (storage, message) => {
    const s = await simOf("grow");
    const { io, err } = capture();
    expect(await main(["set", "web", "data", "--storage", storage], io, s.connect)).toBe(1);
    expect(err.text).toBe(message);
    expect(err.text).not.toMatch(/annotation/);
    expect(s.writes()).toBe(0);
  });
});

describe("arguments before the cluster", () => {
  it.each([["plan"], ["step"], ["run"], ["set"], ["set", "web"], ["finalize"], ["status", "-w"]])(
    "%j asks for the name before looking for a kubeconfig",
    async (...argv) => {
      const { io, err } = capture(false, {
        NO_COLOR: "1",
        KUBECONFIG: "/nonexistent/kubeconfig",
        HOME: "/nonexistent",
      });
      let connected = false;
      const connect = async () => {
        connected = true;
        throw new Error("cannot load kubeconfig");
      };
      expect(await main(argv, io, connect)).toBe(1);
      expect(connected).toBe(false);
      expect(err.text).toMatch(/name the (StatefulSet|claim template)/);
      expect(err.text).not.toMatch(/kubeconfig/);
    },
  );
});

describe("help", () => {
  it("the top-level help lists every command the dispatcher knows", () => {
    expect(COMMAND_NAMES.length).toBeGreaterThan(10);
    for (const c of COMMAND_NAMES) expect(HELP, c).toMatch(new RegExp(`\\n  claimstep ${c}\\b`));
  });

  it("relay --help offers no flag relay refuses", async () => {
    const help = capture();
    expect(await main(["relay", "--help"], help.io)).toBe(0);
    expect(help.out.text).not.toMatch(/--cluster/);
    const refused = capture();
    expect(await main(["relay", "--url", "http://127.0.0.1:9/v1/relay", "--cluster", "sim"], refused.io)).toBe(1);
    expect(refused.err.text).toMatch(
      /^claimstep relay: --cluster is not a flag of relay: relay watches a real cluster.*\n\nclaimstep relay — /,
    );
  });
});

describe("a terminal that reports 0×0 (process.stdout.columns 0)", () => {
  it("is no screen to redraw: run prints plain lines and one table, as in a pipe", async () => {
    const { connect } = await simOf("grow");
    const { io, out } = capture(true, {});
    Object.assign(out, { rows: 0, columns: 0 });
    expect(await main(["run", "web"], io, connect)).toBe(0);
    expect(out.text).not.toMatch(/\x1b\[/); // no redraws, no screen clearing, no colour
    expect(out.text.match(/ORDINAL/g)).toHaveLength(1); // the final table only (it was 25, one per step)
    expect(out.text).toMatch(/^\S+Z {2}default\/web {2}Progressing {2}ClaimUpdated/);
  });

  it("a size of 0 rows alone is an unknown height: the live view redraws in place", async () => {
    const { connect } = await simOf("grow");
    const { io, out } = capture(true);
    Object.assign(out, { rows: 0, columns: 120 });
    expect(await main(["run", "web"], io, connect)).toBe(0);
    expect(out.text).not.toContain("\x1b[2J");
    const ups = [...out.text.matchAll(/\x1b\[(\d+)A/g)].map((m) => Number(m[1]));
    expect(ups.length).toBeGreaterThan(3);
  });
});

describe("plurals", () => {
  it("run -o timeline on a set blocked at once counts 1 invocation", async () => {
    const s = await simOf("blocked");
    const { io, out } = capture();
    expect(await main(["run", "web", "-o", "timeline"], io, s.connect)).toBe(2);
    expect(out.text).toMatch(/\n1 invocation, 0 claim writes, 0 transient failures, /);
    expect(out.text).not.toMatch(/\(s\)|\b1 [a-z-]+s\b/);
  });
});

describe("step --all (item 17)", () => {
  it("prints each set's message, as step <name> does", async () => {
    const s = await simOf("blocked");
    const one = capture();
    expect(await main(["step", "web", "--dry-run"], one.io, s.connect)).toBe(2);
    const message = one.out.text.split("\n")[1]!.trim();
    expect(message).toMatch(/^data-web-2: StorageClass fast does not set allowVolumeExpansion: true/);
    const all = capture();
    expect(await main(["step", "--all"], all.io, s.connect)).toBe(2);
    expect(all.out.text).toBe(`default/web  Blocked  ExpansionNotAllowed  ${message}  (nothing to apply)\n`);
    const json = capture();
    expect(await main(["step", "--all", "-o", "json"], json.io, s.connect)).toBe(2);
    expect(JSON.parse(json.out.text).stepped[0]).toMatchObject({
      phase: "Blocked",
      reason: "ExpansionNotAllowed",
      message,
    });
  });
});

describe("the top-level help's layout", () => {
  it("every command's description starts in one column", () => {
    const usage = HELP.slice(HELP.indexOf("Usage:\n"), HELP.indexOf("\n\nEach command"));
    const starts = usage
      .split("\n")
      .map((l) => /^(.{20,}?\S) {2,}(\S)/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[0].length - 1, m.input.trim().split(/\s+/).slice(0, 2).join(" ")] as const);
    expect(starts.length).toBeGreaterThan(8);
    const column = starts[0]![0];
    expect(starts.filter(([at]) => at !== column).map(([, what]) => what)).toEqual([]);
  });
});
