// Shared set-up of the simulated-cluster tests: the fixtures' cluster (set `web`, classes `fast`
// and `fixed`) and the fixture bodies themselves.
import { expect } from "vitest";
import { ApiError } from "../../../adapters/api-error.js";
import { SimCluster, statefulSetManifest } from "../../../adapters/sim/cluster.js";
import type { SimClusterOptions } from "../../../adapters/sim/options.js";
import { fixtureJson, fixtureStatus } from "../../fixtures/apiserver.js";

/** A `.txt` fixture (test/fixtures/apiserver/): the body, then the HTTP code on the last line. */
export function fixture(name: string): { code: number; body: Record<string, unknown> } {
  const { code, body } = fixtureStatus(name);
  return { code, body: body as Record<string, unknown> };
}

export function jsonFixture(name: string): Record<string, unknown> {
  return fixtureJson<Record<string, unknown>>(name);
}

/** The ApiError a promise rejects with. */
export async function refusal(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error("expected the API server to refuse the request");
}

export function expectFixture(err: ApiError, name: string): void {
  const { code, body } = fixture(name);
  expect(err.code).toBe(code);
  expect(err.status).toEqual(body);
}

/** The cluster of the fixtures: StatefulSet `web` (3 replicas, template `data` 1Gi of class `fast`). */
export async function fixtureCluster(opts: SimClusterOptions = {}): Promise<SimCluster> {
  const cluster = new SimCluster({ volumeAttributesClasses: false, ...opts });
  await cluster.addStorageClass("fast", { allowVolumeExpansion: true });
  await cluster.addStorageClass("fixed", { allowVolumeExpansion: false });
  await cluster.createStatefulSet(
    statefulSetManifest({
      name: "web",
      replicas: 3,
      templates: [{ name: "data", storage: "1Gi", storageClassName: "fast" }],
    }),
  );
  return cluster;
}

/** A standalone claim, created the way `kubectl create` would. */
export async function createClaim(
  cluster: SimCluster,
  name: string,
  storageClassName: string,
  storage = "1Gi",
): Promise<void> {
  await cluster.admin.create(
    "persistentvolumeclaims",
    {
      metadata: { name, namespace: "default" },
      spec: {
        accessModes: ["ReadWriteOnce"],
        resources: { requests: { storage } },
        storageClassName,
        volumeMode: "Filesystem",
      },
      status: { phase: "Pending" },
    },
    { fieldManager: "kubectl-create" },
  );
  cluster.advance(5_000);
}
