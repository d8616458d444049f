// Issue 35 item 3: which tool applies a StatefulSet from a source of its own, read from the labels
// and annotations Helm, Argo CD and Flux write (core/policy/gitops-owner.ts), and the warning `claimstep set`
// prints for it.
import { describe, expect, it } from "vitest";
import { gitopsOwners, gitopsWarning } from "../../../core/policy/gitops-owner.js";

describe("gitopsOwners", () => {
  it("none: a set with only its own labels, or none at all", () => {
    expect(gitopsOwners({})).toEqual([]);
    expect(gitopsOwners({ labels: { app: "web" }, annotations: { "claimstep.io/finalize": "Recreate" } })).toEqual([]);
  });

  it("Helm: the release annotations (helm install/upgrade, 3.2+ and 4), with the release and its namespace", () => {
    const [o, ...rest] = gitopsOwners({
      labels: { "app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/instance": "db" },
      annotations: { "meta.helm.sh/release-name": "db", "meta.helm.sh/release-namespace": "prod" },
    });
    expect(rest).toEqual([]); // the instance label is the chart's, not Argo CD's
    expect(o).toEqual({
      tool: "helm",
      name: "Helm release db (namespace prod)",
      evidence: ["meta.helm.sh/release-name: db", "meta.helm.sh/release-namespace: prod"],
      guess: false,
    });
  });

  it("Argo CD: the tracking annotation names the application (and an application outside Argo CD's namespace)", () => {
    expect(
      gitopsOwners({ annotations: { "argocd.argoproj.io/tracking-id": "db-prod:apps/StatefulSet:prod/db" } }),
    ).toEqual([
      {
        tool: "argocd",
        name: "Argo CD Application db-prod",
        evidence: ["argocd.argoproj.io/tracking-id: db-prod:apps/StatefulSet:prod/db"],
        guess: false,
      },
    ]);
    expect(
      gitopsOwners({ annotations: { "argocd.argoproj.io/tracking-id": "team-a_db:apps/StatefulSet:prod/db" } })[0]!
        .name,
    ).toBe("Argo CD Application team-a/db");
  });

  it("Argo CD: annotation+label tracking is one owner, by the annotation", () => {
    const owners = gitopsOwners({
      labels: { "app.kubernetes.io/instance": "db-prod" },
      annotations: { "argocd.argoproj.io/tracking-id": "db-prod:apps/StatefulSet:prod/db" },
    });
    expect(owners.map((o) => [o.tool, o.guess])).toEqual([["argocd", false]]);
  });

  it("Argo CD's label tracking alone is a guess (Helm charts and people set app.kubernetes.io/instance too)", () => {
    const owners = gitopsOwners({ labels: { "app.kubernetes.io/instance": "db-prod" } });
    expect(owners).toEqual([
      {
        tool: "argocd",
        name: "Argo CD Application db-prod (label tracking)",
        evidence: ["app.kubernetes.io/instance: db-prod"],
        guess: true,
      },
    ]);
  });

  it("a chart rendered without Helm's release annotations (Argo CD, helm template): both guesses", () => {
    const owners = gitopsOwners({
      labels: { "app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/instance": "db" },
    });
    expect(owners.map((o) => [o.tool, o.name, o.guess])).toEqual([
      ["argocd", "Argo CD Application db (label tracking)", true],
      ["helm", "a Helm chart (release db)", true],
    ]);
    expect(gitopsOwners({ labels: { "app.kubernetes.io/managed-by": "Helm" } }).map((o) => o.name)).toEqual([
      "a Helm chart",
    ]);
    // Another tool's managed-by is no Helm chart.
    expect(gitopsOwners({ labels: { "app.kubernetes.io/managed-by": "kustomize" } })).toEqual([]);
  });

  it("Flux kustomize-controller: the Kustomization, and its force annotation", () => {
    const [o] = gitopsOwners({
      labels: { "kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": "flux-system" },
      annotations: { "kustomize.toolkit.fluxcd.io/force": "enabled" },
    });
    expect(o).toEqual({
      tool: "flux-kustomization",
      name: "Flux Kustomization flux-system/apps",
      evidence: [
        "kustomize.toolkit.fluxcd.io/name: apps",
        "kustomize.toolkit.fluxcd.io/namespace: flux-system",
        "kustomize.toolkit.fluxcd.io/force: enabled",
      ],
      guess: false,
      fluxForce: true,
    });
    const [plain] = gitopsOwners({ labels: { "kustomize.toolkit.fluxcd.io/name": "apps" } });
    expect(plain).toMatchObject({ name: "Flux Kustomization apps", guess: false });
    expect(plain).not.toHaveProperty("fluxForce");
  });

  it("Flux helm-controller: one owner, the HelmRelease, though the Helm SDK wrote the release annotations", () => {
    const owners = gitopsOwners({
      labels: {
        "helm.toolkit.fluxcd.io/name": "db",
        "helm.toolkit.fluxcd.io/namespace": "flux-system",
        "app.kubernetes.io/managed-by": "Helm",
        "app.kubernetes.io/instance": "db",
      },
      annotations: { "meta.helm.sh/release-name": "prod-db", "meta.helm.sh/release-namespace": "prod" },
    });
    expect(owners.map((o) => [o.tool, o.name])).toEqual([["flux-helmrelease", "Flux HelmRelease flux-system/db"]]);
  });

  it("several tools at once (a Kustomization applying Argo-tracked manifests): each is named, most certain first", () => {
    const owners = gitopsOwners({
      labels: { "kustomize.toolkit.fluxcd.io/name": "apps" },
      annotations: { "argocd.argoproj.io/tracking-id": "db:apps/StatefulSet:prod/db" },
    });
    expect(owners.map((o) => o.tool)).toEqual(["flux-kustomization", "argocd"]);
  });

  it("empty values count as absent", () => {
    expect(
      gitopsOwners({
        labels: { "kustomize.toolkit.fluxcd.io/name": "", "app.kubernetes.io/instance": " " },
        annotations: { "meta.helm.sh/release-name": "", "argocd.argoproj.io/tracking-id": "" },
      }),
    ).toEqual([]);
  });
});

describe("gitopsWarning", () => {
  it("names the tool and the object found, what its next sync does, and the way that does not surprise", () => {
    const [helm] = gitopsOwners({ annotations: { "meta.helm.sh/release-name": "db" } });
    const text = gitopsWarning(helm!, "prod/db");
    expect(text).toMatch(/^StatefulSet prod\/db is managed by Helm release db \(meta\.helm\.sh\/release-name: db\): /);
    expect(text).toContain("next helm upgrade");
    expect(text).toContain("sends the old ones again");
    expect(text).toContain("change the size in the chart's values");
    expect(text).toContain("docs/admission.md");
  });

  it("Argo CD and Flux: Git is the source; a guess says so; Flux's force says what it deletes", () => {
    const [argo] = gitopsOwners({ labels: { "app.kubernetes.io/instance": "db" } });
    const a = gitopsWarning(argo!, "prod/db");
    expect(a).toContain("looks managed by Argo CD Application db (label tracking)");
    expect(a).toContain("next sync (automated, self-heal or by hand)");
    expect(a).toContain("change spec.volumeClaimTemplates in the manifest in Git");
    const [flux] = gitopsOwners({
      labels: { "kustomize.toolkit.fluxcd.io/name": "apps" },
      annotations: { "kustomize.toolkit.fluxcd.io/force": "enabled" },
    });
    const f = gitopsWarning(flux!, "prod/db");
    expect(f).toContain("next reconciliation");
    expect(f).toContain("deleting the StatefulSet, its pods with it");
    const [hr] = gitopsOwners({ labels: { "helm.toolkit.fluxcd.io/name": "db" } });
    expect(gitopsWarning(hr!, "prod/db")).toContain("change the size in the HelmRelease's values in Git");
  });
});
