// GitOps mode: the repository (CLAIMSTEP_GITOPS_REPOSITORY, JSON, adapters/gitops/config.ts) for
// sets with `claimstep.io/apply-via: pull-request`, its token (a secret, kept out of the JSON),
// and the forges' webhook secrets.
import { parseRepositoryConfig, type RepositoryConfig, RepositoryConfigError } from "../../adapters/gitops/config.js";
import type { Parsed, Vars } from "./vars.js";

export function gitopsConfig(
  env: Vars<
    | "CLAIMSTEP_GITOPS_REPOSITORY"
    | "CLAIMSTEP_GITOPS_TOKEN"
    | "CLAIMSTEP_GITHUB_WEBHOOK_SECRET"
    | "CLAIMSTEP_GITLAB_WEBHOOK_TOKEN"
  >,
): Parsed<{ gitops?: RepositoryConfig; githubWebhookSecret?: string; gitlabWebhookToken?: string }> {
  const problems: string[] = [];
  let gitops: RepositoryConfig | undefined;
  if (env.CLAIMSTEP_GITOPS_REPOSITORY) {
    try {
      const repo = JSON.parse(env.CLAIMSTEP_GITOPS_REPOSITORY) as Record<string, unknown>;
      if (typeof repo === "object" && repo !== null && "token" in repo) {
        problems.push(
          "CLAIMSTEP_GITOPS_REPOSITORY: leave the token out of the JSON; put it in the secret CLAIMSTEP_GITOPS_TOKEN",
        );
      } else {
        gitops = parseRepositoryConfig({ ...repo, token: env.CLAIMSTEP_GITOPS_TOKEN ?? "" });
      }
    } catch (err) {
      if (err instanceof RepositoryConfigError)
        problems.push(`CLAIMSTEP_GITOPS_REPOSITORY / CLAIMSTEP_GITOPS_TOKEN: ${err.message}`);
      else problems.push(`CLAIMSTEP_GITOPS_REPOSITORY: not valid JSON (${(err as Error).message})`);
    }
  }
  const { CLAIMSTEP_GITHUB_WEBHOOK_SECRET: github, CLAIMSTEP_GITLAB_WEBHOOK_TOKEN: gitlab } = env;
  return {
    config: {
      ...(gitops ? { gitops } : {}),
      ...(github ? { githubWebhookSecret: github } : {}),
      ...(gitlab ? { gitlabWebhookToken: gitlab } : {}),
    },
    problems,
  };
}
