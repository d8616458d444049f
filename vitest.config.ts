import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    // `--cluster sim` keeps its cluster under $XDG_STATE_HOME: a command a test runs (or spawns)
    // never reads or writes the state of the person running the tests.
    env: { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), "claimstep-test-state-")) },
  },
});
