import { describe, expect, it } from "vitest";
import { ApiError } from "../../../adapters/api-error.js";
import { KubeClient } from "../../../adapters/kube/client.js";
import { eventName, fitNote, microTime } from "../../../adapters/kube/events.js";
import { KubeClaimWriter, KubeEventRecorder, KubeSetStatusWriter } from "../../../adapters/kube/writer.js";
import type { EventRecord, PatchClaim } from "../../../core/types.js";
import { statefulSetObjects, storageClassObjects, useSimServer } from "../../support/index.js";

const BASE = "https://kube.test";
const { fake } = useSimServer({ baseUrl: BASE });

const client = () => new KubeClient({ server: BASE, sleep: async () => {} });
const claims = () => new KubeClaimWriter(client());
const status = () => new KubeSetStatusWriter(client());
const recorder = () => new KubeEventRecorder(client(), { reportingInstance: "claimstep-7d9f" });
const web = { namespace: "default", name: "web" };
const action: PatchClaim = {
  type: "PatchClaim",
  namespace: "default",
  claim: "data-web-2",
  template: "data",
  ordinal: 2,
  storage: "2Gi",
  labels: { tier: "db", "claimstep.io/revision": "7b5b44c86f" },
  annotations: {},
};
const blocked: EventRecord = {
  type: "Warning",
  reason: "ExpansionNotAllowed",
  action: "Block",
  note: "data-web-2: class fixed does not allow expansion",
};
const at = (s: number) => new Date(Date.UTC(2026, 10, 30, 9, 6, s));

describe("KubeClaimWriter.apply", () => {
  it("server-side applies only claimstep's fields, forced, as claimstep", async () => {
    fake.seed(...statefulSetObjects(), ...storageClassObjects());
    expect(await claims().apply(action)).toEqual({
      kind: "applied",
      detail: "applied default/data-web-2: storage 2Gi",
    });
    const [req] = fake.http.requests();
    expect(req).toMatchObject({
      method: "PATCH",
      resource: "persistentvolumeclaims",
      namespace: "default",
      name: "data-web-2",
      contentType: "application/apply-patch+yaml",
    });
    expect(Object.fromEntries(req!.query)).toEqual({ fieldManager: "claimstep", force: "true" });
    expect(req!.body).toEqual({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: {
        name: "data-web-2",
        namespace: "default",
        labels: { tier: "db", "claimstep.io/revision": "7b5b44c86f" },
      },
      spec: { resources: { requests: { storage: "2Gi" } } },
    });
    const pvc: any = fake.get("persistentvolumeclaims", "default", "data-web-2");
    expect(pvc.spec.resources.requests.storage).toBe("2Gi");
    expect(pvc.metadata.labels).toEqual({ app: "web", tier: "db", "claimstep.io/revision": "7b5b44c86f" });
    expect(pvc.spec.accessModes).toEqual(["ReadWriteOnce"]);
  });

  it("carries volumeAttributesClassName and annotations when set", async () => {
    fake.seed(...statefulSetObjects(), ...storageClassObjects());
    const out = await claims().apply({
      ...action,
      storage: "1Gi",
      volumeAttributesClassName: "gold",
      annotations: { team: "payments" },
    });
    expect(out).toEqual({
      kind: "applied",
      detail: "applied default/data-web-2: storage 1Gi, volumeAttributesClassName gold",
    });
    const pvc: any = fake.get("persistentvolumeclaims", "default", "data-web-2");
    expect(pvc.spec.volumeAttributesClassName).toBe("gold");
    expect(pvc.metadata.annotations).toEqual({ team: "payments" });
  });

  it("throws the server's refusal as an ApiError (admission 403, with its words)", async () => {
    fake.seed(
      ...statefulSetObjects({ templates: [{ name: "data", storage: "1Gi", storageClassName: "fixed" }] }),
      ...storageClassObjects(),
    );
    const err = await claims()
      .apply(action)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 403, isAdmissionForbidden: true });
    expect((err as ApiError).message).toBe(
      'persistentvolumeclaims "data-web-2" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
    );
  });
});

describe("KubeSetStatusWriter.annotateSet", () => {
  it("merge-patches the annotations under the resourceVersion read", async () => {
    fake.seed(...statefulSetObjects());
    const rv = fake.get("statefulsets", "default", "web")!.metadata.resourceVersion as string;
    await status().annotateSet(web, { "claimstep.io/update-revision": "7b5b44c86f" }, rv);
    const [req] = fake.http.requests();
    expect(req).toMatchObject({
      contentType: "application/merge-patch+json",
      body: { metadata: { annotations: { "claimstep.io/update-revision": "7b5b44c86f" }, resourceVersion: rv } },
    });
    const set = fake.get("statefulsets", "default", "web")!;
    expect((set.metadata.annotations as Record<string, string>)["claimstep.io/update-revision"]).toBe("7b5b44c86f");
    expect((set.metadata.annotations as Record<string, string>)["claimstep.io/volume-claim-update-strategy"]).toBe(
      "InPlace",
    );
  });

  it("loses a race with a 409 and changes nothing", async () => {
    fake.seed(...statefulSetObjects());
    const err = await status()
      .annotateSet(web, { "claimstep.io/status": "{}" }, "1")
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "Conflict", isTransient: true });
    expect(
      (fake.get("statefulsets", "default", "web")!.metadata.annotations as Record<string, string>)[
        "claimstep.io/status"
      ],
    ).toBeUndefined();
    expect(fake.http.counters().total).toBe(1);
  });
});

describe("KubeEventRecorder.recordEvents", () => {
  it("creates a valid events.k8s.io/v1 Event with a deterministic name", async () => {
    fake.seed(...statefulSetObjects());
    await recorder().recordEvents(web, [blocked], at(17));
    const [event] = fake.events();
    expect(event).toMatchObject({
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name: eventName(web, blocked), namespace: "default" },
      eventTime: "2026-11-30T09:06:17.000000Z",
      reportingController: "claimstep.io/stepper",
      reportingInstance: "claimstep-7d9f",
      action: "Block",
      reason: "ExpansionNotAllowed",
      type: "Warning",
      note: blocked.note,
      regarding: { apiVersion: "apps/v1", kind: "StatefulSet", namespace: "default", name: "web" },
    });
    expect(event!.metadata.name).toMatch(/^web-[0-9a-f]{16}$/);
    expect(fake.http.counters().byRequest).toEqual({ "patch events": 1, "create events": 1 });
  });

  it("a set blocked for hours has one event with a growing count", async () => {
    fake.seed(...statefulSetObjects());
    const w = recorder();
    for (let tick = 0; tick < 5; tick++) await w.recordEvents(web, [blocked], at(tick * 10));
    const events = fake.events();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      eventTime: "2026-11-30T09:06:00.000000Z",
      series: { count: 5, lastObservedTime: "2026-11-30T09:06:40.000000Z" },
    });
    // First tick: a PATCH answered 404, then the create; every later tick: one PATCH.
    expect(fake.http.counters().byRequest).toEqual({ "patch events": 1 + 4, "create events": 1 });
  });

  it("a fresh writer (a new Worker invocation) continues the count with two requests and no read", async () => {
    fake.seed(...statefulSetObjects());
    await recorder().recordEvents(web, [blocked], at(0));
    await recorder().recordEvents(web, [blocked], at(1));
    await recorder().recordEvents(web, [blocked], at(2));
    expect(fake.events()[0]!.series).toEqual({ count: 3, lastObservedTime: "2026-11-30T09:06:02.000000Z" });
    expect(fake.http.counters().reads).toBe(0);
  });

  it("another invocation's count is never overwritten: a stale count is learned again", async () => {
    fake.seed(...statefulSetObjects());
    const a = recorder();
    await a.recordEvents(web, [blocked], at(0));
    await a.recordEvents(web, [blocked], at(1)); // a knows count 2
    await recorder().recordEvents(web, [blocked], at(2)); // someone else: 3
    await a.recordEvents(web, [blocked], at(3)); // a's count is stale: 409, learn, 4
    expect(fake.events()[0]!.series!).toMatchObject({ count: 4 });
  });

  it("recreates an event that expired (event TTL)", async () => {
    fake.seed(...statefulSetObjects());
    const w = recorder();
    await w.recordEvents(web, [blocked], at(0));
    await w.recordEvents(web, [blocked], at(1));
    fake.remove("events", "default", eventName(web, blocked));
    await w.recordEvents(web, [blocked], at(2));
    expect(fake.events()).toHaveLength(1);
    expect(fake.events()[0]).toMatchObject({ eventTime: "2026-11-30T09:06:02.000000Z" });
    expect(fake.events()[0]!.series).toBeUndefined();
  });

  it("different notes, reasons or sets are different events", async () => {
    fake.seed(...statefulSetObjects());
    const w = recorder();
    await w.recordEvents(web, [blocked, { ...blocked, note: "other" }, { ...blocked, reason: "QuotaExceeded" }], at(0));
    await w.recordEvents({ namespace: "default", name: "db" }, [blocked], at(0));
    expect(new Set(fake.events().map((e) => e.metadata.name)).size).toBe(4);
  });

  it("two invocations creating the same event at once: one event", async () => {
    fake.seed(...statefulSetObjects());
    await Promise.all([recorder().recordEvents(web, [blocked], at(0)), recorder().recordEvents(web, [blocked], at(0))]);
    expect(fake.events()).toHaveLength(1);
  });

  it("keeps names valid for long set names and notes within the API server's 1 KiB", async () => {
    const long = { namespace: "default", name: `${"a".repeat(240)}.b-c` };
    const name = eventName(long, blocked);
    expect(name.length).toBeLessThanOrEqual(253);
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
    const note = fitNote("é".repeat(2000));
    expect(new TextEncoder().encode(note).length).toBeLessThanOrEqual(1024);
    fake.seed(...statefulSetObjects());
    await recorder().recordEvents(web, [{ ...blocked, note: "x".repeat(5000) }], at(0));
    expect(fake.events()).toHaveLength(1);
  });

  it("writes MicroTime with six fractional digits", () => {
    expect(microTime(new Date("2026-11-30T09:06:17.123Z"))).toBe("2026-11-30T09:06:17.123000Z");
  });

  it("refuses a reportingInstance the API server would reject", () => {
    expect(
      () => new KubeEventRecorder(new KubeClient({ server: BASE }), { reportingInstance: "x".repeat(129) }),
    ).toThrow(/1 to 128 characters/);
  });
});
