// Hono's `validator` with a zod schema: the parsed value is typed in `c.req.valid(target)`, and a
// value that does not match is a 400 Problem listing every issue with its path.
import type { ValidationTargets } from "hono";
import { validator } from "hono/validator";
import type * as z from "../../core/zod.js";
import { type Issue, Problem } from "./problem.js";
import { strictJsonProblem } from "./strict-json.js";

/** zod issues as docs/operating.md's `issues`: `data.namespace`, `[0].spec.accessModes`, `(body)`. */
export const issuesOf = (error: z.core.$ZodError): Issue[] =>
  error.issues.map((i) => ({ path: i.path.map(String).join(".") || "(body)", message: i.message }));

/**
 * 400 for JSON text that JSON.parse reads other than it says: a key given twice (the last would
 * win) or an integer beyond ±(2^53 - 1) (it would be rounded). `message` starts the 400's message.
 */
export function refuseLaxJson(text: string, message: string): void {
  const problem = strictJsonProblem(text);
  if (problem)
    throw new Problem(400, "BadRequest", `${message}: ${problem.what} (at ${problem.path})`, {
      issues: [{ path: problem.path, message: problem.message }],
    });
}

/**
 * `validator(target, …)` checking with `schema`. For `json`, put `requireMediaType` first: Hono
 * validates `{}` when the content type is not JSON. A JSON body is also refused (400) for a key
 * given twice or an inexact integer (`refuseLaxJson`), before the schema.
 */
export const validate = <Target extends keyof ValidationTargets, S extends z.ZodMiniType>(
  target: Target,
  schema: S,
  message: string,
) =>
  validator(target, async (value, c): Promise<z.output<S>> => {
    // Hono has parsed the text (a malformed body is its 400); the text is in the body cache.
    if (target === "json") refuseLaxJson(await c.req.text(), message);
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw new Problem(400, "BadRequest", message, { issues: issuesOf(parsed.error) });
    return parsed.data;
  });
