// The simulated cluster as saved state (SimCluster.toJSON / SimCluster.restore): its shape, and
// the checks a state read back from a file passes before the cluster is rebuilt from it, so that a
// damaged or foreign file is a clear error rather than a cluster that breaks later.
import type { ClockState } from "./clock.js";
import type { DriverBehaviour, Latencies } from "./controllers/context.js";
import type { GarbageCollectorState } from "./controllers/garbage-collector.js";
import type { KubeletState } from "./controllers/kubelet.js";
import type { ScheduledEdit } from "./controllers/people.js";
import type { StorageState } from "./controllers/storage.js";
import type { WorkloadState } from "./controllers/workload.js";
import type { FaultState } from "./faults.js";
import type { SimClusterOptions } from "./options.js";
import { RESOURCES, type StoreState } from "./store.js";

/** Bumped whenever the shape below changes in a way an older claimstep cannot read. */
// 2: ControllerRevisions and PodDisruptionBudgets in the store, pods at real template revisions.
export const SIM_CLUSTER_STATE_VERSION = 2;

export interface SimClusterState {
  version: typeof SIM_CLUSTER_STATE_VERSION;
  /** How the cluster was made, less what lives on below (start time, fault plan, latencies). */
  options: Omit<SimClusterOptions, "start" | "faults" | "latencies">;
  clock: ClockState;
  /** State of the PRNG behind uids and generated names. */
  prng: number;
  faults: FaultState;
  latencies: Latencies;
  /** CSI driver behaviour per StorageClass. */
  drivers: Record<string, DriverBehaviour>;
  /** The backing volume of each bound claim, per claim uid; bytes as a decimal string. */
  volumes: Record<string, { name: string; bytes: string; volumeAttributesClassName?: string }>;
  storage: StorageState;
  kubelet: KubeletState;
  /** People's edits still to come (scenarios that script a person); absent in older files. */
  people?: ScheduledEdit[];
  /** The garbage collector's pending work; absent in older files (none pending). */
  gc?: GarbageCollectorState;
  /** The workloads filling volumes, and the bytes used per claim uid; absent in older files (none). */
  workloads?: WorkloadState;
  store: StoreState;
}

class Invalid extends Error {}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function need(ok: boolean, what: string): asserts ok {
  if (!ok) throw new Invalid(what);
}

const numbers = (v: unknown, what: string) => {
  need(isRecord(v), `${what} is not an object`);
  for (const [k, n] of Object.entries(v)) need(Number.isFinite(n), `${what}.${k} is not a number`);
};

/** `json` as a SimClusterState, or an error saying what is wrong with it. */
export function checkClusterState(json: unknown): SimClusterState {
  if (isRecord(json) && json.version !== SIM_CLUSTER_STATE_VERSION) {
    throw new Error(
      `simulated cluster state of version ${JSON.stringify(json.version)}: this claimstep reads version ${SIM_CLUSTER_STATE_VERSION}`,
    );
  }
  try {
    checkParts(json);
    return json as unknown as SimClusterState;
  } catch (err) {
    if (err instanceof Invalid) throw new Error(`not a simulated cluster's state: ${err.message}`);
    throw err;
  }
}

/** Each part of the state in the order of SimClusterState; throws Invalid at the first that is wrong. */
function checkParts(json: unknown): void {
  need(isRecord(json), "it is not an object");
  need(isRecord(json.options), "options is not an object");
  checkClock(json.clock);
  need(Number.isInteger(json.prng), "prng is not an integer");
  checkFaults(json.faults);
  numbers(json.latencies, "latencies");
  need(
    isRecord(json.drivers) && Object.values(json.drivers).every((d) => isRecord(d) && typeof d.resize === "string"),
    "drivers is not a map of driver behaviours",
  );
  checkVolumes(json.volumes);
  checkTimers(json.storage, "storage", ["bindAt", "resizeAt", "resizeAttempts", "modifyAt"]);
  checkTimers(json.kubelet, "kubelet", ["startAt", "expandAt"]);
  if (json.people !== undefined) checkPeople(json.people);
  if (json.gc !== undefined) {
    need(isRecord(json.gc), "gc is not an object");
    numbers(json.gc.due, "gc.due");
  }
  if (json.workloads !== undefined) checkWorkloads(json.workloads);
  checkStore(json.store);
}

function checkClock(clock: unknown): void {
  need(isRecord(clock) && Number.isFinite(clock.nowMs), "clock.nowMs is not a number");
  need(Array.isArray(clock.wakes) && clock.wakes.every(Number.isFinite), "clock.wakes is not a list of numbers");
}

function checkFaults(faults: unknown): void {
  need(
    isRecord(faults) && isRecord(faults.plan) && Number.isInteger(faults.prng),
    "faults is not a fault plan with its PRNG state",
  );
  numbers(faults.counts, "faults.counts");
}

function checkVolumes(volumes: unknown): void {
  need(isRecord(volumes), "volumes is not an object");
  for (const [uid, v] of Object.entries(volumes)) {
    need(
      isRecord(v) && typeof v.name === "string" && typeof v.bytes === "string" && /^\d+$/.test(v.bytes),
      `volumes.${uid} is not a volume with a size in bytes`,
    );
  }
}

/** A controller's state: each of its `tables` maps a key to a number (due times, attempts). */
function checkTimers(state: unknown, what: string, tables: string[]): void {
  need(isRecord(state), `${what} is not an object`);
  for (const k of tables) numbers(state[k], `${what}.${k}`);
}

function checkPeople(people: unknown): void {
  need(
    Array.isArray(people) &&
      people.every(
        (e: unknown) =>
          isRecord(e) &&
          Number.isFinite(e.atMs) &&
          typeof e.resource === "string" &&
          typeof e.name === "string" &&
          isRecord(e.mergePatch),
      ),
    "people is not a list of scheduled edits",
  );
}

function checkWorkloads(w: unknown): void {
  need(isRecord(w), "workloads is not an object");
  need(
    Array.isArray(w.workloads) &&
      w.workloads.every(
        (x: unknown) =>
          isRecord(x) &&
          typeof x.namespace === "string" &&
          typeof x.claims === "string" &&
          Number.isFinite(x.bytesPerSecond),
      ),
    "workloads.workloads is not a list of workloads",
  );
  need(isRecord(w.used), "workloads.used is not an object");
  for (const [uid, u] of Object.entries(w.used)) {
    need(
      isRecord(u) && typeof u.bytes === "string" && /^\d+$/.test(u.bytes) && Number.isFinite(u.atMs),
      `workloads.used.${uid} is not bytes used at a time`,
    );
  }
}

function checkStore(store: unknown): void {
  need(isRecord(store) && Number.isInteger(store.revision), "store.revision is not an integer");
  need(isRecord(store.objects), "store.objects is not an object");
  for (const [r, entries] of Object.entries(store.objects)) {
    need(Object.hasOwn(RESOURCES, r), `store.objects.${r}: the simulated cluster stores no such resource`);
    need(Array.isArray(entries), `store.objects.${r} is not a list`);
    entries.forEach((e: unknown, i) => checkStoredObject(e, `store.objects.${r}[${i}]`));
  }
}

/** One stored object: its metadata's name, uid and resourceVersion, and its field managers. */
function checkStoredObject(e: unknown, at: string): void {
  need(
    isRecord(e) && isRecord(e.object) && isRecord(e.object.metadata) && typeof e.object.metadata.name === "string",
    `${at} is not an object with a name`,
  );
  need(
    typeof e.object.metadata.resourceVersion === "string" && typeof e.object.metadata.uid === "string",
    `${at} has no uid or resourceVersion`,
  );
  need(
    Array.isArray(e.owners) &&
      e.owners.every(
        (o: unknown) =>
          isRecord(o) &&
          typeof o.manager === "string" &&
          Array.isArray(o.fields) &&
          o.fields.every((p: unknown) => Array.isArray(p) && p.every((s) => typeof s === "string")),
      ),
    `${at}.owners is not a list of field managers`,
  );
}
