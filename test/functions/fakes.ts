// A small in-memory cluster for the tests of the Node server and the relay, where the app is only
// the far end: the real fixture objects, a reader that loads them, and a writer that really
// changes them (with resourceVersion preconditions and the API server's error bodies). The app's
// own tests use the msw fake API server; the CLI's the simulated cluster.
import type { PersistentVolumeClaim, Pod, StatefulSet, StorageClass } from "../../core/k8s.js";
import type { ActionWriter, StateReader } from "../../core/ports.js";
import type { Action, EventRecord, SetRef, Snapshot } from "../../core/types.js";
import { Keys } from "../../core/types.js";
import { ApiError, apiErrorFrom } from "../../adapters/api-error.js";
import { fixtureJson, fixtureStatus as loadFixtureStatus } from "../fixtures/apiserver.js";

export const fixture = (name: string): any => fixtureJson(name);
/** A `.txt` fixture (test/fixtures/apiserver/): the body, then the HTTP code on the last line. */
export const fixtureStatus = (name: string): { code: number; body: any } => loadFixtureStatus(name);
export const fixtureError = (name: string, request?: string): ApiError => {
  const { code, body } = fixtureStatus(name);
  return apiErrorFrom(code, body, request ? { request } : {});
};

export class FakeCluster {
  sets = new Map<string, StatefulSet>();
  pods: Pod[] = fixture("pod-list.json").items;
  claims: PersistentVolumeClaim[] = fixture("pvc-list.json").items;
  storageClasses: StorageClass[] = fixture("storageclass-list.json").items;
  events: Array<{ ref: SetRef; event: EventRecord }> = [];
  applied: Action[] = [];
  annotations: Array<{ ref: SetRef; annotations: Record<string, string> }> = [];

  constructor(annotations: Record<string, string> = {}) {
    const web: StatefulSet = fixture("statefulset-web.json");
    web.metadata.annotations = { ...web.metadata.annotations, ...annotations };
    this.sets.set("default/web", web);
  }

  set(ref: SetRef = { namespace: "default", name: "web" }): StatefulSet {
    const s = this.sets.get(`${ref.namespace}/${ref.name}`);
    if (!s) throw new Error(`no set ${ref.namespace}/${ref.name}`);
    return s;
  }

  reader: StateReader = {
    load: async (ref) => {
      const set = this.sets.get(`${ref.namespace}/${ref.name}`);
      if (!set) throw fixtureError("statefulset-not-found.txt", `GET statefulsets ${ref.namespace}/${ref.name}`);
      const snapshot: Snapshot = {
        statefulSet: structuredClone(set),
        pods: structuredClone(this.pods),
        claims: structuredClone(this.claims),
        storageClasses: structuredClone(this.storageClasses),
        volumeAttributesClasses: undefined,
      };
      return snapshot;
    },
  };

  writer: ActionWriter = {
    name: "fake",
    supports: ["PatchClaim"],
    apply: async (action) => {
      const pvc = this.claims.find((c) => c.metadata.name === action.claim);
      if (!pvc) throw new Error(`no claim ${action.claim}`);
      pvc.spec.resources = { ...pvc.spec.resources, requests: { ...pvc.spec.resources?.requests, storage: action.storage } };
      pvc.metadata.labels = { ...pvc.metadata.labels, ...action.labels };
      this.applied.push(action);
      return { kind: "applied" };
    },
    annotateSet: async (ref, annotations, resourceVersion) => {
      const set = this.set(ref);
      if (resourceVersion !== undefined && resourceVersion !== set.metadata.resourceVersion) {
        throw fixtureError("pvc-patch-stale-rv.txt");
      }
      set.metadata.annotations = { ...set.metadata.annotations, ...annotations };
      set.metadata.resourceVersion = String(Number(set.metadata.resourceVersion ?? "0") + 1);
      this.annotations.push({ ref, annotations });
    },
    recordEvents: async (ref, events) => {
      for (const event of events) this.events.push({ ref, event });
    },
  };

  /** Every write made so far (a test of a read-only route asserts this stays 0). */
  get writes(): number {
    return this.applied.length + this.annotations.length;
  }
}

/** Desired templates: `data` at `storage`. */
export const desiredData = (storage: string): Record<string, string> => ({
  [Keys.strategy]: "InPlace",
  [Keys.templates]: JSON.stringify([
    { metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"], storageClassName: "fast", resources: { requests: { storage } } } },
  ]),
});
