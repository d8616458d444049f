#!/usr/bin/env node
// Launcher of the claimstep CLI: runs the TypeScript sources through tsx (installed by `npm ci`),
// so `npx claimstep` works from a checkout without a build step.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../functions/cli.ts");
process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
