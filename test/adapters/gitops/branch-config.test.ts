import { describe, expect, it } from "vitest";
import { branchName, parseBranch } from "../../../adapters/gitops/branch.js";
import { RepositoryConfigError, apiUrlOf, claimPath, parseRepositoryConfig } from "../../../adapters/gitops/config.js";

describe("branch names", () => {
  const step = { ref: { namespace: "prod", name: "db" }, revision: "7b5b44c86f", ordinal: 2 };

  it("are claimstep/{namespace}/{statefulset}/{revision}/{ordinal} and parse back", () => {
    expect(branchName(step)).toBe("claimstep/prod/db/7b5b44c86f/2");
    expect(parseBranch("claimstep/prod/db/7b5b44c86f/2")).toEqual(step);
    expect(parseBranch("refs/heads/claimstep/prod/db.v2/7b5b44c86f/10")).toEqual({ ...step, ref: { namespace: "prod", name: "db.v2" }, ordinal: 10 });
  });

  it("reject branches that are not claimstep's", () => {
    for (const name of ["main", "claimstep/prod/db/rev", "claimstep/prod/db/rev/2/extra", "feature/prod/db/rev/2", "claimstep/prod/db/rev/02", "claimstep/prod/db/rev/-1", "claimstep/Prod/db/rev/1", "claimstep//db/rev/1"]) {
      expect(parseBranch(name), name).toBeUndefined();
    }
  });
});

const valid = {
  provider: "github",
  repository: "octo/fleet",
  pathTemplate: "clusters/prod/claims/{namespace}/{name}.yaml",
  token: "ghp_x",
};

describe("repository config", () => {
  it("fills defaults", () => {
    const c = parseRepositoryConfig(valid);
    expect(c).toEqual({ ...valid, baseBranch: "main", labels: [], reviewers: [] });
    expect(apiUrlOf(c)).toBe("https://api.github.com");
    expect(apiUrlOf(parseRepositoryConfig({ ...valid, provider: "gitlab", repository: "group/sub/fleet" }))).toBe("https://gitlab.com/api/v4");
    expect(apiUrlOf(parseRepositoryConfig({ ...valid, apiUrl: "https://ghe.example.com/api/v3/" }))).toBe("https://ghe.example.com/api/v3");
  });

  it("accepts a GitLab numeric project id", () => {
    expect(parseRepositoryConfig({ ...valid, provider: "gitlab", repository: "4242" }).repository).toBe("4242");
  });

  it("lists every problem with its field in one error", () => {
    let error: unknown;
    try {
      parseRepositoryConfig({ provider: "bitbucket", repository: "", pathTemplate: "/claims/{claim}.json", token: "" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RepositoryConfigError);
    const message = (error as Error).message;
    expect(message).toContain('provider: provider must be "github" or "gitlab"');
    expect(message).toContain("repository: repository is empty");
    expect(message).toContain("pathTemplate: pathTemplate uses unknown placeholder(s) {claim}");
    expect(message).toContain("pathTemplate must contain {name}");
    expect(message).toContain("relative to the repository root");
    expect(message).toContain("must end in .yaml or .yml");
    expect(message).toContain("token: token is empty");
  });

  it("names a bad repository, branch, URL or unknown key", () => {
    expect(() => parseRepositoryConfig({ ...valid, repository: "fleet" })).toThrow(/repository "fleet" must be owner\/repo for GitHub/);
    expect(() => parseRepositoryConfig({ ...valid, provider: "gitlab", repository: "fleet" })).toThrow(/GitLab project path/);
    expect(() => parseRepositoryConfig({ ...valid, baseBranch: "ma in" })).toThrow(/baseBranch: is not a valid branch name/);
    expect(() => parseRepositoryConfig({ ...valid, apiUrl: "github" })).toThrow(/apiUrl must be an absolute URL/);
    expect(() => parseRepositoryConfig({ ...valid, reviewer: ["x"] })).toThrow(/reviewer/);
  });

  it("renders the claim path", () => {
    expect(
      claimPath("clusters/{namespace}/{statefulset}/{template}-{ordinal}/{name}.yaml", {
        namespace: "prod",
        name: "data-db-2",
        statefulset: "db",
        template: "data",
        ordinal: 2,
      }),
    ).toBe("clusters/prod/db/data-2/data-db-2.yaml");
  });
});
