// The HTTP app shared by the Worker and the Node server. Everything it touches is injected, so
// each runtime wires its own reader/writer (fetch + bearer on Workers, kubeconfig on Node, the
// simulated cluster in tests) and the same routes, auth and errors serve them all.
//
// Hono's way: each route is a chain of middleware (functions/http/) — authenticate, read the body
// within the limit, validate the URL/query/body with zod, guard the namespace — and a handler
// that only does the work. Every refusal is a thrown Problem (an HTTPException) and one error
// handler writes docs/operating.md's `{"error","message","issues"?}` bodies.
//
// Each route group is a module of its own under functions/app/, sharing one context built once
// (context.ts) from what the app is given (deps.ts): plan.ts, steps.ts, templates.ts, relay.ts,
// the status page and the mounts (mounts.ts), the 405s (methods.ts); how a step runs and is
// answered is step.ts.

import { Hono } from "hono";
import { appContext } from "./app/context.js";
import type { AppDeps } from "./app/deps.js";
import { refuseOtherMethods } from "./app/methods.js";
import { serveMounts, serveStatusPage } from "./app/mounts.js";
import { servePlan } from "./app/plan.js";
import { serveRelay } from "./app/relay.js";
import { serveSteps } from "./app/steps.js";
import { serveTemplates } from "./app/templates.js";
import type { AuthEnv } from "./http/authenticate.js";
import { notFound, onError } from "./http/problem.js";
import { admissionRoutes } from "./routes/admission.js";

export type { AppDeps, Mount } from "./app/deps.js";

/**
 * The routes on one Hono app, registered in this order, which is Hono's order of matching: the
 * API's own, the admission webhook, the status page, the mounts, then the 405s and the 404.
 */
export function createApp(deps: AppDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const ctx = appContext(deps);
  app.get("/healthz", (c) => c.json({ ok: true }));
  servePlan(app, ctx);
  serveSteps(app, ctx);
  serveTemplates(app, ctx);
  serveRelay(app, ctx);
  // The admission webhook (docs/admission.md): no bearer token, the API server calls it.
  app.route("/", admissionRoutes({ log: ctx.log }));
  serveStatusPage(app, ctx);
  serveMounts(app, ctx);
  refuseOtherMethods(app);
  app.notFound(notFound);
  app.onError(onError(ctx.log));
  return app;
}
