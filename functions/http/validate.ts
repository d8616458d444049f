// Hono's `validator` with a zod schema: the parsed value is typed in `c.req.valid(target)`, and a
// value that does not match is a 400 Problem listing every issue with its path.
import type { ValidationTargets } from "hono";
import { validator } from "hono/validator";
import type * as z from "../../core/zod.js";
import { type Issue, Problem } from "./problem.js";

/** zod issues as docs/operating.md's `issues`: `data.namespace`, `[0].spec.accessModes`, `(body)`. */
export const issuesOf = (error: z.core.$ZodError): Issue[] =>
  error.issues.map((i) => ({ path: i.path.map(String).join(".") || "(body)", message: i.message }));

/**
 * `validator(target, …)` checking with `schema`. For `json`, put `requireMediaType` first: Hono
 * validates `{}` when the content type is not JSON.
 */
export const validate = <Target extends keyof ValidationTargets, S extends z.ZodMiniType>(target: Target, schema: S, message: string) =>
  validator(target, (value): z.output<S> => {
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw new Problem(400, "BadRequest", message, { issues: issuesOf(parsed.error) });
    return parsed.data;
  });
