// Re-creating the set (docs/design.md F1–F4) as planner scenarios: each step makes the one request
// the state it finds calls for, so a crash between any two requests is finished by the next step.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import type { ConfigMap, StatefulSet } from "../../../core/kube/k8s.js";
import { revisionOf } from "../../../core/kube/revision.js";
import { FINALIZE_STEPS, unexpectedDifferences } from "../../../core/plan/finalize.js";
import { planStep } from "../../../core/plan/plan.js";
import { readRecord, recordName, recreatedManifest } from "../../../core/plan/recreate-record.js";
import { RULES } from "../../../core/plan/rules.js";
import { mergeTemplate } from "../../../core/policy/shape.js";
import { desiredTemplates } from "../../../core/policy/templates.js";
import type { WriterCapabilities } from "../../../core/ports.js";
import type { Decision, Snapshot, WriteRecord } from "../../../core/types.js";
import { completeForRecreate, DIRECT_RECREATE, makeClaim, makeSet } from "../builders.js";

const NOW = new Date("2026-11-30T12:00:00Z");
const plan = (s: Snapshot, opts = {}): Decision => planStep(s, NOW, DIRECT_RECREATE, opts);

/** The record in the cluster (armed or not), and the set stamped as F1 stamps it before writing it. */
const withRecord = (s: Snapshot, record: ConfigMap, armed = true): Snapshot => ({
  ...s,
  statefulSet: {
    ...s.statefulSet,
    metadata: {
      ...s.statefulSet.metadata,
      annotations: {
        ...s.statefulSet.metadata.annotations,
        [Keys.recreateRecord]: `${record.data!.revision}/${record.data!["old-resource-version"]}`,
      },
    },
  },
  recreateRecord: {
    ...record,
    metadata: { ...record.metadata, uid: "record-uid", resourceVersion: "77" },
    data: { ...record.data, armed: String(armed) },
  },
});

/** The record F1 would write for this snapshot. */
const recordFor = (s: Snapshot): ConfigMap => (plan(s).action as WriteRecord).record;

describe("F1: the record first", () => {
  it("writes ConfigMap claimstep-recreate-<set> with the new manifest, the old uid and the revision", () => {
    const s = completeForRecreate();
    const d = plan(s);
    expect(d.reason).toBe("RecordWritten");
    const record = (d.action as WriteRecord).record;
    expect(record.metadata.name).toBe("claimstep-recreate-web");
    const read = readRecord(record);
    if (!read.ok) throw new Error(read.message);
    expect(read.record.oldUid).toBe(s.statefulSet.metadata.uid);
    expect(read.record.revision).toBe(d.revision);
    const m = read.record.manifest;
    expect(m.spec.volumeClaimTemplates![0]!.spec.resources!.requests!.storage).toBe("2Gi");
    expect(m.spec.volumeClaimTemplates![0]!.spec.accessModes).toEqual(["ReadWriteOnce"]);
    for (const k of ["uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"])
      expect(m.metadata).not.toHaveProperty(k);
    expect(m).not.toHaveProperty("status");
    expect(m.metadata.annotations).not.toHaveProperty(Keys.templates);
    expect(m.spec.template).toEqual(s.statefulSet.spec.template);
    expect(revisionOf(m.spec.volumeClaimTemplates!)).toBe(d.revision);
  });

  it("not without claimstep.io/finalize: Recreate (or claimstep finalize)", () => {
    const s = completeForRecreate({}, {});
    expect(plan(s).reason).toBe("Converged");
    expect(plan(s, { finalize: true }).reason).toBe("RecordWritten");
  });

  it("not before the rollout is complete", () => {
    const s = completeForRecreate();
    s.claims[0] = makeClaim(s.claims[0]!.metadata.name, { storage: "1Gi" });
    expect(plan(s).action?.type).toBe("PatchClaim");
  });

  it("not while the pods roll", () => {
    const s = completeForRecreate();
    s.statefulSet.status = { ...s.statefulSet.status, updateRevision: "web-other" };
    const d = plan(s);
    expect(d.reason).toBe("Recreating");
    expect(d.action).toBeUndefined();
  });

  it("not when the live templates already are the desired ones", () => {
    const s = completeForRecreate();
    s.statefulSet.spec.volumeClaimTemplates = recreatedManifest(
      s.statefulSet,
      (desiredTemplates(s.statefulSet) as unknown as { templates: never[] }).templates,
    ).spec.volumeClaimTemplates!;
    expect(plan(s).reason).toBe("Converged");
  });

  it("refuses a bad value of the annotation, writing nothing", () => {
    const s = completeForRecreate({}, { [Keys.finalize]: "Always" });
    const d = plan(s);
    expect(d.phase).toBe("Blocked");
    expect(d.message).toMatch(/claimstep.io\/finalize="Always" is not one of Never, Recreate/);
  });
});

describe("F2: the orphan delete, guarded", () => {
  it("arms the record first (a merge patch under its resourceVersion)", () => {
    const s = completeForRecreate();
    const d = plan(withRecord(s, recordFor(s), false));
    expect(d.action).toEqual({
      type: "ArmRecord",
      namespace: "default",
      set: "web",
      name: "claimstep-recreate-web",
      armed: true,
      resourceVersion: "77",
    });
  });

  it("deletes the set with its uid and resourceVersion as read once the record is armed", () => {
    const s = completeForRecreate();
    const d = plan(withRecord(s, recordFor(s)));
    expect(d.reason).toBe("SetOrphaned");
    expect(d.action).toEqual({
      type: "OrphanSet",
      namespace: "default",
      set: "web",
      uid: s.statefulSet.metadata.uid,
      resourceVersion: s.statefulSet.metadata.resourceVersion,
    });
  });

  it("discards a record the set no longer matches (a changed pod template), never deleting the set", () => {
    const s = completeForRecreate();
    const record = recordFor(s);
    (s.statefulSet.spec as any).template.spec.containers[0].image = "busybox:2";
    const d = plan(withRecord(s, record, false));
    expect(d.reason).toBe("RecordDiscarded");
    expect(d.action).toEqual({
      type: "DeleteRecord",
      namespace: "default",
      set: "web",
      name: "claimstep-recreate-web",
      uid: "record-uid",
      resourceVersion: "77",
    });
    expect(d.message).toMatch(/spec\.template/);
  });

  it("never deletes an armed record: it disarms it first (a step that read it may be older than the orphan delete)", () => {
    const s = completeForRecreate();
    const record = recordFor(s);
    (s.statefulSet.spec as any).template.spec.containers[0].image = "busybox:2";
    const d = plan(withRecord(s, record, true));
    expect(d.reason).toBe("RecordDiscarded");
    expect(d.action).toEqual({
      type: "ArmRecord",
      namespace: "default",
      set: "web",
      name: "claimstep-recreate-web",
      armed: false,
      resourceVersion: "77",
    });
  });

  it("discards a record when finalize is no longer wanted", () => {
    const s = completeForRecreate();
    const record = recordFor(s);
    delete s.statefulSet.metadata.annotations![Keys.finalize];
    expect(plan(withRecord(s, record)).reason).toBe("RecordDiscarded");
  });

  it("ignores claimstep's own annotations changing in between (the status it writes)", () => {
    const s = completeForRecreate();
    const record = recordFor(s);
    s.statefulSet.metadata.annotations![Keys.status] = '{"phase":"Complete"}';
    expect(plan(withRecord(s, record)).reason).toBe("SetOrphaned");
  });

  it("waits while the old set finalizes (deletionTimestamp)", () => {
    const s = completeForRecreate();
    const record = recordFor(s);
    s.statefulSet.metadata.deletionTimestamp = NOW.toISOString();
    const d = plan(withRecord(s, record));
    expect(d.reason).toBe("Recreating");
    expect(d.action).toBeUndefined();
  });
});

describe("a record claimstep did not write is never acted on", () => {
  /** A record planted by someone who may create ConfigMaps, not write the set: no stamp on the set. */
  const planted = (edit: (record: ConfigMap) => void = () => {}) => {
    const s = completeForRecreate();
    const record = recordFor(s);
    edit(record);
    const withIt = withRecord(s, record, false);
    delete withIt.statefulSet.metadata.annotations![Keys.recreateRecord];
    return withIt;
  };

  it("without the set's stamp: Blocked/RecordNotOurs naming the ConfigMap, a Warning, nothing armed or deleted", () => {
    const d = plan(planted());
    expect(d.reason).toBe("RecordNotOurs");
    expect(d.phase).toBe("Blocked");
    expect(d.action).toBeUndefined();
    expect(d.message).toMatch(/ConfigMap default\/claimstep-recreate-web is not a re-create record claimstep wrote/);
    expect(d.message).toMatch(/carries no claimstep.io\/recreate-record stamp/);
    expect(d.events.map((e) => [e.reason, e.type])).toEqual([["RecordNotOurs", "Warning"]]);
  });

  it("armed by its planter: still never orphan-deletes the set", () => {
    const s = planted();
    s.recreateRecord!.data!.armed = "true";
    const d = plan(s);
    expect(d.reason).toBe("RecordNotOurs");
    expect(d.action).toBeUndefined();
  });

  it("a stamp naming another record (another resourceVersion) is not this record's", () => {
    const s = completeForRecreate();
    const record = recordFor(s);
    const stamped = withRecord(s, record);
    stamped.statefulSet.metadata.annotations![Keys.recreateRecord] = `${record.data!.revision}/999`;
    const d = plan(stamped);
    expect(d.reason).toBe("RecordNotOurs");
    expect(d.message).toMatch(/names another record/);
  });

  it("stamped, but holding no kept uids: refused", () => {
    const s = completeForRecreate();
    const record = recordFor(s);
    delete record.data!["kept-uids.json"];
    const d = plan(withRecord(s, record));
    expect(d.reason).toBe("RecordNotOurs");
    expect(d.message).toMatch(/holds no kept-uids\.json/);
  });

  it("stamped, but its manifest is not what claimstep would write now (another service account, a held pod template): discarded, the set untouched", () => {
    const s = completeForRecreate();
    const record = recordFor(s);
    const manifest = JSON.parse(record.data!["statefulset.json"]!);
    manifest.spec.template.spec.serviceAccountName = "planted";
    manifest.metadata.annotations[Keys.podTemplate] = "{}";
    record.data!["statefulset.json"] = JSON.stringify(manifest);
    const d = plan(withRecord(s, record));
    expect(d.reason).toBe("RecordDiscarded");
    expect(d.action?.type).toBe("ArmRecord"); // armed: disarmed first, never the set deleted
    expect(d.message).toMatch(/spec\.template\.spec\.serviceAccountName/);
  });

  it("stamped, but its kept uids are not the set's pods and claims now: discarded", () => {
    const s = completeForRecreate();
    const record = recordFor(s);
    record.data!["kept-uids.json"] = JSON.stringify({ pods: { "web-0": "someone-else" }, claims: {} });
    const d = plan(withRecord(s, record, false));
    expect(d.reason).toBe("RecordDiscarded");
    expect(d.message).toMatch(/uids/);
  });

  it("F1 stamps the set before writing the record: the decision carries the stamp", () => {
    const s = completeForRecreate();
    const d = plan(s);
    expect(d.action?.type).toBe("WriteRecord");
    expect(d.setAnnotations?.[Keys.recreateRecord]).toBe(`${d.revision}/${s.statefulSet.metadata.resourceVersion}`);
  });

  it("GitOps: a stamped record is not acted on without the merged approval", () => {
    const s = completeForRecreate({}, { [Keys.finalize]: "Recreate", [Keys.applyVia]: "pull-request" });
    s.statefulSet.metadata.annotations![Keys.recreateApproved] = "x";
    const revision = plan(completeForRecreate()).revision!;
    s.statefulSet.metadata.annotations![Keys.recreateApproved] = revision;
    const record = recordFor(s);
    delete s.statefulSet.metadata.annotations![Keys.recreateApproved];
    const PR: WriterCapabilities = {
      ...DIRECT_RECREATE,
      supports: [...DIRECT_RECREATE.supports, "ProposeRecreate"],
      proposes: true,
    };
    const d = planStep(withRecord(s, record), NOW, PR);
    expect(d.reason).toBe("RecordDiscarded");
    expect(d.message).toMatch(/no merged pull request approves/);
  });

  it("with the set gone: a record that is not armed, or names no pod or claim that exists, creates nothing", () => {
    const s = completeForRecreate();
    const record = recordFor(s);
    const read = readRecord(record);
    if (!read.ok) throw new Error(read.message);
    const notArmed = plan({ ...withRecord(s, record, false), statefulSet: read.record.manifest, setMissing: true });
    expect(notArmed.reason).toBe("RecordNotOurs");
    expect(notArmed.action).toBeUndefined();
    expect(notArmed.message).toMatch(/not armed/);
    const noPods = plan({
      ...withRecord(s, record, true),
      statefulSet: read.record.manifest,
      setMissing: true,
      pods: [],
      claims: [],
    });
    expect(noPods.reason).toBe("RecreateReplaced");
    expect(noPods.phase).toBe("Blocked");
    expect(noPods.action).toBeUndefined();
    expect(noPods.message).toMatch(/claimstep creates nothing from it/);
  });
});

describe("F3: the set from the record", () => {
  it("creates the set from the record when it is gone", () => {
    const s = completeForRecreate();
    const record = recordFor(s);
    const read = readRecord(record);
    if (!read.ok) throw new Error(read.message);
    const gone: Snapshot = { ...withRecord(s, record), statefulSet: read.record.manifest, setMissing: true };
    const d = plan(gone);
    expect(d.reason).toBe("SetCreated");
    // The new set names the record it comes from (F4 tells it from a set someone else created).
    const manifest = structuredClone(read.record.manifest);
    manifest.metadata.annotations = { ...manifest.metadata.annotations, [Keys.recreatedFrom]: "record-uid" };
    expect(d.action).toEqual({ type: "CreateSet", namespace: "default", set: "web", manifest });
    expect(d.setAnnotations).toBeUndefined();
  });

  it("a record whose manifest is another set (another name or namespace) is unreadable: nothing is created", () => {
    const s = completeForRecreate();
    for (const [field, value] of [
      ["name", "evil"],
      ["namespace", "kube-system"],
    ] as const) {
      const record = recordFor(s);
      const manifest = JSON.parse(record.data!["statefulset.json"]!);
      manifest.metadata[field] = value;
      record.data!["statefulset.json"] = JSON.stringify(manifest);
      record.data!.armed = "true";
      const read = readRecord(record);
      expect(read.ok).toBe(false);
      const d = plan({ ...withRecord(s, record, true), setMissing: true });
      expect(d.reason).toBe("RecordUnreadable");
      expect(d.action).toBeUndefined();
      expect(d.message).toContain(
        field === "name"
          ? "is StatefulSet default/evil, not default/web"
          : "is StatefulSet kube-system/web, not default/web",
      );
    }
  });

  it("blocks, naming the way out, when the set is gone and the record unreadable", () => {
    const s = completeForRecreate();
    const record = recordFor(s);
    record.data!["statefulset.json"] = "{not json";
    const d = plan({ ...withRecord(s, record), setMissing: true });
    expect(d.phase).toBe("Blocked");
    expect(d.message).toMatch(/is gone and its re-create record is unreadable .*re-create the set by hand/);
  });
});

/**
 * The set re-created from the record F1 wrote of `completeForRecreate()` (with `old` as its managedFields):
 * its pods adopted or not, F5 done (`restored`: the record uid its annotation names) or not.
 */
function recreatedFrom(o: {
  adopted: boolean;
  restored?: string;
  old?: StatefulSet["metadata"]["managedFields"];
  live?: StatefulSet["metadata"]["managedFields"];
}): Snapshot {
  const s = completeForRecreate();
  if (o.old) s.statefulSet.metadata.managedFields = o.old;
  const record = recordFor(s);
  const read = readRecord(record);
  if (!read.ok) throw new Error(read.message);
  const set: StatefulSet = {
    ...read.record.manifest,
    metadata: {
      ...read.record.manifest.metadata,
      annotations: {
        ...read.record.manifest.metadata.annotations,
        [Keys.recreatedFrom]: "record-uid",
        ...(o.restored ? { [Keys.ownershipRestored]: o.restored } : {}),
      },
      uid: "new-uid",
      resourceVersion: "900",
      generation: 1,
      ...(o.live ? { managedFields: o.live } : {}),
    },
  };
  set.status = s.statefulSet.status!;
  const pods = s.pods.map((p) => ({
    ...p,
    metadata: {
      ...p.metadata,
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "StatefulSet",
          name: "web",
          uid: o.adopted ? "new-uid" : "old",
          controller: true,
        },
      ],
    },
  }));
  return { ...withRecord(s, record), statefulSet: set, pods };
}

describe("F4: the record goes once the new set has adopted its pods", () => {
  // F5 done (its own describe below): the field ownership is back.
  const recreated = (adopted: boolean): Snapshot => recreatedFrom({ adopted, restored: "record-uid" });

  it("waits for adoption", () => {
    const d = plan(recreated(false));
    expect(d.reason).toBe("Recreating");
    expect(d.message).toMatch(/has not adopted 3 pod\(s\) yet \(web-0, web-1, web-2\)/);
  });

  it("then deletes the record (uid precondition): Complete/Finalized, event SetRecreated", () => {
    const d = plan(recreated(true));
    expect(d.reason).toBe("SetRecreated");
    expect(d.phase).toBe("Complete");
    expect(d.status.reason).toBe("Finalized");
    expect(d.action).toEqual({
      type: "DeleteRecord",
      namespace: "default",
      set: "web",
      name: recordName("web"),
      uid: "record-uid",
    });
    expect(d.events.map((e) => e.reason)).toEqual(["SetRecreated"]);
    expect(d.message).toMatch(/every pod and claim kept \(3 pod\(s\), 3 claim\(s\): the same uids as recorded\)/);
  });

  it("F1 records the uids of the set's pods and claims", () => {
    const s = completeForRecreate();
    const read = readRecord(recordFor(s));
    if (!read.ok) throw new Error(read.message);
    expect(read.record.kept).toEqual({
      pods: Object.fromEntries(s.pods.map((p) => [p.metadata.name, p.metadata.uid])),
      claims: Object.fromEntries(s.claims.map((c) => [c.metadata.name, c.metadata.uid])),
    });
    expect(Object.keys(read.record.kept!.pods)).toEqual(["web-0", "web-1", "web-2"]);
  });

  it("a pod or claim of another uid (or gone, or being deleted): Blocked/RecreateReplaced naming them, a Warning, the record kept", () => {
    const s = recreated(true);
    s.pods[2] = { ...s.pods[2]!, metadata: { ...s.pods[2]!.metadata, uid: "a-new-pod" } };
    s.claims[0] = { ...s.claims[0]!, metadata: { ...s.claims[0]!.metadata, uid: "a-new-claim" } };
    s.claims[1] = {
      ...s.claims[1]!,
      metadata: { ...s.claims[1]!.metadata, deletionTimestamp: "2026-11-30T12:00:00Z" },
    };
    s.claims.splice(2, 1);
    const d = plan(s);
    expect(d.reason).toBe("RecreateReplaced");
    expect(d.phase).toBe("Blocked");
    expect(d.action).toBeUndefined();
    expect(d.message).toMatch(
      /pods re-created: web-2; claims re-created: data-web-0; claims deleting: data-web-1; claims gone: data-web-2\./,
    );
    expect(d.message).not.toMatch(/kept \(/);
    expect(d.events.map((e) => [e.reason, e.type])).toEqual([["RecreateReplaced", "Warning"]]);
  });

  it("a set someone else created (no claimstep.io/recreated-from naming the record): Blocked/RecreatedByOther, what differs, the record disarmed and kept", () => {
    const s = recreated(true);
    delete s.statefulSet.metadata.annotations![Keys.recreatedFrom];
    delete s.statefulSet.metadata.annotations![Keys.strategy];
    s.statefulSet.spec.volumeClaimTemplates![0]!.spec.resources!.requests!.storage = "1Gi";
    const d = plan(s);
    expect(d.reason).toBe("RecreatedByOther");
    expect(d.phase).toBe("Blocked");
    expect(d.action).toEqual({
      type: "ArmRecord",
      namespace: "default",
      set: "web",
      name: recordName("web"),
      armed: false,
      resourceVersion: "77",
    });
    expect(d.message).toMatch(/was created by someone else \(uid new-uid\)/);
    expect(d.message).toMatch(/claim template data: 1Gi here, 2Gi recorded/);
    expect(d.message).toMatch(/kubectl delete configmap claimstep-recreate-web -n default/);
    expect(d.events.map((e) => [e.reason, e.type])).toEqual([["RecreatedByOther", "Warning"]]);
    // Disarmed, it is still reported, with nothing more to write.
    const again = plan({
      ...s,
      recreateRecord: { ...s.recreateRecord!, data: { ...s.recreateRecord!.data, armed: "false" } },
    });
    expect(again.reason).toBe("RecreatedByOther");
    expect(again.action).toBeUndefined();
  });

  it("a record written before uids were recorded: the record goes, saying the pods and claims were not compared", () => {
    const s = recreated(true);
    const data = { ...s.recreateRecord!.data };
    delete data["kept-uids.json"];
    const d = plan({ ...s, recreateRecord: { ...s.recreateRecord!, data } });
    expect(d.reason).toBe("SetRecreated");
    expect(d.message).toMatch(/pods and claims not compared/);
    expect(d.message).not.toMatch(/kept/);
  });

  it("a record whose uids are not readable is refused, naming the key", () => {
    const s = recreated(true);
    const d = plan({
      ...s,
      recreateRecord: { ...s.recreateRecord!, data: { ...s.recreateRecord!.data, "kept-uids.json": '{"pods": 3}' } },
    });
    expect(d.phase).toBe("Blocked");
    expect(d.message).toMatch(/kept-uids\.json is not \{pods, claims\} of name → uid/);
  });
});

describe("F5: the old set's field ownership handed back before the record goes", () => {
  const helm = {
    manager: "helm",
    operation: "Apply" as const,
    apiVersion: "apps/v1",
    time: "2026-11-30T10:00:00Z",
    fieldsType: "FieldsV1",
    fieldsV1: { "f:spec": { "f:replicas": {}, "f:volumeClaimTemplates": {} } },
  };
  const status = {
    manager: "kube-controller-manager",
    operation: "Update" as const,
    apiVersion: "apps/v1",
    fieldsType: "FieldsV1",
    fieldsV1: { "f:status": { "f:replicas": {} } },
    subresource: "status",
  };
  /** The set re-created from a record F1 wrote of a set Helm applied; every pod adopted. */
  const recreated = (restored?: string): Snapshot =>
    recreatedFrom({
      adopted: true,
      ...(restored ? { restored } : {}),
      old: [helm, status],
      live: [
        {
          manager: "claimstep",
          operation: "Update",
          apiVersion: "apps/v1",
          time: "2026-11-30T12:00:00Z",
          fieldsType: "FieldsV1",
          fieldsV1: { "f:metadata": { "f:annotations": {} }, "f:spec": { "f:volumeClaimTemplates": {} } },
        },
        { ...status, time: "2026-11-30T12:00:01Z" },
      ],
    });

  it("F1 records the old set's managedFields", () => {
    const s = completeForRecreate();
    s.statefulSet.metadata.managedFields = [helm, status];
    const read = readRecord(recordFor(s));
    if (!read.ok) throw new Error(read.message);
    expect(read.record.managedFields).toEqual([helm, status]);
  });

  it("patches them back under the new set's resourceVersion: helm owns its fields again, claimstep only its annotations", () => {
    const d = plan(recreated());
    expect(d.reason).toBe("OwnershipRestored");
    expect(d.phase).toBe("Progressing");
    expect(d.events.map((e) => e.reason)).toEqual(["OwnershipRestored"]);
    expect(d.message).toMatch(/helm\/Apply own their fields again/);
    expect(d.action).toMatchObject({
      type: "RestoreOwnership",
      set: "web",
      uid: "new-uid",
      resourceVersion: "900",
      record: "record-uid",
    });
    const fields = d.action?.type === "RestoreOwnership" ? d.action.managedFields : [];
    expect(fields.map((e) => `${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ""}`)).toEqual([
      "helm/Apply",
      "kube-controller-manager/Update/status",
      "claimstep/Update",
    ]);
    expect(fields[0]).toEqual(helm);
    // The live status entry (the new set's controller), not the recorded one.
    expect(fields[1]!.time).toBe("2026-11-30T12:00:01Z");
    const mine = Object.keys((fields[2]!.fieldsV1 as any)["f:metadata"]["f:annotations"]);
    expect(mine.length).toBeGreaterThan(0);
    for (const k of mine)
      expect(k).toMatch(/^f:claimstep\.io\/(status|update-revision|current-revision|recreated-from|recreate-record)$/);
    expect(Object.keys(fields[2]!.fieldsV1!)).toEqual(["f:metadata"]);
  });

  it("once the set names the record in claimstep.io/ownership-restored, the record goes (Complete)", () => {
    const d = plan(recreated("record-uid"));
    expect(d.reason).toBe("SetRecreated");
    expect(d.action?.type).toBe("DeleteRecord");
  });

  it("an ownership-restored naming another record (an earlier re-create) restores again", () => {
    expect(plan(recreated("older-record")).action?.type).toBe("RestoreOwnership");
  });

  it("a record with unreadable managedFields is refused, naming the key", () => {
    const s = completeForRecreate();
    const record = recordFor(s);
    record.data!["managed-fields.json"] = '[{"manager": 7}]';
    const read = readRecord(record);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.message).toMatch(/managed-fields\.json is not a list of managedFields entries/);
  });

  it("the re-create's manifest drops ownership-restored: the next re-create restores anew", () => {
    const s = completeForRecreate();
    s.statefulSet.metadata.annotations![Keys.ownershipRestored] = "older-record";
    const read = readRecord(recordFor(s));
    if (!read.ok) throw new Error(read.message);
    expect(read.record.manifest.metadata.annotations?.[Keys.ownershipRestored]).toBeUndefined();
  });
});

describe("the record's pure parts", () => {
  it("merges exactly the four rolled-out fields of the desired templates onto the live ones", () => {
    const live = makeSet().spec.volumeClaimTemplates!;
    const desired = [
      {
        metadata: { name: "data", labels: { tier: "db" } },
        spec: { resources: { requests: { storage: "5Gi" } }, volumeAttributesClassName: "gold" },
      },
    ];
    const merged = live.map((t) => mergeTemplate(t, desired));
    expect(merged[0]!.spec).toMatchObject({
      accessModes: ["ReadWriteOnce"],
      storageClassName: "fast",
      resources: { requests: { storage: "5Gi" } },
      volumeAttributesClassName: "gold",
    });
    expect(merged[0]!.metadata.labels).toEqual({ tier: "db" });
  });

  it("compares manifests in full but for the annotations claimstep's own steps write between F1 and F2", () => {
    const a = makeSet();
    const b = structuredClone(a);
    b.metadata.annotations = {
      ...b.metadata.annotations,
      [Keys.status]: "x",
      [Keys.currentRevision]: "r",
      [Keys.recreateRecord]: "r/1",
      [Keys.lastEviction]: "{}",
    };
    expect(unexpectedDifferences(a, b)).toEqual([]);
    b.spec.replicas = 7;
    expect(unexpectedDifferences(a, b)).toEqual(["spec.replicas"]);
    // The templates, and claimstep's other annotations (a held pod template), are compared too.
    const c = structuredClone(a);
    c.spec.volumeClaimTemplates = [];
    c.metadata.annotations = { ...c.metadata.annotations, [Keys.podTemplate]: "{}" };
    expect(unexpectedDifferences(a, c)).toEqual([
      `metadata.annotations.${Keys.podTemplate}`,
      "spec.volumeClaimTemplates.0",
    ]);
  });

  it("but the user's partition recorded while claimstep holds the live one counts: a person sets it there", () => {
    const a = makeSet({ annotations: { [Keys.userPartition]: "0" } });
    const b = structuredClone(a);
    b.metadata.annotations![Keys.userPartition] = "2";
    expect(unexpectedDifferences(a, b)).toEqual([`metadata.annotations.${Keys.userPartition}`]);
  });
});

describe("GitOps: the re-create is proposed, and merging the proposal approves it", () => {
  const PR: WriterCapabilities = {
    ...DIRECT_RECREATE,
    name: "pull-request writer (github)",
    supports: [...DIRECT_RECREATE.supports, "ProposeRecreate"],
    proposes: true,
  };
  const viaPR = () => completeForRecreate({}, { [Keys.finalize]: "Recreate", [Keys.applyVia]: "pull-request" });

  it("proposes the manifest change instead of writing the record", () => {
    const d = planStep(viaPR(), NOW, PR);
    expect(d.reason).toBe("AwaitingApproval");
    expect(d.action).toMatchObject({ type: "ProposeRecreate", set: "web", revision: d.revision });
  });

  it("a merged proposal is recorded as approved; the next step writes the record", async () => {
    const { verdict } = await import("../../../core/plan/verdict.js");
    const s = viaPR();
    const planned = planStep(s, NOW, PR);
    const d = verdict(s, NOW, planned, { kind: "applied", detail: "pull request #7 is merged" });
    expect(d.reason).toBe("RecreateApproved");
    expect(d.setAnnotations![Keys.recreateApproved]).toBe(planned.revision);
    s.statefulSet.metadata.annotations![Keys.recreateApproved] = planned.revision!;
    const next = planStep(s, NOW, PR);
    expect(next.action?.type).toBe("WriteRecord");
    const read = readRecord((next.action as WriteRecord).record);
    expect(read.ok && read.record.manifest.metadata.annotations).not.toHaveProperty(Keys.recreateApproved);
  });
});

describe("the re-create's table (FINALIZE_STEPS): one named step per guard and per request, in the order they happen", () => {
  const names = FINALIZE_STEPS.map((step) => step.name);

  it("reads F1 (the record), arming, F2 (the orphan delete), F3 (the create), F4 and F5 (the new set) in order", () => {
    expect(names).toEqual([
      "recordUnreadable",
      // F1: no record yet.
      "recreateWouldDiffer",
      "awaitRestBeforeRecord",
      "proposeRecreate",
      "writeRecord",
      // Arming, then F2: the record and the set it was written from.
      "oldSetFinalizing",
      "recordNotStamped",
      "recordWithoutKept",
      "discardStale",
      "awaitRestBeforeArm",
      "armRecord",
      "orphanDelete",
      // F3: the set gone.
      "createRefused",
      "createFromRecord",
      // F4 and F5: the new set.
      "recreatedByOther",
      "awaitAdoption",
      "keptReplaced",
      "restoreOwnership",
      "deleteRecord",
    ]);
  });

  it("makes its requests in the order of docs/finalize.md's request table: F1, arm, F2, F3, F5, F4", () => {
    const requests: Record<string, string> = {
      writeRecord: "F1",
      armRecord: "arm",
      orphanDelete: "F2",
      createFromRecord: "F3",
      restoreOwnership: "F5",
      deleteRecord: "F4",
    };
    const doc = readFileSync(new URL("../../../docs/finalize.md", import.meta.url), "utf8");
    const rows = [...doc.matchAll(/^\| (?:\[(F\d)\]\(design\.md#rule-F\d\)|(arm)) \|/gm)].map((m) => m[1] ?? m[2]);
    expect(rows).toEqual(["F1", "arm", "F2", "F3", "F5", "F4"]);
    expect(names.filter((n) => n in requests).map((n) => requests[n])).toEqual(rows);
  });

  it("each step carries out one of F1–F5, and each of F1–F5 names steps of the table (core/plan/rules.ts RULES)", () => {
    const ruleOf = new Map<string, string[]>();
    for (const id of ["F1", "F2", "F3", "F4", "F5"] as const) {
      const steps = RULES[id].fns.flatMap((fn) => (fn.startsWith("core/plan/finalize.ts#") ? [fn.split("#")[1]!] : []));
      expect(steps.length, id).toBeGreaterThan(0);
      for (const step of steps) ruleOf.set(step, [...(ruleOf.get(step) ?? []), id]);
    }
    expect([...ruleOf.keys()].sort()).toEqual([...names].sort());
    expect([...ruleOf.values()].filter((ids) => ids.length > 1)).toEqual([]);
  });
});
