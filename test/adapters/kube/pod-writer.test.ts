// The pod side of the direct writer over HTTP (docs/design.md "Pods"): the partition merge patch
// with its resourceVersion precondition and the user-partition record in the same request, and
// the policy/v1 Eviction with a uid precondition — answered as the captured API server answers.
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../adapters/api-error.js";
import { KubeClient } from "../../../adapters/kube/client.js";
import { KubePodWriter } from "../../../adapters/kube/writer.js";
import type { EvictPod, PatchPartition } from "../../../core/types.js";
import { fixtureStatus } from "../../fixtures/apiserver.js";
import { statefulSetObjects, storageClassObjects, useSimServer } from "../../support/index.js";

const BASE = "https://kube.test";
const { fake } = useSimServer({ baseUrl: BASE });
const pods = () => new KubePodWriter(new KubeClient({ server: BASE, sleep: async () => {} }));

const seeded = () => {
  fake.seed(...statefulSetObjects(), ...storageClassObjects());
  fake.advance(60_000);
  return fake.get("statefulsets", "default", "web")!;
};

const partition = (set: any, p: Partial<PatchPartition> = {}): PatchPartition => ({
  type: "PatchPartition",
  namespace: "default",
  set: "web",
  partition: 3,
  from: 0,
  userPartition: 0,
  resourceVersion: set.metadata.resourceVersion!,
  ...p,
});

describe("KubePodWriter.patchPartition", () => {
  it("merge-patches the partition, the record and the step's annotations in one request under the resourceVersion read", async () => {
    const set = seeded();
    fake.http.resetCounters();
    const outcome = await pods().patchPartition(partition(set), { "claimstep.io/status": "{}" });
    expect(outcome).toEqual({ kind: "applied", detail: "patched default/web: partition 0 → 3" });
    const [req, ...rest] = fake.http.requests();
    expect(rest).toEqual([]);
    expect(req).toMatchObject({
      method: "PATCH",
      resource: "statefulsets",
      name: "web",
      contentType: "application/merge-patch+json",
    });
    expect(req!.body).toEqual({
      metadata: {
        resourceVersion: set.metadata.resourceVersion,
        annotations: { "claimstep.io/status": "{}", "claimstep.io/user-partition": "0" },
      },
      spec: { updateStrategy: { rollingUpdate: { partition: 3 } } },
    });
    const after = fake.get("statefulsets", "default", "web")!;
    expect(after.spec.updateStrategy.rollingUpdate.partition).toBe(3);
    expect(after.metadata.annotations["claimstep.io/user-partition"]).toBe("0");
  });

  it("removes the record on restore (null in the merge patch)", async () => {
    const set = seeded();
    await pods().patchPartition(partition(set), undefined);
    const held = fake.get("statefulsets", "default", "web")!;
    await pods().patchPartition(partition(held, { partition: 0, from: 3, userPartition: null }), undefined);
    const after = fake.get("statefulsets", "default", "web")!;
    expect(after.spec.updateStrategy.rollingUpdate.partition).toBe(0);
    expect(after.metadata.annotations).not.toHaveProperty("claimstep.io/user-partition");
  });

  it("loses a race with the server's own 409 (sts-partition-patch-stale-rv.txt), changing nothing, and is not resent", async () => {
    const set = seeded();
    await pods().patchPartition(partition(set), undefined);
    fake.http.resetCounters();
    const err = await pods()
      .patchPartition(partition(set, { partition: 2, from: 3 }), undefined)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toEqual(fixtureStatus("sts-partition-patch-stale-rv.txt").body);
    expect((err as ApiError).isTransient).toBe(true);
    expect(fake.http.requests()).toHaveLength(1);
    expect(fake.get("statefulsets", "default", "web")!.spec.updateStrategy.rollingUpdate.partition).toBe(3);
  });
});

const eviction = (pod: any): EvictPod => ({
  type: "EvictPod",
  namespace: "default",
  pod: "web-2",
  uid: pod.metadata.uid!,
  ordinal: 2,
  claim: "data-web-2",
});

describe("KubePodWriter.evict", () => {
  it("POSTs a policy/v1 Eviction with the pod's uid as precondition; the pod is re-created with a new uid", async () => {
    seeded();
    const pod = fake.get("pods", "default", "web-2")!;
    fake.http.resetCounters();
    expect(await pods().evict(eviction(pod))).toEqual({
      kind: "applied",
      detail: `evicted default/web-2 (uid ${pod.metadata.uid})`,
    });
    const [req] = fake.http.requests();
    expect(req).toMatchObject({ method: "POST", resource: "pods", subresource: "eviction", name: "web-2" });
    expect(req!.body).toEqual({
      apiVersion: "policy/v1",
      kind: "Eviction",
      metadata: { name: "web-2", namespace: "default" },
      deleteOptions: { preconditions: { uid: pod.metadata.uid } },
    });
    fake.settle();
    expect(fake.get("pods", "default", "web-2")!.metadata.uid).not.toBe(pod.metadata.uid);
  });

  it("a budget's 429 is an answer (the budget's words), not a fault, and is not resent", async () => {
    seeded();
    await fake.addPodDisruptionBudget("default", "web", { minAvailable: 3, matchLabels: { app: "web" } });
    const pod = fake.get("pods", "default", "web-2")!;
    fake.http.resetCounters();
    expect(await pods().evict(eviction(pod))).toEqual({
      kind: "budget",
      message: "The disruption budget web needs 3 healthy pods and has 3 currently",
    });
    expect(fake.http.requests()).toHaveLength(1);
    expect(fake.get("pods", "default", "web-2")!.metadata.uid).toBe(pod.metadata.uid);
  });

  it("a stale uid is the server's 409 (pod-evict-uid-mismatch.txt): the pod was replaced; nothing evicted", async () => {
    seeded();
    const pod = fake.get("pods", "default", "web-2")!;
    const err = await pods()
      .evict({ ...eviction(pod), uid: "00000000-0000-0000-0000-000000000000" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(409);
    expect((err as ApiError).isTransient).toBe(true);
    expect(fake.get("pods", "default", "web-2")!.metadata.uid).toBe(pod.metadata.uid);
  });
});
