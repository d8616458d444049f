// The storage side: the PV controller binding new claims (provisioning a volume of the requested
// size), the CSI external-resizer expanding volumes of grown claims, and its ModifyVolume
// controller applying VolumeAttributesClasses. Each moves the real PVC status fields, in the
// order the real components (external-resizer v2.0.0, kubelet v1.34) write them; the recordings
// in test/fixtures/storage/ are the reference (test/adapters/sim/storage-conformance.test.ts):
//   resize: allocatedResources + allocatedResourceStatuses.storage=ControllerResizeInProgress +
//           condition Resizing → NodeResizePending + Resizing + FileSystemResizePending (the
//           kubelet finishes: NodeResizeInProgress → capacity) |
//           capacity at once + annotation node-expansion-not-required (a driver without node
//           expansion) |
//           ControllerResizeInfeasible + Resizing + ControllerResizeError (driver rejected it;
//           the same size is not retried, a changed request, larger or lowered, is) |
//           ControllerResizeError while an offline-only driver finds the volume in use by a
//           running pod (re-checked within reactMs once no running pod uses it) |
//           after the node refused (NodeResizeInfeasible + NodeResizeError, a few ms): back to
//           NodeResizePending, NodeResizeError staying until the node succeeds.
//   modify: modifyVolumeStatus {InProgress, target} + ModifyingVolume → currentVolumeAttributesClassName,
//           modifyVolumeStatus and the modify conditions cleared |
//           {Infeasible, target} + ModifyingVolume "failed" + ModifyVolumeError (driver refused the
//           class; not retried until the spec names another class) |
//           {Pending} while the class does not exist (not retried until the spec's class changes).
import type { Condition, PersistentVolumeClaim } from "../../../core/k8s.js";
import { formatBytes, toBytes } from "../../../core/quantity.js";
import type { Json } from "../store.js";
import {
  BINDER,
  type ControllerContext,
  claimsOf,
  condition,
  type DriverBehaviour,
  driverOf,
  emitEvent,
  hasCondition,
  RESIZER,
  runningPodsUsing,
  setConditions,
  type Volume,
  writeClaim,
} from "./context.js";

const bytes = (q: string | undefined): bigint => (q === undefined ? 0n : toBytes(q));
const key = (pvc: PersistentVolumeClaim) => pvc.metadata.uid!;
const copy = (pvc: PersistentVolumeClaim) => structuredClone(pvc);
const classOf = (pvc: Json | undefined): string | undefined =>
  ((pvc?.spec as Json | undefined)?.volumeAttributesClassName as string | null | undefined) || undefined;

/** external-resizer's annotation on a claim whose driver needs no node expansion (NodeExpansionNotRequired). */
const NODE_EXPANSION_NOT_REQUIRED = "volume.kubernetes.io/node-expansion-not-required";
const FILE_SYSTEM_RESIZE_PENDING =
  "Waiting for user to (re-)start a pod to finish file system resize of volume on node.";

/** When an operation on a claim is due; per claim uid. */
type Due = Map<string, number>;

/** The controllers' timers and retry counts, per claim uid (due times in ms since the epoch). */
export interface StorageState {
  bindAt: Record<string, number>;
  resizeAt: Record<string, number>;
  resizeAttempts: Record<string, number>;
  modifyAt: Record<string, number>;
  /** Claims left Pending on a class that did not exist, with that class (absent when none). */
  parked?: Record<string, string>;
  /** When each volume was last modified (a driver with `modificationCooldownMs`; absent when none). */
  modifiedAt?: Record<string, number>;
}

/**
 * Set conditions as external-resizer's modifier merges them: one of the same type is replaced
 * where it stands (keeping its lastTransitionTime while it stays True), a new one is appended.
 */
function mergeConditions(pvc: PersistentVolumeClaim, add: Condition[]): void {
  const status = (pvc.status ??= {});
  const next = [...(status.conditions ?? [])];
  for (const c of add) {
    const at = next.findIndex((x) => x.type === c.type);
    if (at < 0) next.push(c);
    else
      next[at] = {
        ...c,
        lastTransitionTime: next[at]!.status === c.status ? next[at]!.lastTransitionTime : c.lastTransitionTime,
      };
  }
  status.conditions = next;
}

export class StorageControllers {
  private readonly bindAt: Due = new Map();
  private readonly resizeAt: Due = new Map();
  private readonly resizeAttempts = new Map<string, number>();
  private readonly modifyAt: Due = new Map();
  /**
   * Claims the modifier left Pending (their class did not exist), with that class: the modifier is
   * queued again only by a change of the claim's spec.volumeAttributesClassName (the informer's
   * update filter), not by the class appearing nor by any other change of the claim. A Pending
   * claim missing here (a state saved before this was kept) is looked at once, as a restarted
   * resizer does.
   */
  private readonly parked = new Map<string, string>();
  /** When each volume was last resized, for a driver with a modification cooldown (AWS EBS). */
  private readonly modifiedAt = new Map<string, number>();
  /** How far the API server's audit log has been read for class changes. */
  private auditSeen = 0;

  constructor(private readonly ctx: ControllerContext) {}

  state(): StorageState {
    return {
      bindAt: Object.fromEntries(this.bindAt),
      resizeAt: Object.fromEntries(this.resizeAt),
      resizeAttempts: Object.fromEntries(this.resizeAttempts),
      modifyAt: Object.fromEntries(this.modifyAt),
      ...(this.parked.size ? { parked: Object.fromEntries(this.parked) } : {}),
      ...(this.modifiedAt.size ? { modifiedAt: Object.fromEntries(this.modifiedAt) } : {}),
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
    this.parked.clear();
    for (const [uid, name] of Object.entries(state.parked ?? {}))
      if (typeof name === "string") this.parked.set(uid, name);
    this.modifiedAt.clear();
    for (const [uid, at] of Object.entries(state.modifiedAt ?? {})) this.modifiedAt.set(uid, at);
    this.auditSeen = 0;
  }

  sync(): void {
    this.noticeClassChanges();
    for (const listed of claimsOf(this.ctx)) {
      if (listed.status?.phase !== "Bound") this.bind(listed);
      else {
        this.resize(listed);
        // The resizer and the modifier work on the same claim with resourceVersion checks: when
        // both write at once (size and class in one patch) one gets a 409 and retries on the
        // claim as the other left it. Modelled as the modifier reading the claim again.
        const pvc = this.ctx.store.peek("persistentvolumeclaims", listed.metadata.namespace, listed.metadata.name) as
          | PersistentVolumeClaim
          | undefined;
        if (pvc) this.modify(pvc);
      }
    }
  }

  /**
   * The modifier's informer queues a claim when its spec.volumeAttributesClassName changes to a
   * name: every write the API server audited, with the claim before and after, is looked at once.
   */
  private noticeClassChanges(): void {
    const audit = this.ctx.store.audit;
    if (this.auditSeen > audit.length) this.auditSeen = 0; // the log was cleared
    for (let i = this.auditSeen; i < audit.length; i++) {
      const e = audit[i]!;
      if (e.resource !== "persistentvolumeclaims" || e.outcome !== "ok" || !e.before || !e.after) continue;
      const now = classOf(e.after);
      if (now && now !== classOf(e.before)) this.parked.delete((e.after.metadata as Json).uid as string);
    }
    this.auditSeen = audit.length;
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
    // The node refused to grow the file system: the resizer hands the expansion back to the node
    // at the size it grew the volume to (the controller call is idempotent and changes nothing),
    // keeping the node's NodeResizeError, whatever the request says since.
    if (allocation === "NodeResizeInfeasible") {
      if (!this.ready(this.resizeAt, pvc, this.ctx.latencies.reactMs)) return;
      this.resizeAt.delete(key(pvc));
      const next = copy(pvc);
      next.status!.allocatedResourceStatuses = {
        ...next.status!.allocatedResourceStatuses,
        storage: "NodeResizePending",
      };
      setConditions(
        next,
        ["FileSystemResizePending"],
        [condition(this.ctx, "FileSystemResizePending", FILE_SYSTEM_RESIZE_PENDING)],
      );
      writeClaim(this.ctx, next, RESIZER, "external-resizer");
      return;
    }
    // Nothing to do: the volume is as large as asked, or the node still has to finish the
    // expansion the controller did (a larger request waits for it).
    if (spec <= volume.bytes) return;
    if (allocation === "NodeResizePending" || allocation === "NodeResizeInProgress") return;
    // An infeasible request waits for the spec to change (the resizer's slow set): a larger one
    // retries, and so does a lowered one (RecoverVolumeExpansionFailure), which lowers
    // allocatedResources as well since the earlier expansion never succeeded.
    if (allocation === "ControllerResizeInfeasible" && allocated === spec) return;
    const driver = driverOf(this.ctx, pvc.spec.storageClassName);
    const uid = key(pvc);
    // No resizer: nobody takes the request up (issue 36 point 5).
    if (driver.resize === "none") return;

    if (allocation !== "ControllerResizeInProgress" || allocated < spec) {
      // markControllerResizeInProgress, once the change is noticed: a fresh Resizing; an earlier
      // controller error and file system resize are dropped (a node's NodeResizeError stays).
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
      setConditions(
        next,
        ["Resizing", "ControllerResizeError", "FileSystemResizePending"],
        [condition(this.ctx, "Resizing")],
      );
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
    const driverName = driver.driverName ?? "sim.csi.claimstep.io";
    const resizer = `resize volume "${volume.name}" by resizer "${driverName}" failed`;
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
          `Unable to expand ${regarding.namespace}/${regarding.name} because CSI driver ${driverName} only supports offline expansion and volume is currently in-use`,
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
    const refusal = this.outOfRange(pvc, driver, target);
    if (refusal) {
      // markControllerExpansionInfeasible: Resizing stays, the driver's error beside it.
      const next = copy(pvc);
      next.status!.allocatedResourceStatuses = {
        ...(next.status!.allocatedResourceStatuses ?? {}),
        storage: "ControllerResizeInfeasible",
      };
      setConditions(
        next,
        [],
        [condition(this.ctx, "ControllerResizeError", `failed to expand pvc with rpc error: ${refusal}`)],
      );
      writeClaim(this.ctx, next, RESIZER, "external-resizer");
      emitEvent(
        this.ctx,
        regarding,
        "Warning",
        "VolumeResizeFailed",
        `${resizer}: rpc error: ${refusal}`,
        "external-resizer",
      );
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
    if (driver.modificationCooldownMs !== undefined) {
      const last = this.modifiedAt.get(uid);
      if (last !== undefined && this.ctx.clock.nowMs() - last < driver.modificationCooldownMs) {
        // AWS EBS: EC2 ModifyVolume refuses within the volume's cooldown; the EBS CSI driver answers
        // Internal with EC2's text, a final error: ControllerResizeError, an event, a retry later.
        const error = `rpc error: code = Internal desc = Could not resize volume "${volume.name}": operation error EC2: ModifyVolume, https response error StatusCode: 400, api error VolumeModificationRateExceeded: You've reached the maximum modification rate per volume limit. Wait at least 6 hours between modifications per EBS volume.`;
        const next = copy(pvc);
        setConditions(
          next,
          ["ControllerResizeError"],
          [condition(this.ctx, "ControllerResizeError", `failed to expand pvc with ${error}`)],
        );
        writeClaim(this.ctx, next, RESIZER, "external-resizer");
        emitEvent(this.ctx, regarding, "Warning", "VolumeResizeFailed", `${resizer}: ${error}`, "external-resizer");
        retry();
        return;
      }
      this.modifiedAt.set(uid, this.ctx.clock.nowMs());
    }

    // The PV's capacity is the new size from here.
    volume.bytes = target;
    const next = copy(pvc);
    const status = next.status!;
    if (next.spec.volumeMode === "Block" || driver.nodeExpansion === "none") {
      // markOverallExpansionAsFinished: no file system to grow, or a driver that needs no node step.
      status.capacity = { ...(status.capacity ?? {}), storage: status.allocatedResources!.storage! };
      delete status.allocatedResourceStatuses!.storage;
      if (!Object.keys(status.allocatedResourceStatuses!).length) delete status.allocatedResourceStatuses;
      setConditions(next, ["Resizing", "ControllerResizeError", "FileSystemResizePending", "NodeResizeError"], []);
      if (driver.nodeExpansion === "none")
        next.metadata.annotations = { ...(next.metadata.annotations ?? {}), [NODE_EXPANSION_NOT_REQUIRED]: "true" };
    } else {
      // markForPendingNodeExpansion: Resizing stays; the kubelet grows the file system where the
      // volume is mounted.
      status.allocatedResourceStatuses = { ...(status.allocatedResourceStatuses ?? {}), storage: "NodeResizePending" };
      setConditions(
        next,
        ["ControllerResizeError", "FileSystemResizePending"],
        [condition(this.ctx, "FileSystemResizePending", FILE_SYSTEM_RESIZE_PENDING)],
      );
    }
    writeClaim(this.ctx, next, RESIZER, "external-resizer");
  }

  /** The driver's OutOfRange refusal of an expansion to `target` bytes ("code = … desc = …"), if it refuses. */
  private outOfRange(pvc: PersistentVolumeClaim, driver: DriverBehaviour, target: bigint): string | undefined {
    // The CSI hostpath driver's words for its --max-volume-size.
    if (driver.maxStorage !== undefined && target > toBytes(driver.maxStorage))
      return `code = OutOfRange desc = Requested capacity ${target} exceeds maximum allowed ${toBytes(driver.maxStorage)}`;
    if (driver.resize === "infeasible")
      return `code = OutOfRange desc = requested size ${formatBytes(target)} is not supported by the backend of class ${pvc.spec.storageClassName}`;
    return undefined;
  }

  private modify(pvc: PersistentVolumeClaim): void {
    const uid = key(pvc);
    const volume = this.ctx.volumes.get(uid);
    if (!volume) return;
    const wanted = pvc.spec.volumeAttributesClassName || undefined;
    const current = pvc.status?.currentVolumeAttributesClassName || undefined;
    const mvs = pvc.status?.modifyVolumeStatus ?? undefined;
    if (!mvs && wanted === current) {
      // Nothing to do: the class asked for is the one in effect.
      this.modifyAt.delete(uid);
      this.parked.delete(uid);
      return;
    }
    const driver = driverOf(this.ctx, pvc.spec.storageClassName);
    // No MODIFY_VOLUME: the resizer runs no modify controller; nothing is written (issue 36 point 5).
    if (driver.modify === "none") return;
    const regarding = {
      kind: "PersistentVolumeClaim",
      namespace: pvc.metadata.namespace ?? "default",
      name: pvc.metadata.name,
    };
    const target = mvs?.targetVolumeAttributesClassName || undefined;
    if (mvs?.status === "InProgress" && target) {
      // ControllerModifyVolume was called for the target: it ends with that class, whatever the
      // spec says since (a new spec is taken up afterwards).
      if (!this.ready(this.modifyAt, pvc, driver.modifyMs ?? this.ctx.latencies.modifyMs)) return;
      this.modifyAt.delete(uid);
      this.modified(pvc, target, volume, driver, regarding);
      return;
    }
    if (!wanted) {
      // The spec asks for no class any more and nothing is in flight: the modifier stops there,
      // clearing its conditions; the last modifyVolumeStatus stays as it was.
      this.modifyAt.delete(uid);
      this.parked.delete(uid);
      if (hasCondition(pvc, "ModifyingVolume")) {
        const next = copy(pvc);
        setConditions(next, ["ModifyingVolume", "ModifyVolumeError"], []);
        writeClaim(this.ctx, next, RESIZER, "external-resizer");
        emitEvent(this.ctx, regarding, "Normal", "VolumeModifyCancelled", "Cancelled modify.", "external-resizer");
      }
      return;
    }
    // Refused: not retried while the spec names the same class (the modifier's slow set).
    if (mvs?.status === "Infeasible" && target === wanted) return;
    // Pending: not queued again until the spec's class changes.
    if (mvs?.status === "Pending" && this.parked.get(uid) === wanted) return;

    // The change is noticed, then the class looked up.
    if (!this.ready(this.modifyAt, pvc, this.ctx.latencies.reactMs)) return;
    this.modifyAt.delete(uid);
    if (!this.ctx.store.peek("volumeattributesclasses", undefined, wanted)) {
      // markControllerModifyVolumeStatus(Pending): the status only (no target of its own), the
      // conditions as they are.
      this.parked.set(uid, wanted);
      if (mvs?.status !== "Pending") {
        const next = copy(pvc);
        next.status!.modifyVolumeStatus = {
          ...(target ? { targetVolumeAttributesClassName: target } : {}),
          status: "Pending",
        };
        writeClaim(this.ctx, next, RESIZER, "external-resizer");
      }
      emitEvent(
        this.ctx,
        regarding,
        "Warning",
        "VolumeModifyFailed",
        `VAC ${wanted} does not exist.`,
        "external-resizer",
      );
      return;
    }
    this.parked.delete(uid);
    // markControllerModifyVolumeStatus(InProgress), then ControllerModifyVolume: an earlier
    // ModifyVolumeError stays until the modification ends.
    const next = copy(pvc);
    next.status!.modifyVolumeStatus = { targetVolumeAttributesClassName: wanted, status: "InProgress" };
    mergeConditions(next, [this.modifyCondition("ModifyingVolume", `Modifying volume to "${wanted}" is in progress.`)]);
    writeClaim(this.ctx, next, RESIZER, "external-resizer");
    this.modifyAt.set(uid, this.ctx.clock.nowMs() + (driver.modifyMs ?? this.ctx.latencies.modifyMs));
    this.ctx.clock.wakeAt(this.modifyAt.get(uid)!);
  }

  /** ControllerModifyVolume to `target` answered: the class is in effect, or the driver refused it (InvalidArgument). */
  private modified(
    pvc: PersistentVolumeClaim,
    target: string,
    volume: Volume,
    driver: DriverBehaviour,
    regarding: { kind: string; namespace: string; name: string },
  ): void {
    const klass = this.ctx.store.peek("volumeattributesclasses", undefined, target);
    const parameters = Object.keys((klass?.parameters as Record<string, string> | undefined) ?? {});
    const invalid = driver.mutableParameters
      ? parameters.filter((p) => !driver.mutableParameters!.includes(p)).sort()
      : [];
    const refusal =
      driver.modify === "infeasible"
        ? `parameters of VolumeAttributesClass ${target} are not supported for volume ${volume.name}`
        : invalid.length
          ? // The CSI hostpath driver's words for parameters outside --accepted-mutable-parameter-names.
            `invalid parameters: [${invalid.join(" ")}]`
          : undefined;
    const next = copy(pvc);
    if (refusal) {
      next.status!.modifyVolumeStatus = { targetVolumeAttributesClassName: target, status: "Infeasible" };
      mergeConditions(next, [
        this.modifyCondition("ModifyingVolume", `Modifying volume to "${target}" failed. Waiting for retry.`),
        { ...this.modifyCondition("ModifyVolumeError", refusal), reason: "InvalidArgument" },
      ]);
      writeClaim(this.ctx, next, RESIZER, "external-resizer");
      emitEvent(
        this.ctx,
        regarding,
        "Warning",
        "VolumeModifyFailed",
        `rpc error: code = InvalidArgument desc = ${refusal}`,
        "external-resizer",
      );
      return;
    }
    // markControllerModifyVolumeCompleted: the PV's class, then the claim's.
    volume.volumeAttributesClassName = target;
    next.status!.currentVolumeAttributesClassName = target;
    delete next.status!.modifyVolumeStatus;
    setConditions(next, ["ModifyingVolume", "ModifyVolumeError"], []);
    writeClaim(this.ctx, next, RESIZER, "external-resizer");
    emitEvent(
      this.ctx,
      regarding,
      "Normal",
      "VolumeModifySuccessful",
      `external resizer modified volume ${pvc.metadata.name} with vac ${target} successfully`,
      "external-resizer",
    );
  }

  /** A modifier's condition: probed now; lastTransitionTime is kept by mergeConditions while it stays True. */
  private modifyCondition(type: string, message: string): Condition {
    const now = this.ctx.clock.stamp();
    return { type, status: "True", lastProbeTime: now, lastTransitionTime: now, message };
  }
}
