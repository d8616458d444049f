// What `claimstep admission certs` reads and writes of a cluster: the names deploy/kubernetes
// installs, the requests it makes and the shapes of what it reads back.
import type { Route } from "../../../adapters/kube/routes.js";
import * as z from "../../../core/zod.js";

export const WEBHOOK = {
  service: "claimstep-webhook",
  secret: "claimstep-webhook-tls",
  configuration: "claimstep",
} as const;

/** Where the webhook's Service is when nothing says otherwise (deploy/kubernetes installs it there). */
export const DEFAULT_NAMESPACE = "claimstep";

/** The names the errors give of what failed. */
export const CONFIGURATION_NAME = `mutatingwebhookconfiguration/${WEBHOOK.configuration}`;
export const SECRET_NAME = `secret/${WEBHOOK.secret}`;

export const SECRET: Route = {
  verb: "patch",
  group: "",
  version: "v1",
  resource: "secrets",
  namespaced: true,
  retry: true,
};
export const GET_SECRET: Route = { ...SECRET, verb: "get" };
export const CONFIGURATION: Route = {
  verb: "get",
  group: "admissionregistration.k8s.io",
  version: "v1",
  resource: "mutatingwebhookconfigurations",
  namespaced: false,
  retry: true,
};
export const PATCH_CONFIGURATION: Route = { ...CONFIGURATION, verb: "patch", retry: false };

export const NAMESPACE: Route = {
  verb: "get",
  group: "",
  version: "v1",
  resource: "namespaces",
  namespaced: false,
  retry: true,
};

const Webhook = z.looseObject({
  name: z.string(),
  clientConfig: z.looseObject({
    caBundle: z.optional(z.string()),
    service: z.optional(z.looseObject({ namespace: z.optional(z.string()), name: z.optional(z.string()) })),
  }),
});
export type Webhook = z.infer<typeof Webhook>;

export const Configuration = z.looseObject({
  metadata: z.looseObject({ name: z.string() }),
  webhooks: z.optional(z.array(Webhook)),
});
export const Namespace = z.looseObject({ metadata: z.looseObject({ name: z.string() }) });
export const Secret = z.looseObject({ data: z.optional(z.record(z.string(), z.string())) });
