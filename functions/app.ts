// The HTTP app shared by the Worker and the Node server. Everything it touches is injected, so
// each runtime wires its own reader/writer (fetch + bearer on Workers, kubeconfig on Node, the
// simulated cluster in tests) and the same routes, auth and errors serve them all.
//
// Hono's way: each route is a chain of middleware (functions/http/) — authenticate, read the body
// within the limit, validate the URL/query/body with zod, guard the namespace — and a handler
// that only does the work. Every refusal is a thrown Problem (an HTTPException) and one error
// handler writes docs/operating.md's `{"error","message","issues"?}` bodies.

import { type Context, Hono, type MiddlewareHandler } from "hono";
import { changeOf, templatesFromDocument } from "../core/change/index.js";
import type { MetricsReader, StateReader, Writers } from "../core/ports.js";
import type { SetRef } from "../core/types.js";
import { renderDecision } from "../core/view/index.js";
import * as z from "../core/zod.js";
import { BodyFormats, parseDocument } from "./desired.js";
import {
  type AuthEnv,
  type AuthSettings,
  authenticate,
  namespaceGuard,
  requireSignature,
} from "./http/authenticate.js";
import { DEFAULT_BODY_LIMIT, mediaTypeOf, readBody, requireMediaType } from "./http/body.js";
import { methodNotAllowed, notFound, onError, Problem } from "./http/problem.js";
import { refuseLaxJson, validate } from "./http/validate.js";
import { YAML_LIMITS, yamlOverLimits } from "./http/yaml-bounds.js";
import { outcomeJSON } from "./outcome.js";
import { Name, Namespace, RelayEvent } from "./relay/event.js";
import { ADMISSION_PATH, admissionRoutes } from "./routes/admission.js";
import { runStep, type StepOptions, type StepResult } from "./step.js";
import { type UiOptions, uiRoutes } from "./ui/routes.js";

export type { AuthSettings } from "./http/authenticate.js";

/**
 * A sub-app whose routes (absolute paths, all under `prefix`) bring their own authentication,
 * e.g. the GitOps webhooks; the body limit still applies. Given as a function of the app's body
 * reader, the sub-app places it in its routes itself: after what it refuses from the headers alone
 * (the forges' required headers), so that such a request is refused before any of its body is read.
 */
export interface Mount {
  prefix: string;
  app: Hono<any> | ((readBody: MiddlewareHandler) => Hono<any>);
}

export interface AppDeps {
  reader: StateReader;
  /** The claim writer for a set (e.g. by `claimstep.io/apply-via`), the set-status writer and the event recorder. */
  writers: Writers;
  auth: AuthSettings;
  now: () => Date;
  /** Namespaces the app may act in; empty = all. */
  namespaces?: readonly string[];
  bodyLimitBytes?: number;
  mounts?: readonly Mount[];
  /** Structured log sink; entries never hold secrets or request headers. */
  log?: (entry: Record<string, unknown>) => void;
  /** The status page (`/ui`, functions/ui/), served when viewer tokens are configured. */
  ui?: UiOptions;
  /** Autogrow's metrics (CLAIMSTEP_PROMETHEUS_URL); absent: sets asking for autogrow go on without it. */
  metrics?: MetricsReader;
  /** Runs the steps that write (not plans) instead of runStep here: the Worker's set objects (functions/fleet/). */
  stepper?: (ref: SetRef) => Promise<StepResult>;
  /** How a step runs here; default runStep. The Node server's records it for its metrics (functions/recorded-step.ts). */
  runStep?: (opts: StepOptions) => Promise<StepResult>;
}

const PathRef = z.object({ namespace: Namespace, name: Name });
const StepRequest = z.strictObject({ namespace: Namespace, name: Name, dryRun: z.optional(z.boolean()) });
type StepRequest = z.infer<typeof StepRequest>;
const TemplatesQuery = z.looseObject({ step: z.optional(z.enum(["true", "false", "1", "0"])) });

const stepJSON = (r: StepResult) => ({
  decision: r.decision,
  outcome: outcomeJSON(r),
  writer: r.writer,
  table: renderDecision(r.decision),
});

export function createApp(deps: AppDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const log = deps.log ?? (() => {});
  const allowed = deps.namespaces ?? [];

  // The middleware of the routes below.
  // Authentication goes first: a bearer token is a header, so a request without a valid one is
  // answered 401 before any of its body is read (a signature covers the body: that one is read,
  // within the limit, to verify it).
  const maxBodyBytes = deps.bodyLimitBytes ?? DEFAULT_BODY_LIMIT;
  const body = readBody({ maxBytes: maxBodyBytes });
  const auth = authenticate(deps.auth, { log, maxBodyBytes });
  const json = requireMediaType(["application/json"], "send the body as Content-Type: application/json");
  const setInUrl = validate("param", PathRef, "invalid StatefulSet reference in the URL");
  const urlNamespace = namespaceGuard(allowed, "param", (ref: SetRef) => ref.namespace);

  const step = async (ref: SetRef, dryRun: boolean, via: string): Promise<StepResult> => {
    const result =
      deps.stepper && !dryRun
        ? await deps.stepper(ref)
        : await (deps.runStep ?? runStep)({
            reader: deps.reader,
            writers: deps.writers,
            metrics: deps.metrics,
            ref,
            now: deps.now(),
            dryRun,
          });
    log({
      msg: "step",
      via,
      namespace: ref.namespace,
      name: ref.name,
      dryRun,
      phase: result.decision.phase,
      reason: result.decision.reason,
      outcome: result.outcome.kind,
      writer: result.writer,
    });
    return result;
  };

  /** A step's answer: 503 with Retry-After when it hit a transient failure, else 200. */
  const stepResponse = (c: Context, r: StepResult, extra: Record<string, unknown> = {}) => {
    if (r.outcome.kind === "retry") {
      c.header("Retry-After", String(r.outcome.retryAfterSeconds ?? 5));
      return c.json({ ...extra, ...stepJSON(r) }, 503);
    }
    return c.json({ ...extra, ...stepJSON(r) }, 200);
  };

  app.get("/healthz", (c) => c.json({ ok: true }));

  app.get("/v1/statefulsets/:namespace/:name", auth, setInUrl, urlNamespace, async (c) =>
    stepResponse(c, await step(c.req.valid("param"), true, "plan")),
  );

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

  app.post(
    "/v1/statefulsets/:namespace/:name/templates",
    auth,
    body,
    setInUrl,
    urlNamespace,
    validate("query", TemplatesQuery, "query parameter step must be true or false"),
    async (c) => {
      const ref = c.req.valid("param");
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

      const snapshot = await deps.reader.load(ref);
      const change = changeOf(snapshot.statefulSet, { kind: "templates", templates: posted.templates });
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

  app.post(
    "/v1/relay",
    auth,
    requireSignature(
      "relay events must be signed with the webhook secret (Standard Webhooks), not sent with a bearer token",
    ),
    body,
    json,
    validate("json", RelayEvent, "invalid request body"),
    namespaceGuard(allowed, "json", (e: RelayEvent) => e.data.namespace),
    async (c) => {
      const { namespace, name } = c.req.valid("json").data;
      return stepResponse(c, await step({ namespace, name }, false, "relay"));
    },
  );

  // The admission webhook (docs/admission.md): no bearer token, the API server calls it.
  app.route("/", admissionRoutes({ log }));

  if (deps.ui?.viewers.length) {
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

  for (const m of deps.mounts ?? []) {
    if (typeof m.app === "function") app.route("/", m.app(body));
    else {
      app.use(`${m.prefix}/*`, body);
      app.route("/", m.app);
    }
  }

  // A known path with the wrong method is a 405 with Allow, not a 404.
  const methods: Array<[string, string]> = [
    ["/healthz", "GET, HEAD"],
    ["/v1/statefulsets/:namespace/:name", "GET, HEAD"],
    ["/v1/steps", "POST"],
    ["/v1/statefulsets/:namespace/:name/templates", "POST"],
    ["/v1/relay", "POST"],
    [ADMISSION_PATH, "POST"],
  ];
  for (const [path, allow] of methods) app.all(path, methodNotAllowed(allow));

  app.notFound(notFound);
  app.onError(onError(log));

  return app;
}
