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
import { ApiError } from "../../adapters/api-error.js";
import type { Route } from "../../adapters/kube/routes.js";
import * as z from "../../core/zod.js";
import type { Context } from "./context.js";
import { UsageError } from "./flags.js";
import { emit, print } from "./io.js";

export const WEBHOOK = {
  service: "claimstep-webhook",
  secret: "claimstep-webhook-tls",
  configuration: "claimstep",
} as const;

const SECRET: Route = { verb: "patch", group: "", version: "v1", resource: "secrets", namespaced: true, retry: true };
const GET_SECRET: Route = { ...SECRET, verb: "get" };
const CONFIGURATION: Route = {
  verb: "get",
  group: "admissionregistration.k8s.io",
  version: "v1",
  resource: "mutatingwebhookconfigurations",
  namespaced: false,
  retry: true,
};
const PATCH_CONFIGURATION: Route = { ...CONFIGURATION, verb: "patch", retry: false };

const NAMESPACE: Route = {
  verb: "get",
  group: "",
  version: "v1",
  resource: "namespaces",
  namespaced: false,
  retry: true,
};

const Configuration = z.looseObject({
  metadata: z.looseObject({ name: z.string() }),
  webhooks: z.optional(
    z.array(
      z.looseObject({
        name: z.string(),
        clientConfig: z.looseObject({
          caBundle: z.optional(z.string()),
          service: z.optional(z.looseObject({ namespace: z.optional(z.string()), name: z.optional(z.string()) })),
        }),
      }),
    ),
  ),
});
const Namespace = z.looseObject({ metadata: z.looseObject({ name: z.string() }) });

/** Where the webhook's Service is when nothing says otherwise (deploy/kubernetes installs it there). */
const DEFAULT_NAMESPACE = "claimstep";
const Secret = z.looseObject({ data: z.optional(z.record(z.string(), z.string())) });

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
  const openssl = (...args: string[]) => {
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
  try {
    const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    openssl(
      "req",
      "-x509",
      ...ec,
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "3650",
      "-subj",
      "/CN=claimstep-webhook-ca",
    );
    openssl("req", ...ec, "-keyout", "tls.key", "-out", "tls.csr", "-subj", `/CN=${dnsNames[0]}`);
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
    const read = (f: string) => readFileSync(join(dir, f), "utf8");
    const certPem = read("tls.crt");
    return {
      caPem: read("ca.crt"),
      certPem,
      keyPem: read("tls.key"),
      dnsNames,
      notAfter: new Date(new X509Certificate(certPem).validTo).toISOString(),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

export async function admission(ctx: Context): Promise<number> {
  const [sub] = ctx.args;
  if (sub !== "certs")
    throw new UsageError(
      `admission: ${sub ? `unknown subcommand "${sub}"` : "give a subcommand"}; the one there is: claimstep admission certs [-n <ns>] [--dry-run]`,
    );
  if (ctx.flags.cluster)
    throw new UsageError(
      "admission certs: writes a Secret and the webhook configuration of a real cluster; --cluster sim registers claimstep's webhook on its own",
    );
  const { nodeKubeClient } = await import("../kube-target.js");
  const { client } = nodeKubeClient({
    ...(ctx.flags.kubeconfig ? { kubeconfig: ctx.flags.kubeconfig } : {}),
    ...(ctx.flags.context ? { context: ctx.flags.context } : {}),
  });
  let namespace = ctx.flags.namespace ?? DEFAULT_NAMESPACE;
  const explain = (err: unknown, what: string): never => {
    if (err instanceof ApiError && err.kind === "NotFound" && what.includes("mutatingwebhookconfiguration"))
      throw new UsageError(
        `admission certs: ${what}: not found; install the webhook first: kubectl apply -f deploy/kubernetes/admission.yaml (without its Issuer and Certificate)`,
      );
    if (err instanceof ApiError && err.kind === "NotFound")
      throw new UsageError(
        `admission certs: ${what}: ${err.message}; create namespace ${namespace} first (kubectl apply -f deploy/kubernetes/rbac.yaml)`,
      );
    if (err instanceof ApiError && err.code === 403)
      throw new UsageError(
        `admission certs: ${what}: ${err.message}; run it as a cluster admin (it patches secrets in ${namespace} and mutatingwebhookconfigurations)`,
      );
    throw err;
  };

  // Read first, --dry-run too: the configuration to bundle the CA into, and the namespace of its
  // Service (the certificate's DNS names), which is the default of -n.
  const configuration = await client
    .get(CONFIGURATION, { name: WEBHOOK.configuration }, Configuration)
    .catch((e) => explain(e, `mutatingwebhookconfiguration/${WEBHOOK.configuration}`));
  const webhooks = configuration.webhooks ?? [];
  if (!webhooks.length)
    throw new UsageError(
      `admission certs: mutatingwebhookconfiguration/${WEBHOOK.configuration} has no webhooks; re-apply deploy/kubernetes/admission.yaml`,
    );
  const serviceNamespaces = [
    ...new Set(webhooks.map((w) => w.clientConfig.service?.namespace).filter((n): n is string => !!n)),
  ];
  if (ctx.flags.namespace === undefined && serviceNamespaces.length === 1) namespace = serviceNamespaces[0]!;
  // A -n that disagrees: said (as kubectl prints a server's warning), the certificate made as asked.
  else if (serviceNamespaces.length && !serviceNamespaces.includes(namespace))
    ctx.io.stderr.write(
      `Warning: mutatingwebhookconfiguration/${WEBHOOK.configuration} calls the Service ${WEBHOOK.service} in ${serviceNamespaces.join(", ")}, not in ${namespace}: a certificate for ${WEBHOOK.service}.${namespace}.svc will not match it (give -n ${serviceNamespaces[0]})\n`,
    );
  await client.get(NAMESPACE, { name: namespace }, Namespace).catch((e) => {
    if (e instanceof ApiError && e.kind === "NotFound")
      throw new UsageError(
        `admission certs: namespace ${namespace} not found; create it first (kubectl apply -f deploy/kubernetes/rbac.yaml), or give -n. Nothing written`,
      );
    // Not allowed to read namespaces: the Secret's write says whether it exists.
    if (!(e instanceof ApiError && e.code === 403)) throw e;
  });

  const certs = makeWebhookCertificates(namespace);
  const summary = {
    secret: `${namespace}/${WEBHOOK.secret}`,
    mutatingWebhookConfiguration: WEBHOOK.configuration,
    dnsNames: certs.dnsNames,
    notAfter: certs.notAfter,
    dryRun: ctx.flags["dry-run"] === true,
  };
  if (ctx.flags["dry-run"]) {
    if (ctx.json) emit(ctx, { ...summary, webhooks: webhooks.map((w) => w.name) });
    else
      print(
        ctx.io,
        [
          `dry run, nothing written: a new CA and a serving certificate for ${certs.dnsNames.join(", ")} (until ${certs.notAfter})`,
          `  would write: secret/${WEBHOOK.secret} in ${namespace} (tls.crt, tls.key, ca.crt)`,
          `  would set:   caBundle of ${webhooks.map((w) => w.name).join(", ")} of mutatingwebhookconfiguration/${WEBHOOK.configuration}`,
        ].join("\n"),
      );
    return 0;
  }

  const data = { "tls.crt": b64(certs.certPem), "tls.key": b64(certs.keyPem), "ca.crt": b64(certs.caPem) };
  await client
    .patch(
      SECRET,
      { namespace, name: WEBHOOK.secret },
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: WEBHOOK.secret, namespace },
        type: "kubernetes.io/tls",
        data,
      },
      "application/apply-patch+yaml",
      {
        fieldManager: "claimstep-admission-certs",
        force: "true",
      },
    )
    .catch((e) => explain(e, `secret/${WEBHOOK.secret}`));
  // Each entry by index, each index tested to still be the entry read: a concurrent edit fails the patch (422) rather than misplace a CA.
  const patch = webhooks.flatMap((w, i) => [
    { op: "test", path: `/webhooks/${i}/name`, value: w.name },
    {
      op: w.clientConfig.caBundle === undefined ? "add" : "replace",
      path: `/webhooks/${i}/clientConfig/caBundle`,
      value: b64(certs.caPem),
    },
  ]);
  await client
    .patch(PATCH_CONFIGURATION, { name: WEBHOOK.configuration }, patch, "application/json-patch+json")
    .catch((e) => explain(e, `mutatingwebhookconfiguration/${WEBHOOK.configuration}`));

  // Read back: say "set" only of what the server now holds.
  const secret = await client
    .get(GET_SECRET, { namespace, name: WEBHOOK.secret }, Secret)
    .catch((e) => explain(e, `secret/${WEBHOOK.secret}`));
  const after = await client
    .get(CONFIGURATION, { name: WEBHOOK.configuration }, Configuration)
    .catch((e) => explain(e, `mutatingwebhookconfiguration/${WEBHOOK.configuration}`));
  const secretOk = secret.data?.["tls.crt"] === data["tls.crt"] && secret.data?.["tls.key"] === data["tls.key"];
  const bundled = (after.webhooks ?? []).filter((w) => w.clientConfig.caBundle === data["ca.crt"]).map((w) => w.name);
  if (!secretOk || bundled.length !== (after.webhooks ?? []).length) {
    throw new UsageError(
      `admission certs: read back after writing, the server does not hold what was written (secret ${secretOk ? "ok" : "differs"}; caBundle set on ${bundled.length} of ${(after.webhooks ?? []).length} webhooks): someone else changed them meanwhile? Run it again`,
    );
  }
  if (ctx.json) emit(ctx, { ...summary, webhooks: bundled });
  else
    print(
      ctx.io,
      [
        `secret/${WEBHOOK.secret} configured in ${namespace}: a certificate for ${certs.dnsNames.join(", ")} until ${certs.notAfter} (read back)`,
        `mutatingwebhookconfiguration.admissionregistration.k8s.io/${WEBHOOK.configuration}: caBundle set on ${bundled.join(", ")} (read back)`,
        `claimstep serve reloads the certificate within CLAIMSTEP_TLS_RELOAD_SECONDS (10 s); run this again to rotate it`,
      ].join("\n"),
    );
  return 0;
}
