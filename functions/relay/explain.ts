// What the relay's failures mean and what fixes them, as log fields: a watch refused by RBAC (who
// may not do which verb on which resource, and the ServiceAccount of relay.yaml that may), and a
// delivery that got no answer (undici's "fetch failed" hides the reason in `cause`).
import { ApiError } from "../../adapters/api-error.js";

/** Log fields of a failed LIST or WATCH: `error` always; `forbidden`, `serviceAccount` and `fix` for an RBAC refusal. */
export function watchFailure(err: unknown): Record<string, string> {
  if (!(err instanceof ApiError)) {
    const code = codeOf(err);
    return { error: messageOf(err), ...(code ? { cause: code } : {}) };
  }
  const refusal = err.rbacRefusal;
  if (!refusal) return { error: err.message };
  const { user, verb, resource, group, scope } = refusal;
  const sa = /^system:serviceaccount:([^:]+):(.+)$/.exec(user);
  const qualified = group ? `${resource}.${group}` : resource;
  const runsAs = sa ? `the ServiceAccount ${sa[1]}/${sa[2]}` : `user ${user}`;
  return {
    error: err.message,
    forbidden: `${user} cannot ${verb} ${qualified}${scope ? ` ${scope}` : ""}`,
    ...(sa ? { serviceAccount: `${sa[1]}/${sa[2]}` } : {}),
    fix:
      sa?.[2] === RELAY_SERVICE_ACCOUNT
        ? `grant the ServiceAccount ${sa[1]}/${sa[2]} list and watch on ${qualified}: kubectl apply -f deploy/kubernetes/relay.yaml (its ClusterRole and ClusterRoleBinding claimstep-relay)`
        : `the relay runs as ${runsAs}, which may not ${verb} ${qualified}: run it as the ServiceAccount ${RELAY_SERVICE_ACCOUNT} of deploy/kubernetes/relay.yaml (serviceAccountName: ${RELAY_SERVICE_ACCOUNT}; its ClusterRole grants list and watch on statefulsets, persistentvolumeclaims and pods), or grant ${runsAs} list and watch on ${qualified}`,
  };
}

/** relay.yaml's ServiceAccount, allowed exactly what the relay does. */
const RELAY_SERVICE_ACCOUNT = "claimstep-relay";

// Node's TLS verification failures (undici's `cause.code`).
const TLS_UNTRUSTED = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_GET_ISSUER_CERT",
]);

/** Log fields of a delivery that got no answer: `error` (with the cause), `cause` (its code), `hint`. */
export function deliveryFailure(err: unknown, url: string): Record<string, string> {
  return { error: messageOf(err), ...causeFields(err, url) };
}

/** `fetch failed (UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate)`. */
const messageOf = (err: unknown): string => {
  const e = err as { message?: unknown; cause?: { code?: unknown; message?: unknown } } | undefined;
  const message = typeof e?.message === "string" ? e.message : String(err);
  const cause = e?.cause;
  if (!cause || typeof cause !== "object") return message;
  const code = typeof cause.code === "string" ? cause.code : undefined;
  const text = typeof cause.message === "string" && cause.message !== code ? cause.message : undefined;
  const why = [code, text].filter(Boolean).join(": ");
  return why ? `${message} (${why})` : message;
};

/** The code of the error or of its cause (undici: `fetch failed` with the socket's error as `cause`). */
const codeOf = (err: unknown): string | undefined => {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = e?.cause?.code ?? e?.code;
  return typeof code === "string" ? code : undefined;
};

function causeFields(err: unknown, url: string): Record<string, string> {
  const code = codeOf(err);
  if (!code) return {};
  let where = url;
  let host = "";
  try {
    const u = new URL(url);
    where = u.origin;
    host = u.hostname;
  } catch {
    // no URL: name none
  }
  const hint = hintOf(code, where, host);
  return { cause: code, ...(hint ? { hint } : {}) };
}

function hintOf(code: string, where: string, host: string): string | undefined {
  if (TLS_UNTRUSTED.has(code))
    return `the relay does not trust the certificate of ${where}: give it the CA that signed it, NODE_EXTRA_CA_CERTS=<a PEM file mounted in the relay's pod>, or use the in-cluster http:// Service URL (CLAIMSTEP_RELAY_URL, --url)`;
  if (code === "CERT_HAS_EXPIRED") return `the certificate of ${where} has expired: renew it`;
  if (code === "CERT_NOT_YET_VALID")
    return `the certificate of ${where} is not valid yet: check its notBefore and the clocks`;
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID")
    return `the certificate of ${where} does not name ${host || "the host"}: use a URL with a name it carries (CLAIMSTEP_RELAY_URL, --url), or reissue it with that name`;
  if (code === "ECONNREFUSED")
    return `nothing listens at ${where}: check CLAIMSTEP_RELAY_URL (--url) and that the app runs`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN")
    return `the name ${host || where} does not resolve: check CLAIMSTEP_RELAY_URL (--url)`;
  if (
    code === "ECONNRESET" ||
    code === "UND_ERR_SOCKET" ||
    code === "EPROTO" ||
    code === "ERR_SSL_WRONG_VERSION_NUMBER"
  )
    return `${where} closed the connection: an https:// URL to a plain http port (or the reverse), or a proxy in between?`;
  return undefined;
}
