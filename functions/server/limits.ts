// What one client may hold of the Node server (docs/deploying.md, "The Node server"): Node's
// timeouts and connection count, and each shared route's share of the connections.
import type { IncomingMessage } from "node:http";
import { ADMISSION_PATH } from "../routes/admission.js";

export interface ServerLimits {
  /** A request's headers must arrive within this (from its first byte), else 408 and the connection is closed. */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this, else 408 and close. Not the answer: a long one (the status page's stream) is not cut. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** Connections open at once; more are dropped as they connect. */
  maxConnections: number;
  /** How often the two timeouts are checked (Node's connectionsCheckingInterval; its default is 30 s). */
  checkIntervalMs: number;
  /**
   * Requests whose body is still arriving, at once, on each of SHARED_ROUTES: the routes a client
   * reaches without a credential checked from its headers. A request holds its place from its headers
   * until its body is in (or its answer is produced, whichever comes first: a step it then runs holds
   * none). More are answered 503 (Retry-After 1, the connection closed) before any of their body is
   * read, so that the rest of maxConnections stays for /healthz (the kubelet's probes) and the bearer
   * routes.
   */
  routeConnections: number;
}

/**
 * The routes that take their share of the connections (ServerLimits.routeConnections each): the
 * admission webhook (called by the API server, unauthenticated by design), the forge webhooks (signed
 * over the body, and facing the internet in GitOps mode) and the relay (signed over the body).
 */
export const SHARED_ROUTES: readonly string[] = [
  ADMISSION_PATH,
  "/v1/webhooks/github",
  "/v1/webhooks/gitlab",
  "/v1/relay",
];

/** The one of SHARED_ROUTES a path is (ADMISSION_PATH also with /by-namespace), if any. */
const sharedRouteOf = (path: string): string | undefined =>
  SHARED_ROUTES.find((r) => path === r || path.startsWith(`${r}/`));

/**
 * `fetch`, with each of SHARED_ROUTES receiving at most `share` bodies at once; beyond it 503 and
 * the connection closed, its body unread (@hono/node-server drains or drops what is left). A place
 * is given back when the request's body has ended (Node's IncomingMessage, in @hono/node-server's
 * env) or its answer is produced.
 */
export function sharedFetch<E>(
  fetch: (request: Request, env: E) => Response | Promise<Response>,
  share: number,
): (request: Request, env: E) => Promise<Response> {
  const receiving = new Map<string, number>();
  return async (request, env) => {
    const route = sharedRouteOf(new URL(request.url).pathname);
    if (route === undefined) return fetch(request, env);
    const held = receiving.get(route) ?? 0;
    if (held >= share)
      return Response.json(
        {
          error: "Unavailable",
          message: `claimstep receives at most ${share} request${share === 1 ? "" : "s"} at once on ${route}: retry`,
        },
        { status: 503, headers: { "Retry-After": "1", Connection: "close" } },
      );
    receiving.set(route, held + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      receiving.set(route, (receiving.get(route) ?? 1) - 1);
    };
    const incoming = (env as { incoming?: IncomingMessage } | undefined)?.incoming;
    if (incoming?.readableEnded) release();
    else incoming?.once("end", release);
    try {
      return await fetch(request, env);
    } finally {
      release();
      incoming?.off("end", release);
    }
  };
}

/**
 * Node's defaults let a request take 300 s and its headers 60 s, and accept any number of
 * connections. A request to claimstep is small (a step, an event, a webhook: under the 256 KiB
 * body limit; an AdmissionReview under 8 MiB, from inside the cluster), so 30 s is ample; the app
 * gives a body BODY_DEADLINE_MS (5 s, functions/http/body.ts). Each of the four SHARED_ROUTES may
 * receive 32 bodies at once: 128 of the 512 connections in all, 384 kept for /healthz and the
 * bearer routes.
 */
export const SERVER_LIMITS: ServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 512,
  checkIntervalMs: 1_000,
  routeConnections: 32,
};

/** SERVER_LIMITS with the ones given instead; the headers' deadline may not outlast the request's. */
export function serverLimits(given: Partial<ServerLimits> | undefined): ServerLimits {
  const limits = { ...SERVER_LIMITS, ...given };
  if (limits.headersTimeoutMs > limits.requestTimeoutMs)
    throw new RangeError("startServer: headersTimeoutMs must not exceed requestTimeoutMs");
  return limits;
}
