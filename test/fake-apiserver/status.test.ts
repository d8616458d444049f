// The fake answers like the captured API server: same codes, same Status bodies.
import { describe, expect, it } from "vitest";
import { capturedCluster, createFakeApiServer, fixture, type KubeObject } from "./index.js";

const BASE = "https://kube.test:6443";
const fake = (extra: Partial<Parameters<typeof createFakeApiServer>[0]> = {}) =>
  createFakeApiServer({ baseUrl: BASE, objects: capturedCluster(), ...extra });

async function call(f: ReturnType<typeof createFakeApiServer>, method: string, path: string, body?: unknown, contentType = "application/json", headers: Record<string, string> = {}) {
  const res = await f.handle(
    new Request(`${BASE}${path}`, {
      method,
      headers: { ...(body !== undefined ? { "Content-Type": contentType } : {}), ...headers },
      ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
    }),
  );
  return { code: res.status, body: (await res.json()) as any, headers: res.headers };
}

const PVC = "/api/v1/namespaces/default/persistentvolumeclaims";
const applyBody = (name: string, storage: string, labels: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: { name, namespace: "default", labels },
  spec: { resources: { requests: { storage } } },
});

describe("fake API server answers as captured", () => {
  it("GET of a stored object is the object as captured", async () => {
    const r = await call(fake(), "GET", "/apis/apps/v1/namespaces/default/statefulsets/web");
    expect(r).toMatchObject({ code: 200, body: fixture("statefulset-web").body });
  });

  it("LIST with labelSelector=app=web returns the captured items", async () => {
    for (const [path, name] of [
      ["/api/v1/namespaces/default/pods", "pod-list"],
      [PVC, "pvc-list"],
    ] as const) {
      const r = await call(fake(), "GET", `${path}?labelSelector=app%3Dweb`);
      expect(r.code).toBe(200);
      expect(r.body.kind).toBe(fixture(name).body.kind);
      expect(r.body.items).toEqual(fixture(name).body.items);
    }
    const sc = await call(fake(), "GET", "/apis/storage.k8s.io/v1/storageclasses");
    expect(sc.body.items).toEqual(fixture("storageclass-list").body.items);
  });

  it("GET of a missing StatefulSet: statefulset-not-found", async () => {
    const r = await call(fake(), "GET", "/apis/apps/v1/namespaces/default/statefulsets/nope");
    expect(r).toEqual(expect.objectContaining(fixture("statefulset-not-found")));
  });

  it("a wrong bearer token: unauthorized", async () => {
    const r = await call(fake({ token: "right" }), "GET", "/api/v1/namespaces/default/pods", undefined, "", { Authorization: "Bearer wrong" });
    expect({ code: r.code, body: r.body }).toEqual(fixture("unauthorized"));
  });

  it("a user without RBAC: forbidden", async () => {
    const r = await call(fake({ user: "stepper", rules: [] }), "GET", "/api/v1/namespaces/default/pods");
    expect({ code: r.code, body: r.body }).toEqual(fixture("forbidden"));
  });

  it("apply without force over kube-controller-manager's storage: pvc-apply-conflict", async () => {
    const r = await call(fake(), "PATCH", `${PVC}/data-web-2?fieldManager=claimstep`, applyBody("data-web-2", "2Gi", { "claimstep.io/revision": "abc" }), "application/apply-patch+yaml");
    expect({ code: r.code, body: r.body }).toEqual(fixture("pvc-apply-conflict"));
  });

  it("apply with force takes the field: pvc-apply-ok", async () => {
    const r = await call(
      fake(),
      "PATCH",
      `${PVC}/data-web-2?fieldManager=claimstep&force=true`,
      applyBody("data-web-2", "2Gi", { "claimstep.io/revision": "abc" }),
      "application/apply-patch+yaml",
    );
    const ok = fixture("pvc-apply-ok").body;
    expect(r.code).toBe(200);
    expect(r.body.metadata.labels).toEqual(ok.metadata.labels);
    expect(r.body.spec).toEqual(ok.spec);
    expect(r.body.status).toEqual(ok.status);
  });

  it("lowering the request: pvc-shrink", async () => {
    const r = await call(fake(), "PATCH", `${PVC}/data-web-0`, { spec: { resources: { requests: { storage: "512Mi" } } } }, "application/merge-patch+json");
    expect({ code: r.code, body: r.body }).toEqual(fixture("pvc-shrink"));
  });

  it("a stale resourceVersion: pvc-patch-stale-rv", async () => {
    const r = await call(fake(), "PATCH", `${PVC}/data-web-0`, { metadata: { resourceVersion: "1", labels: { x: "y" } } }, "application/merge-patch+json");
    expect({ code: r.code, body: r.body }).toEqual(fixture("pvc-patch-stale-rv"));
  });

  it("expanding a claim whose class does not allow it: pvc-expand-not-allowed (admission)", async () => {
    const f = fake();
    const claim = structuredClone(capturedCluster().find((o) => o.metadata.name === "data-web-0")!) as any;
    claim.metadata = { name: "fixed-pvc", namespace: "default", uid: "u-fixed" };
    claim.spec.storageClassName = "fixed";
    f.seed(claim as KubeObject);
    const r = await call(f, "PATCH", `${PVC}/fixed-pvc?fieldManager=claimstep&force=true`, applyBody("fixed-pvc", "2Gi"), "application/apply-patch+yaml");
    expect({ code: r.code, body: r.body }).toEqual(fixture("pvc-expand-not-allowed"));
  });

  it("expanding an unbound claim and changing the class: spec immutable (422, same cause; the diff is approximated)", async () => {
    const f = fake();
    const pending = structuredClone(capturedCluster().find((o) => o.metadata.name === "data-web-0")!) as any;
    pending.metadata = { name: "pending-pvc", namespace: "default" };
    pending.spec = { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } }, storageClassName: "nosuch", volumeMode: "Filesystem" };
    pending.status = { phase: "Pending" };
    f.seed(pending as KubeObject);
    const cases = [
      { name: "pending-pvc", patch: { spec: { resources: { requests: { storage: "2Gi" } } } }, want: fixture("pvc-expand-unbound") },
      { name: "data-web-0", patch: { spec: { storageClassName: "fixed" } }, want: fixture("pvc-change-class") },
    ];
    for (const c of cases) {
      const r = await call(f, "PATCH", `${PVC}/${c.name}`, c.patch, "application/merge-patch+json");
      expect(r.code).toBe(c.want.code);
      expect(r.body.reason).toBe(c.want.body.reason);
      expect(r.body.details.name).toBe(c.want.body.details.name);
      expect(r.body.details.causes.map((x: any) => [x.reason, x.field])).toEqual(c.want.body.details.causes.map((x: any) => [x.reason, x.field]));
      const head = (m: string) => m.split("\n")[0];
      expect(head(r.body.message)).toBe(head(c.want.body.message));
    }
  });

  it("editing volumeClaimTemplates: sts-vct-update", async () => {
    const r = await call(
      fake(),
      "PATCH",
      "/apis/apps/v1/namespaces/default/statefulsets/web",
      { spec: { volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { resources: { requests: { storage: "2Gi" } } } }] } },
      "application/merge-patch+json",
    );
    expect({ code: r.code, body: r.body }).toEqual(fixture("sts-vct-update"));
  });

  it("an Event with generateName `web.` and no eventTime: event-create-invalid-generatename", async () => {
    const want = fixture("event-create-invalid-generatename");
    const created = fixture("event-create").body;
    const body = { apiVersion: "events.k8s.io/v1", kind: "Event", metadata: { generateName: "web." }, ...pick(created, ["reportingController", "reportingInstance", "action", "reason", "regarding", "note", "type"]) };
    const r = await call(fake(), "POST", "/apis/events.k8s.io/v1/namespaces/default/events", body);
    const generated = r.body.details.name as string;
    expect(generated).toMatch(/^web\.[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect({ code: r.code, body: r.body }).toEqual(JSON.parse(JSON.stringify(want).replaceAll("web.2klmn", generated)));
  });

  it("an Event with generateName `web-`: event-create", async () => {
    const want = fixture("event-create").body;
    const body = { apiVersion: "events.k8s.io/v1", kind: "Event", metadata: { generateName: "web-" }, ...pick(want, ["eventTime", "reportingController", "reportingInstance", "action", "reason", "regarding", "note", "type"]) };
    const r = await call(fake(), "POST", "/apis/events.k8s.io/v1/namespaces/default/events", body);
    expect(r.code).toBe(201);
    expect(r.body.metadata.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(pick(r.body, ["eventTime", "reportingController", "reportingInstance", "action", "reason", "regarding", "note", "type"])).toEqual(
      pick(want, ["eventTime", "reportingController", "reportingInstance", "action", "reason", "regarding", "note", "type"]),
    );
  });

  it("the same Lease twice: lease-create-1 then lease-create-2", async () => {
    const f = fake();
    const lease = { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name: "claimstep-web" }, spec: { holderIdentity: "a", leaseDurationSeconds: 30 } };
    const first = await call(f, "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", lease);
    expect(first.code).toBe(fixture("lease-create-1").code);
    expect(first.body.spec).toEqual(fixture("lease-create-1").body.spec);
    const second = await call(f, "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", lease);
    expect({ code: second.code, body: second.body }).toEqual(fixture("lease-create-2"));
  });

  it("DELETE with a wrong UID precondition: pod-delete-uid-mismatch", async () => {
    const r = await call(fake(), "DELETE", "/api/v1/namespaces/default/pods/web-0", { preconditions: { uid: "00000000-0000-0000-0000-000000000000" } });
    expect({ code: r.code, body: r.body }).toEqual(fixture("pod-delete-uid-mismatch"));
  });

  it("orphan DELETE of the StatefulSet: sts-delete-orphan, pods kept", async () => {
    const f = fake();
    const r = await call(f, "DELETE", "/apis/apps/v1/namespaces/default/statefulsets/web", {
      propagationPolicy: "Orphan",
      preconditions: { uid: "04e0f027-79c7-4e6f-9175-fc018c22d2cd" },
    });
    const want = fixture("sts-delete-orphan").body;
    expect(r.code).toBe(200);
    expect(r.body.metadata.finalizers).toEqual(want.metadata.finalizers);
    expect(r.body.metadata.deletionTimestamp).toBeTypeOf("string");
    expect(f.get("statefulsets", "default", "web")).toBeUndefined();
    expect(f.list("pods", "default")).toHaveLength(3);
  });
});

function pick(o: any, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
}
