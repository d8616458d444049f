import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    // A state directory of its own per test file, for the simulated clusters `--cluster sim` keeps.
    setupFiles: ["test/support/state-home.ts"],
  },
});
