// Issue 35 item 3: `claimstep set` on a set Helm, Argo CD or Flux applies from a source of its own
// says so on stderr (`Warning: …`, as kubectl says its warnings): the change is made on the live set
// only, that tool's next sync sets it back or resends the old templates, and the way that does not
// surprise is to change the chart's values or Git (docs/admission.md). It is a warning: the change
// is still made and the exit code is the plan's.
import { describe, expect, it } from "vitest";
import { Keys } from "../../core/keys.js";
import { main } from "../../functions/cli.js";
import { simOf } from "../support/cli-target.js";

const capture = () => {
  const out = { text: "", isTTY: false, write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: { NO_COLOR: "1" } }, out, err };
};

/** The grow scenario's web, labelled and annotated as `tool` leaves it. */
async function managed(metadata: { labels?: Record<string, string>; annotations?: Record<string, string> }) {
  const s = await simOf("grow");
  await s.sim.admin.mergePatch("statefulsets", "default", "web", { metadata }, { fieldManager: "helm" });
  return s;
}

const HELM = {
  labels: { "app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/instance": "db" },
  annotations: { "meta.helm.sh/release-name": "db", "meta.helm.sh/release-namespace": "default" },
};

describe("claimstep set on a set managed by Helm, Argo CD or Flux", () => {
  it("Helm: warns on stderr naming the release, still writes the change, exit code as without the warning", async () => {
    const plain = await simOf("grow");
    const before = capture();
    const expected = await main(["set", "web", "data", "--storage", "3Gi"], before.io, plain.connect);
    expect(before.err.text).toBe("");

    const s = await managed(HELM);
    const { io, out, err } = capture();
    expect(await main(["set", "web", "data", "--storage", "3Gi"], io, s.connect)).toBe(expected);
    const warnings = err.text.trimEnd().split("\n");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^Warning: StatefulSet default\/web is managed by Helm release db \(namespace default\) \(meta\.helm\.sh\/release-name: db, meta\.helm\.sh\/release-namespace: default\): /,
    );
    expect(warnings[0]).toContain("next helm upgrade");
    expect(warnings[0]).toContain("change the size in the chart's values");
    expect(out.text).not.toContain("Warning:");
    const desired = JSON.parse((await s.annotations())[Keys.templates]);
    expect(desired.find((t: any) => t.metadata.name === "data").spec.resources.requests.storage).toBe("3Gi");
  });

  it("--dry-run warns the same and writes nothing", async () => {
    const s = await managed({ annotations: { "argocd.argoproj.io/tracking-id": "web:apps/StatefulSet:default/web" } });
    const before = await s.annotations();
    const { io, err } = capture();
    await main(["set", "web", "data", "--storage", "3Gi", "--dry-run"], io, s.connect);
    expect(err.text).toMatch(/^Warning: StatefulSet default\/web is managed by Argo CD Application web /);
    expect(err.text).toContain("change spec.volumeClaimTemplates in the manifest in Git");
    expect(await s.annotations()).toEqual(before);
  });

  it("-o json: stdout stays one JSON document, with managedBy; the warning is on stderr", async () => {
    const s = await managed({
      labels: { "kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": "flux-system" },
      annotations: { "kustomize.toolkit.fluxcd.io/force": "enabled" },
    });
    const { io, out, err } = capture();
    await main(["set", "web", "data", "--storage", "3Gi", "-o", "json"], io, s.connect);
    expect(JSON.parse(out.text).managedBy).toEqual([
      {
        tool: "flux-kustomization",
        name: "Flux Kustomization flux-system/apps",
        evidence: [
          "kustomize.toolkit.fluxcd.io/name: apps",
          "kustomize.toolkit.fluxcd.io/namespace: flux-system",
          "kustomize.toolkit.fluxcd.io/force: enabled",
        ],
        guess: false,
      },
    ]);
    expect(err.text).toContain("Flux answers that 422 by deleting the StatefulSet, its pods with it");
  });

  it("set --add warns too; a set that already desires the change (nothing written) does not", async () => {
    const s = await managed(HELM);
    const add = capture();
    await main(
      ["set", "web", "logs", "--add", "--storage", "1Gi", "--storage-class", "fast", "--mount-path", "/logs"],
      add.io,
      s.connect,
    );
    expect(add.err.text).toMatch(/^Warning: StatefulSet default\/web is managed by Helm release db/);
    await main(["set", "web", "data", "--storage", "3Gi"], capture().io, s.connect);
    const again = capture();
    await main(["set", "web", "data", "--storage", "3Gi"], again.io, s.connect);
    expect(again.out.text).toContain("already desires");
    expect(again.err.text).toBe("");
  });

  it("a set without any of their keys: no warning, no managedBy", async () => {
    const s = await simOf("grow");
    const { io, out, err } = capture();
    await main(["set", "web", "data", "--storage", "3Gi", "-o", "json"], io, s.connect);
    expect(err.text).toBe("");
    expect(JSON.parse(out.text)).not.toHaveProperty("managedBy");
  });
});
