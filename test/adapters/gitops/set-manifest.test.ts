// The StatefulSet manifest a re-create proposal edits: the desired templates' four fields, the
// annotation dropped, comments and every other field kept, in a multi-document file too.
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { ManifestError } from "../../../adapters/gitops/manifest.js";
import { editRaiseManifest, manifestDesired } from "../../../adapters/gitops/raise-manifest.js";
import { carriesTemplates, editSetManifest, templateChanges } from "../../../adapters/gitops/set-manifest.js";
import { Keys } from "../../../core/keys.js";
import type { ProposeRecreate } from "../../../core/types.js";

const PATH = "clusters/prod/apps/prod/db.yaml";
const BASE = "main";

const action = (templates: ProposeRecreate["templates"]): ProposeRecreate => ({
  type: "ProposeRecreate",
  namespace: "prod",
  set: "db",
  revision: "7b5b44c86f",
  templates,
});

const DESIRED = action([
  {
    metadata: { name: "data", labels: { tier: "db" } },
    spec: {
      accessModes: ["ReadWriteOnce"],
      storageClassName: "fast",
      resources: { requests: { storage: "20Gi" } },
      volumeAttributesClassName: "gold",
    },
  },
]);

const SET = `# The db StatefulSet — owned by the storage team.
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db # do not rename
  namespace: prod
  annotations:
    team: storage # on-call: #storage
    claimstep.io/volume-claim-update-strategy: InPlace
    claimstep.io/apply-via: pull-request
    claimstep.io/finalize: Recreate
    claimstep.io/volume-claim-templates: '[{"metadata":{"name":"data","labels":{"tier":"db"}},"spec":{"resources":{"requests":{"storage":"20Gi"}},"volumeAttributesClassName":"gold"}}]'
spec:
  replicas: 3 # three zones
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
        - name: app
          image: postgres:17 # pinned
  volumeClaimTemplates:
    - metadata:
        name: data
        labels:
          backup: daily # read by the backup operator
      spec:
        accessModes: [ReadWriteOnce]
        storageClassName: fast
        resources:
          requests:
            storage: 10Gi # grown in INC-1234
    # the write-ahead log stays as it is
    - metadata: {name: wal}
      spec:
        accessModes: [ReadWriteOnce]
        resources: {requests: {storage: 1Gi}}
`;

describe("editSetManifest", () => {
  it("makes the set's templates carry the desired storage, class, labels and annotations, and drops claimstep's annotation; comments and every other field are kept", () => {
    const { text, changed } = editSetManifest(SET, DESIRED, PATH, BASE);
    expect(changed).toBe(true);
    const parsed = YAML.parse(text);
    expect(parsed.spec.volumeClaimTemplates[0]).toEqual({
      metadata: { name: "data", labels: { tier: "db" } },
      spec: {
        accessModes: ["ReadWriteOnce"],
        storageClassName: "fast",
        resources: { requests: { storage: "20Gi" } },
        volumeAttributesClassName: "gold",
      },
    });
    // A template in Git that is not desired is left alone.
    expect(parsed.spec.volumeClaimTemplates[1]).toEqual({
      metadata: { name: "wal" },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
    });
    expect(parsed.metadata.annotations).toEqual({
      team: "storage",
      "claimstep.io/volume-claim-update-strategy": "InPlace",
      "claimstep.io/apply-via": "pull-request",
      "claimstep.io/finalize": "Recreate",
    });
    expect(parsed.spec.template.spec.containers[0].image).toBe("postgres:17");
    for (const kept of [
      "# The db StatefulSet — owned by the storage team.",
      "name: db # do not rename",
      "team: storage # on-call: #storage",
      "replicas: 3 # three zones",
      "image: postgres:17 # pinned",
      "storage: 20Gi # grown in INC-1234",
      "# the write-ahead log stays as it is",
    ]) {
      expect(text).toContain(kept);
    }
    // Only the edited lines differ (and the yaml printer's spacing of flow collections).
    const after = new Set(text.split("\n").map((l) => l.replace(/[{[] | [}\]]/g, (m) => m.trim())));
    const dropped = SET.split("\n").filter((l) => !after.has(l));
    expect(dropped).toEqual([
      `    claimstep.io/volume-claim-templates: '[{"metadata":{"name":"data","labels":{"tier":"db"}},"spec":{"resources":{"requests":{"storage":"20Gi"}},"volumeAttributesClassName":"gold"}}]'`,
      "          backup: daily # read by the backup operator",
      "            storage: 10Gi # grown in INC-1234",
    ]);
  });

  it("is stable on its own output: nothing to commit the second time", () => {
    const once = editSetManifest(SET, DESIRED, PATH, BASE);
    expect(editSetManifest(once.text, DESIRED, PATH, BASE)).toEqual({ text: once.text, changed: false });
    expect(carriesTemplates(once.text, DESIRED, PATH, BASE)).toBe(true);
    expect(carriesTemplates(SET, DESIRED, PATH, BASE)).toBe(false);
  });

  it("removes what the desired template does not have: a class, labels, annotations; storage compares as a quantity", () => {
    const plain = action([
      { metadata: { name: "data" }, spec: { resources: { requests: { storage: "10737418240" } } } },
    ]);
    const withExtras = SET.replace(
      "        storageClassName: fast\n",
      "        storageClassName: fast\n        volumeAttributesClassName: silver\n",
    ).replace("        labels:\n", "        annotations: {note: x}\n        labels:\n");
    expect(templateChanges(withExtras, plain, PATH, BASE)).toEqual([
      { template: "data", field: "volumeAttributesClassName", before: "silver", after: "–" },
      { template: "data", field: "labels", before: "backup=daily", after: "–" },
      { template: "data", field: "annotations", before: "note=x", after: "–" },
    ]);
    const t = YAML.parse(editSetManifest(withExtras, plain, PATH, BASE).text).spec.volumeClaimTemplates[0];
    expect(t).toEqual({
      metadata: { name: "data" },
      spec: { accessModes: ["ReadWriteOnce"], storageClassName: "fast", resources: { requests: { storage: "10Gi" } } },
    });
  });

  it("reports the changes as before → after", () => {
    expect(templateChanges(SET, DESIRED, PATH, BASE)).toEqual([
      { template: "data", field: "storage", before: "10Gi", after: "20Gi" },
      { template: "data", field: "volumeAttributesClassName", before: "–", after: "gold" },
      { template: "data", field: "labels", before: "backup=daily", after: "tier=db" },
    ]);
  });

  it("drops claimstep.io/recreate-approved too, and an annotations map left empty", () => {
    const minimal = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  annotations:
    ${Keys.templates}: '[]'
    ${Keys.recreateApproved}: 7b5b44c86f
spec:
  volumeClaimTemplates:
    - metadata: {name: data, labels: {tier: db}}
      spec: {resources: {requests: {storage: 20Gi}}, volumeAttributesClassName: gold}
`;
    const { text, changed } = editSetManifest(minimal, DESIRED, PATH, BASE);
    expect(changed).toBe(true);
    expect(YAML.parse(text).metadata).toEqual({ name: "db" });
  });

  it("edits only the StatefulSet's document of a multi-document file, matched by kind, name and namespace", () => {
    const service =
      "# the headless service\napiVersion: v1\nkind: Service\nmetadata:\n  name: db\nspec:\n  clusterIP: None\n";
    const other =
      "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\n  namespace: staging\nspec:\n  volumeClaimTemplates:\n    - metadata: {name: data}\n      spec: {resources: {requests: {storage: 10Gi}}}\n";
    const file = `${service}---\n${other}---\n${SET}`;
    const { text } = editSetManifest(file, DESIRED, PATH, BASE);
    const docs = YAML.parseAllDocuments(text).map((d) => d.toJS());
    expect(docs.map((d) => [d.kind, d.metadata.namespace])).toEqual([
      ["Service", undefined],
      ["StatefulSet", "staging"],
      ["StatefulSet", "prod"],
    ]);
    expect(docs[1].spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe("10Gi");
    expect(docs[2].spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe("20Gi");
    expect(text).toContain("# the headless service");
    expect(text).toContain("# The db StatefulSet — owned by the storage team.");
  });

  it("accepts a document without a namespace (kustomize sets it)", () => {
    const { changed } = editSetManifest(SET.replace("  namespace: prod\n", ""), DESIRED, PATH, BASE);
    expect(changed).toBe(true);
  });

  it("refuses, saying what to fix: no file, not YAML, no such StatefulSet, another namespace, a desired template missing in Git", () => {
    const refused = (file: string | undefined, a = DESIRED) => {
      try {
        editSetManifest(file, a, PATH, BASE);
      } catch (err) {
        expect(err).toBeInstanceOf(ManifestError);
        return (err as Error).message;
      }
      throw new Error("expected a ManifestError");
    };
    expect(refused(undefined)).toBe(
      "clusters/prod/apps/prod/db.yaml does not exist on main: statefulSetPathTemplate must name the file that holds StatefulSet prod/db's manifest (placeholders {namespace} {statefulset})",
    );
    expect(refused("spec: [1\n")).toMatch(
      /^clusters\/prod\/apps\/prod\/db.yaml is not valid YAML \(.*\): fix the file by hand, then step again$/,
    );
    expect(refused("kind: Deployment\nmetadata:\n  name: db\n")).toBe(
      "clusters/prod/apps/prod/db.yaml holds no StatefulSet named db: point statefulSetPathTemplate at the file of StatefulSet prod/db",
    );
    expect(refused(SET.replace("namespace: prod", "namespace: staging"))).toBe(
      "clusters/prod/apps/prod/db.yaml declares StatefulSet db in namespace staging, not prod: fix statefulSetPathTemplate",
    );
    expect(refused("kind: StatefulSet\nmetadata:\n  name: db\nspec:\n  replicas: 1\n")).toMatch(
      /StatefulSet prod\/db in .* has no spec.volumeClaimTemplates list/,
    );
    const both = action([
      ...DESIRED.templates,
      { metadata: { name: "logs" }, spec: { resources: { requests: { storage: "1Gi" } } } },
    ]);
    expect(refused(SET, both)).toBe(
      "StatefulSet prod/db in clusters/prod/apps/prod/db.yaml has no volumeClaimTemplate named logs: add it to the manifest as the live set has it, then step again (claimstep changes only storage, volumeAttributesClassName, labels, annotations of existing templates)",
    );
    expect(() => carriesTemplates(undefined, DESIRED, PATH, BASE)).toThrow(ManifestError);
  });
});

describe("YAML read from the repository is bounded as the HTTP route's (issue 24, item 10)", () => {
  it("a StatefulSet file nested 50,000 deep, or of 30,000 annotation keys: ManifestError naming the file and the bound", () => {
    const deep = `${SET}---\nkind: ConfigMap\ndata: ${"{a: ".repeat(50_000)}1${"}".repeat(50_000)}\n`;
    expect(() => editSetManifest(deep, DESIRED, PATH, BASE)).toThrow(ManifestError);
    expect(() => carriesTemplates(deep, DESIRED, PATH, BASE)).toThrow(`${PATH} nests deeper than 64 levels`);
    const wide = SET.replace(
      "    team: storage # on-call: #storage\n",
      `${Array.from({ length: 30_000 }, (_, i) => `    k${i}: v\n`).join("")}`,
    );
    expect(() => editSetManifest(wide, DESIRED, PATH, BASE)).toThrow(`${PATH} holds more than 5000 nodes`);
  });
});

describe("the set's document is matched by kind, name and namespace (issue 37, item 4)", () => {
  const bare = SET.replace("  namespace: prod\n", "").replace("# The db StatefulSet", "# the namespace-less db");
  const refused = (file: string, defaultNamespace?: string) => {
    try {
      editSetManifest(file, DESIRED, PATH, BASE, defaultNamespace);
    } catch (err) {
      expect(err).toBeInstanceOf(ManifestError);
      return (err as Error).message;
    }
    throw new Error("expected a ManifestError");
  };
  const storages = (text: string) =>
    YAML.parseAllDocuments(text).map((d) => [
      d.getIn(["metadata", "namespace"]),
      d.getIn(["spec", "volumeClaimTemplates", 0, "spec", "resources", "requests", "storage"]),
    ]);

  it("a namespace-less StatefulSet db earlier in the file is left alone: the `namespace: prod` one is edited", () => {
    const file = `${bare}---\n${SET}`;
    const { text, changed } = editSetManifest(file, DESIRED, PATH, BASE);
    expect(changed).toBe(true);
    expect(storages(text)).toEqual([
      [undefined, "10Gi"],
      ["prod", "20Gi"],
    ]);
    expect(YAML.parseAllDocuments(text)[0]?.toJS()).toEqual(YAML.parse(bare));
  });

  it("without statefulSetDefaultNamespace a namespace-less document is the set's only when none names the namespace; two of them are refused", () => {
    expect(editSetManifest(bare, DESIRED, PATH, BASE).changed).toBe(true);
    expect(refused(`${bare}---\n${bare}`)).toBe(
      "clusters/prod/apps/prod/db.yaml on main holds 2 StatefulSet documents that may be prod/db (documents 1 and 2, without a namespace): refused, nothing written: give each its metadata.namespace, set statefulSetDefaultNamespace, or keep one StatefulSet db per file",
    );
  });

  it("with statefulSetDefaultNamespace a namespace-less document is in that namespace only", () => {
    // The default is prod: the namespace-less one and the `namespace: prod` one are both prod/db.
    expect(refused(`${bare}---\n${SET}`, "prod")).toBe(
      "clusters/prod/apps/prod/db.yaml on main holds 2 StatefulSet documents that may be prod/db (documents 1 and 2, one without a namespace, which statefulSetDefaultNamespace puts in prod): refused, nothing written: give each its metadata.namespace, or keep one StatefulSet db per file",
    );
    // The default is staging: the namespace-less one is staging/db, not this set's.
    expect(storages(editSetManifest(`${bare}---\n${SET}`, DESIRED, PATH, BASE, "staging").text)).toEqual([
      [undefined, "10Gi"],
      ["prod", "20Gi"],
    ]);
    expect(refused(bare, "staging")).toBe(
      "clusters/prod/apps/prod/db.yaml declares StatefulSet db in namespace staging (statefulSetDefaultNamespace, for a document without one), not prod: fix statefulSetPathTemplate, or give the document metadata.namespace: prod",
    );
    // `{namespace}`: the namespace the file was chosen for, as kustomize's per-directory namespace.
    expect(editSetManifest(bare, DESIRED, PATH, BASE, "{namespace}").changed).toBe(true);
  });

  it("two documents naming the same namespace are refused, naming the file and the set", () => {
    expect(refused(`${SET}---\n${SET}`)).toBe(
      "clusters/prod/apps/prod/db.yaml on main holds 2 StatefulSet documents that may be prod/db (documents 1 and 2, both in namespace prod): refused, nothing written: give each its metadata.namespace, or keep one StatefulSet db per file",
    );
  });

  it("autogrow's raise reads and edits the same document", () => {
    const raise = {
      type: "RaiseTemplate" as const,
      namespace: "prod",
      set: "db",
      template: "data",
      from: "20Gi",
      to: "30Gi",
      templates: [{ metadata: { name: "data" }, spec: { resources: { requests: { storage: "30Gi" } } } }],
      fromRevision: "a",
      toRevision: "b",
      autogrownFrom: "a",
    };
    const file = `${bare}---\n${SET}`;
    expect(manifestDesired(file, raise, PATH, BASE).templates[0]?.spec.resources?.requests?.storage).toBe("20Gi");
    const { text } = editRaiseManifest(file, raise, raise.templates, PATH, BASE);
    const docs = YAML.parseAllDocuments(text);
    expect(docs[0]?.getIn(["metadata", "annotations", Keys.autogrownFrom])).toBeUndefined();
    expect(docs[1]?.getIn(["metadata", "annotations", Keys.autogrownFrom])).toBe("a");
    expect(() => editRaiseManifest(`${SET}---\n${SET}`, raise, raise.templates, PATH, BASE)).toThrow(
      "holds 2 StatefulSet documents that may be prod/db",
    );
  });
});
