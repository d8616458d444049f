// vitest global setup of the storage project: ONE real cluster with a real node and CSI storage
// for the whole run (real-node.ts), provided to every test file; none without the variable.
import type { TestProject } from "vitest/node";
import { clusterInfo } from "./control-plane.js";
// The ProvidedContext augmentation (claimstepE2E).
import type {} from "./global-setup.js";
import { realNodeUnavailable, startRealNode } from "./real-node.js";

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const assets = process.env.CLAIMSTEP_NODE_ASSETS;
  const why = realNodeUnavailable(assets);
  if (why) {
    console.log(
      `claimstep: real-storage suite skipped — ${why}. Set CLAIMSTEP_NODE_ASSETS=<dir with the kube, csi and node archives unpacked> as .ci/run does (root; Debian's containerd, runc, containernetworking-plugins, socat, etcd-server).`,
    );
    project.provide("claimstepE2E", null);
    return undefined;
  }
  const verbose = process.env.CLAIMSTEP_E2E_VERBOSE === "1";
  const cp = await startRealNode({
    assetsDir: assets!,
    ...(verbose ? { log: (l: string) => console.log(`claimstep e2e: ${l}`) } : {}),
  });
  console.log(
    `claimstep: real-storage suite on a real node, up in ${(cp.realNode.upMs / 1000).toFixed(1)} s: ${cp.realNode.versions.join("; ")}`,
  );
  project.provide("claimstepE2E", clusterInfo(cp));
  return async () => {
    await cp.stop();
  };
}
