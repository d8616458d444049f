#!/usr/bin/env node
// The claimstep command, installed as `claimstep`, as `kubectl-claimstep` (so that
// `kubectl claimstep …` runs it as a kubectl plugin, its help saying `kubectl claimstep`) and as
// `kubectl_complete-claimstep` (what kubectl ≥ 1.26 runs to complete `kubectl claimstep <TAB>`);
// which one ran is argv[1]'s name (functions/cli/program.ts).
// - Installed package: runs the compiled CLI, dist/functions/cli.js (`npm run build`, run by
//   `npm pack` through prepack). Nothing but the package's dependencies is loaded.
// - Clone (the TypeScript sources are next to this file): runs the sources through tsx, a dev
//   dependency installed by `npm ci`, so an edit needs no rebuild and a dist/ left over from an
//   earlier build is never run by mistake. Without tsx it runs dist/ if it was built.
import { existsSync } from "node:fs";

const here = (path) => new URL(path, import.meta.url);

async function sourceEntry() {
  if (!existsSync(here("../functions/cli.ts"))) return undefined;
  let api;
  try {
    api = await import("tsx/esm/api");
  } catch (err) {
    if (err?.code === "ERR_MODULE_NOT_FOUND") return undefined;
    throw err;
  }
  api.register();
  return here("../functions/cli.ts").href;
}

const compiled = here("../dist/functions/cli.js");
const entry = (await sourceEntry()) ?? (existsSync(compiled) ? compiled.href : undefined);
if (!entry) {
  process.stderr.write(
    "claimstep: neither the compiled CLI (dist/functions/cli.js) nor tsx to run the TypeScript sources was found.\n" +
      "In a clone of the repository run `npm ci` (installs tsx), or `npm run build` (compiles dist/).\n",
  );
  process.exit(1);
}
const { main, processInterrupts } = await import(entry);
process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  invokedAs: process.argv[1],
  // Ctrl-C or SIGTERM during run or finalize: it says where the set stands and exits 130 or 143.
  interrupts: processInterrupts(),
});
