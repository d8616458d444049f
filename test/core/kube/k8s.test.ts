// The schemas accept the real objects a real API server returned, and reject what the planner
// cannot use.
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ClaimTemplate,
  listOf,
  PersistentVolumeClaim,
  Pod,
  StatefulSet,
  Status,
  StorageClass,
} from "../../../core/kube/k8s.js";
import { FIXTURES, fixture, statusFixture } from "../builders.js";

describe("fixtures parse", () => {
  it("StatefulSet", () => {
    const set = StatefulSet.parse(fixture("statefulset-web.json"));
    expect(set.spec.volumeClaimTemplates?.[0]?.spec.resources?.requests?.storage).toBe("1Gi");
    // unknown fields pass through untouched
    expect((set as Record<string, any>).status.currentRevision).toBe("web-5869dd78fd");
  });
  it("PVC, pod and StorageClass lists", () => {
    expect(listOf(PersistentVolumeClaim).parse(fixture("pvc-list.json")).items).toHaveLength(3);
    expect(listOf(Pod).parse(fixture("pod-list.json")).items).toHaveLength(3);
    const classes = listOf(StorageClass).parse(fixture("storageclass-list.json")).items;
    expect(classes.map((c) => [c.metadata.name, c.allowVolumeExpansion])).toEqual([
      ["fast", true],
      ["fixed", false],
    ]);
    expect(PersistentVolumeClaim.parse(fixture("pvc-apply-ok.json")).metadata.labels?.["claimstep.io/revision"]).toBe(
      "abc",
    );
  });
  it("every error fixture is a Status", () => {
    // Some .txt captures are successes (201 Created, 200 with the object): only refusals are Status bodies.
    const errors = readdirSync(FIXTURES)
      .filter((f) => f.endsWith(".txt"))
      .map((f) => ({ f, ...statusFixture(f) }))
      .filter((x) => x.code >= 400);
    expect(errors.length).toBeGreaterThan(10);
    for (const { f, code, body } of errors) expect(Status.parse(body).code, f).toBe(code);
  });
});

describe("strict on the fields used", () => {
  it("rejects a StatefulSet without a selector or with a string replica count", () => {
    const set = fixture("statefulset-web.json");
    expect(StatefulSet.safeParse({ ...set, spec: { ...set.spec, selector: undefined } }).success).toBe(false);
    expect(StatefulSet.safeParse({ ...set, spec: { ...set.spec, replicas: "3" } }).success).toBe(false);
  });
  it("rejects a PVC without a name", () => {
    const pvc = fixture("pvc-list.json").items[0];
    expect(PersistentVolumeClaim.safeParse({ ...pvc, metadata: { ...pvc.metadata, name: "" } }).success).toBe(false);
  });
});

describe("rule 14: a quantity may be a JSON number", () => {
  const pvc = (requests: unknown, capacity: unknown) => ({
    metadata: { name: "data-web-0" },
    spec: { resources: { requests: { storage: requests }, limits: { storage: requests } } },
    status: { phase: "Bound", capacity: { storage: capacity }, allocatedResources: { storage: capacity } },
  });
  it("reads numbers in requests, limits, capacity and allocatedResources as their canonical strings", () => {
    const parsed = PersistentVolumeClaim.parse(pvc(1073741824, 2000));
    expect(parsed.spec.resources?.requests?.storage).toBe("1073741824");
    expect(parsed.spec.resources?.limits?.storage).toBe("1073741824");
    expect(parsed.status?.capacity?.storage).toBe("2k");
    expect(parsed.status?.allocatedResources?.storage).toBe("2k");
  });
  it("reads numbers in a set's live templates and in a template", () => {
    const set = {
      metadata: { name: "web" },
      spec: {
        selector: {},
        volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { resources: { requests: { storage: 10 } } } }],
      },
    };
    expect(StatefulSet.parse(set).spec.volumeClaimTemplates?.[0]?.spec.resources?.requests?.storage).toBe("10");
    expect(ClaimTemplate.parse(set.spec.volumeClaimTemplates[0]).spec.resources?.requests?.storage).toBe("10");
  });
  it.each([
    [1.5, /invalid quantity 1\.5: .*whole number/],
    [-1, /invalid quantity -1: .*negative/],
    [true, /expected a quantity/],
    [null, /expected a quantity/],
  ])("refuses %j with the reason, at the field", (storage, message) => {
    const r = PersistentVolumeClaim.safeParse(pvc(storage, "1Gi"));
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.path).toEqual(["spec", "resources", "requests", "storage"]);
    expect(r.error!.issues[0]!.message).toMatch(message);
  });
  it("leaves strings as they are (the planner judges them)", () => {
    expect(PersistentVolumeClaim.parse(pvc("20Gi", "20Gi")).spec.resources?.requests?.storage).toBe("20Gi");
  });
});
