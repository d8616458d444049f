// The HTTP app shared by the Worker and the Node server. Everything it touches is injected, so
// each runtime wires its own reader/writer (fetch + bearer on Workers, kubeconfig on Node, the
// simulated cluster in tests) and the same routes, auth and errors serve them all.
import { Hono, type Context, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { z } from "zod";
import type { ActionWriter, StateReader } from "../core/ports.js";
import { renderDecision } from "../core/render.js";
import type { SetRef, Snapshot } from "../core/types.js";
import { ApiError } from "../adapters/api-error.js";
import { bearerMatches, verifyWebhook, type ReplayGuard } from "./auth.js";
import { BodyFormats, desiredChange, parseDocument, templatesFromDocument, type Issue } from "./desired.js";
import { PermissionError, runStep, type StepResult } from "./step.js";

export interface AuthSettings {
  bearerTokens: readonly string[];
  webhookSecrets: readonly string[];
  replay: ReplayGuard;
  toleranceSeconds?: number;
}

/**
 * A sub-app whose routes (absolute paths, all under `prefix`) bring their own authentication,
 * e.g. the GitOps webhooks; the body limit still applies.
 */
export interface Mount {
  prefix: string;
  app: Hono<any>;
}

export interface AppDeps {
  reader: StateReader;
  /** The writer for a set (e.g. by `claimstep.io/apply-via`). */
  writerFor: (snapshot: Snapshot) => ActionWriter;
  auth: AuthSettings;
  now: () => Date;
  /** Namespaces the app may act in; empty = all. */
  namespaces?: readonly string[];
  bodyLimitBytes?: number;
  mounts?: readonly Mount[];
  /** Structured log sink; entries never hold secrets or request headers. */
  log?: (entry: Record<string, unknown>) => void;
}

type AuthMethod = "signature" | "bearer";
type Env = { Variables: { auth: AuthMethod; body: string } };

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const Namespace = z.string().max(63).regex(dns1123Label, "must be a DNS-1123 label (lower case letters, digits, '-')");
const Name = z.string().max(253).regex(dns1123Subdomain, "must be a DNS-1123 subdomain (lower case letters, digits, '-', '.')");
const PathRef = z.object({ namespace: Namespace, name: Name });

const StepRequest = z.strictObject({ namespace: Namespace, name: Name, dryRun: z.boolean().optional() });

/** What the watch relay POSTs (Standard Webhooks payload shape: type, timestamp, data). */
export const RelayEvent = z.object({
  type: z.literal("statefulset.changed"),
  timestamp: z.iso.datetime(),
  data: z.object({ namespace: Namespace, name: Name, causes: z.array(z.string().max(512)).max(50).optional() }),
});
export type RelayEvent = z.infer<typeof RelayEvent>;

const StepFlag = z.enum(["true", "false", "1", "0"]).optional();

const issuesOf = (error: z.ZodError): Issue[] =>
  error.issues.map((i) => ({ path: i.path.map(String).join(".") || "(body)", message: i.message }));

type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 500 | 502 | 503;

const problem = (c: Context, status: ErrorStatus, error: string, message: string, extra: Record<string, unknown> = {}) =>
  c.json({ error, message, ...extra }, status);

const mediaType = (c: Context): string => (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();

/** A step's outcome as JSON: an ApiError reduced to its code, reason and message. */
export const outcomeJSON = (r: StepResult) => {
  const o = r.outcome;
  if ((o.kind === "refused" || o.kind === "retry") && o.error) {
    return { ...o, error: { code: o.error.code, reason: o.error.reason, message: o.error.message } };
  }
  return o;
};

const stepJSON = (r: StepResult) => ({
  decision: r.decision,
  outcome: outcomeJSON(r),
  writer: r.writer,
  table: renderDecision(r.decision),
});

export function createApp(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  const log = deps.log ?? (() => {});
  const allowed = new Set(deps.namespaces ?? []);
  const limitBytes = deps.bodyLimitBytes ?? 256 * 1024;

  const limit = bodyLimit({
    maxSize: limitBytes,
    onError: (c) => problem(c, 413, "PayloadTooLarge", `request body exceeds ${limitBytes} bytes`),
  });

  /** Standard Webhooks signature (when its headers are present) or bearer token. */
  const authenticate: MiddlewareHandler<Env> = async (c, next) => {
    const body = await c.req.text();
    c.set("body", body);
    if (c.req.header("webhook-signature") !== undefined) {
      if (deps.auth.webhookSecrets.length === 0) {
        return problem(c, 401, "Unauthorized", "signed requests are not accepted: no webhook secret is configured");
      }
      const verdict = await verifyWebhook({
        secrets: deps.auth.webhookSecrets,
        id: c.req.header("webhook-id"),
        timestamp: c.req.header("webhook-timestamp"),
        signature: c.req.header("webhook-signature"),
        body,
        now: deps.now(),
        replay: deps.auth.replay,
        ...(deps.auth.toleranceSeconds !== undefined ? { toleranceSeconds: deps.auth.toleranceSeconds } : {}),
      });
      if (!verdict.ok) {
        log({ msg: "auth rejected", method: "signature", failure: verdict.failure, path: c.req.path });
        return problem(c, 401, "Unauthorized", verdict.message, { failure: verdict.failure });
      }
      c.set("auth", "signature");
      return next();
    }
    if (await bearerMatches(c.req.header("authorization"), deps.auth.bearerTokens)) {
      c.set("auth", "bearer");
      return next();
    }
    const presented = c.req.header("authorization") !== undefined;
    log({ msg: "auth rejected", method: presented ? "bearer" : "none", path: c.req.path });
    c.header("WWW-Authenticate", 'Bearer realm="claimstep"');
    return problem(
      c,
      401,
      "Unauthorized",
      presented
        ? "the bearer token is not valid"
        : "authenticate with `Authorization: Bearer <token>` or a Standard Webhooks signature (webhook-id, webhook-timestamp, webhook-signature)",
    );
  };

  /** 403 for sets outside the configured namespaces. */
  const permitted = (c: Context, ref: SetRef) =>
    allowed.size === 0 || allowed.has(ref.namespace)
      ? undefined
      : problem(c, 403, "Forbidden", `namespace "${ref.namespace}" is not one claimstep manages here (CLAIMSTEP_NAMESPACES: ${[...allowed].join(", ")})`);

  const pathRef = (c: Context): { ok: true; ref: SetRef } | { ok: false; res: Response } => {
    const parsed = PathRef.safeParse({ namespace: c.req.param("namespace"), name: c.req.param("name") });
    if (!parsed.success) return { ok: false, res: problem(c, 400, "BadRequest", "invalid StatefulSet reference in the URL", { issues: issuesOf(parsed.error) }) };
    return { ok: true, ref: parsed.data };
  };

  const jsonBody = <T extends z.ZodType>(c: Context<Env>, schema: T): { ok: true; value: z.infer<T> } | { ok: false; res: Response } => {
    if (mediaType(c) !== "application/json") {
      return { ok: false, res: problem(c, 415, "UnsupportedMediaType", "send the body as Content-Type: application/json") };
    }
    let value: unknown;
    try {
      value = JSON.parse(c.get("body"));
    } catch (err) {
      return { ok: false, res: problem(c, 400, "BadRequest", `body is not valid JSON: ${(err as Error).message}`) };
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) return { ok: false, res: problem(c, 400, "BadRequest", "invalid request body", { issues: issuesOf(parsed.error) }) };
    return { ok: true, value: parsed.data };
  };

  const step = async (ref: SetRef, dryRun: boolean, via: string): Promise<StepResult> => {
    const result = await runStep({ reader: deps.reader, writer: deps.writerFor, ref, now: deps.now(), dryRun });
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

  app.get("/v1/statefulsets/:namespace/:name", authenticate, async (c) => {
    const p = pathRef(c);
    if (!p.ok) return p.res;
    const denied = permitted(c, p.ref);
    if (denied) return denied;
    return stepResponse(c, await step(p.ref, true, "plan"));
  });

  app.post("/v1/steps", limit, authenticate, async (c) => {
    const b = jsonBody(c, StepRequest);
    if (!b.ok) return b.res;
    const ref = { namespace: b.value.namespace, name: b.value.name };
    const denied = permitted(c, ref);
    if (denied) return denied;
    return stepResponse(c, await step(ref, b.value.dryRun ?? false, c.get("auth")));
  });

  app.post("/v1/statefulsets/:namespace/:name/templates", limit, authenticate, async (c) => {
    const p = pathRef(c);
    if (!p.ok) return p.res;
    const denied = permitted(c, p.ref);
    if (denied) return denied;
    const flag = StepFlag.safeParse(c.req.query("step"));
    if (!flag.success) return problem(c, 400, "BadRequest", "query parameter step must be true or false", { issues: issuesOf(flag.error) });
    const format = BodyFormats[mediaType(c) as keyof typeof BodyFormats];
    if (!format) {
      return problem(c, 415, "UnsupportedMediaType", `send the templates as one of: ${Object.keys(BodyFormats).join(", ")}`);
    }
    const doc = parseDocument(c.get("body"), format);
    if (!doc.ok) return problem(c, 400, "BadRequest", "the body could not be parsed", { issues: doc.issues });
    const posted = templatesFromDocument(doc.value, p.ref);
    if (!posted.ok) return problem(c, 400, "BadRequest", "invalid claim templates", { issues: posted.issues });

    const snapshot = await deps.reader.load(p.ref);
    const change = desiredChange(snapshot.statefulSet, posted.templates);
    if (!change.ok) return problem(c, 400, "BadRequest", change.message, { issues: [{ path: "(templates)", message: change.message }] });
    if (change.changed) {
      await deps.writerFor(snapshot).annotateSet(p.ref, change.annotations, snapshot.statefulSet.metadata.resourceVersion);
    }
    log({ msg: "templates", namespace: p.ref.namespace, name: p.ref.name, revision: change.revision, changed: change.changed });
    const written = { revision: change.revision, changed: change.changed, templates: change.templates };
    const stepNow = flag.data === "true" || flag.data === "1";
    if (!stepNow) return c.json(written, 200);
    return stepResponse(c, await step(p.ref, false, "templates"), written);
  });

  app.post("/v1/relay", limit, authenticate, async (c) => {
    if (c.get("auth") !== "signature") {
      return problem(c, 403, "Forbidden", "relay events must be signed with the webhook secret (Standard Webhooks), not sent with a bearer token");
    }
    const b = jsonBody(c, RelayEvent);
    if (!b.ok) return b.res;
    const ref = { namespace: b.value.data.namespace, name: b.value.data.name };
    const denied = permitted(c, ref);
    if (denied) return denied;
    return stepResponse(c, await step(ref, false, "relay"));
  });

  for (const m of deps.mounts ?? []) {
    app.use(`${m.prefix}/*`, limit);
    app.route("/", m.app);
  }

  // A known path with the wrong method is a 405 with Allow, not a 404.
  const methods: Array<[string, string]> = [
    ["/healthz", "GET, HEAD"],
    ["/v1/statefulsets/:namespace/:name", "GET, HEAD"],
    ["/v1/steps", "POST"],
    ["/v1/statefulsets/:namespace/:name/templates", "POST"],
    ["/v1/relay", "POST"],
  ];
  for (const [path, allow] of methods) {
    app.all(path, (c) => {
      c.header("Allow", allow);
      return problem(c, 405, "MethodNotAllowed", `${c.req.method} is not allowed on ${c.req.path}; use ${allow}`);
    });
  }

  app.notFound((c) => problem(c, 404, "NotFound", `no route for ${c.req.method} ${c.req.path}`));

  app.onError((err, c) => {
    if (err instanceof HTTPException) return err.getResponse();
    if (err instanceof ApiError) {
      if (err.kind === "NotFound") {
        const hint = /check the/.test(err.message) ? "" : ": check the namespace and name (kubectl get statefulsets -n <namespace>)";
        return problem(c, 404, "NotFound", `${err.message}${hint}`);
      }
      if (err.kind === "Conflict" && !err.isFieldManagerConflict) {
        return problem(c, 409, "Conflict", `the StatefulSet changed while claimstep wrote it: retry (${err.message})`);
      }
      if (err.isTransient) {
        c.header("Retry-After", String(err.retryAfterSeconds ?? 5));
        return problem(c, 503, "Unavailable", `the API server is busy or unreachable: ${err.message}`);
      }
      log({ msg: "api error", code: err.code, reason: err.reason, request: err.request, message: err.message });
      const hint = err.code === 401 ? "claimstep's own credentials to the API server were rejected: check KUBE_TOKEN or the kubeconfig" : err.message;
      return problem(c, 502, "UpstreamError", hint, { upstream: { code: err.code, reason: err.reason ?? null } });
    }
    if (err instanceof PermissionError) {
      log({ msg: "permission error", message: err.message });
      return problem(c, 502, "UpstreamForbidden", err.message);
    }
    log({ msg: "internal error", error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    return problem(c, 500, "InternalError", "internal error; see the server log");
  });

  return app;
}
