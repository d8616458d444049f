// The pull-request writer proposing the re-create of a set (finalize in GitOps mode), against the
// msw fakes of GitHub and GitLab: one branch and one pull request per set and revision, editing
// the StatefulSet's manifest; merged = approved (`applied`); closed = refused; and what it says
// when the manifest cannot be edited.
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { pullRequestWriter } from "../../../adapters/gitops/writer.js";
import { Keys } from "../../../core/keys.js";
import { forge } from "../../support/forge.js";
import { mswServer, recreateDecision, SET_PATH_TEMPLATE, webManifest } from "./helpers.js";

const server = mswServer();
const SET_FILE = "clusters/prod/apps/default/web.yaml";

const github = (files: Record<string, string>) => forge("github", server, { files });
const gitlab = (files: Record<string, string>) => forge("gitlab", server, { files });

describe.each([
  ["GitHub", github],
  ["GitLab", gitlab],
] as const)("the re-create proposal on %s", (_name, makeForge) => {
  function setup(
    opts: { files?: Record<string, string>; statefulSetPathTemplate?: string | null; defaultNamespace?: string } = {},
  ) {
    const decision = recreateDecision();
    const desiredJson = JSON.stringify([
      { metadata: { name: "data" }, spec: { resources: { requests: { storage: "2Gi" } } } },
    ]);
    const forge = makeForge(opts.files ?? { [SET_FILE]: webManifest(desiredJson) });
    const setPath = opts.statefulSetPathTemplate === undefined ? SET_PATH_TEMPLATE : opts.statefulSetPathTemplate;
    const writer = pullRequestWriter(
      {
        ...forge.config,
        ...(setPath === null ? {} : { statefulSetPathTemplate: setPath }),
        ...(opts.defaultNamespace === undefined ? {} : { statefulSetDefaultNamespace: opts.defaultNamespace }),
      },
      { now: forge.now },
    );
    return { decision, forge, writer, branch: `claimstep/default/web/${decision.revision}/recreate` };
  }

  it("supports ProposeRecreate", () => {
    expect(setup().writer.supports).toContain("ProposeRecreate");
  });

  it("opens one pull request on claimstep/{namespace}/{set}/{revision}/recreate that edits the set's manifest, comments kept", async () => {
    const { decision, forge, writer, branch } = setup();
    const outcome = await writer.apply(decision.action, decision);
    const [pr] = forge.requests();
    expect(outcome).toEqual({
      kind: "proposed",
      detail: `opened pull request #1; merging it approves the re-create of default/web with the claim templates of revision ${decision.revision} (data: storage 1Gi → 2Gi) — ${pr!.url}`,
      url: pr!.url,
    });
    expect(forge.requests()).toHaveLength(1);
    expect(pr!.branch).toBe(branch);
    expect(forge.repo.changes(branch).map((c) => c.path)).toEqual([SET_FILE]);
    const text = forge.repo.file(branch, SET_FILE)!.text;
    expect(text).toContain("# web — the storefront's database");
    expect(text).toContain("name: data # the only volume");
    expect(text).toContain("storage: 2Gi # as created");
    const manifest = YAML.parse(text);
    expect(manifest.metadata.annotations).not.toHaveProperty(Keys.templates);
    expect(manifest.metadata.annotations[Keys.finalize]).toBe("Recreate");
    expect(manifest.spec.volumeClaimTemplates).toEqual([
      {
        metadata: { name: "data" },
        spec: { accessModes: ["ReadWriteOnce"], storageClassName: "fast", resources: { requests: { storage: "2Gi" } } },
      },
    ]);
    // The base branch is untouched until the merge.
    expect(
      YAML.parse(forge.repo.file("main", SET_FILE)!.text).spec.volumeClaimTemplates[0].spec.resources.requests.storage,
    ).toBe("1Gi");

    expect(pr!.title).toBe(
      `claimstep: re-create StatefulSet default/web with the claim templates of revision ${decision.revision}`,
    );
    expect(pr!.body).toContain(`**Merging** this pull request changes \`${SET_FILE}\``);
    expect(pr!.body).toContain("Merging approves the re-create");
    expect(pr!.body).toContain("deletes the StatefulSet with `propagationPolicy: Orphan`, creates it from the record");
    expect(pr!.body).toContain("**The pods and the claims are meant to stay**");
    expect(pr!.body).toContain("only after finding the same pods and claims (same uids)");
    expect(pr!.body).toContain("ConfigMap `default/claimstep-recreate-web`");
    expect(pr!.body).toContain(
      "| template | field | before (main) | after |\n|---|---|---|---|\n| data | storage | 1Gi | 2Gi |",
    );
    expect(pr!.body).toContain("**Argo CD / Flux.** After the re-create the live StatefulSet equals this manifest");
    expect(pr!.body).toContain("Until then a sync of the set fails");
    expect(pr!.body).toContain("Wait for claimstep");
    expect(pr!.body).toContain("**Closing** it without merging");
    expect(pr!.body).toContain("Status now: **Waiting** (AwaitingApproval)");
    expect(forge.repo.commits.at(-1)!.message).toMatch(
      /^claimstep: web volumeClaimTemplates → revision \w+\n\nStatefulSet default\/web: the claim templates carry the desired values \(data: storage 1Gi → 2Gi\);/,
    );
  });

  it("is idempotent: three invocations give one branch, one commit, one pull request", async () => {
    const { decision, forge, writer } = setup();
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push(await writer.apply(decision.action, decision));
    expect(forge.requests()).toHaveLength(1);
    expect(forge.repo.commits).toHaveLength(1);
    expect(forge.writes()).toHaveLength(3); // branch, file, pull request
    expect(outcomes[1]).toMatchObject({
      kind: "proposed",
      detail: expect.stringMatching(
        /^waiting for pull request #1 to be merged: it approves the re-create of default\/web/,
      ),
    });
    expect(outcomes[2]).toEqual(outcomes[1]);
  });

  it("proposed → merged → applied: the base branch carrying the templates is the approval", async () => {
    const { decision, forge, writer } = setup();
    await writer.apply(decision.action, decision);
    forge.merge(1);
    const outcome = await writer.apply(decision.action, decision);
    expect(outcome).toEqual({
      kind: "applied",
      detail: `pull request #1 (${forge.requests()[0]!.url}) is merged: ${SET_FILE} on main carries the claim templates of revision ${decision.revision}`,
    });
    expect(forge.requests()).toHaveLength(1);
  });

  it("a merged change that the base branch no longer carries (reverted) is refused", async () => {
    const { decision, forge, writer } = setup();
    const original = forge.repo.file("main", SET_FILE)!.text;
    await writer.apply(decision.action, decision);
    forge.merge(1);
    forge.repo.write("main", SET_FILE, original, "Revert claimstep");
    expect(await writer.apply(decision.action, decision)).toMatchObject({
      kind: "refused",
      reason: "ChangeRejected",
      message: expect.stringContaining("no longer carries the claim templates"),
    });
  });

  it("applied at once when the base branch already carries the templates (a person made the change)", async () => {
    const { decision, forge, writer } = setup();
    const edited = forge.repo.file("main", SET_FILE)!.text.replace("storage: 1Gi", "storage: 2Gi");
    forge.repo.write("main", SET_FILE, edited, "grow web by hand");
    expect(await writer.apply(decision.action, decision)).toEqual({
      kind: "applied",
      detail: `${SET_FILE} on main carries the claim templates of revision ${decision.revision}`,
    });
    expect(forge.requests()).toHaveLength(0);
  });

  it("closed unmerged → refused (ChangeRejected); reopened → proposed again", async () => {
    const { decision, forge, writer } = setup();
    await writer.apply(decision.action, decision);
    forge.close(1);
    const refused = await writer.apply(decision.action, decision);
    expect(refused).toEqual({
      kind: "refused",
      reason: "ChangeRejected",
      message: expect.stringContaining(
        `pull request #1 (${forge.requests()[0]!.url}) proposing the re-create of default/web with the claim templates of revision ${decision.revision} was closed without merging: the re-create is paused`,
      ),
      url: forge.requests()[0]!.url,
    });
    forge.reopen(1);
    expect(await writer.apply(decision.action, decision)).toMatchObject({
      kind: "proposed",
      url: forge.requests()[0]!.url,
    });
    expect(forge.requests()).toHaveLength(1);
  });

  it("refuses (ApplyRejected) without statefulSetPathTemplate, saying how to configure it", async () => {
    const { decision, forge, writer } = setup({ statefulSetPathTemplate: null });
    const outcome = await writer.apply(decision.action, decision);
    expect(outcome).toMatchObject({ kind: "refused", reason: "ApplyRejected" });
    const message = (outcome as { message: string }).message;
    expect(message).toContain("the repository configuration has no statefulSetPathTemplate");
    expect(message).toContain(
      '"statefulSetPathTemplate": "clusters/prod/apps/{namespace}/{statefulset}.yaml" in CLAIMSTEP_GITOPS_REPOSITORY',
    );
    expect(forge.writes()).toEqual([]);
  });

  it("refuses (ApplyRejected) when the file is missing or holds no such StatefulSet, and opens nothing", async () => {
    const missing = setup({ files: {} });
    expect(await missing.writer.apply(missing.decision.action, missing.decision)).toMatchObject({
      kind: "refused",
      reason: "ApplyRejected",
      message: expect.stringContaining(
        `${SET_FILE} does not exist on main: statefulSetPathTemplate must name the file that holds StatefulSet default/web's manifest`,
      ),
    });
    expect(missing.forge.writes()).toEqual([]);

    const other = setup({ files: { [SET_FILE]: "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\n" } });
    expect(await other.writer.apply(other.decision.action, other.decision)).toMatchObject({
      kind: "refused",
      reason: "ApplyRejected",
      message: expect.stringContaining(`${SET_FILE} holds no StatefulSet named web`),
    });
    expect(other.forge.writes()).toEqual([]);
  });

  it("edits the document of the set's namespace, not a namespace-less one before it; refuses an ambiguous file and writes nothing (issue 37, item 4)", async () => {
    const desiredJson = JSON.stringify([
      { metadata: { name: "data" }, spec: { resources: { requests: { storage: "2Gi" } } } },
    ]);
    const bare = webManifest(desiredJson).replace("  namespace: default\n", "");
    const file = `${bare}---\n${webManifest(desiredJson)}`;
    const picked = setup({ files: { [SET_FILE]: file } });
    expect(await picked.writer.apply(picked.decision.action, picked.decision)).toMatchObject({ kind: "proposed" });
    const docs = YAML.parseAllDocuments(picked.forge.repo.file(picked.branch, SET_FILE)!.text).map((d) => d.toJS());
    expect(docs.map((d) => d.spec.volumeClaimTemplates[0].spec.resources.requests.storage)).toEqual(["1Gi", "2Gi"]);

    const ambiguous = setup({ files: { [SET_FILE]: file }, defaultNamespace: "{namespace}" });
    expect(await ambiguous.writer.apply(ambiguous.decision.action, ambiguous.decision)).toMatchObject({
      kind: "refused",
      reason: "ApplyRejected",
      message: expect.stringContaining(
        `${SET_FILE} on main holds 2 StatefulSet documents that may be default/web (documents 1 and 2, one without a namespace, which statefulSetDefaultNamespace puts in default): refused, nothing written`,
      ),
    });
    expect(ambiguous.forge.writes()).toEqual([]);
    expect(ambiguous.forge.requests()).toEqual([]);
  });

  it("a new revision is a new branch and a new pull request", async () => {
    const { decision, forge, writer } = setup();
    await writer.apply(decision.action, decision);
    forge.close(1);
    const next = recreateDecision({ storage: "3Gi" });
    expect(await writer.apply(next.action, next)).toMatchObject({ kind: "proposed" });
    expect(forge.requests().map((r) => r.branch)).toEqual([
      `claimstep/default/web/${decision.revision}/recreate`,
      `claimstep/default/web/${next.revision}/recreate`,
    ]);
  });
});
