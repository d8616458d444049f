// Issue 39 point 5: claimstep's manners as a kubectl plugin. Run as `kubectl-claimstep` its help
// and suggested commands say `kubectl claimstep`; `kubectl_complete-claimstep` answers kubectl's
// completion (cobra's __complete protocol: candidates, then `:<directive>`), set names from the
// cluster included; `status -A web` looks in every namespace, `web,helmdb` is two names, -l picks
// by label, and a cluster-scope listing RBAC forbids says to use -n.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { listStatefulSetNames } from "../../../adapters/kube/reader.js";
import { main, type Target } from "../../../functions/cli.js";
import { simOf } from "../../support/cli-target.js";

// The simulated clusters `--cluster sim` keeps go to this file's state directory (test/support/state-home.ts).
const STATE_ENV = { XDG_STATE_HOME: process.env.XDG_STATE_HOME };

const capture = (invokedAs?: string) => {
  const out = { text: "", write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: STATE_ENV, ...(invokedAs ? { invokedAs } : {}) }, out, err };
};

const PLUGIN = "/usr/local/bin/kubectl-claimstep";
const COMPLETION = "/usr/local/bin/kubectl_complete-claimstep";

describe("run as the kubectl plugin (kubectl-claimstep)", () => {
  it("help, usage and errors say kubectl claimstep; the usage's descriptions stay in one column", async () => {
    const { io, out } = capture(PLUGIN);
    expect(await main(["--help"], io)).toBe(0);
    expect(out.text).toMatch(/^ {2}kubectl claimstep plan {3}<statefulset> +show the next step/m);
    expect(out.text).toMatch(
      /^ {2}kubectl claimstep status --watch|^ {2}kubectl claimstep status <statefulset> --watch/m,
    );
    expect(out.text).not.toMatch(/^ {2}claimstep /m);
    expect(out.text).toMatch(/source <\(kubectl claimstep completion bash\)/);
    // The name in prose is left as it is.
    expect(out.text).toMatch(/^claimstep — roll out/);
    const lines = out.text.split("\n");
    const run = lines.findIndex((l) => l.startsWith("  kubectl claimstep run "));
    const step = lines.find((l) => l.startsWith("  kubectl claimstep step   <statefulset>"))!;
    const continued = lines[run + 1]!;
    expect(continued.length - continued.trimStart().length).toBe(step.indexOf("run one step"));

    const usage = capture(PLUGIN);
    expect(await main(["plan", "--help"], usage.io)).toBe(0);
    expect(usage.out.text).toMatch(/Usage:\n {2}kubectl claimstep plan <statefulset>/);
    expect(usage.out.text).toMatch(/ {2}kubectl claimstep plan web -n db/);

    const unknown = capture(PLUGIN);
    expect(await main(["pla"], unknown.io)).toBe(1);
    expect(unknown.err.text).toMatch(/unknown command "pla" for "kubectl claimstep"/);
    expect(unknown.err.text).toMatch(/Run 'kubectl claimstep --help' for usage\./);
  });

  it("as claimstep (or from a file of another name) it says claimstep", async () => {
    for (const invokedAs of [undefined, "/usr/bin/claimstep", "/repo/bin/claimstep.js"]) {
      const { io, out } = capture(invokedAs);
      expect(await main(["--help"], io)).toBe(0);
      expect(out.text).toMatch(/^ {2}claimstep plan {3}<statefulset>/m);
      expect(out.text).not.toMatch(/kubectl claimstep/);
    }
  });

  it("the commands claimstep suggests read kubectl claimstep; annotation keys and prose stay", async () => {
    const s = await simOf("grow");
    const none = capture(PLUGIN);
    expect(await main(["status"], none.io, async () => ({ ...s.target, listOptedIn: async () => [] }))).toBe(0);
    expect(none.out.text).toBe(
      "no opted-in StatefulSets (annotate one with claimstep.io/volume-claim-update-strategy: InPlace, or use kubectl claimstep set)\n",
    );
    const { io, out } = capture(PLUGIN);
    expect(await main(["set", "web", "data", "--storage", "3Gi", "--dry-run"], io, s.connect)).toBe(0);
    expect(out.text).toMatch(/claimstep\.io\//);
    expect(out.text).not.toMatch(/(?<!kubectl )claimstep (plan|step|run|status|set|finalize) /);
  });
});

describe("completion: claimstep __complete and kubectl_complete-claimstep", () => {
  const complete = async (words: string[], connect?: () => Promise<Target>, invokedAs = COMPLETION) => {
    const { io, out } = capture(invokedAs);
    expect(await main(words, io, connect)).toBe(0);
    return out.text;
  };

  it("completes commands, flags and -o formats, then the directive (4: no file completion)", async () => {
    expect(await complete([""])).toMatch(/^plan\nstep\nrun\n(.+\n)*help\n:4\n$/);
    expect(await complete(["st"])).toBe("step\nstatus\n:4\n");
    expect(await complete(["status", "--all-"])).toBe("--all-namespaces\n:4\n");
    expect(await complete(["status", "-o", ""])).toBe("text\njson\nyaml\nwide\n:4\n");
    expect(await complete(["run", "--cluster", "sim:gr"])).toBe("sim:grow\n:4\n");
    expect(await complete(["admission", ""])).toBe("certs\n:4\n");
    // A file after -f: the shell's own completion (directive 0).
    expect(await complete(["apply", "-f", ""])).toBe(":0\n");
    // claimstep's own hidden command, as cobra programs have it.
    expect(await complete(["__complete", "st"], undefined, "/usr/bin/claimstep")).toBe("step\nstatus\n:4\n");
  });

  it("completes StatefulSet names from the cluster, after a comma too", async () => {
    const sim = await simOf("grow");
    const s = {
      connect: async (): Promise<Target> => ({
        ...sim.target,
        listSets: (ns) => listStatefulSetNames(sim.sim.client, ns),
      }),
    };
    expect(await complete(["status", ""], s.connect)).toBe("web\n:4\n");
    expect(await complete(["set", "w"], s.connect)).toBe("web\n:4\n");
    expect(await complete(["status", "db,w"], s.connect)).toBe("db,web\n:4\n");
    // step --all takes no name; set's second word is a claim template.
    expect(await complete(["step", "--all", ""], s.connect)).toBe(":4\n");
  });

  it("a cluster that cannot be reached completes no name, quietly", async () => {
    const { io, out, err } = capture(COMPLETION);
    const unreachable = () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:6443"));
    expect(await main(["plan", ""], io, unreachable)).toBe(0);
    expect(out.text).toBe(":4\n");
    expect(err.text).toBe("");
  });
});

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

describe("the package", () => {
  it("installs the program as claimstep, kubectl-claimstep and kubectl_complete-claimstep, a file it ships", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      bin: Record<string, string>;
      files: string[];
    };
    expect(pkg.bin).toEqual({
      claimstep: "bin/claimstep.js",
      "kubectl-claimstep": "bin/claimstep.js",
      "kubectl_complete-claimstep": "bin/claimstep.js",
    });
    expect(pkg.files).toContain("bin/claimstep.js");
  });
});

describe("claimstep completion bash: set names through claimstep __complete", () => {
  it("completes the simulated cluster's sets after status, and still the flags after serve", async () => {
    const dir = mkdtempSync(join(tmpdir(), "claimstep-bash-"));
    try {
      symlinkSync(join(ROOT, "bin/claimstep.js"), join(dir, "claimstep"));
      const { io, out } = capture();
      expect(await main(["completion", "bash"], io)).toBe(0);
      writeFileSync(join(dir, "c.bash"), out.text);
      const complete = (line: string) => {
        const r = spawnSync(
          "bash",
          [
            "-c",
            `source ${join(dir, "c.bash")}; COMP_LINE="$1"; COMP_POINT=\${#COMP_LINE}; _claimstep; printf '%s\\n' "\${COMPREPLY[@]}"`,
            "_",
            line,
          ],
          { encoding: "utf8", env: { ...process.env, PATH: `${dir}${delimiter}${process.env.PATH}` }, timeout: 60_000 },
        );
        expect(r.stderr).toBe("");
        return r.stdout.trim().split("\n").filter(Boolean);
      };
      expect(complete("claimstep status --cluster sim w")).toEqual(["web"]);
      expect(complete("claimstep serve ")).toEqual(expect.arrayContaining(["--port", "--host"]));
      for (const shell of ["zsh", "fish"]) {
        const script = capture();
        await main(["completion", shell], script.io);
        expect(script.out.text, shell).toMatch(/__complete/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
// A real kubectl (≥ 1.26 runs kubectl_complete-<plugin>): $CLAIMSTEP_KUBECTL, else one on PATH.
const kubectl =
  process.env.CLAIMSTEP_KUBECTL ??
  (spawnSync("sh", ["-c", "command -v kubectl"], { encoding: "utf8" }).stdout.trim() || undefined);

describe.skipIf(!kubectl)("through a real kubectl (its plugin and completion lookup on PATH)", () => {
  const bin = mkdtempSync(join(tmpdir(), "claimstep-plugin-"));
  afterAll(() => rmSync(bin, { recursive: true, force: true }));
  // As npm installs the package's "bin": links to bin/claimstep.js under each name.
  for (const name of ["kubectl-claimstep", "kubectl_complete-claimstep"])
    symlinkSync(join(ROOT, "bin/claimstep.js"), join(bin, name));
  const env = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH}`, KUBECONFIG: join(bin, "none") };
  const kube = (...args: string[]) => spawnSync(kubectl!, args, { env, encoding: "utf8", timeout: 60_000 });

  it("kubectl claimstep --help says kubectl claimstep", () => {
    const r = kube("claimstep", "--help");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ {2}kubectl claimstep plan {3}<statefulset>/m);
  });

  it("kubectl __complete claimstep … runs kubectl_complete-claimstep: commands, and the simulated cluster's sets", () => {
    const commands = kube("__complete", "claimstep", "stat");
    expect(commands.status, commands.stderr).toBe(0);
    expect(commands.stdout).toBe("status\n:4\n");
    const names = kube("__complete", "claimstep", "status", "--cluster", "sim", "");
    expect(names.stdout).toBe("web\n:4\n");
  });
});
