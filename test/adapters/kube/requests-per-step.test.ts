// Requests per step, counted by the fake API server: constant in the replica count.
import { describe, expect, it } from "vitest";
import { KubeClient } from "../../../adapters/kube/client.js";
import { KubeReader } from "../../../adapters/kube/reader.js";
import { kubeWriters } from "../../../adapters/kube/writer.js";
import { runStep } from "../../../functions/step.js";
import {
  type Counters,
  statefulSetObjects,
  storageClassObjects,
  type TemplateSpec,
  useSimServer,
  volumeAttributesClass,
} from "../../support/index.js";

const BASE = "https://kube.test";
const { fake } = useSimServer({ baseUrl: BASE });

const web = { namespace: "default", name: "web" };

/** byRequest of each kind of step: the first (claim write), one waiting on the resize, the next claim, and a converged one. */
async function measure(replicas: number, desired: TemplateSpec[]): Promise<Record<string, Counters>> {
  fake.reset();
  fake.seed(...statefulSetObjects({ replicas, desired }), ...storageClassObjects(), volumeAttributesClass("gold"));
  const client = new KubeClient({ server: BASE });
  const reader = new KubeReader(client);
  const writers = kubeWriters(client);
  const t0 = Date.UTC(2026, 10, 30, 10);
  const step = async (name: string, minute: number) => {
    fake.http.resetCounters();
    const r = await runStep({ reader, writers, ref: web, now: new Date(t0 + minute * 60_000) });
    return [name, { ...fake.http.counters(), phase: r.decision.phase }] as const;
  };
  const out = [await step("first claim", 0), await step("waiting", 1), await step("waiting again", 2)];
  fake.completeResizes();
  out.push(await step("next claim", 3));
  // Converge: every claim at the revision and ready.
  for (const c of fake.list("persistentvolumeclaims", "default")) {
    fake.update("persistentvolumeclaims", "default", c.metadata.name, (o: any) => {
      o.metadata.labels["claimstep.io/revision"] = (
        fake.get("statefulsets", "default", "web")!.metadata.annotations as any
      )["claimstep.io/update-revision"];
      o.spec.resources.requests.storage = desired[0]!.storage;
      if (desired[0]!.volumeAttributesClassName)
        o.spec.volumeAttributesClassName = desired[0]!.volumeAttributesClassName;
    });
  }
  fake.completeResizes();
  out.push(await step("completing", 4), await step("converged", 5));
  return Object.fromEntries(out);
}

const claimWrites = (c: Counters) => c.byRequest["patch persistentvolumeclaims"] ?? 0;
const setWrites = (c: Counters) => c.byRequest["patch statefulsets"] ?? 0;

describe("requests per step", () => {
  it("are the same at 10 and at 1,000 replicas: ≤ 5 reads, ≤ 1 claim write, ≤ 1 set write, plus events", async () => {
    const grow: TemplateSpec[] = [{ name: "data", storage: "2Gi", storageClassName: "fast" }];
    const small = await measure(10, grow);
    const large = await measure(1000, grow);
    expect(large).toEqual(small);
    for (const [name, c] of Object.entries(large)) {
      expect(c.reads, name).toBeLessThanOrEqual(5);
      expect(claimWrites(c), name).toBeLessThanOrEqual(1);
      expect(setWrites(c), name).toBeLessThanOrEqual(1);
    }
    expect(large["first claim"]!.byRequest).toEqual({
      "get statefulsets": 1,
      "get configmaps": 1,
      "list pods": 1,
      "list persistentvolumeclaims": 1,
      "list storageclasses": 1,
      "patch persistentvolumeclaims": 1,
      "patch statefulsets": 1,
      "patch events": 1,
      "create events": 1,
    });
    expect(large["waiting again"]!.byRequest).toEqual({
      "get statefulsets": 1,
      "get configmaps": 1,
      "list pods": 1,
      "list persistentvolumeclaims": 1,
      "list storageclasses": 1,
      "patch events": 1,
    });
    expect(large.converged!.byRequest).toEqual({
      "get statefulsets": 1,
      "get configmaps": 1,
      "list pods": 1,
      "list persistentvolumeclaims": 1,
      "list storageclasses": 1,
    });
  });

  it("3 claim templates at 1,000 replicas (3,000 claims) still list the claims in one request", async () => {
    const templates: TemplateSpec[] = ["data", "wal", "logs"].map((name) => ({
      name,
      storage: "1Gi",
      storageClassName: "fast",
    }));
    fake.reset();
    fake.seed(
      ...statefulSetObjects({ replicas: 1000, templates, desired: templates.map((t) => ({ ...t, storage: "2Gi" })) }),
      ...storageClassObjects(),
    );
    const client = new KubeClient({ server: BASE });
    await runStep({
      reader: new KubeReader(client),
      writers: kubeWriters(client),
      ref: web,
      now: new Date(Date.UTC(2026, 10, 30, 10)),
    });
    expect(fake.http.counters().reads).toBe(5);
    expect(fake.http.counters().byRequest["list persistentvolumeclaims"]).toBe(1);
  });

  it("a template naming a VolumeAttributesClass adds one read", async () => {
    const vac: TemplateSpec[] = [
      { name: "data", storage: "1Gi", storageClassName: "fast", volumeAttributesClassName: "gold" },
    ];
    const small = await measure(10, vac);
    const large = await measure(1000, vac);
    expect(large).toEqual(small);
    for (const c of Object.values(large)) expect(c.reads).toBe(6);
  });
});
