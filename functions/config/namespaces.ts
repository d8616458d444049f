// CLAIMSTEP_NAMESPACES: the namespaces claimstep may act in; empty = all.
import { dns1123, list, type Parsed, type Vars } from "./vars.js";

export function namespacesConfig(env: Vars<"CLAIMSTEP_NAMESPACES">): Parsed<{ namespaces: string[] }> {
  const namespaces = list(env.CLAIMSTEP_NAMESPACES);
  return {
    config: { namespaces },
    problems: namespaces
      .filter((n) => !dns1123.test(n))
      .map((ns) => `CLAIMSTEP_NAMESPACES: "${ns}" is not a valid namespace name`),
  };
}
