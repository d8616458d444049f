// `claimstep version` / `claimstep --version`: the package's version, read from package.json at
// run time, wherever the CLI runs from (functions/cli/ in a clone, dist/functions/cli/ in the
// installed package); and the launcher prints it from a clone.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { packageVersion } from "../../functions/cli/version.js";
import { HELP, main } from "../../functions/cli.js";

const ROOT = new URL("../../", import.meta.url);
const { version } = JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8")) as { version: string };

const capture = () => {
  const out = { text: "", write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: {} }, out, err };
};

describe("claimstep version", () => {
  it.each([[["version"]], [["--version"]]])("%j prints the package's version and exits 0", async (argv) => {
    const { io, out, err } = capture();
    expect(await main(argv, io)).toBe(0);
    expect(out.text).toBe(`claimstep ${version}\n`);
    expect(err.text).toBe("");
  });

  it("-o json prints one object", async () => {
    const { io, out } = capture();
    expect(await main(["version", "-o", "json"], io)).toBe(0);
    expect(JSON.parse(out.text)).toEqual({ name: "claimstep", version });
  });

  it("is in the help", () => {
    expect(HELP).toMatch(/claimstep version .*--version/);
  });

  it("finds package.json from the compiled CLI's directory too (dist/functions/cli/)", () => {
    expect(packageVersion(new URL("dist/functions/cli/", ROOT))).toBe(version);
    expect(packageVersion(new URL("functions/cli/", ROOT))).toBe(version);
  });

  it("skips another package's package.json, and says unknown when there is none of claimstep", () => {
    const dir = mkdtempSync(join(tmpdir(), "claimstep-version-"));
    try {
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "other", version: "9.9.9" }));
      expect(packageVersion(pathToFileURL(`${dir}/sub/`))).toBe("unknown");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("bin/claimstep.js --version prints it from a clone", () => {
    const stdout = execFileSync(process.execPath, [new URL("bin/claimstep.js", ROOT).pathname, "--version"], {
      encoding: "utf8",
    });
    expect(stdout).toBe(`claimstep ${version}\n`);
  }, 30_000);
});
