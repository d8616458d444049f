// What a refused request of `admission certs` means, said with the fix: the webhook not installed,
// the namespace missing, or not a cluster admin. Anything else is thrown as it came.
import { ApiError } from "../../../adapters/api-error.js";
import { UsageError } from "../flags.js";

/** `err` of the request on `what` (e.g. secret/claimstep-webhook-tls), for the webhook's `namespace`. */
export function explain(err: unknown, what: string, namespace: string): never {
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
}
