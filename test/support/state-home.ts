// `--cluster sim` keeps its cluster under $XDG_STATE_HOME (functions/cli/sim-target.ts): each test
// file gets a directory of its own, removed after it, so that no command a test runs or spawns
// reads or writes the simulated clusters of the person running the tests.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

const home = mkdtempSync(join(tmpdir(), "claimstep-test-state-"));
process.env.XDG_STATE_HOME = home;
afterAll(() => rmSync(home, { recursive: true, force: true }));
