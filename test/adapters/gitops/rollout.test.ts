// A whole rollout in pull-request mode on the simulated cluster. claimstep never writes a claim:
// each step opens a pull request; "merging" it in the fake forge applies its manifest to the
// cluster the way Argo CD (ServerSideApply=true) would, and the forge's signed webhook steps the
// set. Cron ticks in between let the resize finish. The rollout must end Complete.
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { writerFor } from "../../../adapters/gitops/apply-via.js";
import { pullRequestWriter } from "../../../adapters/gitops/writer.js";
import { claimTemplate, type SimCluster } from "../../../adapters/sim/cluster.js";
import type { Json } from "../../../adapters/sim/store.js";
import { Keys } from "../../../core/keys.js";
import type { StatefulSet } from "../../../core/kube/k8s.js";
import type { SetRef } from "../../../core/types.js";
import { applyModeOf } from "../../../core/view/summary.js";
import { gitopsWebhookRoutes } from "../../../functions/routes/gitops-webhooks.js";
import { runStep, type StepResult } from "../../../functions/step.js";
import { forge, githubWebhook, WEBHOOK_SECRET as SECRET } from "../../support/forge.js";
import { ARGO, gitopsStepper, ROLLOUT_REF as REF, rolloutCluster } from "../../support/gitops-rollout.js";
import { FakeGitHub } from "./fake-github.js";
import { mswServer, PATH_TEMPLATE } from "./helpers.js";

const server = mswServer();

const github = () => forge("github", server, { config: { labels: ["claimstep"] } });
const gitlab = () => forge("gitlab", server);

/** Set prod/db on `templates` at 1Gi; a person asks for 2Gi through pull requests. */
const cluster = (templates: readonly string[] = ["data"]): Promise<SimCluster> =>
  rolloutCluster({
    seed: 6,
    templates: templates.map((name) => ({ name, storage: "1Gi", storageClassName: "fast" })),
    annotations: {
      [Keys.applyVia]: "pull-request",
      [Keys.templates]: JSON.stringify(
        templates.map((name) => claimTemplate({ name, storage: "2Gi", storageClassName: "fast" })),
      ),
    },
    fieldManager: "kubectl",
  });

describe.each([
  ["GitHub", github, ["data"]],
  ["GitLab", gitlab, ["data"]],
  ["GitHub, two claim templates", github, ["data", "wal"]],
] as const)("a rollout in pull-request mode (%s)", (_name, makeForge, templates) => {
  it("runs to Complete with one merged pull request per claim, highest ordinal first, and no claim write by claimstep", async () => {
    const sim = await cluster(templates);
    const forge = makeForge();
    const { step, routes } = gitopsStepper(sim, forge.config);

    const phases: string[] = [];
    let last: StepResult | undefined;
    for (let tick = 0; tick < 60; tick++) {
      last = await step(REF); // cron
      phases.push(`${last.decision.phase}/${last.decision.reason}`);
      if (last.decision.phase === "Complete") break;
      expect(last.decision.phase, last.decision.message).not.toBe("Blocked");
      for (const n of forge.open()) {
        // A person approves: merge. The GitOps controller applies what was merged; the forge fires the webhook.
        for (const file of forge.merge(n))
          await sim.admin.applyClaim(YAML.parse(file.text) as Json, { fieldManager: ARGO, force: true });
        const res = await forge.notifyMerged(routes, n);
        expect(res.status).toBe(200);
        phases.push(`webhook:${((await res.json()) as { phase: string }).phase}`);
      }
      sim.advance(30_000);
    }

    expect(last?.decision.phase).toBe("Complete");
    const revision = last!.decision.revision!;
    expect(forge.count()).toBe(3 * templates.length);
    // One branch per ordinal, highest first; each claim of the ordinal is its own pull request on it.
    expect(forge.branches()).toEqual(
      [2, 1, 0].flatMap((o) => templates.map(() => `claimstep/prod/db/${revision}/${o}`)),
    );
    expect(phases).toContain("Waiting/AwaitingApproval");

    const claims = (await sim.admin.list("persistentvolumeclaims", "prod")).items as Array<{
      metadata: { name: string; labels: Record<string, string> };
      spec: { resources: { requests: { storage: string } } };
    }>;
    expect(
      claims
        .map((c) => [c.metadata.name, c.spec.resources.requests.storage, c.metadata.labels[Keys.revisionLabel]])
        .sort(),
    ).toEqual(templates.flatMap((t) => [0, 1, 2].map((o) => [`${t}-db-${o}`, "2Gi", revision])));
    // Every claim write came from the GitOps controller; claimstep wrote only the set's status and events.
    const claimWriters = new Set(
      sim.audit.filter((e) => e.resource === "persistentvolumeclaims" && e.verb === "apply").map((e) => e.actor),
    );
    expect(claimWriters).toEqual(new Set([ARGO]));
    expect(sim.audit.some((e) => e.actor === "claimstep" && e.resource === "statefulsets" && e.verb === "patch")).toBe(
      true,
    );
    const set = (await sim.admin.get("statefulsets", "prod", "db")) as {
      metadata: { annotations: Record<string, string> };
    };
    expect(set.metadata.annotations[Keys.currentRevision]).toBe(revision);

    // Converged: one more step writes nothing anywhere.
    const before = { audit: sim.audit.length, prs: forge.count() };
    const again = await step(REF);
    expect(again.decision.phase).toBe("Complete");
    expect(sim.audit.slice(before.audit)).toEqual([]);
    expect(forge.count()).toBe(before.prs);
  });
});

describe("a rejected pull request in the simulated rollout", () => {
  it("pauses the set (Blocked/ChangeRejected, recorded in its status) until it is reopened", async () => {
    const sim = await cluster();
    const gh = new FakeGitHub("octo", "fleet");
    server.use(...gh.handlers());
    const prWriter = pullRequestWriter({
      provider: "github",
      repository: "octo/fleet",
      pathTemplate: PATH_TEMPLATE,
      token: gh.token,
    });
    const writers = { ...sim.writers, claims: writerFor({ direct: sim.writers.claims, pullRequest: prWriter }) };
    const step = (ref: SetRef) => runStep({ reader: sim.reader, writers, ref, now: sim.now() });
    const routes = gitopsWebhookRoutes({ github: { secret: SECRET }, step });

    expect((await step(REF)).decision).toMatchObject({ phase: "Waiting", reason: "AwaitingApproval" });
    gh.close(1);
    const res = await githubWebhook(routes, gh, 1, "closed");
    expect(await res.json()).toMatchObject({
      phase: "Blocked",
      reason: "ChangeRejected",
      outcome: "refused",
      pullRequest: { outcome: "closed" },
    });
    const set = (await sim.admin.get("statefulsets", "prod", "db")) as {
      metadata: { annotations: Record<string, string> };
    };
    expect(JSON.parse(set.metadata.annotations[Keys.status]!)).toMatchObject({
      phase: "Blocked",
      reason: "ChangeRejected",
    });
    expect((await step(REF)).decision.reason).toBe("ChangeRejected");

    gh.reopen(1);
    expect((await step(REF)).decision).toMatchObject({ phase: "Waiting", reason: "AwaitingApproval" });
    expect(gh.pulls).toHaveLength(1);
  });
});

describe("the pull request the status page links (issue 24, item 7)", () => {
  // Defect: the page linked the last URL of the status message, not the pull request the writer made.
  it("is the one the writer created or found, recorded in claimstep.io/status, while it waits and once it is closed", async () => {
    const sim = await cluster();
    const gh = new FakeGitHub("octo", "fleet");
    server.use(...gh.handlers());
    const prWriter = pullRequestWriter({
      provider: "github",
      repository: "octo/fleet",
      pathTemplate: PATH_TEMPLATE,
      token: gh.token,
    });
    const writers = { ...sim.writers, claims: writerFor({ direct: sim.writers.claims, pullRequest: prWriter }) };
    const step = (ref: SetRef) => runStep({ reader: sim.reader, writers, ref, now: sim.now() });
    const url = "https://github.com/octo/fleet/pull/1";
    const recorded = async () => {
      const set = (await sim.admin.get("statefulsets", "prod", "db")) as unknown as StatefulSet;
      const status = JSON.parse(set.metadata.annotations![Keys.status]!);
      return { status, link: applyModeOf(set, status).link };
    };

    expect((await step(REF)).decision).toMatchObject({ phase: "Waiting", reason: "AwaitingApproval" });
    expect(await recorded()).toMatchObject({ status: { pullRequest: url }, link: url });
    gh.close(1);
    expect((await step(REF)).decision.reason).toBe("ChangeRejected");
    expect(await recorded()).toMatchObject({ status: { reason: "ChangeRejected", pullRequest: url }, link: url });
  });
});
