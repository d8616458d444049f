import { configDefaults, defineConfig } from "vitest/config";

// A state directory of its own per test file, for the simulated clusters `--cluster sim` keeps.
const setupFiles = ["test/support/state-home.ts"];

/**
 * Files under test/adapters/ that start processes, real binaries (the CLI, Prometheus) or servers
 * on sockets rather than run in-process (msw intercepts fetch in-process: it stays): they belong to the `process` tier, so that `npm run test:fast` stays pure
 * and in-process. test/tiers.test.ts fails on a test file in no tier or in two.
 */
const ADAPTER_PROCESS_FILES = [
  "test/adapters/kube-node/**/*.test.ts",
  "test/adapters/sim/demo.test.ts",
  "test/adapters/sim/demo-autogrow.test.ts",
  "test/adapters/sim/kubelet-metrics.test.ts",
  "test/adapters/metrics/prometheus.real.test.ts",
];

// The tiers (issue 38): `core` (pure, seconds), `adapters` (in-process: the simulated cluster,
// the clients against fakes), `property` (the invariants over random rollouts), `process` (spawned
// CLI, servers on sockets, workerd, Chromium, Prometheus, the docs' commands), then the real
// control plane (`e2e`) and the real node (`storage`). `npm run test:fast` = core + adapters;
// `npm test` = all of them (what CI runs). Timings: docs/architecture.md "Tests".
//
// The first four run together, two files at a time on CI's 2 cores (Vitest's default is cores − 1
// = 1; many files wait on child processes, browsers and workerd rather than compute). Vitest
// requires one maxWorkers per group.
const inProcess = { setupFiles, testTimeout: 30_000, maxWorkers: 2, sequence: { groupOrder: 0 } };

export default defineConfig({
  test: {
    projects: [
      { extends: true, test: { name: "core", include: ["test/core/**/*.test.ts"], ...inProcess } },
      {
        extends: true,
        test: {
          name: "adapters",
          include: ["test/adapters/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...ADAPTER_PROCESS_FILES],
          ...inProcess,
        },
      },
      { extends: true, test: { name: "property", include: ["test/property/**/*.test.ts"], ...inProcess } },
      {
        extends: true,
        test: {
          name: "process",
          include: [
            "test/*.test.ts",
            "test/functions/**/*.test.ts",
            "test/deploy/**/*.test.ts",
            "test/docs/**/*.test.ts",
            "test/bench/**/*.test.ts",
            ...ADAPTER_PROCESS_FILES,
          ],
          ...inProcess,
        },
      },
      {
        // Against a real control plane (test/e2e/support/global-setup.ts): started once for the run
        // when CLAIMSTEP_KUBE_ASSETS (or CLAIMSTEP_E2E_KUBECONFIG) is set, skipped otherwise.
        extends: true,
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/e2e/storage/**"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          setupFiles,
          globalSetup: ["test/e2e/support/global-setup.ts"],
          // One file at a time: the files share one API server, etcd and controller manager on a
          // 2-core machine, their scenarios wait on real controllers, and claimstep's cluster-scoped
          // requests in the audit log cannot be told apart between files running together.
          fileParallelism: false,
          // After the in-process and process tiers, not beside them: its scenarios wait on real controllers, which a
          // CPU-bound suite on the same 2 cores would slow past their timeouts.
          sequence: { groupOrder: 1 },
        },
      },
      {
        // Against a real node (test/e2e/support/real-node-setup.ts, issue 34): kubelet, containerd,
        // the CSI hostpath driver, external-resizer and provisioner, scheduler, with real pods and
        // volumes; started once for the run when CLAIMSTEP_NODE_ASSETS is set (root), skipped otherwise.
        extends: true,
        test: {
          name: "storage",
          include: ["test/e2e/storage/**/*.test.ts"],
          testTimeout: 300_000,
          hookTimeout: 180_000,
          setupFiles,
          globalSetup: ["test/e2e/support/real-node-setup.ts"],
          // One node, one file at a time (the kubelet's cgroups are host-wide; one cluster per host).
          fileParallelism: false,
          // After the control-plane suite: the two clusters never run at once.
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
