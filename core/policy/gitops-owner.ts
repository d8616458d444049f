// Which tool applies this StatefulSet from a source of its own (a chart, Git), read from the labels
// and annotations those tools write (issue 35 item 3). `claimstep set` changes the live set only:
// such a tool applies its source again at its next sync, so `set` warns and names the way that does
// not surprise — change the source (docs/admission.md, docs/gitops.md).
//
// The keys, from each tool's source:
// - Helm 3.2+ and 4 (`helm install`/`upgrade`, and the Helm SDK in Flux's helm-controller): the
//   annotations meta.helm.sh/release-name and meta.helm.sh/release-namespace and the label
//   app.kubernetes.io/managed-by: Helm on every object of a release (helm pkg/action/validate.go
//   setMetadataVisitor). Charts set that label themselves (`{{ .Release.Service }}`), so a chart
//   rendered by `helm template` or Argo CD carries it without the annotations.
// - Argo CD: annotation tracking (the default since 3.0) writes
//   argocd.argoproj.io/tracking-id: <app>:<group>/<kind>:<namespace>/<name>; label tracking writes
//   app.kubernetes.io/instance: <app> (Argo CD "Resource Tracking"). That label is also set by most
//   Helm charts (the release name) and by hand, so alone it is a guess.
// - Flux: kustomize-controller labels kustomize.toolkit.fluxcd.io/name and /namespace; helm-controller
//   labels helm.toolkit.fluxcd.io/name and /namespace. A Kustomization (spec.force) or the object
//   (annotation kustomize.toolkit.fluxcd.io/force: enabled) may ask Flux to delete and re-create an
//   object whose apply fails as Invalid (fluxcd/pkg ssa/manager_apply.go shouldForceApply).

/** A tool that applies the set from its own source. */
export interface GitOpsOwner {
  tool: "helm" | "argocd" | "flux-kustomization" | "flux-helmrelease";
  /** The tool and the object that manages the set: `Helm release db (namespace prod)`, `Argo CD Application db-prod`. */
  name: string;
  /** The labels and annotations it was found by, `key: value`. */
  evidence: string[];
  /** Only a guess: a label other tools write as well (app.kubernetes.io/instance, app.kubernetes.io/managed-by). */
  guess: boolean;
  /** The set asks Flux to delete and re-create it when an apply fails as Invalid (kustomize.toolkit.fluxcd.io/force: enabled). */
  fluxForce?: boolean;
}

export const GITOPS_KEYS = {
  helmRelease: "meta.helm.sh/release-name",
  helmNamespace: "meta.helm.sh/release-namespace",
  managedBy: "app.kubernetes.io/managed-by",
  instance: "app.kubernetes.io/instance",
  argoTracking: "argocd.argoproj.io/tracking-id",
  fluxKustomization: "kustomize.toolkit.fluxcd.io/name",
  fluxKustomizationNamespace: "kustomize.toolkit.fluxcd.io/namespace",
  fluxHelmRelease: "helm.toolkit.fluxcd.io/name",
  fluxHelmReleaseNamespace: "helm.toolkit.fluxcd.io/namespace",
  /** Flux's per-object force (fluxcd/pkg ssa): on a 422 Invalid or 409 Conflict, Flux deletes the object and applies it again. */
  fluxForce: "kustomize.toolkit.fluxcd.io/force",
} as const;

interface Meta {
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
}

const nonEmpty = (v: string | undefined): v is string => v !== undefined && v.trim() !== "";
const inNamespace = (name: string, ns: string | undefined) => (nonEmpty(ns) ? `${ns}/${name}` : name);

/**
 * The tools that apply this object from a source of their own, most certain first; empty when
 * none of their keys is there. Pure: reads only the labels and annotations given.
 */
export function gitopsOwners(meta: Meta): GitOpsOwner[] {
  const labels = meta.labels ?? {};
  const annotations = meta.annotations ?? {};
  const K = GITOPS_KEYS;
  const out: GitOpsOwner[] = [];
  const kv = (key: string, value: string) => `${key}: ${value}`;

  const kustomization = labels[K.fluxKustomization];
  if (nonEmpty(kustomization)) {
    const ns = labels[K.fluxKustomizationNamespace];
    const force = annotations[K.fluxForce] === "enabled";
    out.push({
      tool: "flux-kustomization",
      name: `Flux Kustomization ${inNamespace(kustomization, ns)}`,
      evidence: [
        kv(K.fluxKustomization, kustomization),
        ...(nonEmpty(ns) ? [kv(K.fluxKustomizationNamespace, ns)] : []),
        ...(force ? [kv(K.fluxForce, "enabled")] : []),
      ],
      guess: false,
      ...(force ? { fluxForce: true } : {}),
    });
  }
  const helmRelease = labels[K.fluxHelmRelease];
  if (nonEmpty(helmRelease)) {
    const ns = labels[K.fluxHelmReleaseNamespace];
    out.push({
      tool: "flux-helmrelease",
      name: `Flux HelmRelease ${inNamespace(helmRelease, ns)}`,
      evidence: [kv(K.fluxHelmRelease, helmRelease), ...(nonEmpty(ns) ? [kv(K.fluxHelmReleaseNamespace, ns)] : [])],
      guess: false,
    });
  }
  const tracking = annotations[K.argoTracking];
  if (nonEmpty(tracking)) {
    // <app>:<group>/<kind>:<namespace>/<name>; an application outside Argo CD's namespace is <namespace>_<app>.
    const app = tracking.split(":")[0] ?? tracking;
    out.push({
      tool: "argocd",
      name: `Argo CD Application ${app.replace("_", "/")}`,
      evidence: [kv(K.argoTracking, tracking)],
      guess: false,
    });
  }
  const release = annotations[K.helmRelease];
  // helm-controller installs through the Helm SDK, which writes the same annotations: one owner, Flux.
  if (nonEmpty(release) && !nonEmpty(helmRelease)) {
    const ns = annotations[K.helmNamespace];
    out.push({
      tool: "helm",
      name: `Helm release ${release}${nonEmpty(ns) ? ` (namespace ${ns})` : ""}`,
      evidence: [kv(K.helmRelease, release), ...(nonEmpty(ns) ? [kv(K.helmNamespace, ns)] : [])],
      guess: false,
    });
  }
  if (out.length > 0) return out;

  // Nothing certain: the labels other tools write too.
  const instance = labels[K.instance];
  const managedBy = labels[K.managedBy];
  const chart = managedBy?.toLowerCase() === "helm";
  if (nonEmpty(instance))
    out.push({
      tool: "argocd",
      name: `Argo CD Application ${instance} (label tracking)`,
      evidence: [kv(K.instance, instance), ...(chart ? [kv(K.managedBy, managedBy!)] : [])],
      guess: true,
    });
  if (chart)
    out.push({
      tool: "helm",
      name: `a Helm chart${nonEmpty(instance) ? ` (release ${instance})` : ""}`,
      evidence: [kv(K.managedBy, managedBy!), ...(nonEmpty(instance) ? [kv(K.instance, instance)] : [])],
      guess: true,
    });
  return out;
}

/**
 * The warning `claimstep set` prints for `owner` (stderr, `Warning: ` as kubectl's): the change is
 * made on the live set only; what the tool's next sync does with it; the way that does not surprise.
 */
export function gitopsWarning(owner: GitOpsOwner, set: string): string {
  const who = `StatefulSet ${set} ${owner.guess ? "looks managed by" : "is managed by"} ${owner.name} (${owner.evidence.join(", ")})`;
  const helm = owner.tool === "helm";
  const source = helm
    ? "the chart's values"
    : owner.tool === "flux-helmrelease"
      ? "the HelmRelease's values in Git"
      : "Git";
  const sync = helm
    ? "helm upgrade (Helm 3's three-way merge and Helm 4's server-side apply both send what the chart renders)"
    : owner.tool === "argocd"
      ? "sync (automated, self-heal or by hand)"
      : "reconciliation";
  const fix = helm
    ? "change the size in the chart's values (helm upgrade … --set <the chart's persistence size>)"
    : owner.tool === "flux-helmrelease"
      ? "change the size in the HelmRelease's values in Git"
      : "change spec.volumeClaimTemplates in the manifest in Git";
  const force = owner.fluxForce
    ? ` With ${GITOPS_KEYS.fluxForce}: enabled, Flux answers that 422 by deleting the StatefulSet, its pods with it, and creating it again.`
    : "";
  return (
    `${who}: this change is made on the live set only, and ${source} still give the old claim templates. ` +
    `Its next ${sync} sets claimstep.io/volume-claim-templates back where ${source} carry it, and once claimstep has re-created the set with the new templates it sends the old ones again: ` +
    `the API server refuses them (422, the ${helm ? "upgrade" : "sync"} fails) or, through claimstep's admission webhook, they become a rollout back (claims never shrink).${force} ` +
    `The way that does not surprise: ${fix}; with claimstep's admission webhook installed, that apply is the rollout (docs/admission.md).`
  );
}
