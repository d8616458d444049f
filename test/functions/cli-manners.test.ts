// The CLI's kubectl manners, in process: per-command flags and usage, set --dry-run, set's
// refusals (a smaller size, an unknown VolumeAttributesClass), run on a set not opted in,
// status --watch, -o yaml|wide, colour on a terminal only, completion scripts, and clean errors
// for serve's port and the kubeconfig (http:// servers, a missing $KUBECONFIG).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import YAML from "yaml";
import { SCENARIO_NAMES } from "../../adapters/sim/scenario-names.js";
import { Keys } from "../../core/keys.js";
import { main } from "../../functions/cli.js";
import { runStep } from "../../functions/step.js";
import { simOf } from "../support/cli-target.js";
import { type SocketSim, serveSim, statefulSetObjects, storageClassObjects } from "../support/index.js";

const capture = (isTTY = false, env: Record<string, string> = {}) => {
  const out = { text: "", isTTY, write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env }, out, err };
};

const COLOR = /\x1b\[\d+m/;

describe("per-command flags and usage", () => {
  it("a flag of another command is refused with this command's usage, exit 1, nothing done", async () => {
    const s = await simOf("grow");
    const plan = capture();
    expect(await main(["plan", "web", "--storage", "5Gi"], plan.io, s.connect)).toBe(1);
    expect(plan.err.text).toMatch(/^claimstep plan: --storage is not a flag of plan \(it is a flag of set\)\n/);
    expect(plan.err.text).toMatch(/Usage:\n {2}claimstep plan <statefulset>/);
    expect(plan.out.text).toBe("");
    const status = capture();
    expect(await main(["status", "--dry-run"], status.io, s.connect)).toBe(1);
    expect(status.err.text).toMatch(
      /^claimstep status: --dry-run is not a flag of status \(it is a flag of step, finalize, apply, admission, set\)/,
    );
    expect(status.err.text).toMatch(/claimstep status \[<statefulset>\[,<statefulset>…\]\] \[-A\]/);
    for (const argv of [
      ["plan", "web", "-A"],
      ["run", "web", "--vac", "gold"],
      ["serve", "-n", "db"],
      ["set", "web", "data", "--storage", "3Gi", "--watch"],
      ["plan", "web", "extra"],
    ]) {
      const { io, err } = capture();
      expect(await main(argv, io, s.connect), argv.join(" ")).toBe(1);
      expect(err.text, argv.join(" ")).toMatch(new RegExp(`^claimstep ${argv[0]}: .*\\n\\nclaimstep ${argv[0]} — `));
    }
    expect(s.writes()).toBe(0);
  });

  it("an unknown flag names itself and shows the command's usage", async () => {
    const { io, err } = capture();
    expect(await main(["set", "web", "data", "--size", "5Gi"], io)).toBe(1);
    expect(err.text).toMatch(/^claimstep set: unknown flag: --size\n\nclaimstep set — /);
    expect(err.text).toMatch(/--storage <quantity>/);
  });

  it("<command> --help and help <command> print that command's flags and examples, exit 0", async () => {
    for (const argv of [
      ["status", "--help"],
      ["help", "status"],
      ["status", "web", "-h"],
    ]) {
      const { io, out } = capture();
      expect(await main(argv, io), argv.join(" ")).toBe(0);
      expect(out.text).toMatch(/^claimstep status — /);
      expect(out.text).toMatch(/-w, --watch/);
      expect(out.text).toMatch(/-o, --output <text\|json\|yaml\|wide>/);
      expect(out.text).toMatch(/Examples:\n {2}claimstep status/);
      expect(out.text).not.toMatch(/--storage/);
    }
    const set = capture();
    expect(await main(["set", "--help"], set.io)).toBe(0);
    expect(set.out.text).toMatch(/--dry-run +write nothing: print the annotation diff/);
    expect(set.out.text).toMatch(/--allow-smaller/);
  });

  it("global flags stay valid on every command where they make sense", async () => {
    const s = await simOf("grow");
    for (const argv of [
      ["plan", "web", "-n", "default", "--no-color", "-o", "json"],
      ["status", "-A", "-o", "yaml"],
      ["step", "--all", "-A", "--dry-run"],
      ["run", "web", "-n", "default", "--timeout", "1h", "-o", "json"],
    ]) {
      const { io, err } = capture();
      expect(await main(argv, io, s.connect), `${argv.join(" ")}: ${err.text}`).toBe(0);
    }
  });
});

describe("set", () => {
  it("--dry-run writes nothing and prints the annotation diff and the plan it would cause", async () => {
    const s = await simOf("opted-out");
    const before = await s.annotations();
    const { io, out } = capture();
    expect(await main(["set", "web", "data", "--storage", "5Gi", "--dry-run"], io, s.connect)).toBe(0);
    expect(await s.annotations()).toEqual(before);
    expect(s.writes()).toBe(0);
    expect(out.text).toMatch(/^default\/web: dry run, nothing written\. It would write:/);
    expect(out.text).toMatch(
      /claimstep\.io\/volume-claim-templates: revision \w+ → \w+ \(the live templates until now\)/,
    );
    expect(out.text).toMatch(/ {4}data: spec\.resources\.requests\.storage: 1Gi → 5Gi\n/);
    expect(out.text).not.toMatch(/wal: /);
    expect(out.text).toMatch(/claimstep\.io\/volume-claim-update-strategy: OnClaimDelete → InPlace/);
    expect(out.text).toMatch(/The plan it would cause:\ndefault\/web {2}Progressing {2}ClaimUpdated/);
    expect(out.text).toMatch(/action: PatchClaim default\/data-web-2 storage=5Gi/);

    const json = capture();
    expect(
      await main(
        ["set", "web", "data", "--storage", "5Gi", "--vac", "gold", "--dry-run", "-o", "json"],
        json.io,
        s.connect,
      ),
    ).toBe(0);
    const o = JSON.parse(json.out.text);
    expect(o).toMatchObject({
      dryRun: true,
      changed: true,
      strategy: { from: "OnClaimDelete", to: "InPlace" },
      plan: { outcome: { kind: "dry-run" } },
    });
    expect(o.diff).toEqual([
      { template: "data", path: "spec.resources.requests.storage", from: "1Gi", to: "5Gi" },
      { template: "data", path: "spec.volumeAttributesClassName", from: null, to: "gold" },
    ]);
    // docs/design.md rule 19: the size first; the class once the claim's resize is done.
    expect(o.plan.decision.action).toMatchObject({ claim: "data-web-2", storage: "5Gi" });
    expect(o.plan.decision.action.volumeAttributesClassName).toBeUndefined();
    expect(await s.annotations()).toEqual(before);
    expect(s.writes()).toBe(0);
  });

  it("a size below the claims' current size is refused, naming the sizes (claims never shrink); --allow-smaller writes it", async () => {
    const s = await simOf("grow");
    const before = await s.annotations();
    const { io, err } = capture();
    expect(await main(["set", "web", "data", "--storage", "500Mi"], io, s.connect)).toBe(1);
    expect(err.text).toMatch(/claims never shrink/);
    expect(err.text).toContain(
      "live template data 1Gi (spec.volumeClaimTemplates); claims data-web-0 1Gi, data-web-1 1Gi, data-web-2 1Gi",
    );
    expect(err.text).toMatch(/--allow-smaller/);
    expect(err.text.trim().split("\n")).toHaveLength(1);
    expect(await s.annotations()).toEqual(before);
    // A claim already grown counts too: data-web-2 at 2Gi refuses 1.5Gi.
    await s.step();
    const grown = capture();
    expect(await main(["set", "web", "data", "--storage", "1.5Gi"], grown.io, s.connect)).toBe(1);
    expect(grown.err.text).toMatch(/data-web-2 2Gi.*Give at least 2Gi/);
    const allowed = capture();
    expect(await main(["set", "web", "data", "--storage", "500Mi", "--allow-smaller"], allowed.io, s.connect)).toBe(0);
    expect(JSON.parse((await s.annotations())[Keys.templates])[0].spec.resources.requests.storage).toBe("500Mi");
  });

  it("a size below a failed claim's request is no shrink: the claim comes back down to it (X1), and the output says which and to what", async () => {
    const s = await simOf("recover");
    const { io, out } = capture();
    expect(await main(["set", "web", "data", "--storage", "3Gi"], io, s.connect)).toBe(0);
    expect(out.text).toContain("Recovering from a failed expansion (Kubernetes ≥ 1.34):");
    expect(out.text).toContain(
      "data-web-2: its expansion to 1Ti failed (ControllerResizeInfeasible); claimstep brings it back down to 3Gi (above its capacity 1Gi)",
    );
    expect(out.text).toMatch(/updating data-web-2: storage 1Ti → 3Gi/);
    expect(JSON.parse((await s.annotations())[Keys.templates])[0].spec.resources.requests.storage).toBe("3Gi");
    // At its capacity it cannot come down: refused, naming the recovery in sizes a person writes.
    const stuck = capture();
    expect(await main(["set", "web", "data", "--storage", "1Gi"], stuck.io, s.connect)).toBe(1);
    expect(stuck.err.text).toContain(
      "Kubernetes lowers a failed request only to more than the claim's capacity, so --storage 1Gi cannot bring it back down. Give more than 1Gi, a size the storage can provide (e.g. --storage 2Gi)",
    );
    expect(JSON.parse((await s.annotations())[Keys.templates])[0].spec.resources.requests.storage).toBe("3Gi");
  });

  it("--vac checks the VolumeAttributesClass exists before writing: refused with the classes there are", async () => {
    const s = await simOf("opted-out");
    const before = await s.annotations();
    const { io, out, err } = capture();
    expect(await main(["set", "web", "data", "--storage", "2Gi", "--vac", "nosuch"], io, s.connect)).toBe(1);
    expect(err.text).toBe(
      `claimstep: set: VolumeAttributesClass "nosuch" not found (the cluster has: gold, silver); nothing written\n`,
    );
    expect(out.text).toBe("");
    expect(await s.annotations()).toEqual(before);
    expect(s.writes()).toBe(0);
    expect(await main(["set", "web", "data", "--vac", "gold"], capture().io, s.connect)).toBe(0);
    expect(JSON.parse((await s.annotations())[Keys.templates])[0].spec.volumeAttributesClassName).toBe("gold");
  });

  it("--vac finds the classes even when no template names one yet (the reader lists them only on request)", async () => {
    const s = await simOf("opted-out");
    // Drop every VolumeAttributesClass from the templates: nothing names one, as on a cluster new to them.
    s.sim.update("statefulsets", "default", "web", (o) => {
      o.spec.volumeClaimTemplates = o.spec.volumeClaimTemplates.filter((t: any) => !t.spec.volumeAttributesClassName);
    });
    const { io, err } = capture();
    expect(await main(["set", "web", "data", "--storage", "2Gi", "--vac", "gold"], io, s.connect)).toBe(0);
    expect(err.text).toBe("");
    expect(JSON.parse((await s.annotations())[Keys.templates])[0].spec.volumeAttributesClassName).toBe("gold");
  });
});

describe("run", () => {
  it("on a set that is not opted in exits 2 with the reason", async () => {
    const s = await simOf("opted-out");
    const { io, err } = capture();
    expect(await main(["run", "web"], io, s.connect)).toBe(2);
    expect(err.text).toMatch(
      /default\/web is left alone \(NotOptedIn\): claimstep\.io\/volume-claim-update-strategy is OnClaimDelete; set it to InPlace .*nothing was done/,
    );
    const json = capture();
    expect(await main(["run", "web", "-o", "json"], json.io, s.connect)).toBe(2);
    expect(JSON.parse(json.out.text.trim().split("\n").at(-1)!).decision).toMatchObject({
      phase: "Idle",
      reason: "NotOptedIn",
    });
    expect(s.writes()).toBe(0);
  });
});

describe("status --watch", () => {
  it("prints each transition while a controller steps the set, and exits 0 on Complete", async () => {
    // The controller (claimstep serve, a CronJob) steps the set while the watch waits.
    const s = await simOf("grow", async (sim) => {
      await runStep({
        reader: sim.reader,
        writers: sim.writers,
        ref: { namespace: "default", name: "web" },
        now: sim.now(),
      });
    });
    const { io, out, err } = capture();
    expect(await main(["status", "web", "--watch", "--interval", "5s"], io, s.connect)).toBe(0);
    expect(err.text).toBe("");
    const lines = out.text.trim().split("\n");
    expect(lines[0]).toMatch(/^\S+Z {2}default\/web {2}- {2}NotObserved {2}no step recorded for revision \w+ yet/);
    expect(lines.some((l) => / default\/web {2}Progressing {2}ClaimUpdated {2}\d\/3 updated/.test(l))).toBe(true);
    expect(lines.some((l) => / Waiting {2}ClaimResizing /.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/ default\/web {2}Complete {2}RolloutComplete {2}3\/3 updated/);
    // One line per change, none repeated back to back.
    const keys = lines.map((l) => l.replace(/^\S+ {2}/, ""));
    expect(keys.every((k, i) => i === 0 || k !== keys[i - 1])).toBe(true);
  });

  it("never writes; exits 2 on Blocked, 1 on --timeout, -w and -o json", async () => {
    const blocked = await simOf("blocked");
    await blocked.step();
    const writes = blocked.writes();
    const b = capture();
    expect(await main(["status", "web", "-w"], b.io, blocked.connect)).toBe(2);
    expect(b.out.text).toMatch(/default\/web {2}Blocked {2}ExpansionNotAllowed/);
    expect(b.err.text).toMatch(/default\/web is blocked \(ExpansionNotAllowed\)/);
    expect(blocked.writes()).toBe(writes);

    const idle = await simOf("grow"); // nobody steps it
    const t = capture();
    expect(
      await main(["status", "web", "-w", "--interval", "1s", "--timeout", "10s", "-o", "json"], t.io, idle.connect),
    ).toBe(1);
    expect(
      t.out.text
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual([expect.objectContaining({ phase: "-", reason: "NotObserved" })]);
    expect(t.err.text).toMatch(/default\/web is still - \(NotObserved\) after 10s/);
    expect(idle.writes()).toBe(0);

    const notOptedIn = await simOf("opted-out");
    const n = capture();
    expect(await main(["status", "web", "-w"], n.io, notOptedIn.connect)).toBe(2);
    expect(n.err.text).toMatch(/not opted in: claimstep\.io\/volume-claim-update-strategy is OnClaimDelete/);

    const usage = capture();
    expect(await main(["status", "-w"], usage.io, idle.connect)).toBe(1);
    expect(usage.err.text).toMatch(/status --watch: name the StatefulSet/);
  });
});

describe("-o json|yaml|wide", () => {
  it("yaml is the json object; run -o yaml is one document per step", async () => {
    const s = await simOf("grow");
    const json = capture();
    const yaml = capture();
    expect(await main(["plan", "web", "-o", "json"], json.io, s.connect)).toBe(0);
    expect(await main(["plan", "web", "-o", "yaml"], yaml.io, s.connect)).toBe(0);
    expect(YAML.parse(yaml.out.text)).toEqual(JSON.parse(json.out.text));
    const run = capture();
    expect(await main(["run", "web", "-o", "yaml"], run.io, s.connect)).toBe(0);
    const docs = YAML.parseAllDocuments(run.out.text).map((d) => d.toJS());
    expect(docs.length).toBeGreaterThan(3);
    expect(docs[0]).toMatchObject({ step: 1, outcome: { kind: "applied" } });
    expect(docs.at(-1).decision.phase).toBe("Complete");
  });

  it("wide adds columns to the status table; formats a command does not offer are refused", async () => {
    const s = await simOf("grow");
    await s.step();
    const { io, out } = capture();
    expect(await main(["status", "-o", "wide"], io, s.connect)).toBe(0);
    const [header, row] = out.text.trim().split("\n");
    expect(header!.split(/ {2,}/)).toEqual([
      "NAMESPACE",
      "NAME",
      "PHASE",
      "REASON",
      "UPDATED",
      "REVISION",
      "CURRENT",
      "STRATEGY",
      "IN-FLIGHT",
      "PENDING",
      "BLOCKED",
      "ORDINAL",
      "SINCE",
      "OBSERVED",
      "MESSAGE",
    ]);
    // Where it stands now: the next step (data-web-2 written and in flight, wal-web-2 next), not the one recorded.
    expect(row).toMatch(
      /^default +web +Progressing +ClaimUpdated +0\/3 +\w+ +- +InPlace +1 +2 +0 +2 +\S+Z +\S+Z +updating wal-web-2/,
    );
    for (const argv of [
      ["plan", "web", "-o", "wide"],
      ["status", "-o", "timeline"],
      ["version", "-o", "yaml"],
    ]) {
      const r = capture();
      expect(await main(argv, r.io, s.connect), argv.join(" ")).toBe(1);
      expect(r.err.text).toMatch(/--output "\w+": use text/);
    }
  });
});

describe("colour on a terminal only", () => {
  it("colours phases on a terminal; never with NO_COLOR, --no-color or a pipe", async () => {
    const s = await simOf("blocked");
    await s.step();
    const tty = capture(true);
    expect(await main(["status"], tty.io, s.connect)).toBe(2);
    expect(tty.out.text).toContain("\x1b[31mBlocked\x1b[0m");
    const plan = capture(true);
    await main(["plan", "web"], plan.io, s.connect);
    expect(plan.out.text).toMatch(/^default\/web {2}\x1b\[31mBlocked\x1b\[0m {2}ExpansionNotAllowed/);
    for (const [label, c, argv] of [
      ["NO_COLOR", capture(true, { NO_COLOR: "1" }), ["status"]],
      ["--no-color", capture(true), ["status", "--no-color"]],
      ["a pipe", capture(false), ["status"]],
    ] as const) {
      await main([...argv], c.io, s.connect);
      expect(c.out.text, label).toMatch(/Blocked/);
      expect(c.out.text, label).not.toMatch(COLOR);
    }
    const complete = await simOf("grow");
    const run = capture(true);
    expect(await main(["run", "web"], run.io, complete.connect)).toBe(0);
    expect(run.out.text).toContain("\x1b[32mComplete\x1b[0m");
  });

  it("the live view measures lines without their colour codes", async () => {
    const s = await simOf("grow");
    const { io, out } = capture(true);
    // The headline fits in 75 columns only without its colour codes.
    Object.assign(out, { rows: 1000, columns: 75 });
    expect(await main(["run", "web"], io, s.connect)).toBe(0);
    const firstFrame = out.text.split(/\x1b\[\d+A/)[0]!.replace(/\n$/, "");
    const visible = firstFrame.replace(/\x1b\[[0-9;]*m/g, "");
    const headline = firstFrame.split("\n")[0]!;
    expect(visible.split("\n")[0]!.length).toBeLessThanOrEqual(75);
    expect(headline.length).toBeGreaterThan(75);
    const rows = visible.split("\n").reduce((n, l) => n + Math.max(1, Math.ceil(l.length / 75)), 0);
    expect(Number(/\x1b\[(\d+)A/.exec(out.text)![1])).toBe(rows);
  });
});

describe("completion", () => {
  const script = async (shell: string) => {
    const { io, out } = capture();
    expect(await main(["completion", shell], io)).toBe(0);
    return out.text;
  };

  it("bash completes commands, each command's flags, -o formats and scenario names", async () => {
    const dir = mkdtempSync(join(tmpdir(), "claimstep-completion-"));
    try {
      writeFileSync(join(dir, "c.bash"), await script("bash"));
      const complete = (line: string) => {
        const r = spawnSync(
          "bash",
          [
            "-c",
            `source ${join(dir, "c.bash")}; COMP_LINE="$1"; COMP_POINT=\${#COMP_LINE}; _claimstep; printf '%s\\n' "\${COMPREPLY[@]}"`,
            "_",
            line,
          ],
          { encoding: "utf8" },
        );
        expect(r.stderr).toBe("");
        return r.stdout.trim().split("\n").filter(Boolean);
      };
      expect(complete("claimstep ")).toEqual(
        expect.arrayContaining(["plan", "step", "run", "status", "set", "serve", "relay", "completion", "help"]),
      );
      expect(complete("claimstep st")).toEqual(["step", "status"]);
      const set = complete("claimstep -n db set web data --");
      expect(set).toEqual(
        expect.arrayContaining(["--storage", "--vac", "--dry-run", "--allow-smaller", "--namespace", "--output"]),
      );
      expect(set).not.toContain("--watch");
      expect(complete("claimstep status -")).toEqual(expect.arrayContaining(["-w", "--watch", "-A"]));
      expect(complete("claimstep run web --cluster sim:fl")).toEqual(["flaky-api"]);
      expect(complete("claimstep run web --cluster ")).toEqual(["sim", ...SCENARIO_NAMES.map((s) => `sim:${s}`)]);
      expect(complete("claimstep status -o ")).toEqual(["text", "json", "yaml", "wide"]);
      expect(complete("claimstep completion ")).toEqual(["bash", "zsh", "fish"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("zsh and fish scripts name the commands, flags and scenarios; another shell is an error", async () => {
    const zsh = await script("zsh");
    expect(zsh).toMatch(/^#compdef claimstep kubectl-claimstep\n/);
    expect(zsh).toMatch(/compdef _claimstep claimstep kubectl-claimstep/);
    expect(zsh).toMatch(/ {4}set\) flags=\(--storage --vac --dry-run --allow-smaller /);
    expect(zsh).toContain("sim:flaky-api");
    const fish = await script("fish");
    expect(fish).toMatch(/complete -c claimstep -n '__fish_use_subcommand' -a status -d /);
    expect(fish).toMatch(/complete -c claimstep -n '__fish_seen_subcommand_from status' -s w -l watch/);
    expect(fish).toMatch(/-l cluster -r -a 'sim sim:grow /);
    const { io, err } = capture();
    expect(await main(["completion", "powershell"], io)).toBe(1);
    expect(err.text).toMatch(/completion: name the shell: claimstep completion bash\|zsh\|fish \(not "powershell"\)/);
  });
});

describe("clean errors", () => {
  const token = { CLAIMSTEP_API_TOKEN: "0123456789abcdef0123456789abcdef" };

  it("serve --port abc is one line and exit 1, at once", async () => {
    for (const [argv, env, source] of [
      [["serve", "--cluster", "sim", "--port", "abc"], token, "--port"],
      [["serve", "--cluster", "sim"], { ...token, PORT: "80a" }, "\\$PORT"],
      [["serve", "--cluster", "sim", "--port", "70000"], token, "--port"],
    ] as const) {
      const { io, err } = capture(false, env);
      expect(await main([...argv], io), argv.join(" ")).toBe(1);
      expect(err.text).toMatch(
        new RegExp(`^claimstep: serve: ${source} "\\w+" is not a port: give a number from 1 to 65535`),
      );
      expect(err.text.trim().split("\n")).toHaveLength(1);
    }
  });

  it("a port in use is one line naming the fix, exit 1 (no EADDRINUSE trace)", async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const { io, err } = capture(false, token);
      expect(await main(["serve", "--cluster", "sim", "--port", String(port)], io)).toBe(1);
      expect(err.text).toBe(
        `claimstep: cannot listen on 127.0.0.1:${port}: the port is in use (EADDRINUSE); stop what listens there or choose another with --port (or PORT)\n`,
      );
    } finally {
      busy.close();
    }
  });

  describe("the kubeconfig", () => {
    let kube: SocketSim;
    const dir = mkdtempSync(join(tmpdir(), "claimstep-kubeconfig-"));
    beforeAll(async () => {
      kube = await serveSim({}); // anonymous, plain HTTP: as `kubectl proxy` serves the API
      kube.fake.seed(
        ...storageClassObjects(),
        ...statefulSetObjects({
          namespace: "default",
          desired: [{ name: "data", storage: "2Gi", storageClassName: "fast" }],
        }),
      );
    });
    afterAll(async () => {
      await kube.close();
      rmSync(dir, { recursive: true, force: true });
    });
    afterEach(() => vi.unstubAllEnvs());

    it("an http:// server (kubectl proxy) is used, as kubectl uses it", async () => {
      const kubeconfig = join(dir, "proxy");
      writeFileSync(
        kubeconfig,
        `apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: "${kube.url}"}}]
users: [{name: none, user: {}}]
contexts: [{name: proxy, context: {cluster: proxy, user: none}}]
current-context: proxy
`,
      );
      const { io, out, err } = capture();
      expect(await main(["plan", "web", "--kubeconfig", kubeconfig, "-o", "json"], io)).toBe(0);
      expect(err.text).toBe("");
      expect(JSON.parse(out.text).decision).toMatchObject({
        ref: { namespace: "default", name: "web" },
        action: { claim: "data-web-2" },
      });
    });

    it("KUBECONFIG naming a missing file names the variable and the path", async () => {
      vi.stubEnv("KUBECONFIG", join(dir, "nonexistent"));
      const { io, err } = capture();
      expect(await main(["plan", "web"], io)).toBe(1);
      expect(err.text).toMatch(
        new RegExp(
          `^claimstep: cannot load kubeconfig from \\$KUBECONFIG \\(KUBECONFIG=${join(dir, "nonexistent")}\\): ENOENT`,
        ),
      );
      expect(err.text).toMatch(/unset it, or pass --kubeconfig\n$/);
      expect(err.text).not.toMatch(/\(default\)/);
    });
  });
});
