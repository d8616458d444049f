// GET /v1/statefulsets/:namespace/:name: the set's next step, planned (a dry run), not taken.
import type { App, AppContext } from "./context.js";
import { stepResponse } from "./step.js";

export function servePlan(app: App, { auth, setInUrl, urlNamespace, step }: AppContext): void {
  app.get("/v1/statefulsets/:namespace/:name", auth, setInUrl, urlNamespace, async (c) =>
    stepResponse(c, await step(c.req.valid("param"), true, "plan")),
  );
}
