// A whole rollout → finalize in pull-request mode on the simulated cluster. The set asks for
// `claimstep.io/apply-via: pull-request` and `claimstep.io/finalize: Recreate`: it rolls out
// through one pull request per claim, then gets one more pull request that edits its manifest in
// Git to carry the new templates. "Merging" a pull request in the fake forge applies what was
// merged the way Argo CD would (a claim file is server-side applied; the StatefulSet's sync fails,
// as the API server refuses to edit volumeClaimTemplates) and fires the signed webhook. The
// merge of the re-create proposal approves it; the next steps write the record, delete the set
// (orphan), create it and remove the record: the set is re-created with the new templates, its
// pods and claims kept, and then equals Git.
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { claimTemplate, type SimCluster } from "../../../adapters/sim/cluster.js";
import type { Json } from "../../../adapters/sim/store.js";
import { Keys } from "../../../core/keys.js";
import type { StepResult } from "../../../functions/step.js";
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
const LIVE = [{ name: "data", storage: "1Gi", storageClassName: "fast" }];

const github = (files: Record<string, string>) =>
  forge("github", server, { files, config: { statefulSetPathTemplate: SET_PATH_TEMPLATE } });
const gitlab = (files: Record<string, string>) =>
  forge("gitlab", server, { files, config: { statefulSetPathTemplate: SET_PATH_TEMPLATE } });

const ANNOTATIONS = {
  [Keys.applyVia]: "pull-request",
  [Keys.finalize]: "Recreate",
  [Keys.templates]: JSON.stringify([claimTemplate({ name: "data", storage: "2Gi", storageClassName: "fast" })]),
};

/** The set as it is in Git (what Argo CD applied): the manifest, claimstep's annotations, comments. */
function gitManifest(): string {
  const manifest = rolloutManifest(LIVE) as Json & {
    metadata: { annotations: Record<string, string> };
  };
  manifest.metadata.annotations = { ...manifest.metadata.annotations, ...ANNOTATIONS };
  return `# prod/db — reviewed by the storage team\n${YAML.stringify(manifest).replace("storage: 1Gi", "storage: 1Gi # as first created")}`;
}

const cluster = (): Promise<SimCluster> => rolloutCluster({ seed: 6, templates: LIVE, annotations: ANNOTATIONS });

type Named = {
  metadata: {
    name: string;
    uid: string;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{ uid: string }>;
  };
};
const uids = async (sim: SimCluster, resource: string): Promise<Record<string, string>> =>
  Object.fromEntries(
    ((await sim.admin.list(resource as never, "prod")).items as Named[]).map((o) => [o.metadata.name, o.metadata.uid]),
  );

describe.each([
  ["GitHub", github],
  ["GitLab", gitlab],
] as const)("rollout → finalize in pull-request mode (%s)", (_name, makeForge) => {
  it("rolls out through claim pull requests, then re-creates the set once its manifest pull request is merged; pods and claims are kept", {
    timeout: 60_000,
  }, async () => {
    const sim = await cluster();
    const forge = makeForge({ [SET_FILE]: gitManifest() });
    const { step, routes } = gitopsStepper(sim, forge.config);
    const oldSet = (await sim.admin.get("statefulsets", "prod", "db")) as Named;
    const pods = await uids(sim, "pods");
    const claims = await uids(sim, "persistentvolumeclaims");
    expect(Object.keys(pods)).toHaveLength(3);

    const reasons: string[] = [];
    const argoSyncs: Array<number | "ok"> = [];
    let last: StepResult | undefined;
    for (let tick = 0; tick < 80; tick++) {
      last = await step(REF); // cron
      reasons.push(last.decision.reason);
      if (last.decision.reason === "SetRecreated") break;
      expect(last.decision.phase, last.decision.message).not.toBe("Blocked");
      for (const n of forge.open()) {
        // A person merges; Argo CD applies what was merged; the forge fires the webhook.
        for (const file of forge.merge(n)) {
          if (file.path === SET_FILE) argoSyncs.push(await argoSyncSet(sim, file.text));
          else await sim.admin.applyClaim(YAML.parse(file.text) as Json, { fieldManager: ARGO, force: true });
        }
        const res = await forge.notifyMerged(routes, n);
        expect(res.status).toBe(200);
        reasons.push(`webhook:${((await res.json()) as { reason: string }).reason}`);
      }
      sim.advance(30_000);
    }

    expect(last?.decision.reason, last?.decision.message).toBe("SetRecreated");
    const revision = last!.decision.revision!;
    // Three claim pull requests, highest ordinal first, then the re-create proposal.
    expect(forge.branches()).toEqual([
      ...[2, 1, 0].map((o) => `claimstep/prod/db/${revision}/${o}`),
      `claimstep/prod/db/${revision}/recreate`,
    ]);
    // The merge of the proposal approved the re-create; then one request per step: record, orphan delete, create, record removed.
    const from = reasons.indexOf("webhook:RecreateApproved");
    expect(from).toBeGreaterThan(reasons.indexOf("RolloutComplete"));
    expect(reasons.slice(from + 1).filter((r) => !["Recreating"].includes(r))).toEqual([
      "RecordWritten",
      "RecordArmed",
      "SetOrphaned",
      "SetCreated",
      "OwnershipRestored",
      "SetRecreated",
    ]);
    // Before the re-create, Argo CD's sync of the set is refused by the API server (the note in the pull request).
    expect(argoSyncs).toEqual([422]);

    // Re-created: a new uid, the new templates, the annotation gone; the same pods and claims, now owned by the new set.
    const set = (await sim.admin.get("statefulsets", "prod", "db")) as Named & {
      spec: { volumeClaimTemplates: Array<{ spec: { resources: { requests: { storage: string } } } }> };
    };
    expect(set.metadata.uid).not.toBe(oldSet.metadata.uid);
    expect(set.spec.volumeClaimTemplates.map((t) => t.spec.resources.requests.storage)).toEqual(["2Gi"]);
    expect(set.metadata.annotations).not.toHaveProperty(Keys.templates);
    expect(set.metadata.annotations).not.toHaveProperty(Keys.recreateApproved);
    expect(set.metadata.annotations?.[Keys.finalize]).toBe("Recreate");
    expect(await uids(sim, "pods")).toEqual(pods);
    expect(await uids(sim, "persistentvolumeclaims")).toEqual(claims);
    for (const pod of (await sim.admin.list("pods", "prod")).items as Named[])
      expect(pod.metadata.ownerReferences?.[0]?.uid).toBe(set.metadata.uid);
    expect(
      (await sim.admin.list("configmaps", "prod")).items.filter(
        (c) => (c as Named).metadata.name === "claimstep-recreate-db",
      ),
    ).toEqual([]);
    // claimstep deleted and created the set (direct); it never wrote a claim.
    const byClaimstep = sim.audit
      .filter((e) => e.actor === "claimstep" && e.resource === "statefulsets")
      .map((e) => e.verb);
    expect(byClaimstep).toEqual(expect.arrayContaining(["delete", "create"]));
    expect(
      new Set(
        sim.audit.filter((e) => e.resource === "persistentvolumeclaims" && e.verb === "apply").map((e) => e.actor),
      ),
    ).toEqual(new Set([ARGO]));

    // Git and the live set agree now: Argo CD's next sync of the set goes through.
    const git = forge.file(SET_FILE)!;
    expect(git).toContain("# prod/db — reviewed by the storage team");
    expect(git).toContain("storage: 2Gi # as first created");
    expect(await argoSyncSet(sim, git)).toBe("ok");

    // Settled: the next step is Complete and writes nothing to the cluster or the forge.
    const before = { audit: sim.audit.length, prs: forge.branches().length };
    const again = await step(REF);
    expect(again.decision.phase, again.decision.message).toBe("Complete");
    expect(sim.audit.slice(before.audit).filter((e) => e.verb !== "patch" || e.resource !== "statefulsets")).toEqual(
      [],
    );
    expect(forge.branches()).toHaveLength(before.prs);
  });
});

/**
 * Argo CD syncing the set from Git: its claim templates and annotations as Git has them (a merge
 * patch; claimstep's annotations that Git does not carry are removed). The API server's answer.
 */
async function argoSyncSet(sim: SimCluster, text: string): Promise<number | "ok"> {
  const git = YAML.parse(text) as {
    metadata: { annotations?: Record<string, string> };
    spec: { volumeClaimTemplates: unknown[] };
  };
  const live = (await sim.admin.get("statefulsets", "prod", "db")) as Named;
  const annotations: Record<string, string | null> = { ...git.metadata.annotations };
  for (const k of [Keys.templates, Keys.recreateApproved])
    if (!(k in annotations) && live.metadata.annotations?.[k] !== undefined) annotations[k] = null;
  try {
    await sim.admin.mergePatch(
      "statefulsets",
      "prod",
      "db",
      { metadata: { annotations }, spec: { volumeClaimTemplates: git.spec.volumeClaimTemplates } } as Json,
      { fieldManager: ARGO },
    );
    return "ok";
  } catch (err) {
    return (err as { code: number }).code;
  }
}
