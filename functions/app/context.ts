// What the API routes share, built once per app (functions/app.ts): the dependencies, the log and
// the allowed namespaces with their defaults, the middleware the routes chain, and the step.
import type { Hono } from "hono";
import type { SetRef } from "../../core/types.js";
import * as z from "../../core/zod.js";
import { type AuthEnv, authenticate, namespaceGuard } from "../http/authenticate.js";
import { DEFAULT_BODY_LIMIT, readBody, requireMediaType } from "../http/body.js";
import { validate } from "../http/validate.js";
import { Name, Namespace } from "../relay/event.js";
import type { AppDeps } from "./deps.js";
import { stepRunner } from "./step.js";

/** The app the route groups register on. */
export type App = Hono<AuthEnv>;

const PathRef = z.object({ namespace: Namespace, name: Name });

/** AppDeps with the defaults filled in, and the middleware and the step every route group uses. */
export type AppContext = ReturnType<typeof appContext>;

export function appContext(deps: AppDeps) {
  const log = deps.log ?? (() => {});
  const allowed = deps.namespaces ?? [];
  // Authentication goes first in every route: a bearer token is a header, so a request without a
  // valid one is answered 401 before any of its body is read (a signature covers the body: that
  // one is read, within the limit, to verify it).
  const maxBodyBytes = deps.bodyLimitBytes ?? DEFAULT_BODY_LIMIT;
  return {
    deps,
    log,
    /** Namespaces the app may act in; empty = all. */
    allowed,
    /** The body, read within the limit (and BODY_DEADLINE_MS). */
    body: readBody({ maxBytes: maxBodyBytes }),
    /** A bearer token or a Standard Webhooks signature. */
    auth: authenticate(deps.auth, { log, maxBodyBytes }),
    /** 415 unless the body is application/json. */
    json: requireMediaType(["application/json"], "send the body as Content-Type: application/json"),
    /** The set the URL's :namespace/:name names. */
    setInUrl: validate("param", PathRef, "invalid StatefulSet reference in the URL"),
    /** 403 for a set in the URL outside the allowed namespaces. */
    urlNamespace: namespaceGuard(allowed, "param", (ref: SetRef) => ref.namespace),
    /** One step (or, dry run, plan) of a set, logged with what asked for it (`via`). */
    step: stepRunner(deps, log),
  };
}
