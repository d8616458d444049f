// Whole rollouts: the planner and the direct adapter (runStep) against the fake API server,
// with the faults a real cluster throws at them. The fake's resizer stands in for the CSI driver.
import { describe, expect, it } from "vitest";
import { ApiError, PermissionError } from "../../../adapters/api-error.js";
import { KubeClient } from "../../../adapters/kube/client.js";
import { KubeReader } from "../../../adapters/kube/reader.js";
import { kubeWriters } from "../../../adapters/kube/writer.js";
import { runStep, type StepResult } from "../../../functions/step.js";
import {
  type SetScenario,
  statefulSetObjects,
  storageClassObjects,
  useSimServer,
  volumeAttributesClass,
} from "../../support/index.js";

const BASE = "https://kube.test:6443";
const { fake } = useSimServer({ baseUrl: BASE });

const web = { namespace: "default", name: "web" };
const GROW: SetScenario = { replicas: 3, desired: [{ name: "data", storage: "2Gi", storageClassName: "fast" }] };
const start = Date.UTC(2026, 10, 30, 10, 0, 0);

function adapter() {
  const waits: number[] = [];
  const client = new KubeClient({ server: BASE, sleep: async (ms) => void waits.push(ms) });
  return { reader: new KubeReader(client), writers: kubeWriters(client, { reportingInstance: "test" }), waits };
}

/** Step (with the resizer finishing between steps) until Complete or Blocked; `each` may inject faults before a step. */
async function rollout(each: (step: number) => void = () => {}, max = 30): Promise<StepResult[]> {
  const { reader, writers } = adapter();
  const results: StepResult[] = [];
  for (let step = 0; step < max; step++) {
    each(step);
    const result = await runStep({ reader, writers, ref: web, now: new Date(start + step * 60_000) });
    results.push(result);
    if (result.decision.phase === "Complete" || result.decision.phase === "Blocked") return results;
    fake.completeResizes();
  }
  throw new Error(`no Complete after ${max} steps: ${results.at(-1)?.decision.message}`);
}

const claim = (n: number): any => fake.get("persistentvolumeclaims", "default", `data-web-${n}`);
const setAnnotations = () => fake.get("statefulsets", "default", "web")!.metadata.annotations as Record<string, string>;
const appliedClaims = () =>
  fake.http
    .requests()
    .filter((r) => r.verb === "patch" && r.resource === "persistentvolumeclaims")
    .map((r) => r.name);

function expectComplete(results: StepResult[]) {
  const last = results.at(-1)!;
  expect(last.decision.phase).toBe("Complete");
  for (const n of [0, 1, 2]) {
    expect(claim(n).spec.resources.requests.storage).toBe("2Gi");
    expect(claim(n).status.capacity.storage).toBe("2Gi");
    expect(claim(n).metadata.labels["claimstep.io/revision"]).toBe(last.decision.revision);
  }
  expect(setAnnotations()["claimstep.io/current-revision"]).toBe(last.decision.revision);
  expect(fake.events().map((e) => e.reason)).toContain("RolloutComplete");
}

describe("a rollout through the direct adapter", () => {
  it("grows every claim, highest ordinal first, and a converged set then gets no write at all", async () => {
    fake.seed(...statefulSetObjects(GROW), ...storageClassObjects());
    const results = await rollout();
    expectComplete(results);
    expect(appliedClaims()).toEqual(["data-web-2", "data-web-1", "data-web-0"]);
    const { reader, writers } = adapter();
    fake.http.resetCounters();
    const again = await runStep({ reader, writers, ref: web, now: new Date(start + 3_600_000) });
    expect(again.decision.phase).toBe("Complete");
    expect(fake.http.counters().writes).toBe(0);
  });

  it("changes the VolumeAttributesClass of every claim (read from storage.k8s.io/v1)", async () => {
    const templates = [{ name: "data", storage: "1Gi", storageClassName: "fast", volumeAttributesClassName: "gold" }];
    fake.seed(
      ...statefulSetObjects({
        replicas: 3,
        templates,
        desired: [{ ...templates[0]!, volumeAttributesClassName: "platinum" }],
      }),
    );
    fake.seed(...storageClassObjects(), volumeAttributesClass("gold"), volumeAttributesClass("platinum"));
    const results = await rollout();
    expect(results.at(-1)!.decision.phase).toBe("Complete");
    for (const n of [0, 1, 2]) {
      expect(claim(n).spec.volumeAttributesClassName).toBe("platinum");
      expect(claim(n).status.currentVolumeAttributesClassName).toBe("platinum");
    }
    expect(appliedClaims()).toEqual(["data-web-2", "data-web-1", "data-web-0"]);
  });

  it("a VolumeAttributesClass the cluster does not have: Blocked before any write", async () => {
    fake.seed(
      ...statefulSetObjects({
        ...GROW,
        desired: [{ name: "data", storage: "1Gi", storageClassName: "fast", volumeAttributesClassName: "missing" }],
      }),
    );
    fake.seed(...storageClassObjects(), volumeAttributesClass("gold"));
    const results = await rollout();
    expect(results.at(-1)!.decision.phase).toBe("Blocked");
    expect(appliedClaims()).toEqual([]);
  });

  it("a 409 race on the StatefulSet: the claim write stands, the next step repairs the status", async () => {
    fake.seed(...statefulSetObjects(GROW), ...storageClassObjects());
    const results = await rollout((step) => {
      if (step === 0) {
        fake.http.beforeNext("patch statefulsets", () =>
          fake.update(
            "statefulsets",
            "default",
            "web",
            (o) => (o.metadata.annotations = { ...(o.metadata.annotations as object), "someone.else/touched": "yes" }),
          ),
        );
      }
    });
    expect(results[0]!.outcome).toEqual({ kind: "applied", detail: "applied default/data-web-2: storage 2Gi" });
    expect(claim(2).spec.resources.requests.storage).toBe("2Gi");
    expectComplete(results);
    expect(setAnnotations()["someone.else/touched"]).toBe("yes");
  });

  it("two invocations racing at every step still converge, and never write below the partition", async () => {
    fake.seed(...statefulSetObjects({ ...GROW, replicas: 4, partition: 1 }), ...storageClassObjects());
    const a = adapter();
    const b = adapter();
    let phase = "";
    for (let step = 0; step < 30 && phase !== "Complete"; step++) {
      const now = new Date(start + step * 60_000);
      const [x] = await Promise.all([runStep({ ...a, ref: web, now }), runStep({ ...b, ref: web, now })]);
      phase = x.decision.phase;
      fake.completeResizes();
    }
    expect(phase).toBe("Complete");
    expect(claim(0).spec.resources.requests.storage).toBe("1Gi");
    expect(new Set(appliedClaims())).toEqual(new Set(["data-web-3", "data-web-2", "data-web-1"]));
  });

  it("a 429 with Retry-After on a read is waited out and the step goes on", async () => {
    fake.seed(...statefulSetObjects(GROW), ...storageClassObjects());
    fake.http.failNext("list pods", { code: 429, retryAfterSeconds: 2 });
    const { reader, writers, waits } = adapter();
    const result = await runStep({ reader, writers, ref: web, now: new Date(start) });
    expect(waits).toEqual([2000]);
    expect(result.outcome.kind).toBe("applied");
  });

  it("a 429 on the claim write asking for longer than a step waits: retry later, nothing changed", async () => {
    fake.seed(...statefulSetObjects(GROW), ...storageClassObjects());
    const results = await rollout((step) => {
      if (step === 1) fake.http.failNext("patch persistentvolumeclaims", { code: 429, retryAfterSeconds: 60 });
    });
    expect(results[1]!.outcome).toMatchObject({
      kind: "retry",
      retryAfterSeconds: 60,
      error: { kind: "TooManyRequests" },
    });
    expect(appliedClaims()).toEqual(["data-web-2", "data-web-1", "data-web-1", "data-web-0"]);
    expectComplete(results);
  });

  it("a 500 mid-rollout: retried, then left to the next step, which continues", async () => {
    fake.seed(...statefulSetObjects(GROW), ...storageClassObjects());
    const before: string[] = [];
    const results = await rollout((step) => {
      if (step === 1) {
        fake.http.failNext("patch persistentvolumeclaims", { code: 500 }, 3);
        before.push(claim(1).spec.resources.requests.storage);
      }
    });
    expect(results[1]!.outcome).toMatchObject({ kind: "retry", error: { kind: "ServerError", code: 500 } });
    expect(before).toEqual(["1Gi"]);
    expect(results[2]!.outcome).toEqual({ kind: "applied", detail: "applied default/data-web-1: storage 2Gi" });
    expectComplete(results);
  });

  it("admission refuses the expansion (class changed under us): Blocked/ExpansionNotAllowed with the server's message", async () => {
    fake.seed(...statefulSetObjects(GROW), ...storageClassObjects());
    fake.http.beforeNext("patch persistentvolumeclaims", () =>
      fake.update("storageclasses", undefined, "fast", (o) => (o.allowVolumeExpansion = false)),
    );
    const results = await rollout();
    const d = results.at(-1)!.decision;
    expect(d).toMatchObject({ phase: "Blocked", reason: "ExpansionNotAllowed" });
    expect(d.message).toContain(
      'persistentvolumeclaims "data-web-2" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
    );
    expect(claim(2).spec.resources.requests.storage).toBe("1Gi");
    expect(JSON.parse(setAnnotations()["claimstep.io/status"]!)).toMatchObject({
      phase: "Blocked",
      reason: "ExpansionNotAllowed",
    });
    expect(fake.events()).toEqual([
      expect.objectContaining({ type: "Warning", reason: "ExpansionNotAllowed", note: d.message }),
    ]);
  });

  it("a ResourceQuota refuses it: Blocked/QuotaExceeded with the server's message", async () => {
    fake.seed(...statefulSetObjects(GROW), ...storageClassObjects(), {
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "storage", namespace: "default" },
      spec: { hard: { "requests.storage": "4Gi" } },
    });
    const results = await rollout();
    const d = results.at(-1)!.decision;
    expect(d).toMatchObject({ phase: "Blocked", reason: "QuotaExceeded" });
    expect(d.message).toContain(
      'persistentvolumeclaims "data-web-1" is forbidden: exceeded quota: storage, requested: requests.storage=1Gi, used: requests.storage=4Gi, limited: requests.storage=4Gi',
    );
    expect(claim(2).spec.resources.requests.storage).toBe("2Gi");
    expect(claim(1).spec.resources.requests.storage).toBe("1Gi");
  });

  it("a blocked set stepped for hours keeps one event with a growing count", async () => {
    fake.seed(
      ...statefulSetObjects({
        ...GROW,
        templates: [{ name: "data", storage: "1Gi", storageClassName: "fixed" }],
        desired: [{ name: "data", storage: "2Gi", storageClassName: "fixed" }],
      }),
    );
    fake.seed(...storageClassObjects());
    for (let tick = 0; tick < 6; tick++) {
      const { reader, writers } = adapter(); // a fresh invocation each tick, as on Workers
      const r = await runStep({ reader, writers, ref: web, now: new Date(start + tick * 3_600_000) });
      expect(r.decision).toMatchObject({ phase: "Blocked", reason: "ExpansionNotAllowed" });
    }
    expect(fake.events()).toHaveLength(1);
    expect(fake.events()[0]).toMatchObject({ reason: "ExpansionNotAllowed", series: { count: 6 } });
  });

  it("RBAC refuses the claim write: a PermissionError naming verb and resource, nothing written", async () => {
    fake.seed(...statefulSetObjects(GROW), ...storageClassObjects());
    fake.http.deny("patch", "persistentvolumeclaims");
    const { reader, writers } = adapter();
    const err = await runStep({ reader, writers, ref: web, now: new Date(start) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermissionError);
    expect((err as Error).message).toBe(
      'missing permission: patch persistentvolumeclaims default/data-web-2: persistentvolumeclaims "data-web-2" is forbidden: User "system:serviceaccount:claimstep:claimstep" cannot patch resource "persistentvolumeclaims" in API group "" in the namespace "default". Grant it in the claimstep ClusterRole (deploy/kubernetes/rbac.yaml; re-creating sets needs the claimstep-finalize one, rbac-finalize.yaml).',
    );
    expect(fake.http.counters().writes).toBe(1);
  });

  it("RBAC refuses a read: the error names verb, resource and namespace", async () => {
    fake.seed(...statefulSetObjects(GROW), ...storageClassObjects());
    fake.http.deny("list", "pods");
    const { reader, writers } = adapter();
    const err = await runStep({ reader, writers, ref: web, now: new Date(start) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermissionError);
    expect((err as PermissionError).cause).toMatchObject({ code: 403 });
    expect((err as Error).message).toMatch(
      /^missing permission: list pods in default: pods is forbidden: User "system:serviceaccount:claimstep:claimstep" cannot list resource "pods"/,
    );
    expect(fake.http.counters().writes).toBe(0);
  });

  it("a missing StatefulSet: a NotFound naming namespace and name, nothing written", async () => {
    const { reader, writers } = adapter();
    const err = await runStep({
      reader,
      writers,
      ref: { namespace: "shop", name: "orders" },
      now: new Date(start),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toMatch(/^StatefulSet shop\/orders not found \(/);
    expect(fake.http.counters()).toMatchObject({ total: 2, writes: 0 }); // the set, and the re-create record that is not there either
  });
});
