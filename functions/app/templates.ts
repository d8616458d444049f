// POST /v1/statefulsets/:namespace/:name/templates: the set's claim templates as they should be
// (JSON or YAML), recorded on the set; with ?step=true the step that follows is taken at once.
import type { Context } from "hono";
import { changeOf, templatesFromDocument } from "../../core/change/index.js";
import type { SetRef } from "../../core/types.js";
import * as z from "../../core/zod.js";
import { BodyFormats, parseDocument } from "../desired.js";
import { mediaTypeOf } from "../http/body.js";
import { Problem } from "../http/problem.js";
import { refuseLaxJson, validate } from "../http/validate.js";
import { YAML_LIMITS, yamlOverLimits } from "../http/yaml-bounds.js";
import type { App, AppContext } from "./context.js";
import { stepResponse } from "./step.js";

const TemplatesQuery = z.looseObject({ step: z.optional(z.enum(["true", "false", "1", "0"])) });

/** The posted templates, in a format the route reads (else 415) and valid (else 400). */
async function postedTemplates(c: Context, ref: SetRef) {
  const format = BodyFormats[mediaTypeOf(c) as keyof typeof BodyFormats];
  if (!format)
    throw new Problem(
      415,
      "UnsupportedMediaType",
      `send the templates as one of: ${Object.keys(BodyFormats).join(", ")}`,
    );
  const text = await c.req.text();
  // Bounded before parsing: composing deeply nested or huge YAML costs seconds of CPU.
  const over = format === "yaml" ? yamlOverLimits(text, YAML_LIMITS) : undefined;
  if (over) throw new Problem(400, "BadRequest", over, { issues: [{ path: "(body)", message: over }] });
  const doc = parseDocument(text, format);
  if (!doc.ok) throw new Problem(400, "BadRequest", "the body could not be parsed", { issues: doc.issues });
  if (format === "json") refuseLaxJson(text, "invalid claim templates");
  const posted = templatesFromDocument(doc.value, ref);
  if (!posted.ok) throw new Problem(400, "BadRequest", "invalid claim templates", { issues: posted.issues });
  return posted.templates;
}

export function serveTemplates(app: App, { deps, auth, body, setInUrl, urlNamespace, log, step }: AppContext): void {
  app.post(
    "/v1/statefulsets/:namespace/:name/templates",
    auth,
    body,
    setInUrl,
    urlNamespace,
    validate("query", TemplatesQuery, "query parameter step must be true or false"),
    async (c) => {
      const ref = c.req.valid("param");
      const templates = await postedTemplates(c, ref);
      const snapshot = await deps.reader.load(ref);
      const change = changeOf(snapshot.statefulSet, { kind: "templates", templates });
      if (!change.ok)
        throw new Problem(400, "BadRequest", change.message, {
          issues: [{ path: "(templates)", message: change.message }],
        });
      if (change.changed) {
        await deps.writers.status.annotateSet(ref, change.annotations, snapshot.statefulSet.metadata.resourceVersion);
      }
      log({
        msg: "templates",
        namespace: ref.namespace,
        name: ref.name,
        revision: change.revision,
        changed: change.changed,
      });
      const written = { revision: change.revision, changed: change.changed, templates: change.templates };
      const { step: flag } = c.req.valid("query");
      if (flag !== "true" && flag !== "1") return c.json(written, 200);
      return stepResponse(c, await step(ref, false, "templates"), written);
    },
  );
}
