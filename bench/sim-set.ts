// A generated set seeded into the simulated cluster (adapters/sim), whose HTTP handler answers
// every request, and the direct adapters (KubeClient, KubeReader, the direct writers) pointed at it the
// way the Worker and the Node server wire them.
import { setupServer } from "msw/node";
import { KubeClient, type KubeClientOptions } from "../adapters/kube/client.js";
import { KubeReader } from "../adapters/kube/reader.js";
import { kubeWriters } from "../adapters/kube/writer.js";
import { createSimServer, type KubeObject, type SimServer } from "../test/support/sim-server.js";
import { type GeneratedCluster, generateCluster, type SetShape } from "./generate.js";

export const SIM_URL = "https://kube.bench.test:6443";
export const SIM_TOKEN = "bench-token-0123456789abcdef";

/** The generated objects with their kinds, as the simulated cluster seeds them. */
export function seedObjects(c: GeneratedCluster): KubeObject[] {
  const kinded = (kind: string, apiVersion: string, items: object[]) =>
    items.map((o) => ({ kind, apiVersion, ...structuredClone(o) }) as KubeObject);
  return [
    ...kinded("StatefulSet", "apps/v1", [c.statefulSet]),
    ...kinded("Pod", "v1", c.pods),
    ...kinded("PersistentVolumeClaim", "v1", c.claims),
    ...kinded("StorageClass", "storage.k8s.io/v1", c.storageClasses),
  ];
}

/** A simulated cluster holding one generated set (VolumeAttributesClass API not served, as in v1.24). */
export function simWith(shape: SetShape): SimServer {
  return createSimServer({
    baseUrl: SIM_URL,
    token: SIM_TOKEN,
    objects: seedObjects(generateCluster(shape)),
    volumeAttributesClassVersions: [],
  });
}

/** Route the global fetch to the simulated cluster through msw while `run` runs. */
export async function withMsw<T>(sim: SimServer, run: () => Promise<T>): Promise<T> {
  const server = setupServer(...sim.handlers);
  server.listen({ onUnhandledRequest: "error" });
  try {
    return await run();
  } finally {
    server.close();
  }
}

/** The direct adapters over the global fetch, as functions/wiring.ts builds them. */
export function directAdapters(onRequest?: KubeClientOptions["onRequest"]) {
  const client = new KubeClient({
    server: SIM_URL,
    headers: { Authorization: `Bearer ${SIM_TOKEN}` },
    ...(onRequest ? { onRequest } : {}),
  });
  return {
    client,
    reader: new KubeReader(client),
    writers: kubeWriters(client, { reportingInstance: "claimstep-bench" }),
  };
}
