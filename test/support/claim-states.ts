// A claim's state as the storage controllers write it, compared between the real stack's
// recordings (test/fixtures/storage/, issue 34), the real rig's live sequences
// (test/e2e/storage/capture.test.ts) and the simulated cluster (test/adapters/sim/storage-conformance.test.ts):
// names, uids, times and resourceVersions aside; a quantity compared by its bytes.
import { readFileSync } from "node:fs";
import { toBytes } from "../../core/kube/quantity.js";

type Json = Record<string, any>;

/** One state of a claim, as compared: what the storage controllers write, and the request they answer. */
export interface ClaimState {
  request: string | null;
  class: string | null;
  capacity: string | null;
  allocated: string | null;
  allocation: Record<string, string> | null;
  conditions: { type: string; status: string; reason: string | null; message: string | null; probed: boolean }[];
  current: string | null;
  modify: Json | null;
  annotations: Record<string, string>;
}

const quantity = (q: unknown) => (q === undefined || q === null ? null : String(toBytes(String(q))));
/** Annotations the storage controllers write (the others are the StatefulSet controller's or the provisioner's). */
const STORAGE_ANNOTATIONS = ["volume.kubernetes.io/node-expansion-not-required"];

export function stateOf(claim: { spec?: Json; status?: Json; metadata?: Json }): ClaimState {
  const spec = claim.spec ?? {};
  const status = claim.status ?? {};
  const annotations = claim.metadata?.annotations ?? {};
  return {
    request: quantity(spec.resources?.requests?.storage),
    class: spec.volumeAttributesClassName ?? null,
    capacity: quantity(status.capacity?.storage),
    allocated: quantity(status.allocatedResources?.storage),
    allocation: status.allocatedResourceStatuses ?? null,
    conditions: ((status.conditions ?? []) as Json[]).map((c) => ({
      type: c.type,
      status: c.status,
      reason: c.reason ?? null,
      message: c.message ?? null,
      // The modifier stamps lastProbeTime; the resizer and the kubelet leave it null.
      probed: !!c.lastProbeTime,
    })),
    current: status.currentVolumeAttributesClassName ?? null,
    modify: status.modifyVolumeStatus ?? null,
    annotations: Object.fromEntries(
      Object.entries(annotations).filter(([k]) => STORAGE_ANNOTATIONS.includes(k)),
    ) as Record<string, string>,
  };
}

/** Consecutive equal states as one (a write that changed nothing compared here). */
export function distinct(states: ClaimState[]): ClaimState[] {
  return states.filter((s, i) => i === 0 || JSON.stringify(s) !== JSON.stringify(states[i - 1]));
}

/** A recording's states: one per watch event (test/fixtures/storage/<name>.watch.jsonl). */
export function recording(name: string): ClaimState[] {
  const text = readFileSync(new URL(`../fixtures/storage/${name}.watch.jsonl`, import.meta.url), "utf8");
  return distinct(
    text
      .trim()
      .split("\n")
      .map((line) => stateOf(JSON.parse(line) as Json)),
  );
}
