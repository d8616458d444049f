// Autogrow in pull-request mode on the simulated cluster, end to end. The set asks for
// `claimstep.io/apply-via: pull-request` and `claimstep.io/autogrow`, and is complete at 1Gi. A
// claim fills up past the threshold (the metrics reader reports it): the step opens one pull
// request that raises the desired-templates annotation in the set's manifest in Git. "Merging" it
// fires the signed webhook (the step finds the growth merged: done, waiting for the GitOps tool),
// then Argo CD syncs the manifest's annotations; the new revision rolls out through one pull
// request per claim, each merged and applied like Argo CD would; the set is Complete at 2Gi.
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { claimTemplate, type SimCluster } from "../../../adapters/sim/cluster.js";
import type { Json } from "../../../adapters/sim/store.js";
import { Keys } from "../../../core/keys.js";
import { toBytes } from "../../../core/kube/quantity.js";
import type { MetricsReader } from "../../../core/ports.js";
import type { SetRef } from "../../../core/types.js";
import { runStep, type StepResult } from "../../../functions/step.js";
import { forge } from "../../support/forge.js";
import {
  ARGO,
  gitopsStepper,
  ROLLOUT_REF as REF,
  rolloutCluster,
  rolloutManifest,
} from "../../support/gitops-rollout.js";
import { mswServer, SET_PATH_TEMPLATE } from "./helpers.js";

const server = mswServer();
const SET_FILE = "clusters/prod/apps/prod/db.yaml";
const GI = 1024n ** 3n;

const github = (files: Record<string, string>) =>
  forge("github", server, { files, config: { statefulSetPathTemplate: SET_PATH_TEMPLATE } });
const gitlab = (files: Record<string, string>) =>
  forge("gitlab", server, { files, config: { statefulSetPathTemplate: SET_PATH_TEMPLATE } });

const POLICY = JSON.stringify({ threshold: "80%", increase: "25%", max: "4Gi" });
const ANNOTATIONS = {
  [Keys.applyVia]: "pull-request",
  [Keys.autogrow]: POLICY,
  [Keys.templates]: JSON.stringify([claimTemplate({ name: "data", storage: "1Gi", storageClassName: "fast" })]),
};
const LIVE = [{ name: "data", storage: "1Gi", storageClassName: "fast" }];

/** The set as it is in Git (what Argo CD applied): the manifest, claimstep's annotations, comments; the templates annotation a block scalar. */
function gitManifest(): string {
  const manifest = rolloutManifest(LIVE) as Json & { metadata: { annotations: Record<string, string> } };
  manifest.metadata.annotations = {
    ...manifest.metadata.annotations,
    ...ANNOTATIONS,
    [Keys.templates]: `${ANNOTATIONS[Keys.templates]}\n`,
  };
  return `# prod/db — reviewed by the storage team\n${YAML.stringify(manifest, { lineWidth: 0 }).replace("storage: 1Gi", "storage: 1Gi # as first created")}`;
}

const cluster = (): Promise<SimCluster> => rolloutCluster({ seed: 18, templates: LIVE, annotations: ANNOTATIONS });

type Claim = {
  metadata: { name: string };
  spec: { resources: { requests: { storage: string } } };
  status?: { capacity?: { storage?: string } };
};

/** The kubelet's volume stats as Prometheus would answer them: `used` bytes on each claim, of its capacity. */
function kubeletStats(sim: SimCluster, used: () => Record<string, bigint>): MetricsReader & { queries: number } {
  const reader = {
    queries: 0,
    async usage(ref: SetRef, claims: readonly string[]) {
      reader.queries++;
      const volumes = [];
      for (const c of ((await sim.admin.list("persistentvolumeclaims", ref.namespace)).items as Claim[]).filter((c) =>
        claims.includes(c.metadata.name),
      )) {
        const capacity = c.status?.capacity?.storage;
        const bytes = used()[c.metadata.name];
        if (capacity !== undefined && bytes !== undefined)
          volumes.push({ claim: c.metadata.name, usedBytes: bytes, capacityBytes: toBytes(capacity) });
      }
      return { ok: true as const, volumes };
    },
  };
  return reader;
}

/** Argo CD syncing the set's annotations from Git (a merge patch; the templates are unchanged). */
async function argoSyncSet(sim: SimCluster, text: string): Promise<void> {
  const git = YAML.parse(text) as { metadata: { annotations?: Record<string, string> } };
  await sim.admin.mergePatch(
    "statefulsets",
    "prod",
    "db",
    { metadata: { annotations: git.metadata.annotations } } as Json,
    { fieldManager: ARGO },
  );
}

describe.each([
  ["GitHub", github],
  ["GitLab", gitlab],
] as const)("autogrow in pull-request mode (%s)", (_name, makeForge) => {
  it("a full claim opens one pull request raising the annotation in Git; merged and synced, every claim grows through claim pull requests; Complete at 2Gi", {
    timeout: 60_000,
  }, async () => {
    const sim = await cluster();
    const forge = makeForge({ [SET_FILE]: gitManifest() });
    let used: Record<string, bigint> = { "data-db-0": GI / 10n, "data-db-1": GI / 10n, "data-db-2": GI / 10n };
    const metrics = kubeletStats(sim, () => used);
    const { writers, step, routes } = gitopsStepper(sim, forge.config, { metrics });

    // Complete at 1Gi (an earlier rollout labelled the claims), nothing over the threshold: no pull request.
    const planned = await runStep({ reader: sim.reader, writers, ref: REF, now: sim.now(), dryRun: true });
    for (const o of [0, 1, 2]) {
      await sim.admin.mergePatch(
        "persistentvolumeclaims",
        "prod",
        `data-db-${o}`,
        { metadata: { labels: { [Keys.revisionLabel]: planned.decision.revision! } } } as Json,
        { fieldManager: ARGO },
      );
    }
    let first = await step(REF);
    for (let i = 0; i < 5 && first.decision.phase !== "Complete"; i++) first = await step(REF);
    expect(first.decision.phase, first.decision.message).toBe("Complete");
    const fromRevision = first.decision.revision!;
    expect(forge.branches()).toEqual([]);

    // data-db-2 fills up: 0.9 of 1Gi.
    used = { ...used, "data-db-2": (GI * 9n) / 10n };
    const reasons: string[] = [];
    const syncs: string[] = [];
    let last: StepResult | undefined;
    for (let tick = 0; tick < 80; tick++) {
      last = await step(REF); // cron
      reasons.push(last.decision.reason);
      if (last.decision.phase === "Complete" && last.decision.revision !== fromRevision) break;
      expect(last.decision.phase, last.decision.message).not.toBe("Blocked");
      // Argo CD syncs what was merged to the set's manifest one tick later (its poll is slower than the webhook).
      for (const text of syncs.splice(0)) await argoSyncSet(sim, text);
      for (const n of forge.open()) {
        // A person merges; the forge fires the webhook; Argo CD applies what was merged.
        const files = forge.merge(n);
        const res = await forge.notifyMerged(routes, n);
        expect(res.status).toBe(200);
        reasons.push(`webhook:${((await res.json()) as { reason: string }).reason}`);
        for (const file of files) {
          if (file.path === SET_FILE) syncs.push(file.text);
          else await sim.admin.applyClaim(YAML.parse(file.text) as Json, { fieldManager: ARGO, force: true });
        }
      }
      sim.advance(30_000);
    }

    expect(last?.decision.phase, last?.decision.message).toBe("Complete");
    const revision = last!.decision.revision!;
    expect(revision).not.toBe(fromRevision);
    // One autogrow pull request, then one per claim of the new revision, highest ordinal first.
    expect(forge.branches()).toEqual([
      `claimstep/prod/db/${fromRevision}/autogrow`,
      ...[2, 1, 0].map((o) => `claimstep/prod/db/${revision}/${o}`),
    ]);
    // The raise waited for its merge; the merge's webhook, and the cron step before Argo CD's sync,
    // found it merged (done: the GitOps tool applies it); then the rollout of the new revision.
    // After the merge the steps wait (AwaitingApproval, their status recorded) for the GitOps tool.
    expect(reasons.slice(0, 3)).toEqual(["AwaitingApproval", "webhook:AwaitingApproval", "AwaitingApproval"]);
    expect(reasons.at(-1)).toBe("RolloutComplete");

    // The live set carries Git's annotation: data at 2Gi (1Gi × 1.25 rounded up to a whole Gi), grown from the old revision.
    const set = (await sim.admin.get("statefulsets", "prod", "db")) as {
      metadata: { annotations: Record<string, string> };
    };
    expect(JSON.parse(set.metadata.annotations[Keys.templates]!)[0].spec.resources.requests.storage).toBe("2Gi");
    expect(set.metadata.annotations[Keys.autogrownFrom]).toBe(fromRevision);
    // Every claim grew, each through its own pull request applied by Argo CD; claimstep never wrote a claim itself.
    const claims = (await sim.admin.list("persistentvolumeclaims", "prod")).items as Claim[];
    expect(
      claims.map((c) => [c.metadata.name, c.spec.resources.requests.storage, c.status?.capacity?.storage]),
    ).toEqual([0, 1, 2].map((o) => [`data-db-${o}`, "2Gi", "2Gi"]));
    expect(
      new Set(
        sim.audit.filter((e) => e.resource === "persistentvolumeclaims" && e.verb === "apply").map((e) => e.actor),
      ),
    ).toEqual(new Set([ARGO]));

    // Git: the block scalar stays a block scalar, the comments stay.
    const git = forge.file(SET_FILE)!;
    expect(git).toContain("# prod/db — reviewed by the storage team");
    expect(git).toContain("storage: 1Gi # as first created");
    expect(git).toMatch(/claimstep\.io\/volume-claim-templates: \|\n\s+\[\{.*"storage":"2Gi".*\}\]\n/);
    expect(git).toContain(`claimstep.io/autogrown-from: ${fromRevision}`);

    // Settled: 0.9 of 2Gi is below the threshold; the next step is Complete and proposes nothing.
    const prs = forge.branches().length;
    const again = await step(REF);
    expect(again.decision.phase, again.decision.message).toBe("Complete");
    expect(forge.branches()).toHaveLength(prs);
    expect(metrics.queries).toBeGreaterThan(0);
  });
});
