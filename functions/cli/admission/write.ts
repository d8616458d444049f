// The writes of `admission certs`: the key pair into the webhook's Secret (server-side apply), the
// CA into the caBundle of every webhook of the configuration, then both read back.
import type { KubeClient } from "../../../adapters/kube/client.js";
import { UsageError } from "../flags.js";
import {
  CONFIGURATION,
  CONFIGURATION_NAME,
  Configuration,
  GET_SECRET,
  PATCH_CONFIGURATION,
  SECRET,
  SECRET_NAME,
  Secret,
  WEBHOOK,
  type Webhook,
} from "./cluster.js";
import { explain } from "./explain.js";

/** The Secret's data, base64 as the API wants it. */
export interface SecretData {
  "tls.crt": string;
  "tls.key": string;
  "ca.crt": string;
}

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

export const secretData = (certs: { certPem: string; keyPem: string; caPem: string }): SecretData => ({
  "tls.crt": b64(certs.certPem),
  "tls.key": b64(certs.keyPem),
  "ca.crt": b64(certs.caPem),
});

export async function writeSecret(client: KubeClient, namespace: string, data: SecretData): Promise<void> {
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
    .catch((e) => explain(e, SECRET_NAME, namespace));
}

/** The CA into the caBundle of each of the `webhooks` read. */
export async function bundleCA(
  client: KubeClient,
  namespace: string,
  webhooks: Webhook[],
  data: SecretData,
): Promise<void> {
  // Each entry by index, each index tested to still be the entry read: a concurrent edit fails the patch (422) rather than misplace a CA.
  const patch = webhooks.flatMap((w, i) => [
    { op: "test", path: `/webhooks/${i}/name`, value: w.name },
    {
      op: w.clientConfig.caBundle === undefined ? "add" : "replace",
      path: `/webhooks/${i}/clientConfig/caBundle`,
      value: data["ca.crt"],
    },
  ]);
  await client
    .patch(PATCH_CONFIGURATION, { name: WEBHOOK.configuration }, patch, "application/json-patch+json")
    .catch((e) => explain(e, CONFIGURATION_NAME, namespace));
}

/** Read back: "set" is said only of what the server now holds. The webhooks whose caBundle is the CA; refused unless all. */
export async function readBack(client: KubeClient, namespace: string, data: SecretData): Promise<string[]> {
  const secret = await client
    .get(GET_SECRET, { namespace, name: WEBHOOK.secret }, Secret)
    .catch((e) => explain(e, SECRET_NAME, namespace));
  const after = await client
    .get(CONFIGURATION, { name: WEBHOOK.configuration }, Configuration)
    .catch((e) => explain(e, CONFIGURATION_NAME, namespace));
  const secretOk = secret.data?.["tls.crt"] === data["tls.crt"] && secret.data?.["tls.key"] === data["tls.key"];
  const bundled = (after.webhooks ?? []).filter((w) => w.clientConfig.caBundle === data["ca.crt"]).map((w) => w.name);
  if (!secretOk || bundled.length !== (after.webhooks ?? []).length) {
    throw new UsageError(
      `admission certs: read back after writing, the server does not hold what was written (secret ${secretOk ? "ok" : "differs"}; caBundle set on ${bundled.length} of ${(after.webhooks ?? []).length} webhooks): someone else changed them meanwhile? Run it again`,
    );
  }
  return bundled;
}
