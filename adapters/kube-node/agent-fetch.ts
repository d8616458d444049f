// A fetch over node:http/https that honours an Agent: Node's global fetch ignores `agent`, and
// the agent is what carries the kubeconfig's CA, client certificate and TLS settings.
import { request as httpRequest, type Agent } from "node:http";
import { request as httpsRequest } from "node:https";
import type { FetchLike } from "../kube/client.js";

export function agentFetch(agentOf: () => Agent | undefined): FetchLike {
  return (url, init) => requestWithAgent(url, init, agentOf());
}

export function requestWithAgent(url: string, init: RequestInit, agent: Agent | undefined): Promise<Response> {
  const target = new URL(url);
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  const headers = Object.fromEntries(new Headers(init.headers).entries());
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      { method: init.method ?? "GET", headers, ...(agent ? { agent } : {}), ...(init.signal ? { signal: init.signal } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const out = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (Array.isArray(v)) v.forEach((x) => out.append(k, x));
            else if (v !== undefined) out.set(k, String(v));
          }
          const status = res.statusCode ?? 0;
          const body = [204, 205, 304].includes(status) ? null : new Uint8Array(Buffer.concat(chunks));
          resolve(new Response(body, { status, statusText: res.statusMessage ?? "", headers: out }));
        });
      },
    );
    req.on("error", reject);
    if (init.body !== undefined && init.body !== null) req.write(init.body as string);
    req.end();
  });
}
