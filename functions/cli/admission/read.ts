// Read first, --dry-run too: the configuration to bundle the CA into, the namespace of the Service
// it calls (the certificate's DNS names, the default of -n), and that this namespace exists.
import { ApiError } from "../../../adapters/api-error.js";
import type { KubeClient } from "../../../adapters/kube/client.js";
import type { Context } from "../context.js";
import { UsageError } from "../flags.js";
import {
  CONFIGURATION,
  CONFIGURATION_NAME,
  Configuration,
  NAMESPACE,
  Namespace,
  WEBHOOK,
  type Webhook,
} from "./cluster.js";
import { explain } from "./explain.js";

/** The webhooks of the configuration `claimstep`, refused when it has none. */
export async function readWebhooks(client: KubeClient, namespace: string): Promise<Webhook[]> {
  const configuration = await client
    .get(CONFIGURATION, { name: WEBHOOK.configuration }, Configuration)
    .catch((e) => explain(e, CONFIGURATION_NAME, namespace));
  const webhooks = configuration.webhooks ?? [];
  if (!webhooks.length)
    throw new UsageError(
      `admission certs: ${CONFIGURATION_NAME} has no webhooks; re-apply deploy/kubernetes/admission.yaml`,
    );
  return webhooks;
}

/** The namespace to make the certificate for: -n, else the one of the Service the webhooks call (when one), else `asked`. */
export function serviceNamespace(ctx: Context, webhooks: Webhook[], asked: string): string {
  const serviceNamespaces = [
    ...new Set(webhooks.map((w) => w.clientConfig.service?.namespace).filter((n): n is string => !!n)),
  ];
  if (ctx.flags.namespace === undefined && serviceNamespaces.length === 1) return serviceNamespaces[0]!;
  // A -n that disagrees: said (as kubectl prints a server's warning), the certificate made as asked.
  if (serviceNamespaces.length && !serviceNamespaces.includes(asked))
    ctx.io.stderr.write(
      `Warning: ${CONFIGURATION_NAME} calls the Service ${WEBHOOK.service} in ${serviceNamespaces.join(", ")}, not in ${asked}: a certificate for ${WEBHOOK.service}.${asked}.svc will not match it (give -n ${serviceNamespaces[0]})\n`,
    );
  return asked;
}

/** Refused, nothing written, when the namespace is not there; not allowed to read it: the Secret's write says. */
export async function checkNamespace(client: KubeClient, namespace: string): Promise<void> {
  await client.get(NAMESPACE, { name: namespace }, Namespace).catch((e) => {
    if (e instanceof ApiError && e.kind === "NotFound")
      throw new UsageError(
        `admission certs: namespace ${namespace} not found; create it first (kubectl apply -f deploy/kubernetes/rbac.yaml), or give -n. Nothing written`,
      );
    // Not allowed to read namespaces: the Secret's write says whether it exists.
    if (!(e instanceof ApiError && e.code === 403)) throw e;
  });
}
