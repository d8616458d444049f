import { describe, expect, it } from "vitest";
import YAML from "yaml";
import {
  carriesAction,
  editClaimManifest,
  ManifestError,
  newClaimManifest,
} from "../../../adapters/gitops/manifest.js";
import { editRaiseManifest, manifestDesired } from "../../../adapters/gitops/raise-manifest.js";
import { editSetManifest } from "../../../adapters/gitops/set-manifest.js";
import type { PatchClaim } from "../../../core/types.js";

const action: PatchClaim = {
  type: "PatchClaim",
  namespace: "prod",
  claim: "data-db-2",
  template: "data",
  ordinal: 2,
  storage: "20Gi",
  labels: { tier: "db", "claimstep.io/revision": "7b5b44c86f" },
  annotations: {},
};
const PATH = "clusters/prod/claims/prod/data-db-2.yaml";

const HAND_WRITTEN = `# Claims of the db StatefulSet — reviewed by the storage team.
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-db-2 # ordinal 2
  namespace: prod
  labels:
    app: db   # selector label, do not touch
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources:
    requests:
      storage: 10Gi # grown in INC-1234
`;

describe("newClaimManifest", () => {
  it("writes exactly the partial PVC claimstep owns, for server-side apply", () => {
    const parsed = YAML.parse(
      newClaimManifest({ ...action, volumeAttributesClassName: "gold", annotations: { note: "x" } }),
    );
    expect(parsed).toEqual({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: {
        name: "data-db-2",
        namespace: "prod",
        labels: { tier: "db", "claimstep.io/revision": "7b5b44c86f" },
        annotations: {
          note: "x",
          "argocd.argoproj.io/sync-options": "Prune=false",
          "kustomize.toolkit.fluxcd.io/prune": "disabled",
        },
      },
      spec: { resources: { requests: { storage: "20Gi" } }, volumeAttributesClassName: "gold" },
    });
  });

  it("leaves volumeAttributesClassName out when the action has none, and always forbids pruning the claim", () => {
    const parsed = YAML.parse(newClaimManifest(action));
    expect(parsed.spec).toEqual({ resources: { requests: { storage: "20Gi" } } });
    expect(parsed.metadata.annotations).toEqual({
      "argocd.argoproj.io/sync-options": "Prune=false",
      "kustomize.toolkit.fluxcd.io/prune": "disabled",
    });
  });

  it("lets the action's own annotation win over the no-prune defaults", () => {
    const parsed = YAML.parse(
      newClaimManifest({
        ...action,
        annotations: { "argocd.argoproj.io/sync-options": "Prune=false,ServerSideApply=true" },
      }),
    );
    expect(parsed.metadata.annotations["argocd.argoproj.io/sync-options"]).toBe("Prune=false,ServerSideApply=true");
  });

  it("says who wrote it", () => {
    expect(newClaimManifest(action)).toMatch(/^# Written by claimstep/);
  });
});

describe("editClaimManifest", () => {
  it("edits a hand-written file in place: comments, layout and other fields survive", () => {
    const { text, changed } = editClaimManifest(HAND_WRITTEN, action, PATH);
    expect(changed).toBe(true);
    expect(text).toContain("# Claims of the db StatefulSet — reviewed by the storage team.");
    expect(text).toContain("name: data-db-2 # ordinal 2");
    expect(text).toMatch(/app: db +# selector label, do not touch/);
    expect(text).toContain("storage: 20Gi # grown in INC-1234");
    expect(text).toContain("accessModes: [ ReadWriteOnce ]");
    const parsed = YAML.parse(text);
    expect(parsed.spec.storageClassName).toBe("fast");
    expect(parsed.metadata.labels).toEqual({ app: "db", tier: "db", "claimstep.io/revision": "7b5b44c86f" });
    // Only the changed value and two spacing normalisations of the yaml printer differ; every other line is kept verbatim.
    const after = new Set(text.split("\n"));
    const dropped = HAND_WRITTEN.split("\n").filter((l) => !after.has(l));
    expect(new Set(dropped)).toEqual(
      new Set([
        "    app: db   # selector label, do not touch",
        "  accessModes: [ReadWriteOnce]",
        "      storage: 10Gi # grown in INC-1234",
      ]),
    );
  });

  it("writes nothing when the file already carries the action, and is stable on its own output", () => {
    const once = editClaimManifest(HAND_WRITTEN, action, PATH);
    const twice = editClaimManifest(once.text, action, PATH);
    expect(twice).toEqual({ text: once.text, changed: false });
  });

  it("compares storage as a quantity: 21474836480 is 20Gi", () => {
    const file = newClaimManifest({ ...action, storage: "21474836480" });
    expect(editClaimManifest(file, action, PATH).changed).toBe(false);
    expect(editClaimManifest(file, { ...action, storage: "21Gi" }, PATH).changed).toBe(true);
  });

  it("sets the VolumeAttributesClass when the action names one", () => {
    const { text } = editClaimManifest(HAND_WRITTEN, { ...action, volumeAttributesClassName: "gold" }, PATH);
    expect(YAML.parse(text).spec.volumeAttributesClassName).toBe("gold");
  });

  it("writes a new file when there is none", () => {
    expect(editClaimManifest(undefined, action, PATH)).toEqual({ text: newClaimManifest(action), changed: true });
  });

  it("edits only this claim's document in a multi-document file", () => {
    const other =
      "---\n# another claim\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data-db-1\nspec:\n  resources:\n    requests:\n      storage: 10Gi\n";
    const { text } = editClaimManifest(HAND_WRITTEN + other, action, PATH);
    const docs = YAML.parseAllDocuments(text).map((d) => d.toJS());
    expect(docs.map((d) => [d.metadata.name, d.spec.resources.requests.storage])).toEqual([
      ["data-db-2", "20Gi"],
      ["data-db-1", "10Gi"],
    ]);
    expect(text).toContain("# another claim");
  });

  it("refuses a file that is not valid YAML, naming the file", () => {
    expect(() => editClaimManifest("spec: [1\n", action, PATH)).toThrow(ManifestError);
    expect(() => editClaimManifest("spec: [1\n", action, PATH)).toThrow(
      /clusters\/prod\/claims\/prod\/data-db-2.yaml is not valid YAML/,
    );
  });

  it("refuses a file without this claim, and one declaring another namespace", () => {
    expect(() => editClaimManifest("kind: ConfigMap\nmetadata:\n  name: x\n", action, PATH)).toThrow(
      /holds no PersistentVolumeClaim named data-db-2/,
    );
    expect(() =>
      editClaimManifest(HAND_WRITTEN.replace("namespace: prod", "namespace: staging"), action, PATH),
    ).toThrow(/in namespace staging, not prod/);
  });
});

describe("carriesAction", () => {
  it("is true only when every owned field matches", () => {
    const done = editClaimManifest(HAND_WRITTEN, action, PATH).text;
    expect(carriesAction(done, action, PATH)).toBe(true);
    expect(carriesAction(HAND_WRITTEN, action, PATH)).toBe(false);
    expect(carriesAction(undefined, action, PATH)).toBe(false);
    expect(carriesAction("not: [valid", action, PATH)).toBe(false);
  });
});

describe("YAML read from the repository is bounded as the HTTP route's (issue 24, item 10)", () => {
  // Defect: files from Git were parsed unbounded: 30,000 label keys took 27.8 s of event loop,
  // a 50,000-deep flow overflowed the stack.
  const manyLabels = `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-db-2
  namespace: prod
  labels:
${Array.from({ length: 30_000 }, (_, i) => `    k${i}: v`).join("\n")}
spec:
  resources: {requests: {storage: 10Gi}}
`;
  const deepFlow = `apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data-db-2}\nspec: ${"[".repeat(50_000)}${"]".repeat(50_000)}\n`;

  it("a claim file of 30,000 label keys: ManifestError naming the file, the limit and the fix", () => {
    expect(() => editClaimManifest(manyLabels, action, PATH)).toThrow(ManifestError);
    expect(() => editClaimManifest(manyLabels, action, PATH)).toThrow(
      `${PATH} holds more than 5000 nodes: claimstep reads a file from the repository within the bounds of its API (64 levels, 5000 nodes; a manifest holds a few hundred): split the file or fix it by hand, then step again`,
    );
  });

  it("a 50,000-deep flow: ManifestError naming the depth limit, no stack overflow", () => {
    expect(() => editClaimManifest(deepFlow, action, PATH)).toThrow(`${PATH} nests deeper than 64 levels`);
  });

  it("carriesAction reports the bound (a clear error) instead of taking the file for one without the change", () => {
    expect(() => carriesAction(deepFlow, action, PATH)).toThrow(ManifestError);
  });
});

describe("a YAML alias bomb read from the repository (issue 37, item 5a)", () => {
  // Ten levels of ten aliases: 10^10 nodes once expanded, 120 in the file (within the bounds).
  const bomb = [
    "  l0: &l0 [x, x, x, x, x, x, x, x, x, x]",
    ...Array.from({ length: 9 }, (_, i) => `  l${i + 1}: &l${i + 1} [${Array(10).fill(`*l${i}`).join(", ")}]`),
  ].join("\n");
  const claimWithBomb = `${HAND_WRITTEN}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n${bomb}\n`;
  const setWithBomb = `apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\n  namespace: prod\nspec:\n  bomb:\n${bomb}\n  volumeClaimTemplates:\n    - metadata: {name: data}\n      spec: {resources: {requests: {storage: 10Gi}}}\n`;
  const expected = `${PATH} holds YAML aliases that would expand beyond 100 nodes (an alias bomb): claimstep reads a file from the repository within the bounds of its API: write the values out or fix the file by hand, then step again`;

  it("is a ManifestError naming the file, not the yaml library's ReferenceError", () => {
    expect(() => editClaimManifest(claimWithBomb, action, PATH)).toThrow(ManifestError);
    expect(() => editClaimManifest(claimWithBomb, action, PATH)).toThrow(expected);
    expect(() => carriesAction(claimWithBomb, action, PATH)).toThrow(expected);
  });

  it("in a StatefulSet's file, for the re-create and autogrow proposals alike", () => {
    const raise = {
      type: "RaiseTemplate" as const,
      namespace: "prod",
      set: "db",
      template: "data",
      from: "10Gi",
      to: "20Gi",
      templates: [{ metadata: { name: "data" }, spec: { resources: { requests: { storage: "20Gi" } } } }],
      fromRevision: "a",
      toRevision: "b",
      autogrownFrom: "a",
    };
    const recreate = {
      type: "ProposeRecreate" as const,
      namespace: "prod",
      set: "db",
      revision: "b",
      templates: raise.templates,
    };
    for (const run of [
      () => manifestDesired(setWithBomb, raise, PATH, "main"),
      () => editRaiseManifest(setWithBomb, raise, raise.templates, PATH, "main"),
      () => editSetManifest(setWithBomb, recreate, PATH, "main"),
    ]) {
      expect(run).toThrow(ManifestError);
      expect(run).toThrow(expected);
    }
  });

  it("a few aliases, as people write them, are still read", () => {
    const anchored = `${HAND_WRITTEN}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: &l {a: b}\n  annotations: *l\n`;
    expect(editClaimManifest(anchored, action, PATH).changed).toBe(true);
  });
});
