// Listening: @hono/node-server on the port and address given, with Node's timeouts and connection
// limit set before the first connection, over HTTPS when a key pair is given (the admission
// webhook needs TLS), and a failure to listen told as one line naming the fix.
import { createServer as createHttpsServer } from "node:https";
import { serve } from "@hono/node-server";
import type { KeyPair } from "../http/tls-files.js";
import type { ServerLimits } from "./limits.js";

/**
 * Where `claimstep serve` listens unless told (--host, CLAIMSTEP_HOST): this machine only. The
 * container image sets CLAIMSTEP_HOST=0.0.0.0, and deployment.yaml passes --host 0.0.0.0, so that
 * the pod's port is reachable.
 */
export const DEFAULT_HOST = "127.0.0.1";

/** The server could not listen: the message names the fix. */
export class ListenError extends Error {
  override readonly name = "ListenError";
}

export type NodeServer = ReturnType<typeof serve>;

/** Why the server could not listen on `where`, and what to do. */
function listenError(err: NodeJS.ErrnoException, where: string): ListenError {
  if (err.code === "EADDRINUSE")
    return new ListenError(
      `cannot listen on ${where}: the port is in use (EADDRINUSE); stop what listens there or choose another with --port (or PORT)`,
    );
  if (err.code === "EADDRNOTAVAIL")
    return new ListenError(
      `cannot listen on ${where}: no such address on this machine (EADDRNOTAVAIL); choose another with --host (or CLAIMSTEP_HOST)`,
    );
  if (err.code === "EACCES")
    return new ListenError(
      `cannot listen on ${where}: permission denied (EACCES); ports below 1024 need privileges, choose another with --port (or PORT)`,
    );
  return new ListenError(`cannot listen on ${where}: ${err.message}`);
}

/** The server, once it listens; a ListenError if it cannot. */
export function listen(opts: {
  fetch: Parameters<typeof serve>[0]["fetch"];
  port: number;
  host: string;
  limits: ServerLimits;
  pair: KeyPair | undefined;
}): Promise<NodeServer> {
  const { limits, pair } = opts;
  return new Promise<NodeServer>((resolve, reject) => {
    // A port in use (or an address not of this machine) is one line naming the fix, not an unhandled 'error' event.
    const failed = (err: NodeJS.ErrnoException) => reject(listenError(err, `${opts.host}:${opts.port}`));
    // Node's http options (https.createServer takes them too): the timeouts are checked every checkIntervalMs.
    const timeouts = {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    };
    const serverOptions = pair ? { ...timeouts, cert: pair.cert, key: pair.key } : timeouts;
    const s = serve(
      {
        fetch: opts.fetch,
        port: opts.port,
        hostname: opts.host,
        overrideGlobalObjects: false,
        serverOptions,
        ...(pair ? { createServer: createHttpsServer } : {}),
      },
      () => {
        s.off("error", failed);
        resolve(s);
      },
    );
    s.once("error", failed);
    // Set before the first connection (listen is asynchronous): beyond it, a new connection is dropped.
    s.maxConnections = limits.maxConnections;
    if ("keepAliveTimeout" in s) s.keepAliveTimeout = limits.keepAliveTimeoutMs;
  });
}
