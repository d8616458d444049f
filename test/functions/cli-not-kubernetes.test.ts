// Issue 39 point 4: a kubeconfig whose cluster server is not a Kubernetes API server (here a plain
// HTTP server on 127.0.0.1 answering every request with an empty 404) is said to be one, with the
// kubeconfig to check, and exits 1 (an error of configuration or connection), never
// "StatefulSet nc-db/web not found".
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "../../functions/cli/exit-codes.js";
import { main } from "../../functions/cli.js";

let server: Server;
let url: string;
let dir: string;
let kubeconfig: string;
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), "claimstep-not-kube-"));
  kubeconfig = join(dir, "kubeconfig");
  writeFileSync(
    kubeconfig,
    [
      "apiVersion: v1",
      "kind: Config",
      `clusters: [{name: web-server, cluster: {server: ${JSON.stringify(url)}}}]`,
      "users: [{name: someone, user: {token: t0ken}}]",
      "contexts: [{name: wrong, context: {cluster: web-server, user: someone, namespace: nc-db}}]",
      "current-context: wrong",
      "",
    ].join("\n"),
  );
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

const capture = () => {
  const out = { text: "", write: (s: string) => void (out.text += s) };
  const err = { text: "", write: (s: string) => void (err.text += s) };
  return { io: { stdout: out, stderr: err, env: { NO_COLOR: "1" } }, out, err };
};

describe("a kubeconfig pointing at something that is not a Kubernetes API server", () => {
  it.each([[["status", "web"]], [["plan", "web", "-n", "nc-db"]]])(
    "%j says so, names the request and the kubeconfig, and exits 1",
    async (argv) => {
      const { io, out, err } = capture();
      const code = await main([...argv, "--kubeconfig", kubeconfig], io);
      expect(err.text).toContain(
        `${url} answered 404 without a Kubernetes Status body for GET /apis/apps/v1/namespaces/nc-db/statefulsets/web (an empty body): is this a Kubernetes API server? Check the kubeconfig's cluster server of context "wrong" (kubectl config view --minify)`,
      );
      expect(err.text).not.toMatch(/not found/);
      expect(code).toBe(EXIT.error);
      expect(out.text).toBe("");
      expect(seen).toContain("GET /apis/apps/v1/namespaces/nc-db/statefulsets/web");
    },
  );
});
