// CLAIMSTEP_VIEWER_TOKEN: the status page's read-only tokens, each for every namespace claimstep
// manages or for some of them.
import { dns1123, list } from "./vars.js";

/** A viewer token of the status page and the namespaces it may see (absent: all claimstep manages). */
export interface Viewer {
  token: string;
  namespaces?: string[];
}

/** `CLAIMSTEP_VIEWER_TOKEN`'s entries: `<token>` or `<ns>+<ns>:<token>`. */
export function parseViewers(raw: string | undefined): { viewers: Viewer[]; problems: string[] } {
  const viewers: Viewer[] = [];
  const problems: string[] = [];
  for (const entry of list(raw)) {
    const colon = entry.lastIndexOf(":");
    const token = colon < 0 ? entry : entry.slice(colon + 1);
    const namespaces = colon < 0 ? undefined : entry.slice(0, colon).split("+").filter(Boolean);
    if (token.length < 16)
      problems.push("CLAIMSTEP_VIEWER_TOKEN: each token must be at least 16 characters (e.g. `openssl rand -hex 32`)");
    if (namespaces !== undefined && namespaces.length === 0)
      problems.push(
        "CLAIMSTEP_VIEWER_TOKEN: name the namespaces before the colon (`prod+staging:<token>`), or give the token alone",
      );
    for (const ns of (namespaces ?? []).filter((n) => !dns1123.test(n)))
      problems.push(`CLAIMSTEP_VIEWER_TOKEN: "${ns}" is not a valid namespace name`);
    viewers.push({ token, ...(namespaces?.length ? { namespaces } : {}) });
  }
  return { viewers, problems: [...new Set(problems)] };
}
