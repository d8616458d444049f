// The storage side, driving the node model (../node-model.ts): the PV controller binding new
// claims (provisioning a volume of the requested size), the CSI external-resizer expanding
// volumes of grown claims, and its ModifyVolume controller applying VolumeAttributesClasses. The
// model says which step a claim is at and what each step writes; this keeps the timers (when a
// change is noticed, how long the driver takes, the back-off), the backing volumes, the events,
// and the refusals that need the cluster (a running pod using an offline-only driver's volume, a
// flaky driver's attempts, an EBS cooldown). The recordings in test/fixtures/storage/ are the
// reference (test/adapters/sim/storage-conformance.test.ts).
import type { PersistentVolumeClaim } from "../../../core/kube/index.js";
import { toBytes } from "../../../core/kube/index.js";
import {
  bound,
  controllerResizeError,
  controllerResizeInfeasible,
  controllerResizeStarted,
  type DriverBehaviour,
  expansionRefusal,
  finishesOnController,
  handedBackToNode,
  hasCondition,
  modifyCancelled,
  modifyCompleted,
  modifyInfeasible,
  modifyInProgress,
  modifyPending,
  modifyRefusal,
  modifyStage,
  NODE_EXPANSION_NOT_REQUIRED,
  nodeResizePending,
  resizeFinished,
  resizeStage,
} from "../node-model.js";
import type { Json } from "../store.js";
import {
  BINDER,
  type ControllerContext,
  claimsOf,
  driverOf,
  emitEvent,
  RESIZER,
  runningPodsUsing,
  type Volume,
  writeClaim,
} from "./context.js";

const bytes = (q: string | undefined): bigint => (q === undefined ? 0n : toBytes(q));
const key = (pvc: PersistentVolumeClaim) => pvc.metadata.uid!;
const classOf = (pvc: Json | undefined): string | undefined =>
  ((pvc?.spec as Json | undefined)?.volumeAttributesClassName as string | null | undefined) || undefined;
/** The claim with the status the model wrote. */
const withStatus = (pvc: PersistentVolumeClaim, status: PersistentVolumeClaim["status"]): PersistentVolumeClaim => ({
  ...structuredClone(pvc),
  status,
});

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
    const driver = driverOf(this.ctx, className);
    if (!this.ready(this.bindAt, pvc, driver.provisionMs ?? this.ctx.latencies.bindMs)) return;
    this.bindAt.delete(key(pvc));
    const request = pvc.spec.resources?.requests?.storage ?? "0";
    const next = withStatus(pvc, bound(pvc.spec.accessModes ?? ["ReadWriteOnce"], request, vac));
    // The volume is kept by the simulation (no PersistentVolume objects); binding names it in
    // spec.volumeName as the PV controller does (the v1.34 spec diff of a refusal shows it), but
    // not on the v1.24 server, whose captures (pvc-change-class.txt) show it empty.
    if (this.ctx.bindsVolumeName) next.spec.volumeName = `pvc-${pvc.metadata.uid}`;
    this.ctx.volumes.set(key(pvc), {
      name: `pvc-${pvc.metadata.uid}`,
      bytes: bytes(request),
      ...(vac ? { volumeAttributesClassName: vac } : {}),
    });
    writeClaim(this.ctx, next, BINDER, "persistentvolume-controller");
  }

  private resize(pvc: PersistentVolumeClaim): void {
    const volume = this.ctx.volumes.get(key(pvc));
    if (!volume) return;
    const driver = driverOf(this.ctx, pvc.spec.storageClassName);
    const stage = resizeStage(pvc, volume.bytes, driver);
    const uid = key(pvc);
    const at = this.ctx.clock.stamp();
    if (stage === "idle" || stage === "node") return;
    if (stage === "hand-back") {
      if (!this.ready(this.resizeAt, pvc, this.ctx.latencies.reactMs)) return;
      this.resizeAt.delete(uid);
      writeClaim(this.ctx, withStatus(pvc, handedBackToNode(pvc.status, at)), RESIZER, "external-resizer");
      return;
    }
    if (stage === "start") {
      // Once the change is noticed.
      if (!this.ready(this.resizeAt, pvc, this.ctx.latencies.reactMs)) return;
      this.resizeAt.delete(uid);
      const started = controllerResizeStarted(pvc.status, pvc.spec.resources!.requests!.storage!, at);
      writeClaim(this.ctx, withStatus(pvc, started), RESIZER, "external-resizer");
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
    const target = bytes(pvc.status?.allocatedResources?.storage);
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
        if (!hasCondition(pvc, "ControllerResizeError"))
          writeClaim(
            this.ctx,
            withStatus(pvc, controllerResizeError(pvc.status, error, at)),
            RESIZER,
            "external-resizer",
          );
        retry();
        return;
      }
    }
    const refusal = expansionRefusal(driver, target, pvc.spec.storageClassName);
    if (refusal) {
      writeClaim(
        this.ctx,
        withStatus(pvc, controllerResizeInfeasible(pvc.status, refusal, at)),
        RESIZER,
        "external-resizer",
      );
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
        const failed = controllerResizeError(pvc.status, `failed to expand pvc with ${error}`, at);
        writeClaim(this.ctx, withStatus(pvc, failed), RESIZER, "external-resizer");
        emitEvent(this.ctx, regarding, "Warning", "VolumeResizeFailed", `${resizer}: ${error}`, "external-resizer");
        retry();
        return;
      }
      this.modifiedAt.set(uid, this.ctx.clock.nowMs());
    }

    // The PV's capacity is the new size from here.
    volume.bytes = target;
    if (finishesOnController(pvc, driver)) {
      const next = withStatus(pvc, resizeFinished(pvc.status));
      if (driver.nodeExpansion === "none")
        next.metadata.annotations = { ...(next.metadata.annotations ?? {}), [NODE_EXPANSION_NOT_REQUIRED]: "true" };
      writeClaim(this.ctx, next, RESIZER, "external-resizer");
    } else writeClaim(this.ctx, withStatus(pvc, nodeResizePending(pvc.status, at)), RESIZER, "external-resizer");
  }

  private modify(pvc: PersistentVolumeClaim): void {
    const uid = key(pvc);
    const volume = this.ctx.volumes.get(uid);
    if (!volume) return;
    const driver = driverOf(this.ctx, pvc.spec.storageClassName);
    const next = modifyStage(pvc, driver, this.parked.get(uid));
    const regarding = {
      kind: "PersistentVolumeClaim",
      namespace: pvc.metadata.namespace ?? "default",
      name: pvc.metadata.name,
    };
    switch (next.stage) {
      case "idle":
        this.modifyAt.delete(uid);
        this.parked.delete(uid);
        return;
      case "unsupported": // no MODIFY_VOLUME: the resizer runs no modify controller (issue 36 point 5)
      case "refused":
      case "parked":
        return;
      case "finish":
        if (!this.ready(this.modifyAt, pvc, driver.modifyMs ?? this.ctx.latencies.modifyMs)) return;
        this.modifyAt.delete(uid);
        this.modified(pvc, next.target, volume, driver, regarding);
        return;
      case "cancel":
        // The modifier stops there, clearing its conditions; the last modifyVolumeStatus stays.
        this.modifyAt.delete(uid);
        this.parked.delete(uid);
        if (hasCondition(pvc, "ModifyingVolume")) {
          writeClaim(this.ctx, withStatus(pvc, modifyCancelled(pvc.status)), RESIZER, "external-resizer");
          emitEvent(this.ctx, regarding, "Normal", "VolumeModifyCancelled", "Cancelled modify.", "external-resizer");
        }
        return;
      case "start":
        this.startModify(pvc, next.target, driver, regarding);
        return;
    }
  }

  /** The change is noticed, then the class looked up: Pending while it does not exist, else ControllerModifyVolume. */
  private startModify(
    pvc: PersistentVolumeClaim,
    wanted: string,
    driver: DriverBehaviour,
    regarding: { kind: string; namespace: string; name: string },
  ): void {
    const uid = key(pvc);
    if (!this.ready(this.modifyAt, pvc, this.ctx.latencies.reactMs)) return;
    this.modifyAt.delete(uid);
    if (!this.ctx.store.peek("volumeattributesclasses", undefined, wanted)) {
      this.parked.set(uid, wanted);
      if (pvc.status?.modifyVolumeStatus?.status !== "Pending")
        writeClaim(this.ctx, withStatus(pvc, modifyPending(pvc.status)), RESIZER, "external-resizer");
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
    const started = modifyInProgress(pvc.status, wanted, this.ctx.clock.stamp());
    writeClaim(this.ctx, withStatus(pvc, started), RESIZER, "external-resizer");
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
    const refusal = modifyRefusal(driver, target, parameters, volume.name);
    if (refusal) {
      const refused = modifyInfeasible(pvc.status, target, refusal, this.ctx.clock.stamp());
      writeClaim(this.ctx, withStatus(pvc, refused), RESIZER, "external-resizer");
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
    writeClaim(this.ctx, withStatus(pvc, modifyCompleted(pvc.status, target)), RESIZER, "external-resizer");
    emitEvent(
      this.ctx,
      regarding,
      "Normal",
      "VolumeModifySuccessful",
      `external resizer modified volume ${pvc.metadata.name} with vac ${target} successfully`,
      "external-resizer",
    );
  }
}
