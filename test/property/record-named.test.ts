// Invariant I12-named (docs/design.md F3, "Safety invariants"): with the set gone, claimstep creates
// from a re-create record only the set the record is named after, in the record's namespace. The
// records here are what anyone who may write ConfigMaps can plant: claimstep's layout, armed, the
// kept uids of pods and claims that are there, and a manifest whose name and namespace are drawn
// (the set's own, another, absent). The set is gone as the reader reports it (the record's
// manifest under the set's name and namespace, setMissing). Removing readRecord's name check
// (core/plan/recreate-record.ts) makes this fail: the planner then creates the set the manifest names.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ConfigMap } from "../../core/kube/k8s.js";
import { planStep } from "../../core/plan/plan.js";
import { recordName } from "../../core/plan/recreate-record.js";
import type { Snapshot, WriteRecord } from "../../core/types.js";
import { completeForRecreate, DIRECT_RECREATE } from "../core/builders.js";

const NOW = new Date("2026-11-30T12:00:00Z");

/** A set `web` whose rollout is complete at 2Gi with Recreate asked, and the record F1 writes for it. */
function completeSet(): { s: Snapshot; record: ConfigMap } {
  const s = completeForRecreate();
  const d = planStep(s, NOW, DIRECT_RECREATE);
  if (d.action?.type !== "WriteRecord") throw new Error(`expected F1's record, got ${d.reason}`);
  return { s, record: (d.action as WriteRecord).record };
}

const dnsLabel = fc.stringMatching(/^[a-z][a-z0-9-]{0,14}[a-z0-9]$/);

describe("I12-named: a record creates only the set it is named after", () => {
  it("on planted records of every name and namespace, armed or not, with their pods there or not", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.constant("web"), dnsLabel),
        fc.oneof(fc.constant(undefined), fc.constant("default"), dnsLabel),
        fc.boolean(),
        fc.boolean(),
        (name, namespace, armed, podsThere) => {
          const { s, record } = completeSet();
          const manifest = JSON.parse(record.data!["statefulset.json"]!);
          manifest.metadata.name = name;
          if (namespace === undefined) delete manifest.metadata.namespace;
          else manifest.metadata.namespace = namespace;
          const planted: ConfigMap = {
            ...record,
            metadata: { ...record.metadata, name: recordName("web"), uid: "planted-uid", resourceVersion: "9" },
            data: { ...record.data, "statefulset.json": JSON.stringify(manifest), armed: String(armed) },
          };
          // As the reader reports a missing set: the record's manifest under the set's name and namespace.
          const gone: Snapshot = {
            ...s,
            statefulSet: { ...manifest, metadata: { ...manifest.metadata, name: "web", namespace: "default" } },
            setMissing: true,
            recreateRecord: planted,
            ...(podsThere ? {} : { pods: [], claims: [] }),
          };
          const d = planStep(gone, NOW, DIRECT_RECREATE);
          const ours = name === "web" && (namespace === undefined || namespace === "default");
          if (d.action?.type === "CreateSet") {
            expect(d.action.namespace).toBe("default");
            expect(d.action.set).toBe("web");
            expect(d.action.manifest.metadata.name, `created ${d.action.manifest.metadata.name}`).toBe("web");
            expect([undefined, "default"]).toContain(d.action.manifest.metadata.namespace);
          }
          // The record's own set is created from an armed record whose pods are there; nothing else is.
          expect(d.action?.type === "CreateSet").toBe(ours && armed && podsThere);
          if (!ours) expect(d.reason).toBe("RecordUnreadable");
        },
      ),
      { numRuns: 300 },
    );
  });
});
