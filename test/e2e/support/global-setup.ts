// vitest global setup of the e2e project: ONE real control plane for the whole run (or a
// connection to an existing cluster), provided to every test file; none without the variables.
import type { TestProject } from "vitest/node";
import {
  type ClusterInfo,
  type ControlPlane,
  clusterInfo,
  connectCluster,
  startControlPlane,
} from "./control-plane.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The cluster of the e2e project; null when the real-server suite is skipped. */
    claimstepE2E: ClusterInfo | null;
  }
}

export const SKIP_LINE =
  "claimstep: real-server suite skipped — set CLAIMSTEP_KUBE_ASSETS=<dir with kube-apiserver, kube-controller-manager> (etcd on PATH) as .ci/run does, or CLAIMSTEP_E2E_KUBECONFIG=<admin kubeconfig of a kind/k3d cluster>";

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const kubeconfig = process.env.CLAIMSTEP_E2E_KUBECONFIG;
  const assets = process.env.CLAIMSTEP_KUBE_ASSETS;
  if (!kubeconfig && !assets) {
    console.log(SKIP_LINE);
    project.provide("claimstepE2E", null);
    return undefined;
  }
  const verbose = process.env.CLAIMSTEP_E2E_VERBOSE === "1";
  const cp: ControlPlane = kubeconfig
    ? await connectCluster(kubeconfig)
    : await startControlPlane({
        assetsDir: assets!,
        ...(verbose ? { log: (l: string) => console.log(`claimstep e2e: ${l}`) } : {}),
      });
  project.provide("claimstepE2E", clusterInfo(cp));
  return async () => {
    await cp.stop();
  };
}
