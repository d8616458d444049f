// POST /v1/steps: one step of the set the JSON body names (or its plan, with dryRun).
import * as z from "../../core/zod.js";
import { namespaceGuard } from "../http/authenticate.js";
import { validate } from "../http/validate.js";
import { Name, Namespace } from "../relay/event.js";
import type { App, AppContext } from "./context.js";
import { stepResponse } from "./step.js";

const StepRequest = z.strictObject({ namespace: Namespace, name: Name, dryRun: z.optional(z.boolean()) });
type StepRequest = z.infer<typeof StepRequest>;

export function serveSteps(app: App, { auth, body, json, allowed, step }: AppContext): void {
  app.post(
    "/v1/steps",
    auth,
    body,
    json,
    validate("json", StepRequest, "invalid request body"),
    namespaceGuard(allowed, "json", (r: StepRequest) => r.namespace),
    async (c) => {
      const { namespace, name, dryRun } = c.req.valid("json");
      return stepResponse(c, await step({ namespace, name }, dryRun ?? false, c.get("auth")));
    },
  );
}
