// The storage side: the PV controller binding new claims (provisioning a volume of the requested
// size), the CSI external-resizer expanding volumes of grown claims, and its ModifyVolume
// controller applying VolumeAttributesClasses. Each moves the real PVC status fields:
//   resize: allocatedResources + allocatedResourceStatuses.storage=ControllerResizeInProgress +
//           condition Resizing → NodeResizePending + FileSystemResizePending (kubelet finishes) |
//           ControllerResizeInfeasible + ControllerResizeError (driver rejected it; a changed
//           request, larger or lowered, retries) |
//           ControllerResizeError while an offline-only driver finds the volume in use by a
//           running pod (re-checked within reactMs once no running pod uses it).
//   modify: modifyVolumeStatus {target, Pending|InProgress|Infeasible} + ModifyingVolume /
//           ModifyVolumeError → currentVolumeAttributesClassName, modifyVolumeStatus cleared.
import type { PersistentVolumeClaim } from "../../../core/k8s.js";
import { formatBytes, toBytes } from "../../../core/quantity.js";
import {
  BINDER,
  type ControllerContext,
  claimsOf,
  condition,
  driverOf,
  emitEvent,
  hasCondition,
  RESIZER,
  runningPodsUsing,
  setConditions,
  writeClaim,
} from "./context.js";

const bytes = (q: string | undefined): bigint => (q === undefined ? 0n : toBytes(q));
const key = (pvc: PersistentVolumeClaim) => pvc.metadata.uid!;
const copy = (pvc: PersistentVolumeClaim) => structuredClone(pvc);

/** When an operation on a claim is due; per claim uid. */
type Due = Map<string, number>;

/** The controllers' timers and retry counts, per claim uid (due times in ms since the epoch). */
export interface StorageState {
  bindAt: Record<string, number>;
  resizeAt: Record<string, number>;
  resizeAttempts: Record<string, number>;
  modifyAt: Record<string, number>;
}

export class StorageControllers {
  private readonly bindAt: Due = new Map();
  private readonly resizeAt: Due = new Map();
  private readonly resizeAttempts = new Map<string, number>();
  private readonly modifyAt: Due = new Map();

  constructor(private readonly ctx: ControllerContext) {}

  state(): StorageState {
    return {
      bindAt: Object.fromEntries(this.bindAt),
      resizeAt: Object.fromEntries(this.resizeAt),
      resizeAttempts: Object.fromEntries(this.resizeAttempts),
      modifyAt: Object.fromEntries(this.modifyAt),
    };
  }

  restore(state: StorageState): void {
    for (const [table, saved] of [
      [this.bindAt, state.bindAt],
      [this.resizeAt, state.resizeAt],
      [this.resizeAttempts, state.resizeAttempts],
      [this.modifyAt, state.modifyAt],
    ] as const) {
      table.clear();
      for (const [uid, n] of Object.entries(saved)) table.set(uid, n);
    }
  }

  sync(): void {
    for (const pvc of claimsOf(this.ctx)) {
      if (pvc.status?.phase !== "Bound") this.bind(pvc);
      else {
        this.resize(pvc);
        this.modify(pvc);
      }
    }
  }

  /** true when `due` has come; schedules it (and a wake-up) the first time it is asked. */
  private ready(table: Due, pvc: PersistentVolumeClaim, delayMs: number): boolean {
    const now = this.ctx.clock.nowMs();
    const due = table.get(key(pvc));
    if (due === undefined) {
      table.set(key(pvc), now + delayMs);
      this.ctx.clock.wakeAt(now + delayMs);
      return delayMs <= 0;
    }
    return now >= due;
  }

  private bind(pvc: PersistentVolumeClaim): void {
    const className = pvc.spec.storageClassName ?? undefined;
    if (!className || !this.ctx.store.peek("storageclasses", undefined, className)) return; // stays Pending
    const vac = pvc.spec.volumeAttributesClassName ?? undefined;
    if (vac && !this.ctx.store.peek("volumeattributesclasses", undefined, vac)) return; // provisioning waits for the class
    if (!this.ready(this.bindAt, pvc, this.ctx.latencies.bindMs)) return;
    this.bindAt.delete(key(pvc));
    const next = copy(pvc);
    const request = next.spec.resources?.requests?.storage ?? "0";
    // The volume is kept by the simulation (no PersistentVolume objects); binding names it in
    // spec.volumeName as the PV controller does (the v1.34 spec diff of a refusal shows it), but
    // not on the v1.24 server, whose captures (pvc-change-class.txt) show it empty.
    if (this.ctx.bindsVolumeName) next.spec.volumeName = `pvc-${pvc.metadata.uid}`;
    this.ctx.volumes.set(key(pvc), {
      name: `pvc-${pvc.metadata.uid}`,
      bytes: bytes(request),
      ...(vac ? { volumeAttributesClassName: vac } : {}),
    });
    next.status = {
      phase: "Bound",
      accessModes: next.spec.accessModes ?? ["ReadWriteOnce"],
      capacity: { storage: request },
      ...(vac ? { currentVolumeAttributesClassName: vac } : {}),
    };
    writeClaim(this.ctx, next, BINDER, "persistentvolume-controller");
  }

  private resize(pvc: PersistentVolumeClaim): void {
    const volume = this.ctx.volumes.get(key(pvc));
    if (!volume) return;
    const spec = bytes(pvc.spec.resources?.requests?.storage);
    const allocation = pvc.status?.allocatedResourceStatuses?.storage;
    const allocated = bytes(pvc.status?.allocatedResources?.storage);
    // Nothing to do: the volume is as large as asked, or the node still has to finish.
    if (spec <= volume.bytes) return;
    if (allocation === "NodeResizePending" && allocated >= spec) return;
    // An infeasible request waits for the spec to change: a larger one retries, and so does a
    // lowered one (RecoverVolumeExpansionFailure), which lowers allocatedResources as well since
    // the earlier expansion never succeeded.
    if (allocation === "ControllerResizeInfeasible" && allocated === spec) return;
    const driver = driverOf(this.ctx, pvc.spec.storageClassName);
    const uid = key(pvc);

    if (allocation !== "ControllerResizeInProgress" || allocated < spec) {
      // markControllerResizeInProgress, once the change is noticed.
      if (!this.ready(this.resizeAt, pvc, this.ctx.latencies.reactMs)) return;
      this.resizeAt.delete(uid);
      const next = copy(pvc);
      const status = (next.status ??= {});
      status.allocatedResources = {
        ...(status.allocatedResources ?? {}),
        storage: pvc.spec.resources!.requests!.storage!,
      };
      status.allocatedResourceStatuses = {
        ...(status.allocatedResourceStatuses ?? {}),
        storage: "ControllerResizeInProgress",
      };
      if (allocation === "ControllerResizeInfeasible") setConditions(next, ["ControllerResizeError"], []);
      if (!hasCondition(pvc, "Resizing"))
        setConditions(next, ["FileSystemResizePending"], [condition(this.ctx, "Resizing")]);
      writeClaim(this.ctx, next, RESIZER, "external-resizer");
      this.resizeAt.set(uid, this.ctx.clock.nowMs() + (driver.resizeMs ?? this.ctx.latencies.resizeMs));
      this.ctx.clock.wakeAt(this.resizeAt.get(uid)!);
      return;
    }

    // An offline-only driver waiting out its back-off after an in-use refusal re-checks soon
    // after the last running pod stopped using the volume (the pod's deletion is an event).
    if (
      driver.resize === "offline" &&
      hasCondition(pvc, "ControllerResizeError") &&
      !runningPodsUsing(this.ctx, pvc).length
    ) {
      const soon = this.ctx.clock.nowMs() + this.ctx.latencies.reactMs;
      const due = this.resizeAt.get(uid);
      if (due !== undefined && due > soon) {
        this.resizeAt.set(uid, soon);
        this.ctx.clock.wakeAt(soon);
      }
    }
    // ControllerExpandVolume, when due.
    if (!this.ready(this.resizeAt, pvc, driver.resizeMs ?? this.ctx.latencies.resizeMs)) return;
    this.resizeAt.delete(uid);
    const target = allocated;
    const resizer = `resize volume "${volume.name}" by resizer "${driver.driverName ?? "sim.csi.claimstep.io"}" failed`;
    const retry = () => {
      this.resizeAt.set(uid, this.ctx.clock.nowMs() + this.ctx.latencies.retryMs);
      this.ctx.clock.wakeAt(this.resizeAt.get(uid)!);
    };
    const regarding = {
      kind: "PersistentVolumeClaim",
      namespace: pvc.metadata.namespace ?? "default",
      name: pvc.metadata.name,
    };

    if (driver.resize === "offline") {
      const users = runningPodsUsing(this.ctx, pvc);
      if (users.length) {
        const error = `${resizer}: rpc error: code = FailedPrecondition desc = volume ${volume.name} is in use by pod ${users[0]!.metadata.name}; the driver only supports offline expansion`;
        emitEvent(
          this.ctx,
          regarding,
          "Warning",
          "VolumeResizeFailed",
          `Unable to expand ${regarding.namespace}/${regarding.name} because CSI driver ${driver.driverName ?? "sim.csi.claimstep.io"} only supports offline expansion and volume is currently in-use`,
          "external-resizer",
        );
        if (!hasCondition(pvc, "ControllerResizeError")) {
          const next = copy(pvc);
          setConditions(next, [], [condition(this.ctx, "ControllerResizeError", error)]);
          writeClaim(this.ctx, next, RESIZER, "external-resizer");
        }
        retry();
        return;
      }
    }
    if (driver.resize === "infeasible" || (driver.maxStorage !== undefined && target > toBytes(driver.maxStorage))) {
      const error = `${resizer}: rpc error: code = OutOfRange desc = requested size ${formatBytes(target)} is not supported by the backend of class ${pvc.spec.storageClassName}`;
      const next = copy(pvc);
      next.status!.allocatedResourceStatuses = {
        ...(next.status!.allocatedResourceStatuses ?? {}),
        storage: "ControllerResizeInfeasible",
      };
      setConditions(next, ["Resizing"], [condition(this.ctx, "ControllerResizeError", error)]);
      writeClaim(this.ctx, next, RESIZER, "external-resizer");
      emitEvent(this.ctx, regarding, "Warning", "VolumeResizeFailed", error, "external-resizer");
      return;
    }
    if (driver.resize === "flaky") {
      const attempts = (this.resizeAttempts.get(uid) ?? 0) + 1;
      this.resizeAttempts.set(uid, attempts);
      if (attempts <= (driver.flakyFailures ?? 2)) {
        // A non-final error: external-resizer only records an event and retries.
        emitEvent(
          this.ctx,
          regarding,
          "Warning",
          "VolumeResizeFailed",
          `${resizer}: rpc error: code = Unavailable desc = backend busy, try again`,
          "external-resizer",
        );
        retry();
        return;
      }
      this.resizeAttempts.delete(uid);
    }

    volume.bytes = target;
    const next = copy(pvc);
    const status = next.status!;
    if (next.spec.volumeMode === "Block") {
      // markOverallExpansionAsFinished: no file system to grow.
      status.capacity = { ...(status.capacity ?? {}), storage: status.allocatedResources!.storage! };
      delete status.allocatedResourceStatuses!.storage;
      if (!Object.keys(status.allocatedResourceStatuses!).length) delete status.allocatedResourceStatuses;
      setConditions(next, ["Resizing", "ControllerResizeError", "FileSystemResizePending"], []);
    } else {
      // markForPendingNodeExpansion: kubelet grows the file system where the volume is mounted.
      status.allocatedResourceStatuses = { ...(status.allocatedResourceStatuses ?? {}), storage: "NodeResizePending" };
      setConditions(
        next,
        ["Resizing", "ControllerResizeError"],
        [
          condition(
            this.ctx,
            "FileSystemResizePending",
            "Waiting for user to (re-)start a pod to finish file system resize of volume on node.",
          ),
        ],
      );
    }
    writeClaim(this.ctx, next, RESIZER, "external-resizer");
  }

  private modify(pvc: PersistentVolumeClaim): void {
    const wanted = pvc.spec.volumeAttributesClassName ?? undefined;
    const current = pvc.status?.currentVolumeAttributesClassName ?? undefined;
    const volume = this.ctx.volumes.get(key(pvc));
    const mvs = pvc.status?.modifyVolumeStatus ?? undefined;
    if (wanted && wanted === current && mvs) {
      // The spec went back to the class in use: the pending modification is rolled back.
      this.modifyAt.delete(key(pvc));
      const next = copy(pvc);
      delete next.status!.modifyVolumeStatus;
      setConditions(next, ["ModifyingVolume", "ModifyVolumeError"], []);
      writeClaim(this.ctx, next, RESIZER, "external-resizer");
      return;
    }
    if (!wanted || wanted === current || !volume) return;
    const uid = key(pvc);
    const regarding = {
      kind: "PersistentVolumeClaim",
      namespace: pvc.metadata.namespace ?? "default",
      name: pvc.metadata.name,
    };
    if (mvs?.status === "Infeasible" && mvs.targetVolumeAttributesClassName === wanted) return; // until the spec changes

    if (!this.ctx.store.peek("volumeattributesclasses", undefined, wanted)) {
      if (mvs?.status !== "Pending" || mvs.targetVolumeAttributesClassName !== wanted) {
        const next = copy(pvc);
        next.status!.modifyVolumeStatus = { targetVolumeAttributesClassName: wanted, status: "Pending" };
        writeClaim(this.ctx, next, RESIZER, "external-resizer");
        emitEvent(
          this.ctx,
          regarding,
          "Warning",
          "VolumeModifyFailed",
          `VAC ${wanted} does not exist.`,
          "external-resizer",
        );
      }
      return;
    }
    const driver = driverOf(this.ctx, pvc.spec.storageClassName);
    if (mvs?.status !== "InProgress" || mvs.targetVolumeAttributesClassName !== wanted) {
      if (!this.ready(this.modifyAt, pvc, this.ctx.latencies.reactMs)) return;
      this.modifyAt.delete(uid);
      const next = copy(pvc);
      next.status!.modifyVolumeStatus = { targetVolumeAttributesClassName: wanted, status: "InProgress" };
      setConditions(
        next,
        ["ModifyVolumeError"],
        [condition(this.ctx, "ModifyingVolume", "ModifyVolume operation in progress.")],
      );
      writeClaim(this.ctx, next, RESIZER, "external-resizer");
      this.modifyAt.set(uid, this.ctx.clock.nowMs() + (driver.modifyMs ?? this.ctx.latencies.modifyMs));
      this.ctx.clock.wakeAt(this.modifyAt.get(uid)!);
      return;
    }
    if (!this.ready(this.modifyAt, pvc, driver.modifyMs ?? this.ctx.latencies.modifyMs)) return;
    this.modifyAt.delete(uid);
    const next = copy(pvc);
    if (driver.modify === "infeasible") {
      const error = `rpc error: code = InvalidArgument desc = parameters of VolumeAttributesClass ${wanted} are not supported for volume ${volume.name}`;
      next.status!.modifyVolumeStatus = { targetVolumeAttributesClassName: wanted, status: "Infeasible" };
      setConditions(
        next,
        ["ModifyingVolume"],
        [condition(this.ctx, "ModifyVolumeError", `ModifyVolume failed with error ${error}. Waiting for retry.`)],
      );
      writeClaim(this.ctx, next, RESIZER, "external-resizer");
      emitEvent(this.ctx, regarding, "Warning", "VolumeModifyFailed", error, "external-resizer");
      return;
    }
    volume.volumeAttributesClassName = wanted;
    next.status!.currentVolumeAttributesClassName = wanted;
    delete next.status!.modifyVolumeStatus;
    setConditions(next, ["ModifyingVolume", "ModifyVolumeError"], []);
    writeClaim(this.ctx, next, RESIZER, "external-resizer");
    emitEvent(
      this.ctx,
      regarding,
      "Normal",
      "VolumeModifySuccessful",
      `external resizer modified volume ${pvc.metadata.name} with vac ${wanted} successfully`,
      "external-resizer",
    );
  }
}
