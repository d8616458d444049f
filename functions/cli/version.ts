// `claimstep version` and `claimstep --version`: the version of the package, read from its
// package.json at run time (functions/cli/ in a clone, dist/functions/cli/ in the installed package).
import { readFileSync } from "node:fs";
import type { Context } from "./context.js";
import { EXIT } from "./exit-codes.js";

/** The version in the nearest package.json named claimstep above this file; "unknown" if none. */
export function packageVersion(from: URL = new URL(".", import.meta.url)): string {
  for (let dir = from; ; ) {
    try {
      const pkg = JSON.parse(readFileSync(new URL("package.json", dir), "utf8")) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === "claimstep" && typeof pkg.version === "string") return pkg.version;
    } catch {
      // No package.json here (or not JSON): look further up.
    }
    const up = new URL("..", dir);
    if (up.href === dir.href) return "unknown";
    dir = up;
  }
}

export async function version(ctx: Context): Promise<number> {
  const v = packageVersion();
  ctx.io.stdout.write(ctx.json ? `${JSON.stringify({ name: "claimstep", version: v })}\n` : `claimstep ${v}\n`);
  return EXIT.ok;
}
