// The Node transport at the byte level (issue 22): every request claimstep sends over node:http is
// read by a plain server exactly as framed. A DELETE's body (propagationPolicy, preconditions) once
// left without Content-Length and the API server read no body at all. Here a raw TCP server
// records the bytes as they arrive; an HTTPS server with client certificates, a CONNECT proxy and
// a server that never answers check the agent's TLS, proxy and timeout paths still hold.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import {
  type AddressInfo,
  connect,
  createServer as createTcpServer,
  type Socket,
  type Server as TcpServer,
} from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { RecreateRoutes } from "../../../adapters/kube/routes.js";
import { bodyBytes, requestWithAgent } from "../../../adapters/kube-node/agent-fetch.js";
import { nodeKubeTarget } from "../../../adapters/kube-node/kubeconfig.js";
import { makeTestCa } from "../../support/test-ca.js";

interface RawRequest {
  head: string;
  headers: Record<string, string>;
  body: string;
}

/** A TCP server that answers 200 {} once it has read one request as framed (or 100 ms after its head when unframed). */
async function rawServer(): Promise<{ url: string; requests: RawRequest[]; close(): Promise<void> }> {
  const requests: RawRequest[] = [];
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((socket) => {
    sockets.add(socket);
    let data = Buffer.alloc(0);
    let timer: NodeJS.Timeout | undefined;
    const answer = () => {
      const text = data.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const [head = "", ...lines] = text.slice(0, end).split("\r\n");
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
      );
      requests.push({ head, headers, body: data.subarray(end + 4).toString("utf8") });
      socket.end(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
      );
    };
    socket.on("data", (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const text = data.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
      clearTimeout(timer);
      if (length && data.length - (end + 4) >= Number(length[1])) answer();
      else if (!length) timer = setTimeout(answer, 100);
    });
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe("agentFetch frames every body (raw bytes on the wire)", () => {
  let raw: Awaited<ReturnType<typeof rawServer>>;
  beforeAll(async () => void (raw = await rawServer()));
  afterAll(() => raw.close());

  const deleteOptions = JSON.stringify({
    apiVersion: "v1",
    kind: "DeleteOptions",
    propagationPolicy: "Orphan",
    preconditions: { uid: "0b0e-ü", resourceVersion: "42" },
  });
  it.each([
    ["DELETE", "application/json", deleteOptions],
    [
      "PATCH",
      "application/merge-patch+json",
      JSON.stringify({ metadata: { annotations: { "claimstep.io/x": "ünïcode" } } }),
    ],
    ["PATCH", "application/apply-patch+yaml", JSON.stringify({ apiVersion: "v1", kind: "PersistentVolumeClaim" })],
    [
      "POST",
      "application/json",
      JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", data: { "statefulset.json": "{}".repeat(40_000) } }),
    ],
    ["PUT", "application/json", JSON.stringify({ apiVersion: "v1", kind: "ConfigMap" })],
  ])(
    "%s (%s): the body arrives whole, with Content-Length in bytes and its content type",
    async (method, contentType, body) => {
      raw.requests.length = 0;
      const res = await requestWithAgent(
        `${raw.url}/apis/apps/v1/namespaces/db/statefulsets/web`,
        { method, headers: { "Content-Type": contentType }, body },
        undefined,
      );
      expect(res.status).toBe(200);
      const [seen] = raw.requests;
      expect(seen!.head).toBe(`${method} /apis/apps/v1/namespaces/db/statefulsets/web HTTP/1.1`);
      expect(seen!.headers["content-length"]).toBe(String(Buffer.byteLength(body)));
      expect(seen!.headers["transfer-encoding"]).toBeUndefined();
      expect(seen!.headers["content-type"]).toBe(contentType);
      expect(seen!.body).toBe(body);
    },
  );

  it("a GET carries no body and no framing headers; an empty POST says Content-Length: 0", async () => {
    raw.requests.length = 0;
    await requestWithAgent(`${raw.url}/api/v1/pods`, { method: "GET" }, undefined);
    await requestWithAgent(`${raw.url}/api/v1/pods`, { method: "POST" }, undefined);
    expect(raw.requests[0]!.headers["content-length"]).toBeUndefined();
    expect(raw.requests[0]!.headers["transfer-encoding"]).toBeUndefined();
    expect(raw.requests[0]!.body).toBe("");
    expect(raw.requests[1]!.headers["content-length"]).toBe("0");
  });

  it("bytes bodies are framed as bytes; a stream body is refused before anything is sent", async () => {
    expect(bodyBytes(new TextEncoder().encode("é"))!.byteLength).toBe(2);
    expect(bodyBytes(new Uint8Array([1, 2, 3]).buffer)!.byteLength).toBe(3);
    raw.requests.length = 0;
    await expect(
      requestWithAgent(`${raw.url}/x`, { method: "POST", body: new ReadableStream() }, undefined),
    ).rejects.toThrow(/string or byte bodies only, not \[object ReadableStream\]/);
    expect(raw.requests).toEqual([]);
  });

  it("the old transport's fault, for the record: node:http does not frame a DELETE body on its own", async () => {
    // What agentFetch did before the fix: write the body with no length. The bytes follow the
    // head unframed, so a server (the API server, node:http) reads a DELETE without a body.
    raw.requests.length = 0;
    const { request } = await import("node:http");
    await new Promise<void>((resolve, reject) => {
      const req = request(
        `${raw.url}/x`,
        { method: "DELETE", headers: { "content-type": "application/json" } },
        (res) => {
          res.resume();
          res.on("end", resolve);
        },
      );
      req.on("error", reject);
      req.write(deleteOptions);
      req.end();
    });
    expect(raw.requests[0]!.headers["content-length"]).toBeUndefined();
    expect(raw.requests[0]!.headers["transfer-encoding"]).toBeUndefined();
  });
});

describe("agentFetch over TLS with client certificates, through a proxy, with a timeout", () => {
  let dir: string;
  let https: HttpsServer;
  let proxy: HttpServer;
  let stall: TcpServer;
  let httpsUrl: string;
  let proxyUrl: string;
  let stallUrl: string;
  const seen: {
    method: string;
    url: string;
    clientCN?: string;
    authorized: boolean;
    body: string;
    contentLength?: string;
  }[] = [];
  const tunnels: string[] = [];
  const open = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
  };
  const file = (f: string) => join(dir, f);
  const b64 = (f: string) => readFileSync(file(f)).toString("base64");

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "claimstep-agent-fetch-"));
    const ca = makeTestCa(dir, "claimstep-test-ca");
    ca.serving("server", "/CN=127.0.0.1");
    ca.client("client", "/CN=claimstep-user/O=claimstep");
    https = createHttpsServer(
      {
        key: readFileSync(file("server.key")),
        cert: readFileSync(file("server.crt")),
        ca: readFileSync(file("ca.crt")),
        requestCert: true,
        rejectUnauthorized: false,
      },
      (req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
          const socket = req.socket as TLSSocket;
          const cn = socket.getPeerCertificate()?.subject?.CN;
          seen.push({
            method: req.method!,
            url: req.url!,
            authorized: socket.authorized,
            body: Buffer.concat(chunks).toString("utf8"),
            ...(cn ? { clientCN: String(cn) } : {}),
            ...(req.headers["content-length"] ? { contentLength: req.headers["content-length"] } : {}),
          });
          res.writeHead(200, { "Content-Type": "application/json" });
          res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Success" }));
        });
      },
    );
    await new Promise<void>((resolve) => https.listen(0, "127.0.0.1", resolve));
    httpsUrl = `https://127.0.0.1:${(https.address() as AddressInfo).port}`;
    // An HTTP CONNECT proxy, as kubeconfig's proxy-url names one.
    proxy = createHttpServer((_req, res) => res.writeHead(405).end());
    proxy.on("connect", (req, client: Socket, head: Buffer) => {
      tunnels.push(req.url!);
      track(client);
      const [host, port] = req.url!.split(":");
      const upstream = connect(Number(port), host!, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      track(upstream);
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    // A server that accepts and never answers.
    stall = createTcpServer(track);
    await new Promise<void>((resolve) => stall.listen(0, "127.0.0.1", resolve));
    stallUrl = `http://127.0.0.1:${(stall.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const s of open) s.destroy();
    https.closeAllConnections();
    proxy.closeAllConnections();
    await Promise.all([https, proxy, stall].map((s) => new Promise((resolve) => s.close(resolve))));
    rmSync(dir, { recursive: true, force: true });
  });

  const kubeconfig = (server: string, extra: Record<string, unknown> = {}) => {
    const path = file(`kubeconfig-${seen.length}-${tunnels.length}-${Math.random().toString(36).slice(2)}`);
    writeFileSync(
      path,
      stringify({
        apiVersion: "v1",
        kind: "Config",
        "current-context": "c",
        clusters: [{ name: "c", cluster: { server, "certificate-authority-data": b64("ca.crt"), ...extra } }],
        users: [
          { name: "u", user: { "client-certificate-data": b64("client.crt"), "client-key-data": b64("client.key") } },
        ],
        contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
      }),
    );
    return path;
  };
  const orphan = {
    apiVersion: "v1",
    kind: "DeleteOptions",
    propagationPolicy: "Orphan",
    preconditions: { uid: "u-1", resourceVersion: "7" },
  };

  it("a DELETE with DeleteOptions over TLS (caData, client certificate): the server reads the whole body", async () => {
    seen.length = 0;
    const { client } = nodeKubeTarget({ kubeconfig: kubeconfig(httpsUrl) });
    await client.delete(RecreateRoutes.deleteStatefulSet, { namespace: "db", name: "web" }, orphan);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      method: "DELETE",
      url: "/apis/apps/v1/namespaces/db/statefulsets/web",
      clientCN: "claimstep-user",
      authorized: true,
    });
    expect(JSON.parse(seen[0]!.body)).toEqual(orphan);
    expect(seen[0]!.contentLength).toBe(String(Buffer.byteLength(JSON.stringify(orphan))));
  });

  it("the same through kubeconfig's proxy-url (CONNECT): tunnelled, TLS end to end, body whole", async () => {
    seen.length = 0;
    tunnels.length = 0;
    const { client } = nodeKubeTarget({ kubeconfig: kubeconfig(httpsUrl, { "proxy-url": proxyUrl }) });
    await client.delete(RecreateRoutes.deleteStatefulSet, { namespace: "db", name: "web" }, orphan);
    expect(tunnels).toEqual([httpsUrl.replace("https://", "")]);
    expect(seen[0]).toMatchObject({ method: "DELETE", clientCN: "claimstep-user", authorized: true });
    expect(JSON.parse(seen[0]!.body)).toEqual(orphan);
  });

  it("an aborted request (the client's timeout) rejects instead of hanging", async () => {
    const started = Date.now();
    await expect(
      requestWithAgent(`${stallUrl}/x`, { method: "DELETE", body: "{}", signal: AbortSignal.timeout(200) }, undefined),
    ).rejects.toThrow(/abort|timeout/i);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
