// F5's ownership list (core/kube/ownership.ts): what the old set's managers get back, what the new
// set's writers keep, and what claimstep's own manager is left with.
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import { type ManagedFieldsEntry, ownersOf, restoredManagedFields } from "../../../core/kube/ownership.js";

const entry = (
  manager: string,
  operation: "Apply" | "Update",
  fieldsV1: Record<string, unknown>,
  extra: Partial<ManagedFieldsEntry> = {},
): ManagedFieldsEntry => ({ manager, operation, apiVersion: "apps/v1", fieldsType: "FieldsV1", fieldsV1, ...extra });

const spec = (...fields: string[]) => ({ "f:spec": Object.fromEntries(fields.map((f) => [`f:${f}`, {}])) });
const ids = (xs: ManagedFieldsEntry[]) =>
  xs.map((e) => `${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ""}`);

describe("restoredManagedFields", () => {
  const createdByClaimstep = entry(
    "claimstep",
    "Update",
    { ...spec("replicas", "volumeClaimTemplates", "template") },
    {
      time: "2026-12-03T10:00:00Z",
    },
  );

  it("gives every recorded manager its entry back and claimstep only the annotations it writes", () => {
    const recorded = [
      entry("kustomize-controller", "Apply", spec("replicas", "volumeClaimTemplates")),
      entry("kubectl-client-side-apply", "Update", spec("template")),
      entry("claimstep", "Update", { "f:metadata": { "f:annotations": { [`f:${Keys.status}`]: {} } } }),
      entry("kube-controller-manager", "Update", { "f:status": {} }, { subresource: "status" }),
    ];
    const out = restoredManagedFields(recorded, [createdByClaimstep], {
      [Keys.status]: "{}",
      [Keys.recreatedFrom]: "uid",
      [Keys.strategy]: "InPlace",
      [Keys.finalize]: "Recreate",
      "example.com/team": "db",
    });
    expect(ids(out)).toEqual(["kustomize-controller/Apply", "kubectl-client-side-apply/Update", "claimstep/Update"]);
    expect(out[0]).toEqual(recorded[0]);
    expect(out[2]).toEqual({
      manager: "claimstep",
      operation: "Update",
      apiVersion: "apps/v1",
      time: "2026-12-03T10:00:00Z",
      fieldsType: "FieldsV1",
      // The user's asks (strategy, finalize) and foreign annotations are not claimstep's.
      fieldsV1: { "f:metadata": { "f:annotations": { [`f:${Keys.recreatedFrom}`]: {}, [`f:${Keys.status}`]: {} } } },
    });
  });

  it("keeps the new set's status writers and joins a manager that wrote it since the create with its recorded entry", () => {
    const recorded = [
      entry("kubectl", "Update", spec("replicas")),
      entry("kube-controller-manager", "Update", { "f:status": { "f:replicas": {} } }, { subresource: "status" }),
    ];
    const live = [
      createdByClaimstep,
      entry("kube-controller-manager", "Update", { "f:status": { "f:readyReplicas": {} } }, { subresource: "status" }),
      entry("kubectl", "Update", { "f:metadata": { "f:labels": { "f:tier": {} } } }, { time: "2026-12-03T10:01:00Z" }),
    ];
    const out = restoredManagedFields(recorded, live, {});
    expect(ids(out)).toEqual(["kubectl/Update", "kube-controller-manager/Update/status"]);
    expect(out[0]!.fieldsV1).toEqual({
      "f:spec": { "f:replicas": {} },
      "f:metadata": { "f:labels": { "f:tier": {} } },
    });
    expect(out[0]!.time).toBe("2026-12-03T10:01:00Z");
    expect(out[1]!.fieldsV1).toEqual({ "f:status": { "f:readyReplicas": {} } });
  });

  it("claimstep without annotations of its own owns nothing (the patch's annotation makes its entry)", () => {
    expect(ids(restoredManagedFields([entry("helm", "Apply", spec("replicas"))], [createdByClaimstep], {}))).toEqual([
      "helm/Apply",
    ]);
  });

  it("does not change what it is given", () => {
    const recorded = [entry("helm", "Apply", spec("replicas"))];
    const copy = structuredClone(recorded);
    const out = restoredManagedFields(recorded, [createdByClaimstep], {});
    (out[0]!.fieldsV1 as Record<string, unknown>)["f:spec"] = {};
    expect(recorded).toEqual(copy);
  });
});

describe("ownersOf", () => {
  it("names the managers handed back, neither claimstep nor a subresource's writer", () => {
    expect(
      ownersOf([
        entry("helm", "Apply", {}),
        entry("claimstep", "Update", {}),
        entry("kube-controller-manager", "Update", {}, { subresource: "status" }),
      ]),
    ).toEqual(["helm/Apply"]);
  });
});
