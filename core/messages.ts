// The message builders that say, for each reason of core/reasons.ts, what happened and what a
// person can do, and the Event of a reason. The planner, the writer verdicts and every interface
// use these.
import { actionTarget } from "./actions.js";
import { Keys } from "./keys.js";
import { type EventReason, type EventType, type Phase, REASONS, type ReasonOf } from "./reasons.js";
import type { Action, EventRecord, PatchClaim, Replaced } from "./types.js";

const VERB: Record<Phase, string> = {
  Idle: "Idle",
  Progressing: "Update",
  Waiting: "Wait",
  Blocked: "Block",
  Complete: "Complete",
};

/**
 * The Event of a reason. Its `action` verb follows the phase (`Block`, `Wait`, `Complete`), or is
 * the type of the action written (`PatchClaim`).
 */
export function eventOf(reason: EventReason, note: string, action?: Action): EventRecord {
  const info: { phase: Phase; event?: EventType } = REASONS[reason];
  return { type: info.event!, reason, action: action?.type ?? VERB[info.phase], note };
}

/** A conclusion under a reason that records an Event: the reason, the message, and the Event saying it. */
export const concluded = <R extends EventReason>(
  reason: R,
  message: string,
): { reason: R; message: string; events: EventRecord[] } => ({ reason, message, events: [eventOf(reason, message)] });

/**
 * The one builder of a Blocked conclusion: a person has to act first, and the Warning Event of
 * its reason says what (docs/design.md "Planner semantics"; phases in core/reasons.ts).
 */
export const blocked = <R extends Extract<EventReason, ReasonOf<"Blocked">>>(reason: R, message: string) =>
  concluded(reason, message);

/** `adding template logs` / `removing template cache` / both. */
const describeShape = (added: readonly string[], removed: readonly string[]): string =>
  [
    added.length ? `adding claim template${added.length > 1 ? "s" : ""} ${added.join(", ")}` : "",
    removed.length ? `removing claim template${removed.length > 1 ? "s" : ""} ${removed.join(", ")}` : "",
  ]
    .filter(Boolean)
    .join(" and ")
    .replace(/^a/, "A");

const setName = (s: { namespace?: string | undefined; name: string }) => `${s.namespace ?? "default"}/${s.name}`;

/** What a claim write changes, for messages and Events: `storage 1Gi → 2Gi; revision …`. */
export function describeChange(
  p: PatchClaim,
  current: { storage?: string | undefined; volumeAttributesClassName?: string | null | undefined } | undefined,
): string {
  const changes: string[] = [];
  if (current?.storage !== p.storage) changes.push(`storage ${current?.storage ?? "?"} → ${p.storage}`);
  if (p.volumeAttributesClassName !== undefined && current?.volumeAttributesClassName !== p.volumeAttributesClassName) {
    changes.push(
      `volumeAttributesClassName ${current?.volumeAttributesClassName ?? "(none)"} → ${p.volumeAttributesClassName}`,
    );
  }
  const stamp = p.classFollows
    ? `volumeAttributesClassName ${p.classFollows} and the revision follow once resized`
    : `revision ${p.labels[Keys.revisionLabel]}`;
  return `${changes.length ? changes.join(", ") : "labels"}; ${stamp}`;
}

/** Message builders, one per situation, named after the reason they go with. */
/** "pods re-created: web-2; claims gone: data-web-2", at most 8 names a group. */
function listReplaced(replaced: readonly Replaced[]): string {
  const groups = new Map<string, string[]>();
  for (const r of replaced)
    groups.set(`${r.kind}s ${r.state}`, [...(groups.get(`${r.kind}s ${r.state}`) ?? []), r.name]);
  return [...groups]
    .map(
      ([what, names]) => `${what}: ${names.slice(0, 8).join(", ")}${names.length > 8 ? `, … (${names.length})` : ""}`,
    )
    .join("; ");
}

export const Messages = {
  // Rule 1.
  notOptedIn: (strategy: string | undefined) =>
    `${Keys.strategy} is ${strategy ?? "not set"}; set it to InPlace to let claimstep update this set's claims`,
  /** Rule 1, for a set without claim templates: opting it in would change nothing. */
  noClaimTemplates: (set: string) =>
    `${set} has no volumeClaimTemplates: claimstep has no claims of it to update (claimstep set ${set} <template> --add --storage 1Gi adds one)`,
  badStrategy: (strategy: string) =>
    `${Keys.strategy} is ${JSON.stringify(strategy)}; it must be InPlace or OnClaimDelete`,
  /** Rule 1 with P4: why a set no longer opted in gets its partition back. */
  optedOut: (strategy: string | undefined) =>
    strategy === "OnDelete"
      ? "spec.updateStrategy.type is OnDelete: claimstep no longer holds the pods back"
      : `${Keys.strategy} is ${strategy ?? "not set"}: claimstep no longer holds the pods back (KEP-4650: OnClaimDelete unblocks the pod rollout at once)`,
  onDelete: () =>
    "spec.updateStrategy.type is OnDelete: claims are not updated automatically (as in KEP-4650); delete a pod's claim to recreate it from the template",
  badMaxUnavailable: (raw: unknown) =>
    `spec.updateStrategy.rollingUpdate.maxUnavailable ${JSON.stringify(raw)} is neither an integer nor a percentage`,
  badApplyVia: (set: { namespace?: string | undefined; name: string }, value: string, accepted: readonly string[]) =>
    `StatefulSet ${setName(set)}: annotation ${Keys.applyVia}=${JSON.stringify(value)} is not one of ${accepted.join(", ")}: fix or remove it (absent = direct)`,

  // Rule 6: predicted answers of the API server.
  unreadableSpec: (claim: string, why: string) => `${claim}: spec.resources.requests.storage is unreadable: ${why}`,
  storageClassMismatch: (claim: string, template: string, have: string | undefined, want: string) =>
    `${claim} has storage class ${have ?? "(none)"} but template "${template}" asks for ${want}; a claim's storage class cannot change once the claim exists. Restore storageClassName ${have ?? "(unset)"} in the desired template, or migrate the data to a new claim by hand`,
  immutableFieldMismatch: (claim: string, template: string, fields: readonly string[]) =>
    `${claim}: template "${template}" changes fields that cannot change after the claim is created (${fields.join("; ")}); only storage, volumeAttributesClassName, labels and annotations can change in place. Restore them in the desired template`,
  claimNotBound: (claim: string, phase: string | undefined, expanding: boolean) =>
    `${claim} is ${phase ?? "not Bound"}; only a Bound claim can be ${expanding ? "expanded" : "moved to another VolumeAttributesClass"}. Waiting for it to bind`,
  staticallyProvisioned: (claim: string) =>
    `${claim} has no storage class (statically provisioned); Kubernetes only expands dynamically provisioned claims`,
  storageClassNotFound: (claim: string, className: string) =>
    `${claim}: StorageClass ${className} does not exist, so the claim cannot be expanded`,
  expansionNotAllowed: (claim: string, className: string) =>
    `${claim}: StorageClass ${className} does not set allowVolumeExpansion: true. Set it (if the driver supports expansion) and the rollout continues`,
  volumeAttributesClassNotFound: (claim: string, template: string, vac: string) =>
    `${claim}: VolumeAttributesClass ${vac} does not exist. Create it or fix volumeAttributesClassName in template "${template}"`,
  // Issue 36 point 6: which Kubernetes version and flags serve the API (the reader's LIST of v1, then v1beta1, both 404).
  noVolumeAttributesClassApi: (claim: string, template: string, vac: string) =>
    `${claim}: template "${template}" names VolumeAttributesClass ${vac} but this cluster serves no VolumeAttributesClass API (storage.k8s.io/v1 and v1beta1 both answer 404). It is GA and on by default from Kubernetes 1.34 (storage.k8s.io/v1); on 1.31–1.33 it is beta and off by default: kube-apiserver needs --feature-gates=VolumeAttributesClass=true --runtime-config=storage.k8s.io/v1beta1=true, kube-controller-manager the same feature gate, and the CSI driver's external-resizer --feature-gates=VolumeAttributesClass=true. A managed cluster that does not let you set them (EKS) needs Kubernetes 1.34. Or remove volumeAttributesClassName from the template`,
  // Issue 36 point 5: AWS EBS's per-volume modification limit (a resize and a VolumeAttributesClass change each count).
  modificationRateLimited: (found: string) =>
    `${found} — AWS EBS allows a limited number of modifications per volume (EC2 ModifyVolume's cooldown, VolumeModificationRateExceeded): the driver tries again by itself and succeeds once the volume's cooldown is over; nothing to do but wait. Every resize and every VolumeAttributesClass change of a volume counts (a claim changing both gets two, rule 19)`,
  // Issue 36 point 5: nothing took up a claim's resize or modification (no resizer, no ControllerModifyVolume).
  driverNotResponding: (c: {
    claim: string;
    namespace: string;
    what: "resize" | "modify";
    request: string;
    capacity: string;
    vac: string;
    className: string | undefined;
    provisioner: string | undefined;
    resizer: string | undefined;
    minutes: number;
  }) => {
    const driver = c.provisioner ?? "its driver";
    const shows =
      c.what === "resize"
        ? `${c.claim} requests ${c.request} but has stayed at ${c.capacity} for more than ${c.minutes} minutes with no sign of a resizer (no Resizing condition, no allocatedResourceStatuses${c.resizer ? `; kube-controller-manager handed it to ${c.resizer}` : ""})`
        : `${c.claim} asks for VolumeAttributesClass ${c.vac} but for more than ${c.minutes} minutes nothing has started the modification (no modifyVolumeStatus)`;
    const check =
      c.what === "resize"
        ? `StorageClass ${c.className ?? "(none)"} allows expansion, but ${driver} may have no resizer (local-path has none). Check: kubectl get csidriver ${driver} (none: not a CSI driver, nothing expands its volumes); that the driver's controller runs a csi-resizer sidecar and what its logs say; kubectl -n ${c.namespace} describe pvc ${c.claim} (ExternalExpanding, VolumeResizeFailed events)`
        : `${driver} may not support ControllerModifyVolume (ceph-csi RBD and TopoLVM do not), or its csi-resizer runs without --feature-gates=VolumeAttributesClass=true. Check the csi-resizer sidecar of ${driver}'s controller and its logs, and kubectl -n ${c.namespace} describe pvc ${c.claim}`;
    return `${shows}. ${check}. The rollout goes on by itself once the claim's status moves; to stop waiting, set the template back to what the claim has`;
  },
  // Issue 36 point 6: the API server dropped spec.updateStrategy.rollingUpdate.maxUnavailable (feature gate off).
  maxUnavailableDropped: (asked: string | undefined, seenIn: string) =>
    `spec.updateStrategy.rollingUpdate.maxUnavailable${asked !== undefined ? ` ${asked}` : ""} was asked for (${seenIn}) but the API server dropped it: its MaxUnavailableStatefulSet feature gate is off (alpha and off by default up to Kubernetes 1.34, and on some later releases). The StatefulSet controller and claimstep go one ordinal at a time (maxUnavailable 1); enable the gate on kube-apiserver and kube-controller-manager (--feature-gates=MaxUnavailableStatefulSet=true) and apply the set again to go faster`,
  // Issue 36 point 5: only the claim's own CSI driver modifies it (its external-resizer), with a class made for it.
  volumeAttributesClassDriverMismatch: (
    claim: string,
    template: string,
    vac: string,
    driver: string,
    storageClass: string,
    provisioner: string,
  ) =>
    `${claim}: VolumeAttributesClass ${vac} is for driver ${driver}, but the claim's StorageClass ${storageClass} is provisioned by ${provisioner}: ${provisioner}'s resizer would never modify it to ${vac}. Name a VolumeAttributesClass whose driverName is ${provisioner} in template "${template}" (or create one), and the rollout continues`,

  // X2: a failed expansion that cannot be undone as the template asks.
  // Issue 36 point 4: a failed expansion the template no longer needs: the rollout goes on, the claim is reported.
  requestUnmet: (
    claim: string,
    namespace: string,
    spec: string,
    allocation: string,
    capacity: string,
    template: string,
    suggest: string,
  ) =>
    `${claim} still requests ${spec}, which its storage could not provide (${allocation}); it stays at ${capacity}, all the template's ${template} needs, so the rollout goes on (KEP-4650: ready at min(template, request)). To clear the failed request (Kubernetes ≥ 1.34, RecoverVolumeExpansionFailure), lower it to more than ${capacity} that the storage can provide, e.g. kubectl -n ${namespace} patch pvc ${claim} --type merge -p '{"spec":{"resources":{"requests":{"storage":"${suggest}"}}}}' (the volume then grows to it; claimstep leaves the claim's request to you)`,
  // Issue 36 point 7: the way out of a failed expansion claimstep asked for (X1).
  resizeFailedWayOut: (
    failed: string,
    set: string,
    namespace: string,
    template: string,
    spec: string,
    capacity: string,
    suggest: string,
  ) =>
    `${failed}. To recover (X1, Kubernetes ≥ 1.34): set the desired template to more than the claim's capacity ${capacity} and no more than the storage provides, e.g. claimstep set ${set} ${template} --storage ${suggest}${namespace !== "default" ? ` -n ${namespace}` : ""}: claimstep lowers the claim's request from ${spec} to it; or make the storage able to provide ${spec} (the resizer retries)`,
  recoveryNeedsNewerServer: (claim: string, spec: string, template: string) =>
    `${claim}: the expansion to ${spec} failed and the template now asks for ${template}, but this API server reports no status.allocatedResourceStatuses: recovery needs Kubernetes 1.34 or later (RecoverVolumeExpansionFailure), which accepts a lower request; until then restore the template to ${spec} or fix the storage backend`,

  // Rules 15–19: what the real CSI components do (docs/design.md).
  nodeExpansionPending: (claim: string, reached: boolean, detail: string | undefined) =>
    `${claim}: ${reached ? "capacity reached, but its" : "volume grown,"} file system resize pending until a pod mounts it (the kubelet grows it on the node)${detail ? ` (${detail})` : ""}`,
  nodeResizeFailed: (
    claim: string,
    error: string | undefined,
    capacity: string | undefined,
    spec: string | undefined,
  ) =>
    `${claim}: the file system expansion on the node failed (NodeResizeError${error ? `: ${error}` : ""}): the claim stays at capacity ${capacity ?? "(none)"}, not ${spec ?? "its request"}, until the node succeeds. Fix the cause on the node (the rollout goes on once the kubelet grows the file system), or change the desired template so that the volume is expanded anew: to a size above ${capacity ?? "the capacity"} and below ${spec ?? "the request"} (claimstep lowers the request, X1) or above ${spec ?? "the request"}`,
  modifyVolumePending: (
    claim: string,
    namespace: string | undefined,
    vac: string,
    current: string | null | undefined,
    exists: boolean | undefined,
  ) => {
    const patch = (value: string) =>
      `kubectl${namespace ? ` -n ${namespace}` : ""} patch pvc ${claim} --type merge -p '{"spec":{"volumeAttributesClassName":${value}}}'`;
    const nudge = `${patch(current ? JSON.stringify(current) : "null")} && ${patch(JSON.stringify(vac))}`;
    return exists === false
      ? `${claim}: the change to VolumeAttributesClass ${vac} is Pending: the class does not exist. Create it; the external-resizer is not woken by that and retries on its resync (up to 10 minutes), or at once after: ${nudge}`
      : `${claim}: the change to VolumeAttributesClass ${vac} is Pending (the class did not exist when it was asked for); the external-resizer is not woken by the class appearing and retries on its resync (up to 10 minutes). To apply it now, set the claim's class back and again: ${nudge}`;
  },
  classAfterResize: (waiting: string, vac: string) =>
    `${waiting}; volumeAttributesClassName ${vac} is written once this resize is done (the resizer's two controllers fight over one claim changing both)`,

  // Rules 7–9.
  claimUpdated: (note: string) => `updating ${note}`,
  notAtRevision: (claim: string, revision: string) => `${claim}: not yet at revision ${revision}`,
  noSlot: (head: string | undefined, ordinal: number, inFlight: number, maxUnavailable: number) => {
    const mustFinish = inFlight - maxUnavailable + 1;
    const which =
      inFlight === 1
        ? "the ordinal in flight is"
        : `${mustFinish} of the ${inFlight} ordinals in flight ${mustFinish === 1 ? "is" : "are"}`;
    return `${head ? `${head}; ` : ""}ordinal ${ordinal} starts when ${which} ready (maxUnavailable ${maxUnavailable})`;
  },
  claimsMissing: (missing: number) =>
    `${missing} claim(s) in scope do not exist yet; the StatefulSet controller creates them, then claimstep updates them`,
  claimBeingDeleted: (first: string, missing: number) =>
    `${first}, then claimstep updates it${missing > 1 ? ` (${missing} claim(s) in scope are missing or being deleted)` : ""}`,

  // Rule 21: the pod of an ordinal is not Ready.
  podNotReady: (pod: string, ordinal: number, updated: boolean) =>
    updated
      ? `claims of ordinal ${ordinal} ready, but pod ${pod} is not Ready: the next ordinal waits for it (KEP-4650: the pod and its claims ready before the next replica)`
      : `pod ${pod} (ordinal ${ordinal}) is not Ready: it uses up a maxUnavailable slot, as for the StatefulSet controller`,

  // Pods (P1–P5, R1–R3).
  podPending: (pod: string, revision: string | undefined, updated: boolean, exists: boolean, held: boolean) =>
    !exists
      ? `claims ready; pod ${pod} is being re-created by the StatefulSet controller`
      : !updated
        ? held
          ? `claims ready; pod ${pod} waits for the partition to reach it before the StatefulSet controller replaces it${revision ? ` (revision ${revision})` : ""}`
          : `claims ready; waiting for the StatefulSet controller to replace pod ${pod}${revision ? ` with revision ${revision}` : ""}`
        : `claims ready; pod ${pod} runs the new pod template and is not Ready yet`,
  partitionHeld: (partition: number, user: number) =>
    `the pod template and the claims change together: holding pods at partition ${partition} (yours, ${user}, recorded in ${Keys.userPartition}) so each pod is replaced only after its claims are ready`,
  partitionLowered: (partition: number, from: number, ordinal: number, set: string) =>
    `claims of ordinals ≥ ${ordinal} are ready: partition ${from} → ${partition}, so the StatefulSet controller replaces pod ${set}-${ordinal}`,
  partitionRestored: (user: number, from: number, why: string) =>
    `${why}: restoring your partition ${user} (was ${from}) and removing ${Keys.userPartition}`,
  podEvicted: (pod: string, claim: string, why: string) =>
    `evicting pod ${pod} so that ${claim} finishes growing when the pod mounts it again: ${why}`,
  restartDue: (waiting: string, pod: string, at: string) =>
    `${waiting}; claimstep restarts pod ${pod} at ${at} (${Keys.restartAfter}) if it is still waiting`,
  restartWaitsForPods: (pod: string, notReady: readonly string[]) =>
    `pod ${pod} needs a restart to finish its volume's resize; claimstep evicts it once every other pod in scope is Ready (not Ready: ${notReady.join(", ")})`,
  restartWaitsForSlot: (pod: string, inFlight: number, maxUnavailable: number) =>
    `pod ${pod} needs a restart to finish its volume's resize, but ${inFlight} ordinals are in flight (maxUnavailable ${maxUnavailable})`,
  budgetCharged: (said: string | undefined, pod: string, until: string) =>
    `${said ?? "a PodDisruptionBudget refused the eviction"} (evicting ${pod}); the refused eviction charges the budget until about ${until}, claimstep asks again then`,
  evictionUnresolved: (pod: string, at: string, until: string) =>
    `the eviction of pod ${pod} attempted at ${at} has no recorded outcome and the pod is still there (refused by a PodDisruptionBudget?); claimstep asks again after about ${until}`,
  budgetRefused: (pod: string, message: string) =>
    `the eviction of pod ${pod} would violate its PodDisruptionBudget: ${message}`,

  // Re-creating the set (F1–F4).
  recordWritten: (record: string, set: string, revision: string) =>
    `re-creating ${set} with the templates of revision ${revision}: the new manifest is recorded in ConfigMap ${record} first, so that a crash at any point leaves what the next step needs`,
  setOrphaned: (namespace: string, set: string, record: string) =>
    `deleting StatefulSet ${namespace}/${set} with propagationPolicy Orphan (uid and resourceVersion preconditions): its pods and claims stay; ConfigMap ${record} holds the set to create`,
  setMissing: (namespace: string, set: string, record: string) =>
    `StatefulSet ${namespace}/${set} is deleted (orphan) mid re-create; its pods and claims are kept; ConfigMap ${record} holds the set to create: claimstep run ${set} -n ${namespace} re-creates it`,
  setFinalizing: (set: string) =>
    `StatefulSet ${set} is being deleted (orphan): waiting for the garbage collector to release its pods and claims, then claimstep creates it anew`,
  setCreating: (namespace: string, set: string, record: string) =>
    `creating StatefulSet ${namespace}/${set} from ConfigMap ${record}, with the new claim templates`,
  awaitingAdoption: (pods: readonly string[]) =>
    `the re-created set has not adopted ${pods.length} pod(s) yet (${pods.slice(0, 5).join(", ")}${pods.length > 5 ? ", …" : ""})`,
  setRecreated: (
    namespace: string,
    set: string,
    oldUid: string,
    newUid: string,
    revision: string,
    kept: { pods: number; claims: number } | undefined,
  ) =>
    `StatefulSet ${namespace}/${set} re-created with the claim templates of revision ${revision} (uid ${oldUid} → ${newUid}); ${
      kept
        ? `every pod and claim kept (${kept.pods} pod(s), ${kept.claims} claim(s): the same uids as recorded)`
        : "pods and claims not compared (the record was written by a claimstep that did not record their uids)"
    }; the record is removed`,
  recreateReplaced: (namespace: string, set: string, replaced: readonly Replaced[], record: string) =>
    `StatefulSet ${namespace}/${set} was re-created, but not every pod and claim recorded before the orphan delete is the same object (uid) any more: ${listReplaced(replaced)}. Their data may be lost: check the PersistentVolumes of those claims (reclaimPolicy Retain keeps the disks). ConfigMap ${record} is kept with the recorded uids; delete it once you have checked, and claimstep goes on`,
  recreateReplacedSetGone: (namespace: string, set: string, replaced: readonly Replaced[], record: string) =>
    `StatefulSet ${namespace}/${set} is gone and not one pod or claim that ConfigMap ${record} records is there any more with its uid (${listReplaced(replaced)}): the delete did not orphan them, or claimstep did not write this record. claimstep creates nothing from it (the set would start on new, empty claims). Check the PersistentVolumes of those claims (reclaimPolicy Retain keeps the disks), re-create the set yourself (from the record's statefulset.json or your manifests), then delete the ConfigMap (kubectl delete configmap ${record} -n ${namespace})`,
  recordDiscarded: (record: string, why: string, armed: boolean) =>
    armed
      ? `disarming ConfigMap ${record} (the set still stands untouched), then discarding it: ${why}`
      : `discarding ConfigMap ${record}, which nothing acted on yet: ${why}`,
  ownershipRestored: (namespace: string, set: string, record: string, owners: readonly string[]) =>
    `handing the field ownership of StatefulSet ${namespace}/${set} back as the old set had it (ConfigMap ${record}): ${
      owners.length ? `${owners.join(", ")} own their fields again` : "no other manager owned a field"
    }; claimstep keeps only its own annotations (server-side apply by Helm, kubectl, Argo CD or Flux finds no conflict with claimstep)`,
  recordArmed: (record: string, set: string) =>
    `the record ConfigMap ${record} matches ${set}: arming it for the orphan delete (a step that read it before cannot discard it any more)`,
  podsNotAtRest: (set: string) =>
    `the re-create of ${set} waits for its pod rollout to be at rest (status.currentRevision = updateRevision, every replica Ready, observedGeneration = generation)`,
  recreateWouldDiffer: (set: string) =>
    `the templates to re-create ${set} with do not hash to the desired revision; re-create it by hand (claimstep never deletes a set it cannot re-create exactly)`,
  recreateProposed: (set: string, revision: string) =>
    `re-creating ${set} with the templates of revision ${revision}: proposed as a pull request that makes the StatefulSet's manifest carry them; merging it approves the re-create`,
  recreateApproved: (set: string, revision: string, detail: string | undefined) =>
    `the re-create of ${set} at revision ${revision} is approved${detail ? ` (${detail})` : ""}; the next steps write the record, delete the set (orphan) and create it again`,
  recordNotOurs: (namespace: string, record: string, set: string, why: string) =>
    `ConfigMap ${namespace}/${record} is not a re-create record claimstep wrote for StatefulSet ${namespace}/${set} as it is now: ${why}. claimstep does not act on it and deletes nothing: if you did not create it, find out who did (kubectl get configmap ${record} -n ${namespace} --show-managed-fields -o yaml) and delete it (kubectl delete configmap ${record} -n ${namespace}); to re-create the set, annotate it ${Keys.finalize}=Recreate or run claimstep finalize ${set} -n ${namespace}`,
  recreatedByOther: (
    namespace: string,
    set: string,
    record: string,
    uid: string,
    revision: string,
    differs: readonly string[],
  ) =>
    `StatefulSet ${namespace}/${set} was created by someone else (uid ${uid}), not by claimstep from ConfigMap ${record}, while its re-create was under way${
      differs.length ? `; it differs from the set claimstep recorded (revision ${revision}): ${differs.join("; ")}` : ""
    }. Its pods and claims are kept. claimstep does nothing more with it: apply a manifest with the claim templates of revision ${revision} (the claims are already there) or your own, then delete ConfigMap ${namespace}/${record} (kubectl delete configmap ${record} -n ${namespace}); the record is kept, disarmed, until you do`,
  recordUnreadable: (why: string) =>
    `${why}: claimstep wrote this record and cannot read it back; fix or delete the ConfigMap (the StatefulSet still exists)`,
  recordUnreadableSetGone: (why: string, namespace: string, set: string) =>
    `StatefulSet ${namespace}/${set} is gone and its re-create record is unreadable (${why}): re-create the set by hand from the record's statefulset.json or from your manifests`,

  // Adding and removing claim templates (core/plan/reshape.ts).
  templatesNeedRecreate: (set: string, added: readonly string[], removed: readonly string[]) =>
    `${describeShape(added, removed)} of ${set} needs the set re-created (the API server forbids editing spec.volumeClaimTemplates): annotate it ${Keys.finalize}=Recreate, or run claimstep finalize ${set}`,
  shapeOnDelete: (set: string, added: readonly string[], removed: readonly string[]) =>
    `${describeShape(added, removed)} of ${set} is refused: its updateStrategy is OnDelete, and claimstep restarts the pods one by one after the re-create only under RollingUpdate; switch to RollingUpdate, or re-create the set and replace its pods yourself`,
  addedClassNotFound: (template: string, cls: string) =>
    `added claim template "${template}" names StorageClass "${cls}", which does not exist: its claims would never bind. Create the class or fix the template; nothing was written`,
  mountsMissingVolume: (set: string, missing: readonly string[], held: boolean, removed: readonly string[]) =>
    `${set}: the ${held ? `pod template in ${Keys.podTemplate}` : "live pod template"} would not fit the re-created set: ${missing.join(", ")}, a volume the set would not have (the API server refuses such a set with 422). ${
      removed.length
        ? `Removing ${removed.join(", ")} needs a pod template that no longer mounts it: write it into ${Keys.podTemplate} (claimstep set … --remove does)`
        : `Add the volume's claim template, or drop the mount`
    }; nothing was written`,
  heldTemplateStale: (set: string, name: string) =>
    `${set}: its pod template changed after ${Keys.podTemplate} was written (${Keys.podTemplateBase} no longer matches), and the re-create would undo that change. Re-apply your manifest (the admission webhook holds its pod template again), or write the held template anew (claimstep set ${name} <template> --add/--remove), or remove ${Keys.podTemplate} and ${Keys.podTemplateBase}; nothing was written`,
  shapePartitionHeld: (set: string, partition: number, user: number) =>
    `holding ${set}'s pods at partition ${partition} (yours, ${user}, recorded in ${Keys.userPartition}) before re-creating it with its new claim templates, so that only claimstep restarts pods, one at a time`,
  claimOrphaned: (claim: string, set: string, namespace: string) =>
    `claim ${claim} belongs to a template ${set} no longer has: kept (claimstep never deletes a claim) and labelled ${Keys.orphanedFrom}=${set}; delete it yourself once its data is safe: kubectl delete pvc -n ${namespace} ${claim}`,
  claimReused: (claim: string, set: string) =>
    `claim ${claim} belongs to a template ${set} has again: it is reused, its ${Keys.orphanedFrom} label removed`,
  shapeClaimMissing: (claim: string, pod: string) =>
    `waiting for the StatefulSet controller to create claim ${claim} for pod ${pod} (it does when it reaches the pod, lowest ordinal first); then claimstep restarts ${pod}`,
  shapeClaimNotBound: (claim: string, pod: string, cls: string | undefined) =>
    `claim ${claim} is not Bound${cls ? ` (StorageClass ${cls} binds at once)` : ""}: claimstep restarts pod ${pod} only once it is, so that the pod does not wait on a volume; check the claim's events (kubectl describe pvc ${claim})`,
  shapeRestartWaits: (pod: string, down: readonly string[], maxUnavailable: number) =>
    `pod ${pod} must restart to take the set's new volumes, but ${down.join(", ")} ${down.length === 1 ? "is" : "are"} not Ready (maxUnavailable ${maxUnavailable}); claimstep waits. A higher pod the StatefulSet controller does not re-create waits on ${pod}: raise maxUnavailable or delete ${pod} yourself`,
  shapeRestart: (pod: string, lacks: readonly string[], keeps: readonly string[]) =>
    `evicting pod ${pod} so that the StatefulSet controller re-creates it with the set's volumes${lacks.length ? ` (mounting ${lacks.join(", ")})` : ""}${keeps.length ? ` (no longer mounting ${keeps.join(", ")})` : ""}: pods restart one at a time from the lowest ordinal, the order in which the controller processes them`,
  shapeWaitsForPods: (set: string, down: readonly string[]) =>
    `every pod of ${set} has its new volumes; waiting for ${down.join(", ")} to be Ready before handing the partition back`,

  // Autogrow.
  autogrowTriggered: (claim: string, usage: string, template: string, from: string, to: string) =>
    `${claim} uses ${usage}: raising template ${template} ${from} → ${to} in ${Keys.templates}; the rollout then grows every ordinal`,
  autogrowLimit: (claim: string, usage: string, template: string, max: string) =>
    `${claim} uses ${usage}, but template ${template} is already at the autogrow max ${max}: raise max in ${Keys.autogrow}, or free space`,
  autogrowNoMetrics: (why: string) => `autogrow skipped this step: ${why}`,

  // Rule 10.
  complete: (ordinals: number, revision: string) =>
    `all ${ordinals} ordinal(s) in scope are at revision ${revision} and ready`,

  // The writer.
  actionNotSupported: (writer: string, action: Action) =>
    action.type === "PatchClaim"
      ? `${writer} cannot apply ${action.type} of ${action.claim}: apply it by hand (kubectl apply --server-side --field-manager=claimstep --force-conflicts) or switch the set to ${Keys.applyVia}: direct`
      : `${writer} cannot apply ${action.type} of ${actionTarget(action)}: partition patches and evictions go to the API server directly; run claimstep with access to it`,
  writerUnavailable: (writer: string, action: Action, why: string) =>
    `${writer} cannot apply ${action.type} of ${actionTarget(action)}: ${why}`,
  pullRequestNotConfigured: (set: { namespace?: string | undefined; name: string }) =>
    `StatefulSet ${setName(set)} asks for ${Keys.applyVia}: pull-request, but no GitOps repository is configured: configure one, or set the annotation to direct`,
  awaitingApproval: (writer: string, planned: string) =>
    `${writer} proposes the change for approval; once approved: ${planned}`,

  // The API server's refusals of a claim write.
  refused: (action: Action, code: number, reason: string | undefined, message: string) =>
    `the API server refused ${action.type} of ${action.namespace}/${actionTarget(action)} (${code}${reason ? ` ${reason}` : ""}): ${message}`,
  quotaExceeded: (said: string) => `${said}. Raise the ResourceQuota's requests.storage or lower the template.`,
  expansionRefused: (said: string) =>
    `${said}. Set allowVolumeExpansion: true on the claim's StorageClass if its driver supports it.`,
  applyRejected: (said: string) => `${said}. Fix the desired templates; nothing was changed.`,

  // Warnings of the status surfaces (core/view/summary.ts setWarnings; issue 35).
  fluxForce: (set: { namespace?: string | undefined; name: string }, annotation: string) =>
    `StatefulSet ${setName(set)} carries ${annotation}: enabled: Flux deletes and re-creates this set (its pods with it, and its claims if whenDeleted is Delete) on any 422 Invalid, which is what a change of its claim templates becomes whenever claimstep's admission webhook does not handle it. Keep the webhook up, with failurePolicy: Fail as deploy/kubernetes/admission.yaml ships it (the change is then refused until the webhook answers, never turned into a 422), and the set opted in to it (claimstep.io/admission=enabled on the set or its namespace); or remove the annotation, in Git and on the set (kubectl annotate sts ${set.name} -n ${set.namespace ?? "default"} ${annotation}-)`,
} as const;
