// POST /v1/admission/statefulsets: claimstep's mutating admission webhook (core/change/admission.ts),
// called by the API server for UPDATEs of opted-in StatefulSets whose claim templates changed
// (deploy/kubernetes/admission.yaml). POST …/by-namespace is the entry whose namespaceSelector
// matched the namespace's opt-in label (a service path has no query: the API server refuses one);
// `?scope=namespace` says the same for a webhook configured by URL.
//
// Unauthenticated on purpose (docs/admission.md): the answer only reshapes the caller's own
// request — the templates it sent move into an annotation of the same object — it reads nothing
// from the cluster and writes nothing, so a caller learns and changes nothing it could not by
// editing its own request. The Node server serves it over TLS, as the API server requires.
import { Hono, type MiddlewareHandler } from "hono";
import { encodeBase64 } from "../../adapters/gitops/base64.js";
import { AdmissionReviewError, type AdmissionVerdict, admitStatefulSetUpdate } from "../../core/change/index.js";
import { BodyBudget, mediaTypeOf, readBody } from "../http/body.js";
import { Problem } from "../http/problem.js";

export const ADMISSION_PATH = "/v1/admission/statefulsets";
/**
 * A review carries the set twice (object, oldObject), as JSON with the server's defaults. Measured
 * on kube-apiserver v1.34.2 (issue 37): the largest sets etcd stores (1.5 MiB) render as 4,057,081
 * bytes (18,960 of the smallest claim templates) and 3,920,915 bytes (25,799 containers); a shape
 * the 3 MiB request limit binds first (77,260 ports) as 3,146,406. Twice the largest, with the
 * request's ~1 KiB around it: 8.12 MB, under 8 MiB. Larger: only a set a protobuf client wrote in a
 * shape JSON renders far larger (tens of thousands of ports), which no pod runs; answered 413, the
 * API server refuses that update (failurePolicy Fail). What claimstep does with a review within the
 * limit is bounded by ADMISSION_CAPS (core/change/admission.ts).
 */
export const ADMISSION_BODY_LIMIT = 8 * 1024 * 1024;
/** Deeper than any StatefulSet: a hostile review is refused before anything walks it. */
export const ADMISSION_MAX_DEPTH = 64;
/**
 * Reviews answered at once (more: 503, Retry-After 1), counted once a review's body is in: a sender
 * still trickling its body holds no slot (it is cut off at BODY_DEADLINE_MS, functions/http/body.ts),
 * so slow senders cannot turn the API server's reviews away. The API server sends a review per
 * update of an opted-in set, and answers take milliseconds.
 */
export const ADMISSION_MAX_IN_FLIGHT = 8;
/**
 * The bytes the reviews being read or answered may hold together (a BodyBudget: beyond it 503,
 * Retry-After 1): four of the largest. A slow sender holds only what it has sent, so slow senders do
 * not use it up; this bounds the memory the route takes (32 MiB) however many connections the Node
 * server lets reach it (SERVER_LIMITS.routeConnections, functions/server/limits.ts).
 */
export const ADMISSION_BODY_BUDGET = 4 * ADMISSION_BODY_LIMIT;

/** The AdmissionReview v1 the API server reads back. */
export function admissionResponse(v: AdmissionVerdict): Record<string, unknown> {
  const response: Record<string, unknown> = { uid: v.uid, allowed: v.kind !== "deny" };
  if (v.kind === "patch") {
    response.patchType = "JSONPatch";
    response.patch = encodeBase64(JSON.stringify(v.patch));
  }
  if (v.kind === "deny") response.status = { code: v.code, reason: "BadRequest", message: v.message };
  if (v.kind !== "deny" && v.warnings.length) response.warnings = v.warnings;
  return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response };
}

/** The nesting depth of a JSON text, counted without parsing it (strings skipped). */
export function jsonDepth(text: string, limit: number): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92) i++;
      else if (ch === 34) inString = false;
    } else if (ch === 34) inString = true;
    else if (ch === 123 || ch === 91) {
      if (++depth > max) max = depth;
      if (max > limit) return max;
    } else if (ch === 125 || ch === 93) depth--;
  }
  return max;
}

export function admissionRoutes(
  opts: { log?: (entry: Record<string, unknown>) => void; maxInFlight?: number; bodyBudgetBytes?: number } = {},
): Hono {
  const log = opts.log ?? (() => {});
  const maxInFlight = opts.maxInFlight ?? ADMISSION_MAX_IN_FLIGHT;
  const budget = new BodyBudget(opts.bodyBudgetBytes ?? ADMISSION_BODY_BUDGET);
  let inFlight = 0;
  const app = new Hono();
  const bounded: MiddlewareHandler = async function admissionInFlight(_c, next) {
    if (inFlight >= maxInFlight) {
      log({ msg: "admission busy", inFlight });
      throw new Problem(
        503,
        "Unavailable",
        `claimstep answers at most ${maxInFlight} admission review${maxInFlight === 1 ? "" : "s"} at once: retry`,
        { headers: { "Retry-After": "1" } },
      );
    }
    inFlight++;
    try {
      await next();
    } finally {
      inFlight--;
    }
  };
  app.post(
    `${ADMISSION_PATH}/:scope{by-namespace}?`,
    readBody({ maxBytes: ADMISSION_BODY_LIMIT, budget }),
    bounded,
    async (c) => {
      if (mediaTypeOf(c) !== "application/json")
        throw new Problem(415, "UnsupportedMediaType", "send the AdmissionReview as Content-Type: application/json");
      const text = await c.req.text();
      if (jsonDepth(text, ADMISSION_MAX_DEPTH) > ADMISSION_MAX_DEPTH)
        throw new Problem(400, "BadRequest", `the AdmissionReview nests deeper than ${ADMISSION_MAX_DEPTH} levels`);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (err) {
        throw new Problem(400, "BadRequest", `the body is not JSON: ${(err as Error).message}`);
      }
      let verdict: AdmissionVerdict;
      try {
        verdict = admitStatefulSetUpdate(body, {
          namespaceOptedIn: c.req.param("scope") === "by-namespace" || c.req.query("scope") === "namespace",
        });
      } catch (err) {
        if (err instanceof AdmissionReviewError) throw new Problem(400, "BadRequest", err.message);
        throw err;
      }
      const request = (body as { request?: { namespace?: string; name?: string; dryRun?: boolean } }).request;
      log({
        msg: "admission",
        namespace: request?.namespace,
        name: request?.name,
        dryRun: request?.dryRun === true,
        verdict: verdict.kind,
        ...(verdict.kind === "pass" ? { why: verdict.why } : {}),
        ...(verdict.kind === "patch" ? { operations: verdict.patch.length } : {}),
      });
      return c.json(admissionResponse(verdict), 200);
    },
  );
  return app;
}
