// Kubeconfig loading against a real HTTPS server on 127.0.0.1 with certificates made by openssl
// for this run: the kubeconfig's CA is what makes TLS succeed, its client certificate is what
// the server sees, its token or exec plugin is what Authorization carries. No msw here.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { ApiError } from "../../../adapters/api-error.js";
import { Routes } from "../../../adapters/kube/routes.js";
import { KubeConfigError, nodeKubeTarget } from "../../../adapters/kube-node/kubeconfig.js";
import { StatefulSet } from "../../../core/kube/k8s.js";
import { fixture } from "../../support/index.js";
import { makeTestCa } from "../../support/test-ca.js";

let dir: string;
let server: Server;
let url: string;
const seen: { authorization?: string; clientCN?: string; authorized: boolean }[] = [];

const path = (f: string) => join(dir, f);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "claimstep-kubeconfig-"));
  const ca = makeTestCa(dir, "claimstep-test-ca");
  ca.serving("server", "/CN=127.0.0.1");
  ca.client("client", "/CN=claimstep-user/O=claimstep");

  server = createServer(
    {
      key: readFileSync(path("server.key")),
      cert: readFileSync(path("server.crt")),
      ca: readFileSync(path("ca.crt")),
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      const peer = socket.getPeerCertificate();
      seen.push({
        authorization: req.headers.authorization,
        ...(peer?.subject?.CN ? { clientCN: String(peer.subject.CN) } : {}),
        authorized: socket.authorized,
      });
      const found = req.url === "/apis/apps/v1/namespaces/default/statefulsets/web";
      const answer = found ? fixture("statefulset-web") : fixture("statefulset-not-found");
      res.writeHead(answer.code, { "Content-Type": "application/json" });
      res.end(JSON.stringify(answer.body));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const execCredential = JSON.stringify({
    apiVersion: "client.authentication.k8s.io/v1",
    kind: "ExecCredential",
    status: { token: "from-exec" },
  });
  writeFileSync(
    path("kubeconfig"),
    stringify({
      apiVersion: "v1",
      kind: "Config",
      "current-context": "token",
      clusters: [
        { name: "local", cluster: { server: url, "certificate-authority": path("ca.crt") } },
        { name: "insecure", cluster: { server: url, "insecure-skip-tls-verify": true } },
        { name: "unknown-ca", cluster: { server: url } },
      ],
      users: [
        { name: "token-user", user: { token: "s3cret" } },
        { name: "cert-user", user: { "client-certificate": path("client.crt"), "client-key": path("client.key") } },
        {
          name: "exec-user",
          user: {
            exec: {
              apiVersion: "client.authentication.k8s.io/v1",
              command: process.execPath,
              args: ["-e", `console.log(${JSON.stringify(execCredential)})`],
              interactiveMode: "Never",
            },
          },
        },
      ],
      contexts: [
        { name: "token", context: { cluster: "local", user: "token-user", namespace: "shop" } },
        { name: "cert", context: { cluster: "local", user: "cert-user" } },
        { name: "exec", context: { cluster: "local", user: "exec-user" } },
        { name: "insecure", context: { cluster: "insecure", user: "token-user" } },
        { name: "unknown-ca", context: { cluster: "unknown-ca", user: "token-user" } },
      ],
    }),
  );
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const web = { namespace: "default", name: "web" };
const getWeb = (context: string) =>
  nodeKubeTarget({ kubeconfig: path("kubeconfig"), context }).client.get(Routes.getStatefulSet, web, StatefulSet);

describe("kubeconfig → KubeClient (Node)", () => {
  it("verifies the server with the kubeconfig's CA and sends the user's token; the context gives the namespace", async () => {
    const target = nodeKubeTarget({ kubeconfig: path("kubeconfig") });
    expect(target).toMatchObject({ server: url, context: "token", namespace: "shop" });
    expect((await target.client.get(Routes.getStatefulSet, web, StatefulSet)).metadata.name).toBe("web");
    expect(seen.at(-1)).toMatchObject({ authorization: "Bearer s3cret" });
  });

  it("presents the kubeconfig's client certificate", async () => {
    await getWeb("cert");
    expect(seen.at(-1)).toEqual({ clientCN: "claimstep-user", authorized: true });
  });

  it("runs the exec plugin for a token", async () => {
    await getWeb("exec");
    expect(seen.at(-1)).toMatchObject({ authorization: "Bearer from-exec" });
  });

  it("insecure-skip-tls-verify connects without the CA", async () => {
    expect((await getWeb("insecure")).metadata.name).toBe("web");
  });

  it("without the CA, TLS verification fails with an error that says what to fix, and is not retried", async () => {
    const before = seen.length;
    const err = await getWeb("unknown-ca").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ kind: "Other", isTransient: false });
    expect((err as Error).message).toMatch(
      /TLS verification of https:\/\/127\.0\.0\.1:\d+ failed \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN)\)/,
    );
    expect(seen.length).toBe(before);
  });

  it("answers API errors as typed errors through the same client", async () => {
    const { client } = nodeKubeTarget({ kubeconfig: path("kubeconfig") });
    const err = await client
      .get(Routes.getStatefulSet, { namespace: "default", name: "nope" }, StatefulSet)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "NotFound", code: 404 });
  });

  it("reads KUBECONFIG when no file is given", async () => {
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = path("kubeconfig");
    try {
      expect(nodeKubeTarget({ context: "insecure" }).server).toBe(url);
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  });

  it("uses the pod's service account in-cluster: its token, its CA, its namespace", async () => {
    const root = path("pod");
    mkdirSync(join(root, "var/run/secrets/kubernetes.io/serviceaccount"), { recursive: true });
    const sa = (f: string, data: string | Buffer) =>
      writeFileSync(join(root, "var/run/secrets/kubernetes.io/serviceaccount", f), data);
    sa("token", "sa-token");
    sa("ca.crt", readFileSync(path("ca.crt")));
    sa("namespace", "claimstep\n");
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    process.env.KUBERNETES_SERVICE_HOST = "127.0.0.1";
    process.env.KUBERNETES_SERVICE_PORT = new URL(url).port;
    try {
      const target = nodeKubeTarget({ inCluster: true, inClusterRoot: root });
      expect(target.namespace).toBe("claimstep");
      await target.client.get(Routes.getStatefulSet, web, StatefulSet);
      expect(seen.at(-1)).toMatchObject({ authorization: "Bearer sa-token" });
    } finally {
      for (const [k, v] of [
        ["KUBERNETES_SERVICE_HOST", saved.host],
        ["KUBERNETES_SERVICE_PORT", saved.port],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it("an unknown context: a clear error listing the contexts", () => {
    expect(() => nodeKubeTarget({ kubeconfig: path("kubeconfig"), context: "prod" })).toThrow(
      new KubeConfigError('kubeconfig has no context "prod" (it has: token, cert, exec, insecure, unknown-ca)'),
    );
  });

  it("a missing file: a clear error naming it", () => {
    expect(() => nodeKubeTarget({ kubeconfig: path("nope") })).toThrow(/^cannot load kubeconfig .*nope: /);
  });
});
