// The simulated cluster (adapters/sim) as the API server of a test: reached through msw where the
// code under test uses the global fetch, or over a real socket on 127.0.0.1 for processes msw
// cannot reach (the Worker inside workerd, a spawned CLI). Either way every request is answered
// by the cluster's own HTTP handler, the one model of the API server.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { http, type RequestHandler } from "msw";
import { SimCluster } from "../../adapters/sim/cluster.js";
import type { PolicyRule } from "../../adapters/sim/http.js";
import type { SimClusterOptions } from "../../adapters/sim/options.js";
import { capturedCluster, type KubeObject } from "./objects.js";

export type { Counters, PolicyRule } from "../../adapters/sim/http.js";
export type { KubeObject } from "./objects.js";

export interface SimServerOptions {
  /** Origin (and optional path prefix) the client talks to, e.g. `https://kube.test:6443`. */
  baseUrl: string;
  objects?: KubeObject[];
  /** When set, every request must carry `Authorization: Bearer <token>` (else 401). */
  token?: string;
  /** User named in RBAC refusals. */
  user?: string;
  /** RBAC allow-list; absent = everything is allowed (then narrow it with `http.deny`). */
  rules?: PolicyRule[];
  /** storage.k8s.io versions serving VolumeAttributesClasses; default ["v1"], [] before 1.31. */
  volumeAttributesClassVersions?: ("v1" | "v1beta1")[];
  /** The virtual clock's start (creationTimestamps, event times). */
  now?: Date;
  seed?: number;
}

/** A simulated cluster with msw handlers that forward to its HTTP handler. */
export interface SimServer extends SimCluster {
  readonly handlers: RequestHandler[];
}

export function simClusterOptions(opts: Omit<SimServerOptions, "objects">): SimClusterOptions {
  const identity = {
    user: opts.user ?? "system:serviceaccount:claimstep:claimstep",
    ...(opts.rules ? { rules: opts.rules } : {}),
  };
  const versions = opts.volumeAttributesClassVersions ?? ["v1"];
  return {
    baseUrl: opts.baseUrl,
    ...(opts.token !== undefined ? { tokens: { [opts.token]: identity }, token: opts.token } : { anonymous: identity }),
    ...(versions.length ? { volumeAttributesClassVersions: versions } : { volumeAttributesClasses: false }),
    ...(opts.now ? { start: opts.now } : {}),
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
  };
}

export function createSimServer(opts: SimServerOptions): SimServer {
  const cluster = new SimCluster(simClusterOptions(opts)) as SimServer;
  if (opts.objects) cluster.seed(...opts.objects);
  const base = new URL(opts.baseUrl);
  const prefix = base.pathname.replace(/\/+$/, "");
  Object.defineProperty(cluster, "handlers", {
    value: [http.all(`${base.origin}${prefix}/*`, ({ request }) => cluster.http.fetch(request))],
  });
  return cluster;
}

export interface SocketSim {
  fake: SimCluster;
  url: string;
  close(): Promise<void>;
}

export interface SocketServer {
  /** http://127.0.0.1:<port> */
  url: string;
  close(): Promise<void>;
}

const bodyOf = async (req: IncomingMessage): Promise<Buffer | undefined> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length ? Buffer.concat(chunks) : undefined;
};

/**
 * A fetch handler (a simulated cluster's `http.fetch`) on a real socket on 127.0.0.1. Each request
 * is re-addressed to `origin`, the base URL the cluster answers as (default: the socket's own URL).
 */
export async function serveFetch(
  handle: (request: Request) => Promise<Response>,
  origin?: string,
): Promise<SocketServer> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
      const answer = await handle(
        new Request(`${origin ?? url}${req.url}`, {
          method: req.method!,
          headers,
          ...(body && req.method !== "GET" ? { body: new Uint8Array(body) } : {}),
        }),
      );
      res.writeHead(answer.status, Object.fromEntries(answer.headers));
      res.end(Buffer.from(await answer.arrayBuffer()));
    })().catch((err) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The simulated API server on a real socket (http://127.0.0.1:<port>). */
export async function serveSim(opts: Omit<SimServerOptions, "baseUrl">): Promise<SocketSim> {
  let fake: SimCluster | undefined;
  const socket = await serveFetch((request) => fake!.http.fetch(request));
  fake = new SimCluster(simClusterOptions({ ...opts, baseUrl: socket.url }));
  if (opts.objects) fake.seed(...opts.objects);
  return { fake, url: socket.url, close: socket.close };
}

/**
 * The captured cluster (StatefulSet `web`, its pods and claims, classes `fast` and `fixed`) in a
 * simulated cluster, with `annotations` added to the set: for tests where the app is the far end.
 */
export function capturedSim(annotations: Record<string, string> = {}): SimCluster {
  const sim = new SimCluster();
  sim.seed(...capturedCluster());
  sim.update(
    "statefulsets",
    "default",
    "web",
    (s) => (s.metadata.annotations = { ...s.metadata.annotations, ...annotations }),
  );
  return sim;
}

/** claimstep's claim applies that landed. */
export const claimApplies = (sim: SimCluster) =>
  sim.audit.filter((e) => e.actor === "claimstep" && e.verb === "apply" && e.outcome === "ok");
