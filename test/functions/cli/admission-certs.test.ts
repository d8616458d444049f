// Issue 39 point 6: `claimstep admission certs` takes its namespace from the Service the webhook
// configuration calls (not the context's, not a fixed `claimstep` its help did not mention), and
// --dry-run reads the configuration and the namespace: a missing one is said, nothing written.
// Against a small API server answering the few requests it makes.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../../functions/cli.js";

interface Cluster {
  configuration?: unknown;
  namespaces: string[];
  writes: string[];
}

const notFound = (kind: string, name: string) => ({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  reason: "NotFound",
  code: 404,
  message: `${kind} "${name}" not found`,
  details: { name, kind },
});

const configuration = (namespace: string) => ({
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "MutatingWebhookConfiguration",
  metadata: { name: "claimstep" },
  webhooks: [
    {
      name: "statefulsets.admission.claimstep.io",
      clientConfig: { service: { namespace, name: "claimstep-webhook" } },
    },
  ],
});

describe("claimstep admission certs", () => {
  const cluster: Cluster = { namespaces: [], writes: [] };
  let server: Server;
  const dir = mkdtempSync(join(tmpdir(), "claimstep-admission-"));
  const kubeconfig = join(dir, "config");

  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      const send = (code: number, body: unknown) => {
        res.writeHead(code, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.method !== "GET") {
        cluster.writes.push(`${req.method} ${url.pathname}`);
        return send(500, {});
      }
      const ns = /^\/api\/v1\/namespaces\/([^/]+)$/.exec(url.pathname)?.[1];
      if (ns !== undefined)
        return cluster.namespaces.includes(ns)
          ? send(200, { kind: "Namespace", apiVersion: "v1", metadata: { name: ns } })
          : send(404, notFound("namespaces", ns));
      if (url.pathname === "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/claimstep")
        return cluster.configuration
          ? send(200, cluster.configuration)
          : send(404, notFound("mutatingwebhookconfigurations.admissionregistration.k8s.io", "claimstep"));
      send(404, notFound("unknown", url.pathname));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    writeFileSync(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}"}}]
users: [{name: u, user: {}}]
contexts: [{name: ctx, context: {cluster: c, user: u, namespace: team-a}}]
current-context: ctx
`,
    );
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    cluster.configuration = undefined;
    cluster.namespaces = [];
    cluster.writes = [];
  });

  const certs = async (...flags: string[]) => {
    const out = { text: "", write: (s: string) => void (out.text += s) };
    const err = { text: "", write: (s: string) => void (err.text += s) };
    const code = await main(["admission", "certs", "--kubeconfig", kubeconfig, ...flags], {
      stdout: out,
      stderr: err,
      env: {},
    });
    return { code, out: out.text, err: err.text };
  };

  it("--dry-run notices a missing webhook configuration", async () => {
    const r = await certs("--dry-run");
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/mutatingwebhookconfiguration\/claimstep: not found; install the webhook first/);
    expect(cluster.writes).toEqual([]);
  });

  it("--dry-run notices a missing namespace", async () => {
    cluster.configuration = configuration("claimstep");
    const r = await certs("--dry-run");
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/namespace claimstep not found; create it first .*Nothing written/);
    expect(cluster.writes).toEqual([]);
  });

  it("the namespace is the one of the Service the configuration calls, not the context's", async () => {
    cluster.configuration = configuration("webhooks");
    cluster.namespaces = ["webhooks", "team-a"];
    const r = await certs("--dry-run");
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/certificate for claimstep-webhook\.webhooks\.svc, /);
    expect(r.out).toMatch(/would write: secret\/claimstep-webhook-tls in webhooks /);
    expect(r.out).toMatch(
      /caBundle of statefulsets\.admission\.claimstep\.io of mutatingwebhookconfiguration\/claimstep/,
    );
    // -n that disagrees with the configuration makes a certificate its Service does not serve: said.
    const other = await certs("--dry-run", "-n", "team-a");
    expect(other.code).toBe(0);
    expect(other.err).toBe(
      "Warning: mutatingwebhookconfiguration/claimstep calls the Service claimstep-webhook in webhooks, not in team-a: a certificate for claimstep-webhook.team-a.svc will not match it (give -n webhooks)\n",
    );
    expect(other.out).toMatch(/would write: secret\/claimstep-webhook-tls in team-a /);
    expect(cluster.writes).toEqual([]);
  });

  it("its help says where the namespace comes from", async () => {
    const out = { text: "", write: (s: string) => void (out.text += s) };
    await main(["admission", "--help"], { stdout: out, stderr: out, env: {} });
    expect(out.text).toMatch(
      /-n, --namespace <ns> +the namespace of the webhook's Service \(default: the one mutatingwebhookconfiguration\/claimstep calls, else claimstep; not the context's\)/,
    );
  });
});
