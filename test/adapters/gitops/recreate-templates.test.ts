// Issue 27 through the GitOps door: a re-create proposal that adds or removes a claim template
// and carries the held pod template (`claimstep.io/pod-template`). The pull request's manifest
// gets the added template appended (clean), the removed one taken out, spec.template replaced
// node by node (comments kept where the structure stays), and is refused when its pod template
// would mount a volume the new manifest lacks (the API server refuses such a set).
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { ManifestError } from "../../../adapters/gitops/manifest.js";
import { recreateBody, recreateCommitMessage } from "../../../adapters/gitops/pull-request-text.js";
import { carriesTemplates, editSetManifest, manifestChanges } from "../../../adapters/gitops/set-manifest.js";
import { pullRequestWriter } from "../../../adapters/gitops/writer.js";
import { Keys } from "../../../core/keys.js";
import type { ClaimTemplate } from "../../../core/kube/k8s.js";
import type { ProposeRecreate } from "../../../core/types.js";
import { forge } from "../../support/forge.js";
import { growDecision, mswServer, SET_PATH_TEMPLATE } from "./helpers.js";

const server = mswServer();
const PATH = "clusters/prod/apps/prod/db.yaml";
const BASE = "main";

const DATA: ClaimTemplate = { metadata: { name: "data" }, spec: { resources: { requests: { storage: "10Gi" } } } };
/** The added template as the webhook may hold it: with what the server adds (status, creationTimestamp). */
const LOGS = {
  metadata: { name: "logs", creationTimestamp: null, labels: { tier: "logs" } },
  spec: {
    accessModes: ["ReadWriteOnce"],
    storageClassName: "fast",
    resources: { requests: { storage: "1Gi" } },
    volumeMode: "Filesystem",
  },
  status: { phase: "Pending" },
} as unknown as ClaimTemplate;

/** Git's pod template, as JSON. */
const GIT_POD = {
  metadata: { labels: { app: "db" } },
  spec: {
    containers: [
      {
        name: "app",
        image: "postgres:17",
        ports: [{ containerPort: 5432 }],
        volumeMounts: [
          { name: "data", mountPath: "/var/lib/postgresql" },
          { name: "wal", mountPath: "/wal" },
        ],
      },
    ],
  },
};

const GIT = `# prod/db — owned by the storage team
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: prod
  annotations:
    claimstep.io/apply-via: pull-request
    claimstep.io/finalize: Recreate # approved by the storage team
    claimstep.io/volume-claim-templates: '[{"metadata":{"name":"data"},"spec":{"resources":{"requests":{"storage":"10Gi"}}}}]'
spec:
  replicas: 3 # three zones
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels:
        app: db # the selector's
    spec:
      containers:
        - name: app
          image: postgres:17 # pinned
          ports:
            - containerPort: 5432 # postgres
          volumeMounts:
            - name: data # the database
              mountPath: /var/lib/postgresql
            - name: wal
              mountPath: /wal
  volumeClaimTemplates:
    - metadata:
        name: data # the database
      spec:
        accessModes: [ReadWriteOnce]
        storageClassName: fast
        resources:
          requests:
            storage: 10Gi # as created
    # the write-ahead log, to be retired
    - metadata: {name: wal}
      spec:
        accessModes: [ReadWriteOnce]
        resources: {requests: {storage: 1Gi}}
`;

const withAnnotations = (text: string, annotations: Record<string, string>): string =>
  text.replace(
    "    claimstep.io/volume-claim-templates:",
    `${Object.entries(annotations)
      .map(([k, v]) => `    ${k}: '${v}'\n`)
      .join("")}    claimstep.io/volume-claim-templates:`,
  );

const proposal = (o: Partial<ProposeRecreate> = {}): ProposeRecreate => ({
  type: "ProposeRecreate",
  namespace: "prod",
  set: "db",
  revision: "5d8f6c7b9a",
  templates: [DATA],
  ...o,
});

/** The held pod template as the webhook holds it: Git's plus a mount of `logs`, with the server's defaults. */
const heldWithLogs = () => {
  const pod = structuredClone(GIT_POD) as typeof GIT_POD & { spec: Record<string, unknown> };
  const c = pod.spec.containers[0]! as Record<string, unknown> & (typeof GIT_POD.spec.containers)[0];
  c.volumeMounts.push({ name: "logs", mountPath: "/var/log/postgresql" });
  Object.assign(c, {
    resources: {},
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
    imagePullPolicy: "IfNotPresent",
  });
  (c.ports[0] as Record<string, unknown>).protocol = "TCP";
  Object.assign(pod.spec, {
    restartPolicy: "Always",
    terminationGracePeriodSeconds: 30,
    dnsPolicy: "ClusterFirst",
    securityContext: {},
    schedulerName: "default-scheduler",
  });
  (pod.metadata as Record<string, unknown>).creationTimestamp = null;
  return pod;
};

const ADD = proposal({ templates: [DATA, LOGS], podTemplate: heldWithLogs() });

function refused(file: string, action: ProposeRecreate): string {
  try {
    editSetManifest(file, action, PATH, BASE);
  } catch (err) {
    expect(err).toBeInstanceOf(ManifestError);
    expect(() => carriesTemplates(file, action, PATH, BASE)).toThrow(ManifestError);
    return (err as Error).message;
  }
  throw new Error("expected a ManifestError");
}

describe("the re-create proposal adds a claim template", () => {
  it("appends the added template as YAML without status or creationTimestamp; the other templates and every comment are kept", () => {
    const { text, changed } = editSetManifest(GIT, ADD, PATH, BASE);
    expect(changed).toBe(true);
    const parsed = YAML.parse(text);
    expect(parsed.spec.volumeClaimTemplates.map((t: ClaimTemplate) => t.metadata.name)).toEqual([
      "data",
      "wal",
      "logs",
    ]);
    expect(parsed.spec.volumeClaimTemplates[2]).toEqual({
      metadata: { name: "logs", labels: { tier: "logs" } },
      spec: {
        accessModes: ["ReadWriteOnce"],
        storageClassName: "fast",
        resources: { requests: { storage: "1Gi" } },
        volumeMode: "Filesystem",
      },
    });
    for (const kept of [
      "# prod/db — owned by the storage team",
      "claimstep.io/finalize: Recreate # approved by the storage team",
      "replicas: 3 # three zones",
      "storage: 10Gi # as created",
      "# the write-ahead log, to be retired",
    ])
      expect(text).toContain(kept);
    expect(text).not.toContain("creationTimestamp");
    expect(text).not.toContain("status");
  });

  it("the held pod template replaces spec.template node by node: the new mount is written, the server's defaults are not, the comments of unchanged lines stay", () => {
    const { text } = editSetManifest(GIT, ADD, PATH, BASE);
    const parsed = YAML.parse(text);
    const expected = structuredClone(GIT_POD);
    expected.spec.containers[0]!.volumeMounts.push({ name: "logs", mountPath: "/var/log/postgresql" });
    expect(parsed.spec.template).toEqual(expected);
    for (const kept of [
      "app: db # the selector's",
      "image: postgres:17 # pinned",
      "- containerPort: 5432 # postgres",
      "- name: data # the database",
    ])
      expect(text).toContain(kept);
    // Only the desired-templates annotation's line goes (and the yaml printer's spacing of flow collections).
    const after = new Set(text.split("\n").map((l) => l.replace(/[{[] | [}\]]/g, (m) => m.trim())));
    expect(GIT.split("\n").filter((l) => !after.has(l))).toEqual([
      `    claimstep.io/volume-claim-templates: '[{"metadata":{"name":"data"},"spec":{"resources":{"requests":{"storage":"10Gi"}}}}]'`,
    ]);
    expect(text).toContain(
      "            - name: wal\n              mountPath: /wal\n            - name: logs\n              mountPath: /var/log/postgresql\n",
    );
    expect(text).not.toMatch(/terminationMessagePath|dnsPolicy|schedulerName|securityContext|protocol: TCP/);
  });

  it("drops claimstep.io/pod-template (applied) and keeps claimstep.io/remove-claim-templates if Git has it (the record of what was removed)", () => {
    const file = withAnnotations(GIT, {
      [Keys.podTemplate]: JSON.stringify(heldWithLogs()),
      [Keys.removeTemplates]: '["cache"]',
    });
    const annotations = YAML.parse(editSetManifest(file, ADD, PATH, BASE).text).metadata.annotations;
    expect(annotations).toEqual({
      [Keys.applyVia]: "pull-request",
      [Keys.finalize]: "Recreate",
      [Keys.removeTemplates]: '["cache"]',
    });
    // Never added where Git does not carry it.
    expect(YAML.parse(editSetManifest(GIT, ADD, PATH, BASE).text).metadata.annotations).not.toHaveProperty(
      Keys.removeTemplates,
    );
  });

  it("is stable on its own output, and the manifest carrying it is the approval", () => {
    const once = editSetManifest(GIT, ADD, PATH, BASE);
    expect(editSetManifest(once.text, ADD, PATH, BASE)).toEqual({ text: once.text, changed: false });
    expect(carriesTemplates(once.text, ADD, PATH, BASE)).toBe(true);
    expect(carriesTemplates(GIT, ADD, PATH, BASE)).toBe(false);
    // The template added but not the mount: not yet carried.
    const noMount = once.text.replace("            - name: logs\n              mountPath: /var/log/postgresql\n", "");
    expect(carriesTemplates(noMount, ADD, PATH, BASE)).toBe(false);
  });

  it("says what changes: the added template, and the paths of the pod template that change with it", () => {
    expect(manifestChanges(GIT, ADD, PATH, BASE)).toEqual({
      fields: [],
      added: [{ template: "logs", summary: "storage 1Gi, storageClassName fast, accessModes ReadWriteOnce" }],
      removed: [],
      podTemplate: ["spec.containers[app].volumeMounts[logs]"],
    });
  });
});

describe("the re-create proposal removes a claim template", () => {
  const withoutWal = structuredClone(GIT_POD);
  withoutWal.spec.containers[0]!.volumeMounts.pop();
  const REMOVE = proposal({ removed: ["wal"], podTemplate: withoutWal });

  it("takes the removed template out of spec.volumeClaimTemplates, and its mount out of the pod template", () => {
    const { text, changed } = editSetManifest(GIT, REMOVE, PATH, BASE);
    expect(changed).toBe(true);
    const parsed = YAML.parse(text);
    expect(parsed.spec.volumeClaimTemplates.map((t: ClaimTemplate) => t.metadata.name)).toEqual(["data"]);
    expect(parsed.spec.template).toEqual(withoutWal);
    expect(text).toContain("storage: 10Gi # as created");
    expect(text).toContain("image: postgres:17 # pinned");
    expect(manifestChanges(GIT, REMOVE, PATH, BASE)).toEqual({
      fields: [],
      added: [],
      removed: ["wal"],
      podTemplate: ["spec.containers[app].volumeMounts[wal]"],
    });
    expect(carriesTemplates(text, REMOVE, PATH, BASE)).toBe(true);
    expect(carriesTemplates(GIT, REMOVE, PATH, BASE)).toBe(false);
  });

  it("a removed template Git no longer has changes nothing", () => {
    const once = editSetManifest(GIT, REMOVE, PATH, BASE).text;
    const again = proposal({ removed: ["wal", "cache"], podTemplate: withoutWal });
    expect(editSetManifest(once, again, PATH, BASE).changed).toBe(false);
  });

  it("refuses a pod template that would mount a volume the new manifest lacks, naming the volume and the fix; nothing is written", () => {
    // Git's pod template still mounts wal, and no held pod template stops it.
    expect(refused(GIT, proposal({ removed: ["wal"] }))).toBe(
      `StatefulSet prod/db in ${PATH}: after this change its pod template (spec.template) would mount volume wal, which neither spec.template.spec.volumes nor spec.volumeClaimTemplates has, and the API server refuses such a set (volumeMounts name: Not found): remove the mount from the pod template in ${PATH} (or hold a pod template without it in ${Keys.podTemplate}), or keep the claim template, then step again`,
    );
    // A held pod template that mounts a volume nobody provides.
    const cache = structuredClone(GIT_POD);
    cache.spec.containers[0]!.volumeMounts.push({ name: "cache", mountPath: "/cache" });
    expect(refused(GIT, proposal({ podTemplate: cache }))).toContain("would mount volume cache, which neither");
  });

  it("refuses a template both added and removed, and a held pod template that is not a pod template", () => {
    expect(refused(GIT, proposal({ templates: [DATA, LOGS], removed: ["logs"] }))).toBe(
      `StatefulSet prod/db: template logs is both desired and to be removed (${Keys.removeTemplates}): keep it in one of the two, then step again`,
    );
    expect(refused(GIT, proposal({ podTemplate: "not a template" }))).toBe(
      `StatefulSet prod/db: the held pod template (${Keys.podTemplate}) is not an object with a spec: set it to the JSON of a spec.template, or remove it, then step again`,
    );
    let deep: Record<string, unknown> = {};
    const root = { metadata: {}, spec: { containers: [{ name: "app", image: "x", env: deep }] } };
    for (let i = 0; i < 10_000; i++) deep = (deep as { a?: unknown }).a = {};
    expect(refused(GIT, proposal({ podTemplate: root }))).toMatch(/nests deeper than 64 levels/);
  });
});

describe("the pull request's text for an added or removed template", () => {
  const changes = {
    fields: [{ template: "data", field: "storage" as const, before: "10Gi", after: "20Gi" }],
    added: [{ template: "logs", summary: "storage 1Gi, storageClassName <img src=x> @org/everyone" }],
    removed: ["wal"],
    podTemplate: ["spec.containers[app|x].volumeMounts[logs]"],
  };
  const action = proposal({ templates: [DATA, LOGS], removed: ["wal"], podTemplate: heldWithLogs() });

  it("the body says what is added and removed, that the pod template changes with it, and that merging approves the re-create; every value escaped", () => {
    const body = recreateBody(action, growDecision("2Gi"), PATH, changes, BASE);
    expect(body).toContain("| data | storage | 10Gi | 20Gi |");
    expect(body).toContain(
      "| logs | template | – | added: storage 1Gi, storageClassName &lt;img src=x&gt; @\u2060org/everyone |",
    );
    expect(body).toContain("| wal | template | present | removed |");
    expect(body).toContain(
      "**The pod template changes with it** (`spec.template`, as held in `claimstep.io/pod-template`): `spec.containers[app|x].volumeMounts[logs]`",
    );
    expect(body).toContain("Merging approves the re-create");
    expect(body).toContain("no claim is deleted");
    expect(body).toContain(`${Keys.orphanedFrom}=db`);
    expect(body).toContain("restarted one at a time, lowest ordinal first");
    expect(body).not.toContain("no pod is restarted");
    expect(body).not.toMatch(/<img|@org\/everyone/);
  });

  it("the commit message names the added and removed templates and the pod template", () => {
    expect(recreateCommitMessage(action, changes)).toBe(
      [
        "claimstep: db volumeClaimTemplates → revision 5d8f6c7b9a",
        "",
        "StatefulSet prod/db: the claim templates carry the desired values (data: storage 10Gi → 20Gi);",
        "template logs is added; template wal is removed; the pod template (spec.template) changes with them (spec.containers[app|x].volumeMounts[logs]);",
        `the ${Keys.templates} and ${Keys.podTemplate} annotations are removed. Merging approves the re-create of the set.`,
      ].join("\n"),
    );
  });
});

describe.each(["github", "gitlab"] as const)("the pull-request writer proposing an added template (%s)", (kind) => {
  it("opens one pull request carrying the new manifest; merged → applied", async () => {
    const f = forge(kind, server, { files: { [PATH]: GIT }, config: { statefulSetPathTemplate: SET_PATH_TEMPLATE } });
    const writer = pullRequestWriter(f.config, { now: f.now });
    const decision = { ...growDecision("2Gi"), ref: { namespace: "prod", name: "db" }, action: ADD };
    const outcome = await writer.apply(ADD, decision);
    const [pr] = f.requests();
    expect(outcome).toMatchObject({
      kind: "proposed",
      detail: expect.stringContaining("(logs: added; pod template: spec.containers[app].volumeMounts[logs])"),
    });
    const branch = `claimstep/prod/db/${ADD.revision}/recreate`;
    expect(pr!.branch).toBe(branch);
    expect(f.repo.file(branch, PATH)!.text).toBe(editSetManifest(GIT, ADD, PATH, BASE).text);
    expect(pr!.body).toContain(
      "| logs | template | – | added: storage 1Gi, storageClassName fast, accessModes ReadWriteOnce |",
    );
    expect(f.repo.commits.at(-1)!.message).toContain("template logs is added");
    f.merge(1);
    expect(await writer.apply(ADD, decision)).toMatchObject({ kind: "applied" });
  });

  it("refuses (ApplyRejected) a manifest whose pod template would mount a removed template's volume; opens nothing", async () => {
    const f = forge(kind, server, { files: { [PATH]: GIT }, config: { statefulSetPathTemplate: SET_PATH_TEMPLATE } });
    const writer = pullRequestWriter(f.config, { now: f.now });
    const action = proposal({ removed: ["wal"] });
    const decision = { ...growDecision("2Gi"), ref: { namespace: "prod", name: "db" }, action };
    expect(await writer.apply(action, decision)).toMatchObject({
      kind: "refused",
      reason: "ApplyRejected",
      message: expect.stringContaining("would mount volume wal"),
    });
    expect(f.writes()).toEqual([]);
  });
});

describe("the held pod template against YAML a person wrote", () => {
  it("an alias that already says the held value is kept; one that does not is written out", () => {
    const anchored = GIT.replace("    matchLabels: {app: db}\n", "    matchLabels: &labels {app: db}\n").replace(
      "      labels:\n        app: db # the selector's\n",
      "      labels: *labels\n",
    );
    expect(YAML.parse(anchored).spec.template.metadata.labels).toEqual({ app: "db" });
    const held = proposal({ podTemplate: GIT_POD });
    expect(editSetManifest(anchored, held, PATH, BASE).text).toContain("labels: *labels");
    expect(carriesTemplates(anchored, held, PATH, BASE)).toBe(true);
    const relabelled = structuredClone(GIT_POD);
    relabelled.metadata.labels = { app: "db", tier: "sql" } as typeof GIT_POD.metadata.labels;
    const edited = editSetManifest(anchored, proposal({ podTemplate: relabelled }), PATH, BASE).text;
    expect(YAML.parse(edited).spec.template.metadata.labels).toEqual({ app: "db", tier: "sql" });
    expect(YAML.parse(edited).spec.selector.matchLabels).toEqual({ app: "db" });
  });
});

describe("the server's defaults in a held pod template", () => {
  it("an empty volume source (emptyDir: {}) is written: only the empty maps the server adds (resources, securityContext) are left out", () => {
    const held = heldWithLogs() as ReturnType<typeof heldWithLogs> & { spec: { volumes?: unknown[] } };
    held.spec.volumes = [{ name: "scratch", emptyDir: {} }];
    held.spec.containers[0]!.volumeMounts.push({ name: "scratch", mountPath: "/scratch" });
    const action = proposal({ templates: [DATA, LOGS], podTemplate: held });
    const parsed = YAML.parse(editSetManifest(GIT, action, PATH, BASE).text);
    expect(parsed.spec.template.spec.volumes).toEqual([{ name: "scratch", emptyDir: {} }]);
    expect(parsed.spec.template.spec).not.toHaveProperty("securityContext");
    expect(parsed.spec.template.spec.containers[0]).not.toHaveProperty("resources");
  });
});
