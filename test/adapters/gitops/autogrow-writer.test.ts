// The pull-request writer carrying out autogrow's raise (RaiseTemplate in GitOps mode), against
// the msw fakes of GitHub and GitLab: one branch and at most one pull request per set and revision
// grown from, editing the desired-templates annotation in the StatefulSet's manifest (its style and
// the comments kept); merged = done (`applied`); a later, larger growth updates the same request;
// closed = refused; and what it says without statefulSetPathTemplate.
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { pullRequestWriter } from "../../../adapters/gitops/writer.js";
import { Keys } from "../../../core/keys.js";
import { revisionOf } from "../../../core/kube/revision.js";
import { planStep } from "../../../core/plan/plan.js";
import { policyOf } from "../../../core/policy/policy.js";
import type { Decision, RaiseTemplate, UsageReading } from "../../../core/types.js";
import { claimsFor, makeSet, snapshot } from "../../core/builders.js";
import { forge } from "../../support/forge.js";
import { mswServer, NOW, PULL_REQUESTS, SET_PATH_TEMPLATE } from "./helpers.js";

const server = mswServer();
const SET_FILE = "clusters/prod/apps/default/web.yaml";
const GI = 1024n ** 3n;
const POLICY = JSON.stringify({ threshold: "80%", increase: "25%", max: "10Gi" });

/** Set `web` complete at data 2Gi in pull-request mode with autogrow; the planner's raise for this usage. */
function raiseDecision(
  volumes: Array<{ claim: string; usedGi: number; capacityGi: number }>,
): Decision & { action: RaiseTemplate } {
  const set = makeSet({
    desired: [{ name: "data", storage: "2Gi" }],
    annotations: { [Keys.autogrow]: POLICY, [Keys.applyVia]: "pull-request" },
  });
  const parsed = policyOf(set);
  if (!parsed.ok) throw new Error(parsed.message);
  const { revision } = parsed.policy;
  set.metadata.annotations = {
    ...set.metadata.annotations,
    [Keys.currentRevision]: revision,
    [Keys.updateRevision]: revision,
  };
  const reading: UsageReading = {
    ok: true,
    volumes: volumes.map((v) => ({
      claim: v.claim,
      usedBytes: BigInt(Math.round(v.usedGi * 1024)) * 1024n ** 2n,
      capacityBytes: BigInt(v.capacityGi) * GI,
    })),
  };
  const decision = planStep(
    { ...snapshot(set, claimsFor(set, { storage: "2Gi", revision })), volumeUsage: reading },
    NOW,
    PULL_REQUESTS,
  );
  if (decision.action?.type !== "RaiseTemplate")
    throw new Error(`expected RaiseTemplate, got ${decision.phase}/${decision.reason}: ${decision.message}`);
  return decision as Decision & { action: RaiseTemplate };
}

/** The desired-templates annotation as the live set has it (what Argo CD applied from Git). */
const desiredJson = (): string =>
  makeSet({ desired: [{ name: "data", storage: "2Gi" }] }).metadata.annotations![Keys.templates]!;

/** Set `web`'s manifest in Git: the annotation single-quoted, or as a block scalar. */
function manifest(style: "quoted" | "block" = "quoted"): string {
  const annotation = style === "quoted" ? `'${desiredJson()}'` : `|\n      ${desiredJson()}`;
  return `# web — the storefront's database
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  namespace: default
  annotations:
    claimstep.io/volume-claim-update-strategy: InPlace
    claimstep.io/apply-via: pull-request
    claimstep.io/autogrow: '${POLICY}' # grow before it fills
    claimstep.io/volume-claim-templates: ${annotation}
spec:
  replicas: 3
  serviceName: web
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: app
          image: registry.k8s.io/pause:3.9
  volumeClaimTemplates:
    - metadata:
        name: data # the only volume
      spec:
        accessModes: [ReadWriteOnce]
        resources:
          requests:
            storage: 1Gi # as created
`;
}

const github = (files: Record<string, string>) => forge("github", server, { files });
const gitlab = (files: Record<string, string>) => forge("gitlab", server, { files });

const storageIn = (text: string): string[] =>
  (
    JSON.parse(YAML.parse(text).metadata.annotations[Keys.templates]) as Array<{
      spec: { resources: { requests: { storage: string } } };
    }>
  ).map((t) => t.spec.resources.requests.storage);

describe.each([
  ["GitHub", github],
  ["GitLab", gitlab],
] as const)("autogrow's raise on %s", (_name, makeForge) => {
  function setup(
    opts: { files?: Record<string, string>; statefulSetPathTemplate?: string | null; style?: "quoted" | "block" } = {},
  ) {
    // data-web-2 at 1.9 of 2Gi (95%): 2Gi × 1.25 rounded up → 3Gi.
    const decision = raiseDecision([{ claim: "data-web-2", usedGi: 1.9, capacityGi: 2 }]);
    const forge = makeForge(opts.files ?? { [SET_FILE]: manifest(opts.style) });
    const setPath = opts.statefulSetPathTemplate === undefined ? SET_PATH_TEMPLATE : opts.statefulSetPathTemplate;
    const writer = pullRequestWriter(
      { ...forge.config, ...(setPath === null ? {} : { statefulSetPathTemplate: setPath }) },
      { now: forge.now },
    );
    return { decision, forge, writer, branch: `claimstep/default/web/${decision.action.fromRevision}/autogrow` };
  }

  it("supports RaiseTemplate", () => {
    expect(setup().writer.supports).toContain("RaiseTemplate");
  });

  it("opens one pull request on claimstep/{namespace}/{set}/{revision}/autogrow that raises the annotation in the set's manifest, comments kept", async () => {
    const { decision, forge, writer, branch } = setup();
    expect(decision.action).toMatchObject({ template: "data", from: "2Gi", to: "3Gi" });
    const outcome = await writer.apply(decision.action, decision);
    const [pr] = forge.requests();
    expect(outcome).toEqual({
      kind: "proposed",
      detail: `opened pull request #1; merging it grows default/web: data 2Gi → 3Gi, every claim through the rollout — ${pr!.url}`,
      url: pr!.url,
    });
    expect(forge.requests()).toHaveLength(1);
    expect(pr!.branch).toBe(branch);
    expect(forge.repo.changes(branch).map((c) => c.path)).toEqual([SET_FILE]);
    const text = forge.repo.file(branch, SET_FILE)!.text;
    expect(text).toContain("# web — the storefront's database");
    expect(text).toContain("# grow before it fills");
    expect(text).toContain("name: data # the only volume");
    expect(text).toContain("storage: 1Gi # as created"); // spec.volumeClaimTemplates as they are
    const json = JSON.stringify(decision.action.templates);
    expect(text).toContain(`claimstep.io/volume-claim-templates: '${json}'`); // one line, single-quoted as before
    expect(text).toContain(`claimstep.io/autogrown-from: ${decision.action.fromRevision}`);
    const annotations = YAML.parse(text).metadata.annotations;
    expect(annotations[Keys.templates]).toBe(json);
    expect(storageIn(text)).toEqual(["3Gi"]);
    expect(revisionOf(JSON.parse(annotations[Keys.templates]))).toBe(decision.action.toRevision);
    // The base branch is untouched until the merge.
    expect(storageIn(forge.repo.file("main", SET_FILE)!.text)).toEqual(["2Gi"]);

    expect(pr!.title).toBe("claimstep: autogrow StatefulSet default/web — data 2Gi → 3Gi");
    expect(pr!.body).toContain(`(\`${Keys.autogrow}: ${POLICY}\`)`);
    expect(pr!.body).toContain("> data-web-2 uses 1.9Gi of 2Gi (95.0%): raising template data 2Gi → 3Gi");
    expect(pr!.body).toContain(
      `| template | storage now (revision \`${decision.action.fromRevision}\`) | after |\n|---|---|---|\n| data | 2Gi | 3Gi |`,
    );
    expect(pr!.body).toContain(`**Merging** this pull request changes \`${SET_FILE}\``);
    expect(pr!.body).toContain("**every ordinal grows through claimstep's rollout, one at a time**");
    expect(pr!.body).toContain("**Closing** it without merging blocks autogrow of `default/web`");
    expect(forge.repo.commits.at(-1)!.message).toMatch(
      /^claimstep: autogrow web — data 2Gi → 3Gi\n\nStatefulSet default\/web, grown from revision \w+: data-web-2 uses/,
    );
  });

  it("keeps a block scalar a block scalar", async () => {
    const { decision, forge, writer, branch } = setup({ style: "block" });
    await writer.apply(decision.action, decision);
    const text = forge.repo.file(branch, SET_FILE)!.text;
    expect(text).toContain(
      `claimstep.io/volume-claim-templates: |\n      ${JSON.stringify(decision.action.templates)}\n`,
    );
    expect(storageIn(text)).toEqual(["3Gi"]);
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
        /^waiting for pull request #1 to be merged \(autogrow of default\/web from revision \w+; template data 2Gi → 3Gi\)/,
      ),
    });
    expect(outcomes[2]).toEqual(outcomes[1]);
  });

  it("a later, larger growth from the same revision updates the same pull request; a smaller one changes nothing", async () => {
    const { decision, forge, writer, branch } = setup();
    await writer.apply(decision.action, decision);
    // data-web-1 was provisioned at 4Gi and is at 3.9 of it: 4Gi × 1.25 → 5Gi.
    const larger = raiseDecision([{ claim: "data-web-1", usedGi: 3.9, capacityGi: 4 }]);
    expect(larger.action).toMatchObject({ fromRevision: decision.action.fromRevision, to: "5Gi" });
    const outcome = await writer.apply(larger.action, larger);
    expect(outcome).toMatchObject({
      kind: "proposed",
      detail: expect.stringContaining(
        "waiting for pull request #1 to be merged (autogrow of default/web from revision",
      ),
    });
    expect((outcome as { detail: string }).detail).toContain("updated it: data 2Gi → 5Gi");
    expect(forge.requests()).toHaveLength(1);
    expect(forge.repo.commits).toHaveLength(2);
    expect(storageIn(forge.repo.file(branch, SET_FILE)!.text)).toEqual(["5Gi"]);
    const [pr] = forge.requests();
    expect(pr!.title).toBe("claimstep: autogrow StatefulSet default/web — data 2Gi → 5Gi");
    expect(pr!.body).toContain("> data-web-1 uses 3.9Gi of 4Gi (97.5%)");

    // The first reading again (3Gi): the pull request keeps the larger size.
    expect(await writer.apply(decision.action, decision)).toMatchObject({ kind: "proposed", url: pr!.url });
    expect(forge.repo.commits).toHaveLength(2);
    expect(storageIn(forge.repo.file(branch, SET_FILE)!.text)).toEqual(["5Gi"]);
  });

  it("proposed → merged → applied: the base branch carrying the growth is the raise done", async () => {
    const { decision, forge, writer } = setup();
    await writer.apply(decision.action, decision);
    forge.merge(1);
    const outcome = await writer.apply(decision.action, decision);
    expect(outcome).toEqual({
      kind: "applied",
      detail: `pull request #1 (${forge.requests()[0]!.url}) is merged: ${SET_FILE} on main carries the growth of default/web from revision ${decision.action.fromRevision} (data 2Gi → 3Gi); the GitOps controller applies it, then the rollout grows every claim`,
    });
    // A larger growth from the same revision after the merge (before the GitOps controller synced): still done, one growth per revision.
    const larger = raiseDecision([{ claim: "data-web-1", usedGi: 3.9, capacityGi: 4 }]);
    expect(await writer.apply(larger.action, larger)).toMatchObject({ kind: "applied" });
    expect(forge.requests()).toHaveLength(1);
  });

  it("a merged growth that the base branch no longer carries (reverted) is refused", async () => {
    const { decision, forge, writer } = setup();
    const original = forge.repo.file("main", SET_FILE)!.text;
    await writer.apply(decision.action, decision);
    forge.merge(1);
    forge.repo.write("main", SET_FILE, original, "Revert claimstep");
    expect(await writer.apply(decision.action, decision)).toMatchObject({
      kind: "refused",
      reason: "ChangeRejected",
      message: expect.stringContaining("no longer carries the autogrow of default/web"),
    });
  });

  it("applied at once when the base branch already carries the raised templates (a person made the change)", async () => {
    const { decision, forge, writer } = setup();
    const edited = forge.repo
      .file("main", SET_FILE)!
      .text.replace(desiredJson(), JSON.stringify(decision.action.templates));
    forge.repo.write("main", SET_FILE, edited, "grow web by hand");
    expect(await writer.apply(decision.action, decision)).toMatchObject({
      kind: "applied",
      detail: expect.stringMatching(
        /^clusters\/prod\/apps\/default\/web.yaml on main carries the growth of default\/web/,
      ),
    });
    expect(forge.requests()).toHaveLength(0);
  });

  it("waits, proposing nothing, while Git's desired templates are ahead of the live set's", async () => {
    const { decision, forge, writer } = setup();
    const ahead = forge.repo
      .file("main", SET_FILE)!
      .text.replace(desiredJson(), desiredJson().replace('"2Gi"', '"8Gi"'));
    forge.repo.write("main", SET_FILE, ahead, "grow web to 8Gi");
    expect(await writer.apply(decision.action, decision)).toMatchObject({
      kind: "proposed",
      detail: expect.stringContaining("holds other desired templates"),
    });
    expect(forge.writes()).toEqual([]);
  });

  it("closed unmerged → refused (ChangeRejected): autogrow blocks until a person acts; reopened → proposed again", async () => {
    const { decision, forge, writer } = setup();
    await writer.apply(decision.action, decision);
    forge.close(1);
    const refused = await writer.apply(decision.action, decision);
    expect(refused).toEqual({
      kind: "refused",
      reason: "ChangeRejected",
      message: expect.stringContaining(
        `pull request #1 (${forge.requests()[0]!.url}) proposing the autogrow of default/web from revision ${decision.action.fromRevision} was closed without merging: autogrow of default/web is blocked until a person acts`,
      ),
      url: forge.requests()[0]!.url,
    });
    expect((refused as { message: string }).message).toContain(`or change or remove ${Keys.autogrow}`);
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
    expect(message).toContain(`StatefulSet default/web asks for ${Keys.autogrow}`);
    expect(message).toContain("the repository configuration has no statefulSetPathTemplate");
    expect(message).toContain(
      '"statefulSetPathTemplate": "clusters/prod/apps/{namespace}/{statefulset}.yaml" in CLAIMSTEP_GITOPS_REPOSITORY',
    );
    expect(forge.writes()).toEqual([]);
  });

  it("refuses (ApplyRejected) when the file is missing, and opens nothing", async () => {
    const { decision, forge, writer } = setup({ files: {} });
    expect(await writer.apply(decision.action, decision)).toMatchObject({
      kind: "refused",
      reason: "ApplyRejected",
      message: expect.stringContaining(`${SET_FILE} does not exist on main`),
    });
    expect(forge.writes()).toEqual([]);
  });
});
