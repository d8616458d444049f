// What the app serves beside its own routes: the status page, when viewer tokens are configured,
// and the sub-apps (the GitOps webhooks), which bring their own authentication.
import { uiRoutes } from "../ui/routes.js";
import type { App, AppContext } from "./context.js";

/** The status page (`/ui`, functions/ui/), read-only, with the app's reader and namespaces. */
export function serveStatusPage(app: App, { deps, allowed, log }: AppContext): void {
  if (!deps.ui?.viewers.length) return;
  app.route(
    "/",
    uiRoutes({
      ...deps.ui,
      reader: deps.reader,
      writers: deps.writers,
      now: deps.now,
      namespaces: allowed,
      apiTokens: deps.auth.bearerTokens,
      log,
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
    }),
  );
}

/** Each mount's routes, the app's body reader in them (or in front of them, for a plain sub-app). */
export function serveMounts(app: App, { deps, body }: AppContext): void {
  for (const m of deps.mounts ?? []) {
    if (typeof m.app === "function") app.route("/", m.app(body));
    else {
      app.use(`${m.prefix}/*`, body);
      app.route("/", m.app);
    }
  }
}
