// A fetch over node:http/https that honours an Agent: Node's global fetch ignores `agent`, and
// the agent is what carries the kubeconfig's CA, client certificate, proxy and TLS settings.
//
// Every body is framed with Content-Length. node:http frames nothing on DELETE (no chunked
// encoding by default for GET, HEAD, DELETE, OPTIONS): a DELETE body written without a length is
// read by the API server as no body at all, so `propagationPolicy: Orphan` and the preconditions
// are dropped and the set is deleted in the background, its pods and claims with it.
import { type Agent, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { FetchLike } from "../kube/client.js";

export function agentFetch(agentOf: () => Agent | undefined): FetchLike {
  return (url, init) => requestWithAgent(url, init, agentOf());
}

/** The request body as bytes, so that its length is known before the first byte is sent. */
export function bodyBytes(body: RequestInit["body"]): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof URLSearchParams) return Buffer.from(body.toString(), "utf8");
  throw new TypeError(`agentFetch sends string or byte bodies only, not ${Object.prototype.toString.call(body)}`);
}

export function requestWithAgent(url: string, init: RequestInit, agent: Agent | undefined): Promise<Response> {
  const target = new URL(url);
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  const method = (init.method ?? "GET").toUpperCase();
  const headers = Object.fromEntries(new Headers(init.headers).entries());
  let payload: Buffer | undefined;
  try {
    payload = bodyBytes(init.body);
  } catch (err) {
    return Promise.reject(err);
  }
  delete headers["transfer-encoding"];
  if (payload) headers["content-length"] = String(payload.byteLength);
  // A verb that carries a body by definition says so even when it is empty, as fetch does.
  else if (method === "POST" || method === "PUT" || method === "PATCH") headers["content-length"] = "0";
  else delete headers["content-length"];
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      { method, headers, ...(agent ? { agent } : {}), ...(init.signal ? { signal: init.signal } : {}) },
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
    req.end(payload);
  });
}
