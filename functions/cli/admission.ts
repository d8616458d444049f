// `claimstep admission certs`: the webhook's TLS without cert-manager (docs/admission.md). A CA and
// a serving certificate for the Service claimstep-webhook.<ns>.svc, made by openssl; the pair goes
// into the Secret the webhook Deployment mounts (claimstep serve reloads it), the CA into the
// caBundle of every entry of the MutatingWebhookConfiguration `claimstep`; both read back before it
// says they are set. Run as a cluster admin (it writes a Secret and an admission configuration).
import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeClient } from "../../adapters/kube/client.js";
import { DEFAULT_NAMESPACE, WEBHOOK } from "./admission/cluster.js";
import { checkNamespace, readWebhooks, serviceNamespace } from "./admission/read.js";
import { sayDryRun, sayWritten, summaryOf } from "./admission/report.js";
import { bundleCA, readBack, secretData, writeSecret } from "./admission/write.js";
import type { Context } from "./context.js";
import { UsageError } from "./flags.js";

export { WEBHOOK } from "./admission/cluster.js";

export interface WebhookCertificates {
  caPem: string;
  certPem: string;
  keyPem: string;
  dnsNames: string[];
  notAfter: string;
}

/** A CA (10 years) and a serving certificate for the Service's DNS names (1 year), by openssl. */
export function makeWebhookCertificates(namespace: string): WebhookCertificates {
  const dir = mkdtempSync(join(tmpdir(), "claimstep-webhook-certs-"));
  const dnsNames = [`${WEBHOOK.service}.${namespace}.svc`, `${WEBHOOK.service}.${namespace}.svc.cluster.local`];
  const openssl = opensslIn(dir);
  try {
    makeCA(openssl);
    makeServingCertificate(dir, openssl, dnsNames);
    return readCertificates(dir, dnsNames);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type Openssl = (...args: string[]) => void;

/** openssl run in `dir`; its failure (or its absence) said as a UsageError. */
const opensslIn =
  (dir: string): Openssl =>
  (...args) => {
    try {
      execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: Buffer };
      if (e.code === "ENOENT")
        throw new UsageError(
          "admission certs: openssl is not installed (Debian/Ubuntu: apt-get install openssl; macOS: it is there)",
        );
      throw new UsageError(`admission certs: openssl ${args[0]} failed: ${e.stderr?.toString().trim() || e.message}`);
    }
  };

/** A new P-256 key, unencrypted. */
const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** ca.key and ca.crt: the CA, self-signed for 10 years. */
function makeCA(openssl: Openssl): void {
  openssl(
    "req",
    "-x509",
    ...EC_KEY,
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "3650",
    "-subj",
    "/CN=claimstep-webhook-ca",
  );
}

/** tls.key and tls.crt: a serving certificate for `dnsNames`, signed by the CA for a year. */
function makeServingCertificate(dir: string, openssl: Openssl, dnsNames: string[]): void {
  openssl("req", ...EC_KEY, "-keyout", "tls.key", "-out", "tls.csr", "-subj", `/CN=${dnsNames[0]}`);
  writeFileSync(
    join(dir, "san.ext"),
    `subjectAltName=${dnsNames.map((d) => `DNS:${d}`).join(",")}\nextendedKeyUsage=serverAuth\n`,
  );
  openssl(
    "x509",
    "-req",
    "-in",
    "tls.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "tls.crt",
    "-days",
    "365",
    "-extfile",
    "san.ext",
  );
}

function readCertificates(dir: string, dnsNames: string[]): WebhookCertificates {
  const read = (f: string) => readFileSync(join(dir, f), "utf8");
  const certPem = read("tls.crt");
  return {
    caPem: read("ca.crt"),
    certPem,
    keyPem: read("tls.key"),
    dnsNames,
    notAfter: new Date(new X509Certificate(certPem).validTo).toISOString(),
  };
}

/** Read (--dry-run too), make the certificates, say what would be written, else write them and read them back. */
export async function admission(ctx: Context): Promise<number> {
  checkCertsCommand(ctx);
  const client = await kubeconfigClient(ctx);
  const asked = ctx.flags.namespace ?? DEFAULT_NAMESPACE;
  const webhooks = await readWebhooks(client, asked);
  const namespace = serviceNamespace(ctx, webhooks, asked);
  await checkNamespace(client, namespace);
  const certs = makeWebhookCertificates(namespace);
  const summary = summaryOf(ctx, namespace, certs);
  if (ctx.flags["dry-run"]) {
    sayDryRun(ctx, summary, namespace, webhooks);
    return 0;
  }
  const data = secretData(certs);
  await writeSecret(client, namespace, data);
  await bundleCA(client, namespace, webhooks, data);
  const bundled = await readBack(client, namespace, data);
  sayWritten(ctx, summary, namespace, bundled);
  return 0;
}

/** `admission certs`, on a real cluster: any other subcommand, or --cluster, is refused. */
function checkCertsCommand(ctx: Context): void {
  const [sub] = ctx.args;
  if (sub !== "certs")
    throw new UsageError(
      `admission: ${sub ? `unknown subcommand "${sub}"` : "give a subcommand"}; the one there is: claimstep admission certs [-n <ns>] [--dry-run]`,
    );
  if (ctx.flags.cluster)
    throw new UsageError(
      "admission certs: writes a Secret and the webhook configuration of a real cluster; --cluster sim registers claimstep's webhook on its own",
    );
}

/** The client of the kubeconfig (--kubeconfig, --context), loaded only for this command. */
async function kubeconfigClient(ctx: Context): Promise<KubeClient> {
  const { nodeKubeClient } = await import("../kube-target.js");
  return nodeKubeClient({
    ...(ctx.flags.kubeconfig ? { kubeconfig: ctx.flags.kubeconfig } : {}),
    ...(ctx.flags.context ? { context: ctx.flags.context } : {}),
  }).client;
}
