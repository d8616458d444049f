// Who may call claimstep: the API's bearer tokens, the Standard Webhooks secrets and the status
// page's viewer tokens (CLAIMSTEP_API_TOKEN, CLAIMSTEP_WEBHOOK_SECRET, CLAIMSTEP_VIEWER_TOKEN).
import { decodeWebhookSecret } from "../auth.js";
import type { Parsed, Vars } from "./vars.js";
import { list } from "./vars.js";
import { parseViewers, type Viewer } from "./viewers.js";

const whsec = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

/** Why a webhook secret is refused, if it is. */
const secretProblem = (secret: string): string | undefined => {
  if (!whsec.test(secret)) return "must look like whsec_<base64>";
  try {
    decodeWebhookSecret(secret);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
};

/** The credentials; at least one kind must be set. */
export function authConfig(
  env: Vars<"CLAIMSTEP_API_TOKEN" | "CLAIMSTEP_WEBHOOK_SECRET" | "CLAIMSTEP_VIEWER_TOKEN">,
): Parsed<{ bearerTokens: string[]; viewers?: Viewer[]; webhookSecrets: string[] }> {
  const bearerTokens = list(env.CLAIMSTEP_API_TOKEN);
  const webhookSecrets = list(env.CLAIMSTEP_WEBHOOK_SECRET);
  const { viewers, problems } = parseViewers(env.CLAIMSTEP_VIEWER_TOKEN);
  if (viewers.some((v) => bearerTokens.includes(v.token))) {
    problems.push(
      "CLAIMSTEP_VIEWER_TOKEN: a viewer token must not be a CLAIMSTEP_API_TOKEN (the page is read-only; give it a token of its own)",
    );
  }
  if (bearerTokens.length === 0 && webhookSecrets.length === 0 && viewers.length === 0) {
    problems.push(
      "no authentication configured: set CLAIMSTEP_API_TOKEN (bearer) and/or CLAIMSTEP_WEBHOOK_SECRET (whsec_<base64>) (or CLAIMSTEP_VIEWER_TOKEN for the status page alone)",
    );
  }
  if (bearerTokens.some((t) => t.length < 16)) {
    problems.push("CLAIMSTEP_API_TOKEN: each token must be at least 16 characters (e.g. `openssl rand -hex 32`)");
  }
  const badSecret = webhookSecrets.map(secretProblem).find((p) => p !== undefined);
  if (badSecret) {
    problems.push(`CLAIMSTEP_WEBHOOK_SECRET: ${badSecret} (e.g. \`echo whsec_$(openssl rand -base64 32)\`)`);
  }
  return {
    config: { bearerTokens, ...(viewers.length ? { viewers } : {}), webhookSecrets },
    problems,
  };
}
