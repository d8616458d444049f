// The GitOps claim writer: a step's claim update becomes one commit on a deterministic branch and
// one pull request; merging it is the approval, and the GitOps controller (Argo CD, Flux) applies
// it. Nothing here writes to the cluster, and nothing is remembered between invocations: the
// branch, the file and the pull request's state in the repository are the whole state. The set's
// status and Events are not this writer's: the step records them through its own writers.
//
// It also proposes the re-create of a set (ProposeRecreate, finalize in GitOps mode): a pull
// request that edits the StatefulSet's manifest to carry the desired claim templates (added ones
// appended, removed ones taken out, spec.template as held in claimstep.io/pod-template); once the
// base branch carries them (merged), the re-create is approved (`applied`), and the step's direct
// writers carry out F1–F4.
//
// And autogrow's raise of the desired templates (RaiseTemplate): a pull request that edits the
// desired-templates annotation in the StatefulSet's manifest, one branch per set and revision grown
// from (a later, larger growth updates it); once the base branch carries it (merged), the raise is
// done (`applied`): the GitOps controller applies the annotation, and the rollout grows every claim.

import { Keys } from "../../core/keys.js";
import type { ApplyOutcome, ClaimWriter } from "../../core/ports.js";
import type { ClaimAction, Decision, PatchClaim, ProposeRecreate, RaiseTemplate, SetRef } from "../../core/types.js";
import { branchName, UnsafeNameError } from "./branch.js";
import { claimPath, parseRepositoryConfig, type RepositoryConfig, setPath } from "./config.js";
import { GitHubProvider } from "./github.js";
import { GitLabProvider } from "./gitlab.js";
import { carriesAction, editClaimManifest, ManifestError } from "./manifest.js";
import { currentPullRequest, type GitProvider, type ProviderOptions, type PullRequest } from "./provider.js";
import {
  commitMessage,
  growthSummary,
  pullRequestBody,
  pullRequestTitle,
  raiseBody,
  raiseCommitMessage,
  raiseTitle,
  recreateBody,
  recreateCommitMessage,
  recreateTitle,
  templateChangeSummary,
} from "./pull-request-text.js";
import {
  carriesRaise,
  editRaiseManifest,
  growths,
  type ManifestDesired,
  manifestDesired,
  raisedTemplates,
  templatesBefore,
} from "./raise-manifest.js";
import { carriesTemplates, editSetManifest, manifestChanges } from "./set-manifest.js";

export type PullRequestWriterOptions = ProviderOptions;

export class PullRequestWriter implements ClaimWriter {
  readonly name: string;
  readonly supports = ["PatchClaim", "ProposeRecreate", "RaiseTemplate"] as const;
  readonly proposes = true;

  constructor(
    private readonly config: RepositoryConfig,
    private readonly provider: GitProvider,
  ) {
    this.name = `pull-request writer (${provider.name})`;
  }

  async apply(action: ClaimAction, decision: Decision): Promise<ApplyOutcome> {
    try {
      if (action.type === "RaiseTemplate") return await this.raiseTemplate(action, decision);
      return action.type === "ProposeRecreate"
        ? await this.proposeRecreate(action, decision)
        : await this.patchClaim(action, decision);
    } catch (err) {
      if (!(err instanceof ManifestError || err instanceof UnsafeNameError)) throw err;
      return { kind: "refused", reason: "ApplyRejected", message: `${this.name}: ${err.message}` };
    }
  }

  private async patchClaim(action: PatchClaim, decision: Decision): Promise<ApplyOutcome> {
    const revision = decision.revision ?? action.labels[Keys.revisionLabel];
    if (!revision)
      throw new Error(`${this.name}: the decision for ${action.claim} carries no revision; cannot name its branch`);
    const branch = branchName({ ref: decision.ref, revision, ordinal: action.ordinal });
    const path = claimPath(this.config.pathTemplate, {
      namespace: action.namespace,
      name: action.claim,
      statefulset: decision.ref.name,
      template: action.template,
      ordinal: action.ordinal,
    });
    const pr = currentPullRequest(await this.provider.findPullRequests(branch));
    if (pr?.state === "closed") return this.rejected(pr, decision.ref, action);
    if (pr?.state === "open") {
      await this.commit(branch, path, action, decision);
      return proposed(pr, `waiting for pull request #${pr.number} to be merged: ${describe(action)}`);
    }
    // No request yet, or a merged one. If the base branch carries the change, wait for the GitOps controller.
    const onBase = await this.provider.readFile(path, this.provider.baseBranch);
    if (carriesAction(onBase?.text, action, path)) {
      if (pr)
        return proposed(
          pr,
          `pull request #${pr.number} is merged; waiting for the GitOps controller to apply ${path} (${describe(action)})`,
        );
      return {
        kind: "proposed",
        detail: `${path} on ${this.provider.baseBranch} already carries ${describe(action)}; waiting for the GitOps controller to apply it`,
      };
    }
    if (pr && carriesAction((await this.provider.readFile(path, branch))?.text, action, path))
      return this.reverted(pr, path, action);
    // Nothing proposed for this claim yet (a merged request on this branch was for another claim of the ordinal).
    await this.provider.ensureBranch(branch);
    await this.commit(branch, path, action, decision);
    const created = await this.provider.createPullRequest({
      branch,
      title: pullRequestTitle(action, decision),
      body: pullRequestBody(action, decision, path),
    });
    const notes = created.notes.length ? ` (${created.notes.join("; ")})` : "";
    return proposed(
      created,
      `opened pull request #${created.number}; merge it to continue: ${describe(action)}${notes}`,
    );
  }

  /**
   * The re-create proposal: one branch and at most one pull request per set and revision. The
   * base branch's manifest carrying the desired templates is the approval.
   */
  private async proposeRecreate(action: ProposeRecreate, decision: Decision): Promise<ApplyOutcome> {
    const template = this.config.statefulSetPathTemplate;
    const set = `${action.namespace}/${action.set}`;
    if (!template) {
      throw new ManifestError(
        `StatefulSet ${set} asks for ${Keys.finalize}: Recreate, and re-creating it needs a pull request that edits its manifest, but the repository configuration has no statefulSetPathTemplate: add one naming the file of each StatefulSet, e.g. "statefulSetPathTemplate": "clusters/prod/apps/{namespace}/{statefulset}.yaml" in CLAIMSTEP_GITOPS_REPOSITORY (placeholders {namespace} {statefulset}), or remove ${Keys.finalize}`,
      );
    }
    const path = setPath(template, { namespace: action.namespace, statefulset: action.set });
    const branch = branchName({
      ref: { namespace: action.namespace, name: action.set },
      revision: action.revision,
      recreate: true,
    });
    const base = this.provider.baseBranch;
    const what = `re-create of ${set} with the claim templates of revision ${action.revision}`;

    const pr = currentPullRequest(await this.provider.findPullRequests(branch));
    if (pr?.state === "closed") {
      return {
        kind: "refused",
        reason: "ChangeRejected",
        message: `pull request #${pr.number} (${pr.url}) proposing the ${what} was closed without merging: the re-create is paused and the set stays as it is. Reopen it to continue, or change the desired templates (a new revision opens a new pull request), or remove ${Keys.finalize}.`,
        url: pr.url,
      };
    }
    if (pr?.state === "open") {
      await this.commitSet(branch, path, action);
      return proposed(pr, `waiting for pull request #${pr.number} to be merged: it approves the ${what}`);
    }
    // No request yet, or a merged one: the base branch carrying the templates is the approval.
    const onBase = (await this.provider.readFile(path, base))?.text;
    if (carriesTemplates(onBase, action, path, base, this.config.statefulSetDefaultNamespace)) {
      const carried = `${path} on ${base} carries the claim templates of revision ${action.revision}`;
      return { kind: "applied", detail: pr ? `pull request #${pr.number} (${pr.url}) is merged: ${carried}` : carried };
    }
    if (pr) {
      return {
        kind: "refused",
        reason: "ChangeRejected",
        message: `pull request #${pr.number} (${pr.url}) was merged, but ${path} on ${base} no longer carries the claim templates of revision ${action.revision} (reverted?): restore them, or change the desired templates (a new revision opens a new pull request).`,
        url: pr.url,
      };
    }
    const changes = manifestChanges(onBase, action, path, base, this.config.statefulSetDefaultNamespace);
    await this.provider.ensureBranch(branch);
    await this.commitSet(branch, path, action);
    const created = await this.provider.createPullRequest({
      branch,
      title: recreateTitle(action),
      body: recreateBody(action, decision, path, changes, base),
    });
    const notes = created.notes.length ? ` (${created.notes.join("; ")})` : "";
    return proposed(
      created,
      `opened pull request #${created.number}; merging it approves the ${what} (${templateChangeSummary(changes)})${notes}`,
    );
  }

  /**
   * Autogrow's raise: one branch and at most one pull request per set and revision grown from. The
   * base branch's manifest carrying the growth from that revision is the raise done.
   */
  private async raiseTemplate(action: RaiseTemplate, decision: Decision): Promise<ApplyOutcome> {
    const template = this.config.statefulSetPathTemplate;
    const set = `${action.namespace}/${action.set}`;
    if (!template) {
      throw new ManifestError(
        `StatefulSet ${set} asks for ${Keys.autogrow}, and in GitOps mode a growth is a pull request that raises the ${Keys.templates} annotation in its manifest, but the repository configuration has no statefulSetPathTemplate: add one naming the file of each StatefulSet, e.g. "statefulSetPathTemplate": "clusters/prod/apps/{namespace}/{statefulset}.yaml" in CLAIMSTEP_GITOPS_REPOSITORY (placeholders {namespace} {statefulset}), or raise the annotation in Git yourself, or remove ${Keys.autogrow}`,
      );
    }
    const path = setPath(template, { namespace: action.namespace, statefulset: action.set });
    const branch = branchName({
      ref: { namespace: action.namespace, name: action.set },
      revision: action.fromRevision,
      autogrow: true,
    });
    const base = this.provider.baseBranch;
    const what = `autogrow of ${set} from revision ${action.fromRevision}`;

    const pr = currentPullRequest(await this.provider.findPullRequests(branch));
    if (pr?.state === "closed") {
      return {
        kind: "refused",
        reason: "ChangeRejected",
        message: `pull request #${pr.number} (${pr.url}) proposing the ${what} was closed without merging: autogrow of ${set} is blocked until a person acts (it would raise template ${action.template} ${action.from} → ${action.to}). Reopen it to continue, or raise the desired templates in ${path} yourself (a new revision), or change or remove ${Keys.autogrow}.`,
        url: pr.url,
      };
    }
    if (pr?.state === "open") {
      const committed = await this.commitRaise(branch, path, action, decision);
      if (committed)
        await this.provider.updatePullRequest(pr.number, {
          title: raiseTitle(action, committed.grown),
          body: raiseBody(action, committed.grown, decision, path, committed.policy),
        });
      const now = committed
        ? `updated it: ${growthSummary(committed.grown)}`
        : `template ${action.template} ${action.from} → ${action.to}`;
      return proposed(pr, `waiting for pull request #${pr.number} to be merged (${what}; ${now})`);
    }
    // No request yet, or a merged one: the base branch carrying the growth is the raise done.
    const onBase = manifestDesired(
      (await this.provider.readFile(path, base))?.text,
      action,
      path,
      base,
      this.config.statefulSetDefaultNamespace,
    );
    if (carriesRaise(onBase, action)) {
      const carried = `${path} on ${base} carries the growth of ${set} from revision ${action.fromRevision} (${growthSummary(growths(templatesBefore(action), onBase.templates)) || `revision ${onBase.revision}`}); the GitOps controller applies it, then the rollout grows every claim`;
      return { kind: "applied", detail: pr ? `pull request #${pr.number} (${pr.url}) is merged: ${carried}` : carried };
    }
    if (pr) {
      return {
        kind: "refused",
        reason: "ChangeRejected",
        message: `pull request #${pr.number} (${pr.url}) was merged, but ${path} on ${base} no longer carries the ${what} (reverted?): autogrow of ${set} is blocked until a person acts: restore it, or raise the desired templates yourself (a new revision), or change or remove ${Keys.autogrow}.`,
        url: pr.url,
      };
    }
    if (onBase.revision !== action.fromRevision) {
      // Git's desired templates moved on (a change not yet applied): raising the live ones would undo it.
      return {
        kind: "proposed",
        detail: `${path} on ${base} holds other desired templates (revision ${onBase.revision}) than the live set (revision ${action.fromRevision}): waiting for the GitOps controller to apply them before autogrow proposes anything (it would raise template ${action.template} ${action.from} → ${action.to})`,
      };
    }
    await this.provider.ensureBranch(branch);
    const committed = (await this.commitRaise(branch, path, action, decision)) ?? {
      grown: growths(templatesBefore(action), action.templates),
      policy: onBase.policy,
    };
    const created = await this.provider.createPullRequest({
      branch,
      title: raiseTitle(action, committed.grown),
      body: raiseBody(action, committed.grown, decision, path, committed.policy),
    });
    const notes = created.notes.length ? ` (${created.notes.join("; ")})` : "";
    return proposed(
      created,
      `opened pull request #${created.number}; merging it grows ${set}: ${growthSummary(committed.grown)}, every claim through the rollout${notes}`,
    );
  }

  /**
   * Make the branch's manifest carry the raise (combined with one from the same revision it already
   * carries: the larger size wins): at most one commit; undefined when it already does.
   */
  private async commitRaise(
    branch: string,
    path: string,
    action: RaiseTemplate,
    decision: Decision,
  ): Promise<{ grown: ReturnType<typeof growths>; policy: string | undefined } | undefined> {
    const file = await this.provider.readFile(path, branch);
    const onBranch: ManifestDesired = manifestDesired(
      file?.text,
      action,
      path,
      branch,
      this.config.statefulSetDefaultNamespace,
    );
    const templates = raisedTemplates(onBranch, action);
    const edited = editRaiseManifest(
      file?.text,
      action,
      templates,
      path,
      branch,
      this.config.statefulSetDefaultNamespace,
    );
    if (!edited.changed) return undefined;
    const grown = growths(templatesBefore(action), templates);
    await this.provider.writeFile({
      path,
      branch,
      text: edited.text,
      message: raiseCommitMessage(action, grown, decision),
      ...(file ? { previous: file } : {}),
    });
    return { grown, policy: onBranch.policy };
  }

  /** Make the branch's manifest carry the templates: at most one commit, none when it already does. */
  private async commitSet(branch: string, path: string, action: ProposeRecreate): Promise<void> {
    const file = await this.provider.readFile(path, branch);
    const edited = editSetManifest(file?.text, action, path, branch, this.config.statefulSetDefaultNamespace);
    if (!edited.changed) return;
    const message = recreateCommitMessage(
      action,
      manifestChanges(file?.text, action, path, branch, this.config.statefulSetDefaultNamespace),
    );
    await this.provider.writeFile({ path, branch, text: edited.text, message, ...(file ? { previous: file } : {}) });
  }

  /** Make the branch carry the change: at most one commit, none when the file already matches. */
  private async commit(branch: string, path: string, action: PatchClaim, decision: Decision): Promise<void> {
    const file = await this.provider.readFile(path, branch);
    const edited = editClaimManifest(file?.text, action, path);
    if (!edited.changed) return;
    await this.provider.writeFile({
      path,
      branch,
      text: edited.text,
      message: commitMessage(action, decision),
      ...(file ? { previous: file } : {}),
    });
  }

  private rejected(pr: PullRequest, ref: SetRef, action: PatchClaim): ApplyOutcome {
    return {
      kind: "refused",
      reason: "ChangeRejected",
      message: `pull request #${pr.number} (${pr.url}) for ${action.claim} was closed without merging: the rollout of ${ref.namespace}/${ref.name} is paused. Reopen it to continue, or change the desired templates (a new revision opens a new pull request).`,
      url: pr.url,
    };
  }

  /** Merged with this very change, which the base branch no longer carries. */
  private reverted(pr: PullRequest, path: string, action: PatchClaim): ApplyOutcome {
    return {
      kind: "refused",
      reason: "ChangeRejected",
      message: `pull request #${pr.number} (${pr.url}) was merged, but ${path} on ${this.provider.baseBranch} no longer carries ${describe(action)} (reverted?): restore it, or change the desired templates (a new revision opens a new pull request).`,
      url: pr.url,
    };
  }
}

const describe = (a: PatchClaim): string =>
  `${a.namespace}/${a.claim} (ordinal ${a.ordinal}) → storage ${a.storage}${a.volumeAttributesClassName ? `, volumeAttributesClassName ${a.volumeAttributesClassName}` : ""}`;

const proposed = (pr: PullRequest, detail: string): ApplyOutcome => ({
  kind: "proposed",
  detail: `${detail} — ${pr.url}`,
  url: pr.url,
});

/** A writer for a repository config (validated here), over the given fetch. */
export function pullRequestWriter(config: unknown, opts: PullRequestWriterOptions = {}): PullRequestWriter {
  const parsed = parseRepositoryConfig(config);
  const providerOpts: ProviderOptions = {
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
  };
  const provider =
    parsed.provider === "github" ? new GitHubProvider(parsed, providerOpts) : new GitLabProvider(parsed, providerOpts);
  return new PullRequestWriter(parsed, provider);
}
