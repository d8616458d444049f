// claimstep's mutating admission webhook installed in the simulated cluster: the
// MutatingWebhookConfiguration as deploy/kubernetes/admission.yaml ships it (without the
// cert-manager annotation: no TLS in the sim; test/adapters/sim/admission-webhooks.test.ts checks
// the two agree), and claimstep's own admission route serving the Service
// claimstep-webhook.claimstep.svc that the configuration names: the caller passes it
// (`admissionRoutes().fetch` of functions/routes/admission.ts), so the sim never imports the entry points.
import type { WebhookHandler } from "./admission-webhooks.js";
import type { SimCluster } from "./cluster.js";
import { KUBECTL } from "./cluster.js";
import type { Json } from "./store.js";

/** Where the configuration's Service answers (clientConfig.service: claimstep-webhook in claimstep, port 443). */
export const CLAIMSTEP_WEBHOOK_SERVER = "https://claimstep-webhook.claimstep.svc:443";

/** The matchCondition: the templates changed; has() so that a set without templates is no error (failurePolicy Fail). */
export const VOLUME_CLAIM_TEMPLATES_CHANGED =
  "has(object.spec.volumeClaimTemplates) != has(oldObject.spec.volumeClaimTemplates) || " +
  "(has(object.spec.volumeClaimTemplates) && object.spec.volumeClaimTemplates != oldObject.spec.volumeClaimTemplates)";

const entry = (name: string, path: string, selectors: Json): Json => ({
  name,
  admissionReviewVersions: ["v1"],
  clientConfig: { service: { name: "claimstep-webhook", namespace: "claimstep", path, port: 443 } },
  rules: [
    {
      apiGroups: ["apps"],
      apiVersions: ["v1"],
      operations: ["UPDATE"],
      resources: ["statefulsets"],
      scope: "Namespaced",
    },
  ],
  ...selectors,
  matchConditions: [
    {
      name: "volume-claim-templates-changed",
      expression: VOLUME_CLAIM_TEMPLATES_CHANGED,
    },
  ],
  failurePolicy: "Fail",
  sideEffects: "None",
  timeoutSeconds: 5,
  reinvocationPolicy: "Never",
});

/** The shipped MutatingWebhookConfiguration `claimstep` (its webhooks exactly as in deploy/kubernetes/admission.yaml). */
export function claimstepWebhookConfiguration(): Json {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name: "claimstep" },
    webhooks: [
      entry("statefulsets.admission.claimstep.io", "/v1/admission/statefulsets", {
        objectSelector: { matchLabels: { "claimstep.io/admission": "enabled" } },
      }),
      entry("namespaces.admission.claimstep.io", "/v1/admission/statefulsets/by-namespace", {
        namespaceSelector: { matchLabels: { "claimstep.io/admission": "enabled" } },
        objectSelector: {
          matchExpressions: [{ key: "claimstep.io/admission", operator: "NotIn", values: ["enabled"] }],
        },
      }),
    ],
  };
}

/** claimstep's admission route (`admission`) answers the configuration's Service (idempotent; again after a restore). */
export function serveClaimstepWebhook(sim: SimCluster, admission: WebhookHandler): void {
  sim.registerWebhookServer(CLAIMSTEP_WEBHOOK_SERVER, admission);
}

/** Install claimstep's webhook: the configuration stored (as `kubectl apply -f admission.yaml`), its server registered. */
export async function installClaimstepWebhook(sim: SimCluster, admission: WebhookHandler): Promise<void> {
  if (!sim.get("mutatingwebhookconfigurations", undefined, "claimstep")) {
    await sim.admin.create("mutatingwebhookconfigurations", claimstepWebhookConfiguration(), { fieldManager: KUBECTL });
  }
  serveClaimstepWebhook(sim, admission);
}
