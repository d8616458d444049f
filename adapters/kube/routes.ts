// Every request the direct adapter makes, as data: the client builds URLs from it, the retry
// policy reads it, and the RBAC test checks deploy/kubernetes/rbac.yaml grants exactly these.

/** The RBAC verb of a request (what a Role must grant), not the HTTP method. */
export type Verb = "get" | "list" | "patch" | "create" | "delete";

export interface Route {
  verb: Verb;
  /** API group; "" is the core group. */
  group: string;
  version: string;
  /** Plural resource name, as in URLs and RBAC rules. */
  resource: string;
  namespaced: boolean;
  /** A subresource of one named object (`eviction` of `pods/<name>/eviction`): RBAC names it `pods/eviction`. */
  subresource?: string;
  /**
   * Safe to resend after a 429, 5xx or timeout: reads, and writes whose repeat changes nothing
   * (server-side apply with force, a create with a fixed name, a patch with a resourceVersion
   * precondition that a repeat fails with 409).
   */
  retry: boolean;
  /**
   * A group/version the server may not serve (VolumeAttributesClass before v1.34): kube-apiserver
   * answers such a path with Go's plain `404 page not found`, which is then a NotFound. Any other
   * 404 without a `Status` body is not an API server's answer (KubeClient: NotKubernetes).
   */
  mayBeUnserved?: true;
}

const route = (
  verb: Verb,
  group: string,
  version: string,
  resource: string,
  namespaced: boolean,
  retry = true,
  subresource?: string,
): Route => ({
  verb,
  group,
  version,
  resource,
  namespaced,
  ...(subresource !== undefined ? { subresource } : {}),
  retry,
});

export const Routes = {
  getStatefulSet: route("get", "apps", "v1", "statefulsets", true),
  listStatefulSets: route("list", "apps", "v1", "statefulsets", true),
  /** The same list across all namespaces (for a sweep over every opted-in set). */
  listStatefulSetsAllNamespaces: route("list", "apps", "v1", "statefulsets", false),
  listPods: route("list", "", "v1", "pods", true),
  listClaims: route("list", "", "v1", "persistentvolumeclaims", true),
  listStorageClasses: route("list", "storage.k8s.io", "v1", "storageclasses", false),
  listVolumeAttributesClasses: {
    ...route("list", "storage.k8s.io", "v1", "volumeattributesclasses", false),
    mayBeUnserved: true,
  },
  listVolumeAttributesClassesBeta: {
    ...route("list", "storage.k8s.io", "v1beta1", "volumeattributesclasses", false),
    mayBeUnserved: true,
  },
  applyClaim: route("patch", "", "v1", "persistentvolumeclaims", true),
  // A lost race must surface (409) and a landed-but-unanswered write is repaired by the next step.
  annotateStatefulSet: route("patch", "apps", "v1", "statefulsets", true, false),
  // The partition and the user-partition record in one merge patch (P1, P2, P4): like the
  // annotations, a lost race must surface as 409, never be resent.
  patchPartition: route("patch", "apps", "v1", "statefulsets", true, false),
  // R2: never resent: a 429 is a PodDisruptionBudget's answer, and a landed eviction's repeat
  // would evict the pod that replaced it were it not for the uid precondition.
  evictPod: route("create", "", "v1", "pods", true, false, "eviction"),
  // After a re-create without a template: the orphaned-from label of one claim, a merge patch under
  // the claim's resourceVersion (a lost race surfaces as 409; the next step re-reads).
  labelClaim: route("patch", "", "v1", "persistentvolumeclaims", true, false),
  patchEvent: route("patch", "events.k8s.io", "v1", "events", true),
  createEvent: route("create", "events.k8s.io", "v1", "events", true),
  /** The status page's recent events of claimstep (read-only). */
  listEvents: route("list", "events.k8s.io", "v1", "events", true),
} as const satisfies Record<string, Route>;

/**
 * The re-create's requests (docs/design.md "Re-creating the set", F1–F4), apart: a bigger permission,
 * granted by a Role of its own (deploy/kubernetes/rbac-finalize.yaml) that users may leave out.
 * None is resent: each is repaired or finished by the next step, which reads what landed.
 */
export const RecreateRoutes = {
  getRecord: route("get", "", "v1", "configmaps", true),
  /** The records of one namespace or all (label app.kubernetes.io/managed-by=claimstep): a set deleted mid re-create is found by its record. */
  listRecords: route("list", "", "v1", "configmaps", true),
  listRecordsAllNamespaces: route("list", "", "v1", "configmaps", false),
  createRecord: route("create", "", "v1", "configmaps", true, false),
  patchRecord: route("patch", "", "v1", "configmaps", true, false),
  deleteRecord: route("delete", "", "v1", "configmaps", true, false),
  deleteStatefulSet: route("delete", "apps", "v1", "statefulsets", true, false),
  createStatefulSet: route("create", "apps", "v1", "statefulsets", true, false),
  restoreOwnership: route("patch", "apps", "v1", "statefulsets", true, false),
} as const satisfies Record<string, Route>;

/**
 * The sweeper's election among several `claimstep serve` replicas (CLAIMSTEP_LEASE=true): one
 * Lease in the server's own namespace, granted by a Role there (deploy/kubernetes/rbac.yaml).
 * None is resent: the election's next pass (seconds later) re-reads and decides again, and a
 * write's repeat would fail its resourceVersion precondition anyway.
 */
export const LeaseRoutes = {
  getLease: route("get", "coordination.k8s.io", "v1", "leases", true, false),
  createLease: route("create", "coordination.k8s.io", "v1", "leases", true, false),
  // A merge patch with metadata.resourceVersion: client-go's Update, with the same precondition.
  patchLease: route("patch", "coordination.k8s.io", "v1", "leases", true, false),
} as const satisfies Record<string, Route>;

/** Where a request goes: a namespace and/or a name, as the route needs. */
export interface Target {
  namespace?: string;
  name?: string;
}

const HTTP_METHOD: Record<Verb, string> = { get: "GET", list: "GET", patch: "PATCH", create: "POST", delete: "DELETE" };

export const methodOf = (r: Route): string => HTTP_METHOD[r.verb];

/** The resource as RBAC names it: `pods`, or `pods/eviction` for a subresource. */
export const rbacResource = (r: Route): string => (r.subresource ? `${r.resource}/${r.subresource}` : r.resource);

/** `resource.group` as kubectl and RBAC messages write it (`pods`, `pods/eviction`, `statefulsets.apps`). */
export const qualifiedResource = (r: Route): string => (r.group ? `${rbacResource(r)}.${r.group}` : rbacResource(r));

/** The URL path of a route, e.g. `/apis/apps/v1/namespaces/default/statefulsets/web`. */
export function pathOf(r: Route, t: Target): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  if (r.namespaced && !t.namespace) throw new Error(`${r.verb} ${qualifiedResource(r)} needs a namespace`);
  const ns = r.namespaced ? `/namespaces/${encodeURIComponent(t.namespace!)}` : "";
  const needsName = r.verb === "get" || r.verb === "patch" || r.verb === "delete" || r.subresource !== undefined;
  if (needsName && !t.name) throw new Error(`${r.verb} ${qualifiedResource(r)} needs a name`);
  const name = needsName ? `/${encodeURIComponent(t.name!)}` : "";
  return `${base}${ns}/${r.resource}${name}${r.subresource ? `/${r.subresource}` : ""}`;
}

/** What a request does, for error messages: `list pods in default`, `get statefulsets.apps default/web`. */
export function describeRequest(r: Route, t: Target): string {
  const what = `${r.verb} ${qualifiedResource(r)}`;
  if (t.name) return `${what} ${t.namespace ? `${t.namespace}/` : ""}${t.name}`;
  return t.namespace ? `${what} in ${t.namespace}` : what;
}
