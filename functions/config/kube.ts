// The API server reached with plain fetch (the Worker; Node may use kubeconfig instead):
// KUBE_API_SERVER + KUBE_TOKEN, and the Cloudflare Access service token in front of it
// (CF_ACCESS_CLIENT_ID/_SECRET, sent as CF-Access-Client-Id/-Secret).
import type { Parsed, Vars } from "./vars.js";

export interface KubeConfig {
  server: string;
  token?: string;
  headers: Record<string, string>;
}

export function kubeConfig(
  env: Vars<"KUBE_API_SERVER" | "KUBE_TOKEN" | "CF_ACCESS_CLIENT_ID" | "CF_ACCESS_CLIENT_SECRET">,
  requireKube: boolean | undefined,
): Parsed<{ kube?: KubeConfig }> {
  const problems: string[] = [];
  const { KUBE_API_SERVER: server, KUBE_TOKEN: token, CF_ACCESS_CLIENT_ID: id, CF_ACCESS_CLIENT_SECRET: secret } = env;
  if (id !== undefined && secret === undefined) {
    problems.push("CF_ACCESS_CLIENT_SECRET: required when CF_ACCESS_CLIENT_ID is set");
  }
  if (secret !== undefined && id === undefined) {
    problems.push("CF_ACCESS_CLIENT_ID: required when CF_ACCESS_CLIENT_SECRET is set");
  }
  if (requireKube && !server) {
    problems.push(
      "KUBE_API_SERVER: required (the API server URL, e.g. https://kube.example.com behind Cloudflare Tunnel)",
    );
  }
  if (server && !token) {
    problems.push(
      "KUBE_TOKEN: required with KUBE_API_SERVER (a ServiceAccount token: `kubectl create token claimstep`)",
    );
  }
  const headers: Record<string, string> = {};
  if (id && secret) {
    headers["CF-Access-Client-Id"] = id;
    headers["CF-Access-Client-Secret"] = secret;
  }
  return {
    config: server ? { kube: { server: server.replace(/\/+$/, ""), ...(token ? { token } : {}), headers } } : {},
    problems,
  };
}
