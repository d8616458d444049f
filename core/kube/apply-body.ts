// The PersistentVolumeClaim as claimstep applies it, built once for every writer: the direct
// writer sends it as a server-side apply, the GitOps writer writes its fields into a manifest.
import type { PatchClaim } from "../types.js";

export interface ApplyBodyOptions {
  /**
   * Carry the claim's resourceVersion as read (default true). A manifest kept in Git must not:
   * the GitOps controller applies it long after, to whatever version the claim is then at.
   */
  precondition?: boolean;
}

/**
 * Only the fields claimstep owns (a JSON object is valid YAML), and the claim's resourceVersion as
 * the step read it. The API server treats that resourceVersion as a precondition (409 when stale,
 * fixtures pvc-patch-stale-rv.txt), so a step that planned on a snapshot older than one another
 * invocation already acted on loses the race instead of acting (I9), and two racing steps cannot
 * both take an in-flight slot (I4). A repeat of a landed apply whose answer was lost also gets a
 * 409: nothing changes, the next step reads afresh.
 */
export function claimApplyBody(a: PatchClaim, opts: ApplyBodyOptions = {}): Record<string, unknown> {
  const precondition = opts.precondition ?? true;
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: {
      name: a.claim,
      namespace: a.namespace,
      // No empty map: rule 19's size-first apply of a claim never stamped carries no label at all.
      ...(Object.keys(a.labels).length ? { labels: a.labels } : {}),
      ...(Object.keys(a.annotations).length ? { annotations: a.annotations } : {}),
      ...(precondition && a.resourceVersion !== undefined ? { resourceVersion: a.resourceVersion } : {}),
    },
    spec: {
      resources: { requests: { storage: a.storage } },
      ...(a.volumeAttributesClassName !== undefined ? { volumeAttributesClassName: a.volumeAttributesClassName } : {}),
    },
  };
}
