// A generated set served by the msw fake API server (test/fake-apiserver), and the direct
// adapters (KubeClient, KubeReader, KubeWriter) pointed at it, as the Worker and the Node server
// wire them.
import { setupServer } from "msw/node";
import { KubeClient } from "../adapters/kube/client.js";
import { KubeReader } from "../adapters/kube/reader.js";
import { KubeWriter } from "../adapters/kube/writer.js";
import { createFakeApiServer, type FakeApiServer, type KubeObject } from "../test/fake-apiserver/index.js";
import { generateCluster, type GeneratedCluster, type SetShape } from "./generate.js";

export const FAKE_URL = "https://kube.bench.test:6443";
export const FAKE_TOKEN = "bench-token-0123456789abcdef";

/** The generated objects with their kinds, as the fake API server stores them. */
export function seedObjects(c: GeneratedCluster): KubeObject[] {
  const kinded = (kind: string, apiVersion: string, items: object[]) => items.map((o) => ({ kind, apiVersion, ...structuredClone(o) }) as KubeObject);
  return [
    ...kinded("StatefulSet", "apps/v1", [c.statefulSet]),
    ...kinded("Pod", "v1", c.pods),
    ...kinded("PersistentVolumeClaim", "v1", c.claims),
    ...kinded("StorageClass", "storage.k8s.io/v1", c.storageClasses),
  ];
}

/** A fake API server holding one generated set (VolumeAttributesClass API not served, as in v1.24). */
export function fakeWith(shape: SetShape): FakeApiServer {
  return createFakeApiServer({
    baseUrl: FAKE_URL,
    token: FAKE_TOKEN,
    objects: seedObjects(generateCluster(shape)),
    volumeAttributesClassVersions: [],
  });
}

/** Route the global fetch to the fake through msw while `run` runs. */
export async function withMsw<T>(fake: FakeApiServer, run: () => Promise<T>): Promise<T> {
  const server = setupServer(...fake.handlers);
  server.listen({ onUnhandledRequest: "error" });
  try {
    return await run();
  } finally {
    server.close();
  }
}

/** The direct adapters over the global fetch, as functions/wiring.ts builds them. */
export function directAdapters() {
  const client = new KubeClient({ server: FAKE_URL, headers: { Authorization: `Bearer ${FAKE_TOKEN}` } });
  return { client, reader: new KubeReader(client), writer: new KubeWriter(client, { reportingInstance: "claimstep-bench" }) };
}
