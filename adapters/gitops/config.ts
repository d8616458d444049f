// The repository a pull-request writer proposes changes to, validated with messages that name the
// field and the fix. Tokens come from the runtime's secrets; nothing here reads the environment.
import * as z from "../../core/zod.js";
import { UnsafeNameError } from "./branch.js";

/** Placeholders a path template may use; `{name}` (the PVC name) is required so each claim has its own file. */
export const PATH_PLACEHOLDERS = ["namespace", "name", "statefulset", "template", "ordinal"] as const;
export type PathPlaceholder = (typeof PATH_PLACEHOLDERS)[number];

export const DEFAULT_API_URL = {
  github: "https://api.github.com",
  gitlab: "https://gitlab.com/api/v4",
} as const;

const placeholdersIn = (template: string): string[] => [...template.matchAll(/\{([^}]*)\}/g)].map((m) => m[1] ?? "");

/** Placeholders the StatefulSet's path template may use (finalize in GitOps mode). */
export const SET_PATH_PLACEHOLDERS = ["namespace", "statefulset"] as const;
export type SetPathPlaceholder = (typeof SET_PATH_PLACEHOLDERS)[number];

/** A relative .yaml/.yml path with known placeholders; `required` placeholders must appear. */
function pathTemplate(
  field: string,
  allowed: readonly string[],
  example: string,
  required?: { placeholder: string; why: string },
) {
  return z.string().check(
    z.minLength(1, `${field} is empty: give a path like ${example}`),
    z.superRefine((t: string, ctx) => {
      const unknown = placeholdersIn(t).filter((p) => !allowed.includes(p));
      if (unknown.length) {
        ctx.addIssue({
          code: "custom",
          message: `${field} uses unknown placeholder(s) ${unknown.map((p) => `{${p}}`).join(", ")}; allowed: ${allowed.map((p) => `{${p}}`).join(" ")}`,
        });
      }
      if (required && !placeholdersIn(t).includes(required.placeholder)) {
        ctx.addIssue({ code: "custom", message: `${field} must contain {${required.placeholder}} ${required.why}` });
      }
      if (t.startsWith("/") || t.split("/").includes("..")) {
        ctx.addIssue({ code: "custom", message: `${field} must be relative to the repository root, without '..'` });
      }
      if (!/\.ya?ml$/.test(t)) {
        ctx.addIssue({ code: "custom", message: `${field} must end in .yaml or .yml` });
      }
    }),
  );
}

const PathTemplate = pathTemplate("pathTemplate", PATH_PLACEHOLDERS, "clusters/prod/claims/{namespace}/{name}.yaml", {
  placeholder: "name",
  why: "(the PVC name) so every claim gets its own file",
});

/**
 * The file holding a StatefulSet's manifest, which a re-create proposal edits. It may hold
 * several documents (the StatefulSet is found by kind and name), so no placeholder is required.
 */
const SetPathTemplate = pathTemplate(
  "statefulSetPathTemplate",
  SET_PATH_PLACEHOLDERS,
  "clusters/prod/apps/{namespace}/{statefulset}.yaml",
);

/** A namespace name: a DNS-1123 label. */
export const DNS1123_LABEL = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

// Git ref names: no spaces, no '..', no ':', '~', '^', '?', '*', '[', '\', no leading '-'.
const BranchName = z
  .string()
  .check(z.minLength(1), z.regex(/^(?!-)(?!.*\.\.)[^\s~^:?*[\\]+$/, "is not a valid branch name"));

export const RepositoryConfig = z
  .strictObject({
    provider: z.enum(["github", "gitlab"], { error: 'provider must be "github" or "gitlab"' }),
    /** GitHub: `owner/repo`. GitLab: the project path (`group/subgroup/project`) or its numeric id. */
    repository: z.string().check(z.minLength(1, "repository is empty")),
    baseBranch: z._default(BranchName, "main"),
    pathTemplate: PathTemplate,
    /** Where each StatefulSet's manifest is (`{namespace}`, `{statefulset}`): the file a re-create proposal edits. */
    statefulSetPathTemplate: z.optional(SetPathTemplate),
    /**
     * The namespace of a StatefulSet document of those files that names none (the one kustomize or
     * the GitOps controller gives it), or `{namespace}`: the namespace the file was chosen for.
     * Unset: such a document is a set's only when no document of the file names its namespace.
     */
    statefulSetDefaultNamespace: z.optional(
      z.string().check(
        z.refine((v: string) => v === "{namespace}" || DNS1123_LABEL.test(v), {
          error: (i) =>
            `"${String(i.input)}" is not a namespace name (a DNS-1123 label: lowercase letters, digits and '-') nor {namespace}`,
        }),
      ),
    ),
    token: z
      .string()
      .check(
        z.minLength(1, "token is empty: set the API token (a secret) with contents and pull-request write access"),
      ),
    apiUrl: z.optional(z.url({ error: "apiUrl must be an absolute URL such as https://github.example.com/api/v3" })),
    labels: z._default(z.array(z.string().check(z.minLength(1))), []),
    /** GitHub: logins, or `org/team` for team review. GitLab: usernames or numeric user ids. */
    reviewers: z._default(z.array(z.string().check(z.minLength(1))), []),
  })
  .check(
    z.superRefine((c, ctx) => {
      if (c.provider === "github" && !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(c.repository)) {
        ctx.addIssue({
          code: "custom",
          path: ["repository"],
          message: `repository "${c.repository}" must be owner/repo for GitHub`,
        });
      }
      if (c.provider === "gitlab" && !/^(\d+|[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)+)$/.test(c.repository)) {
        ctx.addIssue({
          code: "custom",
          path: ["repository"],
          message: `repository "${c.repository}" must be a GitLab project path (group/project) or a numeric project id`,
        });
      }
      if (c.statefulSetDefaultNamespace !== undefined && c.statefulSetPathTemplate === undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["statefulSetDefaultNamespace"],
          message:
            "applies to the files of statefulSetPathTemplate: set that too, or remove statefulSetDefaultNamespace",
        });
      }
    }),
  );
export type RepositoryConfig = z.output<typeof RepositoryConfig>;

export class RepositoryConfigError extends Error {
  override readonly name = "RepositoryConfigError";
}

/** Parse a repository config, or throw one error listing every problem with its field. */
export function parseRepositoryConfig(input: unknown): RepositoryConfig {
  const parsed = RepositoryConfig.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "config"}: ${i.message}`);
  throw new RepositoryConfigError(`invalid GitOps repository config: ${problems.join("; ")}`);
}

export const apiUrlOf = (c: RepositoryConfig): string => (c.apiUrl ?? DEFAULT_API_URL[c.provider]).replace(/\/+$/, "");

// What a placeholder may become: one path segment, as Kubernetes names are (no '/', not '..').
const SEGMENT = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** Fill a path template, each value one safe segment; anything else throws, naming the template, the placeholder and the value. */
function fill(field: string, template: string, values: Record<string, string | number>): string {
  return template.replace(/\{([a-z]+)\}/g, (_, key: string) => {
    const value = String(values[key]);
    if (!SEGMENT.test(value) || value.includes("..")) {
      throw new UnsafeNameError(
        `${field} ${JSON.stringify(template)}: {${key}} is ${JSON.stringify(value)}, not a single path segment (a Kubernetes name: lowercase letters, digits, '-' and '.')`,
      );
    }
    return value;
  });
}

/** The file of one StatefulSet, e.g. `clusters/prod/apps/{namespace}/{statefulset}.yaml` → `clusters/prod/apps/prod/db.yaml`. */
export function setPath(template: string, values: Record<SetPathPlaceholder, string>): string {
  return fill("statefulSetPathTemplate", template, values);
}

export type PathValues = Record<PathPlaceholder, string | number>;

/** The file of one claim, e.g. `clusters/prod/claims/{namespace}/{name}.yaml` → `clusters/prod/claims/prod/data-db-2.yaml`. */
export function claimPath(template: string, values: PathValues): string {
  return fill("pathTemplate", template, values);
}
