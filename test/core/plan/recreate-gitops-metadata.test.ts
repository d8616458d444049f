// Issue 35 item 3: claimstep's re-create carries every label and annotation Helm, Argo CD, Flux and
// kubectl track the set by, so that after it each tool still finds the set as its own: Helm's release
// annotations and label (helm pkg/action/validate.go setMetadataVisitor), Argo CD's tracking
// annotation and label, Flux's Kustomization and HelmRelease labels and its force annotation, and
// kubectl's last-applied-configuration (the three-way merge of kubectl, Helm 3 and Argo CD's
// client-side apply reads it). Held on the manifest of F1's record, the one the create sends.
import { describe, expect, it } from "vitest";
import { Keys } from "../../../core/keys.js";
import { revisionOf } from "../../../core/kube/revision.js";
import { planStep } from "../../../core/plan/plan.js";
import { readRecord, recreatedManifest } from "../../../core/plan/recreate-record.js";
import { desiredTemplates } from "../../../core/policy/templates.js";
import type { WriterCapabilities } from "../../../core/ports.js";
import type { Snapshot, WriteRecord } from "../../../core/types.js";
import { claimsFor, makeSet, snapshot } from "../builders.js";

const ALL: WriterCapabilities = {
  name: "direct",
  supports: ["PatchClaim", "WriteRecord", "ArmRecord", "OrphanSet", "CreateSet", "RestoreOwnership", "DeleteRecord"],
  proposes: false,
};
const NOW = new Date("2026-11-30T12:00:00Z");

const LABELS: Record<string, string> = {
  "app.kubernetes.io/managed-by": "Helm",
  "app.kubernetes.io/instance": "db",
  "helm.sh/chart": "postgresql-16.4.1",
  "kustomize.toolkit.fluxcd.io/name": "apps",
  "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
  "helm.toolkit.fluxcd.io/name": "db",
  "helm.toolkit.fluxcd.io/namespace": "flux-system",
};
const LAST_APPLIED = JSON.stringify({
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name: "web", namespace: "default", labels: { app: "web" } },
  spec: {
    replicas: 3,
    volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { resources: { requests: { storage: "2Gi" } } } }],
  },
});
const ANNOTATIONS: Record<string, string> = {
  "meta.helm.sh/release-name": "db",
  "meta.helm.sh/release-namespace": "default",
  "argocd.argoproj.io/tracking-id": "db-prod:apps/StatefulSet:default/web",
  "argocd.argoproj.io/sync-options": "Prune=false",
  "argocd.argoproj.io/compare-options": "ServerSideDiff=true",
  "kustomize.toolkit.fluxcd.io/force": "enabled",
  "kustomize.toolkit.fluxcd.io/prune": "disabled",
  "kubectl.kubernetes.io/last-applied-configuration": LAST_APPLIED,
};

/** A set complete at the desired 2Gi (claims at the revision), live templates still 1Gi, carrying every tool's keys. */
function complete(): Snapshot {
  const set = makeSet({
    desired: [{ name: "data", storage: "2Gi" }],
    annotations: { [Keys.finalize]: "Recreate", ...ANNOTATIONS },
  });
  const desired = desiredTemplates(set);
  if (!desired.ok) throw new Error(desired.message);
  const revision = revisionOf(desired.templates);
  set.metadata.labels = { ...set.metadata.labels, ...LABELS };
  set.metadata.annotations = {
    ...set.metadata.annotations,
    [Keys.currentRevision]: revision,
    [Keys.updateRevision]: revision,
  };
  set.metadata.generation = 1;
  set.status = { ...set.status, observedGeneration: 1 };
  return snapshot(set, claimsFor(set, { storage: "2Gi", revision }));
}

describe("the re-create keeps what Helm, Argo CD, Flux and kubectl track the set by", () => {
  it("recreatedManifest: every label and annotation of theirs, unchanged", () => {
    const s = complete();
    const desired = desiredTemplates(s.statefulSet);
    if (!desired.ok) throw new Error(desired.message);
    const m = recreatedManifest(s.statefulSet, desired.templates);
    expect(m.metadata.labels).toMatchObject(LABELS);
    expect(m.metadata.annotations).toMatchObject(ANNOTATIONS);
    // The set's own labels too (the selector's), and the new templates.
    expect(m.metadata.labels).toMatchObject(s.statefulSet.metadata.labels!);
    expect(m.spec.volumeClaimTemplates![0]!.spec.resources!.requests!.storage).toBe("2Gi");
  });

  it("F1's record: the manifest the create sends carries them all, byte for byte", () => {
    const s = complete();
    const d = planStep(s, NOW, ALL, {});
    expect(d.reason).toBe("RecordWritten");
    const read = readRecord((d.action as WriteRecord).record);
    if (!read.ok) throw new Error(read.message);
    const m = read.record.manifest;
    for (const [k, v] of Object.entries(LABELS)) expect(m.metadata.labels?.[k], k).toBe(v);
    for (const [k, v] of Object.entries(ANNOTATIONS)) expect(m.metadata.annotations?.[k], k).toBe(v);
    // claimstep's desired-templates annotation goes: the templates now say it (design F1).
    expect(m.metadata.annotations).not.toHaveProperty(Keys.templates);
  });
});
