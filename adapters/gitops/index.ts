// The GitOps adapter's public surface, for the entry points that wire it.
export { unavailableWriter, writerFor, type ClaimWriterChoice } from "./apply-via.js";
export { branchName, parseBranch, type StepBranch } from "./branch.js";
export { RepositoryConfig, RepositoryConfigError, parseRepositoryConfig, type RepositoryConfigInput } from "./config.js";
export { GitProviderError, type Fetch } from "./http.js";
export { PullRequestWriter, pullRequestWriter, type PullRequestWriterOptions } from "./writer.js";
export { signGitHubBody, verifyGitHubSignature, verifyGitLabToken, type PullRequestEvent } from "./webhook.js";
