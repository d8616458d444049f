// The simulated API server answers exactly like the captured real one (fixtures/apiserver/).
import { describe, expect, it } from "vitest";
import { createClaim, expectFixture, fixture, fixtureCluster, jsonFixture, refusal } from "./helpers.js";

const ns = "default";

describe("the simulated API server answers like fixtures/apiserver/", () => {
  it("refuses a shrink with pvc-shrink.txt", async () => {
    const c = await fixtureCluster();
    const err = await refusal(
      c.admin.mergePatch(
        "persistentvolumeclaims",
        ns,
        "data-web-0",
        { spec: { resources: { requests: { storage: "500Mi" } } } },
        { fieldManager: "kubectl" },
      ),
    );
    expectFixture(err, "pvc-shrink.txt");
  });

  it("refuses a class change with pvc-change-class.txt, go-cmp diff included", async () => {
    const c = await fixtureCluster();
    const err = await refusal(
      c.admin.mergePatch(
        "persistentvolumeclaims",
        ns,
        "data-web-0",
        { spec: { storageClassName: "fixed" } },
        { fieldManager: "kubectl" },
      ),
    );
    expectFixture(err, "pvc-change-class.txt");
  });

  it("refuses expanding an unbound claim with pvc-expand-unbound.txt", async () => {
    const c = await fixtureCluster();
    await createClaim(c, "pending-pvc", "nosuch");
    expect((await c.admin.get("persistentvolumeclaims", ns, "pending-pvc")).status).toEqual({ phase: "Pending" });
    const err = await refusal(
      c.admin.mergePatch(
        "persistentvolumeclaims",
        ns,
        "pending-pvc",
        { spec: { resources: { requests: { storage: "2Gi" } } } },
        { fieldManager: "kubectl" },
      ),
    );
    expectFixture(err, "pvc-expand-unbound.txt");
  });

  it("refuses expanding a claim of a class without allowVolumeExpansion with pvc-expand-not-allowed.txt", async () => {
    const c = await fixtureCluster();
    await createClaim(c, "fixed-pvc", "fixed");
    const err = await refusal(
      c.admin.mergePatch(
        "persistentvolumeclaims",
        ns,
        "fixed-pvc",
        { spec: { resources: { requests: { storage: "2Gi" } } } },
        { fieldManager: "kubectl" },
      ),
    );
    expectFixture(err, "pvc-expand-not-allowed.txt");
    expect(err.isAdmissionForbidden).toBe(true);
  });

  it("refuses a merge patch with a stale resourceVersion with pvc-patch-stale-rv.txt", async () => {
    const c = await fixtureCluster();
    const old = (await c.admin.get("persistentvolumeclaims", ns, "data-web-0")).metadata as { resourceVersion: string };
    await c.admin.mergePatch(
      "persistentvolumeclaims",
      ns,
      "data-web-0",
      { metadata: { labels: { touched: "yes" } } },
      { fieldManager: "kubectl" },
    );
    const err = await refusal(
      c.admin.mergePatch(
        "persistentvolumeclaims",
        ns,
        "data-web-0",
        { metadata: { resourceVersion: old.resourceVersion, labels: { again: "yes" } } },
        { fieldManager: "kubectl" },
      ),
    );
    expectFixture(err, "pvc-patch-stale-rv.txt");
    expect(err.isTransient).toBe(true);
  });

  it("refuses a non-forced apply over kube-controller-manager's storage with pvc-apply-conflict.txt", async () => {
    const c = await fixtureCluster();
    const manifest = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "data-web-2", namespace: ns, labels: { "claimstep.io/revision": "abc" } },
      spec: { resources: { requests: { storage: "2Gi" } } },
    };
    const err = await refusal(c.admin.applyClaim(manifest, { fieldManager: "claimstep" }));
    expectFixture(err, "pvc-apply-conflict.txt");
    expect(err.isFieldManagerConflict).toBe(true);
  });

  it("takes ownership on a forced apply as in pvc-apply-ok.json", async () => {
    const c = await fixtureCluster();
    const manifest = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "data-web-2", namespace: ns, labels: { "claimstep.io/revision": "abc" } },
      spec: { resources: { requests: { storage: "2Gi" } } },
    };
    const applied = await c.admin.applyClaim(manifest, { fieldManager: "claimstep", force: true });
    const want = jsonFixture("pvc-apply-ok.json") as {
      metadata: { labels: unknown; managedFields: { manager: string; fieldsV1: unknown }[] };
      spec: unknown;
    };
    const meta = applied.metadata as {
      labels: unknown;
      managedFields: { manager: string; operation: string; fieldsV1: Record<string, unknown> }[];
    };
    expect(meta.labels).toEqual(want.metadata.labels);
    expect((applied.spec as { resources: unknown }).resources).toEqual((want.spec as { resources: unknown }).resources);
    const claimstep = meta.managedFields.find((m) => m.manager === "claimstep")!;
    expect(claimstep.operation).toBe("Apply");
    expect(claimstep.fieldsV1).toEqual(want.metadata.managedFields.find((m) => m.manager === "claimstep")!.fieldsV1);
    const kcm = meta.managedFields.find((m) => m.manager === "kube-controller-manager")!;
    expect(kcm.fieldsV1["f:spec"]).not.toHaveProperty(["f:resources", "f:requests", "f:storage"]);
    // Now a plain apply by claimstep no longer conflicts: it owns the field.
    await c.admin.applyClaim(
      { ...manifest, spec: { resources: { requests: { storage: "3Gi" } } } },
      { fieldManager: "claimstep" },
    );
  });

  it("refuses a delete whose uid precondition does not match with pod-delete-uid-mismatch.txt", async () => {
    const c = await fixtureCluster();
    const pod = (await c.admin.get("pods", ns, "web-0")).metadata as { uid: string };
    const err = await refusal(
      c.admin.delete("pods", ns, "web-0", {
        fieldManager: "kubectl",
        preconditions: { uid: "00000000-0000-0000-0000-000000000000" },
      }),
    );
    const { code, body } = fixture("pod-delete-uid-mismatch.txt");
    expect(err.code).toBe(code);
    expect(err.status).toEqual({
      ...body,
      message: (body.message as string).replace("a9f6924b-915e-4ac1-af06-0749c7ff776b", pod.uid),
    });
    await c.admin.get("pods", ns, "web-0"); // still there
  });

  it("answers a missing StatefulSet with statefulset-not-found.txt", async () => {
    const c = await fixtureCluster();
    expectFixture(await refusal(c.admin.get("statefulsets", ns, "nope")), "statefulset-not-found.txt");
  });

  it("refuses an edit of volumeClaimTemplates with sts-vct-update.txt", async () => {
    const c = await fixtureCluster();
    const set = await c.admin.get("statefulsets", ns, "web");
    const templates = structuredClone(
      (set.spec as { volumeClaimTemplates: { spec: { resources: { requests: { storage: string } } } }[] })
        .volumeClaimTemplates,
    );
    templates[0]!.spec.resources.requests.storage = "2Gi";
    const err = await refusal(
      c.admin.mergePatch(
        "statefulsets",
        ns,
        "web",
        { spec: { volumeClaimTemplates: templates } },
        { fieldManager: "kubectl" },
      ),
    );
    expectFixture(err, "sts-vct-update.txt");
  });

  it("refuses an Event with generateName `web.` and no eventTime like event-create-invalid-generatename.txt", async () => {
    const c = await fixtureCluster();
    const err = await refusal(
      c.admin.create(
        "events",
        {
          metadata: { generateName: "web.", namespace: ns },
          reason: "ClaimPatched",
          note: "x",
          type: "Normal",
          regarding: { kind: "StatefulSet", name: "web", namespace: ns },
        },
        { fieldManager: "curl" },
      ),
    );
    const { code, body } = fixture("event-create-invalid-generatename.txt");
    const name = (err.status!.details as { name: string }).name;
    expect(name).toMatch(/^web\.[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(err.code).toBe(code);
    expect(err.status).toEqual(JSON.parse(JSON.stringify(body).replaceAll("web.2klmn", name)));
    // `web-` is accepted.
    const ok = await c.admin.create(
      "events",
      {
        metadata: { generateName: "web-", namespace: ns },
        eventTime: "2026-11-30T09:06:17.000000Z",
        reason: "ClaimPatched",
        note: "x",
        type: "Normal",
      },
      { fieldManager: "curl" },
    );
    expect((ok.metadata as { name: string }).name).toMatch(/^web-/);
  });

  it("refuses growth past a ResourceQuota with the admission plugin's message", async () => {
    const c = await fixtureCluster();
    await c.addStorageQuota(ns, "storage", "3Gi");
    const err = await refusal(
      c.admin.mergePatch(
        "persistentvolumeclaims",
        ns,
        "data-web-0",
        { spec: { resources: { requests: { storage: "2Gi" } } } },
        { fieldManager: "kubectl" },
      ),
    );
    expect(err.code).toBe(403);
    expect(err.message).toBe(
      'persistentvolumeclaims "data-web-0" is forbidden: exceeded quota: storage, requested: requests.storage=1Gi, used: requests.storage=3Gi, limited: requests.storage=3Gi',
    );
    expect(err.status).toMatchObject({
      reason: "Forbidden",
      details: { name: "data-web-0", kind: "persistentvolumeclaims" },
    });
    expect(err.isAdmissionForbidden).toBe(true);
  });
});
