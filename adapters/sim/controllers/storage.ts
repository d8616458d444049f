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

/** One ControllerExpandVolume call: the claim, its volume and driver, and how the resizer names them. */
interface Expansion {
  pvc: PersistentVolumeClaim;
  volume: Volume;
  driver: DriverBehaviour;
  /** The time of the call, as the claim's conditions write it. */
  at: string;
  /** The size to expand to: the claim's allocatedResources. */
  target: bigint;
  driverName: string;
  /** How the resizer's failure messages begin. */
  failed: string;
  regarding: { kind: string; namespace: string; name: string };
}

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
    if (stage === "idle" || stage === "node") return;
    if (stage === "hand-back") this.handBackToNode(pvc);
    else if (stage === "start") this.startResize(pvc, driver);
    else this.controllerExpandVolume(pvc, volume, driver);
  }

  private handBackToNode(pvc: PersistentVolumeClaim): void {
    if (!this.ready(this.resizeAt, pvc, this.ctx.latencies.reactMs)) return;
    this.resizeAt.delete(key(pvc));
    const handedBack = handedBackToNode(pvc.status, this.ctx.clock.stamp());
    writeClaim(this.ctx, withStatus(pvc, handedBack), RESIZER, "external-resizer");
  }

  /** Once the change is noticed: ControllerResizeInProgress, the expansion due after the driver's latency. */
  private startResize(pvc: PersistentVolumeClaim, driver: DriverBehaviour): void {
    const uid = key(pvc);
    if (!this.ready(this.resizeAt, pvc, this.ctx.latencies.reactMs)) return;
    this.resizeAt.delete(uid);
    const started = controllerResizeStarted(pvc.status, pvc.spec.resources!.requests!.storage!, this.ctx.clock.stamp());
    writeClaim(this.ctx, withStatus(pvc, started), RESIZER, "external-resizer");
    this.resizeAt.set(uid, this.ctx.clock.nowMs() + (driver.resizeMs ?? this.ctx.latencies.resizeMs));
    this.ctx.clock.wakeAt(this.resizeAt.get(uid)!);
  }

  /** ControllerExpandVolume, when due: refused (in use, infeasible, a flaky failure, a cooldown) or done. */
  private controllerExpandVolume(pvc: PersistentVolumeClaim, volume: Volume, driver: DriverBehaviour): void {
    this.recheckOfflineSoon(pvc, driver);
    if (!this.ready(this.resizeAt, pvc, driver.resizeMs ?? this.ctx.latencies.resizeMs)) return;
    this.resizeAt.delete(key(pvc));
    const e = this.expansion(pvc, volume, driver);
    if (this.refusedInUse(e) || this.refusedInfeasible(e) || this.failedFlaky(e) || this.refusedInCooldown(e)) return;
    this.expanded(e);
  }

  /**
   * An offline-only driver waiting out its back-off after an in-use refusal re-checks soon
   * after the last running pod stopped using the volume (the pod's deletion is an event).
   */
  private recheckOfflineSoon(pvc: PersistentVolumeClaim, driver: DriverBehaviour): void {
    if (
      driver.resize !== "offline" ||
      !hasCondition(pvc, "ControllerResizeError") ||
      runningPodsUsing(this.ctx, pvc).length
    )
      return;
    const soon = this.ctx.clock.nowMs() + this.ctx.latencies.reactMs;
    const due = this.resizeAt.get(key(pvc));
    if (due !== undefined && due > soon) {
      this.resizeAt.set(key(pvc), soon);
      this.ctx.clock.wakeAt(soon);
    }
  }

  private expansion(pvc: PersistentVolumeClaim, volume: Volume, driver: DriverBehaviour): Expansion {
    const driverName = driver.driverName ?? "sim.csi.claimstep.io";
    return {
      pvc,
      volume,
      driver,
      at: this.ctx.clock.stamp(),
      target: bytes(pvc.status?.allocatedResources?.storage),
      driverName,
      failed: `resize volume "${volume.name}" by resizer "${driverName}" failed`,
      regarding: {
        kind: "PersistentVolumeClaim",
        namespace: pvc.metadata.namespace ?? "default",
        name: pvc.metadata.name,
      },
    };
  }

  /** The resizer tries again after its back-off. */
  private retryResize(pvc: PersistentVolumeClaim): void {
    this.resizeAt.set(key(pvc), this.ctx.clock.nowMs() + this.ctx.latencies.retryMs);
    this.ctx.clock.wakeAt(this.resizeAt.get(key(pvc))!);
  }

  private resizeFailedEvent(e: Expansion, note: string): void {
    emitEvent(this.ctx, e.regarding, "Warning", "VolumeResizeFailed", note, "external-resizer");
  }

  /** An offline-only driver refuses while a running pod uses the volume: ControllerResizeError, a retry. */
  private refusedInUse(e: Expansion): boolean {
    const { pvc, volume, regarding } = e;
    if (e.driver.resize !== "offline") return false;
    const users = runningPodsUsing(this.ctx, pvc);
    if (!users.length) return false;
    const error = `${e.failed}: rpc error: code = FailedPrecondition desc = volume ${volume.name} is in use by pod ${users[0]!.metadata.name}; the driver only supports offline expansion`;
    this.resizeFailedEvent(
      e,
      `Unable to expand ${regarding.namespace}/${regarding.name} because CSI driver ${e.driverName} only supports offline expansion and volume is currently in-use`,
    );
    if (!hasCondition(pvc, "ControllerResizeError"))
      writeClaim(
        this.ctx,
        withStatus(pvc, controllerResizeError(pvc.status, error, e.at)),
        RESIZER,
        "external-resizer",
      );
    this.retryResize(pvc);
    return true;
  }

  /** A size the driver cannot provide: ControllerResizeInfeasible, no retry. */
  private refusedInfeasible(e: Expansion): boolean {
    const refusal = expansionRefusal(e.driver, e.target, e.pvc.spec.storageClassName);
    if (!refusal) return false;
    const infeasible = controllerResizeInfeasible(e.pvc.status, refusal, e.at);
    writeClaim(this.ctx, withStatus(e.pvc, infeasible), RESIZER, "external-resizer");
    this.resizeFailedEvent(e, `${e.failed}: rpc error: ${refusal}`);
    return true;
  }

  /** A flaky driver's first attempts fail: a non-final error, so external-resizer only records an event and retries. */
  private failedFlaky(e: Expansion): boolean {
    if (e.driver.resize !== "flaky") return false;
    const uid = key(e.pvc);
    const attempts = (this.resizeAttempts.get(uid) ?? 0) + 1;
    this.resizeAttempts.set(uid, attempts);
    if (attempts <= (e.driver.flakyFailures ?? 2)) {
      this.resizeFailedEvent(e, `${e.failed}: rpc error: code = Unavailable desc = backend busy, try again`);
      this.retryResize(e.pvc);
      return true;
    }
    this.resizeAttempts.delete(uid);
    return false;
  }

  /**
   * AWS EBS: EC2 ModifyVolume refuses within the volume's cooldown; the EBS CSI driver answers
   * Internal with EC2's text, a final error: ControllerResizeError, an event, a retry later.
   * Outside it, the modification starts a new cooldown.
   */
  private refusedInCooldown(e: Expansion): boolean {
    if (e.driver.modificationCooldownMs === undefined) return false;
    const uid = key(e.pvc);
    const last = this.modifiedAt.get(uid);
    if (last !== undefined && this.ctx.clock.nowMs() - last < e.driver.modificationCooldownMs) {
      const error = `rpc error: code = Internal desc = Could not resize volume "${e.volume.name}": operation error EC2: ModifyVolume, https response error StatusCode: 400, api error VolumeModificationRateExceeded: You've reached the maximum modification rate per volume limit. Wait at least 6 hours between modifications per EBS volume.`;
      const failed = controllerResizeError(e.pvc.status, `failed to expand pvc with ${error}`, e.at);
      writeClaim(this.ctx, withStatus(e.pvc, failed), RESIZER, "external-resizer");
      this.resizeFailedEvent(e, `${e.failed}: ${error}`);
      this.retryResize(e.pvc);
      return true;
    }
    this.modifiedAt.set(uid, this.ctx.clock.nowMs());
    return false;
  }

  /** The volume has the new size: done on the controller, or NodeResizePending for the kubelet. */
  private expanded({ pvc, volume, driver, at, target }: Expansion): void {
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
