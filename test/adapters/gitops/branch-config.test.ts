import { describe, expect, it } from "vitest";
import { branchName, parseBranch } from "../../../adapters/gitops/branch.js";
import {
  apiUrlOf,
  claimPath,
  parseRepositoryConfig,
  RepositoryConfigError,
  setPath,
} from "../../../adapters/gitops/config.js";

describe("branch names", () => {
  const step = { ref: { namespace: "prod", name: "db" }, revision: "7b5b44c86f", ordinal: 2 };

  it("are claimstep/{namespace}/{statefulset}/{revision}/{ordinal} and parse back", () => {
    expect(branchName(step)).toBe("claimstep/prod/db/7b5b44c86f/2");
    expect(parseBranch("claimstep/prod/db/7b5b44c86f/2")).toEqual(step);
    expect(parseBranch("refs/heads/claimstep/prod/db.v2/7b5b44c86f/10")).toEqual({
      ...step,
      ref: { namespace: "prod", name: "db.v2" },
      ordinal: 10,
    });
  });

  it("name the re-create proposal claimstep/{namespace}/{statefulset}/{revision}/recreate, and parse it back", () => {
    const recreate = { ref: { namespace: "prod", name: "db" }, revision: "7b5b44c86f", recreate: true } as const;
    expect(branchName(recreate)).toBe("claimstep/prod/db/7b5b44c86f/recreate");
    expect(parseBranch("claimstep/prod/db/7b5b44c86f/recreate")).toEqual(recreate);
    expect(parseBranch("refs/heads/claimstep/prod/db/7b5b44c86f/recreate")).toEqual(recreate);
  });

  it("name autogrow's proposal claimstep/{namespace}/{statefulset}/{revision grown from}/autogrow, and parse it back", () => {
    const autogrow = { ref: { namespace: "prod", name: "db" }, revision: "7b5b44c86f", autogrow: true } as const;
    expect(branchName(autogrow)).toBe("claimstep/prod/db/7b5b44c86f/autogrow");
    expect(parseBranch("claimstep/prod/db/7b5b44c86f/autogrow")).toEqual(autogrow);
    expect(parseBranch("refs/heads/claimstep/prod/db/7b5b44c86f/autogrow")).toEqual(autogrow);
  });

  it("reject branches that are not claimstep's", () => {
    for (const name of [
      "main",
      "claimstep/prod/db/rev/Recreate",
      "claimstep/prod/db/rev/recreate/2",
      "claimstep/prod/db/rev/Autogrow",
      "claimstep/prod/db/rev/autogrow/1",
      "claimstep/prod/db/rev",
      "claimstep/prod/db/rev/2/extra",
      "feature/prod/db/rev/2",
      "claimstep/prod/db/rev/02",
      "claimstep/prod/db/rev/-1",
      "claimstep/Prod/db/rev/1",
      "claimstep//db/rev/1",
    ]) {
      expect(parseBranch(name), name).toBeUndefined();
    }
  });

  it("a namespace is a DNS-1123 label, a set name a DNS-1123 subdomain: `a..b` is neither (issue 37, item 5c)", () => {
    for (const name of [
      "claimstep/a..b/db/rev/1",
      "claimstep/a.b/db/rev/1",
      "claimstep/a-/db/rev/1",
      `claimstep/${"n".repeat(64)}/db/rev/1`,
      "claimstep/prod/db..v2/rev/1",
      "claimstep/prod/db.-v2/rev/recreate",
      `claimstep/prod/${"s".repeat(254)}/rev/1`,
      "claimstep/prod/db/r..1/autogrow",
    ]) {
      expect(parseBranch(name), name).toBeUndefined();
    }
    expect(parseBranch(`claimstep/${"n".repeat(63)}/db.v2/rev/1`)).toEqual({
      ref: { namespace: "n".repeat(63), name: "db.v2" },
      revision: "rev",
      ordinal: 1,
    });
    const ref = { namespace: "a..b", name: "db" };
    expect(() => branchName({ ref, revision: "r1", ordinal: 1 })).toThrow(
      'cannot name the branch of StatefulSet "a..b/db": namespace "a..b" is not a namespace name (a DNS-1123 label: lowercase letters, digits and \'-\', at most 63)',
    );
    expect(() => branchName({ ref: { namespace: "prod", name: "db..x" }, revision: "r1", recreate: true })).toThrow(
      "StatefulSet name \"db..x\" is not a StatefulSet name (a DNS-1123 subdomain: lowercase labels joined by single '.', at most 253)",
    );
  });
});

describe("builders refuse names that are not safe segments (issue 24, item 8)", () => {
  it("branchName: a namespace, set or revision that is not one segment, or a bad ordinal, is a clear error", () => {
    const ref = { namespace: "prod", name: "db" };
    for (const [b, what] of [
      [{ ref: { ...ref, name: "db/../../main" }, revision: "r1", ordinal: 2 }, 'StatefulSet name "db/../../main"'],
      [{ ref: { ...ref, namespace: "" }, revision: "r1", ordinal: 2 }, 'namespace ""'],
      [{ ref, revision: "r1 ~^:", ordinal: 2 }, 'revision "r1 ~^:"'],
      [{ ref, revision: "r1", ordinal: -1 }, "ordinal -1"],
      [{ ref, revision: "r1", ordinal: 1.5 }, "ordinal 1.5"],
    ] as const) {
      expect(() => branchName(b as never), what).toThrow(
        new RegExp(`^cannot name the branch of StatefulSet .*: ${what.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} is not`),
      );
    }
  });

  it("claimPath and setPath: a value that is not one safe segment is a clear error naming the placeholder", () => {
    const values = { namespace: "prod", name: "data-db-2", statefulset: "db", template: "data", ordinal: 2 };
    expect(() => claimPath("c/{namespace}/{name}.yaml", { ...values, name: "../../etc/passwd" })).toThrow(
      "pathTemplate \"c/{namespace}/{name}.yaml\": {name} is \"../../etc/passwd\", not a single path segment (a Kubernetes name: lowercase letters, digits, '-' and '.')",
    );
    expect(() => claimPath("c/{template}/{name}.yaml", { ...values, template: "a/b" })).toThrow(
      /\{template\} is "a\/b", not a single path segment/,
    );
    expect(() => setPath("apps/{namespace}/{statefulset}.yaml", { namespace: "..", statefulset: "db" })).toThrow(
      /\{namespace\} is "\.\.", not a single path segment/,
    );
    expect(claimPath("c/{namespace}/{name}.yaml", values)).toBe("c/prod/data-db-2.yaml");
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
    expect(apiUrlOf(parseRepositoryConfig({ ...valid, provider: "gitlab", repository: "group/sub/fleet" }))).toBe(
      "https://gitlab.com/api/v4",
    );
    expect(apiUrlOf(parseRepositoryConfig({ ...valid, apiUrl: "https://ghe.example.com/api/v3/" }))).toBe(
      "https://ghe.example.com/api/v3",
    );
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
    expect(() => parseRepositoryConfig({ ...valid, repository: "fleet" })).toThrow(
      /repository "fleet" must be owner\/repo for GitHub/,
    );
    expect(() => parseRepositoryConfig({ ...valid, provider: "gitlab", repository: "fleet" })).toThrow(
      /GitLab project path/,
    );
    expect(() => parseRepositoryConfig({ ...valid, baseBranch: "ma in" })).toThrow(
      /baseBranch: is not a valid branch name/,
    );
    expect(() => parseRepositoryConfig({ ...valid, apiUrl: "github" })).toThrow(/apiUrl must be an absolute URL/);
    expect(() => parseRepositoryConfig({ ...valid, reviewer: ["x"] })).toThrow(/reviewer/);
  });

  it("takes an optional statefulSetPathTemplate ({namespace} {statefulset}, relative, .yaml/.yml) and renders it", () => {
    const c = parseRepositoryConfig({
      ...valid,
      statefulSetPathTemplate: "clusters/prod/apps/{namespace}/{statefulset}.yaml",
    });
    expect(c.statefulSetPathTemplate).toBe("clusters/prod/apps/{namespace}/{statefulset}.yaml");
    expect(setPath(c.statefulSetPathTemplate!, { namespace: "prod", statefulset: "db" })).toBe(
      "clusters/prod/apps/prod/db.yaml",
    );
    // One file may hold every set (found by kind and name): no placeholder is required.
    expect(
      parseRepositoryConfig({ ...valid, statefulSetPathTemplate: "apps/statefulsets.yml" }).statefulSetPathTemplate,
    ).toBe("apps/statefulsets.yml");
    expect(parseRepositoryConfig(valid)).not.toHaveProperty("statefulSetPathTemplate");
  });

  it("names every problem of statefulSetPathTemplate", () => {
    let message = "";
    try {
      parseRepositoryConfig({ ...valid, statefulSetPathTemplate: "/../apps/{namespace}/{name}-{ordinal}.json" });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(
      "statefulSetPathTemplate: statefulSetPathTemplate uses unknown placeholder(s) {name}, {ordinal}; allowed: {namespace} {statefulset}",
    );
    expect(message).toContain("statefulSetPathTemplate must be relative to the repository root, without '..'");
    expect(message).toContain("statefulSetPathTemplate must end in .yaml or .yml");
    expect(() => parseRepositoryConfig({ ...valid, statefulSetPathTemplate: "" })).toThrow(
      /statefulSetPathTemplate is empty: give a path like clusters\/prod\/apps\/\{namespace\}\/\{statefulset\}.yaml/,
    );
  });

  it("takes an optional statefulSetDefaultNamespace: a namespace name, or {namespace} (issue 37, item 4)", () => {
    const withSets = { ...valid, statefulSetPathTemplate: "apps/{namespace}/{statefulset}.yaml" };
    expect(
      parseRepositoryConfig({ ...withSets, statefulSetDefaultNamespace: "prod" }).statefulSetDefaultNamespace,
    ).toBe("prod");
    expect(
      parseRepositoryConfig({ ...withSets, statefulSetDefaultNamespace: "{namespace}" }).statefulSetDefaultNamespace,
    ).toBe("{namespace}");
    expect(parseRepositoryConfig(withSets)).not.toHaveProperty("statefulSetDefaultNamespace");
    expect(() => parseRepositoryConfig({ ...withSets, statefulSetDefaultNamespace: "a..b" })).toThrow(
      "statefulSetDefaultNamespace: \"a..b\" is not a namespace name (a DNS-1123 label: lowercase letters, digits and '-') nor {namespace}",
    );
    expect(() => parseRepositoryConfig({ ...valid, statefulSetDefaultNamespace: "prod" })).toThrow(
      "statefulSetDefaultNamespace: applies to the files of statefulSetPathTemplate: set that too, or remove statefulSetDefaultNamespace",
    );
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
