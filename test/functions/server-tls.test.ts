// `claimstep serve` over TLS (CLAIMSTEP_TLS_CERT_FILE/KEY_FILE), as the admission webhook needs:
// the served certificate is the file's, a rotated pair (cert-manager renewing the Secret) is served
// to new connections without a restart, and a broken pair is refused while the old one stays.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../functions/config.js";
import { readKeyPair, tlsFilesFromEnv } from "../../functions/http/tls-files.js";
import { admissionRoutes } from "../../functions/routes/admission.js";
import { startServer } from "../../functions/server.js";
import { fixtureJson } from "../fixtures/apiserver.js";
import { makeTestCa } from "../support/test-ca.js";

let dir: string;
const file = (f: string) => join(dir, f);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "claimstep-tls-"));
  const ca = makeTestCa(dir, "claimstep-webhook-ca");
  // Two serving certificates for 127.0.0.1 signed by the test CA, as `<name>.crt`/`<name>.key`.
  ca.serving("first", "/CN=first");
  ca.serving("second", "/CN=second");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One request on a new connection: the status, the body and the CN of the certificate served. */
function get(port: number, path: string, body?: string): Promise<{ status: number; cn: string; text: string }> {
  return new Promise((resolve, reject) => {
    const agent = new Agent({ ca: readFileSync(file("ca.crt")), keepAlive: false });
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: body ? "POST" : "GET",
        agent,
        headers: body ? { "content-type": "application/json", "content-length": Buffer.byteLength(body) } : {},
      },
      (res) => {
        const cn = String((res.socket as TLSSocket).getPeerCertificate().subject?.CN ?? "");
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, cn, text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("claimstep serve over TLS", () => {
  it("serves the files' certificate, then a rotated one without a restart; a broken pair is refused and the old one kept", async () => {
    copyFileSync(file("first.crt"), file("tls.crt"));
    copyFileSync(file("first.key"), file("tls.key"));
    const app = new Hono();
    app.get("/healthz", (c) => c.json({ ok: true }));
    app.route("/", admissionRoutes());
    const logs: Record<string, unknown>[] = [];
    const server = await startServer({
      app,
      port: 0,
      log: (e) => logs.push(e),
      tls: { certFile: file("tls.crt"), keyFile: file("tls.key"), reloadMs: 100 },
    });
    try {
      expect(await get(server.port, "/healthz")).toMatchObject({ status: 200, cn: "first" });
      expect(logs.find((l) => l.msg === "listening")).toMatchObject({ tls: { subject: "CN=first" } });
      // An AdmissionReview over TLS, as the API server sends it.
      const review = structuredClone(fixtureJson("admission-review-sts-update-vct-1.34.json"));
      const answered = await get(server.port, "/v1/admission/statefulsets?timeout=5s", JSON.stringify(review));
      expect(answered.status).toBe(200);
      expect(JSON.parse(answered.text).response.uid).toBe(review.request.uid);

      // cert-manager renews: the Secret's files change.
      copyFileSync(file("second.crt"), file("tls.crt"));
      copyFileSync(file("second.key"), file("tls.key"));
      await waitFor(() => logs.some((l) => l.msg === "tls certificate reloaded"));
      expect(await get(server.port, "/healthz")).toMatchObject({ status: 200, cn: "second" });

      // A half-written rotation: a key that does not match its certificate.
      copyFileSync(file("first.key"), file("tls.key"));
      await waitFor(() => logs.some((l) => String(l.msg).startsWith("tls reload failed")));
      expect(await get(server.port, "/healthz")).toMatchObject({ status: 200, cn: "second" });
    } finally {
      await server.close();
    }
  });

  it("CLAIMSTEP_TLS_* are both or neither, and a pair that does not load names the files", () => {
    expect(tlsFilesFromEnv({})).toBeUndefined();
    expect(
      tlsFilesFromEnv({ CLAIMSTEP_TLS_CERT_FILE: "/tls/tls.crt", CLAIMSTEP_TLS_KEY_FILE: "/tls/tls.key" }),
    ).toEqual({ certFile: "/tls/tls.crt", keyFile: "/tls/tls.key", reloadMs: 10_000 });
    expect(() => tlsFilesFromEnv({ CLAIMSTEP_TLS_CERT_FILE: "/tls/tls.crt" })).toThrow(
      /CLAIMSTEP_TLS_CERT_FILE is set but CLAIMSTEP_TLS_KEY_FILE is not/,
    );
    expect(() =>
      tlsFilesFromEnv({ CLAIMSTEP_TLS_CERT_FILE: "a", CLAIMSTEP_TLS_KEY_FILE: "b", CLAIMSTEP_TLS_RELOAD_SECONDS: "0" }),
    ).toThrow(/from 1 to 3600/);
    expect(() => readKeyPair({ certFile: file("missing.crt"), keyFile: file("first.key") })).toThrow(ConfigError);
    expect(() => readKeyPair({ certFile: file("first.crt"), keyFile: file("second.key") })).toThrow(
      /are not a PEM certificate and its private key/,
    );
  });
});

async function waitFor(ok: () => boolean, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > until) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}
