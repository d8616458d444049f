// Helpers of the real-server admission scenarios (test/e2e/admission.test.ts, issue 23): a CA and a
// serving certificate for 127.0.0.1 made with openssl, `claimstep serve` over TLS through the
// SHIPPED command, the MutatingWebhookConfiguration taken from deploy/kubernetes/admission.yaml
// (its Service replaced by the URL of that server, its caBundle by the test CA, restricted to the
// test's namespaces), kubectl as a user runs it, and a subset comparison of a manifest with the
// live object.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { parseAllDocuments } from "yaml";
import { makeTestCa } from "../../support/test-ca.js";
import { type E2E, type KubeObject, NAMESPACE_LABEL, type Rest, waitFor } from "./index.js";

export const ROOT = new URL("../../..", import.meta.url).pathname;
export const ADMISSION_MANIFEST = join(ROOT, "deploy/kubernetes/admission.yaml");

// ---------------------------------------------------------------------------------------------
// kubectl

/** kubectl on PATH, or undefined. */
export function kubectlPath(): string | undefined {
  for (const d of (process.env.PATH ?? "").split(delimiter)) {
    if (d && existsSync(join(d, "kubectl"))) return join(d, "kubectl");
  }
  return undefined;
}

export interface KubectlRun {
  args: string[];
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `kubectl <args> --kubeconfig <admin> -n <ns>`, with KUBECONFIG and caches pointed away from the machine's. */
export function kubectl(
  e2e: E2E,
  args: readonly string[],
  o: { namespace?: string; timeoutMs?: number } = {},
): Promise<KubectlRun> {
  const bin = kubectlPath() ?? "kubectl";
  const full = [...args, "--kubeconfig", e2e.info.adminKubeconfig, "-n", o.namespace ?? e2e.namespace];
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      KUBECONFIG: e2e.info.adminKubeconfig,
      KUBECACHEDIR: join(tmpdir(), "claimstep-e2e-kubectl-cache"),
    };
    const child = spawn(bin, full, { env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), o.timeoutMs ?? 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ args: full, code, stdout, stderr });
    });
  });
}

export const describeKubectl = (r: KubectlRun) =>
  `kubectl ${r.args.join(" ")} → exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

// ---------------------------------------------------------------------------------------------
// certificates

export interface WebhookCerts {
  dir: string;
  caPem: string;
  certFile: string;
  keyFile: string;
}

/** A CA of the test's own and a serving certificate for IP:127.0.0.1 signed by it. */
export function makeWebhookCerts(): WebhookCerts {
  const dir = mkdtempSync(join(tmpdir(), "claimstep-e2e-webhook-"));
  makeTestCa(dir, "claimstep-e2e-webhook-ca").serving("tls", "/CN=127.0.0.1", ["extendedKeyUsage=serverAuth"]);
  return {
    dir,
    caPem: readFileSync(join(dir, "ca.crt"), "utf8"),
    certFile: join(dir, "tls.crt"),
    keyFile: join(dir, "tls.key"),
  };
}

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res, rej) => {
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => res());
  });
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

// ---------------------------------------------------------------------------------------------
// claimstep serve over TLS

export interface WebhookServer {
  port: number;
  logs: string[];
  /** The admission log lines (msg "admission") seen so far. */
  admissions(): any[];
  /** SIGKILL (claimstep "stopped" abruptly); resolves when it has exited. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after 10 s; the exit code. */
  stop(): Promise<number | null>;
  exited(): boolean;
}

/** `claimstep serve --port <port> --host 127.0.0.1` with claimstep's kubeconfig, TLS from `certs`, an API token, no sweep. */
export async function startWebhookServer(
  e2e: E2E,
  certs: WebhookCerts,
  port: number,
  env: Record<string, string> = {},
): Promise<WebhookServer> {
  const token = `e2e-admission-${Math.random().toString(36).slice(2)}-token`;
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(ROOT, "bin/claimstep.js"),
      "serve",
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--kubeconfig",
      e2e.info.claimstepKubeconfig,
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        NO_COLOR: "1",
        KUBECONFIG: e2e.info.claimstepKubeconfig,
        CLAIMSTEP_API_TOKEN: token,
        CLAIMSTEP_INTERVAL_SECONDS: "0",
        CLAIMSTEP_TLS_CERT_FILE: certs.certFile,
        CLAIMSTEP_TLS_KEY_FILE: certs.keyFile,
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const logs: string[] = [];
  let exitCode: number | null | undefined;
  const exit = new Promise<number | null>((res) => child.on("exit", (code) => res((exitCode = code))));
  await new Promise<void>((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(
      () => reject(new Error(`claimstep serve did not listen within 30 s:\n${logs.join("\n")}`)),
      30_000,
    );
    child.stdout!.on("data", (d: Buffer) => {
      buf += d.toString();
      let i: number;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        logs.push(line);
        if (/"msg":"listening"/.test(line)) {
          clearTimeout(timer);
          resolve();
        }
      }
    });
    child.stderr!.on("data", (d: Buffer) => logs.push(`[stderr] ${d.toString()}`));
    void exit.then((c) => {
      clearTimeout(timer);
      reject(new Error(`claimstep serve exited (${c}) before listening:\n${logs.join("\n")}`));
    });
  });
  return {
    port,
    logs,
    admissions() {
      return logs.flatMap((l) => {
        try {
          const o = JSON.parse(l);
          return o.msg === "admission" ? [o] : [];
        } catch {
          return [];
        }
      });
    },
    async kill() {
      if (exitCode !== undefined) return;
      child.kill("SIGKILL");
      await exit;
    },
    async stop() {
      if (exitCode !== undefined) return exitCode;
      child.kill("SIGTERM");
      const t = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const code = await exit;
      clearTimeout(t);
      return code;
    },
    exited: () => exitCode !== undefined,
  };
}

// ---------------------------------------------------------------------------------------------
// the MutatingWebhookConfiguration of deploy/kubernetes/admission.yaml

/** The shipped configuration, parsed from the file. */
export function shippedWebhookConfiguration(): KubeObject {
  for (const doc of parseAllDocuments(readFileSync(ADMISSION_MANIFEST, "utf8"))) {
    const o = doc.toJS() as KubeObject | null;
    if (o?.kind === "MutatingWebhookConfiguration") return o;
  }
  throw new Error(`${ADMISSION_MANIFEST}: no MutatingWebhookConfiguration`);
}

/**
 * The shipped configuration served by https://127.0.0.1:<port>: each entry's clientConfig.service
 * becomes `url` (same path, query kept), caBundle the test CA; named `name`; every entry restricted
 * to `namespaces` (their e2e namespace label, added to the entry's own namespaceSelector), so that
 * the other test files' sets never reach it.
 */
export function webhookConfigurationFor(o: {
  name: string;
  port: number;
  caPem: string;
  namespaces: string[];
}): KubeObject {
  const cfg = structuredClone(shippedWebhookConfiguration());
  const annotations = { ...(cfg.metadata.annotations ?? {}) };
  delete annotations["cert-manager.io/inject-ca-from"];
  cfg.metadata = {
    name: o.name,
    labels: { "e2e.claimstep.io/webhook": "admission" },
    ...(Object.keys(annotations).length ? { annotations } : {}),
  };
  for (const w of cfg.webhooks as any[]) {
    const svc = w.clientConfig?.service;
    if (!svc) throw new Error(`webhook ${w.name}: no clientConfig.service in ${ADMISSION_MANIFEST}`);
    w.clientConfig = {
      url: `https://127.0.0.1:${o.port}${svc.path ?? "/"}`,
      caBundle: Buffer.from(o.caPem).toString("base64"),
    };
    const sel = w.namespaceSelector ?? {};
    w.namespaceSelector = {
      ...sel,
      matchExpressions: [
        ...(sel.matchExpressions ?? []),
        { key: NAMESPACE_LABEL, operator: "In", values: o.namespaces },
      ],
    };
  }
  return cfg;
}

/** Creates (or replaces) the configuration. */
export async function registerWebhook(admin: Rest, cfg: KubeObject): Promise<void> {
  const r = await admin.create("mutatingwebhookconfigurations", null, cfg);
  if (r.status === 409) {
    const cur = (await admin.get("mutatingwebhookconfigurations", null, cfg.metadata.name!)).body;
    const put = await admin.put("mutatingwebhookconfigurations", null, cfg.metadata.name!, {
      ...cfg,
      metadata: { ...cfg.metadata, resourceVersion: cur.metadata.resourceVersion },
    });
    if (put.status >= 300)
      throw new Error(
        `replace MutatingWebhookConfiguration ${cfg.metadata.name}: HTTP ${put.status} ${JSON.stringify(put.body)}`,
      );
  } else if (r.status >= 300)
    throw new Error(
      `create MutatingWebhookConfiguration ${cfg.metadata.name}: HTTP ${r.status} ${JSON.stringify(r.body)}`,
    );
}

/**
 * Waits until the API server calls the webhook: a server-side dry-run (sideEffects None allows it)
 * of a template change on `probe` (an opted-in set) is accepted.
 */
export async function waitWebhookLive(e2e: E2E, probe: string, bigger: string): Promise<void> {
  await waitFor(
    async () => {
      const op = [
        { op: "replace", path: "/spec/volumeClaimTemplates/0/spec/resources/requests/storage", value: bigger },
      ];
      const r = await e2e.admin.patch("statefulsets", e2e.namespace, probe, op, "json", { dryRun: "All" });
      return r.status === 200 ? true : undefined;
    },
    {
      timeoutMs: 30_000,
      intervalMs: 500,
      what: `the webhook called for StatefulSet ${probe} (a template change accepted)`,
    },
  );
}

// ---------------------------------------------------------------------------------------------
// comparisons

/** The paths where `want` (a manifest) differs from `live` (the server's object): every field of
 * `want` must be in `live` with the same value; lists compared item by item (same length). */
export function subsetDiff(want: unknown, live: unknown, path = ""): string[] {
  if (want === null || typeof want !== "object") {
    return want === live || (typeof want === "number" && String(want) === String(live))
      ? []
      : [`${path || "/"}: manifest ${JSON.stringify(want)}, live ${JSON.stringify(live)}`];
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(live) || live.length !== want.length)
      return [`${path}: manifest ${want.length} item(s), live ${JSON.stringify(live)?.slice(0, 200)}`];
    return want.flatMap((w, i) => subsetDiff(w, live[i], `${path}/${i}`));
  }
  if (live === null || typeof live !== "object" || Array.isArray(live))
    return [`${path}: manifest an object, live ${JSON.stringify(live)?.slice(0, 200)}`];
  return Object.entries(want as Record<string, unknown>).flatMap(([k, v]) =>
    subsetDiff(v, (live as Record<string, unknown>)[k], `${path}/${k}`),
  );
}
