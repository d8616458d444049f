// What `admission certs` says: what it would write (--dry-run) or what it wrote and read back, as
// lines or as one JSON/YAML document (-o).
import type { Context } from "../context.js";
import { emit, print } from "../io.js";
import { WEBHOOK, type Webhook } from "./cluster.js";

/** The document of -o json: the same for a dry run and a write but for the webhooks it names. */
export interface CertsSummary {
  secret: string;
  mutatingWebhookConfiguration: string;
  dnsNames: string[];
  notAfter: string;
  dryRun: boolean;
}

export function summaryOf(
  ctx: Context,
  namespace: string,
  certs: { dnsNames: string[]; notAfter: string },
): CertsSummary {
  return {
    secret: `${namespace}/${WEBHOOK.secret}`,
    mutatingWebhookConfiguration: WEBHOOK.configuration,
    dnsNames: certs.dnsNames,
    notAfter: certs.notAfter,
    dryRun: ctx.flags["dry-run"] === true,
  };
}

/** --dry-run: the certificate made, what would be written where (the caBundle of each of `webhooks`). */
export function sayDryRun(ctx: Context, summary: CertsSummary, namespace: string, webhooks: Webhook[]): void {
  const names = webhooks.map((w) => w.name);
  if (ctx.json) emit(ctx, { ...summary, webhooks: names });
  else
    print(
      ctx.io,
      [
        `dry run, nothing written: a new CA and a serving certificate for ${summary.dnsNames.join(", ")} (until ${summary.notAfter})`,
        `  would write: secret/${WEBHOOK.secret} in ${namespace} (tls.crt, tls.key, ca.crt)`,
        `  would set:   caBundle of ${names.join(", ")} of mutatingwebhookconfiguration/${WEBHOOK.configuration}`,
      ].join("\n"),
    );
}

/** Written and read back: the Secret, the webhooks now bundling the CA (`bundled`), how to rotate. */
export function sayWritten(ctx: Context, summary: CertsSummary, namespace: string, bundled: string[]): void {
  if (ctx.json) emit(ctx, { ...summary, webhooks: bundled });
  else
    print(
      ctx.io,
      [
        `secret/${WEBHOOK.secret} configured in ${namespace}: a certificate for ${summary.dnsNames.join(", ")} until ${summary.notAfter} (read back)`,
        `mutatingwebhookconfiguration.admissionregistration.k8s.io/${WEBHOOK.configuration}: caBundle set on ${bundled.join(", ")} (read back)`,
        `claimstep serve reloads the certificate within CLAIMSTEP_TLS_RELOAD_SECONDS (10 s); run this again to rotate it`,
      ].join("\n"),
    );
}
