import { configDefaults, defineConfig } from "vitest/config";

// A state directory of its own per test file, for the simulated clusters `--cluster sim` keeps.
const setupFiles = ["test/support/state-home.ts"];

export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/e2e/**"],
          testTimeout: 30_000,
          setupFiles,
          // Two files at a time on CI's 2 cores (Vitest's default is cores − 1 = 1): many files wait on
          // child processes, browsers and workerd rather than compute. 488 s → 320 s for this project.
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
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
          // After the unit project, not beside it: its scenarios wait on real controllers, which a
          // CPU-bound unit suite on the same 2 cores would slow past their timeouts.
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
