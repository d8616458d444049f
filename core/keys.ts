// The annotation and label keys of the user-facing contract, and the field manager claimstep
// writes as. Imports nothing: every layer may read them.
/** Annotation and label keys of the user-facing contract (docs/design.md). */
export const Keys = {
  strategy: "claimstep.io/volume-claim-update-strategy",
  templates: "claimstep.io/volume-claim-templates",
  updateRevision: "claimstep.io/update-revision",
  currentRevision: "claimstep.io/current-revision",
  status: "claimstep.io/status",
  applyVia: "claimstep.io/apply-via",
  revisionLabel: "claimstep.io/revision",
  /** `ClaimsFirst` (default `None`): pods are replaced only after their claims are ready (P1–P5). */
  podCoordination: "claimstep.io/pod-coordination",
  /** The user's partition, recorded while claimstep holds `spec.updateStrategy.rollingUpdate.partition` (P1, P4). */
  userPartition: "claimstep.io/user-partition",
  /** `WhenRequired` (default `Never`): evict a pod whose volume cannot finish growing while it runs (R1–R3). */
  restartPods: "claimstep.io/restart-pods",
  /** How long a file system resize may wait on its pod before claimstep restarts it (default 5m). */
  restartAfter: "claimstep.io/restart-after",
  /** JSON record of claimstep's last eviction attempt: `{pod, uid, at, result, message?}` (R2, R3). */
  lastEviction: "claimstep.io/last-eviction",
  /** `Recreate` (default `Never`): re-create the set with the new templates once a rollout is done (F1–F4). */
  finalize: "claimstep.io/finalize",
  /**
   * Written by claimstep with a `finalize: Recreate` it writes on the user's behalf (`set --add`,
   * `--remove`, the admission webhook): the desired revision that Recreate was written for. Once
   * the set was re-created at it, a later change no longer re-creates (docs/finalize.md); absent:
   * the Recreate is the user's, for every change.
   */
  finalizeFor: "claimstep.io/finalize-for",
  /** Autogrow policy: `{"threshold":"80%","increase":"25%","max":"1Ti"}` (optional `template`). */
  autogrow: "claimstep.io/autogrow",
  /** The revisions autogrow grew from (comma-separated, the latest last): one growth per revision. */
  autogrownFrom: "claimstep.io/autogrown-from",
  /** The revision whose re-create a merged pull request approved (GitOps mode, before F1). */
  recreateApproved: "claimstep.io/recreate-approved",
  /**
   * On the set, written by claimstep just before it writes the re-create record (F1):
   * `<revision>/<the set's resourceVersion the record was made from>`. Only a writer of the set can
   * write it, so a record it does not name was not written by claimstep and is never acted on.
   */
  recreateRecord: "claimstep.io/recreate-record",
  /** On a set claimstep created (F3): the uid of the record it was created from (F4 tells it from a set someone else created). */
  recreatedFrom: "claimstep.io/recreated-from",
  /**
   * On a set claimstep re-created, once it handed the old set's field ownership back (F5): the uid
   * of the record whose managedFields it restored. Written in the same request as the managedFields.
   */
  ownershipRestored: "claimstep.io/ownership-restored",
  /** JSON array of claim template names to remove (pending while the live set has them; kept as the record of what was removed). */
  removeTemplates: "claimstep.io/remove-claim-templates",
  /** JSON of a held-back `spec.template` that the re-create applies with the added or removed templates. */
  podTemplate: "claimstep.io/pod-template",
  /** Digest of the live `spec.template` the held one was written against: a later change of it is not silently undone. */
  podTemplateBase: "claimstep.io/pod-template-base",
  /** Label on every claim of a removed template: the set it came from (claimstep never deletes a claim). */
  orphanedFrom: "claimstep.io/orphaned-from",
  /** The pod template revision label the StatefulSet controller puts on every pod. */
  podRevisionLabel: "controller-revision-hash",
  betaStorageClass: "volume.beta.kubernetes.io/storage-class",
  /**
   * On a claim, written by the resizer when its driver needs no node expansion (Kubernetes
   * `NodeExpansionNotRequired`): the kubelet skips the node half, capacity is set at once (rule 16).
   */
  nodeExpansionNotRequired: "volume.kubernetes.io/node-expansion-not-required",
} as const;

export const FIELD_MANAGER = "claimstep";
