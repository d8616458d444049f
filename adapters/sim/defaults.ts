// The API server's defaulting of a StatefulSet's pod template (SetDefaults_PodSpec,
// SetDefaults_Container, SetDefaults_ContainerPort), and how the template serialises
// (`metadata.creationTimestamp: null`, `resources: {}`): the StatefulSet controller hashes the
// template as stored, so with these a set gets the same revision names as on a real cluster
// (fixtures/apiserver/sts-partitioned-after.json: `web-6ff65b68cb`, `web-7c4fb86845`). The values are
// core/kube/pod-defaults.ts's, the table the GitOps edit reads too.
import { CONTAINER_DEFAULTS, POD_SPEC_DEFAULTS, PORT_DEFAULTS, pullPolicyFor } from "../../core/kube/index.js";
import type { Json } from "./store.js";

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function defaultContainer(c: Json): void {
  if (!c.imagePullPolicy) c.imagePullPolicy = pullPolicyFor(String(c.image ?? ""));
  for (const [k, v] of Object.entries(CONTAINER_DEFAULTS)) c[k] ??= structuredClone(v);
  for (const p of (c.ports as Json[] | undefined) ?? [])
    if (isObject(p)) for (const [k, v] of Object.entries(PORT_DEFAULTS)) p[k] ??= v;
}

/** Default a pod template in place (a StatefulSet's `spec.template`). */
export function defaultPodTemplate(template: Json): void {
  const m = (template.metadata ??= {}) as Json;
  if (!("creationTimestamp" in m)) m.creationTimestamp = null;
  const spec = (template.spec ??= {}) as Json;
  for (const list of ["initContainers", "containers"]) {
    for (const c of (spec[list] as Json[] | undefined) ?? []) if (isObject(c)) defaultContainer(c);
  }
  for (const [k, v] of Object.entries(POD_SPEC_DEFAULTS)) spec[k] ??= structuredClone(v);
}

/**
 * Default a StatefulSet in place, as the API server decodes every create and update:
 * SetDefaults_StatefulSet (podManagementPolicy OrderedReady; updateStrategy RollingUpdate with
 * partition 0 and, with `maxUnavailable` (MaxUnavailableStatefulSet on, as the v1.34 server of
 * the e2e suite runs; the v1.24 capture's re-created set had it off), maxUnavailable 1; replicas 1;
 * revisionHistoryLimit 10), the pod template's defaults, and each claim template's as a
 * PersistentVolumeClaim's (apiVersion and kind, volumeMode Filesystem, status.phase Pending), as
 * statefulset-web.json and the v1.34 server (test/e2e/conformance.test.ts) show them.
 */
export function defaultStatefulSet(set: Json, opts: { maxUnavailable?: boolean } = {}): void {
  const spec = set.spec as Json | undefined;
  if (!isObject(spec)) return;
  if (isObject(spec.template)) defaultPodTemplate(spec.template);
  spec.podManagementPolicy ??= "OrderedReady";
  const strategy = (isObject(spec.updateStrategy) ? spec.updateStrategy : (spec.updateStrategy = {})) as Json;
  if (!strategy.type) {
    strategy.type = "RollingUpdate";
    strategy.rollingUpdate ??= {};
  }
  if (strategy.type === "RollingUpdate" && isObject(strategy.rollingUpdate)) {
    strategy.rollingUpdate.partition ??= 0;
    if (opts.maxUnavailable) strategy.rollingUpdate.maxUnavailable ??= 1;
  }
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  const templates = spec.volumeClaimTemplates as Json[] | undefined;
  templates?.forEach((t, i) => {
    if (!isObject(t)) return;
    if (isObject(t.spec)) t.spec.volumeMode ??= "Filesystem";
    const status = (isObject(t.status) ? t.status : (t.status = {})) as Json;
    status.phase ??= "Pending";
    // In the server's order (kind, apiVersion first), so that a template sent without them equals the one stored.
    const { kind = "PersistentVolumeClaim", apiVersion = "v1", ...rest } = t;
    templates[i] = { kind, apiVersion, ...rest };
  });
}

/**
 * SetDefaults_StatefulSet's `persistentVolumeClaimRetentionPolicy` (StatefulSetAutoDeletePVC, on
 * since 1.27): Retain for whichever of whenDeleted and whenScaled is unset. Applied on create only,
 * so that a set stored without it (seeded as captured) does not change spec on its next write.
 */
export function defaultRetentionPolicy(set: Json): void {
  const spec = set.spec as Json | undefined;
  if (!isObject(spec)) return;
  const p = isObject(spec.persistentVolumeClaimRetentionPolicy) ? spec.persistentVolumeClaimRetentionPolicy : {};
  spec.persistentVolumeClaimRetentionPolicy = {
    whenDeleted: p.whenDeleted ?? "Retain",
    whenScaled: p.whenScaled ?? "Retain",
  };
}
