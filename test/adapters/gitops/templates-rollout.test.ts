// Issue 27 through the GitOps door, whole, on the simulated cluster: set prod/db (3 replicas,
// template `data`) asks in Git for a `logs` template and a pod template that mounts it
// (`claimstep.io/volume-claim-templates`, `claimstep.io/pod-template`, `claimstep.io/finalize:
// Recreate`, `claimstep.io/apply-via: pull-request`), as Argo CD applied them. claimstep opens one
// pull request that makes the manifest in Git carry the new template and the pod template; its
// merge approves the re-create, after which claimstep re-creates the set, the controller creates
// each pod's logs claim and the pods are restarted one at a time. The data claims keep their
// uids, no claim is deleted, and Git equals the live set.
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
const LOGS = claimTemplate({ name: "logs", storage: "1Gi", storageClassName: "fast" });

type Pod = {
  metadata: { name: string; uid: string; annotations?: Record<string, string> };
  spec: { containers: Array<{ volumeMounts?: Array<{ name: string }> }>; volumes?: Array<{ name: string }> };
};

/** The pod template of prod/db with a mount of `logs`, as a person writes it. */
function podTemplateWithLogs(): Json {
  const template = structuredClone((rolloutManifest(LIVE) as { spec: { template: Json } }).spec.template) as {
    spec: { containers: Array<Record<string, unknown>> };
  };
  template.spec.containers[0]!.volumeMounts = [{ name: "logs", mountPath: "/var/log/app" }];
  return template as unknown as Json;
}

const ANNOTATIONS = {
  [Keys.applyVia]: "pull-request",
  [Keys.finalize]: "Recreate",
  [Keys.templates]: JSON.stringify([claimTemplate({ name: "data", storage: "1Gi", storageClassName: "fast" }), LOGS]),
  [Keys.podTemplate]: JSON.stringify(podTemplateWithLogs()),
};

/** The set as it is in Git (what Argo CD applied), with a comment a person keeps. */
function gitManifest(): string {
  const manifest = rolloutManifest(LIVE) as Json & { metadata: { annotations: Record<string, string> } };
  manifest.metadata.annotations = { ...manifest.metadata.annotations, ...ANNOTATIONS };
  return `# prod/db — reviewed by the storage team\n${YAML.stringify(manifest, { lineWidth: 0 }).replace("replicas: 3", "replicas: 3 # three zones")}`;
}

const uids = async (sim: SimCluster, resource: "pods" | "persistentvolumeclaims"): Promise<Record<string, string>> =>
  Object.fromEntries(
    ((await sim.admin.list(resource, "prod")).items as Pod[]).map((o) => [o.metadata.name, o.metadata.uid]),
  );

describe.each(["github", "gitlab"] as const)("adding a claim template through a merged pull request (%s)", (kind) => {
  it("one pull request carries the logs template and the pod template that mounts it; merged, the set is re-created and every pod ends mounting data and logs; data claims kept, none deleted", {
    timeout: 120_000,
  }, async () => {
    const sim = await rolloutCluster({ seed: 27, templates: LIVE, annotations: ANNOTATIONS });
    const f = forge(kind, server, {
      files: { [SET_FILE]: gitManifest() },
      config: { statefulSetPathTemplate: SET_PATH_TEMPLATE },
    });
    const { step, routes } = gitopsStepper(sim, f.config);
    const dataClaims = await uids(sim, "persistentvolumeclaims");
    const podUids = await uids(sim, "pods");
    expect(Object.keys(dataClaims).sort()).toEqual(["data-db-0", "data-db-1", "data-db-2"]);

    const reasons: string[] = [];
    let last: StepResult | undefined;
    for (let tick = 0; tick < 200; tick++) {
      last = await step(REF);
      reasons.push(last.decision.reason);
      const recreated = reasons.indexOf("RecreatedPodsNext");
      if (last.decision.phase === "Complete" && recreated >= 0 && recreated < reasons.length - 1) break;
      expect(last.decision.phase, last.decision.message).not.toBe("Blocked");
      for (const n of f.open()) {
        // A person merges; Argo CD applies a claim file; the set's sync fails until the re-create
        // (the API server refuses the template edit), so it is not tried here.
        for (const file of f.merge(n))
          if (file.path !== SET_FILE)
            await sim.admin.applyClaim(YAML.parse(file.text) as Json, { fieldManager: ARGO, force: true });
        const res = await f.notifyMerged(routes, n);
        expect(res.status).toBe(200);
        reasons.push(`webhook:${((await res.json()) as { reason: string }).reason}`);
      }
      sim.advance(30_000);
    }
    expect(last?.decision.phase, `${reasons.join(" ")}\n${last?.decision.message}`).toBe("Complete");

    // The data claims are stamped with the new revision (one pull request each, highest ordinal
    // first), then one pull request proposes the re-create; after it, the pods restart and the
    // controller's new logs claims are stamped the same way (on the ordinals' branches again).
    const revision = last!.decision.revision!;
    const ordinals = [2, 1, 0].map((o) => `claimstep/prod/db/${revision}/${o}`);
    expect(f.branches()).toEqual([...ordinals, `claimstep/prod/db/${revision}/recreate`, ...ordinals]);
    const from = reasons.indexOf("webhook:RecreateApproved");
    expect(reasons.slice(from + 1, reasons.indexOf("PartitionRestored") + 1)).toEqual([
      "RecordWritten",
      "RecordArmed",
      "SetOrphaned",
      "SetCreated",
      "OwnershipRestored",
      // The record goes; not Complete: the pods restart next to mount logs.
      "RecreatedPodsNext",
      "PodEvicted",
      "PodEvicted",
      "PodEvicted",
      "PartitionRestored",
    ]);
    const git = f.file(SET_FILE)!;
    expect(git).toContain("# prod/db — reviewed by the storage team");
    expect(git).toContain("replicas: 3 # three zones");
    const inGit = YAML.parse(git) as {
      metadata: { annotations: Record<string, string> };
      spec: { template: Pod; volumeClaimTemplates: Array<{ metadata: { name: string } }> };
    };
    expect(inGit.spec.volumeClaimTemplates.map((t) => t.metadata.name)).toEqual(["data", "logs"]);
    expect(inGit.spec.template).toEqual(podTemplateWithLogs());
    expect(inGit.metadata.annotations).not.toHaveProperty(Keys.podTemplate);
    expect(inGit.metadata.annotations).not.toHaveProperty(Keys.templates);
    const pr = f.requests().find((r) => r.branch.endsWith("/recreate"))!;
    expect(pr.body).toContain(
      "| logs | template | – | added: storage 1Gi, storageClassName fast, accessModes ReadWriteOnce |",
    );
    expect(pr.body).toContain("**The pod template changes with it**");

    // The live set equals Git's templates; every pod mounts data and logs; the data claims are the same.
    const set = (await sim.admin.get("statefulsets", "prod", "db")) as {
      spec: { volumeClaimTemplates: Array<{ metadata: { name: string } }> };
    };
    expect(set.spec.volumeClaimTemplates.map((t) => t.metadata.name)).toEqual(["data", "logs"]);
    const pods = (await sim.admin.list("pods", "prod")).items as Pod[];
    expect(pods).toHaveLength(3);
    // Each pod was replaced (evicted, re-created by the controller with the logs volume).
    for (const pod of pods) expect(podUids[pod.metadata.name], pod.metadata.name).not.toBe(pod.metadata.uid);
    for (const pod of pods) {
      expect(pod.spec.volumes?.map((v) => v.name)).toEqual(expect.arrayContaining(["data", "logs"]));
      expect(pod.spec.containers[0]!.volumeMounts?.map((m) => m.name)).toContain("logs");
    }
    const claims = await uids(sim, "persistentvolumeclaims");
    for (const [name, uid] of Object.entries(dataClaims)) expect(claims[name]).toBe(uid);
    expect(Object.keys(claims).sort()).toEqual([
      "data-db-0",
      "data-db-1",
      "data-db-2",
      "logs-db-0",
      "logs-db-1",
      "logs-db-2",
    ]);
    expect(sim.audit.filter((e) => e.resource === "persistentvolumeclaims" && e.verb === "delete")).toEqual([]);
  });
});

const TWO = [
  { name: "data", storage: "1Gi", storageClassName: "fast" },
  { name: "wal", storage: "1Gi", storageClassName: "fast" },
];
const REMOVE_ANNOTATIONS = {
  [Keys.applyVia]: "pull-request",
  [Keys.finalize]: "Recreate",
  [Keys.removeTemplates]: '["wal"]',
};

describe.each(["github", "gitlab"] as const)("removing a claim template through a merged pull request (%s)", (kind) => {
  it("one pull request takes wal out of the manifest (the remove list kept in Git); merged, the set is re-created without it, the pods stop having it, its claims are kept and labelled", {
    timeout: 120_000,
  }, async () => {
    const sim = await rolloutCluster({ seed: 28, templates: TWO, annotations: REMOVE_ANNOTATIONS });
    const manifest = rolloutManifest(TWO) as Json & { metadata: { annotations: Record<string, string> } };
    manifest.metadata.annotations = { ...manifest.metadata.annotations, ...REMOVE_ANNOTATIONS };
    const f = forge(kind, server, {
      files: { [SET_FILE]: `# prod/db\n${YAML.stringify(manifest, { lineWidth: 0 })}` },
      config: { statefulSetPathTemplate: SET_PATH_TEMPLATE },
    });
    const { step, routes } = gitopsStepper(sim, f.config);
    const claimsBefore = await uids(sim, "persistentvolumeclaims");
    expect(Object.keys(claimsBefore)).toHaveLength(6);

    const reasons: string[] = [];
    let last: StepResult | undefined;
    for (let tick = 0; tick < 200; tick++) {
      last = await step(REF);
      reasons.push(last.decision.reason);
      const recreated = reasons.indexOf("RecreatedPodsNext");
      if (last.decision.phase === "Complete" && recreated >= 0 && recreated < reasons.length - 1) break;
      expect(last.decision.phase, last.decision.message).not.toBe("Blocked");
      for (const n of f.open()) {
        for (const file of f.merge(n))
          if (file.path !== SET_FILE)
            await sim.admin.applyClaim(YAML.parse(file.text) as Json, { fieldManager: ARGO, force: true });
        expect((await f.notifyMerged(routes, n)).status).toBe(200);
      }
      sim.advance(30_000);
    }
    expect(last?.decision.phase, `${reasons.join(" ")}\n${last?.decision.message}`).toBe("Complete");

    const pr = f.requests().find((r) => r.branch.endsWith("/recreate"))!;
    expect(pr.body).toContain("| wal | template | present | removed |");
    expect(pr.body).toContain(`${Keys.orphanedFrom}=db`);
    const inGit = YAML.parse(f.file(SET_FILE)!) as {
      metadata: { annotations: Record<string, string> };
      spec: { volumeClaimTemplates: Array<{ metadata: { name: string } }> };
    };
    expect(inGit.spec.volumeClaimTemplates.map((t) => t.metadata.name)).toEqual(["data"]);
    expect(inGit.metadata.annotations[Keys.removeTemplates]).toBe('["wal"]');

    const set = (await sim.admin.get("statefulsets", "prod", "db")) as {
      spec: { volumeClaimTemplates: Array<{ metadata: { name: string } }> };
    };
    expect(set.spec.volumeClaimTemplates.map((t) => t.metadata.name)).toEqual(["data"]);
    for (const pod of (await sim.admin.list("pods", "prod")).items as Pod[])
      expect(pod.spec.volumes?.map((v) => v.name)).not.toContain("wal");
    // Every claim is kept (same uids); the wal claims carry the orphaned-from label.
    expect(await uids(sim, "persistentvolumeclaims")).toEqual(claimsBefore);
    for (const o of [0, 1, 2]) {
      const claim = (await sim.admin.get("persistentvolumeclaims", "prod", `wal-db-${o}`)) as {
        metadata: { labels?: Record<string, string> };
      };
      expect(claim.metadata.labels?.[Keys.orphanedFrom]).toBe("db");
    }
    expect(sim.audit.filter((e) => e.resource === "persistentvolumeclaims" && e.verb === "delete")).toEqual([]);
  });
});
